/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * eth_dp.c - lifecycle of the Ethernet data path (vfw_dataplane.h; the
 * files are listed in eth_internal.h): create (the switch, the PF's FDB
 * entry, every port's settings, with ops->uplink_timer the uplink's
 * scheduler), destroy, the reset of one function (FLR, VF enable/disable:
 * its rings, link control, counters and held engine frames go; its port
 * configuration, the PF's, stays) and of the whole adapter (VF configs,
 * QoS and eswitch mode back to their defaults), and the counters.
 * Bounds: total_vfs <= VFW_DP_MAX_VFS; a function number from outside is
 * checked against fn_count().
 */
#include <stdlib.h>
#include <string.h>

#include "eth_internal.h"

static void cfg_default(struct vfw_dp_vf_cfg *c)
{
    memset(c, 0, sizeof(*c));
    c->spoofchk = true;
    c->link_state = LINK_STATE_AUTO;
}

struct vfw_dp *vfw_dp_create(const struct vfw_dp_ops *ops, void *ctx,
                             const uint8_t pf_mac[6], unsigned total_vfs)
{
    struct vfw_dp *dp;

    if (!ops || !pf_mac || total_vfs > VFW_DP_MAX_VFS) {
        return NULL;
    }
    dp = calloc(1, sizeof(*dp));
    if (!dp) {
        return NULL;
    }
    dp->ops = ops;
    dp->ctx = ctx;
    dp->total_vfs = total_vfs;
    memcpy(dp->pf_mac, pf_mac, 6);
    dp->sw = vsw_create(&(vsw_config){ .num_vfs = total_vfs });
    if (!dp->sw) {
        free(dp);
        return NULL;
    }
    for (unsigned vf = 0; vf < VFW_DP_MAX_VFS; vf++) {
        cfg_default(&dp->cfg[vf]);
    }
    vfw_dp_dcb_default(&dp->dcb);
    if (vsw_fdb_add(dp->sw, pf_mac, 0, VSW_PORT_PF, NULL) ||
        eth_apply_ports(dp)) {
        vfw_dp_destroy(dp);
        return NULL;
    }
    if (ops->uplink_timer) {    /* QoS hook */
        dp->up = vfw_uplink_create(&eth_uplink_ops, dp, fn_count(dp));
        if (!dp->up) {
            vfw_dp_destroy(dp);
            return NULL;
        }
        dp->line_bps = dp->line_default = VFW_DP_LINE_DEFAULT;
    }
    return dp;
}

void vfw_dp_destroy(struct vfw_dp *dp)
{
    if (!dp) {
        return;
    }
    vfw_uplink_destroy(dp->up);
    vsw_destroy(dp->sw);
    for (unsigned fn = 0; fn < VFW_DP_NUM_FN; fn++) {
        free(dp->fn[fn].hold);
    }
    free(dp);
}

void vfw_dp_reset_fn(struct vfw_dp *dp, unsigned fn)
{
    struct dp_fn *f;

    if (!dp || fn >= fn_count(dp)) {
        return;
    }
    f = &dp->fn[fn];
    free(f->hold);              /* held engine frames go with the reset */
    memset(f, 0, sizeof(*f));
    f->link = eth_fn_link(dp, fn);
}

void vfw_dp_reset(struct vfw_dp *dp)
{
    if (!dp) {
        return;
    }
    vfw_uplink_flush(dp->up);           /* QoS hook */
    eth_qos_reset(dp);
    if (dp->switchdev) {                /* a reset restores legacy mode */
        vfw_dp_set_switchdev(dp, false);
    }
    for (unsigned vf = 0; vf < dp->total_vfs; vf++) {
        cfg_default(&dp->cfg[vf]);
        eth_apply_vf(dp, vf);
        eth_leaf_rates(dp, vf, &dp->cfg[vf]);   /* QoS hook */
    }
    eth_apply_port_classes(dp);         /* the PF's, back to the defaults */
    for (unsigned fn = 0; fn < fn_count(dp); fn++) {
        vfw_dp_reset_fn(dp, fn);
    }
}

unsigned vfw_dp_num_vfs(const struct vfw_dp *dp)
{
    return dp ? dp->total_vfs : 0;
}

uint64_t vfw_dp_stat(const struct vfw_dp *dp, unsigned fn, unsigned stat)
{
    if (!dp || fn >= fn_count(dp) || stat >= VFW_STAT_COUNT) {
        return 0;
    }
    return dp->fn[fn].stat[stat];
}
