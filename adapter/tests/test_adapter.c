/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_adapter.c - the adapter object's wiring, natively (no QEMU): what
 * the QEMU glue used to join by hand now happens inside vfw_adapter, so it
 * is tested here through the host's view only (BAR0 accesses, the uplink,
 * the one timer, the kick):
 * - an admin command's VF config reaches the switch at once (no poll), and
 *   GET_VF_STATS reads the switch's counters;
 * - a frame from the wire reaches a VF's RDMA engine, and the engine's
 *   answer leaves through the switch with the MAC the PF gave the VF;
 * - the switch's uplink scheduler and the engine share the host's timer;
 * - a VF reset and a PF reset reach every part;
 * - hostile host ops (issue 33): a DMA write or an MSI-X the guest aimed
 *   at config space or at a BAR calls back into the adapter from inside
 *   its work. A reset, VF disable or BAR write arriving so must not free
 *   or change what that work still uses: resets are applied when the work
 *   ends, BAR writes inside it are refused, and TX of the Ethernet rings
 *   is done by the run, never inside a TAIL write.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "vfw_bytes.h"
#include "guest_mem.h"
#include "tcp_frame.h"
#include "vfw_adapter.h"
#include "vfw_admin.h"
#include "vfw_dataplane.h"
#include "vfw_func.h"
#include "vfwarp/vfwarp_admin.h"
#include "vfwarp/vfwarp_rdma.h"
#include "vfwarp/vfwarp_regs.h"

/* ---- the host ----------------------------------------------------------- */

#define OUT_MAX 16
static struct {
    uint64_t now;
    uint64_t timer_at;          /* UINT64_MAX: none asked */
    unsigned timer_reqs, kicks, irqs;
    uint8_t out[OUT_MAX][2048];
    size_t out_len[OUT_MAX];
    unsigned nout;
} H;

/* A hostile host op: set by a test, called on every DMA write and MSI-X
 * (fn, address; the vector for an MSI-X) before it is done, as a guest
 * that aims them at config space or at a BAR would have QEMU do. */
static void (*H_hook)(unsigned fn, uint64_t addr);
/* The function whose reset a hook asked for (H_ALL: the PF's, so every
 * function), and the DMA and MSI-X done as it after that: none may be. */
#define H_NONE (-1)
#define H_ALL  (-2)
static int H_gone = H_NONE;
static unsigned H_after;

static void h_count(unsigned fn)
{
    if (H_gone == H_ALL || (H_gone >= 0 && (unsigned)H_gone == fn)) {
        H_after++;
    }
}

static int h_read(void *ctx, unsigned fn, uint64_t a, void *b, size_t l)
{
    h_count(fn);
    return t_read(ctx, fn, a, b, l);
}

static int h_write(void *ctx, unsigned fn, uint64_t a, const void *b,
                   size_t l)
{
    h_count(fn);
    if (H_hook) {
        H_hook(fn, a);
    }
    return t_write(ctx, fn, a, b, l);
}

static void h_irq(void *ctx, unsigned fn, unsigned vec)
{
    (void)ctx;
    h_count(fn);
    H.irqs++;
    if (H_hook) {
        H_hook(fn, vec);
    }
}

static void h_tx(void *ctx, const uint8_t *f, size_t n)
{
    (void)ctx;
    if (H.nout < OUT_MAX && n <= sizeof(H.out[0])) {
        memcpy(H.out[H.nout], f, n);
        H.out_len[H.nout] = n;
    }
    H.nout++;
}

static uint64_t h_now(void *ctx) { (void)ctx; return H.now; }
static void h_timer(void *ctx, uint64_t when)
{
    (void)ctx;
    H.timer_at = when;
    H.timer_reqs++;
}
static void h_kick(void *ctx) { (void)ctx; H.kicks++; }

static const struct vfw_adapter_ops OPS = {
    .dma_read = h_read, .dma_write = h_write, .irq = h_irq,
    .uplink_tx = h_tx, .now_ns = h_now, .timer = h_timer, .kick = h_kick,
};

static struct vfw_adapter *A;
static const uint8_t PF_MAC[6] = { 0x52, 0x54, 0x00, 0x00, 0x00, 0x01 };
static const uint8_t VF_MAC[6] = { 0x02, 0x00, 0x00, 0x00, 0x01, 0x01 };
static const uint8_t PEER[6] = { 0x52, 0x54, 0x00, 0x00, 0x00, 0x99 };
#define VF_IP   0x0a000001u     /* 10.0.0.1 */
#define PEER_IP 0x0a000002u

/* Guest memory: the admin ring, then VF 0's RDMA command ring. */
#define AQ_RING  MEM_BASE
#define AQ_LEN   8u
#define RCQ_RING (MEM_BASE + 0x10000)
#define RCQ_LEN  8u

static uint32_t rd(unsigned fn, uint64_t addr)
{
    uint32_t v = 0xdeadbeef;

    return vfw_adapter_bar0_read(A, fn, addr, 4, &v) ? v : 0xdeadbeef;
}

static void wr(unsigned fn, uint64_t addr, uint32_t v)
{
    vfw_adapter_bar0_write(A, fn, addr, v, 4);
}

/* What the host does for the adapter: run it when kicked, fire its timer
 * when the clock reaches it. */
static void host_poll(void)
{
    for (int i = 0; i < 64; i++) {
        if (H.kicks) {
            H.kicks = 0;
            vfw_adapter_run(A);
        } else if (H.timer_at <= H.now) {
            H.timer_at = UINT64_MAX;
            vfw_adapter_timer(A);
        } else {
            return;
        }
    }
}

static int setup(uint64_t line_rate)
{
    const char *why = "x";

    vfw_adapter_destroy(A);
    memset(&H, 0, sizeof(H));
    memset(mem, 0, sizeof(mem));
    H_hook = NULL;
    H_gone = H_NONE;
    H_after = 0;
    H.now = 1000000000ull;
    H.timer_at = UINT64_MAX;
    A = vfw_adapter_create(&OPS, NULL, PF_MAC, 4, line_rate, &why);
    CHECK(A && why == NULL);
    vfw_adapter_set_uplink(A, true);
    vfw_adapter_set_num_vfs(A, 2);
    wr(0, VFW_REG_AQ_BASE_LO, (uint32_t)AQ_RING);
    wr(0, VFW_REG_AQ_BASE_HI, 0);
    wr(0, VFW_REG_AQ_LEN, AQ_LEN);
    wr(0, VFW_REG_AQ_CTRL, VFW_AQ_CTRL_ENABLE);
    CHECK(rd(0, VFW_REG_AQ_STATUS) == VFW_AQ_STATUS_ENABLED);
    return 0;
}

/* One admin command through the PF's ring; its status (0xffff: not done). */
static uint16_t admin(uint16_t op, uint16_t vf, const void *p, size_t n,
                      struct vfw_aq_desc *out)
{
    uint32_t tail = rd(0, VFW_REG_AQ_TAIL);
    uint8_t *slot = mem + (AQ_RING - MEM_BASE) + tail * VFW_AQ_DESC_SIZE;
    struct vfw_aq_desc d;

    memset(&d, 0, sizeof(d));
    d.opcode = op;
    d.vf = vf;
    if (p) {
        memcpy(d.u.raw, p, n);
    }
    memcpy(slot, &d, sizeof(d));
    wr(0, VFW_REG_AQ_TAIL, (tail + 1) % AQ_LEN);
    memcpy(&d, slot, sizeof(d));
    if (out) {
        *out = d;
    }
    return (d.flags & VFW_AQ_F_DONE) ? d.status : 0xffff;
}

/* VF 0 (function 1) as its driver starts its RDMA command ring. */
static void rcq_start(unsigned fn)
{
    wr(fn, VFW_REG_RCQ_BASE_LO, (uint32_t)RCQ_RING);
    wr(fn, VFW_REG_RCQ_BASE_HI, 0);
    wr(fn, VFW_REG_RCQ_LEN, RCQ_LEN);
    wr(fn, VFW_REG_RCQ_CTRL, VFW_RCQ_CTRL_ENABLE);
}

/* One RDMA command of function fn; its status (-1: never completed). */
static int rcmd(unsigned fn, struct vfw_rcmd *d)
{
    uint32_t tail = rd(fn, VFW_REG_RCQ_TAIL);
    uint8_t *slot = mem + (RCQ_RING - MEM_BASE) + tail * VFW_RCQ_DESC_SIZE;
    static uint32_t cookie;
    struct vfw_rcmd out;

    d->cookie = ++cookie;
    d->flags = d->status = 0;
    memcpy(slot, d, sizeof(*d));
    wr(fn, VFW_REG_RCQ_TAIL, (tail + 1) % RCQ_LEN);
    host_poll();
    memcpy(&out, slot, sizeof(out));
    if (!(out.flags & VFW_RCMD_F_DONE) || out.cookie != d->cookie) {
        return -1;
    }
    *d = out;
    return out.status;
}

/* VF 0 with VF_MAC from the PF, 10.0.0.1 and a listener on port 5000. */
static int vf_listens(void)
{
    struct vfw_aq_vf_mac m;

    memset(&m, 0, sizeof(m));
    struct vfw_rcmd d;

    memcpy(m.mac, VF_MAC, 6);
    CHECK(admin(VFW_AQ_OP_SET_VF_MAC, 0, &m, sizeof(m), NULL) ==
          VFW_AQ_S_OK);
    rcq_start(1);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_SET_ADDR;
    d.u.set_addr.ip[0] = 10;
    d.u.set_addr.ip[3] = 1;
    d.u.set_addr.mtu = 1500;
    CHECK(rcmd(1, &d) == VFW_RCMD_S_OK);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_LISTEN;
    d.u.listen.port = 5000;
    d.u.listen.backlog = 4;
    CHECK(rcmd(1, &d) == VFW_RCMD_S_OK);
    return 0;
}

/* A SYN from the peer on the wire to VF 0's port 5000. */
static void syn_from_wire(uint16_t sport)
{
    uint8_t f[128];
    size_t n = tcp_frame(f, VF_MAC, PEER, PEER_IP, VF_IP, sport, 5000,
                         1000, 0, 0x02 /* SYN */, 65535, NULL, 0, NULL, 0);

    vfw_adapter_uplink_rx(A, f, n);
    host_poll();
}

/* Is out[k] a SYN-ACK from VF 0's engine to the peer's sport? */
static bool is_syn_ack(unsigned k, uint16_t sport)
{
    const uint8_t *f = H.out[k], *t = f + 34;

    return k < H.nout && k < OUT_MAX && H.out_len[k] >= 54 &&
           !memcmp(f, PEER, 6) && !memcmp(f + 6, VF_MAC, 6) &&
           f[12] == 0x08 && f[13] == 0x00 && f[23] == 6 &&
           ((t[0] << 8) | t[1]) == 5000 && ((t[2] << 8) | t[3]) == sport &&
           (t[13] & 0x12) == 0x12;
}

/* ---- tests -------------------------------------------------------------- */

static int t_create_refuses(void)
{
    struct vfw_adapter_ops no_kick = OPS;
    const char *why = NULL;

    CHECK(vfw_adapter_create(&OPS, NULL, PF_MAC, 129, 0, &why) == NULL);
    CHECK(why && strstr(why, "VFs"));
    why = NULL;
    CHECK(vfw_adapter_create(&OPS, NULL, PF_MAC, 4, 1, &why) == NULL);
    CHECK(why && strstr(why, "line rate"));
    no_kick.kick = NULL;
    CHECK(vfw_adapter_create(&no_kick, NULL, PF_MAC, 4, 0, NULL) == NULL);
    return 0;
}

/* `ip link set PF vf 0 mac ...` and `... state disable`: the switch has
 * them as soon as the command completes; nothing waits for a timer. */
static int t_admin_commit_reaches_the_switch(void)
{
    struct vfw_aq_vf_mac m;

    memset(&m, 0, sizeof(m));
    struct vfw_aq_vf_link l;
    struct vfw_aq_desc d;
    uint8_t mac[6], f[128];
    size_t n;

    memset(&l, 0, sizeof(l));
    CHECK(setup(0) == 0);
    memcpy(m.mac, VF_MAC, 6);
    CHECK(admin(VFW_AQ_OP_SET_VF_MAC, 0, &m, sizeof(m), NULL) ==
          VFW_AQ_S_OK);
    CHECK(vfw_dp_vf_mac(vfw_adapter_dp(A), 0, mac) == 0);
    CHECK(memcmp(mac, VF_MAC, 6) == 0);
    CHECK(H.timer_reqs == 0);

    /* GET_VF_STATS answers with the switch's counters: a frame for the
     * VF, whose RX ring is off, is counted as dropped for no buffer */
    n = tcp_frame(f, VF_MAC, PEER, PEER_IP, VF_IP, 4000, 80, 1, 0, 0x02,
                  1000, NULL, 0, NULL, 0);
    vfw_adapter_uplink_rx(A, f, n);
    CHECK(vfw_dp_stat(vfw_adapter_dp(A), VFW_DP_FN_VF(0),
                      VFW_STAT_RX_NO_BUF) == 1);
    CHECK(admin(VFW_AQ_OP_GET_VF_STATS, 0, NULL, 0, &d) == VFW_AQ_S_OK);
    CHECK(d.u.stats.rx_dropped == 1);

    CHECK(vfw_dp_link_up(vfw_adapter_dp(A), VFW_DP_FN_VF(0)));
    l.state = VFW_LINK_STATE_DISABLE;
    CHECK(admin(VFW_AQ_OP_SET_VF_LINK_STATE, 0, &l, sizeof(l), NULL) ==
          VFW_AQ_S_OK);
    CHECK(!vfw_dp_link_up(vfw_adapter_dp(A), VFW_DP_FN_VF(0)));

    /* NumVFs lowered: VF 1's config goes back to its defaults, in the
     * switch too */
    memcpy(m.mac, PEER, 6);
    CHECK(admin(VFW_AQ_OP_SET_VF_MAC, 1, &m, sizeof(m), NULL) ==
          VFW_AQ_S_OK);
    vfw_adapter_set_num_vfs(A, 1);
    CHECK(vfw_dp_vf_mac(vfw_adapter_dp(A), 1, mac) == 0);
    CHECK(memcmp(mac, PEER, 6) != 0);
    return 0;
}

/* A SYN from the wire reaches VF 0's engine through the switch, and the
 * SYN-ACK leaves through the switch onto the wire from VF_MAC, the MAC
 * the PF gave the VF (the engine learnt it from the admin command). */
static int t_engine_frames_through_the_switch(void)
{
    CHECK(setup(0) == 0);
    CHECK(vf_listens() == 0);
    CHECK(H.nout == 0);
    syn_from_wire(40000);
    CHECK(H.nout == 1);
    CHECK(is_syn_ack(0, 40000));
    CHECK(vfw_adapter_funcs(A)->uplink_tx == 1 &&
          vfw_adapter_funcs(A)->uplink_rx == 1);
    CHECK(vfw_dp_stat(vfw_adapter_dp(A), VFW_DP_FN_VF(0),
                      VFW_STAT_RX_PKTS) == 1);
    return 0;
}

/* With a line rate, the second SYN-ACK waits for the uplink scheduler's
 * timer, which the adapter asks the host for; firing it sends the frame. */
static int t_one_host_timer(void)
{
    CHECK(setup(1000000) == 0);    /* 1 Mbit/s: a 60-byte frame ~0.5 ms */
    CHECK(vf_listens() == 0);
    syn_from_wire(40001);
    syn_from_wire(40002);
    CHECK(H.nout >= 1 && H.nout < 2);
    CHECK(H.timer_at != UINT64_MAX);
    for (int i = 0; i < 20 && H.nout < 2; i++) {
        H.now = H.timer_at > H.now ? H.timer_at : H.now + 100000;
        host_poll();
    }
    CHECK(H.nout == 2);
    CHECK(is_syn_ack(0, 40001) && is_syn_ack(1, 40002));
    return 0;
}

/* FLR of VF 0: its registers, its RDMA state (the listener) and its
 * command ring are gone; the PF's config of it (its MAC) stays. A PF
 * reset then puts the VF's MAC back to its default everywhere and keeps
 * the wire attached. */
static int t_reset_fans_out(void)
{
    uint8_t mac[6];

    CHECK(setup(0) == 0);
    CHECK(vf_listens() == 0);
    wr(1, VFW_REG_SCRATCH, 0x1234);
    CHECK(rd(1, VFW_REG_SCRATCH) == 0x1234);

    vfw_adapter_reset_fn(A, 1);
    CHECK(rd(1, VFW_REG_SCRATCH) == 0);
    CHECK(rd(1, VFW_REG_RCQ_CTRL) == 0);
    syn_from_wire(40003);
    CHECK(H.nout == 0);                   /* no listener: no SYN-ACK */
    CHECK(vfw_dp_vf_mac(vfw_adapter_dp(A), 0, mac) == 0);
    CHECK(memcmp(mac, VF_MAC, 6) == 0);

    /* listening again: the engine still has the PF's MAC for the VF */
    memset(mem + (RCQ_RING - MEM_BASE), 0, RCQ_LEN * VFW_RCQ_DESC_SIZE);
    CHECK(vf_listens() == 0);
    syn_from_wire(40004);
    CHECK(H.nout == 1 && is_syn_ack(0, 40004));

    vfw_adapter_reset(A);
    CHECK(rd(0, VFW_REG_AQ_STATUS) == 0);
    CHECK(vfw_dp_vf_mac(vfw_adapter_dp(A), 0, mac) == 0);
    CHECK(memcmp(mac, VF_MAC, 6) != 0);
    CHECK(vfw_admin_vf_cfg(vfw_adapter_admin(A), 0)->mac[0] == 0);
    CHECK(rd(1, VFW_REG_RCQ_CTRL) == 0);
    CHECK(vfw_adapter_funcs(A)->uplink);
    return 0;
}

/* BAR0 of a function that does not exist, and the admin window seen from
 * a VF, are refused. */
static int t_bar0_decode(void)
{
    uint32_t v = 1;

    CHECK(setup(0) == 0);
    CHECK(!vfw_adapter_bar0_read(A, 5, VFW_REG_SCRATCH, 4, &v) && v == 0);
    CHECK(!vfw_adapter_bar0_write(A, 5, VFW_REG_SCRATCH, 1, 4));
    CHECK(!vfw_adapter_doorbell(A, 5, 0, 1, 4));
    CHECK(rd(0, VFW_REG_AQ_LEN) == AQ_LEN);
    CHECK(rd(1, VFW_REG_AQ_LEN) != AQ_LEN);
    return 0;
}

/* ---- hostile host ops (issue 33) ---------------------------------------- */

/* Which call the hook makes from inside the device's work. */
enum { DO_RESET_FN, DO_RESET_PF, DO_DISABLE_VFS };
static unsigned hook_does;
static uint8_t hook_mac[6];     /* VF 0's MAC in the switch, seen in the hook */
static bool hook_saw_cfg;       /* the PF's config of VF 0, in the hook */

/* The completion of VF 0's next RDMA command lands on its own DEVCTL (or
 * the PF's, or the PF's SR-IOV control): QEMU resets synchronously. */
static void hook_reset_in_run(unsigned fn, uint64_t a)
{
    if (fn != 1 || a < RCQ_RING || a >= RCQ_RING + RCQ_LEN *
                                         VFW_RCQ_DESC_SIZE) {
        return;
    }
    H_hook = NULL;
    switch (hook_does) {
    case DO_RESET_FN:
        H_gone = 1;
        vfw_adapter_reset_fn(A, 1);
        break;
    case DO_RESET_PF:
        H_gone = H_ALL;
        vfw_adapter_reset(A);
        break;
    default:            /* VF Enable cleared: QEMU resets the VFs, then
                         * the glue tells the adapter NumVFs */
        H_gone = 1;
        vfw_adapter_reset_fn(A, 1);
        vfw_adapter_reset_fn(A, 2);
        vfw_adapter_set_num_vfs(A, 0);
        break;
    }
    vfw_dp_vf_mac(vfw_adapter_dp(A), 0, hook_mac);
    hook_saw_cfg = vfw_adapter_admin(A) &&
                    vfw_admin_vf_cfg(vfw_adapter_admin(A), 0)->mac[0] != 0;
}

/* A reset reached from inside a run is applied when the run ends: the run
 * does not use freed state (ASan: heap-use-after-free in the RNIC before
 * the fix), does no more DMA or MSI-X as a function being reset, and then
 * the reset has happened and the adapter works again. */
static int reset_in_run(unsigned what)
{
    struct vfw_rcmd d;
    uint8_t mac[6];

    CHECK(setup(0) == 0);
    CHECK(vf_listens() == 0);
    wr(1, VFW_REG_SCRATCH, 0x1234);
    hook_does = what;
    hook_saw_cfg = false;
    memset(hook_mac, 0, 6);
    H_hook = hook_reset_in_run;
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_LISTEN;
    d.u.listen.port = 5001;
    d.u.listen.backlog = 4;
    rcmd(1, &d);                /* its completion calls the hook */
    CHECK(H_hook == NULL);      /* the hook ran */
    CHECK(H_after == 0);
    /* inside the run, the PF's config of VF 0 was still there */
    CHECK(memcmp(hook_mac, VF_MAC, 6) == 0 && hook_saw_cfg);
    /* after it, the reset has happened */
    CHECK(rd(1, VFW_REG_SCRATCH) == 0);
    CHECK(rd(1, VFW_REG_RCQ_CTRL) == 0);
    CHECK(vfw_dp_vf_mac(vfw_adapter_dp(A), 0, mac) == 0);
    if (what == DO_RESET_FN) {
        CHECK(memcmp(mac, VF_MAC, 6) == 0);     /* the PF's, kept */
    } else {
        CHECK(memcmp(mac, VF_MAC, 6) != 0);     /* back to the default */
    }
    if (what == DO_RESET_PF) {
        CHECK(rd(0, VFW_REG_AQ_STATUS) == 0);
        return 0;
    }
    /* VF 0 listens again and answers a SYN: nothing was left half-freed */
    vfw_adapter_set_num_vfs(A, 2);
    memset(mem + (RCQ_RING - MEM_BASE), 0, RCQ_LEN * VFW_RCQ_DESC_SIZE);
    H_gone = H_NONE;
    CHECK(vf_listens() == 0);
    syn_from_wire(40010);
    CHECK(H.nout == 1 && is_syn_ack(0, 40010));
    return 0;
}

static int t_vf_reset_in_run(void) { return reset_in_run(DO_RESET_FN); }
static int t_pf_reset_in_run(void) { return reset_in_run(DO_RESET_PF); }
static int t_vf_disable_in_run(void) { return reset_in_run(DO_DISABLE_VFS); }

/* Ethernet rings of function fn through BAR0: 8 entries each, TX ring at
 * ETH(fn), RX ring at +0x1000, TX buffers at +0x2000, RX buffers (2 KiB,
 * all 7 posted) at +0x8000. */
#define ETH(fn) (MEM_BASE + 0x100000 + 0x10000ull * (fn))
#define ETH_N   8u

static void eth_rings(unsigned fn)
{
    wr(fn, VFW_REG_TXQ0 + VFW_RING_BASE_LO, (uint32_t)ETH(fn));
    wr(fn, VFW_REG_TXQ0 + VFW_RING_LEN, ETH_N);
    wr(fn, VFW_REG_TXQ0 + VFW_RING_CTRL, VFW_RING_CTRL_ENABLE);
    wr(fn, VFW_REG_RXQ0 + VFW_RING_BASE_LO, (uint32_t)(ETH(fn) + 0x1000));
    wr(fn, VFW_REG_RXQ0 + VFW_RING_LEN, ETH_N);
    wr(fn, VFW_REG_RXQ0 + VFW_RING_CTRL, VFW_RING_CTRL_ENABLE |
       VFW_RING_CTRL_IRQ_EN);
    for (unsigned i = 0; i < ETH_N; i++) {
        uint8_t *dsc = mem + (ETH(fn) + 0x1000 + 16 * i - MEM_BASE);

        vfw_st_le64(dsc, ETH(fn) + 0x8000 + 2048 * i);
        vfw_st_le16(dsc + 8, 2048);
    }
    wr(fn, VFW_REG_RXQ0 + VFW_RING_TAIL, ETH_N - 1);
}

/* Frame f of len bytes into fn's TX descriptor i (no doorbell). */
static void eth_post(unsigned fn, unsigned i, const uint8_t *f, uint16_t len)
{
    uint8_t *dsc = mem + (ETH(fn) + 16 * i - MEM_BASE);

    memcpy(mem + (ETH(fn) + 0x2000 + 2048 * i - MEM_BASE), f, len);
    memset(dsc, 0, 16);
    vfw_st_le64(dsc, ETH(fn) + 0x2000 + 2048 * i);
    vfw_st_le16(dsc + 8, len);
    dsc[10] = VFW_TXD_EOP;
}

/* RX buffer i of fn. */
static const uint8_t *eth_rx_buf(unsigned fn, unsigned i)
{
    return mem + (ETH(fn) + 0x8000 + 2048 * i - MEM_BASE);
}

static void frame_fill(uint8_t *f, const uint8_t dst[6], const uint8_t src[6],
                       size_t len, uint8_t fill)
{
    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    f[12] = 0x88;
    f[13] = 0xb5;
    memset(f + 14, fill, len - 14);
}

/* The frame the PF receives lands on VF 0's DEVCTL: QEMU resets VF 0
 * while the data path is sending VF 0's held frame to every port. */
static void hook_reset_holder(unsigned fn, uint64_t a)
{
    if (fn != 0 || a < ETH(0) + 0x8000 || a >= ETH(0) + 0x8000 +
                                                 2048 * ETH_N) {
        return;
    }
    H_hook = NULL;
    H_gone = 1;
    vfw_adapter_reset_fn(A, 1);
}

/* VF 0's RDMA engine is over its max_mbps: its broadcast waits in the
 * hold queue; the shaper's timer lets it go to the uplink, the PF and
 * VF 1. The PF's copy resets VF 0 (before the fix: the held frame was
 * freed under the switch still sending it, heap-use-after-free in
 * vsw_egress_frame). The reset is applied after the timer's work: VF 0's
 * counters are cleared and nothing of it is sent after. */
static int t_vf_reset_in_hold_drain(void)
{
    static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    struct vfw_aq_vf_rate rate = { .min_mbps = 0, .max_mbps = 1 };
    struct vfw_dp *dp;
    uint8_t f[1500], mac[6];
    unsigned sent;

    CHECK(setup(0) == 0);
    dp = vfw_adapter_dp(A);
    CHECK(admin(VFW_AQ_OP_SET_VF_RATE, 0, &rate, sizeof(rate), NULL) ==
          VFW_AQ_S_OK);
    eth_rings(0);
    CHECK(vfw_dp_vf_mac(dp, 0, mac) == 0);
    frame_fill(f, bcast, mac, sizeof(f), 0x5a);
    /* 1 Mbit/s, its bucket empty since the rate was set: held */
    vfw_dp_fn_inject(dp, VFW_DP_FN_VF(0), f, sizeof(f));
    CHECK(H.nout == 0);
    CHECK(H.timer_at != UINT64_MAX);
    H_hook = hook_reset_holder;
    H.now += 100000000ull;      /* 100 ms: the held frame may go */
    host_poll();
    CHECK(H_hook == NULL);      /* the PF got the held frame */
    CHECK(H.nout == 1);
    CHECK(H_after == 0);
    CHECK(vfw_dp_stat(dp, VFW_DP_FN_VF(0), VFW_STAT_TX_PKTS) == 0);
    sent = H.nout;
    H.now += 1000000000ull;
    host_poll();
    CHECK(H.nout == sent);
    return 0;
}

/* A frame VF 0 receives writes VF 1's TX TAIL (the guest aimed the RX
 * buffer at VF 1's BAR0). */
static bool hook_tail_ok;
static unsigned hook_tail_nout;
static void hook_tail_of_vf1(unsigned fn, uint64_t a)
{
    if (fn != 1 || a < ETH(1) + 0x8000 || a >= ETH(1) + 0x8000 +
                                                 2048 * ETH_N) {
        return;
    }
    H_hook = NULL;
    hook_tail_ok = vfw_adapter_bar0_write(A, 2, VFW_REG_TXQ0 +
                                          VFW_RING_TAIL, 1, 4);
    hook_tail_nout = H.nout;
}

/* Class 6 of issue 33: the PF's broadcast goes to the uplink, VF 0 and
 * VF 1; VF 0's copy writes VF 1's TAIL. Before the fix, VF 1's TX ran
 * inside that write, in the middle of the PF's frame, and VF 1 received
 * its own frame in place of the PF's. Now TX of the rings is the run's
 * work: a TAIL write only records, and one that arrives from inside the
 * device's work is refused; VF 1 gets the PF's frame intact, and its own
 * frame leaves when its driver rings from outside, at the next run. */
static int t_tail_from_callback_does_not_nest(void)
{
    static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    uint8_t fa[200], fb[200], mac[6];

    CHECK(setup(0) == 0);
    eth_rings(0);
    eth_rings(1);
    eth_rings(2);
    CHECK(vfw_dp_vf_mac(vfw_adapter_dp(A), 1, mac) == 0);
    frame_fill(fa, bcast, PF_MAC, sizeof(fa), 0xa5);
    frame_fill(fb, PEER, mac, sizeof(fb), 0xb6);
    eth_post(0, 0, fa, sizeof(fa));
    eth_post(2, 0, fb, sizeof(fb));
    hook_tail_ok = true;
    hook_tail_nout = 99;
    H_hook = hook_tail_of_vf1;
    wr(0, VFW_REG_TXQ0 + VFW_RING_TAIL, 1);
    host_poll();
    CHECK(H_hook == NULL);                      /* VF 0 got the frame */
    CHECK(memcmp(eth_rx_buf(2, 0), fa, sizeof(fa)) == 0);   /* intact */
    CHECK(hook_tail_nout == 1);                 /* nothing of VF 1 in it */
    CHECK(!hook_tail_ok);                       /* refused */
    CHECK(H.nout == 1 && H.out_len[0] == sizeof(fa) &&
          memcmp(H.out[0], fa, sizeof(fa)) == 0);
    /* the TAIL write records; the run sends */
    H.kicks = 0;
    wr(2, VFW_REG_TXQ0 + VFW_RING_TAIL, 1);
    CHECK(H.nout == 1 && H.kicks > 0);
    host_poll();
    CHECK(H.nout == 2 && memcmp(H.out[1], fb, sizeof(fb)) == 0);
    CHECK(rd(2, VFW_REG_TXQ0 + VFW_RING_HEAD) == 1);
    return 0;
}

static void cleanup(void)
{
    vfw_adapter_destroy(A);
    A = NULL;
}

int main(int argc, char **argv)
{
    static const struct unit_test tests[] = {
        { "create_refuses", t_create_refuses },
        { "admin_commit_reaches_the_switch",
          t_admin_commit_reaches_the_switch },
        { "engine_frames_through_the_switch",
          t_engine_frames_through_the_switch },
        { "one_host_timer", t_one_host_timer },
        { "reset_fans_out", t_reset_fans_out },
        { "bar0_decode", t_bar0_decode },
        { "vf_reset_in_run", t_vf_reset_in_run },
        { "pf_reset_in_run", t_pf_reset_in_run },
        { "vf_disable_in_run", t_vf_disable_in_run },
        { "vf_reset_in_hold_drain", t_vf_reset_in_hold_drain },
        { "tail_from_callback_does_not_nest",
          t_tail_from_callback_does_not_nest },
    };
    int rc = run_tests("adapter", tests, sizeof(tests) / sizeof(tests[0]),
                       argc, argv, cleanup);

    cleanup();
    return rc;
}
