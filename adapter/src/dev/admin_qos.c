/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * admin_qos.c - the admin queue's QoS commands (hardware interface 2.1,
 * include/vfwarp/vfwarp_admin.h, docs/qos.md): the uplink's line rate, the
 * devlink rate tree (a leaf per function, nodes), DCB (ETS, maxrate, app
 * table, trust) and the per-class counters.
 *
 * Stateless: every value lives in the data path (vfw_dataplane.h) and its
 * uplink scheduler (vswitch.h "Link QoS"), which validates a change as a
 * whole before installing it. Here each descriptor is checked field by
 * field (reserved bytes, units, ranges) and translated; a command that
 * fails leaves the device as it was: the scheduler refuses as a whole, and
 * where two parts change (a VF's leaf and its `ip link` rates, ETS classes
 * and the priority map) the second cannot fail once the first succeeded,
 * or the first is put back.
 */
#include <errno.h>
#include <string.h>

#include "admin_internal.h"
#include "vfw_dataplane.h"
#include "vswitch.h"

/* The hardware interface states the scheduler's limits. */
_Static_assert(VFW_QOS_LINE_MIN == VSW_QOS_MIN_RATE, "line min");
_Static_assert(VFW_QOS_LINE_MAX == VSW_QOS_MAX_RATE, "line max");
_Static_assert(VFW_QOS_MAX_NODES == VSW_QOS_MAX_NODES, "nodes");
_Static_assert(VFW_QOS_MAX_DEPTH == VSW_QOS_MAX_DEPTH, "depth");
_Static_assert(VFW_QOS_MAX_PRIO == VSW_QOS_MAX_PRIO, "prio");
_Static_assert(VFW_QOS_MAX_WEIGHT == VSW_QOS_MAX_WEIGHT, "weight");
_Static_assert(VFW_QOS_NUM_TC == VSW_NUM_TC, "classes");

bool admin_qos_opcode(uint16_t op)
{
    return (op >= VFW_AQ_OP_QOS_SET_LINE && op <= VFW_AQ_OP_DCB_SET_TRUST) ||
           (op >= VFW_AQ_OP_QOS_GET_LINE && op <= VFW_AQ_OP_QOS_GET_TC_STATS);
}

static vsw_qos *sched(const struct vfw_admin *a)
{
    return a->ops.qos_dp ? vfw_dp_qos(a->ops.qos_dp) : NULL;
}

/* The scheduler's refusals as statuses. */
static uint16_t st_of(int rc)
{
    switch (rc) {
    case 0:
        return VFW_AQ_S_OK;
    case -ENOENT:
        return VFW_AQ_S_NOENT;
    case -EBUSY:
        return VFW_AQ_S_BUSY;
    case -ELOOP:
        return VFW_AQ_S_LOOP;
    case -ERANGE:
        return VFW_AQ_S_OVERSUB;
    default:
        return VFW_AQ_S_RANGE;
    }
}

/* ---- line ----------------------------------------------------------------- */

static uint16_t set_line(struct vfw_admin *a, const uint8_t *d)
{
    uint64_t bps = vfw_ld_le64(d + P(vfw_aq_qos_line, rate_bps));

    if (!vfw_all_zero(d + P(vfw_aq_qos_line, min_bps),
                  D_U_LEN - offsetof(struct vfw_aq_qos_line, min_bps))) {
        return VFW_AQ_S_INVAL;
    }
    if (bps && (bps < VFW_QOS_LINE_MIN || bps > VFW_QOS_LINE_MAX)) {
        return VFW_AQ_S_RANGE;
    }
    return st_of(vfw_dp_set_line_rate(a->ops.qos_dp, bps, NULL));
}

static uint16_t get_line(struct vfw_admin *a, uint8_t *d)
{
    uint64_t rate;
    uint32_t overhead;

    vsw_qos_get_line(sched(a), &rate, &overhead);
    memset(d + D_U, 0, D_U_LEN);
    vfw_st_le64(d + P(vfw_aq_qos_line, rate_bps), vfw_dp_line_rate(a->ops.qos_dp));
    vfw_st_le64(d + P(vfw_aq_qos_line, min_bps), VFW_QOS_LINE_MIN);
    vfw_st_le64(d + P(vfw_aq_qos_line, max_bps), VFW_QOS_LINE_MAX);
    vfw_st_le32(d + P(vfw_aq_qos_line, overhead), overhead);
    vfw_st_le16(d + P(vfw_aq_qos_line, max_nodes), VFW_QOS_MAX_NODES);
    d[P(vfw_aq_qos_line, max_depth)] = VFW_QOS_MAX_DEPTH;
    d[P(vfw_aq_qos_line, num_tc)] = VFW_QOS_NUM_TC;
    vfw_st_le16(d + P(vfw_aq_qos_line, max_weight), VFW_QOS_MAX_WEIGHT);
    d[P(vfw_aq_qos_line, max_prio)] = VFW_QOS_MAX_PRIO;
    return VFW_AQ_S_OK;
}

/* ---- rate objects (devlink rate leaves and nodes) -------------------------- */

/* Apply the masked fields of descriptor d onto *r (bits/s inside). */
static uint16_t rate_merge(const uint8_t *d, vsw_qos_rate *r)
{
    uint64_t share = vfw_ld_le64(d + P(vfw_aq_qos_rate, tx_share));
    uint64_t max = vfw_ld_le64(d + P(vfw_aq_qos_rate, tx_max));
    uint32_t prio = vfw_ld_le32(d + P(vfw_aq_qos_rate, tx_priority));
    uint32_t weight = vfw_ld_le32(d + P(vfw_aq_qos_rate, tx_weight));
    uint16_t parent = vfw_ld_le16(d + P(vfw_aq_qos_rate, parent));
    uint16_t mask = vfw_ld_le16(d + P(vfw_aq_qos_rate, mask));

    /* unmasked fields, children and the rest must be zero */
    if ((mask & ~VFW_QOS_F_ALL) ||
        (!(mask & VFW_QOS_F_TX_SHARE) && share) ||
        (!(mask & VFW_QOS_F_TX_MAX) && max) ||
        (!(mask & VFW_QOS_F_TX_PRIORITY) && prio) ||
        (!(mask & VFW_QOS_F_TX_WEIGHT) && weight) ||
        (!(mask & VFW_QOS_F_PARENT) && parent) ||
        !vfw_all_zero(d + P(vfw_aq_qos_rate, children),
                  D_U_LEN - offsetof(struct vfw_aq_qos_rate, children))) {
        return VFW_AQ_S_INVAL;
    }
    if (share > VFW_QOS_LINE_MAX / 8 || max > VFW_QOS_LINE_MAX / 8 ||
        prio > VFW_QOS_MAX_PRIO || weight > VFW_QOS_MAX_WEIGHT ||
        parent > VFW_QOS_MAX_NODES) {
        return VFW_AQ_S_RANGE;
    }
    if (mask & VFW_QOS_F_TX_SHARE) {
        r->tx_share = share * 8;
    }
    if (mask & VFW_QOS_F_TX_MAX) {
        r->tx_max = max * 8;
    }
    if (mask & VFW_QOS_F_TX_PRIORITY) {
        r->tx_priority = prio;
    }
    if (mask & VFW_QOS_F_TX_WEIGHT) {
        r->tx_weight = weight ? weight : 1;    /* devlink's 0 = unset */
    }
    if (mask & VFW_QOS_F_PARENT) {
        r->parent = parent;
    }
    return VFW_AQ_S_OK;
}

static void rate_store(uint8_t *d, const vsw_qos_rate *r, uint16_t children)
{
    memset(d + D_U, 0, D_U_LEN);
    vfw_st_le64(d + P(vfw_aq_qos_rate, tx_share), r->tx_share / 8);
    vfw_st_le64(d + P(vfw_aq_qos_rate, tx_max), r->tx_max / 8);
    vfw_st_le32(d + P(vfw_aq_qos_rate, tx_priority), r->tx_priority);
    vfw_st_le32(d + P(vfw_aq_qos_rate, tx_weight), r->tx_weight);
    vfw_st_le16(d + P(vfw_aq_qos_rate, parent), r->parent);
    vfw_st_le16(d + P(vfw_aq_qos_rate, children), children);
}

/* Leaves and nodes whose parent is node `id` (bounded by the object count). */
static uint16_t children_of(const struct vfw_admin *a, unsigned id)
{
    vsw_qos *q = sched(a);
    vsw_qos_rate r;
    uint16_t n = 0;

    for (unsigned fn = 0; fn <= a->total_vfs; fn++) {
        n += !vsw_qos_leaf_get(q, fn, &r) && r.parent == id;
    }
    for (unsigned x = 1; x <= VFW_QOS_MAX_NODES; x++) {
        n += !vsw_qos_node_get(q, x, &r) && r.parent == id;
    }
    return n;
}

/* Function fn (0 = PF, 1 + n = VF n) exists now? */
static bool fn_ok(const struct vfw_admin *a, unsigned fn)
{
    return fn == 0 || (fn - 1 < a->num_vfs && fn - 1 < a->total_vfs);
}

/* A VF's leaf is also its `ip link` min/max_tx_rate (Mbit/s). */
static bool vf_rates_ok(const vsw_qos_rate *r)
{
    const uint64_t lim = (uint64_t)VFW_UPLINK_SPEED_MBPS * 1000000u;

    return r->tx_share % 1000000u == 0 && r->tx_max % 1000000u == 0 &&
           r->tx_share <= lim && r->tx_max <= lim;
}

static uint16_t leaf_set(struct vfw_admin *a, unsigned fn, const uint8_t *d)
{
    vsw_qos *q = sched(a);
    vsw_qos_rate r;
    uint16_t st;
    int rc;

    if (!fn_ok(a, fn)) {
        return VFW_AQ_S_BAD_VF;
    }
    if (vsw_qos_leaf_get(q, fn, &r)) {
        return VFW_AQ_S_BAD_VF;
    }
    st = rate_merge(d, &r);
    if (st != VFW_AQ_S_OK) {
        return st;
    }
    if (fn && !vf_rates_ok(&r)) {
        return VFW_AQ_S_RANGE;
    }
    rc = vsw_qos_leaf_set(q, fn, &r, NULL);
    if (rc) {
        return st_of(rc);
    }
    if (fn) {   /* the same rates, as `ip link` and GET_VF_CONFIG see them */
        struct vfw_vf_cfg n = a->vf[fn - 1];

        n.min_rate = (uint32_t)(r.tx_share / 1000000u);
        n.max_rate = (uint32_t)(r.tx_max / 1000000u);
        admin_vf_commit(a, (uint16_t)(fn - 1), &n);
    }
    return VFW_AQ_S_OK;
}

static uint16_t leaf_get(struct vfw_admin *a, unsigned fn, uint8_t *d)
{
    vsw_qos_rate r;

    if (!fn_ok(a, fn) || vsw_qos_leaf_get(sched(a), fn, &r)) {
        return VFW_AQ_S_BAD_VF;
    }
    rate_store(d, &r, 0);
    return VFW_AQ_S_OK;
}

static uint16_t node_add(struct vfw_admin *a, unsigned idx, uint8_t *d)
{
    vsw_qos *q = sched(a);
    vsw_qos_rate r;
    unsigned id;
    uint16_t st;

    if (idx) {
        return VFW_AQ_S_INVAL;  /* the device chooses the id */
    }
    vsw_qos_rate_default(&r);
    st = rate_merge(d, &r);
    if (st != VFW_AQ_S_OK) {
        return st;
    }
    for (id = 1; id <= VFW_QOS_MAX_NODES; id++) {
        vsw_qos_rate x;

        if (vsw_qos_node_get(q, id, &x) == -ENOENT) {
            break;
        }
    }
    if (id > VFW_QOS_MAX_NODES) {
        return VFW_AQ_S_NOSPC;
    }
    st = st_of(vsw_qos_node_add(q, id, &r, NULL));
    if (st == VFW_AQ_S_OK) {
        vfw_st_le16(d + D_VF, (uint16_t)id);
    }
    return st;
}

static uint16_t node_set(struct vfw_admin *a, unsigned id, const uint8_t *d)
{
    vsw_qos *q = sched(a);
    vsw_qos_rate r;
    uint16_t st;

    if (vsw_qos_node_get(q, id, &r)) {
        return VFW_AQ_S_NOENT;
    }
    st = rate_merge(d, &r);
    if (st != VFW_AQ_S_OK) {
        return st;
    }
    return st_of(vsw_qos_node_set(q, id, &r, NULL));
}

static uint16_t node_del(struct vfw_admin *a, unsigned id, const uint8_t *d)
{
    if (!vfw_all_zero(d + D_U, D_U_LEN)) {
        return VFW_AQ_S_INVAL;
    }
    if (id < 1 || id > VFW_QOS_MAX_NODES) {
        return VFW_AQ_S_NOENT;
    }
    return st_of(vsw_qos_node_del(sched(a), id, NULL));
}

static uint16_t node_get(struct vfw_admin *a, unsigned id, uint8_t *d)
{
    vsw_qos_rate r;

    if (vsw_qos_node_get(sched(a), id, &r)) {
        return VFW_AQ_S_NOENT;
    }
    rate_store(d, &r, children_of(a, id));
    return VFW_AQ_S_OK;
}

static uint16_t nodes_get(struct vfw_admin *a, uint8_t *d)
{
    uint64_t in_use = 0;
    vsw_qos_rate r;

    for (unsigned id = 1; id <= VFW_QOS_MAX_NODES; id++) {
        if (!vsw_qos_node_get(sched(a), id, &r)) {
            in_use |= 1ull << id;
        }
    }
    memset(d + D_U, 0, D_U_LEN);
    vfw_st_le64(d + P(vfw_aq_qos_nodes, in_use), in_use);
    return VFW_AQ_S_OK;
}

/* ---- DCB ------------------------------------------------------------------- */

static uint16_t set_ets(struct vfw_admin *a, const uint8_t *d)
{
    const uint8_t *tsa = d + P(vfw_aq_dcb_ets, tc_tsa);
    const uint8_t *bw = d + P(vfw_aq_dcb_ets, tc_tx_bw);
    const uint8_t *prio_tc = d + P(vfw_aq_dcb_ets, prio_tc);
    vsw_qos *q = sched(a);
    struct vfw_dp_dcb b;
    vsw_qos_ets e, old;
    int rc;

    if (!vfw_all_zero(d + P(vfw_aq_dcb_ets, rsvd),
                  sizeof(((struct vfw_aq_dcb_ets *)0)->rsvd))) {
        return VFW_AQ_S_INVAL;
    }
    vsw_qos_ets_get(q, &old);
    e = old;                                /* maxrate stays */
    for (unsigned t = 0; t < VFW_QOS_NUM_TC; t++) {
        if (tsa[t] == VFW_TSA_CBS || tsa[t] == VFW_TSA_VENDOR) {
            return VFW_AQ_S_UNSUPPORTED;
        }
        if ((tsa[t] != VFW_TSA_STRICT && tsa[t] != VFW_TSA_ETS) ||
            bw[t] > 100 || prio_tc[t] >= VFW_QOS_NUM_TC) {
            return VFW_AQ_S_RANGE;
        }
        e.tsa[t] = tsa[t] == VFW_TSA_ETS ? VSW_TSA_ETS : VSW_TSA_STRICT;
        /* 802.1Qaz: a strict class's bandwidth share has no meaning */
        e.bw[t] = tsa[t] == VFW_TSA_ETS ? bw[t] : 0;
    }
    rc = vsw_qos_ets_set(q, &e, NULL);      /* shares sum to 100 */
    if (rc) {
        return VFW_AQ_S_RANGE;
    }
    vfw_dp_get_dcb(a->ops.qos_dp, &b);
    memcpy(b.prio_tc, prio_tc, VFW_QOS_NUM_TC);
    if (vfw_dp_set_dcb(a->ops.qos_dp, &b)) {
        vsw_qos_ets_set(q, &old, NULL);     /* cannot fail: it was in use */
        return VFW_AQ_S_RANGE;
    }
    return VFW_AQ_S_OK;
}

static uint16_t get_ets(struct vfw_admin *a, uint8_t *d)
{
    struct vfw_dp_dcb b;
    vsw_qos_ets e;

    vsw_qos_ets_get(sched(a), &e);
    vfw_dp_get_dcb(a->ops.qos_dp, &b);
    memset(d + D_U, 0, D_U_LEN);
    for (unsigned t = 0; t < VFW_QOS_NUM_TC; t++) {
        d[P(vfw_aq_dcb_ets, tc_tsa) + t] =
            e.tsa[t] == VSW_TSA_ETS ? VFW_TSA_ETS : VFW_TSA_STRICT;
        d[P(vfw_aq_dcb_ets, tc_tx_bw) + t] = e.bw[t];
        d[P(vfw_aq_dcb_ets, prio_tc) + t] = b.prio_tc[t];
    }
    return VFW_AQ_S_OK;
}

static uint16_t set_maxrate(struct vfw_admin *a, const uint8_t *d)
{
    vsw_qos *q = sched(a);
    vsw_qos_ets e;

    if (!vfw_all_zero(d + P(vfw_aq_dcb_maxrate, rsvd),
                  sizeof(((struct vfw_aq_dcb_maxrate *)0)->rsvd))) {
        return VFW_AQ_S_INVAL;
    }
    vsw_qos_ets_get(q, &e);
    for (unsigned t = 0; t < VFW_QOS_NUM_TC; t++) {
        uint64_t kbps = vfw_ld_le32(d + P(vfw_aq_dcb_maxrate, tc_maxrate_kbps) + 4 * t);

        if (kbps > VFW_QOS_LINE_MAX / 1000) {
            return VFW_AQ_S_RANGE;
        }
        e.maxrate[t] = kbps * 1000;
    }
    return vsw_qos_ets_set(q, &e, NULL) ? VFW_AQ_S_RANGE : VFW_AQ_S_OK;
}

static uint16_t get_maxrate(struct vfw_admin *a, uint8_t *d)
{
    vsw_qos_ets e;

    vsw_qos_ets_get(sched(a), &e);
    memset(d + D_U, 0, D_U_LEN);
    for (unsigned t = 0; t < VFW_QOS_NUM_TC; t++) {
        /* set in whole kbit/s, so this is exact */
        vfw_st_le32(d + P(vfw_aq_dcb_maxrate, tc_maxrate_kbps) + 4 * t,
             (uint32_t)(e.maxrate[t] / 1000));
    }
    return VFW_AQ_S_OK;
}

static uint16_t app(struct vfw_admin *a, uint16_t op, const uint8_t *d)
{
    uint8_t sel = d[P(vfw_aq_dcb_app, selector)];
    uint8_t prio = d[P(vfw_aq_dcb_app, priority)];
    uint16_t proto = vfw_ld_le16(d + P(vfw_aq_dcb_app, protocol));
    bool set = op == VFW_AQ_OP_DCB_SET_APP;
    struct vfw_dp_dcb b;

    if (!vfw_all_zero(d + P(vfw_aq_dcb_app, rsvd),
                  sizeof(((struct vfw_aq_dcb_app *)0)->rsvd))) {
        return VFW_AQ_S_INVAL;
    }
    if (!(sel == VFW_APP_SEL_DSCP ||
          (sel == VFW_APP_SEL_ETHERTYPE && proto == 0))) {
        return VFW_AQ_S_UNSUPPORTED;
    }
    if (prio > VFW_QOS_MAX_PRIO || (sel == VFW_APP_SEL_DSCP && proto > 63)) {
        return VFW_AQ_S_RANGE;
    }
    vfw_dp_get_dcb(a->ops.qos_dp, &b);
    if (sel == VFW_APP_SEL_ETHERTYPE) {
        if (!set && (!b.default_set || b.default_prio != prio)) {
            return VFW_AQ_S_NOENT;
        }
        b.default_set = set;
        b.default_prio = set ? prio : 0;
    } else {
        uint64_t bit = 1ull << proto;

        if (!set && (!(b.dscp_mapped & bit) || b.dscp_prio[proto] != prio)) {
            return VFW_AQ_S_NOENT;
        }
        b.dscp_mapped = set ? b.dscp_mapped | bit : b.dscp_mapped & ~bit;
        b.dscp_prio[proto] = set ? prio : 0;
    }
    return vfw_dp_set_dcb(a->ops.qos_dp, &b) ? VFW_AQ_S_RANGE : VFW_AQ_S_OK;
}

static uint16_t set_trust(struct vfw_admin *a, const uint8_t *d)
{
    uint8_t trust = d[P(vfw_aq_dcb_trust, trust)];
    struct vfw_dp_dcb b;

    if (!vfw_all_zero(d + P(vfw_aq_dcb_trust, rsvd),
                  sizeof(((struct vfw_aq_dcb_trust *)0)->rsvd))) {
        return VFW_AQ_S_INVAL;
    }
    if (trust > VFW_TRUST_DSCP) {
        return VFW_AQ_S_RANGE;
    }
    vfw_dp_get_dcb(a->ops.qos_dp, &b);
    b.trust = trust;
    return vfw_dp_set_dcb(a->ops.qos_dp, &b) ? VFW_AQ_S_RANGE : VFW_AQ_S_OK;
}

static uint16_t get_app(struct vfw_admin *a, uint8_t *d)
{
    struct vfw_dp_dcb b;

    vfw_dp_get_dcb(a->ops.qos_dp, &b);
    memset(d + D_U, 0, D_U_LEN);
    d[P(vfw_aq_dcb_apps, trust)] = b.trust;
    d[P(vfw_aq_dcb_apps, default_prio)] = b.default_prio;
    d[P(vfw_aq_dcb_apps, flags)] = b.default_set ? VFW_APP_F_DEFAULT : 0;
    vfw_st_le64(d + P(vfw_aq_dcb_apps, dscp_mapped), b.dscp_mapped);
    for (unsigned i = 0; i < 64; i++) {
        if (b.dscp_mapped >> i & 1) {
            d[P(vfw_aq_dcb_apps, dscp_prio) + i / 2] |=
                (uint8_t)((b.dscp_prio[i] & 0xf) << (4 * (i % 2)));
        }
    }
    return VFW_AQ_S_OK;
}

static uint16_t tc_stats(struct vfw_admin *a, unsigned tc, uint8_t *d)
{
    vsw_qos_tc_stats s;

    if (tc >= VFW_QOS_NUM_TC || vsw_qos_tc_stats_get(sched(a), tc, &s)) {
        return VFW_AQ_S_RANGE;
    }
    memset(d + D_U, 0, D_U_LEN);
    vfw_st_le64(d + P(vfw_aq_qos_tc_stats, queued_pkts), s.queued_pkts);
    vfw_st_le64(d + P(vfw_aq_qos_tc_stats, queued_bytes), s.queued_bytes);
    vfw_st_le64(d + P(vfw_aq_qos_tc_stats, sent_pkts), s.sent_pkts);
    vfw_st_le64(d + P(vfw_aq_qos_tc_stats, sent_bytes), s.sent_bytes);
    vfw_st_le64(d + P(vfw_aq_qos_tc_stats, dropped_pkts), s.dropped_pkts);
    vfw_st_le64(d + P(vfw_aq_qos_tc_stats, dropped_bytes), s.dropped_bytes);
    return VFW_AQ_S_OK;
}

/* ---- dispatch ---------------------------------------------------------------- */

/* Commands whose header index names an object. */
static bool indexed(uint16_t op)
{
    switch (op) {
    case VFW_AQ_OP_QOS_NODE_ADD:    /* 0 in, the new id out */
    case VFW_AQ_OP_QOS_NODE_DEL:
    case VFW_AQ_OP_QOS_NODE_SET:
    case VFW_AQ_OP_QOS_NODE_GET:
    case VFW_AQ_OP_QOS_LEAF_SET:
    case VFW_AQ_OP_QOS_LEAF_GET:
    case VFW_AQ_OP_QOS_GET_TC_STATS:
        return true;
    default:
        return false;
    }
}

uint16_t admin_qos_exec(struct vfw_admin *a, uint16_t op, uint8_t *d)
{
    uint16_t idx = vfw_ld_le16(d + D_VF);

    if (!sched(a)) {
        return VFW_AQ_S_UNSUPPORTED;
    }
    if (vfw_ld_le32(d + D_RSVD) || (idx && !indexed(op))) {
        return VFW_AQ_S_INVAL;
    }
    switch (op) {
    case VFW_AQ_OP_QOS_SET_LINE:
        return set_line(a, d);
    case VFW_AQ_OP_QOS_GET_LINE:
        return get_line(a, d);
    case VFW_AQ_OP_QOS_NODE_ADD:
        return node_add(a, idx, d);
    case VFW_AQ_OP_QOS_NODE_DEL:
        return node_del(a, idx, d);
    case VFW_AQ_OP_QOS_NODE_SET:
        return node_set(a, idx, d);
    case VFW_AQ_OP_QOS_NODE_GET:
        return node_get(a, idx, d);
    case VFW_AQ_OP_QOS_NODES_GET:
        return nodes_get(a, d);
    case VFW_AQ_OP_QOS_LEAF_SET:
        return leaf_set(a, idx, d);
    case VFW_AQ_OP_QOS_LEAF_GET:
        return leaf_get(a, idx, d);
    case VFW_AQ_OP_DCB_SET_ETS:
        return set_ets(a, d);
    case VFW_AQ_OP_DCB_GET_ETS:
        return get_ets(a, d);
    case VFW_AQ_OP_DCB_SET_MAXRATE:
        return set_maxrate(a, d);
    case VFW_AQ_OP_DCB_GET_MAXRATE:
        return get_maxrate(a, d);
    case VFW_AQ_OP_DCB_SET_APP:
    case VFW_AQ_OP_DCB_DEL_APP:
        return app(a, op, d);
    case VFW_AQ_OP_DCB_SET_TRUST:
        return set_trust(a, d);
    case VFW_AQ_OP_DCB_GET_APP:
        return get_app(a, d);
    case VFW_AQ_OP_QOS_GET_TC_STATS:
        return tc_stats(a, idx, d);
    default:
        return VFW_AQ_S_BAD_OPCODE;    /* a gap in the 0x02xx ranges */
    }
}

uint16_t admin_qos_vf_rate(struct vfw_admin *a, uint16_t vf, uint32_t min,
                           uint32_t max)
{
    vsw_qos *q = sched(a);
    vsw_qos_rate r;

    if (!q || vsw_qos_leaf_get(q, 1u + vf, &r)) {
        return VFW_AQ_S_OK;     /* stored only, as before 2.1 */
    }
    r.tx_share = (uint64_t)min * 1000000u;
    r.tx_max = (uint64_t)max * 1000000u;
    return st_of(vsw_qos_leaf_set(q, 1u + vf, &r, NULL));
}

void admin_qos_vf_gone(struct vfw_admin *a, uint16_t vf)
{
    vsw_qos *q = sched(a);
    vsw_qos_rate r;

    if (q) {
        vsw_qos_rate_default(&r);
        vsw_qos_leaf_set(q, 1u + vf, &r, NULL);  /* no share: always fits */
    }
}
