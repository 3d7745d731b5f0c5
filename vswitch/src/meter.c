/* meter.c - token-bucket meters (bits/s or packets/s), hierarchical.
 *
 * A meter is kept in GCRA form (the "virtual scheduling" equivalent of a
 * token bucket): the theoretical arrival time `tat` advances by the cost of
 * each conforming frame (units * 1e9 / rate ns); a frame conforms when
 * max(tat, now) + cost - now <= tau, tau being the cost of a full burst.
 * Times are nanoseconds << 16 in 128-bit integers, so the long-run rate is
 * exact to ~1e-5 even for 64-byte frames at 400 Gbit/s and clocks never
 * wrap.  A frame is checked against every meter in its chain (ACL meter,
 * (port, TC) meter, port meter and its parents) and takes tokens only if
 * all conform: a VF limit inside a tenant limit. */
#include "vsw_internal.h"
#include <stdlib.h>
#include <string.h>

#define NS_FP_SHIFT 16

void vsw_rate_factor(uint64_t rate, uint64_t *k, uint8_t *sh)
{
    for (int s = 40;; s--) {
        vsw_u128 num = (vsw_u128)1000000000u << (NS_FP_SHIFT + s);
        vsw_u128 q = num / rate;
        if (q < ((vsw_u128)1 << 63) || s == 0) {
            *k = (uint64_t)q;
            *sh = (uint8_t)s;
            return;
        }
    }
}

static int meter_validate(const vsw_meters *mt, unsigned id, const vsw_meter_cfg *c,
                          vsw_error *err)
{
    if (c->mode > VSW_METER_PPS)
        return vsw_err(err, -EINVAL, -1, "meter %u: unknown mode %u", id, c->mode);
    if (c->rate == 0 || c->burst == 0)
        return vsw_err(err, -EINVAL, -1, "meter %u: rate and burst must be > 0", id);
    if (c->burst > (1ull << 40))
        return vsw_err(err, -EINVAL, -1, "meter %u: burst too large", id);
    unsigned p = c->parent, depth = 1;
    while (p) {
        if (p >= VSW_MAX_METERS || !vsw_meter_at(mt, p)->used)
            return vsw_err(err, -EINVAL, -1, "meter %u: parent %u does not exist", id, p);
        if (p == id)
            return vsw_err(err, -EINVAL, -1, "meter %u: parent chain loops", id);
        if (++depth > 4)
            return vsw_err(err, -EINVAL, -1, "meter %u: chain deeper than 4", id);
        p = vsw_meter_at(mt, p)->parent;
    }
    return 0;
}

const vsw_meter_param vsw_meter_unset;

void vsw_meters_free(vsw_meters *mt)
{
    if (!mt)
        return;
    for (unsigned i = 0; i < VSW_MAX_METERS / VSW_METER_PAGE; i++)
        if (mt->page[i] && --mt->page[i]->refs == 0)
            free(mt->page[i]);
    free(mt);
}

static void meters_free(void *p) { vsw_meters_free(p); }

/* A new meter table sharing the current one's pages but for the page of
 * meter `id`, a private copy (*m: that meter in it), and a new config set
 * to publish it in (build, then swap: the data path keeps reading the
 * current one). */
static int meters_copy(vsw_switch *sw, vsw_cfgset *cur, unsigned id, vsw_meters **mt,
                       vsw_meter_param **m, vsw_cfgset **fresh, vsw_error *err)
{
    unsigned pg = id / VSW_METER_PAGE;
    const vsw_meter_page *old = cur->meters->page[pg];
    vsw_meter_page *np = malloc(sizeof(*np));
    *mt = malloc(sizeof(**mt));
    *fresh = vsw_cfg_clone(sw);
    if (!np || !*mt || !*fresh) {
        free(np);
        free(*mt);
        free(*fresh);
        return vsw_err(err, -ENOMEM, -1, "out of memory");
    }
    if (old)
        memcpy(np->m, old->m, sizeof(np->m));
    else
        memset(np->m, 0, sizeof(np->m));
    np->refs = 1;
    memcpy(*mt, cur->meters, sizeof(**mt));
    for (unsigned i = 0; i < VSW_MAX_METERS / VSW_METER_PAGE; i++)
        if ((*mt)->page[i] && i != pg)
            (*mt)->page[i]->refs++;
    (*mt)->page[pg] = np;
    *m = &np->m[id % VSW_METER_PAGE];
    return 0;
}

int vsw_meter_set(vsw_switch *sw, unsigned id, const vsw_meter_cfg *c, vsw_error *err)
{
    if (!c || id == 0 || id >= VSW_MAX_METERS)
        return vsw_err(err, -EINVAL, -1, "meter id %u out of range 1..%u", id,
                       VSW_MAX_METERS - 1);
    vsw_cfgset *cur = vsw_cur(sw);
    int rc = meter_validate(cur->meters, id, c, err);
    if (rc)
        return rc;
    vsw_meters *mt;
    vsw_meter_param *m;
    vsw_cfgset *fresh;
    if (meters_copy(sw, cur, id, &mt, &m, &fresh, err))
        return -ENOMEM;
    m->used = 1;
    m->mode = c->mode;
    m->parent = c->parent;
    m->gen++;
    m->cfg = *c;
    vsw_rate_factor(c->rate, &m->k, &m->sh);
    m->tau = vsw_rate_cost(c->mode == VSW_METER_PPS ? c->burst : c->burst * 8, m->k, m->sh);
    fresh->meters = mt;
    vsw_publish(sw, fresh, cur->meters, meters_free);
    return 0;
}

int vsw_meter_del(vsw_switch *sw, unsigned id, vsw_error *err)
{
    if (id == 0 || id >= VSW_MAX_METERS)
        return vsw_err(err, -EINVAL, -1, "meter id %u out of range", id);
    vsw_cfgset *cur = vsw_cur(sw);
    if (!vsw_meter_at(cur->meters, id)->used)
        return vsw_err(err, -ENOENT, -1, "meter %u does not exist", id);
    for (unsigned i = 1; i < VSW_MAX_METERS; i++) {
        const vsw_meter_param *c = vsw_meter_at(cur->meters, i);
        if (c->used && c->parent == id)
            return vsw_err(err, -EINVAL, -1, "meter %u is the parent of meter %u", id, i);
    }
    vsw_meters *mt;
    vsw_meter_param *m;
    vsw_cfgset *fresh;
    if (meters_copy(sw, cur, id, &mt, &m, &fresh, err))
        return -ENOMEM;
    uint32_t gen = m->gen;
    memset(m, 0, sizeof(*m));
    m->gen = gen + 1;
    fresh->meters = mt;
    vsw_publish(sw, fresh, cur->meters, meters_free);
    return 0;
}

/* Returns 1 if the frame passes every meter (tokens taken), 0 if not. */
int vsw_meters_police(vsw_switch *sw, const vsw_meters *mt, const uint16_t *ids,
                      unsigned nids, uint32_t bytes, uint64_t now_ns)
{
    uint16_t chain[16];
    unsigned nc = 0;
    for (unsigned i = 0; i < nids; i++) {
        for (unsigned id = ids[i], d = 0; id && d < 4; d++) {
            const vsw_meter_param *m = vsw_meter_at(mt, id);
            if (!m->used)
                break;
            int dup = 0;
            for (unsigned j = 0; j < nc; j++)
                dup |= chain[j] == id;
            if (!dup && nc < 16)
                chain[nc++] = (uint16_t)id;
            id = m->parent;
        }
    }
    if (!nc)
        return 1;
    vsw_u128 now = (vsw_u128)now_ns << NS_FP_SHIFT;
    vsw_u128 ntat[16];
    int ok = 1;
    unsigned bad = 0;
    for (unsigned j = 0; j < nc; j++) {
        const vsw_meter_param *m = vsw_meter_at(mt, chain[j]);
        vsw_meter_state *st = &sw->mstate[chain[j]];
        if (st->gen != m->gen) {
            st->gen = m->gen;
            st->tat = 0;
        }
        uint64_t units = m->mode == VSW_METER_PPS ? 1 : (uint64_t)bytes * 8;
        vsw_u128 cost = vsw_rate_cost(units, m->k, m->sh);
        vsw_u128 t = st->tat > now ? st->tat : now;
        ntat[j] = t + cost;
        if (ntat[j] - now > m->tau) {
            ok = 0;
            bad = j;
            break;
        }
    }
    if (ok) {
        for (unsigned j = 0; j < nc; j++) {
            sw->mstate[chain[j]].tat = ntat[j];
            vsw_ctr_add(&sw->mc[chain[j]].pass_p, 1);
            vsw_ctr_add(&sw->mc[chain[j]].pass_b, bytes);
        }
    } else {
        vsw_ctr_add(&sw->mc[chain[bad]].drop_p, 1);
        vsw_ctr_add(&sw->mc[chain[bad]].drop_b, bytes);
    }
    return ok;
}

int vsw_meter_counters_get(const vsw_switch *sw, unsigned id, vsw_meter_counters *c)
{
    if (id == 0 || id >= VSW_MAX_METERS)
        return -EINVAL;
    c->pass_packets = vsw_ctr_get(&sw->mc[id].pass_p);
    c->pass_bytes = vsw_ctr_get(&sw->mc[id].pass_b);
    c->drop_packets = vsw_ctr_get(&sw->mc[id].drop_p);
    c->drop_bytes = vsw_ctr_get(&sw->mc[id].drop_b);
    return 0;
}
