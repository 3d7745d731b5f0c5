/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_uplink.c - the uplink as a wire with a line rate (src/eth/eth_uplink.c) and
 * its hooks in the data path (src/eth/), against simulated time:
 * shares and line rate through vfw_uplink directly, then VF TX rings held
 * by back-pressure, a VF's max_mbps as its leaf's tx_max, min_mbps
 * oversubscription refused, and carrier loss flushing the queues.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vfw_dataplane.h"
#include "dp_host.h"
#include "vfw_uplink.h"
#include "vfwarp/vfwarp_admin.h"

static int passed, failed;
#define CHECK(c) do { if (c) { passed++; } else { failed++; \
    fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); } } while (0)

static int within(const char *what, double got, double want, double tol)
{
    int ok = fabs(got - want) <= tol * want;

    printf("  %-40s %10.4g want %10.4g (%+.2f%%)\n", what, got, want,
           100.0 * (got - want) / want);
    return ok;
}

/* ---- vfw_uplink alone ---------------------------------------------------- */

static uint64_t up_bytes[4], up_timer_at, up_resumes;

static void u_tx(void *ctx, const uint8_t *f, size_t l)
{
    (void)ctx;
    up_bytes[f[0] & 3] += l;        /* byte 0 says which function */
}

static void u_timer(void *ctx, uint64_t when) { (void)ctx; up_timer_at = when; }
static void u_resume(void *ctx, unsigned fn) { (void)ctx; (void)fn; up_resumes++; }

static const struct vfw_uplink_ops u_ops = { .tx = u_tx, .timer = u_timer,
                                             .resume = u_resume };

/* Two functions keep sending whenever they are not paused (as TX rings
 * would); weights 3:1 share a 1 Gbit/s wire. */
static void test_uplink_shares(void)
{
    struct vfw_uplink *up = vfw_uplink_create(&u_ops, NULL, 2);
    vsw_qos *q = vfw_uplink_qos(up);
    vsw_qos_rate r;
    uint8_t f[2][1500];
    uint64_t t = 0, drops = 0, meas = 0, b0 = 0, b1 = 0;
    const uint64_t end = 100000000ull;      /* 100 ms */

    printf("uplink alone\n");
    CHECK(up != NULL);
    CHECK(vsw_qos_set_line(q, 1000000000ull, 24, NULL) == 0);
    vsw_qos_rate_default(&r);
    r.tx_weight = 3;
    CHECK(vsw_qos_leaf_set(q, 0, &r, NULL) == 0);
    memset(f, 0, sizeof(f));
    f[1][0] = 1;
    memset(up_bytes, 0, sizeof(up_bytes));
    up_resumes = 0;
    for (unsigned step = 0; step < 1000000 && t < end; step++) {
        for (unsigned fn = 0; fn < 2; fn++) {
            for (int k = 0; k < 64 && !vfw_uplink_paused(up, fn); k++) {
                if (vfw_uplink_send(up, fn, 0, f[fn], sizeof(f[fn]), t) < 0) {
                    drops++;
                }
            }
        }
        if (!meas && t >= 10000000ull) {    /* 10 ms warm-up */
            meas = t;
            b0 = up_bytes[0];
            b1 = up_bytes[1];
        }
        t = up_timer_at > t ? up_timer_at : t + 1000;
        vfw_uplink_advance(up, t);
    }
    double secs = (double)(t - meas) / 1e9;
    double r0 = (double)(up_bytes[0] - b0) * 8 / secs, r1 = (double)(up_bytes[1] - b1) * 8 / secs;
    CHECK(within("line 1G, 1500 B + 24 B overhead", r0 + r1, 1e9 * 1500 / 1524, 0.01));
    CHECK(within("weight 3 function", r0, 0.75e9 * 1500 / 1524, 0.05));
    CHECK(within("weight 1 function", r1, 0.25e9 * 1500 / 1524, 0.05));
    CHECK(drops == 0);
    CHECK(up_resumes > 10);             /* back-pressure was at work */
    /* bad arguments */
    CHECK(vfw_uplink_send(up, 2, 0, f[0], 100, t) == -EINVAL);
    CHECK(vfw_uplink_send(up, 0, 8, f[0], 100, t) == -EINVAL);
    CHECK(vfw_uplink_send(up, 0, 0, f[0], 0, t) == -EINVAL);
    CHECK(vfw_uplink_create(&u_ops, NULL, 0) == NULL);
    vfw_uplink_destroy(up);             /* with frames queued: freed */
}

/* ---- through the data path ----------------------------------------------- */

#include "guest_mem.h"
#define RING_N 16
static uint64_t clock_ns, fn_timer[VFW_DP_NUM_FN], uplink_timer_at;
static uint64_t wire_bytes[4], wire_frames;
static unsigned tx_tail[VFW_DP_NUM_FN];

static void t_irq(void *ctx, unsigned fn, unsigned v) { (void)ctx; (void)fn; (void)v; }

/* frames carry their VF in the source MAC's byte 4 (default MACs) */
static void t_uplink(void *ctx, const uint8_t *f, size_t l)
{
    (void)ctx;
    wire_bytes[f[10] & 3] += l;
    wire_frames++;
}

static uint64_t t_now(void *ctx) { (void)ctx; return clock_ns; }
static void t_timer(void *ctx, unsigned fn, uint64_t w)
{
    (void)ctx;
    if (fn < VFW_DP_NUM_FN) {
        fn_timer[fn] = w;
    }
}
static void t_uplink_timer(void *ctx, uint64_t w) { (void)ctx; uplink_timer_at = w; }

static const struct vfw_dp_ops ops = {
    .kick = t_kick,
    .dma_read = t_read, .dma_write = t_write, .irq = t_irq,
    .uplink_tx = t_uplink, .now_ns = t_now, .timer = t_timer,
    .uplink_timer = t_uplink_timer,
};

static uint64_t R(unsigned fn) { return MEM_BASE + 0x10000ull * fn; }
static uint64_t B(unsigned fn) { return MEM_BASE + 0x200000ull + 0x10000ull * fn; }
static uint8_t *at(uint64_t a) { return mem + (a - MEM_BASE); }

static void wr(struct vfw_dp *dp, unsigned fn, uint32_t reg, uint32_t v)
{
    vfw_dp_write(dp, fn, reg, v, 4);
    host_run(dp);
}

static uint32_t rd(struct vfw_dp *dp, unsigned fn, uint32_t reg)
{
    uint32_t v = 0;

    vfw_dp_read(dp, fn, reg, 4, &v);
    return v;
}

static void tx_ring_up(struct vfw_dp *dp, unsigned fn)
{
    wr(dp, fn, VFW_REG_TXQ0 + VFW_RING_BASE_LO, (uint32_t)R(fn));
    wr(dp, fn, VFW_REG_TXQ0 + VFW_RING_BASE_HI, 0);
    wr(dp, fn, VFW_REG_TXQ0 + VFW_RING_LEN, RING_N);
    wr(dp, fn, VFW_REG_TXQ0 + VFW_RING_CTRL, VFW_RING_CTRL_ENABLE);
}

/* The driver keeps fn's TX ring full of `len`-byte frames from `src` to a
 * MAC on the wire; returns how many it posted. */
static unsigned ring_fill(struct vfw_dp *dp, unsigned fn, const uint8_t src[6], uint16_t len)
{
    unsigned head = rd(dp, fn, VFW_REG_TXQ0 + VFW_RING_HEAD), n = 0;

    while ((tx_tail[fn] + 1) % RING_N != head) {
        unsigned i = tx_tail[fn];
        uint8_t *fr = at(B(fn) + 2048 * i), *d = at(R(fn) + 16 * i);

        memcpy(fr, (const uint8_t[6]){ 2, 0, 0, 9, 9, 9 }, 6);
        memcpy(fr + 6, src, 6);
        fr[12] = 0x88;
        fr[13] = 0xb5;
        memset(d, 0, 16);
        for (int b = 0; b < 8; b++) {
            d[b] = (uint8_t)((B(fn) + 2048 * i) >> (8 * b));
        }
        d[8] = (uint8_t)len;
        d[9] = (uint8_t)(len >> 8);
        d[10] = VFW_TXD_EOP;
        tx_tail[fn] = (i + 1) % RING_N;
        n++;
    }
    wr(dp, fn, VFW_REG_TXQ0 + VFW_RING_TAIL, tx_tail[fn]);
    return n;
}

/* VF0 and VF1 keep their rings full towards a 100 Mbit/s wire for `ms`;
 * returns their rates (bit/s) after a 10 ms warm-up. */
static void saturate(struct vfw_dp *dp, unsigned ms, double rate[2], int *held)
{
    uint8_t mac[2][6];
    uint64_t end = clock_ns + ms * 1000000ull, meas = 0, b[2] = {0, 0};

    vfw_dp_vf_mac(dp, 0, mac[0]);
    vfw_dp_vf_mac(dp, 1, mac[1]);
    *held = 0;
    for (unsigned step = 0; step < 2000000 && clock_ns < end; step++) {
        uint64_t next = uplink_timer_at > clock_ns ? uplink_timer_at : UINT64_MAX;

        for (unsigned vf = 0; vf < 2; vf++) {
            ring_fill(dp, VFW_DP_FN_VF(vf), mac[vf], 1000);
            if (vfw_dp_fn_tx_paused(dp, VFW_DP_FN_VF(vf)) &&
                rd(dp, VFW_DP_FN_VF(vf), VFW_REG_TXQ0 + VFW_RING_HEAD) != tx_tail[VFW_DP_FN_VF(vf)]) {
                *held = 1;          /* descriptors wait on a paused ring */
            }
            if (fn_timer[VFW_DP_FN_VF(vf)] > clock_ns && fn_timer[VFW_DP_FN_VF(vf)] < next) {
                next = fn_timer[VFW_DP_FN_VF(vf)];
            }
        }
        if (!meas && clock_ns >= end - (ms - 10) * 1000000ull) {
            meas = clock_ns;
            b[0] = wire_bytes[0];
            b[1] = wire_bytes[1];
        }
        clock_ns = next != UINT64_MAX ? next : clock_ns + 10000;
        vfw_dp_uplink_timer(dp);
        host_run(dp);
        for (unsigned vf = 0; vf < 2; vf++) {
            if (fn_timer[VFW_DP_FN_VF(vf)] && fn_timer[VFW_DP_FN_VF(vf)] <= clock_ns) {
                fn_timer[VFW_DP_FN_VF(vf)] = 0;
                dp_timer(dp, VFW_DP_FN_VF(vf));
            }
        }
    }
    for (unsigned vf = 0; vf < 2; vf++) {
        rate[vf] = (double)(wire_bytes[vf] - b[vf]) * 8 / ((double)(clock_ns - meas) / 1e9);
    }
}

static struct vfw_dp *fresh(void)
{
    struct vfw_dp *dp = vfw_dp_create(&ops, NULL, (const uint8_t[6]){ 2, 0, 0, 0, 7, 0 }, 4);

    memset(mem, 0, sizeof(mem));
    memset(tx_tail, 0, sizeof(tx_tail));
    memset(fn_timer, 0, sizeof(fn_timer));
    memset(wire_bytes, 0, sizeof(wire_bytes));
    uplink_timer_at = 0;
    wire_frames = 0;
    clock_ns = 1000;
    if (dp) {
        vfw_dp_set_uplink(dp, true);
        for (unsigned fn = 0; fn < 5; fn++) {
            tx_ring_up(dp, fn);
        }
    }
    return dp;
}

static void test_dp_backpressure(void)
{
    struct vfw_dp *dp = fresh();
    vsw_qos *q = vfw_dp_qos(dp);
    double rate[2];
    int held;

    printf("data path: two VFs on a 100 Mbit/s wire\n");
    CHECK(q != NULL);
    CHECK(vsw_qos_set_line(q, 100000000ull, 0, NULL) == 0);
    saturate(dp, 110, rate, &held);
    CHECK(within("wire", rate[0] + rate[1], 100e6, 0.02));
    CHECK(within("VF0", rate[0], 50e6, 0.05));
    CHECK(within("VF1", rate[1], 50e6, 0.05));
    CHECK(held);
    for (unsigned vf = 0; vf < 2; vf++) {
        CHECK(vfw_dp_stat(dp, VFW_DP_FN_VF(vf), VFW_STAT_TX_DROP_OTHER) == 0);
        CHECK(vfw_dp_stat(dp, VFW_DP_FN_VF(vf), VFW_STAT_TX_DESC_ERR) == 0);
    }
    vsw_qos_tc_stats st;
    vsw_qos_tc_stats_get(q, 0, &st);
    CHECK(st.dropped_pkts == 0);
    CHECK(st.pauses > 0);
    CHECK(st.sent_pkts == wire_frames);

    /* max_mbps is the leaf's tx_max: VF1 at 20 Mbit/s, VF0 gets the rest */
    struct vfw_dp_vf_cfg c;
    vsw_qos_rate r;
    vfw_dp_get_vf(dp, 1, &c);
    c.max_mbps = 20;
    CHECK(vfw_dp_set_vf(dp, 1, &c) == 0);
    CHECK(vsw_qos_leaf_get(q, VFW_DP_FN_VF(1), &r) == 0);
    CHECK(r.tx_max == 20000000ull);
    saturate(dp, 110, rate, &held);
    CHECK(within("VF1 max_mbps 20", rate[1], 20e6, 0.05));
    CHECK(within("VF0 the rest", rate[0], 80e6, 0.05));

    /* min_mbps is the leaf's tx_share: oversubscription is refused and
     * changes nothing */
    vfw_dp_get_vf(dp, 0, &c);
    c.min_mbps = 70;
    CHECK(vfw_dp_set_vf(dp, 0, &c) == 0);
    vfw_dp_get_vf(dp, 1, &c);
    c.max_mbps = 0;                 /* (a tx_share above tx_max: -EINVAL) */
    c.min_mbps = 20;
    c.vlan = 5;
    CHECK(vfw_dp_set_vf(dp, 1, &c) == 0);
    c.min_mbps = 40;
    c.vlan = 6;
    CHECK(vfw_dp_set_vf(dp, 1, &c) == -ERANGE);
    vfw_dp_get_vf(dp, 1, &c);
    CHECK(c.min_mbps == 20 && c.vlan == 5);
    CHECK(vsw_qos_leaf_get(q, VFW_DP_FN_VF(1), &r) == 0);
    CHECK(r.tx_share == 20000000ull);
    vfw_dp_destroy(dp);
}

/* Carrier loss: what waits is dropped and counted, nothing leaves after. */
static void test_dp_carrier(void)
{
    struct vfw_dp *dp = fresh();
    vsw_qos *q = vfw_dp_qos(dp);
    uint8_t mac[6];
    vsw_qos_tc_stats st;

    printf("data path: carrier loss\n");
    CHECK(vsw_qos_set_line(q, 1000000ull, 0, NULL) == 0);   /* 1 Mbit/s */
    vfw_dp_vf_mac(dp, 0, mac);
    ring_fill(dp, VFW_DP_FN_VF(0), mac, 1000);
    CHECK(wire_frames == 1);                    /* the wire was idle */
    vsw_qos_tc_stats_get(q, 0, &st);
    CHECK(st.backlog_frames == RING_N - 2);
    vfw_dp_set_uplink(dp, false);
    vsw_qos_tc_stats_get(q, 0, &st);
    CHECK(st.backlog_frames == 0);
    CHECK(st.dropped_pkts == RING_N - 2);
    clock_ns += 1000000000ull;
    vfw_dp_uplink_timer(dp);
    host_run(dp);
    CHECK(wire_frames == 1);
    vfw_dp_destroy(dp);

    /* without ops->uplink_timer there is no scheduler: frames leave at once */
    struct vfw_dp_ops plain = ops;
    plain.uplink_timer = NULL;
    dp = vfw_dp_create(&plain, NULL, (const uint8_t[6]){ 2, 0, 0, 0, 7, 0 }, 4);
    CHECK(dp && vfw_dp_qos(dp) == NULL);
    CHECK(!vfw_dp_fn_tx_paused(dp, 1));
    vfw_dp_destroy(dp);
}

/* ---- 2.5: a TX ring per class ------------------------------------------ */

static unsigned txq_tail[VFW_DP_NUM_FN][VFW_TXQ_MAX];

/* Ring q of fn: descriptors at R(fn) + 0x1000 * q, 16 buffers of 2 KiB
 * at B(fn) + 0x8000 (q != 0) */
static uint64_t RQ(unsigned fn, unsigned q) { return R(fn) + 0x1000ull * q; }
static uint64_t BQ(unsigned fn, unsigned q) { return B(fn) + (q ? 0x8000ull : 0); }

static void txq_up(struct vfw_dp *dp, unsigned fn, unsigned q)
{
    wr(dp, fn, VFW_REG_TXQ(q) + VFW_RING_BASE_LO, (uint32_t)RQ(fn, q));
    wr(dp, fn, VFW_REG_TXQ(q) + VFW_RING_BASE_HI, 0);
    wr(dp, fn, VFW_REG_TXQ(q) + VFW_RING_LEN, RING_N);
    wr(dp, fn, VFW_REG_TXQ(q) + VFW_RING_CTRL, VFW_RING_CTRL_ENABLE);
}

/* Post up to `max` IPv4 frames of DSCP dscp on ring q of fn (as many as
 * fit) and ring its doorbell; returns how many. */
static unsigned txq_fill(struct vfw_dp *dp, unsigned fn, unsigned q, const uint8_t src[6],
                         uint16_t len, uint8_t dscp, unsigned max)
{
    unsigned head = rd(dp, fn, VFW_REG_TXQ(q) + VFW_RING_HEAD), n = 0;
    unsigned *tail = &txq_tail[fn][q];

    while (n < max && (*tail + 1) % RING_N != head) {
        unsigned i = *tail;
        uint8_t *fr = at(BQ(fn, q) + 2048 * i), *d = at(RQ(fn, q) + 16 * i);

        memset(fr, 0, len);
        memcpy(fr, (const uint8_t[6]){ 2, 0, 0, 9, 9, 9 }, 6);
        memcpy(fr + 6, src, 6);
        fr[12] = 0x08;
        fr[13] = 0x00;
        fr[14] = 0x45;
        fr[15] = (uint8_t)(dscp << 2);
        fr[16] = (uint8_t)((len - 14) >> 8);
        fr[17] = (uint8_t)(len - 14);
        fr[22] = 64;
        fr[23] = 17;
        memset(d, 0, 16);
        for (int b = 0; b < 8; b++) {
            d[b] = (uint8_t)((BQ(fn, q) + 2048 * i) >> (8 * b));
        }
        d[8] = (uint8_t)len;
        d[9] = (uint8_t)(len >> 8);
        d[10] = VFW_TXD_EOP;
        *tail = (i + 1) % RING_N;
        n++;
    }
    wr(dp, fn, VFW_REG_TXQ(q) + VFW_RING_TAIL, *tail);
    return n;
}

/* VF0 sends bulk (class 0) on ring 0 until its part of class 0 is full and
 * the ring waits; EF frames (DSCP 46 -> priority 7 -> class 7, strict) it
 * then posts on ring 7 are taken at once and go on the wire within one
 * frame time of the bulk frame being sent, while ring 0 still waits; when
 * class 0 drains, ring 0 goes on. Before 2.5 (one pause per function) the
 * EF frames waited behind ~250 bulk frames: a 1 Mbit/s wire's 2 s. */
static void test_dp_class_rings(void)
{
    struct vfw_dp *dp = fresh();
    vsw_qos *q = vfw_dp_qos(dp);
    const unsigned fn = VFW_DP_FN_VF(0);
    struct vfw_dp_dcb dcb;
    vsw_qos_ets e = {0};
    vsw_qos_tc_stats st0, st7;
    uint8_t mac[6];
    unsigned head0, posted = 0;

    printf("data path: a TX ring per class (2.5)\n");
    memset(txq_tail, 0, sizeof(txq_tail));
    CHECK(vsw_qos_set_line(q, 1000000ull, 24, NULL) == 0);   /* 1 Mbit/s */
    for (unsigned t = 0; t < 7; t++) {
        e.tsa[t] = VSW_TSA_ETS;
    }
    e.bw[0] = 100;
    e.tsa[7] = VSW_TSA_STRICT;
    CHECK(vsw_qos_ets_set(q, &e, NULL) == 0);
    vfw_dp_dcb_default(&dcb);
    dcb.trust = VFW_TRUST_DSCP;
    dcb.dscp_mapped = 1ull << 46;
    dcb.dscp_prio[46] = 7;
    CHECK(vfw_dp_set_dcb(dp, &dcb) == 0);
    txq_up(dp, fn, 7);
    vfw_dp_vf_mac(dp, 0, mac);
    /* bulk until class 0 pauses VF0 (no time passes: the wire took one) */
    for (int i = 0; i < 100 && !vsw_qos_paused_tc(q, fn, 0); i++) {
        posted += txq_fill(dp, fn, 0, mac, 1000, 0, RING_N);
    }
    CHECK(vsw_qos_paused_tc(q, fn, 0));
    CHECK(!vsw_qos_paused_tc(q, fn, 7));
    posted += txq_fill(dp, fn, 0, mac, 1000, 0, RING_N);    /* fill it up */
    head0 = rd(dp, fn, VFW_REG_TXQ0 + VFW_RING_HEAD);
    CHECK(head0 != txq_tail[fn][0]);                        /* ring 0 waits */
    vsw_qos_tc_stats_get(q, 0, &st0);
    printf("  class 0: %u frames queued, ring 0 holds %u\n", st0.backlog_frames,
           (txq_tail[fn][0] - head0 + RING_N) % RING_N);
    CHECK(st0.backlog_frames > 200);
    /* EF on ring 7: taken at once, ring 0 still waits */
    CHECK(txq_fill(dp, fn, 7, mac, 200, 46, 3) == 3);
    CHECK(rd(dp, fn, VFW_REG_TXQ(7) + VFW_RING_HEAD) == 3);
    CHECK(rd(dp, fn, VFW_REG_TXQ0 + VFW_RING_HEAD) == head0);
    vsw_qos_tc_stats_get(q, 7, &st7);
    CHECK(st7.queued_pkts == 3);
    /* on the wire next: the bulk frame being sent ends (<= 8.4 ms at 1
     * Mbit/s), then the three EF frames (1.8 ms each) */
    uint64_t t0 = clock_ns;
    for (int i = 0; i < 100 && st7.sent_pkts < 3; i++) {
        clock_ns = uplink_timer_at > clock_ns ? uplink_timer_at : clock_ns + 1000;
        vfw_dp_uplink_timer(dp);
        host_run(dp);
        vsw_qos_tc_stats_get(q, 7, &st7);
    }
    printf("  class 7 sent %llu frames after %.2f ms\n",
           (unsigned long long)st7.sent_pkts, (double)(clock_ns - t0) / 1e6);
    CHECK(st7.sent_pkts == 3);
    CHECK(clock_ns - t0 <= (1024 + 3 * 224) * 8 * 1000ull + 1000);
    CHECK(rd(dp, fn, VFW_REG_TXQ0 + VFW_RING_HEAD) == head0);
    /* class 0 drains to half: resumed, ring 0 goes on */
    for (int i = 0; i < 1000 && vsw_qos_paused_tc(q, fn, 0); i++) {
        clock_ns = uplink_timer_at > clock_ns ? uplink_timer_at : clock_ns + 1000;
        vfw_dp_uplink_timer(dp);
        host_run(dp);
    }
    CHECK(!vsw_qos_paused_tc(q, fn, 0));
    CHECK(rd(dp, fn, VFW_REG_TXQ0 + VFW_RING_HEAD) != head0);
    CHECK(vfw_dp_stat(dp, fn, VFW_STAT_TX_DESC_ERR) == 0);
    vsw_qos_tc_stats_get(q, 0, &st0);
    CHECK(st0.dropped_pkts == 0);

    /* a driver before 2.5, ring 0 only: a head frame of a class that is
     * not paused is taken, one of a paused class waits. One bulk frame a
     * doorbell until class 0 pauses VF1: the ring is then empty. */
    const unsigned fn1 = VFW_DP_FN_VF(1);
    uint8_t mac1[6];

    vfw_dp_vf_mac(dp, 1, mac1);
    for (int i = 0; i < 1000 && !vsw_qos_paused_tc(q, fn1, 0); i++) {
        txq_fill(dp, fn1, 0, mac1, 1000, 0, 1);
    }
    CHECK(vsw_qos_paused_tc(q, fn1, 0));
    head0 = rd(dp, fn1, VFW_REG_TXQ0 + VFW_RING_HEAD);
    CHECK(head0 == txq_tail[fn1][0]);
    CHECK(txq_fill(dp, fn1, 0, mac1, 200, 46, 1) == 1);    /* EF: taken */
    CHECK(rd(dp, fn1, VFW_REG_TXQ0 + VFW_RING_HEAD) == (head0 + 1) % RING_N);
    CHECK(txq_fill(dp, fn1, 0, mac1, 1000, 0, 1) == 1);    /* bulk: waits */
    CHECK(rd(dp, fn1, VFW_REG_TXQ0 + VFW_RING_HEAD) == (head0 + 1) % RING_N);
    CHECK(txq_fill(dp, fn1, 0, mac1, 200, 46, 1) == 1);    /* behind it */
    CHECK(rd(dp, fn1, VFW_REG_TXQ0 + VFW_RING_HEAD) == (head0 + 1) % RING_N);
    vfw_dp_destroy(dp);
}

int main(void)
{
    test_uplink_shares();
    test_dp_backpressure();
    test_dp_carrier();
    test_dp_class_rings();
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
