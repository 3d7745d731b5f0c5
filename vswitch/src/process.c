/* process.c - the data path: ingress checks, VLAN, spoof check, traffic
 * class, FDB forwarding/flooding/learning, ACL (with its VLAN push / pop),
 * meters, egress set; and the egress rewrite of the frame (VLAN insert /
 * strip). */
#include "vsw_internal.h"
#include <string.h>

#define BURST 32

typedef struct pstate {
    unsigned out;           /* unicast port or VSW_PORT_FLOOD             */
    uint32_t len;
    uint8_t  mcast;         /* group destination MAC (incl. broadcast)    */
    uint8_t  tagged;        /* the frame arrived with an 802.1Q tag       */
    uint64_t dmac;          /* destination MAC (48 bits), for a VLAN
                               action's second FDB lookup                 */
} pstate;

static void drop(vsw_switch *sw, unsigned in_port, vsw_decision *d, unsigned reason)
{
    d->drop = (uint8_t)reason;
    memset(&d->egress, 0, sizeof(d->egress));
    if (in_port < sw->nports)
        vsw_ctr_add(&sw->pc[in_port].drops[reason], 1);
}

/* Receive counters, once per call (a burst comes from one port). */
static void count_rx(vsw_switch *sw, unsigned in_port, size_t frames, size_t bytes)
{
    if (in_port < sw->nports) {
        vsw_ctr_add(&sw->pc[in_port].rx_packets, frames);
        vsw_ctr_add(&sw->pc[in_port].rx_bytes, bytes);
    }
}

/* Step 6's destination of a frame in VLAN vid: the FDB's port (static,
 * then learned for unicast), the port's miss_port, or -1 (flood). */
static inline __attribute__((always_inline)) int
fdb_dest(vsw_switch *sw, const vsw_cfgset *cs, const vsw_port_cfg *pc,
         const pstate *ps, uint16_t vid, uint64_t now)
{
    int dst = -1;
    if (ps->dmac != 0xffffffffffffull && !pc->fdb_off) {    /* not broadcast */
        uint64_t dk = vsw_fdb_key48(ps->dmac, vid);
        dst = vsw_fdb_find(cs->fdb, dk);
        if (dst < 0 && !ps->mcast)
            dst = vsw_learn_find(&sw->learned, dk, now, sw->cfg.fdb_age_ns);
    }
    if (VSW_UNLIKELY(dst < 0 && pc->miss_port != VSW_PORT_ANY))
        dst = pc->miss_port;                /* switchdev: to the slow path */
    return dst;
}

/* Steps 1-6: returns 0 if the frame continues to the ACL (key built).
 * Inlined into the burst loop (as is egress): at -O3 GCC keeps them as
 * calls, and passing the nine arguments for every frame cost ~3 ns. */
/* `peek` (a constant at every call, folded away): vsw_frame_tc's look at a
 * frame that changes nothing: no counters, no learning. */
static inline __attribute__((always_inline)) int
ingress(vsw_switch *sw, const vsw_cfgset *cs, unsigned in_port, const uint8_t *frame,
        size_t len, uint64_t now, pstate *ps, vsw_key *key, vsw_decision *d, const int peek)
{
    memset(d, 0, sizeof(*d));
    d->rule = -1;
    d->mirror_port = VSW_PORT_ANY;
    d->in_port = (uint16_t)in_port;
    d->acl_gen = cs->acl->gen;
    if (in_port >= sw->nports) {
        d->drop = VSW_DROP_LINK_DOWN;
        return -1;
    }
    const vsw_port_cfg *pc = &cs->ports->cfg[in_port];
    if (!pc->link_up) {
        drop(sw, peek ? VSW_PORT_ANY : in_port, d, VSW_DROP_LINK_DOWN);
        return -1;
    }
    vsw_l2 l2;
    if (vsw_parse_key(frame, len, key, &l2)) {
        drop(sw, peek ? VSW_PORT_ANY : in_port, d, VSW_DROP_MALFORMED);
        return -1;
    }
    ps->len = (uint32_t)len;
    d->l2_len = l2.l2_len;
    uint16_t vid;
    if (pc->vlan_mode == VSW_VLAN_ACCESS) {
        if (l2.tagged && l2.vid != 0) {
            drop(sw, peek ? VSW_PORT_ANY : in_port, d, VSW_DROP_VLAN);
            return -1;
        }
        vid = pc->pvid;
        d->pcp = l2.tagged ? l2.pcp : pc->pvid_pcp;
    } else {
        if (l2.tagged && l2.vid != 0) {
            vid = l2.vid;
            if (!((pc->allowed[vid >> 6] >> (vid & 63)) & 1)) {
                drop(sw, peek ? VSW_PORT_ANY : in_port, d, VSW_DROP_VLAN);
                return -1;
            }
        } else {
            vid = pc->native_vid;
        }
        d->pcp = l2.tagged ? l2.pcp : 0;
    }
    d->vid = vid;
    /* the MACs are bits 16-63 of key words 1 (source) and 2 (destination);
     * the group bit of a MAC's first byte is bit 40 of the 48-bit value */
    uint64_t src = key->w[1] >> 16, dmac = key->w[2] >> 16;
    if ((src >> 40 & 1) || (pc->spoofchk && src != vsw_mac48(pc->mac))) {
        drop(sw, peek ? VSW_PORT_ANY : in_port, d, VSW_DROP_SPOOF);
        return -1;
    }
    unsigned tc = pc->default_tc;
    if (pc->qos_trust == VSW_TRUST_PCP && l2.tagged)
        tc = pc->pcp_to_tc[l2.pcp];
    else if (pc->qos_trust == VSW_TRUST_DSCP && (key->w[0] & VSW_K0_IP))
        tc = pc->dscp_to_tc[key->w[7] >> 48 & 63];
    d->tc = (uint8_t)tc;

    /* forwarding */
    if (!peek && VSW_UNLIKELY(atomic_load_explicit(&sw->flush_learned, memory_order_relaxed))) {
        atomic_store_explicit(&sw->flush_learned, 0, memory_order_relaxed);
        vsw_learn_flush(&sw->learned);
    }
    if (pc->learn && !peek) {
        uint64_t sk = vsw_fdb_key48(src, vid);
        if (vsw_fdb_find(cs->fdb, sk) < 0)
            vsw_learn_update(&sw->learned, sk, in_port, now, sw->cfg.fdb_age_ns);
    }
    ps->mcast = dmac >> 40 & 1;
    ps->tagged = l2.tagged;
    ps->dmac = dmac;
    int dst = fdb_dest(sw, cs, pc, ps, vid, now);
    ps->out = dst >= 0 ? (unsigned)dst : VSW_PORT_FLOOD;
    /* ports are 8-bit key values, VSW_PORT_FLOOD is 0xfe */
    uint64_t op = dst >= 0 ? (unsigned)dst & 0xff : 0xfe;
    key->w[0] |= (uint64_t)(in_port & 0xff) << 56 | op << 48 | (uint64_t)vid << 32;
    return 0;
}

/* Step 7 for the ACL result `rank` (UINT32_MAX: no rule matched, nothing
 * to do): the matched rule's actions that apply whatever its verdict, the
 * rule's counters and d->rule.  Returns 1 if the rule drops the frame;
 * otherwise the rule's traffic class is applied (mirror and meter are
 * egress()'s).  Written without branches on the verdict and on
 * VSW_ACTF_SET_TC: with rule sets mixing both verdicts they are data
 * dependent (the bench at 65536 rules ran 57.6 ns a frame, 53.3 with every
 * rule made permit; without the branches, and with the burst split below,
 * ~2 ns of that came back). */
static inline __attribute__((always_inline)) int
rule_hit(const vsw_acl *acl, const pstate *ps, uint32_t rank, vsw_decision *d)
{
    if (rank == UINT32_MAX)
        return 0;
    vsw_act *r = &acl->act[rank];
    d->rule = (int32_t)r->index;
    if (r->flags & VSW_ACTF_COUNT) {
        vsw_ctr_add(&r->packets, 1);
        vsw_ctr_add(&r->bytes, ps->len);
    }
    unsigned dropped = r->verdict == VSW_ACT_DROP;
    /* all ones if the class is set (a `?:` here compiled to a jump) */
    uint8_t set = (uint8_t)-(uint8_t)((r->flags & VSW_ACTF_SET_TC ? 1 : 0) & (dropped ^ 1));
    d->tc = (uint8_t)((r->set_tc & set) | (d->tc & ~set));
    return (int)dropped;
}

/* A rule's VLAN push or pop (tc's act_vlan on a representor's ingress,
 * before the bridge): the frame's VLAN changes, and it is forwarded in its
 * new VLAN, so the FDB is asked again (a redirect names its port anyway).
 * The ACL matched the frame as it arrived.  Learning keeps the arrival
 * VLAN: rules exist in switchdev mode only, where nothing learns. */
static __attribute__((noinline)) void
vlan_action(vsw_switch *sw, const vsw_cfgset *cs, const vsw_port_cfg *pc,
            const vsw_crule *c, int redirect, uint64_t now, pstate *ps,
            vsw_decision *d)
{
    if (c->flags & VSW_ACTF_VLAN_PUSH) {
        d->vlan_act = VSW_VLAN_ACT_PUSH;
        d->vid = c->vlan_tci & 0xfff;
        d->pcp = (uint8_t)(c->vlan_tci >> 13);
    } else {
        if (!ps->tagged)
            return;         /* nothing to pop: the frame goes on as it is */
        d->vlan_act = VSW_VLAN_ACT_POP;
        /* as if it had arrived untagged (an access port only admits
         * priority tags, so its frames stay in the PVID) */
        if (pc->vlan_mode == VSW_VLAN_ACCESS) {
            d->vid = pc->pvid;
            d->pcp = pc->pvid_pcp;
        } else {
            d->vid = pc->native_vid;
            d->pcp = 0;
        }
    }
    if (!redirect) {
        int dst = fdb_dest(sw, cs, pc, ps, d->vid, now);
        ps->out = dst >= 0 ? (unsigned)dst : VSW_PORT_FLOOD;
    }
}

/* Steps 7-9 for a frame the ACL did not drop (rank: its rule, or
 * UINT32_MAX): the rule's meter and mirror, the port's meters, the egress
 * set and the transmit counters. */
static inline __attribute__((always_inline)) unsigned
egress(vsw_switch *sw, const vsw_cfgset *cs, unsigned in_port, pstate *ps, uint32_t rank,
       uint64_t now, vsw_decision *d)
{
    const vsw_acl *acl = cs->acl;
    const vsw_port_cfg *pc = &cs->ports->cfg[in_port];
    uint16_t meters[3];
    unsigned nm = 0;
    int redirect = 0;
    if (rank != UINT32_MAX) {
        const vsw_act *r = &acl->act[rank];
        if (r->flags & VSW_ACTF_METER)
            meters[nm++] = r->meter;
        if (r->flags & VSW_ACTF_MIRROR)
            d->mirror_port = r->mirror_port;
        if (VSW_UNLIKELY(r->flags & VSW_ACTF_REDIRECT)) {
            ps->out = r->redirect_port;
            redirect = 1;
        }
        if (VSW_UNLIKELY(r->flags & (VSW_ACTF_VLAN_PUSH | VSW_ACTF_VLAN_POP)))
            vlan_action(sw, cs, pc, &acl->rules[rank], redirect, now, ps, d);
    }
    if (pc->tc_meter[d->tc])
        meters[nm++] = pc->tc_meter[d->tc];
    if (pc->meter)
        meters[nm++] = pc->meter;
    if (nm && !vsw_meters_police(sw, cs->meters, meters, nm, ps->len, now)) {
        drop(sw, in_port, d, VSW_DROP_METER);
        return 0;
    }
    const vsw_ports *pt = cs->ports;
    const vsw_portset *mem = &pt->member->v[d->vid];
    /* built in place word by word: a local set copied into the decision
     * was stored as 8-byte words and reloaded as one 16-byte vector, which
     * store forwarding cannot serve (measured: ~4 ns a frame) */
    vsw_portset *eg = &d->egress;
    if (ps->out != VSW_PORT_FLOOD) {
        /* a redirect (tc mirred) names its port whatever the VLAN: only
         * the port's link counts */
        if (ps->out != in_port &&
            vsw_portset_has(VSW_UNLIKELY(redirect) ? &pt->up : mem, ps->out))
            vsw_portset_add(eg, ps->out);
    } else {
        d->flood = 1;
        int uuc = !ps->mcast;
        for (int i = 0; i < 3; i++)
            eg->w[i] = mem->w[i] & (uuc ? pt->promisc.w[i] : ~0ull);
        vsw_portset_del(eg, in_port);
    }
    if (d->mirror_port != VSW_PORT_ANY && vsw_portset_has(&pt->up, d->mirror_port))
        vsw_portset_add(eg, d->mirror_port);
    else
        d->mirror_port = VSW_PORT_ANY;
    unsigned n = 0;
    if (ps->out != VSW_PORT_FLOOD && d->mirror_port == VSW_PORT_ANY) {
        /* unicast, no mirror (the common case): at most one port, so no
         * walk over the set and its hard-to-predict loop branches */
        if (vsw_portset_has(eg, ps->out)) {
            vsw_ctr_add(&sw->pc[ps->out].tx_packets, 1);
            vsw_ctr_add(&sw->pc[ps->out].tx_bytes, ps->len);
            n = 1;
        }
    } else {
        for (int i = 0; i < 3; i++)
            for (uint64_t w = eg->w[i]; w; w &= w - 1) {
                unsigned port = (unsigned)(i * 64 + __builtin_ctzll(w));
                vsw_ctr_add(&sw->pc[port].tx_packets, 1);
                vsw_ctr_add(&sw->pc[port].tx_bytes, ps->len);
                n++;
            }
    }
    if (!n)
        drop(sw, in_port, d, VSW_DROP_NO_DEST);
    return n;
}

/* Steps 7-9 for one frame given its ACL result (rank or UINT32_MAX). */
static inline __attribute__((always_inline)) unsigned
act_one(vsw_switch *sw, const vsw_cfgset *cs, unsigned in_port, pstate *ps, uint32_t rank,
        uint64_t now, vsw_decision *d)
{
    if (rule_hit(cs->acl, ps, rank, d)) {
        drop(sw, in_port, d, VSW_DROP_ACL);
        return 0;
    }
    return egress(sw, cs, in_port, ps, rank, now, d);
}

static enum vsw_leaf_isa leaf_isa(int c)
{
    return c == VSW_CLASSIFIER_TREE_SCALAR ? VSW_LEAF_PORTABLE :
           c == VSW_CLASSIFIER_TREE_AVX2 ? VSW_LEAF_AVX2 : VSW_LEAF_BEST;
}

static uint32_t classify(vsw_switch *sw, const vsw_acl *a, const vsw_key *k)
{
    int c = atomic_load_explicit(&sw->classifier, memory_order_relaxed);
    if (c == VSW_CLASSIFIER_LINEAR)
        return vsw_acl_lookup_linear(a, k);
    return vsw_acl_lookup_tree(a, k, leaf_isa(c));
}

unsigned vsw_process(vsw_switch *sw, unsigned in_port, const uint8_t *frame,
                     size_t len, uint64_t now_ns, vsw_decision *d)
{
    vsw_dp_enter(sw);
    const vsw_cfgset *cs = vsw_cur(sw);
    pstate ps;
    vsw_key k;
    unsigned n = 0;
    count_rx(sw, in_port, 1, len);
    if (ingress(sw, cs, in_port, frame, len, now_ns, &ps, &k, d, 0) == 0)
        n = act_one(sw, cs, in_port, &ps, classify(sw, cs->acl, &k), now_ns, d);
    vsw_dp_exit(sw);
    return n;
}

int vsw_frame_tc(vsw_switch *sw, unsigned in_port, const uint8_t *frame, size_t len,
                 uint64_t now_ns)
{
    vsw_dp_enter(sw);
    const vsw_cfgset *cs = vsw_cur(sw);
    pstate ps;
    vsw_key k;
    vsw_decision d;
    int tc = -1;
    if (ingress(sw, cs, in_port, frame, len, now_ns, &ps, &k, &d, 1) == 0) {
        /* step 7 as rule_hit does it, without the rule's counters */
        uint32_t rank = classify(sw, cs->acl, &k);
        tc = d.tc;
        if (rank != UINT32_MAX) {
            const vsw_act *r = &cs->acl->act[rank];
            if (r->verdict == VSW_ACT_DROP)
                tc = -1;
            else if (r->flags & VSW_ACTF_SET_TC)
                tc = r->set_tc;
        }
    }
    vsw_dp_exit(sw);
    return tc;
}

void vsw_process_burst(vsw_switch *sw, unsigned in_port, const uint8_t *const *frames,
                       const size_t *lens, size_t n, uint64_t now_ns, vsw_decision *d)
{
    vsw_dp_enter(sw);
    const vsw_cfgset *cs = vsw_cur(sw);
    int c = atomic_load_explicit(&sw->classifier, memory_order_relaxed);
    pstate ps[BURST];
    vsw_key keys[BURST];
    uint32_t rank[BURST];
    unsigned idx[BURST];
    while (n) {
        size_t m = n < BURST ? n : BURST, live = 0, bytes = 0;
        for (size_t i = 0; i < m; i++)
            bytes += lens[i];
        count_rx(sw, in_port, m, bytes);
        for (size_t i = 0; i < m; i++)
            if (ingress(sw, cs, in_port, frames[i], lens[i], now_ns, &ps[i], &keys[live], &d[i], 0) == 0)
                idx[live++] = (unsigned)i;
        if (c == VSW_CLASSIFIER_LINEAR)
            for (size_t j = 0; j < live; j++)
                rank[j] = vsw_acl_lookup_linear(cs->acl, &keys[j]);
        else
            vsw_acl_lookup_tree_burst(cs->acl, keys, live, rank, leaf_isa(c));
        if (cs->acl->bytes >= VSW_ACL_BIG)  /* action and counters: warm up */
            for (size_t j = 0; j < live; j++)
                if (rank[j] != UINT32_MAX)
                    __builtin_prefetch(&cs->acl->act[rank[j]], 1);
        if (cs->acl->bytes < VSW_ACL_SMALL) {
            /* small sets (in the bench, 10-73% of frames match): one loop */
            for (size_t j = 0; j < live; j++)
                act_one(sw, cs, in_port, &ps[idx[j]], rank[j], now_ns, &d[idx[j]]);
        } else {
            /* the rules' verdicts, then the dropped frames and the passed
             * ones in two loops: a branch on each frame's verdict would
             * mispredict (see rule_hit).  Meters see the passed frames in
             * arrival order, and nothing else depends on the order of
             * frames.  Measured at 4096 / 65536 rules: ~1 / ~2 ns a frame
             * faster; with 16 or 256 rules the extra loop costs ~1.3 ns. */
            unsigned pass[BURST], dropped[BURST];
            size_t np = 0, nd = 0;
            for (size_t j = 0; j < live; j++) {
                int dr = rule_hit(cs->acl, &ps[idx[j]], rank[j], &d[idx[j]]);
                dropped[nd] = pass[np] = (unsigned)j;
                nd += (size_t)dr;
                np += (size_t)!dr;
            }
            for (size_t j = 0; j < nd; j++)
                drop(sw, in_port, &d[idx[dropped[j]]], VSW_DROP_ACL);
            for (size_t j = 0; j < np; j++) {
                size_t f = pass[j];
                egress(sw, cs, in_port, &ps[idx[f]], rank[f], now_ns, &d[idx[f]]);
            }
        }
        frames += m;
        lens += m;
        d += m;
        n -= m;
    }
    vsw_dp_exit(sw);
}

size_t vsw_egress_frame(const vsw_switch *sw, const vsw_decision *d, unsigned port,
                        const uint8_t *frame, size_t len, uint8_t *out, size_t cap)
{
    if (len < 14 || port >= sw->nports)
        return 0;
    int tagged = frame[12] == 0x81 && frame[13] == 0x00 && len >= 18;
    if (port == d->mirror_port) {
        /* as received, with the rule's VLAN action done on it */
        size_t skip = d->vlan_act == VSW_VLAN_ACT_POP && tagged ? 4 : 0;
        size_t add = d->vlan_act == VSW_VLAN_ACT_PUSH ? 4 : 0;
        if (cap < len - skip + add)
            return 0;
        memcpy(out, frame, 12);
        if (add) {
            uint16_t tci = (uint16_t)(((unsigned)d->pcp << 13) | d->vid);
            out[12] = 0x81;
            out[13] = 0x00;
            out[14] = (uint8_t)(tci >> 8);
            out[15] = (uint8_t)tci;
        }
        memcpy(out + 12 + add, frame + 12 + skip, len - 12 - skip);
        return len - skip + add;
    }
    vsw_dp_enter((vsw_switch *)sw);
    const vsw_port_cfg *pc = &vsw_cur(sw)->ports->cfg[port];
    int want = pc->vlan_mode == VSW_VLAN_TRUNK && d->vid != pc->native_vid;
    vsw_dp_exit((vsw_switch *)sw);
    /* bytes to skip: MACs (+ tag; a pushed tag keeps the frame's own
     * inside it) */
    size_t body = tagged && d->vlan_act != VSW_VLAN_ACT_PUSH ? 16 : 12;
    size_t need = 12 + (want ? 4 : 0) + (len - body);
    if (cap < need)
        return 0;
    memcpy(out, frame, 12);
    size_t o = 12;
    if (want) {
        uint16_t tci = (uint16_t)(((unsigned)d->pcp << 13) | d->vid);
        out[o++] = 0x81;
        out[o++] = 0x00;
        out[o++] = (uint8_t)(tci >> 8);
        out[o++] = (uint8_t)tci;
    }
    memcpy(out + o, frame + body, len - body);
    return need;
}
