/* switch.c - switch lifetime, publication of configuration (build, then
 * swap one pointer) and deferred reclamation of old tables.
 *
 * Reclamation is quiescent-state based: the data path stores the global
 * epoch into reader_qs at the end of every call (a quiescent point: it holds
 * no table pointer then).  A table retired when the epoch became E is freed
 * once reader_qs >= E, or when the data path is offline (UINT64_MAX).
 * Nothing blocks: freeing is retried on each configuration call and by
 * vsw_reclaim(). */
#include "vsw_internal.h"
#include <stdlib.h>
#include <string.h>

static void free_cfgset(void *p) { free(p); }
static void free_acl(void *p) { vsw_acl_free(p); }
static void free_fdb(void *p) { vsw_fdb_free(p); }
static void free_ports(void *p) { vsw_ports_free(p); }

vsw_cfgset *vsw_cfg_clone(const vsw_switch *sw)
{
    vsw_cfgset *c = malloc(sizeof(*c));
    if (c)
        *c = *vsw_cur(sw);
    return c;
}

static void retire(vsw_switch *sw, void *obj, void (*fn)(void *), uint64_t epoch)
{
    vsw_retired *r = malloc(sizeof(*r));
    if (!r) {
        /* cannot defer: wait is not an option, leak rather than crash */
        return;
    }
    r->obj = obj;
    r->fn = fn;
    r->epoch = epoch;
    r->next = sw->retired;
    sw->retired = r;
}

size_t vsw_reclaim(vsw_switch *sw)
{
    uint64_t qs = atomic_load_explicit(&sw->reader_qs, memory_order_acquire);
    size_t left = 0;
    vsw_retired **pp = &sw->retired;
    while (*pp) {
        vsw_retired *r = *pp;
        if (qs >= r->epoch) {
            *pp = r->next;
            r->fn(r->obj);
            free(r);
        } else {
            left++;
            pp = &r->next;
        }
    }
    return left;
}

void vsw_publish(vsw_switch *sw, vsw_cfgset *fresh, void *old_obj,
                 void (*old_fn)(void *))
{
    vsw_cfgset *old = atomic_exchange_explicit(&sw->cur, fresh, memory_order_seq_cst);
    uint64_t e = atomic_fetch_add_explicit(&sw->epoch, 1, memory_order_seq_cst) + 1;
    retire(sw, old, free_cfgset, e);
    if (old_obj)
        retire(sw, old_obj, old_fn, e);
    atomic_thread_fence(memory_order_seq_cst);
    vsw_reclaim(sw);
}

/* ---- data-path side of the protocol ---- */
void vsw_dp_enter(vsw_switch *sw)
{
    if (VSW_UNLIKELY(!sw->dp_online))
        vsw_datapath_online(sw);
}

void vsw_dp_exit(vsw_switch *sw)
{
    uint64_t e = atomic_load_explicit(&sw->epoch, memory_order_acquire);
    atomic_store_explicit(&sw->reader_qs, e, memory_order_release);
}

void vsw_quiescent(vsw_switch *sw)
{
    if (sw->dp_online)
        vsw_dp_exit(sw);
}

void vsw_datapath_online(vsw_switch *sw)
{
    uint64_t e = atomic_load_explicit(&sw->epoch, memory_order_acquire);
    atomic_store_explicit(&sw->reader_qs, e, memory_order_seq_cst);
    atomic_thread_fence(memory_order_seq_cst);
    sw->dp_online = 1;
}

void vsw_datapath_offline(vsw_switch *sw)
{
    sw->dp_online = 0;
    atomic_store_explicit(&sw->reader_qs, UINT64_MAX, memory_order_release);
}

/* ---- lifetime ---- */
vsw_switch *vsw_create(const vsw_config *cfg)
{
    vsw_config c = {0};
    if (cfg)
        c = *cfg;
    if (c.num_vfs > VSW_MAX_VFS)
        return NULL;
    if (!c.fdb_learn_max)
        c.fdb_learn_max = 4096;
    if (!c.fdb_age_ns)
        c.fdb_age_ns = 300ull * 1000000000ull;
    if (!c.sched_qlen)
        c.sched_qlen = 1024;
    vsw_switch *sw = calloc(1, sizeof(*sw));
    if (!sw)
        return NULL;
    sw->cfg = c;
    sw->num_vfs = c.num_vfs;
    sw->nports = 2 + c.num_vfs;
    atomic_init(&sw->epoch, 1);
    atomic_init(&sw->reader_qs, UINT64_MAX);
    vsw_cfgset *cs = calloc(1, sizeof(*cs));
    vsw_error e;
    if (!cs || vsw_learn_init(&sw->learned, c.fdb_learn_max))
        goto fail;
    atomic_init(&sw->cur, cs);
    cs->ports = calloc(1, vsw_ports_size(sw->nports));
    cs->meters = calloc(1, sizeof(vsw_meters));
    cs->sched = calloc(1, sizeof(vsw_scheds));
    cs->fdb = vsw_fdb_clone_set(NULL, 0, -1);
    if (!cs->ports || !cs->meters || !cs->sched || !cs->fdb ||
        vsw_acl_compile(NULL, 0, sw->nports, &cs->acl, &e))
        goto fail;
    for (unsigned p = 0; p < VSW_MAX_PORTS; p++) {
        if (p < sw->nports)
            vsw_port_cfg_default(&cs->ports->cfg[p]);
        vsw_sched_cfg_default(&cs->sched->cfg[p]);
    }
    cs->ports->cfg[VSW_PORT_UPLINK].learn = true;
    if (vsw_ports_derive(cs->ports, sw->nports))
        goto fail;
    return sw;
fail:
    if (cs) {
        atomic_init(&sw->cur, cs);
    }
    vsw_destroy(sw);
    return NULL;
}

void vsw_destroy(vsw_switch *sw)
{
    if (!sw)
        return;
    vsw_datapath_offline(sw);
    vsw_reclaim(sw);
    vsw_rtab_free(sw);      /* after reclaim: retired sets credit it */
    vsw_cfgset *cs = atomic_load(&sw->cur);
    if (cs) {
        vsw_ports_free(cs->ports);
        vsw_meters_free(cs->meters);
        free(cs->sched);
        vsw_fdb_free(cs->fdb);
        vsw_acl_free(cs->acl);
        free(cs);
    }
    for (unsigned p = 0; p < VSW_MAX_PORTS; p++)
        vsw_sched_port_free(sw->sched[p]);
    vsw_learn_fini(&sw->learned);
    free(sw);
}

unsigned vsw_num_ports(const vsw_switch *sw) { return sw->nports; }

/* ---- ACL ---- */
int vsw_acl_set(vsw_switch *sw, const vsw_rule *rules, size_t n, vsw_error *err)
{
    vsw_acl *a;
    int rc = vsw_acl_compile(rules, n, sw->nports, &a, err);
    if (rc)
        return rc;
    vsw_cfgset *fresh = vsw_cfg_clone(sw);
    if (!fresh) {
        vsw_acl_free(a);
        return vsw_err(err, -ENOMEM, -1, "out of memory");
    }
    a->gen = ++sw->acl_gen;
    vsw_acl *old = fresh->acl;
    fresh->acl = a;
    vsw_publish(sw, fresh, old, free_acl);
    vsw_rtab_reset(sw);     /* a whole set replaces the rule table's rules */
    return 0;
}

void vsw_set_classifier(vsw_switch *sw, enum vsw_classifier c)
{
    atomic_store_explicit(&sw->classifier, (int)c, memory_order_relaxed);
}

void vsw_acl_get_stats(const vsw_switch *sw, vsw_acl_stats *st)
{
    const vsw_acl *a = vsw_cur(sw)->acl;
    memset(st, 0, sizeof(*st));
    st->rules = a->nrules;
    st->trees = a->ntrees;
    st->bytes = a->bytes;
    for (size_t t = 0; t < a->ntrees; t++) {
        st->nodes += a->trees[t].nnodes;
        st->leaf_refs += a->trees[t].nleafrefs;
        if (a->trees[t].depth > st->max_depth)
            st->max_depth = a->trees[t].depth;
    }
}

int vsw_rule_counters_get(const vsw_switch *sw, unsigned rule, uint64_t *packets,
                          uint64_t *bytes)
{
    const vsw_acl *a = vsw_cur(sw)->acl;
    if (a->serial)
        return -EOPNOTSUPP;     /* rule-table rules: vsw_rule_stats by cookie */
    if (rule >= a->nrules)
        return -EINVAL;
    uint32_t rk = a->rank_of[rule];
    *packets = vsw_ctr_get(&a->act[rk].packets);
    *bytes = vsw_ctr_get(&a->act[rk].bytes);
    return 0;
}

/* ---- FDB (static) ---- */
static int fdb_change(vsw_switch *sw, const uint8_t mac[6], uint16_t vid, int port,
                      vsw_error *err)
{
    if (!mac)
        return vsw_err(err, -EINVAL, -1, "NULL MAC");
    if (vid > 4095)
        return vsw_err(err, -EINVAL, -1, "VLAN id %u > 4095", vid);
    vsw_cfgset *cur = vsw_cur(sw);
    uint64_t key = vsw_fdb_key(mac, vid);
    if (port < 0 && vsw_fdb_find(cur->fdb, key) < 0)
        return vsw_err(err, -ENOENT, -1, "no FDB entry for that MAC/VLAN");
    if (port >= 0 && cur->fdb->n >= 65536 && vsw_fdb_find(cur->fdb, key) < 0)
        return vsw_err(err, -ENOSPC, -1, "FDB full (65536 static entries)");
    vsw_fdb *f = vsw_fdb_clone_set(cur->fdb, key, port);
    vsw_cfgset *fresh = f ? vsw_cfg_clone(sw) : NULL;
    if (!fresh) {
        vsw_fdb_free(f);
        return vsw_err(err, -ENOMEM, -1, "out of memory");
    }
    fresh->fdb = f;
    vsw_publish(sw, fresh, cur->fdb, free_fdb);
    return 0;
}

int vsw_fdb_add(vsw_switch *sw, const uint8_t mac[6], uint16_t vid, unsigned port,
                vsw_error *err)
{
    if (port >= sw->nports)
        return vsw_err(err, -EINVAL, -1, "port %u does not exist", port);
    return fdb_change(sw, mac, vid, (int)port, err);
}

int vsw_fdb_del(vsw_switch *sw, const uint8_t mac[6], uint16_t vid, vsw_error *err)
{
    return fdb_change(sw, mac, vid, -1, err);
}

int vsw_fdb_lookup_static(const vsw_switch *sw, const uint8_t mac[6], uint16_t vid)
{
    return vsw_fdb_find(vsw_cur(sw)->fdb, vsw_fdb_key(mac, vid & 0xfff));
}

void vsw_fdb_flush_learned(vsw_switch *sw)
{
    atomic_store_explicit(&sw->flush_learned, 1, memory_order_release);
}

void vsw_fdb_learn_stats(const vsw_switch *sw, vsw_learn_stats *st)
{
    st->entries = sw->learned.n;
    st->max = sw->learned.max;
    st->not_learned = sw->learned.not_learned;
    st->compactions = sw->learned.compactions;
}

/* ---- ports ---- */
static void derive_flags(vsw_ports *p, unsigned i);
static void derive_member(vsw_portset *m, const vsw_port_cfg *c, unsigned i);

/* Do configs a and b put their port in the same VLANs? */
static int same_membership(const vsw_port_cfg *a, const vsw_port_cfg *b)
{
    if (!a->link_up || !b->link_up)
        return a->link_up == b->link_up;
    if (a->vlan_mode != b->vlan_mode)
        return 0;
    if (a->vlan_mode == VSW_VLAN_ACCESS)
        return a->pvid == b->pvid;
    return a->native_vid == b->native_vid &&
           !memcmp(a->allowed, b->allowed, sizeof(a->allowed));
}

int vsw_port_set(vsw_switch *sw, unsigned port, const vsw_port_cfg *c, vsw_error *err)
{
    if (port >= sw->nports)
        return vsw_err(err, -EINVAL, -1, "port %u does not exist", port);
    if (!c)
        return vsw_err(err, -EINVAL, -1, "NULL port config");
    if (c->vlan_mode > VSW_VLAN_ACCESS)
        return vsw_err(err, -EINVAL, -1, "port %u: unknown VLAN mode %u", port, c->vlan_mode);
    if (c->vlan_mode == VSW_VLAN_ACCESS && (c->pvid == 0 || c->pvid > 4095))
        return vsw_err(err, -EINVAL, -1, "port %u: access VLAN %u not in 1..4095", port, c->pvid);
    if (c->native_vid > 4095)
        return vsw_err(err, -EINVAL, -1, "port %u: native VLAN %u > 4095", port, c->native_vid);
    if (c->pvid_pcp > 7)
        return vsw_err(err, -EINVAL, -1, "port %u: PCP %u > 7", port, c->pvid_pcp);
    if (c->default_tc >= VSW_NUM_TC)
        return vsw_err(err, -EINVAL, -1, "port %u: default TC %u > 7", port, c->default_tc);
    if (c->qos_trust > VSW_TRUST_DSCP)
        return vsw_err(err, -EINVAL, -1, "port %u: unknown QoS trust %u", port, c->qos_trust);
    for (int i = 0; i < 8; i++)
        if (c->pcp_to_tc[i] >= VSW_NUM_TC)
            return vsw_err(err, -EINVAL, -1, "port %u: pcp_to_tc[%d] > 7", port, i);
    for (int i = 0; i < 64; i++)
        if (c->dscp_to_tc[i] >= VSW_NUM_TC)
            return vsw_err(err, -EINVAL, -1, "port %u: dscp_to_tc[%d] > 7", port, i);
    if (c->meter >= VSW_MAX_METERS)
        return vsw_err(err, -EINVAL, -1, "port %u: meter %u out of range", port, c->meter);
    for (int i = 0; i < VSW_NUM_TC; i++)
        if (c->tc_meter[i] >= VSW_MAX_METERS)
            return vsw_err(err, -EINVAL, -1, "port %u: tc_meter[%d] out of range", port, i);
    if (c->miss_port != VSW_PORT_ANY && (c->miss_port >= sw->nports || c->miss_port == port))
        return vsw_err(err, -EINVAL, -1, "port %u: miss port %u is not another port",
                       port, c->miss_port);
    vsw_cfgset *cur = vsw_cur(sw);
    const vsw_ports *old = cur->ports;
    int share = same_membership(&old->cfg[port], c);
    vsw_ports *p = malloc(vsw_ports_size(sw->nports));
    vsw_vmember *m = p && !share ? malloc(sizeof(*m)) : NULL;
    vsw_cfgset *fresh = p && (share || m) ? vsw_cfg_clone(sw) : NULL;
    if (!fresh) {
        free(p);
        free(m);
        return vsw_err(err, -ENOMEM, -1, "out of memory");
    }
    memcpy(p, old, vsw_ports_size(sw->nports));
    p->cfg[port] = *c;
    derive_flags(p, port);
    if (share) {
        p->member->refs++;
    } else {
        /* only this port's bits change: the others' are copied */
        memcpy(m->v, old->member->v, sizeof(m->v));
        m->refs = 1;
        for (unsigned v = 0; v < 4096; v++)
            vsw_portset_del(&m->v[v], port);
        derive_member(m->v, c, port);
        p->member = m;
    }
    fresh->ports = p;
    vsw_publish(sw, fresh, (void *)old, free_ports);
    return 0;
}

int vsw_port_get(const vsw_switch *sw, unsigned port, vsw_port_cfg *c)
{
    if (port >= sw->nports)
        return -EINVAL;
    *c = vsw_cur(sw)->ports->cfg[port];
    return 0;
}

void vsw_port_cfg_default(vsw_port_cfg *c)
{
    memset(c, 0, sizeof(*c));
    c->vlan_mode = VSW_VLAN_TRUNK;
    memset(c->allowed, 0xff, sizeof(c->allowed));
    c->link_up = true;
    for (int i = 0; i < 8; i++)
        c->pcp_to_tc[i] = (uint8_t)i;
    for (int i = 0; i < 64; i++)
        c->dscp_to_tc[i] = (uint8_t)(i >> 3);
    c->miss_port = VSW_PORT_ANY;
}

/* Port i's up and promiscuous bits, from its config. */
static void derive_flags(vsw_ports *p, unsigned i)
{
    const vsw_port_cfg *c = &p->cfg[i];
    vsw_portset_del(&p->up, i);
    vsw_portset_del(&p->promisc, i);
    if (!c->link_up)
        return;
    vsw_portset_add(&p->up, i);
    if (i == VSW_PORT_UPLINK || c->trust)
        vsw_portset_add(&p->promisc, i);
}

/* Port i's VLAN membership bits in m (clear before), from its config c
 * (only one port changes at a time: a full derive walks 4096 VLANs for
 * every port, with 130 ports most of an `ip link set PF vf N`). */
static void derive_member(vsw_portset *m, const vsw_port_cfg *c, unsigned i)
{
    if (!c->link_up)
        return;
    if (c->vlan_mode == VSW_VLAN_ACCESS) {
        vsw_portset_add(&m[c->pvid], i);
    } else {
        for (unsigned v = 0; v < 4096; v++)
            if ((c->allowed[v >> 6] >> (v & 63)) & 1)
                vsw_portset_add(&m[v], i);
        vsw_portset_add(&m[c->native_vid], i);
    }
}

int vsw_ports_derive(vsw_ports *p, unsigned nports)
{
    p->member = calloc(1, sizeof(*p->member));
    if (!p->member)
        return -ENOMEM;
    p->member->refs = 1;
    memset(&p->up, 0, sizeof(p->up));
    memset(&p->promisc, 0, sizeof(p->promisc));
    for (unsigned i = 0; i < nports; i++) {
        derive_flags(p, i);
        derive_member(p->member->v, &p->cfg[i], i);
    }
    return 0;
}

void vsw_ports_free(vsw_ports *p)
{
    if (!p)
        return;
    if (p->member && --p->member->refs == 0)
        free(p->member);
    free(p);
}

int vsw_port_counters_get(const vsw_switch *sw, unsigned port, vsw_port_counters *c)
{
    if (port >= sw->nports)
        return -EINVAL;
    const vsw_port_ctrs *s = &sw->pc[port];
    c->rx_packets = vsw_ctr_get(&s->rx_packets);
    c->rx_bytes = vsw_ctr_get(&s->rx_bytes);
    c->tx_packets = vsw_ctr_get(&s->tx_packets);
    c->tx_bytes = vsw_ctr_get(&s->tx_bytes);
    for (int i = 0; i < VSW_DROP_REASONS; i++)
        c->drops[i] = vsw_ctr_get(&s->drops[i]);
    for (int i = 0; i < VSW_NUM_TC; i++) {
        c->tc_tx_packets[i] = vsw_ctr_get(&s->tc_tx_packets[i]);
        c->tc_tx_bytes[i] = vsw_ctr_get(&s->tc_tx_bytes[i]);
        c->tc_drops[i] = vsw_ctr_get(&s->tc_drops[i]);
    }
    return 0;
}
