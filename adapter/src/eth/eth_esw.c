/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * eth_esw.c - eswitch mode (2.2, docs/switchdev.md) and what the PF's
 * switchdev driver offloads into the switch (2.3): rules installed by
 * dev/admin_esw.c through vfw_dp_switch(), the meters of their police
 * actions (owned by a rule's cookie), FDB entries from the PF's bridge,
 * the VLANs of a VLAN-aware bridge's ports (applied in eth_vf.c).
 * Trust and bounds: the PF's driver is the source, through the admin
 * queue, which checks ports and VIDs (vfw_dataplane.h); at most
 * VFW_ESW_FDB_MAX offloaded FDB entries, meters 1..VSW_MAX_METERS-1.
 * Offloads exist in switchdev mode only: leaving it (or a reset) deletes
 * every one.
 */
#include <errno.h>
#include <string.h>

#include "eth_internal.h"

static bool bit_on(const uint8_t *map, unsigned v)
{
    return map[v / 8] & (1u << (v % 8));
}

/* 2.3: every offloaded rule and its meter gone (leaving switchdev mode) */
static void rules_clear(struct vfw_dp *dp)
{
    for (unsigned p = 0; p < vsw_num_ports(dp->sw); p++) {
        vsw_rule_flush_scope(dp->sw, (uint16_t)p, NULL);
    }
    vsw_rule_flush_scope(dp->sw, VSW_RULE_GLOBAL, NULL);
    for (unsigned id = 1; id < VSW_MAX_METERS; id++) {
        vfw_dp_meter_free(dp, id);
    }
    memset(dp->esw_vlan, 0, sizeof(dp->esw_vlan));
    for (unsigned i = 0; i < VFW_ESW_FDB_MAX; i++) {
        if (dp->fdb_off[i].used) {
            vsw_fdb_del(dp->sw, dp->fdb_off[i].mac, dp->fdb_off[i].vid, NULL);
            dp->fdb_off[i].used = false;
        }
    }
}

static int fdb_off_find(const struct vfw_dp *dp, const uint8_t mac[6], uint16_t vid)
{
    for (unsigned i = 0; i < VFW_ESW_FDB_MAX; i++) {
        if (dp->fdb_off[i].used && dp->fdb_off[i].vid == vid &&
            !memcmp(dp->fdb_off[i].mac, mac, 6)) {
            return (int)i;
        }
    }
    return -1;
}

/* 2.3: an offloaded FDB entry (switchdev mode only; the caller checks the
 * port). Adding an existing (mac, vid) moves it. */
int vfw_dp_fdb_offload(struct vfw_dp *dp, const uint8_t mac[6], uint16_t vid,
                       int port)
{
    int i = fdb_off_find(dp, mac, vid), rc;

    if (!dp->switchdev) {
        return -EOPNOTSUPP;
    }
    if (port < 0) {                             /* delete */
        if (i < 0) {
            return -ENOENT;
        }
        vsw_fdb_del(dp->sw, mac, vid, NULL);
        dp->fdb_off[i].used = false;
        return 0;
    }
    if (i < 0) {
        for (unsigned k = 0; k < VFW_ESW_FDB_MAX && i < 0; k++) {
            if (!dp->fdb_off[k].used) {
                i = (int)k;
            }
        }
        if (i < 0) {
            return -ENOSPC;
        }
        if (vsw_fdb_lookup_static(dp->sw, mac, vid) >= 0) {
            return -EEXIST;     /* the device's own (the PF's MAC) */
        }
    } else {
        vsw_fdb_del(dp->sw, mac, vid, NULL);    /* moved: add it again */
    }
    rc = vsw_fdb_add(dp->sw, mac, vid, (unsigned)port, NULL);
    if (rc) {
        dp->fdb_off[i].used = false;
        return rc;
    }
    memcpy(dp->fdb_off[i].mac, mac, 6);
    dp->fdb_off[i].vid = vid;
    dp->fdb_off[i].used = true;
    return 0;
}

int vfw_dp_meter_alloc(struct vfw_dp *dp, uint64_t owner)
{
    for (unsigned id = 1; id < VSW_MAX_METERS; id++) {
        if (!bit_on(dp->meter_used, id)) {
            dp->meter_used[id / 8] |= (uint8_t)(1u << (id % 8));
            dp->meter_owner[id] = owner;
            return (int)id;
        }
    }
    return -ENOSPC;
}

void vfw_dp_meter_free(struct vfw_dp *dp, unsigned id)
{
    if (id && id < VSW_MAX_METERS && bit_on(dp->meter_used, id)) {
        vsw_meter_del(dp->sw, id, NULL);
        dp->meter_used[id / 8] &= (uint8_t)~(1u << (id % 8));
        dp->meter_owner[id] = 0;
    }
}

/* Free the meters whose rule is gone (after a flush of a scope). */
void vfw_dp_meter_gc(struct vfw_dp *dp)
{
    for (unsigned id = 1; id < VSW_MAX_METERS; id++) {
        vsw_trule t;

        if (bit_on(dp->meter_used, id) &&
            (vsw_rule_get(dp->sw, dp->meter_owner[id], &t) ||
             !(t.rule.flags & VSW_ACTF_METER) || t.rule.meter != id)) {
            vfw_dp_meter_free(dp, id);
        }
    }
}

bool vfw_dp_meter_owner(const struct vfw_dp *dp, unsigned id, uint64_t *owner)
{
    if (!dp || !id || id >= VSW_MAX_METERS || !bit_on(dp->meter_used, id)) {
        return false;
    }
    *owner = dp->meter_owner[id];
    return true;
}

int vfw_dp_esw_vlan(struct vfw_dp *dp, unsigned idx, unsigned op, uint16_t vid,
                    bool pvid)
{
    struct dp_esw_vlan *v, old;
    int rc;

    if (!dp->switchdev) {
        return -EOPNOTSUPP;
    }
    if (idx > dp->total_vfs) {
        return -EINVAL;
    }
    v = &dp->esw_vlan[idx];
    old = *v;
    switch (op) {
    case VFW_ESW_VLAN_ADD:
        v->member[vid / 8] |= (uint8_t)(1u << (vid % 8));
        if (pvid) {
            v->pvid = vid;
        } else if (v->pvid == vid) {
            v->pvid = 0;        /* re-added without the flag: no PVID now */
        }
        break;
    case VFW_ESW_VLAN_DEL:
        if (!bit_on(v->member, vid)) {
            return -ENOENT;
        }
        v->member[vid / 8] &= (uint8_t)~(1u << (vid % 8));
        if (v->pvid == vid) {
            v->pvid = 0;
        }
        break;
    default:
        v->aware = op == VFW_ESW_VLAN_AWARE_ON;
        break;
    }
    rc = idx ? eth_apply_vf(dp, idx - 1) : eth_apply_ports(dp);
    if (rc) {
        *v = old;
        idx ? eth_apply_vf(dp, idx - 1) : eth_apply_ports(dp);
    }
    return rc;
}

struct vsw_switch *vfw_dp_switch(struct vfw_dp *dp)
{
    return dp ? dp->sw : NULL;
}

/*
 * 2.2: eswitch mode. Every port's forwarding is re-derived (eth_apply_ports:
 * FDB entries of the VFs, misses, the uplink's learning) and learned
 * entries are flushed, so no frame is forwarded by a learned entry of the
 * other mode. On failure (OOM in the switch) the old mode is put back.
 */
int vfw_dp_set_switchdev(struct vfw_dp *dp, bool on)
{
    int rc;

    if (!dp) {
        return -EINVAL;
    }
    if (dp->switchdev == on) {
        return 0;
    }
    if (!on) {
        rules_clear(dp);        /* offloads exist in switchdev mode only */
    }
    dp->switchdev = on;
    rc = eth_apply_ports(dp);
    if (rc) {
        dp->switchdev = !on;
        eth_apply_ports(dp);
        return rc;
    }
    vsw_fdb_flush_learned(dp->sw);
    return 0;
}

bool vfw_dp_switchdev(const struct vfw_dp *dp)
{
    return dp && dp->switchdev;
}
