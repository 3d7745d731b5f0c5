/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * eth_vf.c - a VF's port configuration (from the PF's admin queue: what
 * `ip link set PF vf N ...` sets and what the PF granted on the VF's
 * mailbox requests; see vfw_dataplane.h) and the switch's port settings
 * derived from it and the eswitch state: MAC (default
 * 02:00:00:<pf_mac[4]>:<n>:01), port VLAN or trunk of granted VLANs, spoof
 * check, trust, link (auto follows the uplink's carrier), the static FDB
 * entries; the uplink's and the PF's ports; the uplink's carrier.
 * Trust and bounds: vfw_dp_set_vf checks every field (a unicast MAC, VLAN
 * <= 4095, qos <= 7, link_state, rx_mode bits, mc_count <=
 * VFW_MC_FILTER_MAX) and, when the switch refuses the new settings, puts
 * the old configuration back; the VLAN bitmaps are fixed-size (512 bytes).
 */
#include <errno.h>
#include <string.h>

#include "eth_internal.h"

static void default_mac(const struct vfw_dp *dp, unsigned vf, uint8_t mac[6])
{
    mac[0] = 0x02;
    mac[1] = 0x00;
    mac[2] = 0x00;
    mac[3] = dp->pf_mac[4];
    mac[4] = (uint8_t)vf;
    mac[5] = 0x01;
}

static bool mac_zero(const uint8_t m[6])
{
    return !(m[0] | m[1] | m[2] | m[3] | m[4] | m[5]);
}

int vfw_dp_vf_mac(const struct vfw_dp *dp, unsigned vf, uint8_t mac[6])
{
    if (!dp || vf >= dp->total_vfs) {
        return -EINVAL;
    }
    if (mac_zero(dp->cfg[vf].mac)) {
        default_mac(dp, vf, mac);
    } else {
        memcpy(mac, dp->cfg[vf].mac, 6);
    }
    return 0;
}

bool eth_fn_link(const struct vfw_dp *dp, unsigned fn)
{
    if (fn == VFW_DP_FN_PF) {
        return dp->uplink_up;
    }
    switch (dp->cfg[fn - 1].link_state) {
    case LINK_STATE_ENABLE:
        return true;
    case LINK_STATE_DISABLE:
        return false;
    default:
        return dp->uplink_up;
    }
}

bool vfw_dp_link_up(const struct vfw_dp *dp, unsigned fn)
{
    return dp && fn < fn_count(dp) && eth_fn_link(dp, fn);
}

static void link_update(struct vfw_dp *dp, unsigned fn)
{
    struct dp_fn *f = &dp->fn[fn];
    bool up = eth_fn_link(dp, fn);

    if (up != f->link) {
        f->link = up;
        eth_fire(dp, fn, f->link_ctrl, &f->link_pending);
    }
}

/* --- switch configuration --------------------------------------------- */

/* The VIDs (bit v % 8 of byte v / 8) at which VF config `c` wants its MAC
 * in the FDB. In switchdev mode none: the representors' slow path (or an
 * offloaded rule) decides. */
static void fdb_want_map(const struct vfw_dp *dp, const struct vfw_dp_vf_cfg *c,
                         uint8_t want[512])
{
    memset(want, 0, 512);
    if (dp->switchdev) {
        return;
    }
    if (c->vlan) {
        want[c->vlan / 8] = (uint8_t)(1u << (c->vlan % 8));
        return;
    }
    memcpy(want, c->vlan_filter, 512);
    want[0] |= 1;                       /* untagged */
}

/* A VLAN bitmap by bytes (bit v % 8 of byte v / 8) as the switch's 64-bit
 * words (bit v % 64 of word v / 64): the same bits, 8 bytes at a time. */
static void vlan_map_words(const uint8_t map[512], uint64_t w[64])
{
    for (unsigned i = 0; i < 64; i++) {
        uint64_t x = 0;

        for (unsigned k = 0; k < 8; k++) {
            x |= (uint64_t)map[8 * i + k] << (8 * k);
        }
        w[i] = x;
    }
}

/*
 * The VF's static FDB entries: its MAC in its port VLAN, or untagged (VID 0)
 * and in every VLAN the PF granted it, so frames to it in those VLANs are
 * forwarded rather than flooded as unknown unicast. Only the difference to
 * what is installed is changed, found a byte (8 VLANs) at a time: every
 * port configuration change of a VF comes here (an eswitch mode change for
 * every VF), and the 2 x 4096 single-VLAN checks were, under the fuzzers'
 * coverage instrumentation, a third of fuzz_esw_rules' time.
 */
static int fdb_sync(struct vfw_dp *dp, unsigned vf, const uint8_t mac[6])
{
    const struct vfw_dp_vf_cfg *c = &dp->cfg[vf];
    uint8_t *have = dp->fdb_vids[vf];
    bool new_mac = memcmp(dp->fdb_mac[vf], mac, 6) != 0;
    uint8_t want[512];

    fdb_want_map(dp, c, want);
    for (unsigned b = 0; b < 512; b++) {
        uint8_t gone = new_mac ? have[b] : (uint8_t)(have[b] & ~want[b]);

        have[b] &= (uint8_t)~gone;
        for (; gone; gone &= (uint8_t)(gone - 1)) {
            unsigned v = 8 * b + (unsigned)__builtin_ctz(gone);

            vsw_fdb_del(dp->sw, dp->fdb_mac[vf], (uint16_t)v, NULL);
        }
    }
    memcpy(dp->fdb_mac[vf], mac, 6);
    for (unsigned b = 0; b < 512; b++) {
        for (uint8_t add = want[b] & (uint8_t)~have[b]; add; add &= (uint8_t)(add - 1)) {
            unsigned bit = (unsigned)__builtin_ctz(add);
            int rc = vsw_fdb_add(dp->sw, mac, (uint16_t)(8 * b + bit), VSW_PORT_VF(vf), NULL);

            if (rc) {
                return rc;
            }
            have[b] |= (uint8_t)(1u << bit);
        }
    }
    return 0;
}

/* Switchdev, a VLAN-aware bridge's port: a trunk of its VLANs, the PVID
 * untagged both ways (instead of the port's legacy VLAN settings). */
static void esw_vlan_apply(const struct vfw_dp *dp, const struct dp_esw_vlan *v,
                           vsw_port_cfg *pc)
{
    if (!dp->switchdev || !v->aware) {
        return;
    }
    pc->vlan_mode = VSW_VLAN_TRUNK;
    pc->pvid = 0;
    pc->native_vid = v->pvid;
    vlan_map_words(v->member, pc->allowed);
    pc->allowed[0] &= ~1ull;            /* VLANs 1..4094 only */
    pc->allowed[63] &= ~(1ull << 63);
}

int eth_apply_vf(struct vfw_dp *dp, unsigned vf)
{
    const struct vfw_dp_vf_cfg *c = &dp->cfg[vf];
    vsw_port_cfg pc;
    uint8_t mac[6];
    int rc;

    vfw_dp_vf_mac(dp, vf, mac);
    vsw_port_cfg_default(&pc);
    memcpy(pc.mac, mac, 6);
    if (c->vlan) {
        pc.vlan_mode = VSW_VLAN_ACCESS;
        pc.pvid = c->vlan;
        pc.pvid_pcp = c->qos;
    } else {
        /* A trunk of untagged frames plus the VLANs the PF granted. */
        vlan_map_words(c->vlan_filter, pc.allowed);
        pc.allowed[0] &= ~1ull;
    }
    esw_vlan_apply(dp, &dp->esw_vlan[1 + vf], &pc);
    pc.spoofchk = c->spoofchk;
    /* Unknown unicast reaches a VF that asked for promiscuous mode and is
     * trusted (both: trust can be revoked after the grant). */
    pc.trust = c->trust && (c->rx_mode & VFW_RXM_PROMISC);
    pc.link_up = eth_fn_link(dp, VFW_DP_FN_VF(vf));
    pc.learn = false;
    /* switchdev: what nothing forwards goes to the VF's representor */
    pc.miss_port = dp->switchdev ? VSW_PORT_PF : VSW_PORT_ANY;
    eth_apply_classes(dp, &pc, c->vlan || c->qos ? c->qos : -1);
    rc = vsw_port_set(dp->sw, VSW_PORT_VF(vf), &pc, NULL);
    if (rc) {
        return rc;
    }
    return fdb_sync(dp, vf, mac);
}

int eth_apply_ports(struct vfw_dp *dp)
{
    vsw_port_cfg pc;
    int rc;

    vsw_port_cfg_default(&pc);
    pc.learn = !dp->switchdev;
    pc.link_up = dp->uplink_up;
    pc.miss_port = dp->switchdev ? VSW_PORT_PF : VSW_PORT_ANY;
    esw_vlan_apply(dp, &dp->esw_vlan[0], &pc);
    rc = vsw_port_set(dp->sw, VSW_PORT_UPLINK, &pc, NULL);
    if (rc) {
        return rc;
    }
    vsw_port_cfg_default(&pc);
    memcpy(pc.mac, dp->pf_mac, 6);
    pc.link_up = true;
    /* switchdev: the PF netdev is the uplink representor: to the wire */
    pc.fdb_off = dp->switchdev;
    pc.miss_port = dp->switchdev ? VSW_PORT_UPLINK : VSW_PORT_ANY;
    /* ... and a VLAN-aware bridge's port for the uplink: its untagged
     * frames are in the uplink's PVID, and so the wire's untagged frames
     * reach it untagged; every VLAN passes (the slow path carries all) */
    if (dp->switchdev && dp->esw_vlan[0].aware) {
        pc.native_vid = dp->esw_vlan[0].pvid;
    }
    eth_apply_classes(dp, &pc, -1);
    rc = vsw_port_set(dp->sw, VSW_PORT_PF, &pc, NULL);
    if (rc) {
        return rc;
    }
    for (unsigned vf = 0; vf < dp->total_vfs; vf++) {
        rc = eth_apply_vf(dp, vf);
        if (rc) {
            return rc;
        }
    }
    return 0;
}

/* --- VF settings (the PF's admin queue), the uplink's carrier -------- */

int vfw_dp_set_vf(struct vfw_dp *dp, unsigned vf,
                  const struct vfw_dp_vf_cfg *cfg)
{
    struct vfw_dp_vf_cfg old;
    uint8_t old_mac[6], new_mac[6];
    struct dp_fn *f;
    int rc;

    if (!dp || !cfg || vf >= dp->total_vfs) {
        return -EINVAL;
    }
    if ((cfg->mac[0] & 1) || cfg->vlan > 4095 || cfg->qos > 7 ||
        cfg->link_state > LINK_STATE_DISABLE ||
        (cfg->rx_mode & ~(VFW_RXM_ALLMULTI | VFW_RXM_PROMISC)) ||
        cfg->mc_count > VFW_MC_FILTER_MAX) {
        return -EINVAL;
    }
    rc = eth_leaf_rates(dp, vf, cfg);   /* QoS hook: -ERANGE if oversubscribed */
    if (rc) {
        return rc;
    }
    old = dp->cfg[vf];
    vfw_dp_vf_mac(dp, vf, old_mac);
    dp->cfg[vf] = *cfg;
    rc = eth_apply_vf(dp, vf);
    if (rc) {
        dp->cfg[vf] = old;
        eth_apply_vf(dp, vf);
        eth_leaf_rates(dp, vf, &old);
        return rc;
    }
    f = &dp->fn[VFW_DP_FN_VF(vf)];
    if (old.max_mbps != cfg->max_mbps) {
        f->tokens = 0;
        f->last_ns = now(dp);
    }
    link_update(dp, VFW_DP_FN_VF(vf));
    /* A new MAC is news for the VF's driver too (the spoof check now
     * wants it): raise the link vector, whose handler rereads DP_MAC. */
    vfw_dp_vf_mac(dp, vf, new_mac);
    if (memcmp(old_mac, new_mac, 6)) {
        eth_fire(dp, VFW_DP_FN_VF(vf), f->link_ctrl, &f->link_pending);
    }
    return 0;
}

int vfw_dp_get_vf(const struct vfw_dp *dp, unsigned vf,
                  struct vfw_dp_vf_cfg *cfg)
{
    if (!dp || !cfg || vf >= dp->total_vfs) {
        return -EINVAL;
    }
    *cfg = dp->cfg[vf];
    return 0;
}

void vfw_dp_set_uplink(struct vfw_dp *dp, bool up)
{
    vsw_port_cfg pc;

    if (!dp || dp->uplink_up == up) {
        return;
    }
    dp->uplink_up = up;
    if (!vsw_port_get(dp->sw, VSW_PORT_UPLINK, &pc)) {
        pc.link_up = up;
        vsw_port_set(dp->sw, VSW_PORT_UPLINK, &pc, NULL);
    }
    for (unsigned vf = 0; vf < dp->total_vfs; vf++) {
        if (dp->cfg[vf].link_state == LINK_STATE_AUTO) {
            eth_apply_vf(dp, vf);
        }
    }
    for (unsigned fn = 0; fn < fn_count(dp); fn++) {
        link_update(dp, fn);
    }
    if (!up) {
        vfw_uplink_flush(dp->up);   /* QoS hook: nothing leaves a dead wire */
    }
}
