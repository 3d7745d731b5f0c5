/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_admin_qos.c - the admin queue's QoS commands (hardware interface
 * 2.1, src/dev/admin_qos.c) against the real data path and its uplink
 * scheduler: every command, every error status, and after every failing
 * command the whole QoS state read back with the GET commands unchanged.
 * Classification (trust, app table, prio_tc) is checked end to end: a
 * frame injected as the PF's traffic lands in the class counter the
 * configuration says.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vfw_admin.h"
#include "vfw_dataplane.h"

#include "check.h"

#define NVF 4           /* VFs the device has */

/* ---- a data path with a scheduler, in simulated time ---------------------- */

static uint64_t clock_ns, wire_frames;

static int t_rd(void *c, unsigned fn, uint64_t a, void *b, size_t l)
{
    (void)c; (void)fn; (void)a; (void)b; (void)l;
    return -1;
}

static int t_wr(void *c, unsigned fn, uint64_t a, const void *b, size_t l)
{
    (void)c; (void)fn; (void)a; (void)b; (void)l;
    return -1;
}

static void t_tx(void *c, const uint8_t *f, size_t l) { (void)c; (void)f; (void)l; wire_frames++; }
static uint64_t t_now(void *c) { (void)c; return clock_ns; }
static void t_utimer(void *c, uint64_t w) { (void)c; (void)w; }

static const struct vfw_dp_ops DP_OPS = {
    .dma_read = t_rd, .dma_write = t_wr, .uplink_tx = t_tx, .now_ns = t_now,
    .uplink_timer = t_utimer,
};

static int a_rd(void *o, uint64_t a, void *b, size_t n) { (void)o; (void)a; (void)b; (void)n; return -1; }
static int a_wr(void *o, uint64_t a, const void *b, size_t n) { (void)o; (void)a; (void)b; (void)n; return -1; }

static const uint8_t PF_MAC[6] = { 0x52, 0x54, 0, 0x12, 0x34, 0x56 };
static struct vfw_dp *DP;
static struct vfw_admin A;

static int up(bool with_qos)
{
    struct vfw_admin_ops ops = { .dma_read = a_rd, .dma_write = a_wr };

    DP = vfw_dp_create(&DP_OPS, NULL, PF_MAC, NVF);
    if (!DP) {
        return -1;
    }
    vfw_dp_set_uplink(DP, true);
    ops.qos_dp = with_qos ? DP : NULL;
    if (vfw_admin_init(&A, &ops, NVF)) {
        return -1;
    }
    vfw_admin_set_num_vfs(&A, 2);       /* VF 0 and 1 enabled */
    clock_ns = 1000;
    return 0;
}

static void down(void)
{
    vfw_dp_destroy(DP);
    DP = NULL;
}

/* ---- descriptors ------------------------------------------------------------ */

static struct vfw_aq_desc D;

static struct vfw_aq_desc *cmd(uint16_t op, uint16_t idx)
{
    memset(&D, 0, sizeof(D));
    D.opcode = op;
    D.vf = idx;
    return &D;
}

static uint16_t run(void)
{
    return vfw_admin_exec(&A, (uint8_t *)&D);
}

static uint16_t rate_cmd(uint16_t op, uint16_t idx, uint16_t mask, uint64_t share,
                         uint64_t max, uint32_t prio, uint32_t weight, uint16_t parent)
{
    cmd(op, idx);
    D.u.rate_obj.mask = mask;
    D.u.rate_obj.tx_share = share;
    D.u.rate_obj.tx_max = max;
    D.u.rate_obj.tx_priority = prio;
    D.u.rate_obj.tx_weight = weight;
    D.u.rate_obj.parent = parent;
    return run();
}

static int node_add(uint16_t mask, uint64_t share, uint64_t max, uint16_t parent)
{
    if (rate_cmd(VFW_AQ_OP_QOS_NODE_ADD, 0, mask, share, max, 0, 0, parent)) {
        return -1;
    }
    return D.vf;
}

static uint16_t set_parent(uint16_t op, uint16_t idx, uint16_t parent)
{
    return rate_cmd(op, idx, VFW_QOS_F_PARENT, 0, 0, 0, 0, parent);
}

static struct vfw_aq_qos_rate get_obj(uint16_t op, uint16_t idx, uint16_t *st)
{
    cmd(op, idx);
    *st = run();
    return D.u.rate_obj;
}

static uint16_t set_line(uint64_t bps)
{
    cmd(VFW_AQ_OP_QOS_SET_LINE, 0)->u.line.rate_bps = bps;
    return run();
}

/* *_desc prepare D, *_cmd also run it */
static void app_desc(uint16_t op, uint8_t sel, uint16_t proto, uint8_t prio)
{
    cmd(op, 0);
    D.u.app.selector = sel;
    D.u.app.protocol = proto;
    D.u.app.priority = prio;
}

static uint16_t app_cmd(uint16_t op, uint8_t sel, uint16_t proto, uint8_t prio)
{
    app_desc(op, sel, proto, prio);
    return run();
}

static void ets_desc(const uint8_t tsa[8], const uint8_t bw[8], const uint8_t prio_tc[8])
{
    cmd(VFW_AQ_OP_DCB_SET_ETS, 0);
    memcpy(D.u.ets.tc_tsa, tsa, 8);
    memcpy(D.u.ets.tc_tx_bw, bw, 8);
    memcpy(D.u.ets.prio_tc, prio_tc, 8);
}

static uint16_t ets_cmd(const uint8_t tsa[8], const uint8_t bw[8], const uint8_t prio_tc[8])
{
    ets_desc(tsa, bw, prio_tc);
    return run();
}

/* ---- the whole state, as a PF driver reads it back --------------------------- */

struct snap {
    uint16_t st[40];
    struct vfw_aq_desc d[40];
    struct vfw_vf_cfg vf[NVF];
};

static void snap(struct snap *s)
{
    unsigned n = 0;
    static const uint16_t plain[] = {
        VFW_AQ_OP_QOS_GET_LINE, VFW_AQ_OP_QOS_NODES_GET, VFW_AQ_OP_DCB_GET_ETS,
        VFW_AQ_OP_DCB_GET_MAXRATE, VFW_AQ_OP_DCB_GET_APP,
    };
    uint64_t nodes;

    memset(s, 0, sizeof(*s));
    for (unsigned i = 0; i < sizeof(plain) / sizeof(plain[0]); i++, n++) {
        cmd(plain[i], 0);
        s->st[n] = run();
        s->d[n] = D;
    }
    cmd(VFW_AQ_OP_QOS_NODES_GET, 0);
    run();
    nodes = D.u.nodes.in_use;
    for (unsigned fn = 0; fn <= 2; fn++, n++) {
        cmd(VFW_AQ_OP_QOS_LEAF_GET, (uint16_t)fn);
        s->st[n] = run();
        s->d[n] = D;
    }
    for (unsigned id = 1; id < 64 && n < 40; id++) {
        if (nodes >> id & 1) {
            cmd(VFW_AQ_OP_QOS_NODE_GET, (uint16_t)id);
            s->st[n] = run();
            s->d[n++] = D;
        }
    }
    for (unsigned vf = 0; vf < NVF; vf++) {
        s->vf[vf] = *vfw_admin_vf_cfg(&A, vf);
    }
}

/* Run the prepared descriptor D, expect status `want`, and nothing changed. */
static int fails_alone(uint16_t want)
{
    struct snap before, after;
    struct vfw_aq_desc keep = D;
    uint16_t st;

    snap(&before);
    D = keep;
    st = run();
    if (st != want) {
        fprintf(stderr, "  opcode 0x%04x: status %u, want %u\n", keep.opcode, st, want);
        return -1;
    }
    if (!(D.flags & VFW_AQ_F_ERR) || !(D.flags & VFW_AQ_F_DONE)) {
        return -1;
    }
    snap(&after);
    if (memcmp(&before, &after, sizeof(before))) {
        fprintf(stderr, "  opcode 0x%04x changed the state\n", keep.opcode);
        return -1;
    }
    return 0;
}
#define FAILS(want) CHECK(fails_alone(want) == 0)

/* A frame of the PF to a station on the wire: which class queued it? */
static int class_of(const uint8_t *frame, size_t len)
{
    uint64_t before[8];

    for (unsigned t = 0; t < 8; t++) {
        cmd(VFW_AQ_OP_QOS_GET_TC_STATS, (uint16_t)t);
        if (run()) {
            return -2;
        }
        before[t] = D.u.tc_stats.queued_pkts;
    }
    vfw_dp_fn_inject(DP, VFW_DP_FN_PF, frame, len);
    for (unsigned t = 0; t < 8; t++) {
        cmd(VFW_AQ_OP_QOS_GET_TC_STATS, (uint16_t)t);
        run();
        if (D.u.tc_stats.queued_pkts != before[t]) {
            return D.u.tc_stats.queued_pkts == before[t] + 1 ? (int)t : -3;
        }
    }
    return -1;
}

/* An IPv4 frame from the PF, with an 802.1Q tag of priority pcp if
 * pcp >= 0, with DSCP dscp. */
static size_t pf_frame(uint8_t *f, int pcp, uint8_t dscp)
{
    size_t o = 12;

    memset(f, 0, 128);
    memcpy(f, (const uint8_t[6]){ 0x02, 0, 0, 9, 9, 9 }, 6);
    memcpy(f + 6, PF_MAC, 6);
    if (pcp >= 0) {
        f[o++] = 0x81;
        f[o++] = 0x00;
        f[o++] = (uint8_t)(pcp << 5);
        f[o++] = 0;
    }
    f[o++] = 0x08;
    f[o++] = 0x00;
    f[o] = 0x45;
    f[o + 1] = (uint8_t)(dscp << 2);
    f[o + 3] = 100;                     /* total length */
    f[o + 8] = 64;                      /* ttl */
    f[o + 9] = 17;                      /* udp */
    memcpy(f + o + 12, (const uint8_t[4]){ 10, 0, 0, 1 }, 4);
    memcpy(f + o + 16, (const uint8_t[4]){ 10, 0, 0, 2 }, 4);
    return o + 100;
}

/* ---- tests ---------------------------------------------------------------------- */

static const uint16_t ALL_OPS[] = {
    VFW_AQ_OP_QOS_SET_LINE, VFW_AQ_OP_QOS_NODE_ADD, VFW_AQ_OP_QOS_NODE_DEL,
    VFW_AQ_OP_QOS_NODE_SET, VFW_AQ_OP_QOS_LEAF_SET, VFW_AQ_OP_DCB_SET_ETS,
    VFW_AQ_OP_DCB_SET_MAXRATE, VFW_AQ_OP_DCB_SET_APP, VFW_AQ_OP_DCB_DEL_APP,
    VFW_AQ_OP_DCB_SET_TRUST, VFW_AQ_OP_QOS_GET_LINE, VFW_AQ_OP_QOS_NODE_GET,
    VFW_AQ_OP_QOS_NODES_GET, VFW_AQ_OP_QOS_LEAF_GET, VFW_AQ_OP_DCB_GET_ETS,
    VFW_AQ_OP_DCB_GET_MAXRATE, VFW_AQ_OP_DCB_GET_APP, VFW_AQ_OP_QOS_GET_TC_STATS,
};
#define NOPS (sizeof(ALL_OPS) / sizeof(ALL_OPS[0]))

/* Without a scheduler (no data path, or one without uplink timer) every
 * QoS command is UNSUPPORTED; SET_VF_RATE works as in 2.0. */
static int t_unsupported(void)
{
    struct vfw_dp_ops o = DP_OPS;

    CHECK(up(false) == 0);
    for (unsigned i = 0; i < NOPS; i++) {
        cmd(ALL_OPS[i], 0);
        CHECK(run() == VFW_AQ_S_UNSUPPORTED);
    }
    cmd(VFW_AQ_OP_SET_VF_RATE, 0)->u.rate.min_mbps = 9000;
    CHECK(run() == VFW_AQ_S_OK);
    down();
    o.uplink_timer = NULL;
    DP = vfw_dp_create(&o, NULL, PF_MAC, NVF);
    CHECK(DP != NULL);
    A.ops.qos_dp = DP;
    cmd(VFW_AQ_OP_QOS_GET_LINE, 0);
    CHECK(run() == VFW_AQ_S_UNSUPPORTED);
    down();
    return 0;
}

/* Header rules: rsvd must be 0, the index only where a command has one;
 * opcodes in the gaps are unknown. */
static int t_header(void)
{
    CHECK(up(true) == 0);
    for (unsigned i = 0; i < NOPS; i++) {
        cmd(ALL_OPS[i], 0)->rsvd = 1;
        FAILS(VFW_AQ_S_INVAL);
    }
    cmd(VFW_AQ_OP_QOS_GET_LINE, 1);
    FAILS(VFW_AQ_S_INVAL);
    cmd(VFW_AQ_OP_DCB_SET_TRUST, 3)->u.trust.trust = VFW_TRUST_PCP;
    FAILS(VFW_AQ_S_INVAL);
    cmd(VFW_AQ_OP_QOS_NODE_ADD, 5);
    FAILS(VFW_AQ_S_INVAL);
    cmd(0x020b, 0);
    FAILS(VFW_AQ_S_BAD_OPCODE);
    cmd(0x0289, 0);
    FAILS(VFW_AQ_S_BAD_OPCODE);
    cmd(0x0200, 0);
    FAILS(VFW_AQ_S_BAD_OPCODE);
    down();
    return 0;
}

static int t_line(void)
{
    CHECK(up(true) == 0);
    cmd(VFW_AQ_OP_QOS_GET_LINE, 0);
    CHECK(run() == VFW_AQ_S_OK);
    CHECK(D.u.line.rate_bps == VFW_DP_LINE_DEFAULT);
    CHECK(D.u.line.min_bps == VFW_QOS_LINE_MIN && D.u.line.max_bps == VFW_QOS_LINE_MAX);
    CHECK(D.u.line.overhead == 24 && D.u.line.max_nodes == 63 && D.u.line.max_depth == 4);
    CHECK(D.u.line.num_tc == 8 && D.u.line.max_weight == 1000 && D.u.line.max_prio == 7);
    CHECK(set_line(1000000000ull) == VFW_AQ_S_OK);
    cmd(VFW_AQ_OP_QOS_GET_LINE, 0);
    run();
    CHECK(D.u.line.rate_bps == 1000000000ull);
    CHECK(vfw_dp_line_rate(DP) == 1000000000ull);
    cmd(VFW_AQ_OP_QOS_SET_LINE, 0)->u.line.rate_bps = VFW_QOS_LINE_MIN - 1;
    FAILS(VFW_AQ_S_RANGE);
    cmd(VFW_AQ_OP_QOS_SET_LINE, 0)->u.line.rate_bps = VFW_QOS_LINE_MAX + 1;
    FAILS(VFW_AQ_S_RANGE);
    cmd(VFW_AQ_OP_QOS_SET_LINE, 0)->u.line.rate_bps = 5000;
    D.u.line.overhead = 1;
    FAILS(VFW_AQ_S_INVAL);
    cmd(VFW_AQ_OP_QOS_SET_LINE, 0)->u.line.rate_bps = 5000;
    D.u.line.rsvd[12] = 1;
    FAILS(VFW_AQ_S_INVAL);
    /* guarantees of 600 Mbit/s under the root: a 500 Mbit/s line is too
     * slow for them */
    CHECK(rate_cmd(VFW_AQ_OP_QOS_LEAF_SET, 0, VFW_QOS_F_TX_SHARE, 75000000ull, 0, 0, 0, 0) == 0);
    cmd(VFW_AQ_OP_QOS_SET_LINE, 0)->u.line.rate_bps = 500000000ull;
    FAILS(VFW_AQ_S_OVERSUB);
    /* no line rate: nothing scheduled, the guarantees kept */
    CHECK(set_line(0) == VFW_AQ_S_OK);
    cmd(VFW_AQ_OP_QOS_GET_LINE, 0);
    run();
    CHECK(D.u.line.rate_bps == 0);
    down();
    return 0;
}

/* With a line rate a PF frame is queued in its class, and leaves when the
 * wire allows; with none it leaves at once, unscheduled. */
static int t_line_bypass(void)
{
    uint8_t f[128];
    size_t n;

    CHECK(up(true) == 0);
    n = pf_frame(f, -1, 0);
    wire_frames = 0;
    CHECK(class_of(f, n) == 0);
    CHECK(wire_frames == 1);            /* an idle 10G wire sends at once */
    CHECK(set_line(0) == VFW_AQ_S_OK);
    CHECK(class_of(f, n) == -1);        /* not queued in any class */
    CHECK(wire_frames == 2);
    CHECK(set_line(1000000ull) == VFW_AQ_S_OK);    /* 1 Mbit/s */
    clock_ns += 1000;                   /* the first frame has left the wire */
    CHECK(class_of(f, n) == 0);
    CHECK(class_of(f, n) == 0);
    CHECK(wire_frames == 3);            /* the second waits for the wire */
    CHECK(set_line(0) == VFW_AQ_S_OK);  /* ... and is dropped with it */
    cmd(VFW_AQ_OP_QOS_GET_TC_STATS, 0);
    CHECK(run() == VFW_AQ_S_OK);
    CHECK(D.u.tc_stats.queued_pkts == 3 && D.u.tc_stats.sent_pkts == 2);
    CHECK(D.u.tc_stats.dropped_pkts == 1 && D.u.tc_stats.dropped_bytes == n);
    CHECK(D.u.tc_stats.queued_bytes == 3 * n && D.u.tc_stats.sent_bytes == 2 * n);
    cmd(VFW_AQ_OP_QOS_GET_TC_STATS, 8);
    FAILS(VFW_AQ_S_RANGE);
    down();
    return 0;
}

static int t_nodes(void)
{
    struct vfw_aq_qos_rate r;
    uint16_t st;
    int n1, n2, n3, n4, n5;

    CHECK(up(true) == 0);
    n1 = node_add(VFW_QOS_F_TX_MAX | VFW_QOS_F_TX_WEIGHT, 0, 125000000ull, 0);
    CHECK(n1 == 1);
    n2 = node_add(0, 0, 0, 0);
    CHECK(n2 == 2);
    r = get_obj(VFW_AQ_OP_QOS_NODE_GET, 1, &st);
    CHECK(st == 0 && r.tx_max == 125000000ull && r.tx_weight == 1 && r.parent == 0);
    CHECK(r.tx_share == 0 && r.tx_priority == 0 && r.mask == 0 && r.children == 0);
    cmd(VFW_AQ_OP_QOS_NODES_GET, 0);
    CHECK(run() == 0 && D.u.nodes.in_use == 0x6);
    /* each field by its mask bit, the others kept */
    CHECK(rate_cmd(VFW_AQ_OP_QOS_NODE_SET, 2, VFW_QOS_F_TX_SHARE, 1000, 0, 0, 0, 0) == 0);
    CHECK(rate_cmd(VFW_AQ_OP_QOS_NODE_SET, 2, VFW_QOS_F_TX_MAX, 0, 5000, 0, 0, 0) == 0);
    CHECK(rate_cmd(VFW_AQ_OP_QOS_NODE_SET, 2, VFW_QOS_F_TX_PRIORITY, 0, 0, 7, 0, 0) == 0);
    CHECK(rate_cmd(VFW_AQ_OP_QOS_NODE_SET, 2, VFW_QOS_F_TX_WEIGHT, 0, 0, 0, 1000, 0) == 0);
    CHECK(set_parent(VFW_AQ_OP_QOS_NODE_SET, 2, 1) == 0);
    r = get_obj(VFW_AQ_OP_QOS_NODE_GET, 2, &st);
    CHECK(st == 0 && r.tx_share == 1000 && r.tx_max == 5000 && r.tx_priority == 7);
    CHECK(r.tx_weight == 1000 && r.parent == 1);
    r = get_obj(VFW_AQ_OP_QOS_NODE_GET, 1, &st);
    CHECK(r.children == 1);
    CHECK(rate_cmd(VFW_AQ_OP_QOS_NODE_SET, 2, VFW_QOS_F_TX_WEIGHT, 0, 0, 0, 0, 0) == 0);
    r = get_obj(VFW_AQ_OP_QOS_NODE_GET, 2, &st);
    CHECK(r.tx_weight == 1);            /* devlink's 0 = unset */

    /* refused, each alone and changing nothing */
    rate_cmd(0, 0, 0, 0, 0, 0, 0, 0);
    struct { uint16_t op, idx, mask; uint64_t share, max; uint32_t prio, w; uint16_t par, want; } bad[] = {
        { VFW_AQ_OP_QOS_NODE_SET, 2, 0x20, 0, 0, 0, 0, 0, VFW_AQ_S_INVAL },
        { VFW_AQ_OP_QOS_NODE_SET, 2, 0, 1, 0, 0, 0, 0, VFW_AQ_S_INVAL },
        { VFW_AQ_OP_QOS_NODE_SET, 2, 0, 0, 1, 0, 0, 0, VFW_AQ_S_INVAL },
        { VFW_AQ_OP_QOS_NODE_SET, 2, 0, 0, 0, 1, 0, 0, VFW_AQ_S_INVAL },
        { VFW_AQ_OP_QOS_NODE_SET, 2, 0, 0, 0, 0, 1, 0, VFW_AQ_S_INVAL },
        { VFW_AQ_OP_QOS_NODE_SET, 2, 0, 0, 0, 0, 0, 1, VFW_AQ_S_INVAL },
        { VFW_AQ_OP_QOS_NODE_SET, 2, VFW_QOS_F_TX_PRIORITY, 0, 0, 8, 0, 0, VFW_AQ_S_RANGE },
        { VFW_AQ_OP_QOS_NODE_SET, 2, VFW_QOS_F_TX_WEIGHT, 0, 0, 0, 1001, 0, VFW_AQ_S_RANGE },
        { VFW_AQ_OP_QOS_NODE_SET, 2, VFW_QOS_F_TX_SHARE, 6000, 0, 0, 0, 0, VFW_AQ_S_RANGE },
        { VFW_AQ_OP_QOS_NODE_SET, 2, VFW_QOS_F_TX_MAX, 0, VFW_QOS_LINE_MAX / 8 + 1, 0, 0, 0, VFW_AQ_S_RANGE },
        { VFW_AQ_OP_QOS_NODE_SET, 2, VFW_QOS_F_TX_SHARE, UINT64_MAX, 0, 0, 0, 0, VFW_AQ_S_RANGE },
        { VFW_AQ_OP_QOS_NODE_SET, 2, VFW_QOS_F_PARENT, 0, 0, 0, 0, 64, VFW_AQ_S_RANGE },
        { VFW_AQ_OP_QOS_NODE_SET, 2, VFW_QOS_F_PARENT, 0, 0, 0, 0, 9, VFW_AQ_S_NOENT },
        { VFW_AQ_OP_QOS_NODE_SET, 1, VFW_QOS_F_PARENT, 0, 0, 0, 0, 2, VFW_AQ_S_LOOP },
        { VFW_AQ_OP_QOS_NODE_SET, 2, VFW_QOS_F_PARENT, 0, 0, 0, 0, 2, VFW_AQ_S_LOOP },
        { VFW_AQ_OP_QOS_NODE_SET, 9, VFW_QOS_F_TX_MAX, 0, 1, 0, 0, 0, VFW_AQ_S_NOENT },
        { VFW_AQ_OP_QOS_NODE_SET, 0, VFW_QOS_F_TX_MAX, 0, 1, 0, 0, 0, VFW_AQ_S_NOENT },
        { VFW_AQ_OP_QOS_NODE_ADD, 0, VFW_QOS_F_PARENT, 0, 0, 0, 0, 9, VFW_AQ_S_NOENT },
        { VFW_AQ_OP_QOS_NODE_ADD, 0, VFW_QOS_F_TX_MAX | VFW_QOS_F_TX_SHARE, 2, 1, 0, 0, 0, VFW_AQ_S_RANGE },
        /* node 1 caps at 1 Gbit/s: its children may not be promised more */
        { VFW_AQ_OP_QOS_NODE_SET, 2, VFW_QOS_F_TX_SHARE | VFW_QOS_F_TX_MAX, 125000001ull, 0, 0, 0, 0, VFW_AQ_S_OVERSUB },
        /* and the root: 10 Gbit/s */
        { VFW_AQ_OP_QOS_NODE_ADD, 0, VFW_QOS_F_TX_SHARE, 1250000001ull, 0, 0, 0, 0, VFW_AQ_S_OVERSUB },
    };
    for (unsigned i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        cmd(bad[i].op, bad[i].idx);
        D.u.rate_obj.mask = bad[i].mask;
        D.u.rate_obj.tx_share = bad[i].share;
        D.u.rate_obj.tx_max = bad[i].max;
        D.u.rate_obj.tx_priority = bad[i].prio;
        D.u.rate_obj.tx_weight = bad[i].w;
        D.u.rate_obj.parent = bad[i].par;
        if (fails_alone(bad[i].want)) {
            fprintf(stderr, "  bad[%u]\n", i);
            CHECK(0);
        }
    }
    cmd(VFW_AQ_OP_QOS_NODE_SET, 2)->u.rate_obj.children = 1;
    FAILS(VFW_AQ_S_INVAL);
    cmd(VFW_AQ_OP_QOS_NODE_SET, 2)->u.rate_obj.rsvd[17] = 1;
    FAILS(VFW_AQ_S_INVAL);

    /* depth: 1 <- 2 <- 3 <- 4 is four nodes; a fifth is too deep */
    n3 = node_add(VFW_QOS_F_PARENT, 0, 0, 2);
    n4 = node_add(VFW_QOS_F_PARENT, 0, 0, (uint16_t)n3);
    CHECK(n3 == 3 && n4 == 4);
    cmd(VFW_AQ_OP_QOS_NODE_ADD, 0)->u.rate_obj.mask = VFW_QOS_F_PARENT;
    D.u.rate_obj.parent = 4;
    FAILS(VFW_AQ_S_LOOP);
    /* a leaf under node 4 is fine (leaves do not count) */
    CHECK(set_parent(VFW_AQ_OP_QOS_LEAF_SET, 1, 4) == 0);

    /* delete: not while a parent, not twice, not id 0 or > 63 */
    cmd(VFW_AQ_OP_QOS_NODE_DEL, 4);
    FAILS(VFW_AQ_S_BUSY);
    cmd(VFW_AQ_OP_QOS_NODE_DEL, 1);
    FAILS(VFW_AQ_S_BUSY);
    cmd(VFW_AQ_OP_QOS_NODE_DEL, 4)->u.raw[0] = 1;
    FAILS(VFW_AQ_S_INVAL);
    cmd(VFW_AQ_OP_QOS_NODE_DEL, 0);
    FAILS(VFW_AQ_S_NOENT);
    cmd(VFW_AQ_OP_QOS_NODE_DEL, 64);
    FAILS(VFW_AQ_S_NOENT);
    cmd(VFW_AQ_OP_QOS_NODE_GET, 9);
    FAILS(VFW_AQ_S_NOENT);
    CHECK(set_parent(VFW_AQ_OP_QOS_LEAF_SET, 1, 0) == 0);
    cmd(VFW_AQ_OP_QOS_NODE_DEL, 4);
    CHECK(run() == 0);
    cmd(VFW_AQ_OP_QOS_NODE_DEL, 4);
    FAILS(VFW_AQ_S_NOENT);
    /* ids are reused, lowest first; 63 at most */
    CHECK(node_add(0, 0, 0, 0) == 4);
    for (int i = 5; i <= 63; i++) {
        n5 = node_add(0, 0, 0, 0);
        CHECK(n5 == i);
    }
    cmd(VFW_AQ_OP_QOS_NODE_ADD, 0);
    FAILS(VFW_AQ_S_NOSPC);
    cmd(VFW_AQ_OP_QOS_NODES_GET, 0);
    CHECK(run() == 0 && D.u.nodes.in_use == ~1ull);
    down();
    return 0;
}

static int t_leaves(void)
{
    struct vfw_aq_qos_rate r;
    const struct vfw_vf_cfg *c = vfw_admin_vf_cfg(&A, 1);
    uint32_t gen;
    uint16_t st;
    int n;

    CHECK(up(true) == 0);
    c = vfw_admin_vf_cfg(&A, 1);
    /* the PF's leaf: any bytes/s */
    CHECK(rate_cmd(VFW_AQ_OP_QOS_LEAF_SET, 0, VFW_QOS_F_ALL, 1000, 2001, 3, 4, 0) == 0);
    r = get_obj(VFW_AQ_OP_QOS_LEAF_GET, 0, &st);
    CHECK(st == 0 && r.tx_share == 1000 && r.tx_max == 2001 && r.tx_priority == 3);
    CHECK(r.tx_weight == 4 && r.parent == 0);
    /* a VF's leaf is its ip link rate as well */
    gen = c->gen;
    CHECK(rate_cmd(VFW_AQ_OP_QOS_LEAF_SET, 2, VFW_QOS_F_TX_SHARE | VFW_QOS_F_TX_MAX,
                   12500000ull, 125000000ull, 0, 0, 0) == 0);
    CHECK(c->min_rate == 100 && c->max_rate == 1000 && c->gen == gen + 1);
    cmd(VFW_AQ_OP_GET_VF_CONFIG, 1);
    CHECK(run() == 0 && D.u.cfg.min_mbps == 100 && D.u.cfg.max_mbps == 1000);
    /* ... and the other way round */
    cmd(VFW_AQ_OP_SET_VF_RATE, 1)->u.rate.min_mbps = 200;
    D.u.rate.max_mbps = 300;
    CHECK(run() == 0);
    r = get_obj(VFW_AQ_OP_QOS_LEAF_GET, 2, &st);
    CHECK(st == 0 && r.tx_share == 25000000ull && r.tx_max == 37500000ull);
    /* a parent and priority of the leaf stay when ip link sets rates */
    n = node_add(0, 0, 0, 0);
    CHECK(set_parent(VFW_AQ_OP_QOS_LEAF_SET, 2, (uint16_t)n) == 0);
    cmd(VFW_AQ_OP_SET_VF_RATE, 1)->u.rate.max_mbps = 400;
    CHECK(run() == 0);
    r = get_obj(VFW_AQ_OP_QOS_LEAF_GET, 2, &st);
    CHECK(r.parent == n && r.tx_share == 0 && r.tx_max == 50000000ull);
    r = get_obj(VFW_AQ_OP_QOS_NODE_GET, (uint16_t)n, &st);
    CHECK(r.children == 1);

    /* refused */
    cmd(VFW_AQ_OP_QOS_LEAF_SET, 3)->u.rate_obj.mask = VFW_QOS_F_TX_MAX;   /* VF 2: not enabled */
    D.u.rate_obj.tx_max = 125000;
    FAILS(VFW_AQ_S_BAD_VF);
    cmd(VFW_AQ_OP_QOS_LEAF_GET, 3);
    FAILS(VFW_AQ_S_BAD_VF);
    cmd(VFW_AQ_OP_QOS_LEAF_GET, 1 + NVF);
    FAILS(VFW_AQ_S_BAD_VF);
    cmd(VFW_AQ_OP_QOS_LEAF_GET, 0xffff);
    FAILS(VFW_AQ_S_BAD_VF);
    cmd(VFW_AQ_OP_QOS_LEAF_SET, 2)->u.rate_obj.mask = VFW_QOS_F_TX_MAX;   /* not whole Mbit/s */
    D.u.rate_obj.tx_max = 125001;
    FAILS(VFW_AQ_S_RANGE);
    cmd(VFW_AQ_OP_QOS_LEAF_SET, 2)->u.rate_obj.mask = VFW_QOS_F_TX_MAX;   /* > 10000 Mbit/s */
    D.u.rate_obj.tx_max = 125000ull * 10001;
    FAILS(VFW_AQ_S_RANGE);
    cmd(VFW_AQ_OP_QOS_LEAF_SET, 2)->u.rate_obj.mask = VFW_QOS_F_PARENT;
    D.u.rate_obj.parent = 40;
    FAILS(VFW_AQ_S_NOENT);
    /* guarantees: 10 Gbit/s line, VF 0 promised 6, VF 1 cannot get 5 */
    cmd(VFW_AQ_OP_SET_VF_RATE, 0)->u.rate.min_mbps = 6000;
    CHECK(run() == 0);
    cmd(VFW_AQ_OP_SET_VF_RATE, 1)->u.rate.min_mbps = 5000;
    FAILS(VFW_AQ_S_OVERSUB);
    cmd(VFW_AQ_OP_QOS_LEAF_SET, 2)->u.rate_obj.mask = VFW_QOS_F_TX_SHARE;
    D.u.rate_obj.tx_share = 125000ull * 5000;
    FAILS(VFW_AQ_S_RANGE);              /* above its tx_max (400) */
    cmd(VFW_AQ_OP_QOS_LEAF_SET, 2)->u.rate_obj.mask = VFW_QOS_F_TX_SHARE | VFW_QOS_F_TX_MAX;
    D.u.rate_obj.tx_share = 125000ull * 5000;
    FAILS(VFW_AQ_S_OVERSUB);
    cmd(VFW_AQ_OP_QOS_LEAF_SET, 0)->u.rate_obj.mask = VFW_QOS_F_TX_SHARE | VFW_QOS_F_TX_MAX;
    D.u.rate_obj.tx_share = 125000ull * 4001;
    FAILS(VFW_AQ_S_OVERSUB);
    /* a node capped at 100 Mbit/s cannot take VF 0 (6 Gbit/s promised) */
    CHECK(rate_cmd(VFW_AQ_OP_QOS_NODE_SET, (uint16_t)n, VFW_QOS_F_TX_MAX, 0, 12500000ull, 0, 0, 0) == 0);
    CHECK(set_parent(VFW_AQ_OP_QOS_LEAF_SET, 2, 0) == 0);
    cmd(VFW_AQ_OP_QOS_LEAF_SET, 1)->u.rate_obj.mask = VFW_QOS_F_PARENT;
    D.u.rate_obj.parent = (uint16_t)n;
    FAILS(VFW_AQ_S_OVERSUB);

    /* a VF that goes away: its leaf back under the root, the node free */
    CHECK(set_parent(VFW_AQ_OP_QOS_LEAF_SET, 2, (uint16_t)n) == 0);
    cmd(VFW_AQ_OP_QOS_NODE_DEL, (uint16_t)n);
    CHECK(run() == VFW_AQ_S_BUSY);
    vfw_admin_set_num_vfs(&A, 1);
    cmd(VFW_AQ_OP_QOS_LEAF_GET, 2);
    CHECK(run() == VFW_AQ_S_BAD_VF);
    cmd(VFW_AQ_OP_QOS_NODE_DEL, (uint16_t)n);
    CHECK(run() == 0);
    vfw_admin_set_num_vfs(&A, 2);
    r = get_obj(VFW_AQ_OP_QOS_LEAF_GET, 2, &st);
    CHECK(st == 0 && r.parent == 0 && r.tx_share == 0 && r.tx_max == 0 && r.tx_weight == 1);
    down();
    return 0;
}

static int t_ets(void)
{
    static const uint8_t tsa[8] = { 2, 2, 0, 0, 2, 2, 2, 2 };
    static const uint8_t bw[8] = { 70, 30, 5, 0, 0, 0, 0, 0 };
    static const uint8_t ptc[8] = { 1, 0, 2, 3, 4, 5, 6, 7 };
    uint8_t x[8];

    CHECK(up(true) == 0);
    cmd(VFW_AQ_OP_DCB_GET_ETS, 0);
    CHECK(run() == 0);
    for (unsigned t = 0; t < 8; t++) {
        CHECK(D.u.ets.tc_tsa[t] == VFW_TSA_ETS && D.u.ets.prio_tc[t] == t);
        CHECK(D.u.ets.tc_tx_bw[t] == (t < 4 ? 12 : 13));
    }
    CHECK(ets_cmd(tsa, bw, ptc) == 0);
    cmd(VFW_AQ_OP_DCB_GET_ETS, 0);
    CHECK(run() == 0);
    CHECK(!memcmp(D.u.ets.tc_tsa, tsa, 8) && !memcmp(D.u.ets.prio_tc, ptc, 8));
    CHECK(D.u.ets.tc_tx_bw[0] == 70 && D.u.ets.tc_tx_bw[1] == 30);
    CHECK(D.u.ets.tc_tx_bw[2] == 0);    /* a strict class's share is ignored */

    memcpy(x, bw, 8);
    x[1] = 31;
    ets_desc(tsa, x, ptc);
    FAILS(VFW_AQ_S_RANGE);              /* 101% */
    x[1] = 101;
    ets_desc(tsa, x, ptc);
    FAILS(VFW_AQ_S_RANGE);
    memcpy(x, tsa, 8);
    x[3] = VFW_TSA_CBS;
    ets_desc(x, bw, ptc);
    FAILS(VFW_AQ_S_UNSUPPORTED);
    x[3] = VFW_TSA_VENDOR;
    ets_desc(x, bw, ptc);
    FAILS(VFW_AQ_S_UNSUPPORTED);
    x[3] = 3;
    ets_desc(x, bw, ptc);
    FAILS(VFW_AQ_S_RANGE);
    memcpy(x, ptc, 8);
    x[7] = 8;
    ets_desc(tsa, bw, x);
    FAILS(VFW_AQ_S_RANGE);
    ets_desc(tsa, bw, ptc);
    D.u.ets.rsvd[23] = 1;
    FAILS(VFW_AQ_S_INVAL);
    /* all strict is fine (no ETS class, no sum) */
    memset(x, 0, 8);
    CHECK(ets_cmd(x, x, ptc) == 0);

    /* maxrate */
    cmd(VFW_AQ_OP_DCB_SET_MAXRATE, 0)->u.maxrate.tc_maxrate_kbps[2] = 100000;
    D.u.maxrate.tc_maxrate_kbps[7] = (uint32_t)(VFW_QOS_LINE_MAX / 1000);
    CHECK(run() == 0);
    cmd(VFW_AQ_OP_DCB_GET_MAXRATE, 0);
    CHECK(run() == 0 && D.u.maxrate.tc_maxrate_kbps[2] == 100000);
    CHECK(D.u.maxrate.tc_maxrate_kbps[7] == VFW_QOS_LINE_MAX / 1000);
    CHECK(D.u.maxrate.tc_maxrate_kbps[0] == 0);
    cmd(VFW_AQ_OP_DCB_SET_MAXRATE, 0)->u.maxrate.tc_maxrate_kbps[1] =
        (uint32_t)(VFW_QOS_LINE_MAX / 1000 + 1);
    FAILS(VFW_AQ_S_RANGE);
    cmd(VFW_AQ_OP_DCB_SET_MAXRATE, 0)->u.maxrate.tc_maxrate_kbps[1] = UINT32_MAX;
    FAILS(VFW_AQ_S_RANGE);
    cmd(VFW_AQ_OP_DCB_SET_MAXRATE, 0)->u.maxrate.rsvd[0] = 1;
    FAILS(VFW_AQ_S_INVAL);
    /* ETS keeps the maxrates, maxrate keeps the classes */
    CHECK(ets_cmd(tsa, bw, ptc) == 0);
    cmd(VFW_AQ_OP_DCB_GET_MAXRATE, 0);
    CHECK(run() == 0 && D.u.maxrate.tc_maxrate_kbps[2] == 100000);
    down();
    return 0;
}

/* trust, app table, default priority and prio_tc decide a frame's class */
static int t_classify(void)
{
    static const uint8_t tsa[8] = { 2, 2, 2, 2, 2, 2, 2, 2 };
    static const uint8_t bw[8] = { 30, 10, 10, 10, 10, 10, 10, 10 };
    static const uint8_t ptc[8] = { 6, 7, 5, 4, 3, 2, 1, 0 };
    uint8_t f[128];
    size_t n;

    CHECK(up(true) == 0);
    /* defaults: trust pcp, priority p in class p, untagged in 0 */
    cmd(VFW_AQ_OP_DCB_GET_APP, 0);
    CHECK(run() == 0 && D.u.apps.trust == VFW_TRUST_PCP && D.u.apps.flags == 0);
    CHECK(D.u.apps.dscp_mapped == 0 && D.u.apps.default_prio == 0);
    n = pf_frame(f, 5, 46);
    CHECK(class_of(f, n) == 5);
    n = pf_frame(f, -1, 46);
    CHECK(class_of(f, n) == 0);
    /* the priority map moves priorities to other classes */
    CHECK(ets_cmd(tsa, bw, ptc) == 0);
    n = pf_frame(f, 5, 46);
    CHECK(class_of(f, n) == 2);
    /* a default priority for untagged frames */
    CHECK(app_cmd(VFW_AQ_OP_DCB_SET_APP, VFW_APP_SEL_ETHERTYPE, 0, 3) == 0);
    n = pf_frame(f, -1, 46);
    CHECK(class_of(f, n) == 4);
    /* trust dscp: the app table, unmapped DSCPs get the default */
    CHECK(app_cmd(VFW_AQ_OP_DCB_SET_APP, VFW_APP_SEL_DSCP, 46, 1) == 0);
    CHECK(app_cmd(VFW_AQ_OP_DCB_SET_APP, VFW_APP_SEL_DSCP, 63, 7) == 0);
    cmd(VFW_AQ_OP_DCB_SET_TRUST, 0)->u.trust.trust = VFW_TRUST_DSCP;
    CHECK(run() == 0);
    n = pf_frame(f, 5, 46);
    CHECK(class_of(f, n) == 7);         /* priority 1 */
    n = pf_frame(f, 5, 10);
    CHECK(class_of(f, n) == 4);         /* default 3 */
    cmd(VFW_AQ_OP_DCB_GET_APP, 0);
    CHECK(run() == 0 && D.u.apps.trust == VFW_TRUST_DSCP);
    CHECK(D.u.apps.flags == VFW_APP_F_DEFAULT && D.u.apps.default_prio == 3);
    CHECK(D.u.apps.dscp_mapped == (1ull << 46 | 1ull << 63));
    CHECK(D.u.apps.dscp_prio[23] == 0x01 && D.u.apps.dscp_prio[31] == 0x70);
    /* trust none: everything at the default priority */
    cmd(VFW_AQ_OP_DCB_SET_TRUST, 0)->u.trust.trust = VFW_TRUST_NONE;
    CHECK(run() == 0);
    n = pf_frame(f, 5, 46);
    CHECK(class_of(f, n) == 4);

    /* refused */
    app_desc(VFW_AQ_OP_DCB_DEL_APP, VFW_APP_SEL_DSCP, 46, 2);
    FAILS(VFW_AQ_S_NOENT);              /* mapped to 1, not 2 */
    app_desc(VFW_AQ_OP_DCB_DEL_APP, VFW_APP_SEL_DSCP, 45, 0);
    FAILS(VFW_AQ_S_NOENT);
    app_desc(VFW_AQ_OP_DCB_DEL_APP, VFW_APP_SEL_ETHERTYPE, 0, 4);
    FAILS(VFW_AQ_S_NOENT);
    app_desc(VFW_AQ_OP_DCB_SET_APP, VFW_APP_SEL_DSCP, 64, 1);
    FAILS(VFW_AQ_S_RANGE);
    app_desc(VFW_AQ_OP_DCB_SET_APP, VFW_APP_SEL_DSCP, 1, 8);
    FAILS(VFW_AQ_S_RANGE);
    app_desc(VFW_AQ_OP_DCB_SET_APP, VFW_APP_SEL_ETHERTYPE, 0x8906, 3);
    FAILS(VFW_AQ_S_UNSUPPORTED);
    app_desc(VFW_AQ_OP_DCB_SET_APP, 2, 4791, 3);     /* TCP port */
    FAILS(VFW_AQ_S_UNSUPPORTED);
    app_desc(VFW_AQ_OP_DCB_SET_APP, 0, 0, 3);
    FAILS(VFW_AQ_S_UNSUPPORTED);
    app_desc(VFW_AQ_OP_DCB_SET_APP, VFW_APP_SEL_DSCP, 1, 1);
    D.u.app.rsvd[43] = 1;
    FAILS(VFW_AQ_S_INVAL);
    cmd(VFW_AQ_OP_DCB_SET_TRUST, 0)->u.trust.trust = 3;
    FAILS(VFW_AQ_S_RANGE);
    cmd(VFW_AQ_OP_DCB_SET_TRUST, 0)->u.trust.rsvd[0] = 1;
    FAILS(VFW_AQ_S_INVAL);

    /* deletes */
    CHECK(app_cmd(VFW_AQ_OP_DCB_DEL_APP, VFW_APP_SEL_DSCP, 46, 1) == 0);
    CHECK(app_cmd(VFW_AQ_OP_DCB_DEL_APP, VFW_APP_SEL_ETHERTYPE, 0, 3) == 0);
    cmd(VFW_AQ_OP_DCB_GET_APP, 0);
    CHECK(run() == 0 && D.u.apps.flags == 0 && D.u.apps.default_prio == 0);
    CHECK(D.u.apps.dscp_mapped == 1ull << 63 && D.u.apps.dscp_prio[23] == 0);
    cmd(VFW_AQ_OP_DCB_SET_TRUST, 0)->u.trust.trust = VFW_TRUST_DSCP;
    CHECK(run() == 0);
    n = pf_frame(f, 5, 46);
    CHECK(class_of(f, n) == 6);         /* priority 0 */
    down();
    return 0;
}

/* A VF with a port VLAN priority: its untagged frames get that priority
 * (trust pcp). The VF's frames go through its port, so check the switch's
 * classification directly. */
static int t_port_vlan_priority(void)
{
    CHECK(up(true) == 0);
    cmd(VFW_AQ_OP_SET_VF_VLAN, 0)->u.vlan.vid = 10;
    D.u.vlan.qos = 6;
    CHECK(run() == 0);
    {
        struct vfw_dp_vf_cfg c;

        CHECK(vfw_dp_get_vf(DP, 0, &c) == 0);
        c.vlan = 10;
        c.qos = 6;
        CHECK(vfw_dp_set_vf(DP, 0, &c) == 0);   /* as the glue's sync does */
    }
    {
        uint8_t f[128], mac[6];
        size_t n = pf_frame(f, -1, 0);
        uint64_t q6;

        vfw_dp_vf_mac(DP, 0, mac);
        memcpy(f + 6, mac, 6);
        cmd(VFW_AQ_OP_QOS_GET_TC_STATS, 6);
        run();
        q6 = D.u.tc_stats.queued_pkts;
        vfw_dp_fn_inject(DP, VFW_DP_FN_VF(0), f, n);
        cmd(VFW_AQ_OP_QOS_GET_TC_STATS, 6);
        run();
        CHECK(D.u.tc_stats.queued_pkts == q6 + 1);
    }
    down();
    return 0;
}

/* A PF reset (the data path's) restores every QoS default. */
static int t_reset(void)
{
    struct snap fresh, now;
    static const uint8_t tsa[8] = { 0 };
    static const uint8_t ptc[8] = { 7, 7, 7, 7, 7, 7, 7, 7 };

    CHECK(up(true) == 0);
    snap(&fresh);
    CHECK(set_line(2000000000ull) == 0);
    CHECK(node_add(VFW_QOS_F_TX_MAX, 0, 1000, 0) == 1);
    CHECK(set_parent(VFW_AQ_OP_QOS_LEAF_SET, 1, 1) == 0);
    CHECK(ets_cmd(tsa, tsa, ptc) == 0);
    CHECK(app_cmd(VFW_AQ_OP_DCB_SET_APP, VFW_APP_SEL_DSCP, 3, 3) == 0);
    cmd(VFW_AQ_OP_DCB_SET_MAXRATE, 0)->u.maxrate.tc_maxrate_kbps[0] = 5;
    CHECK(run() == 0);
    snap(&now);
    CHECK(memcmp(&fresh, &now, sizeof(now)) != 0);
    vfw_dp_reset(DP);
    vfw_admin_reset(&A);
    vfw_admin_set_num_vfs(&A, 2);
    snap(&now);
    CHECK(memcmp(fresh.d, now.d, sizeof(now.d)) == 0);
    {   /* and the ports classify by the defaults again */
        uint8_t f[128];
        size_t n = pf_frame(f, 5, 0);

        CHECK(class_of(f, n) == 5);
    }
    /* the device property's line rate is the one a reset restores */
    CHECK(vfw_dp_set_line_default(DP, 0) == 0);
    CHECK(set_line(3000000ull) == 0);
    vfw_dp_reset(DP);
    CHECK(vfw_dp_line_rate(DP) == 0);
    down();
    return 0;
}

/* The descriptor comes back with DONE, ERR exactly on failure, the
 * status, and the index field untouched by a failed NODE_ADD. */
static int t_status_flags(void)
{
    CHECK(up(true) == 0);
    cmd(VFW_AQ_OP_QOS_NODE_ADD, 0);
    CHECK(run() == 0 && D.vf == 1 && D.flags == VFW_AQ_F_DONE && D.status == 0);
    cmd(VFW_AQ_OP_QOS_NODE_ADD, 0)->u.rate_obj.mask = 0x40;
    CHECK(run() == VFW_AQ_S_INVAL && D.vf == 0 && D.status == VFW_AQ_S_INVAL);
    CHECK(D.flags == (VFW_AQ_F_DONE | VFW_AQ_F_ERR));
    down();
    return 0;
}

static void after_fail(void)
{
    down();
}

int main(int argc, char **argv)
{
    static const struct unit_test tests[] = {
        { "unsupported", t_unsupported },
        { "header", t_header },
        { "line", t_line },
        { "line_bypass", t_line_bypass },
        { "nodes", t_nodes },
        { "leaves", t_leaves },
        { "ets_maxrate", t_ets },
        { "classify", t_classify },
        { "port_vlan_priority", t_port_vlan_priority },
        { "reset", t_reset },
        { "status_flags", t_status_flags },
    };

    return run_tests("admin_qos", tests, sizeof(tests) / sizeof(tests[0]), argc, argv,
                     after_fail);
}
