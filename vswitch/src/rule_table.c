/* rule_table.c - incremental ACL rules by cookie (vsw_rule_add / _replace /
 * _del): the records, their order, limits, counters by cookie.  Where a
 * rule sits in the published set and how that set is built is
 * rule_layout.c's (see rule_table.h for the scheme).
 *
 * Every call validates first and changes nothing on a validation error.
 * After validation the record is changed, then the layout, then a set is
 * published; if building the set runs out of memory the record change is
 * undone and the next change rebuilds the set from the records. */
#include "rule_table.h"
#include <stdlib.h>
#include <string.h>

#define DEFAULT_PER_SCOPE 16384u

/* ---- allocation and small helpers ---- */

static struct vsw_rtab *rtab_get(vsw_switch *sw)
{
    if (sw->rtab)
        return sw->rtab;
    struct vsw_rtab *t = calloc(1, sizeof(*t));
    if (!t)
        return NULL;
    t->lim_scope = DEFAULT_PER_SCOPE;
    t->lim_total = VSW_ACL_MAX_RULES;
    t->next_seq = t->next_serial = 1;
    t->need_full = 1;
    sw->rtab = t;
    return t;
}

static unsigned scope_idx(uint16_t scope)
{
    return scope == VSW_RULE_GLOBAL ? VSW_MAX_PORTS : scope;
}

/* (priority, seq) order */
static int before(const vsw_trec *a, const vsw_trec *b)
{
    if (a->spec.rule.priority != b->spec.rule.priority)
        return a->spec.rule.priority < b->spec.rule.priority;
    return a->seq < b->seq;
}

/* Position in ord where slot s belongs (first element not before it). */
static uint32_t ord_pos(const struct vsw_rtab *t, uint32_t s)
{
    uint32_t lo = 0, hi = t->n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (before(&t->rec[t->ord[mid]], &t->rec[s]))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static uint32_t ord_insert(struct vsw_rtab *t, uint32_t s)
{
    uint32_t p = ord_pos(t, s);
    memmove(&t->ord[p + 1], &t->ord[p], (t->n - p) * sizeof(uint32_t));
    t->ord[p] = s;
    t->n++;
    return p;
}

static void ord_remove(struct vsw_rtab *t, uint32_t s)
{
    uint32_t p = ord_pos(t, s);     /* s is there: keys are unique */
    memmove(&t->ord[p], &t->ord[p + 1], (t->n - p - 1) * sizeof(uint32_t));
    t->n--;
}

/* ---- cookie hash: open addressing, linear probing, backward-shift
 * deletion; kept at most half full ---- */

static uint32_t hslot(const struct vsw_rtab *t, uint64_t cookie)
{
    return (uint32_t)(vsw_hash64(cookie ^ (cookie >> 32)) & (t->hcap - 1));
}

static int hash_find(const struct vsw_rtab *t, uint64_t cookie)
{
    if (!t->hcap)
        return -1;
    for (uint32_t i = hslot(t, cookie), k = 0; k < t->hcap; i = (i + 1) & (t->hcap - 1), k++) {
        uint32_t v = t->hash[i];
        if (!v)
            return -1;
        if (t->rec[v - 1].spec.cookie == cookie)
            return (int)(v - 1);
    }
    return -1;
}

static void hash_put_nogrow(struct vsw_rtab *t, uint32_t s)
{
    uint32_t i = hslot(t, t->rec[s].spec.cookie);
    while (t->hash[i])
        i = (i + 1) & (t->hcap - 1);
    t->hash[i] = s + 1;
}

static void hash_del(struct vsw_rtab *t, uint64_t cookie)
{
    uint32_t m = t->hcap - 1, i = hslot(t, cookie);
    while (t->hash[i] && t->rec[t->hash[i] - 1].spec.cookie != cookie)
        i = (i + 1) & m;
    if (!t->hash[i])
        return;
    t->hash[i] = 0;
    /* move later members of the cluster that may no longer be reachable */
    for (uint32_t j = (i + 1) & m; t->hash[j]; j = (j + 1) & m) {
        uint32_t h = hslot(t, t->rec[t->hash[j] - 1].spec.cookie);
        /* entry at j stays if its home h lies cyclically in (i, j] */
        int stays = i <= j ? (h > i && h <= j) : (h > i || h <= j);
        if (!stays) {
            t->hash[i] = t->hash[j];
            t->hash[j] = 0;
            i = j;
        }
    }
}

/* Room for one more record: slot arrays, ord, hash. */
static int reserve(struct vsw_rtab *t)
{
    if (!t->nfree && t->nslot == t->capslot) {
        uint32_t nc = t->capslot ? 2 * t->capslot : 64;
        vsw_trec *r = realloc(t->rec, nc * sizeof(*r));
        if (!r)
            return -1;
        t->rec = r;
        uint32_t *f = realloc(t->freel, nc * sizeof(uint32_t));
        if (!f)
            return -1;
        t->freel = f;
        uint32_t *o = realloc(t->ord, nc * sizeof(uint32_t));
        if (!o)
            return -1;
        t->ord = o;
        uint32_t *ro = realloc(t->rank_of, nc * sizeof(uint32_t));
        if (!ro)
            return -1;
        t->rank_of = ro;
        t->capslot = nc;
    }
    if (2 * (t->n + 1) > t->hcap) {
        uint32_t nc = t->hcap ? 2 * t->hcap : 128;
        uint32_t *h = calloc(nc, sizeof(uint32_t)), *old = t->hash;
        if (!h)
            return -1;
        t->hash = h;
        t->hcap = nc;
        for (uint32_t i = 0; i < t->n; i++)
            hash_put_nogrow(t, t->ord[i]);
        free(old);
    }
    return 0;
}

static uint32_t slot_alloc(struct vsw_rtab *t)
{
    return t->nfree ? t->freel[--t->nfree] : t->nslot++;
}

static void slot_release(struct vsw_rtab *t, uint32_t s)
{
    t->rec[s].serial = 0;
    t->freel[t->nfree++] = s;
}

/* ---- validation ---- */

/* The rule as installed (scope applied) and its compiled form. */
static int check_rule(const vsw_switch *sw, const vsw_trule *in, vsw_trule *out,
                      vsw_crule *c, vsw_error *err)
{
    if (!in)
        return vsw_err(err, -EINVAL, -1, "NULL rule");
    if (in->chain)
        return vsw_err(err, -EOPNOTSUPP, -1,
                       "rule %#llx: chain %u: the switch has one lookup stage, only chain 0 "
                       "(no goto) can be offloaded", (unsigned long long)in->cookie, in->chain);
    *out = *in;
    if (in->scope != VSW_RULE_GLOBAL) {
        if (in->scope >= sw->nports)
            return vsw_err(err, -EINVAL, -1, "rule %#llx: scope port %u does not exist",
                           (unsigned long long)in->cookie, in->scope);
        if ((in->rule.match & VSW_M_IN_PORT) && in->rule.in_port != in->scope)
            return vsw_err(err, -EINVAL, -1,
                           "rule %#llx: matches in_port %u but belongs to port %u",
                           (unsigned long long)in->cookie, in->rule.in_port, in->scope);
        out->rule.match |= VSW_M_IN_PORT;
        out->rule.in_port = in->scope;
    }
    return vsw_rule_convert(&out->rule, 0, sw->nports, c, err);
}

static int check_table(const vsw_switch *sw, vsw_error *err)
{
    const vsw_acl *a = vsw_cur(sw)->acl;
    if (!a->serial && a->nrules)
        return vsw_err(err, -EBUSY, -1,
                       "a whole rule set (vsw_acl_set) is installed; clear it first");
    return 0;
}

static int check_limits(const struct vsw_rtab *t, uint16_t scope, int adding,
                        vsw_error *err)
{
    if (adding && t->n >= t->lim_total)
        return vsw_err(err, -ENOSPC, -1, "rule table full (%u rules)", t->lim_total);
    if (t->per_scope[scope_idx(scope)] >= t->lim_scope) {
        if (scope == VSW_RULE_GLOBAL)
            return vsw_err(err, -ENOSPC, -1, "global scope full (%u rules)", t->lim_scope);
        return vsw_err(err, -ENOSPC, -1, "port %u has %u rules, the most a port may have",
                       scope, t->lim_scope);
    }
    return 0;
}

/* ---- the calls ---- */

int vsw_rule_add(vsw_switch *sw, const vsw_trule *r, vsw_error *err)
{
    vsw_trule spec;
    vsw_crule c;
    int rc = check_table(sw, err);
    if (!rc)
        rc = check_rule(sw, r, &spec, &c, err);
    if (rc)
        return rc;
    struct vsw_rtab *t = rtab_get(sw);
    if (!t)
        return vsw_err(err, -ENOMEM, -1, "out of memory");
    if (hash_find(t, spec.cookie) >= 0)
        return vsw_err(err, -EEXIST, -1, "rule %#llx exists", (unsigned long long)spec.cookie);
    if ((rc = check_limits(t, spec.scope, 1, err)))
        return rc;
    if (reserve(t))
        return vsw_err(err, -ENOMEM, -1, "out of memory");
    uint32_t s = slot_alloc(t);
    vsw_trec *e = &t->rec[s];
    memset(e, 0, sizeof(*e));
    e->spec = spec;
    e->cr = c;
    e->cr.index = s;
    e->serial = t->next_serial++;
    e->seq = t->next_seq++;
    uint32_t pos = ord_insert(t, s);
    hash_put_nogrow(t, s);
    t->per_scope[scope_idx(spec.scope)]++;
    rc = rt_layout_insert(t, s, pos);
    if (!rc)
        rc = rt_publish(sw, t, err);
    if (rc) {                       /* undo: as if never added */
        t->per_scope[scope_idx(spec.scope)]--;
        hash_del(t, spec.cookie);
        ord_remove(t, s);
        slot_release(t, s);
        t->need_full = 1;
        return vsw_err(err, rc, -1, "out of memory building the rule set");
    }
    return 0;
}

/* Take the first k slots of `added` out of the records again. */
static void unadd(struct vsw_rtab *t, const uint32_t *added, size_t k)
{
    while (k--) {
        uint32_t s = added[k];
        t->per_scope[scope_idx(t->rec[s].spec.scope)]--;
        hash_del(t, t->rec[s].spec.cookie);
        ord_remove(t, s);
        slot_release(t, s);
    }
}

int vsw_rule_add_many(vsw_switch *sw, const vsw_trule *r, size_t n, vsw_error *err)
{
    int rc = check_table(sw, err);
    if (rc)
        return rc;
    if (n && !r)
        return vsw_err(err, -EINVAL, -1, "NULL rule array");
    struct vsw_rtab *t = rtab_get(sw);
    uint32_t *added = malloc((n ? n : 1) * sizeof(uint32_t));
    if (!t || !added) {
        free(added);
        return vsw_err(err, -ENOMEM, -1, "out of memory");
    }
    size_t k = 0;
    for (; k < n; k++) {
        vsw_trule spec;
        vsw_crule c;
        if ((rc = check_rule(sw, &r[k], &spec, &c, err)))
            break;
        if (hash_find(t, spec.cookie) >= 0) {
            rc = vsw_err(err, -EEXIST, -1, "rule %#llx exists", (unsigned long long)spec.cookie);
            break;
        }
        if ((rc = check_limits(t, spec.scope, 1, err)))
            break;
        if (reserve(t)) {
            rc = vsw_err(err, -ENOMEM, -1, "out of memory");
            break;
        }
        uint32_t s = slot_alloc(t);
        vsw_trec *e = &t->rec[s];
        memset(e, 0, sizeof(*e));
        e->spec = spec;
        e->cr = c;
        e->cr.index = s;
        e->serial = t->next_serial++;
        e->seq = t->next_seq++;
        ord_insert(t, s);
        hash_put_nogrow(t, s);
        t->per_scope[scope_idx(spec.scope)]++;
        added[k] = s;
    }
    if (!rc) {
        t->need_full = 1;           /* one build for all of them */
        rc = rt_publish(sw, t, err);
    }
    if (rc) {
        if (err)
            err->rule = k < n ? (int)k : -1;
        unadd(t, added, k);
        t->need_full = 1;
    }
    free(added);
    return rc;
}

int vsw_rule_del(vsw_switch *sw, uint64_t cookie, vsw_error *err)
{
    struct vsw_rtab *t = sw->rtab;
    int s = t ? hash_find(t, cookie) : -1;
    if (s < 0)
        return vsw_err(err, -ENOENT, -1, "no rule %#llx", (unsigned long long)cookie);
    int rc = rt_layout_remove(t, (uint32_t)s);
    vsw_trec *e = &t->rec[s];
    ord_remove(t, (uint32_t)s);
    if (!rc)
        rc = rt_publish(sw, t, err);
    if (rc) {                       /* undo: still there */
        ord_insert(t, (uint32_t)s);
        t->need_full = 1;
        return vsw_err(err, rc, -1, "out of memory building the rule set");
    }
    hash_del(t, cookie);
    t->per_scope[scope_idx(e->spec.scope)]--;
    slot_release(t, (uint32_t)s);
    return 0;
}

int vsw_rule_replace(vsw_switch *sw, const vsw_trule *r, vsw_error *err)
{
    vsw_trule spec;
    vsw_crule c;
    int rc = check_table(sw, err);
    if (!rc)
        rc = check_rule(sw, r, &spec, &c, err);
    if (rc)
        return rc;
    struct vsw_rtab *t = sw->rtab;
    int s = t ? hash_find(t, spec.cookie) : -1;
    if (s < 0)
        return vsw_err(err, -ENOENT, -1, "no rule %#llx", (unsigned long long)spec.cookie);
    vsw_trec *e = &t->rec[s], old = *e;
    int moves = spec.scope != old.spec.scope;
    if (moves && (rc = check_limits(t, spec.scope, 0, err)))
        return rc;
    c.index = (uint32_t)s;
    if (spec.rule.priority == old.spec.rule.priority) {
        e->spec = spec;
        e->cr = c;
        rc = rt_layout_update(t, (uint32_t)s);
    } else {                        /* a new place in the order */
        rc = rt_layout_remove(t, (uint32_t)s);
        ord_remove(t, (uint32_t)s);
        e->spec = spec;
        e->cr = c;
        uint32_t pos = ord_insert(t, (uint32_t)s);
        if (!rc)
            rc = rt_layout_insert(t, (uint32_t)s, pos);
    }
    if (!rc)
        rc = rt_publish(sw, t, err);
    if (rc) {
        ord_remove(t, (uint32_t)s);
        *e = old;
        ord_insert(t, (uint32_t)s);
        t->need_full = 1;
        return vsw_err(err, rc, -1, "out of memory building the rule set");
    }
    if (moves) {
        t->per_scope[scope_idx(old.spec.scope)]--;
        t->per_scope[scope_idx(spec.scope)]++;
    }
    return 0;
}

int vsw_rule_flush_scope(vsw_switch *sw, uint16_t scope, vsw_error *err)
{
    struct vsw_rtab *t = sw->rtab;
    if (scope != VSW_RULE_GLOBAL && scope >= sw->nports)
        return vsw_err(err, -EINVAL, -1, "port %u does not exist", scope);
    if (!t || !t->per_scope[scope_idx(scope)])
        return 0;
    /* take them out of the records, rebuild once; on failure put back */
    uint32_t *gone = malloc(t->n * sizeof(uint32_t));
    if (!gone)
        return vsw_err(err, -ENOMEM, -1, "out of memory");
    uint32_t ng = 0, keep = 0;
    for (uint32_t i = 0; i < t->n; i++) {
        uint32_t s = t->ord[i];
        if (t->rec[s].spec.scope == scope)
            gone[ng++] = s;
        else
            t->ord[keep++] = s;
    }
    t->n = keep;
    t->need_full = 1;
    int rc = rt_publish(sw, t, err);
    if (rc) {
        for (uint32_t i = 0; i < ng; i++)
            ord_insert(t, gone[i]);
        free(gone);
        return vsw_err(err, rc, -1, "out of memory building the rule set");
    }
    for (uint32_t i = 0; i < ng; i++) {
        hash_del(t, t->rec[gone[i]].spec.cookie);
        slot_release(t, gone[i]);
    }
    t->per_scope[scope_idx(scope)] = 0;
    free(gone);
    return (int)ng;
}

int vsw_rule_get(const vsw_switch *sw, uint64_t cookie, vsw_trule *r)
{
    const struct vsw_rtab *t = sw->rtab;
    int s = t ? hash_find(t, cookie) : -1;
    if (s < 0)
        return -ENOENT;
    *r = t->rec[s].spec;
    return 0;
}

int vsw_rule_stats(const vsw_switch *sw, uint64_t cookie, uint64_t *packets,
                   uint64_t *bytes)
{
    const struct vsw_rtab *t = sw->rtab;
    int s = t ? hash_find(t, cookie) : -1;
    if (s < 0)
        return -ENOENT;
    const vsw_trec *e = &t->rec[s];
    uint64_t p, b;
    rt_live_counts(sw, (uint32_t)s, e->serial, &p, &b);
    *packets = e->pk_done + p;
    *bytes = e->by_done + b;
    return 0;
}

int vsw_rule_id_cookie(const vsw_switch *sw, int32_t id, uint64_t *cookie)
{
    const struct vsw_rtab *t = sw->rtab;
    if (!t || id < 0 || (uint32_t)id >= t->nslot || !t->rec[id].serial)
        return -ENOENT;
    *cookie = t->rec[id].spec.cookie;
    return 0;
}

int vsw_rule_limits_set(vsw_switch *sw, unsigned per_scope, unsigned total,
                        vsw_error *err)
{
    if (!per_scope || !total || per_scope > VSW_ACL_MAX_RULES || total > VSW_ACL_MAX_RULES)
        return vsw_err(err, -EINVAL, -1, "limits must be 1..%u", VSW_ACL_MAX_RULES);
    struct vsw_rtab *t = rtab_get(sw);
    if (!t)
        return vsw_err(err, -ENOMEM, -1, "out of memory");
    if (t->n > total)
        return vsw_err(err, -EINVAL, -1, "%u rules installed, more than %u", t->n, total);
    for (unsigned i = 0; i < RT_SCOPES; i++)
        if (t->per_scope[i] > per_scope)
            return vsw_err(err, -EINVAL, -1, "scope %u has %u rules, more than %u",
                           i == VSW_MAX_PORTS ? VSW_RULE_GLOBAL : i, t->per_scope[i], per_scope);
    t->lim_scope = per_scope;
    t->lim_total = total;
    return 0;
}

void vsw_rule_table_get_stats(const vsw_switch *sw, vsw_rule_table_stats *st)
{
    memset(st, 0, sizeof(*st));
    const struct vsw_rtab *t = sw->rtab;
    if (!t)
        return;
    st->rules = t->n;
    st->rank_space = t->R;
    st->base_rules = t->nbase;
    st->delta_rules = t->ndelta;
    st->struck = t->nstruck;
    st->full_builds = t->full_builds;
    st->shifts = t->shifts;
}

/* ---- lifetime (switch.c) ---- */

void vsw_rtab_reset(vsw_switch *sw)
{
    struct vsw_rtab *t = sw->rtab;
    if (!t)
        return;
    rt_layout_free(t);
    t->n = 0;
    t->nfree = 0;
    t->nslot = 0;
    memset(t->per_scope, 0, sizeof(t->per_scope));
    if (t->hash)
        memset(t->hash, 0, t->hcap * sizeof(uint32_t));
    t->need_full = 1;
}

void vsw_rtab_free(vsw_switch *sw)
{
    struct vsw_rtab *t = sw->rtab;
    if (!t)
        return;
    rt_layout_free(t);
    free(t->rec);
    free(t->freel);
    free(t->ord);
    free(t->rank_of);
    free(t->hash);
    free(t);
    sw->rtab = NULL;
}
