/* acl_tree.c - the ACL classifier: decision trees over the 512-bit key,
 * and how they are built (acl_lookup.c walks them).
 *
 * Why a decision tree.  The goals are >= 20 Mpps at 4096 rules on one core
 * and at most 2x slowdown from 16 to 65536 rules.  Linear and bit-vector
 * schemes cost O(rules); tuple-space search costs O(distinct masks), which
 * with port ranges and mixed prefix lengths grows with the rule set.  A
 * decision tree costs O(depth) memory accesses, and depth grows with
 * log(rules) / bits-per-cut (<= 10 bits per level here).
 *
 * How it is built (a HiCuts/HyperSplit relative that cuts on bit windows):
 *   - every rule is a ternary value/mask over the key; a port range that is
 *     not a prefix is over-approximated by its common prefix in the tree and
 *     checked exactly in the leaf, so the tree only filters and the leaf
 *     decides;
 *   - an internal node cuts a window of 1..10 contiguous bits of one key word
 *     (within one field) into 2^k children; a rule goes to every child its
 *     bits in the window agree with (wildcard bits replicate it);
 *   - candidate windows start at the most significant bit of each field on
 *     which the node's rules disagree; the chosen one minimises the largest
 *     child, then the total replication (bounded per node);
 *   - a rule whose every specified bit is fixed by the path covers the whole
 *     node: all lower-priority rules are removed below it;
 *   - children with the same rule list share one subtree;
 *   - leaves hold <= LEAF_MAX rules (sorted by rank: first match wins),
 *     checked together in one leaf group (see vsw_lgroup);
 *   - if one tree would replicate too much (many rules wildcard on the fields
 *     others are cut on), the rules are split by which fields they specify
 *     into up to 8 trees; a lookup visits trees in order of their best rank
 *     and stops once no tree can beat the match found (EffiCuts' idea).
 *   - a leaf entry holds the rule's value/mask only for the bits the path
 *     has not compared yet, so the final check reads the group's three
 *     sequential lines instead of separate rule records;
 *   - child arrays and leaf groups are laid out in one array that every
 *     descriptor indexes the same way (see vsw_tree).
 */
#include "vsw_internal.h"
#include <stdlib.h>
#include <string.h>

/* Nodes of up to LEAF_MAX rules become leaves.  A leaf group checks all
 * its entries without a branch per entry, so bigger leaves cost little and
 * save levels: at 65536 bench rules, 2 / 4 / 6 / 8 give 5.35 / 4.38 / 3.79
 * / 3.39 levels and 4.1 / 4.3 / 3.1 / 2.5 leaf references per rule; 6 is
 * as fast as 8 at 65536 rules (45.4 against 45.3 ns a frame) and faster at
 * 4096 (38.5 against 41.3), where bigger leaves need a second group more
 * often. */
#define LEAF_MAX     6
#define LEAF_BIG     32
#define MAX_DEPTH    40
/* Widest cut.  10 rather than 8 bits: the bench's tenant rules, cut after
 * the in_port on the dst address's top bits, need a 10-bit window to
 * separate the /16s in one level (3.79 -> 3.24 levels a frame at 65536
 * rules, ~1 ns faster); 11-12 bits with more replication allowed went over
 * the build budget and fell back to four trees (8.5 levels a frame). */
#define MAX_BITS     10
/* Nodes this deep (the root is 0) with at most CAP_LEAF rules become
 * leaves (two groups, if their lanes fit) instead of being cut further.
 * Only ~7% of the bench's frames at 65536 rules went deeper, but a burst's
 * walk takes as many passes as its deepest frame has levels, and the last
 * passes, with few frames left, wait on memory: the deepest frame of a
 * 32-frame burst had 7.1 levels on average against 3.24 for all frames
 * (at most 11); with the cap, 5.0 against 3.11 (at most 5), and the
 * compiled set is smaller (25.0 against 25.7 MB).  Not LEAF_BIG: random
 * rule sets, whose wildcards replicate them, then grew from 1.5 to 21 leaf
 * references per rule. */
#define DEPTH_CAP    6
#define CAP_LEAF     16

typedef struct field { uint8_t word, lo, width; } field;
static const field fields[] = {
    {0, 56, 8}, {0, 48, 8}, {0, 32, 16}, {0, 16, 16}, {0, 8, 8}, {0, 0, 8},
    {1, 16, 48}, {1, 0, 16}, {2, 16, 48}, {2, 0, 16},
    {3, 0, 64}, {4, 0, 64}, {5, 0, 64}, {6, 0, 64},
    {7, 56, 8}, {7, 48, 8},
};
#define NFIELDS (sizeof(fields) / sizeof(fields[0]))

typedef struct bctx {
    const vsw_acl *a;
    uint64_t *children; size_t nch, capch;
    vsw_lgroup *grp;    size_t ngrp, capgrp;   /* leaf groups              */
    size_t    nrefs;    /* rule entries in leaves                           */
    size_t    nnodes;
    size_t    budget;   /* max children + leaf refs, 0 = unlimited          */
    int       fail;     /* 1: over budget, 2: out of memory                 */
    unsigned  fpct;     /* per-node replication allowed, percent of n        */
    unsigned  depth;
    int       keep_hidden; /* rule-table base trees: no rule hides others  */
} bctx;

static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t nc = *cap ? *cap : 1024;
    while (nc < need)
        nc *= 2;
    void *q = realloc(*p, nc * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = nc;
    return 0;
}

static int over(bctx *b)
{
    if (b->budget && b->nch + b->nrefs > b->budget)
        b->fail = b->fail ? b->fail : 1;
    return b->fail;
}

/* The lanes of rule c under the path constraint pm (see vsw_lgroup):
 * the key halves with mask bits pm does not cover, then its port ranges.
 * Returns the number of lanes; bit j of *rng is set for range lanes. */
static unsigned rule_lanes(const vsw_crule *c, const uint64_t *pm, uint8_t *idx,
                           uint32_t *val, uint32_t *msk, unsigned *rng)
{
    unsigned n = 0;
    *rng = 0;
    for (unsigned w = 0; w < VSW_KEY_WORDS; w++)
        for (unsigned hi = 0; hi < 2; hi++) {
            uint32_t m = (uint32_t)((c->m[w] & ~pm[w]) >> (32 * hi));
            if (!m)
                continue;
            idx[n] = (uint8_t)VSW_KEY_HALF(w, hi);
            val[n] = (uint32_t)(c->v[w] >> (32 * hi)) & m;
            msk[n++] = m;
        }
    for (unsigned r = 0; r < 2; r++) {      /* sport in w1, dport in w2 */
        if (!(c->ranges >> r & 1))
            continue;
        uint16_t lo = r ? c->dp_lo : c->sp_lo, hi = r ? c->dp_hi : c->sp_hi;
        *rng |= 1u << n;
        idx[n] = (uint8_t)VSW_KEY_HALF(1 + r, 0);
        val[n] = lo;
        msk[n++] = (uint32_t)(hi - lo);
    }
    return n;
}

/* A leaf for rules r[0..n) under the path constraint pm: their entries
 * in order, each using the lanes already in its group that it shares and
 * adding the rest, in as few groups as the lanes need. */
static uint64_t make_leaf(bctx *b, const uint32_t *r, size_t n, const uint64_t *pm)
{
    size_t base = b->ngrp;
    vsw_lgroup *g = NULL;
    unsigned nl = 0;        /* lanes used in g */
    for (size_t i = 0; i < n; i++) {
        uint8_t idx[2 * VSW_KEY_WORDS + 2];
        uint32_t val[2 * VSW_KEY_WORDS + 2], msk[2 * VSW_KEY_WORDS + 2];
        unsigned rng, ln = rule_lanes(&b->a->rules[r[i]], pm, idx, val, msk, &rng);
        unsigned verify = ln > VSW_LG_LANES;
        if (verify)
            ln = VSW_LG_LANES;
        /* which of its lanes g has already (lane j of the rule: at[j]) */
        int at[2 * VSW_KEY_WORDS + 2];
        unsigned fresh = 0;
        for (unsigned j = 0; j < ln; j++) {
            at[j] = -1;
            for (unsigned q = 0; g && q < nl && at[j] < 0; q++)
                if (g->idx[q] == idx[j] && g->val[q] == val[j] && g->msk[q] == msk[j] &&
                    (g->rng >> q & 1) == (rng >> j & 1))
                    at[j] = (int)q;
            fresh += at[j] < 0;
        }
        if (!g || g->nent == VSW_LG_ENTRIES || nl + fresh > VSW_LG_LANES) {
            if (grow((void **)&b->grp, &b->capgrp, b->ngrp + 1, sizeof(vsw_lgroup))) {
                b->fail = 2;
                return VSW_TN_LEAF;
            }
            g = &b->grp[b->ngrp++];
            memset(g, 0, sizeof(*g));
            nl = 0;
            for (unsigned j = 0; j < ln; j++)
                at[j] = -1;
        }
        unsigned e = g->nent++;
        uint16_t lm = 0;
        for (unsigned j = 0; j < ln; j++) {
            if (at[j] < 0) {
                g->idx[nl] = idx[j];
                g->val[nl] = val[j];
                g->msk[nl] = msk[j];
                g->rng |= (uint16_t)((rng >> j & 1) << nl);
                at[j] = (int)nl++;
            }
            lm |= (uint16_t)(1u << at[j]);
        }
        g->lanes[e] = lm;
        g->rank[e] = (uint16_t)r[i];
        g->valid |= (uint16_t)(3u << (2 * e));
        g->verify |= (uint8_t)(verify << e);
        if (!ln && !b->keep_hidden) /* matches every key that gets here */
            break;
    }
    size_t cnt = b->ngrp - base;
    if (cnt >= VSW_TN_LONG) {
        /* too many groups for the descriptor: one more slot before them,
         * whose last word holds the count (vsw_tn_ngroups) */
        if (grow((void **)&b->grp, &b->capgrp, b->ngrp + 1, sizeof(vsw_lgroup))) {
            b->fail = 2;
            return VSW_TN_LEAF;
        }
        memmove(&b->grp[base + 1], &b->grp[base], cnt * sizeof(vsw_lgroup));
        memset(&b->grp[base], 0, sizeof(vsw_lgroup));
        uint64_t c64 = cnt;
        memcpy((char *)&b->grp[base + 1] - sizeof(c64), &c64, sizeof(c64));
        b->ngrp++;
        base++;
    }
    b->nrefs += n;
    b->nnodes++;
    over(b);
    if (!cnt)
        return VSW_TN_LEAF;     /* empty: no groups to point at */
    return VSW_TN_LEAF | ((uint64_t)(cnt < VSW_TN_LONG ? cnt : VSW_TN_LONG) << 48) | base;
}

static int hibit(uint64_t x) { return 63 - __builtin_clzll(x); }

typedef struct cand { uint8_t w, s, k; size_t maxc, total; } cand;

/* Child sizes if rules r[0], r[step], ... are cut on k bits at `s` of
 * key word w: the largest child and the sum of all (scaled by step). */
static void eval_window(const vsw_crule *R, const uint32_t *r, size_t n, size_t step,
                        unsigned w, int s, unsigned k, size_t *maxc, size_t *total)
{
    size_t cnt[1u << MAX_BITS];
    uint64_t km = (1ull << k) - 1;
    memset(cnt, 0, sizeof(size_t) << k);
    size_t all = 0, tot = 0;
    for (size_t i = 0; i < n; i += step) {
        const vsw_crule *c = &R[r[i]];
        unsigned wv = (unsigned)((c->v[w] >> s) & km);
        unsigned wm = (unsigned)((c->m[w] >> s) & km);
        if (wm == km) {
            cnt[wv]++;
            tot++;
        } else if (wm == 0) {
            all++;
            tot += (size_t)1 << k;
        } else {
            unsigned fr = (unsigned)km & ~wm, sub = 0;
            do {
                cnt[wv | sub]++;
                tot++;
                sub = (sub - fr) & fr;
            } while (sub);
        }
    }
    size_t mx = 0;
    for (size_t c = 0; c < ((size_t)1 << k); c++)
        if (cnt[c] > mx)
            mx = cnt[c];
    *maxc = (mx + all) * step;
    *total = tot * step;
}

/* Build the subtree for rules r[0..n) (ranks, ascending) under the path
 * constraint pm (the bits already fixed above).  Returns its descriptor. */
static uint64_t build(bctx *b, uint32_t *r, size_t n, const uint64_t *pm,
                      unsigned depth)
{
    const vsw_crule *R = b->a->rules;
    if (b->fail)
        return VSW_TN_LEAF;
    if (depth > b->depth)
        b->depth = depth;
    /* a rule covering the whole node hides everything after it (not in
     * rule-table base trees, whose entries may be invalidated later: the
     * hidden rules must still be there when the covering one goes) */
    for (size_t i = 0; i < n && !b->keep_hidden; i++) {
        const vsw_crule *c = &R[r[i]];
        if (!c->exact)
            continue;
        uint64_t free_bits = 0;
        for (int w = 0; w < VSW_KEY_WORDS; w++)
            free_bits |= c->m[w] & ~pm[w];
        if (!free_bits) {
            n = i + 1;
            break;
        }
    }
    if (n <= LEAF_MAX || depth >= MAX_DEPTH || (depth >= DEPTH_CAP && n <= CAP_LEAF))
        return make_leaf(b, r, n, pm);

    uint64_t or1[VSW_KEY_WORDS] = {0}, or0[VSW_KEY_WORDS] = {0};
    for (size_t i = 0; i < n; i++) {
        const vsw_crule *c = &R[r[i]];
        for (int w = 0; w < VSW_KEY_WORDS; w++) {
            or1[w] |= c->v[w] & c->m[w];
            or0[w] |= ~c->v[w] & c->m[w];
        }
    }
    unsigned kmax = 1;
    while (kmax < MAX_BITS && (1ull << (kmax + 1)) <= 4 * n)
        kmax++;
    /* Candidate windows: for every field, windows of k bits whose top bit is
     * one of the field's 8 (4 for nodes of <= 256 rules) most significant
     * bits on which the node's rules disagree.  Large nodes rank candidates on a sample of rules, then the
     * best few are evaluated exactly. */
    enum { KEEP = 4 };
    static const unsigned ks[] = {1, 2, 3, 4, 6, 8, 10};
    const int TOPS = n > 256 ? 8 : 4;    /* small nodes: fewer candidates */
    size_t step0 = n > 512 ? n / 256 : 1;
    cand best = {0, 0, 0, n, 0};
    for (size_t step = step0;; step = 1) {
        cand keep[KEEP];
        size_t nkeep = 0;
        for (size_t f = 0; f < NFIELDS; f++) {
            const field *fd = &fields[f];
            uint64_t fm = fd->width == 64 ? ~0ull : ((1ull << fd->width) - 1) << fd->lo;
            uint64_t diff = or1[fd->word] & or0[fd->word] & ~pm[fd->word] & fm;
            for (int top = 0; top < TOPS && diff; top++) {
                int hb = hibit(diff);
                diff &= ~(1ull << hb);
                for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]) && ks[ki] <= kmax; ki++) {
                    unsigned k = ks[ki];
                    int sh = hb - (int)k + 1;
                    if (sh < fd->lo)
                        break;
                    size_t mx, total;
                    eval_window(R, r, n, step, fd->word, sh, k, &mx, &total);
                    size_t allow = n * b->fpct / 100 + (b->fpct > 100 ? (size_t)1 << k : 0);
                    if (step > 1)
                        allow -= allow / 10;        /* margin for sampling error */
                    if (mx >= n || total > allow)
                        continue;
                    cand c = {fd->word, (uint8_t)sh, (uint8_t)k, mx, total};
                    /* insert into the KEEP best, ordered by (maxc, total) */
                    size_t pos = nkeep;
                    while (pos > 0 && (c.maxc < keep[pos - 1].maxc ||
                                       (c.maxc == keep[pos - 1].maxc && c.total < keep[pos - 1].total)))
                        pos--;
                    if (pos >= KEEP)
                        continue;
                    if (nkeep < KEEP)
                        nkeep++;
                    memmove(&keep[pos + 1], &keep[pos], (nkeep - 1 - pos) * sizeof(cand));
                    keep[pos] = c;
                }
            }
        }
        for (size_t i = 0; i < nkeep; i++) {
            cand c = keep[i];
            if (step > 1) {
                eval_window(R, r, n, 1, c.w, c.s, c.k, &c.maxc, &c.total);
                size_t allow = n * b->fpct / 100 + (b->fpct > 100 ? (size_t)1 << c.k : 0);
                if (c.maxc >= n || c.total > allow)
                    continue;
            }
            if (best.k == 0 || c.maxc < best.maxc || (c.maxc == best.maxc && c.total < best.total))
                best = c;
        }
        if (best.k || step == 1)
            break;
    }
    if (best.k == 0) {
        /* no cut helps: a long leaf.  Only the last-resort build (no
         * replication allowed) may keep one; otherwise try the next plan. */
        if (n > LEAF_BIG && b->fpct > 100 && !b->fail)
            b->fail = 1;
        return make_leaf(b, r, n, pm);
    }

    /* distribute the rules to the children */
    unsigned k = best.k, nc = 1u << k;
    uint64_t km = ((1ull << k) - 1);
    size_t *off = calloc(nc + 1, sizeof(size_t));
    uint32_t *lists = malloc(best.total * sizeof(uint32_t));
    if (!off || !lists) {
        free(off);
        free(lists);
        b->fail = 2;
        return VSW_TN_LEAF;
    }
    for (size_t i = 0; i < n; i++) {
        const vsw_crule *c = &R[r[i]];
        unsigned wv = (unsigned)((c->v[best.w] >> best.s) & km);
        unsigned wm = (unsigned)((c->m[best.w] >> best.s) & km);
        unsigned fr = (unsigned)km & ~wm, sub = 0;
        do {
            off[(wv & wm) | sub]++;
            sub = (sub - fr) & fr;
        } while (sub);
    }
    for (size_t c = 0, acc = 0; c <= nc; c++) {
        size_t t = off[c];
        off[c] = acc;
        acc += t;
    }
    size_t *pos = malloc(nc * sizeof(size_t));
    if (!pos) {
        free(off);
        free(lists);
        b->fail = 2;
        return VSW_TN_LEAF;
    }
    memcpy(pos, off, nc * sizeof(size_t));
    for (size_t i = 0; i < n; i++) {    /* in rank order: lists stay sorted */
        const vsw_crule *c = &R[r[i]];
        unsigned wv = (unsigned)((c->v[best.w] >> best.s) & km);
        unsigned wm = (unsigned)((c->m[best.w] >> best.s) & km);
        unsigned fr = (unsigned)km & ~wm, sub = 0;
        do {
            lists[pos[(wv & wm) | sub]++] = r[i];
            sub = (sub - fr) & fr;
        } while (sub);
    }
    free(pos);

    if (grow((void **)&b->children, &b->capch, b->nch + nc, sizeof(uint64_t))) {
        free(off);
        free(lists);
        b->fail = 2;
        return VSW_TN_LEAF;
    }
    size_t base = b->nch;
    b->nch += nc;
    b->nnodes++;
    if (over(b)) {
        free(off);
        free(lists);
        return VSW_TN_LEAF;
    }
    uint64_t cpm[VSW_KEY_WORDS];
    memcpy(cpm, pm, sizeof(cpm));
    cpm[best.w] |= km << best.s;
    for (unsigned c = 0; c < nc; c++) {
        size_t cn = off[c + 1] - off[c];
        uint64_t d;
        if (c > 0 && cn == off[c] - off[c - 1] &&
            !memcmp(lists + off[c], lists + off[c - 1], cn * sizeof(uint32_t)))
            d = b->children[base + c - 1];          /* same rules: share */
        else
            d = build(b, lists + off[c], cn, cpm, depth + 1);
        b->children[base + c] = d;
    }
    free(off);
    free(lists);
    return ((uint64_t)best.w << 56) | ((uint64_t)best.s << 48) |
           (km << 32) | base;
}

/* port_root[p]: from the root, follow the cuts that lie inside bits 56..63
 * of key word 0 (in_port; fields never cross) for a key whose in_port is p. */
static void fill_port_roots(vsw_tree *t)
{
    for (unsigned p = 0; p < 256; p++) {
        vsw_key k = { .w = { (uint64_t)p << 56 } };
        uint64_t d = t->root;
        while (!(d & VSW_TN_LEAF) && (d >> 56 & 7) == 0 && (d >> 48 & 63) >= 56)
            d = vsw_tn_step(t, d, &k);
        t->port_root[p] = d;
    }
}

/* Lay the child arrays and then the leaf groups out in one array (groups
 * 64-byte aligned), and turn leaf descriptors' group indices into word
 * offsets in it. */
static int lay_out(vsw_tree *t, bctx *b)
{
    size_t chw = (b->nch + 7) & ~(size_t)7, gw = sizeof(vsw_lgroup) / 8;
    size_t nw = chw + gw * b->ngrp;
    if (nw > UINT32_MAX)
        return 2;
    nw = nw ? nw : 8;
    t->mem = aligned_alloc(64, nw * 8);
    t->port_root = malloc(256 * sizeof(uint64_t));
    if (!t->mem || !t->port_root)
        return 2;
    memset(t->mem, 0, chw * 8);
    if (b->nch)
        memcpy(t->mem, b->children, b->nch * 8);
    if (b->ngrp)
        memcpy(t->mem + chw, b->grp, b->ngrp * sizeof(vsw_lgroup));
    for (size_t i = 0; i <= b->nch; i++) {
        uint64_t *d = i < b->nch ? &t->mem[i] : &t->root;
        if ((*d & VSW_TN_LEAF) && vsw_tn_count_field(*d))
            *d = (*d & ~0xffffffffull) | (chw + gw * (uint32_t)*d);
    }
    t->nwords = nw;
    t->group_word = b->ngrp ? chw : nw;
    return 0;
}

static int build_tree(const vsw_acl *a, vsw_tree *t, uint32_t *ranks, size_t n,
                      size_t budget, unsigned fpct, int keep_hidden)
{
    bctx b = { .a = a, .budget = budget, .fpct = fpct, .keep_hidden = keep_hidden };
    uint64_t pm[VSW_KEY_WORDS] = {0};
    memset(t, 0, sizeof(*t));
    t->best_rank = n ? ranks[0] : UINT32_MAX;
    t->root = build(&b, ranks, n, pm, 0);
    t->rules = a->rules;
    t->nleafrefs = b.nrefs;
    t->nnodes = b.nnodes;
    t->depth = b.depth;
    int rc = b.fail ? b.fail : lay_out(t, &b);
    free(b.children);
    free(b.grp);
    if (rc) {
        free(t->mem);
        free(t->port_root);
        memset(t, 0, sizeof(*t));
        return rc;
    }
    fill_port_roots(t);
    return 0;
}

/* Which field groups a rule specifies: the partition key for multi-tree. */
static unsigned signature(const vsw_crule *c)
{
    unsigned s = 0;
    if (c->m[0] >> 56) s |= 1;           /* in_port  */
    if ((c->m[0] >> 48) & 0xff) s |= 2;  /* out_port */
    if (c->m[1] >> 16) s |= 4;           /* src mac  */
    if (c->m[2] >> 16) s |= 8;           /* dst mac  */
    if (c->m[VSW_KW_SIP_HI] | c->m[VSW_KW_SIP_LO]) s |= 16;   /* src ip */
    if (c->m[VSW_KW_DIP_HI] | c->m[VSW_KW_DIP_LO]) s |= 32;   /* dst ip */
    if ((c->m[1] | c->m[2]) & 0xffff) s |= 64; /* l4 ports */
    if ((c->m[0] >> 32) & 0xffff) s |= 128;    /* vlan     */
    return s;
}

/* Replication allowed per node, tried in order: the first that keeps the
 * tree within budget wins.  100 means no replication at all, which always
 * fits (each rule lands in one leaf), possibly with long leaves. */
static const unsigned fsched[] = {200, 150, 120, 100};
#define NSCHED (sizeof(fsched) / sizeof(fsched[0]))

static int build_one(const vsw_acl *a, vsw_tree *t, uint32_t *ranks, size_t m,
                     int last_resort, int keep_hidden)
{
    size_t budget = 8 * m + 4096;
    for (size_t i = 0; i < NSCHED; i++) {
        if (!last_resort && fsched[i] < 150)
            break;
        int rc = build_tree(a, t, ranks, m, fsched[i] == 100 ? 0 : budget, fsched[i],
                            keep_hidden);
        if (rc != 1)
            return rc;
    }
    return 1;
}

int vsw_acl_build_trees(vsw_acl *a)
{
    size_t n = a->nrules;
    uint32_t *ranks = malloc((n ? n : 1) * sizeof(uint32_t));
    if (!ranks)
        return -1;
    for (size_t i = 0; i < n; i++)
        ranks[i] = (uint32_t)i;
    int rc = vsw_acl_build_trees_on(a, ranks, n, VSW_MAX_TREES, 0);
    free(ranks);
    return rc;
}

int vsw_acl_build_one_tree(const vsw_acl *a, vsw_tree *t, const uint32_t *ranks,
                           size_t n)
{
    uint32_t *r = malloc((n ? n : 1) * sizeof(uint32_t));
    if (!r)
        return -1;
    memcpy(r, ranks, n * sizeof(uint32_t));
    int rc = build_one(a, t, r, n, 1, 0);
    free(r);
    return rc ? -1 : 0;
}

int vsw_acl_build_trees_on(vsw_acl *a, const uint32_t *sel, size_t n,
                           unsigned max_trees, int keep_hidden)
{
    uint32_t *ranks = malloc((n ? n : 1) * sizeof(uint32_t));
    if (!ranks)
        return -1;
    if (max_trees < 1 || max_trees > VSW_MAX_TREES)
        max_trees = VSW_MAX_TREES;
    memcpy(ranks, sel, n * sizeof(uint32_t));
    a->ntrees = 1;
    int rc = build_one(a, &a->trees[0], ranks, n, 0, keep_hidden);
    if (rc == 1) {
        /* too much replication in one tree: partition the rules by which
         * fields they specify (largest groups first), one tree each */
        size_t cnt[256] = {0};
        for (size_t i = 0; i < n; i++)
            cnt[signature(&a->rules[sel[i]])]++;
        int order[256];
        for (int i = 0; i < 256; i++)
            order[i] = i;
        for (int i = 1; i < 256; i++)   /* insertion sort by count, desc */
            for (int j = i; j > 0 && cnt[order[j]] > cnt[order[j - 1]]; j--) {
                int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
            }
        int group[256];
        for (int i = 0; i < 256; i++)
            group[order[i]] = i < (int)max_trees - 1 ? i : (int)max_trees - 1;
        size_t ng = 0;
        rc = 0;
        for (int g = 0; g < (int)max_trees; g++) {
            size_t m = 0;
            for (size_t i = 0; i < n; i++)
                if (group[signature(&a->rules[sel[i]])] == g)
                    ranks[m++] = sel[i];
            if (!m)
                continue;
            rc = build_one(a, &a->trees[ng], ranks, m, 1, keep_hidden);
            if (rc)
                break;
            ng++;
        }
        a->ntrees = ng;
        /* visit trees in order of their best rank */
        for (size_t i = 1; i < ng; i++)
            for (size_t j = i; j > 0 && a->trees[j].best_rank < a->trees[j - 1].best_rank; j--) {
                vsw_tree t = a->trees[j]; a->trees[j] = a->trees[j - 1]; a->trees[j - 1] = t;
            }
    }
    free(ranks);
    if (rc)
        return -1;
    for (size_t t = 0; t < a->ntrees; t++)
        a->bytes += (a->trees[t].nwords + 256) * sizeof(uint64_t);
    return 0;
}
