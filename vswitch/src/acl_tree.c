/* acl_tree.c - the ACL classifier: decision trees over the 512-bit key.
 *
 * Why a decision tree.  The goals are >= 20 Mpps at 4096 rules on one core
 * and at most 2x slowdown from 16 to 65536 rules.  Linear and bit-vector
 * schemes cost O(rules); tuple-space search costs O(distinct masks), which
 * with port ranges and mixed prefix lengths grows with the rule set.  A
 * decision tree costs O(depth) memory accesses, and depth grows with
 * log(rules) / bits-per-cut (<= 8 bits per level here).
 *
 * How it is built (a HiCuts/HyperSplit relative that cuts on bit windows):
 *   - every rule is a ternary value/mask over the key; a port range that is
 *     not a prefix is over-approximated by its common prefix in the tree and
 *     checked exactly in the leaf, so the tree only filters and the leaf
 *     decides;
 *   - an internal node cuts a window of 1..8 contiguous bits of one key word
 *     (within one field) into 2^k children; a rule goes to every child its
 *     bits in the window agree with (wildcard bits replicate it);
 *   - candidate windows start at the most significant bit of each field on
 *     which the node's rules disagree; the chosen one minimises the largest
 *     child, then the total replication (bounded per node);
 *   - a rule whose every specified bit is fixed by the path covers the whole
 *     node: all lower-priority rules are removed below it;
 *   - children with the same rule list share one subtree;
 *   - leaves hold <= 2 rules (sorted by rank: first match wins);
 *   - if one tree would replicate too much (many rules wildcard on the fields
 *     others are cut on), the rules are split by which fields they specify
 *     into up to 8 trees; a lookup visits trees in order of their best rank
 *     and stops once no tree can beat the match found (EffiCuts' idea).
 *   - a leaf entry holds the rule's value/mask only for the bits the path
 *     has not compared yet (see vsw_tree), so the final check reads one or
 *     two sequential lines instead of a separate rule record.
 * A lookup starts at the node the key's in_port leads to (port_root), so
 * the level that separates the VFs' rules costs one load from a small
 * table.  Burst lookups walk every frame to its leaf first and check the
 * leaves after; larger trees are walked one level at a time over the burst, so
 * the loads of different frames overlap and the loop exits once a level,
 * and the largest with the next level prefetched.
 */
#include "vsw_internal.h"
#include <stdlib.h>
#include <string.h>

#define LEAF_MAX     2
/* Leaf entries have at least this many slots (padded with mask-0 ones):
 * the usual entry is then checked by straight-line code instead of a loop
 * whose trip count changes from frame to frame and mispredicts. */
#define LEAF_SLOTS   4
#define LEAF_BIG     32
#define MAX_DEPTH    40
#define MAX_BITS     8
#define BURST_MAX    64   /* frames walked together                       */

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
    uint64_t *leaf;     size_t nleaf, capleaf;  /* leaf entry words        */
    size_t    nrefs;    /* rule entries in leaves                           */
    size_t    nnodes;
    size_t    budget;   /* max children + leaf refs, 0 = unlimited          */
    int       fail;     /* 1: over budget, 2: out of memory                 */
    unsigned  fpct;     /* per-node replication allowed, percent of n        */
    unsigned  depth;
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

/* A leaf for rules r[0..n) under the path constraint pm: per rule the
 * header, the slots of the key halves with mask bits pm does not cover,
 * and the exact port ranges if the rule has any (see vsw_tree). */
static uint64_t make_leaf(bctx *b, const uint32_t *r, size_t n, const uint64_t *pm)
{
    if (grow((void **)&b->leaf, &b->capleaf, b->nleaf + n * (3 + 2 * VSW_KEY_WORDS),
             sizeof(uint64_t))) {
        b->fail = 2;
        return VSW_TN_LEAF;
    }
    uint64_t base = b->nleaf, *o = b->leaf + base;
    for (size_t i = 0; i < n; i++) {
        const vsw_crule *c = &b->a->rules[r[i]];
        uint64_t slot[2 * VSW_KEY_WORDS], idx[2] = {0, 0};
        unsigned ns = 0;
        for (unsigned w = 0; w < VSW_KEY_WORDS; w++)
            for (unsigned hi = 0; hi < 2; hi++) {
                uint32_t m = (uint32_t)((c->m[w] & ~pm[w]) >> (32 * hi));
                if (!m)
                    continue;
                uint32_t v = (uint32_t)(c->v[w] >> (32 * hi)) & m;
                idx[ns / 9] |= (uint64_t)VSW_KEY_HALF(w, hi) << (4 * (ns % 9));
                slot[ns++] = v | (uint64_t)m << 32;
            }
        while (ns < LEAF_SLOTS)         /* pad: h[0] compared under mask 0 */
            slot[ns++] = 0;
        *o++ = r[i] | (c->ranges ? VSW_LE_RANGE : 0) | (uint64_t)ns << VSW_LE_NS_SHIFT |
               idx[0] << VSW_LE_IDX_SHIFT;
        if (ns > 9)
            *o++ = idx[1];
        memcpy(o, slot, ns * sizeof(uint64_t));
        o += ns;
        if (c->ranges) {
            uint64_t sp = c->ranges & 1 ? c->sp_lo | (uint64_t)c->sp_hi << 16 : 0xffff0000u;
            uint64_t dp = c->ranges & 2 ? c->dp_lo | (uint64_t)c->dp_hi << 16 : 0xffff0000u;
            *o++ = sp | dp << 32;
        }
    }
    b->nleaf = (size_t)(o - b->leaf);
    b->nrefs += n;
    b->nnodes++;
    over(b);
    return VSW_TN_LEAF | ((uint64_t)n << 32) | base;
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
    /* a rule covering the whole node hides everything after it */
    for (size_t i = 0; i < n; i++) {
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
    if (n <= LEAF_MAX || depth >= MAX_DEPTH)
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
    static const unsigned ks[] = {1, 2, 3, 4, 6, 8};
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

static void fill_port_roots(vsw_tree *t);

static int build_tree(const vsw_acl *a, vsw_tree *t, uint32_t *ranks, size_t n,
                      size_t budget, unsigned fpct)
{
    bctx b = { .a = a, .budget = budget, .fpct = fpct };
    uint64_t pm[VSW_KEY_WORDS] = {0};
    memset(t, 0, sizeof(*t));
    t->best_rank = n ? ranks[0] : UINT32_MAX;
    t->root = build(&b, ranks, n, pm, 0);
    t->children = b.children;
    t->nchildren = b.nch;
    t->leaf = b.leaf;
    t->nleafwords = b.nleaf;
    t->nleafrefs = b.nrefs;
    t->nnodes = b.nnodes;
    t->depth = b.depth;
    if (b.fail) {
        free(b.children);
        free(b.leaf);
        memset(t, 0, sizeof(*t));
        return b.fail;
    }
    t->port_root = malloc(256 * sizeof(uint64_t));
    if (!t->port_root) {
        free(b.children);
        free(b.leaf);
        memset(t, 0, sizeof(*t));
        return 2;
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
                     int last_resort)
{
    size_t budget = 8 * m + 4096;
    for (size_t i = 0; i < NSCHED; i++) {
        if (!last_resort && fsched[i] < 150)
            break;
        int rc = build_tree(a, t, ranks, m, fsched[i] == 100 ? 0 : budget, fsched[i]);
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
    a->ntrees = 1;
    int rc = build_one(a, &a->trees[0], ranks, n, 0);
    if (rc == 1) {
        /* too much replication in one tree: partition the rules by which
         * fields they specify (largest groups first), one tree each */
        size_t cnt[256] = {0};
        for (size_t i = 0; i < n; i++)
            cnt[signature(&a->rules[i])]++;
        int order[256];
        for (int i = 0; i < 256; i++)
            order[i] = i;
        for (int i = 1; i < 256; i++)   /* insertion sort by count, desc */
            for (int j = i; j > 0 && cnt[order[j]] > cnt[order[j - 1]]; j--) {
                int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
            }
        int group[256];
        for (int i = 0; i < 256; i++)
            group[order[i]] = i < VSW_MAX_TREES - 1 ? i : VSW_MAX_TREES - 1;
        size_t ng = 0;
        rc = 0;
        for (int g = 0; g < VSW_MAX_TREES; g++) {
            size_t m = 0;
            for (size_t i = 0; i < n; i++)
                if (group[signature(&a->rules[i])] == g)
                    ranks[m++] = (uint32_t)i;
            if (!m)
                continue;
            rc = build_one(a, &a->trees[ng], ranks, m, 1);
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
        a->bytes += (a->trees[t].nchildren + a->trees[t].nleafwords + 256) * sizeof(uint64_t);
    return 0;
}

/* Index in children[] of the child internal node d leads key k to. */
static inline size_t child_index(uint64_t d, const vsw_key *k)
{
    unsigned w = (unsigned)(d >> 56) & 7, s = (unsigned)(d >> 48) & 63;
    return (uint32_t)d + (size_t)((k->w[w] >> s) & (uint8_t)(d >> 32));
}

/* Where internal node d leads key k: the child's descriptor. */
static inline const uint64_t *child(const vsw_tree *t, uint64_t d, const vsw_key *k)
{
    return &t->children[child_index(d, k)];
}

/* One level down from internal node d. */
static inline uint64_t step(const vsw_tree *t, uint64_t d, const vsw_key *k)
{
    return *child(t, d, k);
}

/* port_root[p]: from the root, follow the cuts that lie inside bits 56..63
 * of key word 0 (in_port; fields never cross) for a key whose in_port is p. */
static void fill_port_roots(vsw_tree *t)
{
    for (unsigned p = 0; p < 256; p++) {
        vsw_key k = { .w = { (uint64_t)p << 56 } };
        uint64_t d = t->root;
        while (!(d & VSW_TN_LEAF) && (d >> 56 & 7) == 0 && (d >> 48 & 63) >= 56)
            d = step(t, d, &k);
        t->port_root[p] = d;
    }
}

/* Where key k starts in tree t: past the levels its in_port decides. */
static inline uint64_t start(const vsw_tree *t, const vsw_key *k)
{
    return t->port_root[k->w[0] >> 56];
}

static inline uint64_t walk(const vsw_tree *t, const vsw_key *k)
{
    uint64_t d = start(t, k);
    while (!(d & VSW_TN_LEAF))
        d = step(t, d, k);
    return d;
}

/* First entry of leaf d matching k with a rank below best, else best. */
static inline uint32_t leaf_match(const vsw_tree *t, uint64_t d, const vsw_key *k,
                                  uint32_t best)
{
    const uint64_t *e = t->leaf + (uint32_t)d;
    unsigned cnt = (unsigned)(d >> 32) & 0xffffff;
    for (unsigned i = 0; i < cnt; i++) {
        uint64_t h = *e++, idx = h >> VSW_LE_IDX_SHIFT;
        uint32_t rk = (uint32_t)h & VSW_LE_RANK, x = 0;
        if (rk >= best)
            break;
        unsigned ns = (unsigned)(h >> VSW_LE_NS_SHIFT) & 31;
        if (VSW_LIKELY(ns == LEAF_SLOTS)) {     /* unrolled, no loop branch */
            for (unsigned j = 0; j < LEAF_SLOTS; j++, idx >>= 4)
                x |= (k->h[idx & 15] ^ (uint32_t)e[j]) & (uint32_t)(e[j] >> 32);
            e += LEAF_SLOTS;
        } else {
            unsigned n1 = ns;
            const uint64_t *idx2 = e;
            if (ns > 9) {               /* slots 9.. index from a 2nd word */
                n1 = 9;
                e++;
            }
            for (unsigned j = 0; j < n1; j++, idx >>= 4, e++)
                x |= (k->h[idx & 15] ^ (uint32_t)*e) & (uint32_t)(*e >> 32);
            for (unsigned j = 9, sh = 0; j < ns; j++, sh += 4, e++)
                x |= (k->h[(*idx2 >> sh) & 15] ^ (uint32_t)*e) & (uint32_t)(*e >> 32);
        }
        if (h & VSW_LE_RANGE) {
            /* v in [lo, hi]  <=>  v - lo <= hi - lo (unsigned) */
            uint64_t rg = *e++;
            uint32_t sp = (uint32_t)(k->w[1] & 0xffff), dp = (uint32_t)(k->w[2] & 0xffff);
            uint32_t sl = (uint32_t)(rg & 0xffff), sh = (uint32_t)(rg >> 16 & 0xffff);
            uint32_t dl = (uint32_t)(rg >> 32 & 0xffff), dh = (uint32_t)(rg >> 48);
            x |= (sp - sl > sh - sl) | (dp - dl > dh - dl);
        }
        if (!x)
            return rk;
    }
    return best;
}

uint32_t vsw_acl_lookup_tree(const vsw_acl *a, const vsw_key *k)
{
    uint32_t best = UINT32_MAX;
    for (size_t i = 0; i < a->ntrees; i++) {
        const vsw_tree *t = &a->trees[i];
        if (t->best_rank >= best)
            break;
        best = leaf_match(t, walk(t, k), k, best);
    }
    return best;
}

void vsw_acl_path_stats(const vsw_acl *a, const vsw_key *k, unsigned *levels,
                        unsigned *entries)
{
    *levels = *entries = 0;
    for (size_t i = 0; i < a->ntrees; i++) {
        const vsw_tree *t = &a->trees[i];
        uint64_t d = start(t, k);
        while (!(d & VSW_TN_LEAF)) {
            d = step(t, d, k);
            ++*levels;
        }
        *entries += (unsigned)(d >> 32) & 0xffffff;
    }
}

/* Walk each frame down to its leaf in turn.  For a small, shallow tree
 * this beats the lockstep walk: out-of-order execution already overlaps
 * the short walks of consecutive frames, without the bookkeeping. */
static void walk_each(const vsw_tree *t, const vsw_key *k, size_t n,
                      const uint32_t *rank, uint64_t *d)
{
    for (size_t i = 0; i < n; i++) {
        d[i] = rank[i] > t->best_rank ? walk(t, &k[i]) : VSW_TN_LEAF;  /* skip */
        __builtin_prefetch(&t->leaf[(uint32_t)d[i]]);
    }
}

/* Where descriptor x leads key k: for an internal node the child's entry,
 * for a leaf its first entry (the two lines from there hold most leaves).
 * Both addresses are computed and one is picked by masking: a `x is a
 * leaf ? ... : ...` here compiled to a branch (the loads in child() cannot
 * be if-converted), and where a walk ends is data-dependent, so that
 * branch mispredicted about once per frame: 36.4 -> 27.9 ns per frame for
 * the classifier alone at 65536 rules (acl_profile, trace order).  For a
 * leaf the child address is garbage, which is harmless: it is never
 * loaded from, and integers, not pointers, carry the arithmetic. */
static inline uintptr_t next_at(const vsw_tree *t, uint64_t x, const vsw_key *k)
{
    uintptr_t lf = (uintptr_t)t->leaf + 8 * (uintptr_t)(uint32_t)x;
    uintptr_t ch = (uintptr_t)t->children + 8 * (uintptr_t)child_index(x, k);
    uintptr_t leaf = (uintptr_t)0 - (uintptr_t)(x >> 63);     /* all ones if a leaf */
    return (lf & leaf) | (ch & ~leaf);
}

/* Walk all frames one level per pass, so that the loads of a big tree
 * overlap and the loop exits once per level, not once per frame (a walk's
 * length varies from frame to frame and its end mispredicts); only frames
 * still inside the tree are visited (the live list is rebuilt without
 * branches). */
static inline void walk_lockstep(const vsw_tree *t, const vsw_key *k, size_t n,
                                 const uint32_t *rank, uint64_t *d)
{
    uint8_t live[BURST_MAX];
    size_t nl = 0;
    for (size_t i = 0; i < n; i++) {
        d[i] = rank[i] > t->best_rank ? start(t, &k[i]) : VSW_TN_LEAF;  /* skip */
        live[nl] = (uint8_t)i;
        nl += !(d[i] & VSW_TN_LEAF);
    }
    while (nl) {
        size_t m = 0;
        for (size_t j = 0; j < nl; j++) {
            unsigned i = live[j];
            uint64_t x = step(t, d[i], &k[i]);
            d[i] = x;
            live[m] = (uint8_t)i;
            m += !(x & VSW_TN_LEAF);
        }
        nl = m;
    }
}

/* The lockstep walk for trees not in cache (VSW_ACL_BIG): each step also
 * computes where the frame goes next, prefetches it (or, at a leaf, the
 * leaf's two lines) and keeps the address, so the next pass loads the
 * descriptor from it without decoding the parent again: one decode per
 * step, not two (~50 -> ~30 instructions). */
static void walk_prefetch(const vsw_tree *t, const vsw_key *k, size_t n,
                          const uint32_t *rank, uint64_t *d)
{
    uintptr_t at[BURST_MAX];    /* a live frame's next descriptor */
    uint8_t live[BURST_MAX];
    size_t nl = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t x = rank[i] > t->best_rank ? start(t, &k[i]) : VSW_TN_LEAF;  /* skip */
        d[i] = x;
        at[i] = next_at(t, x, &k[i]);
        __builtin_prefetch((const void *)at[i]);
        live[nl] = (uint8_t)i;
        nl += !(x & VSW_TN_LEAF);
    }
    while (nl) {
        size_t m = 0;
        for (size_t j = 0; j < nl; j++) {
            unsigned i = live[j];
            uint64_t x = *(const uint64_t *)at[i];
            d[i] = x;
            at[i] = next_at(t, x, &k[i]);
            __builtin_prefetch((const void *)at[i]);
            __builtin_prefetch((const void *)(at[i] + 64));
            live[m] = (uint8_t)i;
            m += !(x & VSW_TN_LEAF);
        }
        nl = m;
    }
}

void vsw_acl_lookup_tree_burst(const vsw_acl *a, const vsw_key *k, size_t n,
                               uint32_t *rank)
{
    uint64_t d[BURST_MAX];
    while (n > BURST_MAX) {
        vsw_acl_lookup_tree_burst(a, k, BURST_MAX, rank);
        k += BURST_MAX;
        rank += BURST_MAX;
        n -= BURST_MAX;
    }
    for (size_t i = 0; i < n; i++)
        rank[i] = UINT32_MAX;
    for (size_t ti = 0; ti < a->ntrees; ti++) {
        const vsw_tree *t = &a->trees[ti];
        /* all walks first, then all leaf checks: the leaf loads of
         * different frames are independent and overlap */
        if (a->bytes < VSW_ACL_SMALL)
            walk_each(t, k, n, rank, d);
        else if (a->bytes < VSW_ACL_BIG)
            walk_lockstep(t, k, n, rank, d);
        else
            walk_prefetch(t, k, n, rank, d);
        for (size_t i = 0; i < n; i++)
            if (rank[i] > t->best_rank && (d[i] >> 32 & 0xffffff))
                rank[i] = leaf_match(t, d[i], &k[i], rank[i]);
    }
}
