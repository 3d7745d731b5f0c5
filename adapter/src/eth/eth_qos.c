/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * eth_qos.c - QoS of the Ethernet data path (issue 17, admin commands 2.1;
 * docs/qos.md): with ops->uplink_timer the uplink is a wire with a line
 * rate behind the link QoS scheduler (eth_uplink.c), whose callbacks are
 * here (QoS hook); the line rate; the DCB classification (trust, priority
 * to class) of the PF's and VFs' ports; a VF's min/max_mbps as its leaf's
 * tx_share/tx_max in the rate tree.
 * Trust and bounds: values come from the PF's admin queue (dev/admin_qos.c)
 * and are checked again here (trust mode, priorities and classes <= 7;
 * rates by the scheduler, -ERANGE when guarantees exceed the line rate);
 * a refused change leaves the old settings in place.
 */
#include <errno.h>
#include <string.h>

#include "eth_internal.h"

/* --- QoS hook: the uplink's callbacks ----------------------------------- */

static void up_tx(void *ctx, const uint8_t *frame, size_t len)
{
    struct vfw_dp *dp = ctx;

    if (dp->uplink_up && dp->ops->uplink_tx) {
        dp->ops->uplink_tx(dp->ctx, frame, len);
    }
}

static void up_timer(void *ctx, uint64_t when)
{
    struct vfw_dp *dp = ctx;

    dp->ops->uplink_timer(dp->ctx, when);
}

static void up_resume(void *ctx, unsigned fn)
{
    struct vfw_dp *dp = ctx;

    if (fn < fn_count(dp)) {
        eth_tx_want(dp, fn, ETH_TX_ALL);    /* the run sends */
    }
}

const struct vfw_uplink_ops eth_uplink_ops = {
    .tx = up_tx, .timer = up_timer, .resume = up_resume,
};

struct vsw_qos *vfw_dp_qos(struct vfw_dp *dp)
{
    return dp ? vfw_uplink_qos(dp->up) : NULL;
}

void vfw_dp_uplink_timer(struct vfw_dp *dp)
{
    if (dp && dp->up) {
        vfw_uplink_advance(dp->up, now(dp));
    }
}

bool vfw_dp_fn_tx_paused(const struct vfw_dp *dp, unsigned fn)
{
    return dp && fn < fn_count(dp) && vfw_uplink_paused(dp->up, fn);
}

/* --- QoS: line rate and classification (admin commands, 2.1) ----------- */

void vfw_dp_dcb_default(struct vfw_dp_dcb *b)
{
    memset(b, 0, sizeof(*b));
    b->trust = VFW_TRUST_PCP;
    for (unsigned p = 0; p < 8; p++) {
        b->prio_tc[p] = (uint8_t)p;
    }
}

/* QoS: a port's classification from the DCB state: priority by the trust
 * mode (a VF's port VLAN priority stands for the tag its untagged frames
 * get), then class by prio_tc. */
void eth_apply_classes(const struct vfw_dp *dp, vsw_port_cfg *pc,
                       int port_prio)
{
    const struct vfw_dp_dcb *b = &dp->dcb;
    unsigned def = b->default_prio & 7;

    pc->qos_trust = b->trust == VFW_TRUST_DSCP ? VSW_TRUST_DSCP :
                    b->trust == VFW_TRUST_PCP ? VSW_TRUST_PCP : VSW_TRUST_NONE;
    if (b->trust == VFW_TRUST_PCP && port_prio >= 0) {
        def = (unsigned)port_prio & 7;
    }
    pc->default_tc = b->prio_tc[def] & 7;
    for (unsigned p = 0; p < 8; p++) {
        pc->pcp_to_tc[p] = b->prio_tc[p] & 7;
    }
    for (unsigned d = 0; d < 64; d++) {
        unsigned pr = (b->dscp_mapped >> d) & 1 ? b->dscp_prio[d] & 7 : def;

        pc->dscp_to_tc[d] = b->prio_tc[pr] & 7;
    }
}

/* The classification of the PF's and VFs' ports, nothing else of them
 * (a DCB change does not touch the FDB). */
int eth_apply_port_classes(struct vfw_dp *dp)
{
    for (unsigned fn = 0; fn < fn_count(dp); fn++) {
        unsigned port = fn == VFW_DP_FN_PF ? VSW_PORT_PF : VSW_PORT_VF(fn - 1);
        const struct vfw_dp_vf_cfg *c = fn ? &dp->cfg[fn - 1] : NULL;
        vsw_port_cfg pc;
        int rc;

        if (vsw_port_get(dp->sw, port, &pc)) {
            return -EINVAL;
        }
        eth_apply_classes(dp, &pc, c && (c->vlan || c->qos) ? c->qos : -1);
        rc = vsw_port_set(dp->sw, port, &pc, NULL);
        if (rc) {
            return rc;
        }
    }
    return 0;
}

/* Reset: a fresh scheduler (default tree, classes, counters) at the
 * default line rate, default classification. On OOM the old scheduler
 * stays, emptied. */
void eth_qos_reset(struct vfw_dp *dp)
{
    struct vfw_uplink *n;

    vfw_dp_dcb_default(&dp->dcb);
    if (!dp->up) {
        return;
    }
    n = vfw_uplink_create(&eth_uplink_ops, dp, fn_count(dp));
    if (n) {
        vfw_uplink_destroy(dp->up);
        dp->up = n;
    }
    dp->line_bps = 0;
    vfw_dp_set_line_rate(dp, dp->line_default, NULL);
}

int vfw_dp_set_line_rate(struct vfw_dp *dp, uint64_t bps, struct vsw_error *err)
{
    vsw_qos *q = dp ? vfw_uplink_qos(dp->up) : NULL;
    uint64_t cur;
    uint32_t overhead;
    int rc;

    if (!q) {
        return -EOPNOTSUPP;
    }
    vsw_qos_get_line(q, &cur, &overhead);
    /* Without a line rate the scheduler keeps the configuration against
     * the largest rate it knows, so guarantees are checked once a real
     * rate is set. */
    rc = vsw_qos_set_line(q, bps ? bps : VSW_QOS_MAX_RATE, overhead, err);
    if (rc) {
        return rc;
    }
    if (!bps && dp->line_bps) {
        vfw_uplink_flush(dp->up);   /* nothing waits for a wire that is gone */
    }
    dp->line_bps = bps;
    return 0;
}

uint64_t vfw_dp_line_rate(const struct vfw_dp *dp)
{
    return dp ? dp->line_bps : 0;
}

int vfw_dp_set_line_default(struct vfw_dp *dp, uint64_t bps)
{
    int rc;

    if (!dp || !dp->up) {
        return -EOPNOTSUPP;
    }
    rc = vfw_dp_set_line_rate(dp, bps, NULL);
    if (!rc) {
        dp->line_default = bps;
    }
    return rc;
}

int vfw_dp_set_dcb(struct vfw_dp *dp, const struct vfw_dp_dcb *b)
{
    struct vfw_dp_dcb old;
    int rc;

    if (!dp || !b || b->trust > VFW_TRUST_DSCP || b->default_prio > 7) {
        return -EINVAL;
    }
    for (unsigned i = 0; i < 64; i++) {
        if (b->dscp_prio[i] > 7 || (i < 8 && b->prio_tc[i] > 7)) {
            return -EINVAL;
        }
    }
    old = dp->dcb;
    if (old.trust == b->trust && old.default_prio == b->default_prio &&
        old.default_set == b->default_set && old.dscp_mapped == b->dscp_mapped &&
        !memcmp(old.prio_tc, b->prio_tc, sizeof(old.prio_tc)) &&
        !memcmp(old.dscp_prio, b->dscp_prio, sizeof(old.dscp_prio))) {
        return 0;       /* reprogramming every port costs ~50 us per VF */
    }
    dp->dcb = *b;
    rc = eth_apply_port_classes(dp);
    if (rc) {
        dp->dcb = old;
        eth_apply_port_classes(dp);
    }
    return rc;
}

void vfw_dp_get_dcb(const struct vfw_dp *dp, struct vfw_dp_dcb *b)
{
    *b = dp->dcb;
}

/* A VF's min/max_mbps are its leaf's tx_share/tx_max (one model for `ip
 * link set ... min_tx_rate/max_tx_rate` and devlink rate); the rest of the
 * leaf (parent, priority, weight) stays as devlink set it. */
int eth_leaf_rates(struct vfw_dp *dp, unsigned vf,
                   const struct vfw_dp_vf_cfg *c)
{
    vsw_qos *q = vfw_uplink_qos(dp->up);
    vsw_qos_rate r;

    if (!q || vsw_qos_leaf_get(q, VFW_DP_FN_VF(vf), &r)) {
        return 0;
    }
    r.tx_share = (uint64_t)c->min_mbps * 1000000u;
    r.tx_max = (uint64_t)c->max_mbps * 1000000u;
    return vsw_qos_leaf_set(q, VFW_DP_FN_VF(vf), &r, NULL);
}
