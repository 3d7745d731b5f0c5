/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * admin_esw.c - the admin queue's eswitch commands (hardware interface 2.2
 * to 2.4, include/vfwarp/vfwarp_admin.h, docs/switchdev.md): the switch's
 * mode, legacy or switchdev, and the offloads of switchdev mode: rules
 * (tc flower filters) by cookie and FDB entries (the bridge's).
 *
 * Stateless like admin_qos.c: the mode lives in the data path
 * (vfw_dp_set_switchdev), the rules in the switch's rule table (vswitch.h
 * "Rule table"), which validates and publishes each change as a whole; a
 * police action's meter is allocated from the data path's pool and named
 * by the rule itself. A rule is read from PF memory whole, then checked
 * field by field here and by the switch; nothing is installed before every
 * check passed, so a refused command changes nothing.
 */
#include <errno.h>
#include <string.h>

#include "admin_internal.h"
#include "vfw_dataplane.h"
#include "vswitch.h"

_Static_assert(VFW_ESW_RULES_MAX == VSW_ACL_MAX_RULES, "rule limit");

bool admin_esw_opcode(uint16_t op)
{
    return op == VFW_AQ_OP_ESW_SET_MODE || op == VFW_AQ_OP_ESW_GET_MODE ||
           (op >= VFW_AQ_OP_ESW_RULE_ADD && op <= VFW_AQ_OP_ESW_PORT_VLAN) ||
           op == VFW_AQ_OP_ESW_RULE_STATS;
}

/* The switch's refusals as statuses. */
static uint16_t st_of(int rc)
{
    switch (rc) {
    case 0:
        return VFW_AQ_S_OK;
    case -EEXIST:
        return VFW_AQ_S_EXIST;
    case -ENOENT:
        return VFW_AQ_S_NOENT;
    case -ENOSPC:
        return VFW_AQ_S_NOSPC;
    case -EOPNOTSUPP:
        return VFW_AQ_S_UNSUPPORTED;
    case -EBUSY:
        return VFW_AQ_S_BUSY;
    default:
        return VFW_AQ_S_INVAL;
    }
}

/* A port of the hardware interface as a switch port: a VF enabled now,
 * the uplink, the PF where `pf_ok`. */
static uint16_t port_of(const struct vfw_admin *a, struct vfw_dp *dp,
                        uint16_t p, bool pf_ok, unsigned *out)
{
    if (p == VFW_ESW_PORT_UPLINK) {
        *out = VSW_PORT_UPLINK;
    } else if (p == VFW_ESW_PORT_PF && pf_ok) {
        *out = VSW_PORT_PF;
    } else if (p < a->num_vfs) {
        *out = VSW_PORT_VF(p);
    } else if (p < vfw_dp_num_vfs(dp)) {
        return VFW_AQ_S_BAD_VF;
    } else {
        return VFW_AQ_S_RANGE;
    }
    return VFW_AQ_S_OK;
}

#define R(field) offsetof(struct vfw_esw_rule, field)

/* The hardware rule `b` (sizeof(struct vfw_esw_rule) bytes, little endian)
 * as the switch's; *police set when it has a police action (rate, burst
 * returned). The switch checks the rest (prefixes, ranges) at install. */
static uint16_t rule_decode(const struct vfw_admin *a, struct vfw_dp *dp,
                            uint64_t cookie, const uint8_t *b, vsw_trule *t,
                            bool *police, vsw_meter_cfg *mc)
{
    uint16_t match = vfw_ld_le16(b + R(match)), act = vfw_ld_le16(b + R(actions));
    vsw_rule *r = &t->rule;
    unsigned port;
    uint16_t st;

    memset(t, 0, sizeof(*t));
    memset(mc, 0, sizeof(*mc));
    *police = false;
    if (vfw_ld_le16(b + R(rsvd0)) || !vfw_all_zero(b + R(rsvd1), 3) ||
        !vfw_all_zero(b + R(rsvd2), sizeof(((struct vfw_esw_rule *)0)->rsvd2)) ||
        (match & ~VFW_ESW_M_ALL) || (act & ~VFW_ESW_A_ALL) ||
        ((act & VFW_ESW_A_DROP) && (act & VFW_ESW_A_REDIRECT)) ||
        ((act & VFW_ESW_A_VLAN_PUSH) && (act & VFW_ESW_A_VLAN_POP)) ||
        /* the push's fields are reserved without a push */
        (!(act & VFW_ESW_A_VLAN_PUSH) &&
         (vfw_ld_le16(b + R(vlan_vid)) || b[R(vlan_prio)]))) {
        return VFW_AQ_S_INVAL;
    }
    if (vfw_ld_le32(b + R(chain))) {
        return VFW_AQ_S_UNSUPPORTED;    /* one lookup stage: chain 0 only */
    }
    st = port_of(a, dp, vfw_ld_le16(b + R(scope)), false, &port);
    if (st) {
        return st;
    }
    t->cookie = cookie;
    t->scope = (uint16_t)port;
    r->priority = vfw_ld_le32(b + R(prio));
    if (match & VFW_ESW_M_DST_MAC) {
        r->match |= VSW_M_DST_MAC;
        memcpy(r->dst_mac, b + R(dst_mac), 6);
        memcpy(r->dst_mac_mask, b + R(dst_mac_mask), 6);
    }
    if (match & VFW_ESW_M_SRC_MAC) {
        r->match |= VSW_M_SRC_MAC;
        memcpy(r->src_mac, b + R(src_mac), 6);
        memcpy(r->src_mac_mask, b + R(src_mac_mask), 6);
    }
    if (match & VFW_ESW_M_VLAN) {
        r->match |= VSW_M_VLAN;
        r->vid = vfw_ld_le16(b + R(vid));
    }
    if (match & VFW_ESW_M_ETHERTYPE) {
        r->match |= VSW_M_ETHERTYPE;
        r->ethertype = vfw_ld_le16(b + R(ethertype));
    }
    if (match & (VFW_ESW_M_SRC_IP | VFW_ESW_M_DST_IP | VFW_ESW_M_IP_VERSION)) {
        r->ip_version = b[R(ip_version)];
        if (r->ip_version != 4 && r->ip_version != 6) {
            return VFW_AQ_S_INVAL;
        }
        r->match |= VSW_M_IP_VERSION;
    }
    if (match & VFW_ESW_M_SRC_IP) {
        r->match |= VSW_M_SRC_IP;
        r->src_plen = b[R(src_plen)];
        memcpy(r->src_ip, b + R(src_ip), 16);
    }
    if (match & VFW_ESW_M_DST_IP) {
        r->match |= VSW_M_DST_IP;
        r->dst_plen = b[R(dst_plen)];
        memcpy(r->dst_ip, b + R(dst_ip), 16);
    }
    if (match & VFW_ESW_M_IP_PROTO) {
        r->match |= VSW_M_IP_PROTO;
        r->ip_proto = b[R(ip_proto)];
    }
    if (match & VFW_ESW_M_SPORT) {
        r->match |= VSW_M_SPORT;
        r->sport_lo = vfw_ld_le16(b + R(sport_lo));
        r->sport_hi = vfw_ld_le16(b + R(sport_hi));
    }
    if (match & VFW_ESW_M_DPORT) {
        r->match |= VSW_M_DPORT;
        r->dport_lo = vfw_ld_le16(b + R(dport_lo));
        r->dport_hi = vfw_ld_le16(b + R(dport_hi));
    }
    if (match & VFW_ESW_M_DSCP) {
        r->match |= VSW_M_DSCP;
        r->dscp = b[R(dscp)];
        r->dscp_mask = b[R(dscp_mask)];
        if (r->dscp > 63 || r->dscp_mask > 63 || (r->dscp & ~r->dscp_mask)) {
            return VFW_AQ_S_INVAL;
        }
    }
    if (match & VFW_ESW_M_TCP_FLAGS) {
        r->match |= VSW_M_TCP_FLAGS;
        r->tcp_flags = b[R(tcp_flags)];
        r->tcp_flags_mask = b[R(tcp_flags_mask)];
        if (r->tcp_flags & ~r->tcp_flags_mask) {
            return VFW_AQ_S_INVAL;
        }
    }
    /* every rule counts: tc -s filter show reads it */
    r->flags = VSW_ACTF_COUNT;
    r->verdict = (act & VFW_ESW_A_DROP) ? VSW_ACT_DROP : VSW_ACT_PERMIT;
    if (act & VFW_ESW_A_REDIRECT) {
        st = port_of(a, dp, vfw_ld_le16(b + R(redirect_port)), true, &port);
        if (st) {
            return st;
        }
        r->flags |= VSW_ACTF_REDIRECT;
        r->redirect_port = (uint16_t)port;
    }
    if (act & VFW_ESW_A_MIRROR) {
        st = port_of(a, dp, vfw_ld_le16(b + R(mirror_port)), true, &port);
        if (st) {
            return st;
        }
        r->flags |= VSW_ACTF_MIRROR;
        r->mirror_port = (uint16_t)port;
    }
    if (act & VFW_ESW_A_SET_TC) {
        if (b[R(set_tc)] >= VSW_NUM_TC) {
            return VFW_AQ_S_RANGE;
        }
        r->flags |= VSW_ACTF_SET_TC;
        r->set_tc = b[R(set_tc)];
    }
    if (act & VFW_ESW_A_VLAN_PUSH) {
        r->vlan_vid = vfw_ld_le16(b + R(vlan_vid));
        r->vlan_pcp = b[R(vlan_prio)];
        if (r->vlan_vid < 1 || r->vlan_vid > 4094 || r->vlan_pcp > 7) {
            return VFW_AQ_S_RANGE;
        }
        r->flags |= VSW_ACTF_VLAN_PUSH;
    }
    if (act & VFW_ESW_A_VLAN_POP) {
        r->flags |= VSW_ACTF_VLAN_POP;
    }
    if (act & VFW_ESW_A_POLICE) {
        mc->mode = VSW_METER_BPS;
        mc->rate = vfw_ld_le64(b + R(police_rate));
        mc->burst = vfw_ld_le32(b + R(police_burst));
        if (!mc->rate || !mc->burst) {
            return VFW_AQ_S_RANGE;
        }
        *police = true;
        r->flags |= VSW_ACTF_METER;     /* the meter id: at install */
    }
    return VFW_AQ_S_OK;
}

/* ADD / REPLACE: read, decode, give a police action its meter (a new one,
 * or the replaced rule's), install; undo the meter if the switch refuses. */
static uint16_t rule_install(struct vfw_admin *a, struct vfw_dp *dp,
                             uint16_t op, uint8_t *d)
{
    vsw_switch *sw = vfw_dp_switch(dp);
    uint64_t cookie = vfw_ld_le64(d + P(vfw_aq_esw_rule_ref, cookie));
    uint8_t b[sizeof(struct vfw_esw_rule)];
    unsigned old_meter = 0;
    bool police, fresh = false;
    vsw_meter_cfg mc;
    vsw_trule t, old;
    int id = 0, rc;
    uint16_t st;

    if (vfw_ld_le16(d + P(vfw_aq_esw_rule_ref, len)) != sizeof(b) ||
        vfw_ld_le16(d + P(vfw_aq_esw_rule_ref, scope)) ||
        vfw_ld_le32(d + P(vfw_aq_esw_rule_ref, rsvd0)) ||
        vfw_ld_le64(d + P(vfw_aq_esw_rule_ref, packets)) ||
        vfw_ld_le64(d + P(vfw_aq_esw_rule_ref, bytes)) ||
        !vfw_all_zero(d + P(vfw_aq_esw_rule_ref, rsvd), 8)) {
        return VFW_AQ_S_INVAL;
    }
    if (a->ops.dma_read(a->ops.opaque, vfw_ld_le64(d + P(vfw_aq_esw_rule_ref, addr)),
                        b, sizeof(b))) {
        return VFW_AQ_S_DMA;
    }
    st = rule_decode(a, dp, cookie, b, &t, &police, &mc);
    if (st) {
        return st;
    }
    if (op == VFW_AQ_OP_ESW_RULE_REPLACE) {
        if (vsw_rule_get(sw, cookie, &old)) {
            return VFW_AQ_S_NOENT;
        }
        if (old.rule.flags & VSW_ACTF_METER) {
            old_meter = old.rule.meter;
        }
    } else if (!vsw_rule_get(sw, cookie, &old)) {
        return VFW_AQ_S_EXIST;
    }
    if (police) {
        /* a replace keeps its meter only after the switch took the rule:
         * until then the old rule polices with the old settings */
        id = vfw_dp_meter_alloc(dp, cookie);
        if (id < 0) {
            return VFW_AQ_S_NOSPC;
        }
        fresh = true;
        if (vsw_meter_set(sw, (unsigned)id, &mc, NULL)) {
            vfw_dp_meter_free(dp, (unsigned)id);
            return VFW_AQ_S_RANGE;
        }
        t.rule.meter = (uint16_t)id;
    }
    rc = op == VFW_AQ_OP_ESW_RULE_ADD ? vsw_rule_add(sw, &t, NULL) :
                                        vsw_rule_replace(sw, &t, NULL);
    if (rc) {
        if (fresh) {
            vfw_dp_meter_free(dp, (unsigned)id);
        }
        return st_of(rc);
    }
    if (old_meter) {
        vfw_dp_meter_free(dp, old_meter);
    }
    return VFW_AQ_S_OK;
}

static uint16_t rule_exec(struct vfw_admin *a, struct vfw_dp *dp, uint16_t op,
                          uint8_t *d)
{
    vsw_switch *sw = vfw_dp_switch(dp);
    uint64_t cookie = vfw_ld_le64(d + P(vfw_aq_esw_rule_ref, cookie));
    uint64_t pk = 0, by = 0;
    unsigned port;
    vsw_trule t;
    uint16_t st;
    int rc;

    if (!vfw_dp_switchdev(dp)) {
        return VFW_AQ_S_UNSUPPORTED;    /* offloads exist in switchdev only */
    }
    if (op == VFW_AQ_OP_ESW_RULE_ADD || op == VFW_AQ_OP_ESW_RULE_REPLACE) {
        return rule_install(a, dp, op, d);
    }
    /* DEL, FLUSH, STATS: only the cookie (FLUSH: only the scope) */
    if (vfw_ld_le64(d + P(vfw_aq_esw_rule_ref, addr)) ||
        vfw_ld_le16(d + P(vfw_aq_esw_rule_ref, len)) ||
        vfw_ld_le32(d + P(vfw_aq_esw_rule_ref, rsvd0)) ||
        vfw_ld_le64(d + P(vfw_aq_esw_rule_ref, packets)) ||
        vfw_ld_le64(d + P(vfw_aq_esw_rule_ref, bytes)) ||
        !vfw_all_zero(d + P(vfw_aq_esw_rule_ref, rsvd), 8) ||
        (op == VFW_AQ_OP_ESW_RULE_FLUSH ? cookie != 0 :
                                          vfw_ld_le16(d + P(vfw_aq_esw_rule_ref, scope)) != 0)) {
        return VFW_AQ_S_INVAL;
    }
    switch (op) {
    case VFW_AQ_OP_ESW_RULE_DEL:
        if (vsw_rule_get(sw, cookie, &t)) {
            return VFW_AQ_S_NOENT;
        }
        rc = vsw_rule_del(sw, cookie, NULL);
        if (!rc && (t.rule.flags & VSW_ACTF_METER)) {
            vfw_dp_meter_free(dp, t.rule.meter);
        }
        return st_of(rc);
    case VFW_AQ_OP_ESW_RULE_FLUSH:
        st = port_of(a, dp, vfw_ld_le16(d + P(vfw_aq_esw_rule_ref, scope)), false, &port);
        if (st) {
            return st;
        }
        rc = vsw_rule_flush_scope(sw, (uint16_t)port, NULL);
        if (rc < 0) {
            return st_of(rc);
        }
        vfw_dp_meter_gc(dp);
        vfw_st_le64(d + P(vfw_aq_esw_rule_ref, packets), (uint64_t)rc);
        return VFW_AQ_S_OK;
    default:    /* STATS */
        rc = vsw_rule_stats(sw, cookie, &pk, &by);
        if (rc) {
            return st_of(rc);
        }
        vfw_st_le64(d + P(vfw_aq_esw_rule_ref, packets), pk);
        vfw_st_le64(d + P(vfw_aq_esw_rule_ref, bytes), by);
        return VFW_AQ_S_OK;
    }
}

/* FDB_ADD / FDB_DEL: one entry offloaded from the PF's bridge. */
static uint16_t fdb_exec(struct vfw_admin *a, struct vfw_dp *dp, uint16_t op,
                         uint8_t *d)
{
    const uint8_t *mac = d + P(vfw_aq_esw_fdb, mac);
    uint16_t vid = vfw_ld_le16(d + P(vfw_aq_esw_fdb, vid));
    unsigned port = 0;
    uint16_t st;
    int rc;

    if (!vfw_dp_switchdev(dp)) {
        return VFW_AQ_S_UNSUPPORTED;
    }
    if (!vfw_all_zero(d + P(vfw_aq_esw_fdb, rsvd), sizeof(((struct vfw_aq_esw_fdb *)0)->rsvd)) ||
        (mac[0] & 1) || vfw_all_zero(mac, 6) ||
        (op == VFW_AQ_OP_ESW_FDB_DEL && vfw_ld_le16(d + P(vfw_aq_esw_fdb, port)))) {
        return VFW_AQ_S_INVAL;
    }
    if (vid > VFW_VLAN_VID_MAX) {
        return VFW_AQ_S_RANGE;
    }
    if (op == VFW_AQ_OP_ESW_FDB_ADD) {
        st = port_of(a, dp, vfw_ld_le16(d + P(vfw_aq_esw_fdb, port)), false, &port);
        if (st) {
            return st;
        }
    }
    rc = vfw_dp_fdb_offload(dp, mac, vid, op == VFW_AQ_OP_ESW_FDB_ADD ? (int)port : -1);
    return st_of(rc);
}

/* PORT_VLAN: a VLAN-aware bridge's VLANs on one of its ports. */
static uint16_t vlan_exec(struct vfw_admin *a, struct vfw_dp *dp, uint8_t *d)
{
    uint16_t port = vfw_ld_le16(d + P(vfw_aq_esw_vlan, port));
    uint16_t vid = vfw_ld_le16(d + P(vfw_aq_esw_vlan, vid));
    uint8_t o = d[P(vfw_aq_esw_vlan, op)], f = d[P(vfw_aq_esw_vlan, flags)];
    const uint8_t both = VFW_ESW_VLAN_F_PVID | VFW_ESW_VLAN_F_UNTAGGED;
    unsigned sw_port;
    uint16_t st;

    if (!vfw_dp_switchdev(dp)) {
        return VFW_AQ_S_UNSUPPORTED;
    }
    if (!vfw_all_zero(d + P(vfw_aq_esw_vlan, rsvd), sizeof(((struct vfw_aq_esw_vlan *)0)->rsvd)) ||
        o > VFW_ESW_VLAN_AWARE_ON || (f & ~both) ||
        (o != VFW_ESW_VLAN_ADD && f) ||
        (o >= VFW_ESW_VLAN_AWARE_OFF && vid)) {
        return VFW_AQ_S_INVAL;
    }
    if (o <= VFW_ESW_VLAN_ADD && (vid < 1 || vid > 4094)) {
        return VFW_AQ_S_RANGE;
    }
    if (f && f != both) {
        return VFW_AQ_S_UNSUPPORTED;    /* a tagged PVID, an untagged non-PVID */
    }
    st = port_of(a, dp, port, false, &sw_port);
    if (st) {
        return st;
    }
    return st_of(vfw_dp_esw_vlan(dp, port == VFW_ESW_PORT_UPLINK ? 0 : 1u + port, o,
                                 vid, f == both));
}

uint16_t admin_esw_exec(struct vfw_admin *a, uint16_t op, uint8_t *d)
{
    struct vfw_dp *dp = a->ops.qos_dp;

    if (vfw_ld_le16(d + D_VF) || vfw_ld_le32(d + D_RSVD)) {
        return VFW_AQ_S_INVAL;
    }
    if (!dp) {
        return VFW_AQ_S_UNSUPPORTED;    /* no data path behind the queue */
    }
    if (op == VFW_AQ_OP_ESW_PORT_VLAN) {
        return vlan_exec(a, dp, d);
    }
    if (op == VFW_AQ_OP_ESW_FDB_ADD || op == VFW_AQ_OP_ESW_FDB_DEL) {
        return fdb_exec(a, dp, op, d);
    }
    if (op != VFW_AQ_OP_ESW_SET_MODE && op != VFW_AQ_OP_ESW_GET_MODE) {
        return rule_exec(a, dp, op, d);
    }
    if (op == VFW_AQ_OP_ESW_GET_MODE) {
        memset(d + D_U, 0, D_U_LEN);
        d[P(vfw_aq_esw_mode, mode)] = vfw_dp_switchdev(dp) ?
            VFW_ESW_MODE_SWITCHDEV : VFW_ESW_MODE_LEGACY;
        vfw_st_le16(d + P(vfw_aq_esw_mode, num_vfs), (uint16_t)vfw_dp_num_vfs(dp));
        return VFW_AQ_S_OK;
    }
    /* SET: everything but the mode byte must be zero */
    if (!vfw_all_zero(d + D_U + 1, D_U_LEN - 1)) {
        return VFW_AQ_S_INVAL;
    }
    switch (d[P(vfw_aq_esw_mode, mode)]) {
    case VFW_ESW_MODE_LEGACY:
        return vfw_dp_set_switchdev(dp, false) ? VFW_AQ_S_RANGE : VFW_AQ_S_OK;
    case VFW_ESW_MODE_SWITCHDEV:
        return vfw_dp_set_switchdev(dp, true) ? VFW_AQ_S_RANGE : VFW_AQ_S_OK;
    default:
        return VFW_AQ_S_RANGE;
    }
}
