/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_dataplane.c - guest-controlled input of the Ethernet data path: ring
 * registers of every function, descriptor contents in guest memory and
 * frames from the uplink. The input is a program of 8-byte operations:
 *   op[0] & 3 == 0: register write (fn = op[1] % 6, reg = window +
 *                   (op[2] & 0x7f) * 4: ring 0, RX, link, counters and the
 *                   2.5 TX rings 1..7 at 0x0900.., and past them; value =
 *                   op[4..7])
 *   op[0] & 3 == 1: guest memory poke (4 bytes at (op[1..3] % MEM))
 *   op[0] & 3 == 2: uplink frame of op[1] * 8 bytes from memory op[2..3]
 *                   (op[0] & 4: injected by fn op[3] % 7's RDMA engine)
 *   op[0] & 3 == 3: clock advance + shaping timer of fn op[1] % 6 (op[0] &
 *                   4: and the uplink's timer)
 * The uplink has a line rate (10 Mbit/s, class 7 strict, DSCP 46 -> 7):
 * functions are paused per class and their rings wait on a head frame of
 * a paused class (2.5).
 * TX of the rings is the data path's run: after each operation the host
 * runs it when it was kicked (bounded), as QEMU's bottom half would.
 * Hostile callbacks (issue 33): v = op[0] >> 3, if not 0, arms one for the
 * operation, at the ((v - 1) / 4)-th DMA or MSI-X during it (the run
 * after it included), doing (v - 1) % 4: 0 that DMA fails; 1 writes the
 * TAIL of TX ring op[2] % 8 of function op[1] % 6 with op[4] (a DMA aimed
 * at that function's BAR: the write only records, no TX nests); 2 calls
 * vfw_dp_run (refused inside a run, which goes again after); 3 writes
 * the same TAIL and then fails the DMA. Resets from inside are the
 * adapter's to defer (fuzz_adapter.c), not the data path's.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vfw_dataplane.h"
#include "vfwarp/vfwarp_admin.h"
#include "vswitch.h"

#define MEM 0x20000u
static uint8_t mem[MEM];
static uint64_t clk;

static struct vfw_dp *f_dp;
static struct {
    bool armed;
    unsigned action, countdown, fn, ring;
    uint32_t tail;
} hc;

/* The armed callback, if its turn has come; true = fail this DMA. */
static bool hostile(void)
{
    if (!hc.armed || hc.countdown-- > 0) {
        return false;
    }
    hc.armed = false;
    switch (hc.action) {
    case 0:
        return true;
    case 2:
        vfw_dp_run(f_dp);
        return false;
    default:
        vfw_dp_write(f_dp, hc.fn, VFW_REG_TXQ(hc.ring) + VFW_RING_TAIL,
                     hc.tail, 4);
        return hc.action == 3;
    }
}

static int f_read(void *c, unsigned fn, uint64_t a, void *b, size_t l)
{
    (void)c; (void)fn;
    if (hostile() || a > MEM || l > MEM - a) {
        return -1;
    }
    memcpy(b, mem + a, l);
    return 0;
}

static int f_write(void *c, unsigned fn, uint64_t a, const void *b, size_t l)
{
    (void)c; (void)fn;
    if (hostile() || a > MEM || l > MEM - a) {
        return -1;
    }
    memcpy(mem + a, b, l);
    return 0;
}

static void f_irq(void *c, unsigned fn, unsigned v)
{
    (void)c; (void)fn; (void)v;
    hostile();
}
static bool kicked;
static void f_kick(void *c) { (void)c; kicked = true; }
static void f_tx(void *c, const uint8_t *f, size_t l) { (void)c; (void)f; (void)l; }
static uint64_t f_now(void *c) { (void)c; return clk; }
static void f_utimer(void *c, uint64_t w) { (void)c; (void)w; }

/* The RDMA engines: take frames whose byte 12 is odd; one in four taken
 * frames is answered synchronously (nesting must stay bounded). */
static unsigned f_depth;
static bool f_steer(void *c, unsigned fn, const uint8_t *f, size_t l)
{
    (void)c;
    if (l < 14 || !(f[12] & 1)) {
        return false;
    }
    if ((f[13] & 3) == 0 && f_depth < 64) {
        uint8_t r[64];
        size_t n = l < sizeof(r) ? l : sizeof(r);

        memcpy(r, f, n);
        r[13]++;
        f_depth++;
        vfw_dp_fn_inject(f_dp, fn, r, n);
        f_depth--;
    }
    return true;
}

static const struct vfw_dp_ops ops = {
    .dma_read = f_read, .dma_write = f_write, .irq = f_irq,
    .uplink_tx = f_tx, .now_ns = f_now, .rx_steer = f_steer,
    .uplink_timer = f_utimer, .kick = f_kick,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t mac[6] = { 2, 0, 0, 0, 1, 0 };
    struct vfw_dp *dp = vfw_dp_create(&ops, NULL, mac, 5);
    struct vfw_dp_vf_cfg cfg = { .spoofchk = true };

    if (!dp) {
        return 0;
    }
    f_dp = dp;
    memset(mem, 0, sizeof(mem));
    memset(&hc, 0, sizeof(hc));
    kicked = false;
    clk = 0;
    vfw_dp_set_uplink(dp, true);
    cfg.max_mbps = 100;
    vfw_dp_set_vf(dp, 1, &cfg);
    cfg.max_mbps = 0;
    cfg.vlan = 7;
    vfw_dp_set_vf(dp, 2, &cfg);
    {
        struct vfw_dp_dcb dcb;
        vsw_qos_ets e = { .bw = { 100 } };

        vfw_dp_set_line_rate(dp, 10000000ull, NULL);
        vfw_dp_dcb_default(&dcb);
        dcb.trust = VFW_TRUST_DSCP;
        dcb.dscp_mapped = 1ull << 46;
        dcb.dscp_prio[46] = 7;
        vfw_dp_set_dcb(dp, &dcb);
        for (unsigned t = 0; t < 7; t++) {
            e.tsa[t] = VSW_TSA_ETS;
        }
        e.tsa[7] = VSW_TSA_STRICT;
        vsw_qos_ets_set(vfw_dp_qos(dp), &e, NULL);
    }
    for (size_t i = 0; i + 8 <= size; i += 8) {
        const uint8_t *op = data + i;
        uint32_t v = (uint32_t)op[4] | (uint32_t)op[5] << 8 |
                     (uint32_t)op[6] << 16 | (uint32_t)op[7] << 24;
        unsigned h = op[0] >> 3;

        hc.armed = h != 0;
        if (h) {
            hc.action = (h - 1) % 4;
            hc.countdown = (h - 1) / 4;
            hc.fn = op[1] % 6;
            hc.ring = op[2] % 8;
            hc.tail = op[4];
        }

        switch (op[0] & 3) {
        case 0:
            vfw_dp_write(dp, op[1] % 6, VFW_REGWIN_RING + (op[2] & 0x7fu) * 4,
                         v, 4);
            break;
        case 1: {
            uint32_t a = ((uint32_t)op[1] | (uint32_t)op[2] << 8 |
                          (uint32_t)op[3] << 16) % (MEM - 4);
            memcpy(mem + a, op + 4, 4);
            break;
        }
        case 2: {
            uint32_t a = ((uint32_t)op[2] | (uint32_t)op[3] << 8) % (MEM / 2);
            if (op[0] & 4) {
                vfw_dp_fn_inject(dp, op[3] % 7, mem + a, (size_t)op[1] * 8);
            } else {
                vfw_dp_uplink_rx(dp, mem + a, (size_t)op[1] * 8);
            }
            break;
        }
        default:
            clk += v;
            vfw_dp_timer(dp, op[1] % 6);
            if (op[0] & 4) {
                vfw_dp_uplink_timer(dp);
            }
            break;
        }
        for (unsigned k = 0; k < 8 && kicked; k++) {
            kicked = false;
            vfw_dp_run(dp);
        }
    }
    vfw_dp_destroy(dp);
    return 0;
}
