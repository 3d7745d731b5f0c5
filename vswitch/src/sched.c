/* sched.c - egress scheduling per port: 8 traffic classes with strict
 * priority, DWRR weights, a guaranteed minimum (tx_share) and a ceiling
 * (tx_max) per TC, a port ceiling, all against caller-supplied time.
 *
 * dequeue() at time t picks, among TCs with a backlog that are under their
 * tx_max:  1. a TC still below its tx_share (highest TC first);
 *          2. a strict TC (highest TC first);
 *          3. the weighted TCs in deficit round robin (quantum = weight x
 *             1500 bytes), which shares the rest in proportion to weight.
 * Then the wire is busy for len*8/link_rate.  Shapers and the wire use the
 * same GCRA arithmetic as the meters (ns << 16). */
#include "vsw_internal.h"
#include <stdlib.h>
#include <string.h>

#define QUANTUM_UNIT 1500
#define SHAPER_BURST 16384u     /* bytes of burst tolerance for shapers */

typedef struct qent { uint64_t handle; uint32_t len; uint32_t pad; } qent;

typedef struct rate { uint64_t k; uint8_t sh; uint8_t on; vsw_u128 tau; } rate;

struct vsw_sched_port {
    unsigned qlen;
    qent    *ring[VSW_NUM_TC];
    unsigned head[VSW_NUM_TC], cnt[VSW_NUM_TC];
    int64_t  deficit[VSW_NUM_TC];
    unsigned rr;
    int      fresh;
    uint32_t gen;
    vsw_u128 busy, port_tat, max_tat[VSW_NUM_TC], share_tat[VSW_NUM_TC];
    rate     link, port_max, tc_max[VSW_NUM_TC], tc_share[VSW_NUM_TC];
    int64_t  quantum[VSW_NUM_TC];
    uint8_t  strict[VSW_NUM_TC];
};

struct vsw_sched_port *vsw_sched_port_new(unsigned qlen)
{
    struct vsw_sched_port *sp = calloc(1, sizeof(*sp));
    if (!sp)
        return NULL;
    sp->qlen = qlen;
    sp->fresh = 1;
    sp->gen = UINT32_MAX;
    for (int t = 0; t < VSW_NUM_TC; t++) {
        sp->ring[t] = calloc(qlen, sizeof(qent));
        if (!sp->ring[t]) {
            vsw_sched_port_free(sp);
            return NULL;
        }
    }
    return sp;
}

void vsw_sched_port_free(struct vsw_sched_port *sp)
{
    if (!sp)
        return;
    for (int t = 0; t < VSW_NUM_TC; t++)
        free(sp->ring[t]);
    free(sp);
}

void vsw_sched_cfg_default(vsw_sched_cfg *c)
{
    memset(c, 0, sizeof(*c));
    c->link_rate = 100000000000ull;
    for (int t = 0; t < VSW_NUM_TC; t++)
        c->tc[t].weight = 1;
}

static void scheds_free(void *p) { free(p); }

int vsw_sched_set(vsw_switch *sw, unsigned port, const vsw_sched_cfg *c, vsw_error *err)
{
    if (port >= sw->nports)
        return vsw_err(err, -EINVAL, -1, "port %u does not exist", port);
    if (!c || c->link_rate == 0)
        return vsw_err(err, -EINVAL, -1, "port %u: link_rate must be > 0", port);
    for (int t = 0; t < VSW_NUM_TC; t++) {
        const vsw_sched_tc *n = &c->tc[t];
        if (!n->strict && n->weight == 0)
            return vsw_err(err, -EINVAL, -1, "port %u tc %d: weight must be >= 1", port, t);
        if (n->weight > 1000000)
            return vsw_err(err, -EINVAL, -1, "port %u tc %d: weight too large", port, t);
        if (n->tx_max && n->tx_share > n->tx_max)
            return vsw_err(err, -EINVAL, -1, "port %u tc %d: tx_share > tx_max", port, t);
    }
    vsw_cfgset *cur = vsw_cur(sw);
    vsw_scheds *s = malloc(sizeof(*s));
    vsw_cfgset *fresh = vsw_cfg_clone(sw);
    if (!s || !fresh) {
        free(s);
        free(fresh);
        return vsw_err(err, -ENOMEM, -1, "out of memory");
    }
    memcpy(s, cur->sched, sizeof(*s));
    s->cfg[port] = *c;
    s->gen[port]++;
    fresh->sched = s;
    vsw_publish(sw, fresh, cur->sched, scheds_free);
    return 0;
}

static void set_rate(rate *r, uint64_t bps)
{
    r->on = bps != 0;
    if (r->on) {
        vsw_rate_factor(bps, &r->k, &r->sh);
        r->tau = vsw_rate_cost(SHAPER_BURST * 8ull, r->k, r->sh);
    }
}

static void apply_cfg(struct vsw_sched_port *sp, const vsw_sched_cfg *c, uint32_t gen)
{
    sp->gen = gen;
    set_rate(&sp->link, c->link_rate);
    set_rate(&sp->port_max, c->tx_max);
    for (int t = 0; t < VSW_NUM_TC; t++) {
        set_rate(&sp->tc_max[t], c->tc[t].tx_max);
        set_rate(&sp->tc_share[t], c->tc[t].tx_share);
        sp->strict[t] = c->tc[t].strict;
        sp->quantum[t] = (int64_t)c->tc[t].weight * QUANTUM_UNIT;
    }
}

static struct vsw_sched_port *port_state(vsw_switch *sw, unsigned port)
{
    if (!sw->sched[port])
        sw->sched[port] = vsw_sched_port_new(sw->cfg.sched_qlen);
    struct vsw_sched_port *sp = sw->sched[port];
    if (sp) {
        const vsw_scheds *s = vsw_cur(sw)->sched;
        if (sp->gen != s->gen[port])
            apply_cfg(sp, &s->cfg[port], s->gen[port]);
    }
    return sp;
}

int vsw_sched_enqueue(vsw_switch *sw, unsigned port, unsigned tc, uint64_t handle,
                      uint32_t len, uint64_t now_ns)
{
    (void)now_ns;
    if (port >= sw->nports || tc >= VSW_NUM_TC)
        return -EINVAL;
    vsw_dp_enter(sw);
    struct vsw_sched_port *sp = port_state(sw, port);
    int rc = 0;
    if (!sp || sp->cnt[tc] >= sp->qlen) {
        vsw_ctr_add(&sw->pc[port].tc_drops[tc], 1);
        vsw_ctr_add(&sw->pc[port].drops[VSW_DROP_QUEUE_FULL], 1);
        rc = -ENOSPC;
    } else {
        qent *e = &sp->ring[tc][(sp->head[tc] + sp->cnt[tc]) % sp->qlen];
        e->handle = handle;
        e->len = len;
        sp->cnt[tc]++;
    }
    vsw_dp_exit(sw);
    return rc;
}

static int tc_ok(const struct vsw_sched_port *sp, unsigned t, vsw_u128 now)
{
    return sp->cnt[t] && (!sp->tc_max[t].on || sp->max_tat[t] <= now + sp->tc_max[t].tau);
}

static int pick(struct vsw_sched_port *sp, vsw_u128 now)
{
    for (int t = VSW_NUM_TC - 1; t >= 0; t--)
        if (sp->tc_share[t].on && tc_ok(sp, (unsigned)t, now) && sp->share_tat[t] <= now)
            return t;
    for (int t = VSW_NUM_TC - 1; t >= 0; t--)
        if (sp->strict[t] && tc_ok(sp, (unsigned)t, now))
            return t;
    int any = 0;
    for (unsigned t = 0; t < VSW_NUM_TC; t++)
        any |= !sp->strict[t] && tc_ok(sp, t, now);
    if (!any)
        return -1;
    for (;;) {                      /* terminates: some weighted TC is ok */
        unsigned t = sp->rr;
        if (sp->strict[t] || !tc_ok(sp, t, now)) {
            if (!sp->cnt[t])
                sp->deficit[t] = 0;
            sp->rr = (t + 1) % VSW_NUM_TC;
            sp->fresh = 1;
            continue;
        }
        if (sp->fresh) {
            sp->deficit[t] += sp->quantum[t];
            sp->fresh = 0;
        }
        if (sp->deficit[t] >= (int64_t)sp->ring[t][sp->head[t]].len)
            return (int)t;
        sp->rr = (t + 1) % VSW_NUM_TC;
        sp->fresh = 1;
    }
}

static uint64_t fp_to_ns_ceil(vsw_u128 x)
{
    vsw_u128 ns = (x + 0xffff) >> 16;
    return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

int vsw_sched_dequeue(vsw_switch *sw, unsigned port, uint64_t now_ns, uint64_t *handle,
                      uint32_t *len, unsigned *tc, uint64_t *next_ns)
{
    if (next_ns)
        *next_ns = UINT64_MAX;
    if (port >= sw->nports)
        return 0;
    vsw_dp_enter(sw);
    struct vsw_sched_port *sp = port_state(sw, port);
    int got = 0;
    if (!sp)
        goto out;
    vsw_u128 now = (vsw_u128)now_ns << 16;
    unsigned backlog = 0;
    for (int t = 0; t < VSW_NUM_TC; t++)
        backlog += sp->cnt[t];
    if (!backlog)
        goto out;
    if (sp->busy > now) {
        if (next_ns)
            *next_ns = fp_to_ns_ceil(sp->busy);
        goto out;
    }
    if (sp->port_max.on && sp->port_tat > now + sp->port_max.tau) {
        if (next_ns)
            *next_ns = fp_to_ns_ceil(sp->port_tat - sp->port_max.tau);
        goto out;
    }
    int t = pick(sp, now);
    if (t < 0) {                    /* every backlogged TC is over tx_max */
        vsw_u128 wake = ~(vsw_u128)0;
        for (int i = 0; i < VSW_NUM_TC; i++)
            if (sp->cnt[i] && sp->tc_max[i].on && sp->max_tat[i] - sp->tc_max[i].tau < wake)
                wake = sp->max_tat[i] - sp->tc_max[i].tau;
        if (next_ns)
            *next_ns = fp_to_ns_ceil(wake);
        goto out;
    }
    qent *e = &sp->ring[t][sp->head[t]];
    sp->head[t] = (sp->head[t] + 1) % sp->qlen;
    sp->cnt[t]--;
    if (!sp->strict[t] && (unsigned)t == sp->rr && !sp->fresh) {
        sp->deficit[t] -= e->len;
        if (!sp->cnt[t]) {
            sp->deficit[t] = 0;
            sp->rr = (sp->rr + 1) % VSW_NUM_TC;
            sp->fresh = 1;
        }
    }
    uint64_t bits = (uint64_t)e->len * 8;
    vsw_u128 start = sp->busy > now ? sp->busy : now;
    sp->busy = start + vsw_rate_cost(bits, sp->link.k, sp->link.sh);
    if (sp->port_max.on)
        sp->port_tat = (sp->port_tat > now ? sp->port_tat : now) +
                       vsw_rate_cost(bits, sp->port_max.k, sp->port_max.sh);
    if (sp->tc_max[t].on)
        sp->max_tat[t] = (sp->max_tat[t] > now ? sp->max_tat[t] : now) +
                         vsw_rate_cost(bits, sp->tc_max[t].k, sp->tc_max[t].sh);
    if (sp->tc_share[t].on) {
        vsw_u128 floor = now > sp->tc_share[t].tau ? now - sp->tc_share[t].tau : 0;
        sp->share_tat[t] = (sp->share_tat[t] > floor ? sp->share_tat[t] : floor) +
                           vsw_rate_cost(bits, sp->tc_share[t].k, sp->tc_share[t].sh);
    }
    *handle = e->handle;
    *len = e->len;
    *tc = (unsigned)t;
    vsw_ctr_add(&sw->pc[port].tc_tx_packets[t], 1);
    vsw_ctr_add(&sw->pc[port].tc_tx_bytes[t], e->len);
    got = 1;
    if (next_ns)
        *next_ns = fp_to_ns_ceil(sp->busy);
out:
    vsw_dp_exit(sw);
    return got;
}

unsigned vsw_sched_backlog(const vsw_switch *sw, unsigned port, unsigned tc)
{
    if (port >= sw->nports || tc >= VSW_NUM_TC || !sw->sched[port])
        return 0;
    return sw->sched[port]->cnt[tc];
}
