/* rule_layout.c - where the rule table's rules sit in the published set
 * (their ranks), the base and delta trees, and building and publishing a
 * set after each change (the scheme is described in rule_table.h).
 *
 * The shadows (slot_at, crule_at, act_at, serial_at, rank_of) are the
 * control side's copy of the next set's arrays, updated in place per
 * change; publishing copies them (memcpy) into a set of its own, because
 * the data path may still read the previous set's arrays.
 *
 * Costs that decide the bounds below (measured with bench_rules.c, see
 * docs/vswitch.md): a full build is ~1 us a rule (4 ms at 4096, ~180 ms at
 * 65536 tenant rules); the delta tree is rebuilt on every change, so it
 * is kept to a few hundred rules; striking a base entry copies the tree
 * holding it (1.4 MB at 4096 rules). */
#include "rule_table.h"
#include <stdlib.h>
#include <string.h>

/* Rebuild everything once the delta tree holds more rules than this, or
 * more base entries than this have been struck out (dead entries still
 * cost the lookups that reach them). */
#define DELTA_MAX(n)  (64u + (n) / 32u)
#define STRUCK_MAX(n) (64u + (n) / 8u)

#define GROUP_WORDS (sizeof(vsw_lgroup) / sizeof(uint64_t))

/* A free rank's rule: an inverted source port range never matches. */
static const vsw_crule never = { .ranges = 1, .sp_lo = 0xffff, .sp_hi = 0,
                                 .index = UINT32_MAX };

static void tree_release(vsw_tree *tr)
{
    if (tr->shared && --*tr->shared)
        return;
    free(tr->shared);
    free(tr->mem);
    free(tr->port_root);
    memset(tr, 0, sizeof(*tr));
}

void rt_layout_free(struct vsw_rtab *t)
{
    for (size_t i = 0; i < t->nbase_trees; i++)
        tree_release(&t->base[i]);
    t->nbase_trees = 0;
    if (t->has_delta)
        tree_release(&t->delta);
    t->has_delta = 0;
    free(t->slot_at);
    free(t->crule_at);
    free(t->act_at);
    free(t->serial_at);
    t->slot_at = NULL;
    t->crule_at = NULL;
    t->act_at = NULL;
    t->serial_at = NULL;
    t->R = 0;
    t->nbase = t->ndelta = t->nstruck = 0;
    t->need_full = 1;
}

static void act_of(vsw_act *r, const vsw_crule *c)
{
    memset(r, 0, sizeof(*r));
    r->index = c->index;
    r->flags = c->flags;
    r->verdict = c->verdict;
    r->set_tc = c->set_tc;
    r->mirror_port = c->mirror_port;
    r->meter = c->meter;
    r->redirect_port = c->redirect_port;
}

static void set_rank(struct vsw_rtab *t, uint32_t r, uint32_t s)
{
    const vsw_trec *e = &t->rec[s];
    t->slot_at[r] = s + 1;
    t->crule_at[r] = e->cr;
    act_of(&t->act_at[r], &e->cr);
    t->serial_at[r] = e->serial;
    t->rank_of[s] = r;
}

static void clear_rank(struct vsw_rtab *t, uint32_t r)
{
    t->slot_at[r] = 0;
    t->crule_at[r] = never;
    act_of(&t->act_at[r], &never);
    t->serial_at[r] = 0;
}

/* ---- copy-on-write edits of a base tree ---- */

/* If tree `in` holds a valid entry of rank `dead`, or of a rank in
 * [lo, hi] (moved by `by`), make *out a copy with those entries struck
 * out or moved, and return 1; 0 if it holds none; -1 out of memory.  Only
 * leaf groups change: ranks are not in the walk, and a group's entries
 * stay ascending (a shift moves a window of ranks by one into a free
 * rank, and rank[0], which the lookup uses as the group's lower bound,
 * stays at or below every valid entry). */
static int patch_tree(const vsw_tree *in, uint32_t dead, uint32_t lo, uint32_t hi,
                      int by, vsw_tree *out)
{
    size_t ng = (in->nwords - in->group_word) / GROUP_WORDS;
    const vsw_lgroup *g = (const vsw_lgroup *)(in->mem + in->group_word);
    vsw_lgroup *w = NULL;
    for (size_t i = 0; i < ng; i++) {
        for (unsigned e = 0; e < VSW_LG_ENTRIES; e++) {
            if (!(g[i].valid >> (2 * e) & 3))
                continue;
            uint32_t rk = g[i].rank[e];
            int hit_dead = rk == dead, hit_move = rk >= lo && rk <= hi;
            if (!hit_dead && !hit_move)
                continue;
            if (!w) {
                *out = *in;
                out->mem = aligned_alloc(64, in->nwords * sizeof(uint64_t));
                out->port_root = malloc(256 * sizeof(uint64_t));
                out->shared = malloc(sizeof(unsigned));
                if (!out->mem || !out->port_root || !out->shared) {
                    free(out->mem);
                    free(out->port_root);
                    free(out->shared);
                    return -1;
                }
                memcpy(out->mem, in->mem, in->nwords * sizeof(uint64_t));
                memcpy(out->port_root, in->port_root, 256 * sizeof(uint64_t));
                *out->shared = 1;
                w = (vsw_lgroup *)(out->mem + in->group_word);
            }
            if (hit_dead)
                w[i].valid &= (uint16_t)~(3u << (2 * e));
            else
                w[i].rank[e] = (uint16_t)(rk + (uint32_t)by);
        }
    }
    if (!w)
        return 0;
    if (by < 0 && out->best_rank >= lo && out->best_rank <= hi)
        out->best_rank--;           /* stays a lower bound */
    return 1;
}

static int patch_base(struct vsw_rtab *t, uint32_t dead, uint32_t lo, uint32_t hi, int by)
{
    for (size_t i = 0; i < t->nbase_trees; i++) {
        vsw_tree nt;
        int rc = patch_tree(&t->base[i], dead, lo, hi, by, &nt);
        if (rc < 0)
            return -ENOMEM;
        if (rc) {
            tree_release(&t->base[i]);
            t->base[i] = nt;
        }
    }
    return 0;
}

static void check_bounds(struct vsw_rtab *t)
{
    if (t->ndelta > DELTA_MAX(t->n) || t->nstruck > STRUCK_MAX(t->n))
        t->need_full = 1;
}

/* Move ranks [lo, hi] by `by` (+1 or -1) into the free rank next to them. */
static int shift(struct vsw_rtab *t, uint32_t lo, uint32_t hi, int by)
{
    uint32_t dst = by > 0 ? lo + 1 : lo - 1, cnt = hi - lo + 1;
    memmove(&t->slot_at[dst], &t->slot_at[lo], cnt * sizeof(uint32_t));
    memmove(&t->crule_at[dst], &t->crule_at[lo], cnt * sizeof(vsw_crule));
    memmove(&t->act_at[dst], &t->act_at[lo], cnt * sizeof(vsw_act));
    memmove(&t->serial_at[dst], &t->serial_at[lo], cnt * sizeof(uint64_t));
    clear_rank(t, by > 0 ? lo : hi);
    for (uint32_t r = dst; r < dst + cnt; r++) {
        uint32_t s = t->slot_at[r];
        if (!s)
            continue;
        t->rank_of[s - 1] = r;
        if (!t->rec[s - 1].in_base)
            t->delta_dirty = 1;     /* its tree holds the old rank */
    }
    t->shifts++;
    return patch_base(t, UINT32_MAX, lo, hi, by);
}

int rt_layout_insert(struct vsw_rtab *t, uint32_t s, uint32_t pos)
{
    if (t->need_full || t->n > t->R)
        return t->need_full = 1, 0;
    int64_t a = pos > 0 ? (int64_t)t->rank_of[t->ord[pos - 1]] : -1;
    int64_t b = pos + 1 < t->n ? (int64_t)t->rank_of[t->ord[pos + 1]] : (int64_t)t->R;
    uint32_t r;
    if (b - a >= 2) {
        /* appends at the end take the next rank, so that a run of them
         * uses the tail one rank at a time; inserts elsewhere halve the
         * gap */
        if (pos + 1 == t->n && pos > 0)
            r = (uint32_t)(a + 1);
        else if (pos == 0 && t->n > 1)
            r = (uint32_t)(b - 1);
        else
            r = (uint32_t)(a + (b - a) / 2);
    } else {
        /* no free rank between the neighbours: move the ranks between the
         * insertion point and the nearest free rank by one */
        int64_t up = b, dn = a;
        while (up < t->R && t->slot_at[up])
            up++;
        while (dn >= 0 && t->slot_at[dn])
            dn--;
        int rc;
        if (up < t->R && (dn < 0 || up - b <= a - dn)) {
            rc = shift(t, (uint32_t)b, (uint32_t)(up - 1), 1);
            r = (uint32_t)b;
        } else if (dn >= 0) {
            rc = shift(t, (uint32_t)(dn + 1), (uint32_t)a, -1);
            r = (uint32_t)a;
        } else {
            return t->need_full = 1, 0;     /* no rank free anywhere */
        }
        if (rc)
            return rc;
    }
    set_rank(t, r, s);
    t->rec[s].in_base = 0;
    t->ndelta++;
    t->delta_dirty = 1;
    check_bounds(t);
    return 0;
}

/* Take slot s's entries out of whichever tree holds them. */
static int unlink_rule(struct vsw_rtab *t, uint32_t s)
{
    vsw_trec *e = &t->rec[s];
    if (e->in_base) {
        int rc = patch_base(t, t->rank_of[s], 1, 0, 0);
        if (rc)
            return rc;
        e->in_base = 0;
        t->nbase--;
        t->nstruck++;
    } else {
        t->ndelta--;
        t->delta_dirty = 1;
    }
    return 0;
}

int rt_layout_remove(struct vsw_rtab *t, uint32_t s)
{
    if (t->need_full)
        return 0;
    int rc = unlink_rule(t, s);
    if (rc)
        return rc;
    clear_rank(t, t->rank_of[s]);
    check_bounds(t);
    return 0;
}

int rt_layout_update(struct vsw_rtab *t, uint32_t s)
{
    if (t->need_full)
        return 0;
    int rc = unlink_rule(t, s);
    if (rc)
        return rc;
    set_rank(t, t->rank_of[s], s);
    t->ndelta++;                    /* the new version is in the delta */
    t->delta_dirty = 1;
    check_bounds(t);
    return 0;
}

/* ---- building a set ---- */

/* Rank space for n rules: room for one insert between every two rules
 * and a tail for appends, within the 16 bits leaf groups store. */
static uint32_t rank_space(uint32_t n, uint32_t *tail)
{
    uint64_t want = 2ull * n + 72 + n / 8;
    uint32_t R = want > VSW_ACL_MAX_RULES ? VSW_ACL_MAX_RULES : (uint32_t)want;
    uint32_t tl = 64 + n / 8;
    *tail = tl < R - n ? tl : (R - n) / 2;
    return R;
}

static vsw_acl *set_alloc(const struct vsw_rtab *t)
{
    uint32_t R = t->R ? t->R : 1, S = t->nslot ? t->nslot : 1;
    vsw_acl *a = calloc(1, sizeof(*a));
    if (!a)
        return NULL;
    a->nrules = t->R;
    a->rules = malloc(R * sizeof(vsw_crule));
    a->act = aligned_alloc(64, (R * sizeof(vsw_act) + 63) / 64 * 64);
    a->serial = malloc(R * sizeof(uint64_t));
    a->rank_of = malloc(S * sizeof(uint32_t));
    a->nindex = t->nslot;
    if (!a->rules || !a->act || !a->serial || !a->rank_of) {
        vsw_acl_free(a);
        return NULL;
    }
    memcpy(a->rules, t->crule_at, t->R * sizeof(vsw_crule));
    memcpy(a->act, t->act_at, t->R * sizeof(vsw_act));
    memcpy(a->serial, t->serial_at, t->R * sizeof(uint64_t));
    memcpy(a->rank_of, t->rank_of, t->nslot * sizeof(uint32_t));
    a->bytes = sizeof(*a) + (size_t)t->R * (sizeof(vsw_crule) + sizeof(vsw_act) +
                                            sizeof(uint64_t)) + t->nslot * sizeof(uint32_t);
    return a;
}

/* Everything from the records: new rank space, ranks spread evenly, base
 * trees over all rules, no delta.  Returns the new set, or NULL (then the
 * table's layout is left as it was, still marked for a full build). */
static vsw_acl *full_build(struct vsw_rtab *t)
{
    uint32_t n = t->n, tail, R = rank_space(n, &tail), U = R - tail;
    uint32_t h = tail >= 1 && U > n ? 1 : 0;        /* room before the first */
    struct vsw_rtab nt = *t;        /* the new layout, swapped in on success */
    nt.R = R;
    nt.slot_at = calloc(R, sizeof(uint32_t));
    nt.crule_at = malloc(R * sizeof(vsw_crule));
    nt.act_at = malloc(R * sizeof(vsw_act));
    nt.serial_at = malloc(R * sizeof(uint64_t));
    uint32_t *ranks = malloc((n ? n : 1) * sizeof(uint32_t));
    vsw_acl *a = NULL;
    if (!nt.slot_at || !nt.crule_at || !nt.act_at || !nt.serial_at || !ranks)
        goto fail;
    for (uint32_t r = 0; r < R; r++)
        clear_rank(&nt, r);
    /* rank_of is the table's own array, indexed by slot: write the new
     * ranks only once nothing can fail */
    for (uint32_t i = 0; i < n; i++)
        ranks[i] = (uint32_t)((uint64_t)i * U / (n ? n : 1)) + h;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t s = t->ord[i];
        nt.slot_at[ranks[i]] = s + 1;
        nt.crule_at[ranks[i]] = t->rec[s].cr;
        act_of(&nt.act_at[ranks[i]], &t->rec[s].cr);
        nt.serial_at[ranks[i]] = t->rec[s].serial;
    }
    uint32_t *rank_of = t->rank_of;
    nt.rank_of = malloc((t->nslot ? t->nslot : 1) * sizeof(uint32_t));
    if (!nt.rank_of)
        goto fail;
    for (uint32_t i = 0; i < n; i++)
        nt.rank_of[t->ord[i]] = ranks[i];
    a = set_alloc(&nt);
    free(nt.rank_of);
    nt.rank_of = rank_of;
    if (!a || vsw_acl_build_trees_on(a, ranks, n, VSW_MAX_TREES - 1, 1))
        goto fail;
    for (size_t i = 0; i < a->ntrees; i++) {
        a->trees[i].shared = malloc(sizeof(unsigned));
        if (!a->trees[i].shared)
            goto fail;              /* the set frees those without */
        *a->trees[i].shared = 2;    /* the set and the table */
    }
    /* success: the old layout goes, the new one takes its place */
    rt_layout_free(t);
    nt.nbase_trees = a->ntrees;
    memcpy(nt.base, a->trees, a->ntrees * sizeof(vsw_tree));
    nt.has_delta = 0;
    nt.delta_dirty = 0;
    nt.need_full = 0;
    nt.nbase = n;
    nt.ndelta = nt.nstruck = 0;
    nt.full_builds = t->full_builds + 1;
    *t = nt;
    for (uint32_t i = 0; i < n; i++) {
        t->rank_of[t->ord[i]] = ranks[i];
        t->rec[t->ord[i]].in_base = 1;
    }
    free(ranks);
    return a;
fail:
    if (a) {
        for (size_t i = 0; i < a->ntrees; i++)
            if (a->trees[i].shared)
                *a->trees[i].shared = 1;
        vsw_acl_free(a);
    }
    free(nt.slot_at);
    free(nt.crule_at);
    free(nt.act_at);
    free(nt.serial_at);
    free(ranks);
    return NULL;
}

static vsw_acl *incremental_build(struct vsw_rtab *t)
{
    vsw_acl *a = set_alloc(t);
    if (!a)
        return NULL;
    if (t->delta_dirty) {
        uint32_t *ranks = malloc((t->ndelta ? t->ndelta : 1) * sizeof(uint32_t));
        size_t nd = 0;
        vsw_tree d;
        if (!ranks)
            goto fail;
        for (uint32_t r = 0; r < t->R && nd < t->ndelta; r++)
            if (t->slot_at[r] && !t->rec[t->slot_at[r] - 1].in_base)
                ranks[nd++] = r;
        int rc = nd ? vsw_acl_build_one_tree(a, &d, ranks, nd) : 0;
        free(ranks);
        if (rc)
            goto fail;
        if (nd && !(d.shared = malloc(sizeof(unsigned)))) {
            tree_release(&d);
            goto fail;
        }
        if (t->has_delta)
            tree_release(&t->delta);
        t->has_delta = nd > 0;
        if (nd) {
            *d.shared = 1;
            t->delta = d;
        }
        t->delta_dirty = 0;
    }
    for (size_t i = 0; i <= t->nbase_trees; i++) {
        const vsw_tree *src = i < t->nbase_trees ? &t->base[i] : t->has_delta ? &t->delta : NULL;
        if (!src)
            break;
        vsw_tree *dst = &a->trees[a->ntrees++];
        *dst = *src;
        dst->rules = a->rules;
        ++*dst->shared;
        a->bytes += (dst->nwords + 256) * sizeof(uint64_t);
    }
    /* lookups visit trees in order of their best rank */
    for (size_t i = 1; i < a->ntrees; i++)
        for (size_t j = i; j > 0 && a->trees[j].best_rank < a->trees[j - 1].best_rank; j--) {
            vsw_tree x = a->trees[j]; a->trees[j] = a->trees[j - 1]; a->trees[j - 1] = x;
        }
    return a;
fail:
    vsw_acl_free(a);
    return NULL;
}

/* ---- publication and counters ---- */

/* A retired table set: its counters are credited to the records when it
 * is freed (the data path may count into it until then). */
typedef struct rt_retired { vsw_acl *a; struct vsw_rtab *t; } rt_retired;

static void rt_retired_free(void *p)
{
    rt_retired *w = p;
    const vsw_acl *a = w->a;
    struct vsw_rtab *t = w->t;
    for (size_t r = 0; r < a->nrules; r++) {
        uint32_t s = a->act[r].index;
        if (a->serial[r] && s < t->nslot && t->rec[s].serial == a->serial[r]) {
            t->rec[s].pk_done += vsw_ctr_get(&a->act[r].packets);
            t->rec[s].by_done += vsw_ctr_get(&a->act[r].bytes);
        }
    }
    vsw_acl_free(w->a);
    free(w);
}

static void plain_acl_free(void *p) { vsw_acl_free(p); }

int rt_publish(vsw_switch *sw, struct vsw_rtab *t, vsw_error *err)
{
    rt_retired *w = malloc(sizeof(*w));
    vsw_cfgset *fresh = w ? vsw_cfg_clone(sw) : NULL;
    vsw_acl *a = NULL;
    if (fresh)
        a = t->need_full ? full_build(t) : incremental_build(t);
    if (!a) {
        free(w);
        free(fresh);
        t->need_full = 1;
        return vsw_err(err, -ENOMEM, -1, "out of memory building the rule set");
    }
    a->gen = ++sw->acl_gen;
    vsw_acl *old = fresh->acl;
    fresh->acl = a;
    if (old->serial) {
        w->a = old;
        w->t = t;
        vsw_publish(sw, fresh, w, rt_retired_free);
    } else {
        free(w);
        vsw_publish(sw, fresh, old, plain_acl_free);
    }
    return 0;
}

static void set_counts(const vsw_acl *a, uint32_t s, uint64_t serial, uint64_t *p,
                       uint64_t *b)
{
    if (!a->serial || s >= a->nindex)
        return;
    uint32_t r = a->rank_of[s];
    if (r < a->nrules && a->serial[r] == serial) {
        *p += vsw_ctr_get(&a->act[r].packets);
        *b += vsw_ctr_get(&a->act[r].bytes);
    }
}

void rt_live_counts(const vsw_switch *sw, uint32_t s, uint64_t serial,
                    uint64_t *packets, uint64_t *bytes)
{
    *packets = *bytes = 0;
    set_counts(vsw_cur(sw)->acl, s, serial, packets, bytes);
    for (const vsw_retired *r = sw->retired; r; r = r->next)
        if (r->fn == rt_retired_free)
            set_counts(((const rt_retired *)r->obj)->a, s, serial, packets, bytes);
}
