/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_adapter.c - the whole adapter (vfw_adapter.h) under a hostile host
 * (issue 33): a guest may aim a DMA write or an MSI-X at config space or
 * at a BAR, and QEMU then calls the adapter back from inside its work. The
 * host ops here do that at random, driven by the input: from inside a DMA,
 * an MSI-X or a frame to the wire they reset a VF or the PF, change
 * NumVFs, write a BAR (a TX ring's TAIL, an RDMA register, the admin
 * queue), ring a doorbell, call the run or the timer, deliver a frame from
 * the wire, or fail the DMA.
 *
 * Checked beyond the sanitizers (abort): after a reset was asked for from
 * inside, no DMA and no MSI-X is done as that function (every function,
 * for the PF's) until the host's call that was in progress returns; and
 * a call from inside does no device work of its own: no DMA, MSI-X or
 * frame to the wire happens while the callback is still in the adapter
 * (before the fix, a TAIL write from inside sent the other function's
 * frames there, in the middle of this one's).
 *
 * Set-up through valid accesses: the PF's admin queue, VF 0 and VF 1 (fn 1
 * and 2) with RDMA command and event queues, 10.0.0.fn and a listener on
 * port 5000, and Ethernet TX and RX rings (8 entries, RX buffers posted)
 * on fn 0..2. Then a program of 8-byte operations, op[0] % 8:
 *   0 BAR0 write: fn op[1] % 4 (3: none), window op[2] >> 6 (the rings,
 *     the RDMA registers, the mailbox, the admin queue),
 *     register (op[2] & 63) * 4, value op[4..7]
 *   1 guest memory: 4 bytes op[4..7] at (op[1..3]) % MEM
 *   2 a frame from the wire: op[1] * 8 bytes of guest memory at op[2..3]
 *   3 doorbell of fn op[1] % 3 at offset op[2..3], value op[4..7]
 *   4 the clock advances op[4..7] ns
 *   5 from outside: reset of VF op[1] & 1, of the PF, or NumVFs op[2] % 3
 *   6 arm a hostile callback: action op[1] % 11 at the op[2]-th host op
 *     from now, arguments op[3..7]
 *   7 nothing (the host's loop below still runs)
 * After each operation the host runs the adapter when it was kicked and
 * fires its timer when due (bounded), as QEMU's main loop would.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vfw_adapter.h"
#include "vfw_bytes.h"
#include "vfwarp/vfwarp_admin.h"
#include "vfwarp/vfwarp_rdma.h"
#include "vfwarp/vfwarp_regs.h"
#include "vfwarp/vfwarp_ring.h"

#define MEM_BASE 0x100000ull
#define MEM      0x40000u
static uint8_t mem[MEM];

/* Guest memory: per function fn (0..2) a 64 KiB block at BLK(fn). */
#define BLK(fn)  (MEM_BASE + 0x10000ull * (fn))
#define AQ       (BLK(3))                /* the PF's admin ring */
#define RCQ(fn)  (BLK(fn) + 0x0000)      /* RDMA command ring, 16 entries */
#define REQ(fn)  (BLK(fn) + 0x1000)      /* event queue, 16 entries */
#define PDATA(fn) (BLK(fn) + 0x2000)
#define TXR(fn)  (BLK(fn) + 0x3000)      /* TX ring, 8 entries */
#define RXR(fn)  (BLK(fn) + 0x3800)      /* RX ring, 8 entries */
#define TXB(fn)  (BLK(fn) + 0x4000)      /* TX buffers, 2 KiB each */
#define RXB(fn)  (BLK(fn) + 0x8000)      /* RX buffers, 2 KiB each */

static struct vfw_adapter *A;
static uint64_t clk, timer_at;
static bool kicked;

/* The hostile callback armed by the program. */
static struct {
    bool armed;
    unsigned action, countdown;
    uint8_t arg[5];
} hc;
/* Functions whose reset a callback asked for (bit fn); all: the PF's. */
static uint32_t gone;
static uint8_t wire_frame[64];

static uint8_t *at(uint64_t a, size_t n)
{
    if (a < MEM_BASE || a - MEM_BASE > MEM || n > MEM - (a - MEM_BASE)) {
        return NULL;
    }
    return mem + (a - MEM_BASE);
}

static void hostile(void);

/* Every host op counts toward the armed callback; none may be for a
 * function whose reset was asked for from inside. */
static bool in_hostile;

static void host_op(unsigned fn, bool device_work)
{
    if (in_hostile || (device_work && fn < 32 && (gone & (1u << fn)))) {
        abort();
    }
    if (hc.armed && hc.countdown-- == 0) {
        hc.armed = false;
        in_hostile = true;
        hostile();
        in_hostile = false;
    }
}

static bool fail_this;

/* One DMA of n bytes at a as function fn: the guest's memory there, or
 * NULL when it fails (out of range, or failed on purpose by the input). */
static uint8_t *h_dma(unsigned fn, uint64_t a, size_t n)
{
    uint8_t *p = at(a, n);

    host_op(fn, true);
    if (fail_this || !p) {
        fail_this = false;
        return NULL;
    }
    return p;
}

static int h_read(void *c, unsigned fn, uint64_t a, void *b, size_t n)
{
    uint8_t *p = h_dma(fn, a, n);

    (void)c;
    if (!p) {
        return -1;
    }
    memcpy(b, p, n);
    return 0;
}

static int h_write(void *c, unsigned fn, uint64_t a, const void *b, size_t n)
{
    uint8_t *p = h_dma(fn, a, n);

    (void)c;
    if (!p) {
        return -1;
    }
    memcpy(p, b, n);
    return 0;
}

static void h_irq(void *c, unsigned fn, unsigned v)
{
    (void)c; (void)v;
    host_op(fn, true);
}

static void h_tx(void *c, const uint8_t *f, size_t n)
{
    (void)c;
    if (n >= 14) {
        memcpy(wire_frame, f, n < sizeof(wire_frame) ? n : sizeof(wire_frame));
    }
    host_op(0, false);
}

static uint64_t h_now(void *c) { (void)c; return clk; }
static void h_timer(void *c, uint64_t w) { (void)c; timer_at = w; }
static void h_kick(void *c) { (void)c; kicked = true; }

static const struct vfw_adapter_ops ops = {
    .dma_read = h_read, .dma_write = h_write, .irq = h_irq,
    .uplink_tx = h_tx, .now_ns = h_now, .timer = h_timer, .kick = h_kick,
};

static uint32_t arg32(void)
{
    return (uint32_t)hc.arg[1] | (uint32_t)hc.arg[2] << 8 |
           (uint32_t)hc.arg[3] << 16 | (uint32_t)hc.arg[4] << 24;
}

/* Called from inside a host op: what a DMA or MSI-X aimed at config space
 * or a BAR makes QEMU do, or a DMA the IOMMU refuses. */
static void hostile(void)
{
    unsigned fn = hc.arg[0] % 3;

    switch (hc.action) {
    case 0:
        fail_this = true;
        break;
    case 1:                     /* FLR of a VF */
        fn = 1 + hc.arg[0] % 2;
        gone |= 1u << fn;
        vfw_adapter_reset_fn(A, fn);
        break;
    case 2:                     /* FLR of the PF */
        gone = ~0u;
        vfw_adapter_reset(A);
        break;
    case 3:                     /* VF Enable cleared or NumVFs changed */
        gone |= 6u;
        vfw_adapter_reset_fn(A, 1);
        vfw_adapter_reset_fn(A, 2);
        vfw_adapter_set_num_vfs(A, hc.arg[0] % 3);
        break;
    case 4:                     /* a TX ring's TAIL (class 6) */
        vfw_adapter_bar0_write(A, fn, VFW_REG_TXQ(hc.arg[1] % VFW_TXQ_MAX) +
                               VFW_RING_TAIL, hc.arg[2] % 8, 4);
        break;
    case 5:                     /* the RDMA command ring's TAIL */
        vfw_adapter_bar0_write(A, fn, VFW_REG_RCQ_TAIL, hc.arg[2] % 16, 4);
        break;
    case 6:                     /* the admin queue's TAIL */
        vfw_adapter_bar0_write(A, 0, VFW_REG_AQ_TAIL, hc.arg[2] % 8, 4);
        break;
    case 7:
        vfw_adapter_doorbell(A, fn, arg32() % 0x4000, hc.arg[2], 4);
        break;
    case 8:
        vfw_adapter_run(A);
        break;
    case 9:
        vfw_adapter_timer(A);
        break;
    default:                    /* the wire hands our frame back at once */
        vfw_adapter_uplink_rx(A, wire_frame, sizeof(wire_frame));
        break;
    }
}

static void wr(unsigned fn, uint64_t addr, uint32_t v)
{
    vfw_adapter_bar0_write(A, fn, addr, v, 4);
}

/* QEMU's main loop: the bottom half when kicked, the timer when due. A
 * host call returning ends what callbacks inside it may have asked. */
static void host_loop(void)
{
    gone = 0;
    for (unsigned i = 0; i < 16; i++) {
        if (kicked) {
            kicked = false;
            vfw_adapter_run(A);
        } else if (timer_at <= clk) {
            timer_at = UINT64_MAX;
            vfw_adapter_timer(A);
        } else {
            break;
        }
        gone = 0;
    }
}

static uint32_t rcq_tail[3];

static void rcmd(unsigned fn, struct vfw_rcmd *d)
{
    uint8_t *slot = at(RCQ(fn) + rcq_tail[fn] * VFW_RCQ_DESC_SIZE,
                       VFW_RCQ_DESC_SIZE);

    memcpy(slot, d, sizeof(*d));
    rcq_tail[fn] = (rcq_tail[fn] + 1) % 16;
    wr(fn, VFW_REG_RCQ_TAIL, rcq_tail[fn]);
    host_loop();
}

static void bringup(unsigned fn)
{
    struct vfw_rcmd d;

    /* Ethernet rings */
    wr(fn, VFW_REG_TXQ0 + VFW_RING_BASE_LO, (uint32_t)TXR(fn));
    wr(fn, VFW_REG_TXQ0 + VFW_RING_LEN, 8);
    wr(fn, VFW_REG_TXQ0 + VFW_RING_CTRL, VFW_RING_CTRL_ENABLE |
       VFW_RING_CTRL_IRQ_EN);
    wr(fn, VFW_REG_RXQ0 + VFW_RING_BASE_LO, (uint32_t)RXR(fn));
    wr(fn, VFW_REG_RXQ0 + VFW_RING_LEN, 8);
    wr(fn, VFW_REG_RXQ0 + VFW_RING_CTRL, VFW_RING_CTRL_ENABLE |
       VFW_RING_CTRL_IRQ_EN | 1u << VFW_RING_CTRL_VEC_SHIFT);
    for (unsigned i = 0; i < 8; i++) {
        uint8_t *dsc = at(RXR(fn) + 16 * i, 16);

        vfw_st_le64(dsc, RXB(fn) + 2048 * i);
        vfw_st_le16(dsc + 8, 2048);
    }
    wr(fn, VFW_REG_RXQ0 + VFW_RING_TAIL, 7);
    if (fn == 0) {
        return;
    }
    /* RDMA: command and event queues, an address, a listener */
    wr(fn, VFW_REG_RCQ_BASE_LO, (uint32_t)RCQ(fn));
    wr(fn, VFW_REG_RCQ_LEN, 16);
    wr(fn, VFW_REG_RCQ_CTRL, VFW_RCQ_CTRL_ENABLE);
    wr(fn, VFW_REG_REQ_BASE_LO, (uint32_t)REQ(fn));
    wr(fn, VFW_REG_REQ_LEN, 16);
    wr(fn, VFW_REG_REQ_PDATA_LO, (uint32_t)PDATA(fn));
    wr(fn, VFW_REG_REQ_CTRL, 3 | 4u << 16);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_SET_ADDR;
    memcpy(d.u.set_addr.ip, (uint8_t[]){ 10, 0, 0, (uint8_t)fn }, 4);
    d.u.set_addr.mtu = 1500;
    rcmd(fn, &d);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_LISTEN;
    d.u.listen.port = 5000;
    d.u.listen.backlog = 4;
    rcmd(fn, &d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const uint8_t mac[6] = { 0x52, 0x54, 0, 0, 0, 1 };
    static const uint64_t win[4] = { VFW_REGWIN_RING, VFW_REGWIN_RDMA,
                                     VFW_REGWIN_MBOX, 0 };

    memset(mem, 0, sizeof(mem));
    memset(&hc, 0, sizeof(hc));
    memset(rcq_tail, 0, sizeof(rcq_tail));
    clk = 1000000000ull;
    timer_at = UINT64_MAX;
    kicked = fail_this = in_hostile = false;
    gone = 0;
    A = vfw_adapter_create(&ops, NULL, mac, 2, 0, NULL);
    if (!A) {
        return 0;
    }
    vfw_adapter_set_uplink(A, true);
    vfw_adapter_set_num_vfs(A, 2);
    wr(0, VFW_REG_AQ_BASE_LO, (uint32_t)AQ);
    wr(0, VFW_REG_AQ_LEN, 8);
    wr(0, VFW_REG_AQ_CTRL, VFW_AQ_CTRL_ENABLE);
    for (unsigned fn = 0; fn < 3; fn++) {
        bringup(fn);
    }
    for (size_t i = 0; i + 8 <= size; i += 8) {
        const uint8_t *op = data + i;
        uint32_t v = (uint32_t)op[4] | (uint32_t)op[5] << 8 |
                     (uint32_t)op[6] << 16 | (uint32_t)op[7] << 24;
        uint32_t off = (uint32_t)op[1] | (uint32_t)op[2] << 8 |
                       (uint32_t)op[3] << 16;

        switch (op[0] % 8) {
        case 0: {
            uint64_t w = win[op[2] >> 6];
            uint64_t reg = w ? w + (op[2] & 63u) * 4 :
                               VFW_REG_AQ_BASE_LO + (op[2] & 7u) * 4;

            vfw_adapter_bar0_write(A, op[1] % 4, reg, v, 4);
            break;
        }
        case 1:
            memcpy(mem + off % (MEM - 4), op + 4, 4);
            break;
        case 2: {
            uint32_t a = ((uint32_t)op[2] | (uint32_t)op[3] << 8) % (MEM / 2);

            vfw_adapter_uplink_rx(A, mem + a, (size_t)op[1] * 8);
            break;
        }
        case 3:
            vfw_adapter_doorbell(A, op[1] % 3, (op[2] | op[3] << 8) % 0x4000u,
                                 v, 4);
            break;
        case 4:
            clk += v;
            break;
        case 5:
            if (op[1] % 4 < 2) {
                vfw_adapter_reset_fn(A, 1 + op[1] % 2);
            } else if (op[1] % 4 == 2) {
                vfw_adapter_reset(A);
            } else {
                vfw_adapter_set_num_vfs(A, op[2] % 3);
            }
            break;
        case 6:
            hc.armed = true;
            hc.action = op[1] % 11;
            hc.countdown = op[2];
            memcpy(hc.arg, op + 3, 5);
            break;
        default:
            break;
        }
        gone = 0;       /* the call that was in progress has returned */
        host_loop();
    }
    vfw_adapter_destroy(A);
    A = NULL;
    return 0;
}
