/* acl_lookup.c - lookups in the ACL decision trees built by acl_tree.c:
 * one key at a time (vsw_process) or a burst of keys (vsw_process_burst).
 *
 * A lookup starts at the node the key's in_port leads to (port_root), so
 * the level that separates the VFs' rules costs one load from a small
 * table, walks internal nodes down to a leaf, and checks the leaf's groups
 * (vsw_lgroup).  Burst lookups walk every frame to its leaf first and
 * check the leaves after, so the leaf loads of different frames overlap;
 * how they walk depends on the size of the rule set (see VSW_ACL_SMALL).
 *
 * The leaf check compares up to 16 lanes of key halves at once.  It is
 * written once (acl_lookup_body.h) and compiled three times: with AVX-512
 * (one permute gathers the 16 key halves a group compares, two masked
 * compares check them) and with AVX2 (the same in two halves of 8 lanes)
 * where the compiler and the CPU have them, and in portable C everywhere;
 * VSW_CLASSIFIER_TREE_AVX2 and _SCALAR ask for the latter two. */
#include "vsw_internal.h"

#define BURST_MAX 64   /* frames walked together */

/* Where key k starts in tree t: past the levels its in_port decides. */
static inline uint64_t start(const vsw_tree *t, const vsw_key *k)
{
    return t->port_root[k->w[0] >> 56];
}

static inline uint64_t walk(const vsw_tree *t, const vsw_key *k)
{
    uint64_t d = start(t, k);
    while (!(d & VSW_TN_LEAF))
        d = vsw_tn_step(t, d, k);
    return d;
}

/* Walk each frame down to its leaf in turn.  For a small, shallow tree
 * this beats the lockstep walk: out-of-order execution already overlaps
 * the short walks of consecutive frames, without the bookkeeping. */
static void walk_each(const vsw_tree *t, const vsw_key *k, size_t n,
                      const uint32_t *rank, uint64_t *d)
{
    for (size_t i = 0; i < n; i++) {
        d[i] = rank[i] > t->best_rank ? walk(t, &k[i]) : VSW_TN_LEAF;  /* skip */
        __builtin_prefetch(vsw_tn_groups(t, d[i]));
    }
}

/* Where descriptor x leads key k: for an internal node the child's entry,
 * for a leaf its first group (whose mask of 0 drops the key bits; see
 * vsw_tree).  This used to pick between two addresses by masking, since a
 * `x is a leaf ? ... : ...` compiled to a branch that mispredicted about
 * once a frame (36.4 -> 27.9 ns a frame for the classifier alone at 65536
 * rules); with one formula for both, a step is 7 instructions shorter. */
static inline uintptr_t next_at(const vsw_tree *t, uint64_t x, const vsw_key *k)
{
    return (uintptr_t)(t->mem + vsw_tn_child(x, k));
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
            uint64_t x = vsw_tn_step(t, d[i], &k[i]);
            d[i] = x;
            live[m] = (uint8_t)i;
            m += !(x & VSW_TN_LEAF);
        }
        nl = m;
    }
}

/* The lockstep walk for trees not in cache (VSW_ACL_BIG): each step also
 * computes where the frame goes next, prefetches it (at a leaf, the first
 * group's three lines) and keeps the address, so the next pass loads the
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
            __builtin_prefetch((const void *)(at[i] + 128));
            live[m] = (uint8_t)i;
            m += !(x & VSW_TN_LEAF);
        }
        nl = m;
    }
}

/* Walk the frames of a burst (at most BURST_MAX) to their leaves in tree
 * t, the way that is fastest for the rule set's size.  Frames whose rank
 * no rule of t can beat are not walked (d = an empty leaf). */
static inline void walk_burst(const vsw_acl *a, const vsw_tree *t, const vsw_key *k,
                              size_t n, const uint32_t *rank, uint64_t *d)
{
    if (a->bytes < VSW_ACL_SMALL)
        walk_each(t, k, n, rank, d);
    else if (a->bytes < VSW_ACL_BIG)
        walk_lockstep(t, k, n, rank, d);
    else
        walk_prefetch(t, k, n, rank, d);
}

/* The leaf check and the lookups around it, once per instruction set. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define VSW_HAVE_X86_SIMD
#include <immintrin.h>
#define LK_ISA 2
#define LK_TARGET __attribute__((target("avx512f,popcnt")))
#define LK(f) f##_avx512
#include "acl_lookup_body.h"
#undef LK_ISA
#undef LK_TARGET
#undef LK
#define LK_ISA 1
#define LK_TARGET __attribute__((target("avx2,popcnt")))
#define LK(f) f##_avx2
#include "acl_lookup_body.h"
#undef LK_ISA
#undef LK_TARGET
#undef LK
#endif
#define LK_ISA 0
#define LK_TARGET
#define LK(f) f##_scalar
#include "acl_lookup_body.h"

/* The instruction set to check leaves with: the best of those the caller
 * allows that the CPU (and its OS) has; __builtin_cpu_supports reads
 * flags set at start-up. */
static inline int pick(enum vsw_leaf_isa isa)
{
#ifdef VSW_HAVE_X86_SIMD
    if (isa == VSW_LEAF_BEST && __builtin_cpu_supports("avx512f"))
        return 2;
    if (isa != VSW_LEAF_PORTABLE && __builtin_cpu_supports("avx2"))
        return 1;
#else
    (void)isa;
#endif
    return 0;
}

uint32_t vsw_acl_lookup_tree(const vsw_acl *a, const vsw_key *k, enum vsw_leaf_isa isa)
{
    switch (pick(isa)) {
#ifdef VSW_HAVE_X86_SIMD
    case 2: return lookup_tree_avx512(a, k);
    case 1: return lookup_tree_avx2(a, k);
#endif
    default: return lookup_tree_scalar(a, k);
    }
}

void vsw_acl_lookup_tree_burst(const vsw_acl *a, const vsw_key *k, size_t n,
                               uint32_t *rank, enum vsw_leaf_isa isa)
{
    int which = pick(isa);
    for (size_t m; n; n -= m, k += m, rank += m) {
        m = n < BURST_MAX ? n : BURST_MAX;
        switch (which) {
#ifdef VSW_HAVE_X86_SIMD
        case 2: lookup_burst_avx512(a, k, m, rank); break;
        case 1: lookup_burst_avx2(a, k, m, rank); break;
#endif
        default: lookup_burst_scalar(a, k, m, rank); break;
        }
    }
}

void vsw_acl_path_stats(const vsw_acl *a, const vsw_key *k, unsigned *levels,
                        unsigned *groups, unsigned *entries)
{
    *levels = *groups = *entries = 0;
    for (size_t i = 0; i < a->ntrees; i++) {
        const vsw_tree *t = &a->trees[i];
        uint64_t d = start(t, k);
        while (!(d & VSW_TN_LEAF)) {
            d = vsw_tn_step(t, d, k);
            ++*levels;
        }
        unsigned ng = vsw_tn_ngroups(t, d);
        *groups += ng;
        for (unsigned j = 0; j < ng; j++)
            *entries += vsw_tn_groups(t, d)[j].nent;
    }
}
