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
 * - a VF reset and a PF reset reach every part.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
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

static void h_irq(void *ctx, unsigned fn, unsigned vec)
{
    (void)ctx; (void)fn; (void)vec;
    H.irqs++;
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
    .dma_read = t_read, .dma_write = t_write, .irq = h_irq,
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
    };
    int rc = run_tests("adapter", tests, sizeof(tests) / sizeof(tests[0]),
                       argc, argv, cleanup);

    cleanup();
    return rc;
}
