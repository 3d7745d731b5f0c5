/* vsw_internal.h - private structures shared by the vswitch sources. */
#ifndef VSW_INTERNAL_H
#define VSW_INTERNAL_H

#include "vswitch.h"
#include <stdatomic.h>
#include <errno.h>
#include <string.h>

#ifndef __SIZEOF_INT128__
#error "vswitch needs a compiler with unsigned __int128 (64-bit host)"
#endif
typedef unsigned __int128 vsw_u128;

#define VSW_LIKELY(x)   __builtin_expect(!!(x), 1)
#define VSW_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* ---- error helper (util.c) ---- */
int vsw_err(vsw_error *err, int code, int rule, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* ---- counters: one writer (the data path), any readers ---- */
typedef _Atomic uint64_t vsw_ctr;
static inline void vsw_ctr_add(vsw_ctr *c, uint64_t v)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
                          memory_order_relaxed);
}
static inline uint64_t vsw_ctr_get(const vsw_ctr *c)
{
    return atomic_load_explicit((vsw_ctr *)c, memory_order_relaxed);
}

static inline void vsw_portset_add(vsw_portset *s, unsigned p)
{
    s->w[p >> 6] |= 1ull << (p & 63);
}
static inline void vsw_portset_del(vsw_portset *s, unsigned p)
{
    s->w[p >> 6] &= ~(1ull << (p & 63));
}

/* ---- the classifier key: 8 x 64-bit words ----
 *  w0: in_port<<56 | out_port<<48 | vid<<32 | ethertype<<16 | proto<<8 |
 *      is_ip<<7 | l4_valid<<6 | ip version (4 bits)
 *  w1: src_mac<<16 | sport          w2: dst_mac<<16 | dport
 *  w3: dst IP bits 0-63             w4: src IP bits 0-63
 *  w5: dst IP bits 64-127           w6: src IP bits 64-127
 *  w7: tcp_flags<<56 | dscp<<48
 * (IPv4 addresses are the top 32 bits of w3/w4.)
 * Ports are stored as 8-bit values (VSW_PORT_FLOOD -> 0xfe).
 */
enum { VSW_KW_DIP_HI = 3, VSW_KW_SIP_HI = 4, VSW_KW_DIP_LO = 5, VSW_KW_SIP_LO = 6 };
#define VSW_KEY_WORDS 8
/* h[] views the key as 32-bit halves (leaf entries compare halves) */
typedef struct vsw_key {
    union { uint64_t w[VSW_KEY_WORDS]; uint32_t h[2 * VSW_KEY_WORDS]; };
} vsw_key;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define VSW_KEY_HALF(w, hi) (2 * (w) + !(hi))   /* h[] index of a half of w[w] */
#else
#define VSW_KEY_HALF(w, hi) (2 * (w) + (hi))
#endif

#define VSW_K0_IP (1ull << 7)
#define VSW_K0_L4 (1ull << 6)

/* What the data path needs of a frame's L2 header besides the key. */
typedef struct vsw_l2 { uint16_t vid, l2_len; uint8_t tagged, pcp; } vsw_l2;
/* Parse a frame (as vsw_parse) into k, all but the in_port, out_port and
 * VID fields of w0, which the data path fills after the FDB lookup. */
int vsw_parse_key(const uint8_t *f, size_t len, vsw_key *k, vsw_l2 *l2);

/* ---- compiled ACL (acl_compile.c, acl_tree.c) ---- */
typedef struct vsw_crule {
    uint64_t v[VSW_KEY_WORDS], m[VSW_KEY_WORDS]; /* ternary, v & ~m == 0   */
    uint16_t sp_lo, sp_hi, dp_lo, dp_hi;         /* exact range checks      */
    uint8_t  ranges;        /* bit0: check sport, bit1: check dport         */
    uint8_t  exact;         /* ternary form is exact (no extra range check) */
    uint8_t  verdict, set_tc;
    uint32_t flags;
    uint16_t mirror_port, meter;
    uint32_t index;         /* the user's rule index                        */
    uint16_t redirect_port;
    /* VSW_ACTF_VLAN_PUSH's tag (pcp << 13 | vid): here and not in vsw_act,
     * which it would grow from 32 to 40 bytes for an action only the rare
     * rule has (read from the crule at the same rank when the flag is set) */
    uint16_t vlan_tci;
} vsw_crule;

/* A decision tree.  Every node is one 64-bit descriptor stored in its
 * parent's child array (so a lookup step is one memory access).  Child
 * arrays and leaf groups share one array of 64-bit words, `mem`, and both
 * kinds of descriptor hold a word offset into it:
 *   internal: bit63=0 | word<<56 | shift<<48 | mask<<32 | offset:
 *             child = mem[offset + ((key.w[word] >> shift) & mask)],
 *             mask = 2^bits - 1 (<= 10 bits; the field has 16) stored
 *             ready to use
 *   leaf:     bit63=1 | count<<48 | 0<<32 | offset: `count` leaf groups
 *             (15 bits; VSW_TN_LONG: the count is in the word before the
 *             first group) from mem[offset] on, their entries in ascending
 *             rank (first match wins).
 * A leaf's mask is 0, so the same formula, which a burst walk computes for
 * every frame at every level, gives the child's entry for an internal node
 * and the first group for a leaf, without a select between two addresses
 * (the word and shift it reads for a leaf come from the count: a valid key
 * word, and shifted bits the zero mask drops).
 * A leaf group checks up to 8 rule entries at once, without a branch per
 * entry (which entry matches first is data-dependent and mispredicted
 * about once a frame when entries were checked one by one).  A lane
 * compares one 32-bit half of the key, h[idx], with a rule:
 *   exact lane:  (h[idx] ^ val) & msk == 0, for the key halves holding
 *                rule mask bits that the path to the leaf has not already
 *                compared (a path step selects the child whose index equals
 *                the key's bits, and only rules agreeing with that index are
 *                in it), so most entries need 2-4 lanes, not 16;
 *   range lane:  (h[idx] & 0xffff) - val <= msk, an L4 port range
 *                [val, val + msk] (bit set in `rng`).
 * An entry matches if all the lanes in its `lanes` mask hold.  Entries
 * share the lanes they have in common (the rules of one leaf often agree
 * on the protocol, or on the address bits below the path's last cut):
 * at 65536 bench rules, 87% of the frames find their leaf in one group
 * (64% when entries had lanes of their own), and 11.7 ns a frame for the
 * classifier alone instead of 16.5.
 * A rule with no lane left matches every key that reaches the leaf and
 * hides everything after it: it is the leaf's last entry, with no lanes.
 * An entry with more than 16 lanes of its own (only possible for rules
 * that specify nearly every field) keeps the first 16 and is confirmed
 * against the full rule (`verify`).  Ranks fit 16 bits (at most
 * VSW_ACL_MAX_RULES rules).
 * 192 bytes, three cache lines, aligned so that a group never straddles
 * a fourth. */
#define VSW_LG_LANES   16
#define VSW_LG_ENTRIES 8
typedef struct vsw_lgroup {
    uint32_t val[VSW_LG_LANES];
    uint32_t msk[VSW_LG_LANES];
    uint8_t  idx[VSW_LG_LANES];     /* h[] index each lane compares        */
    uint16_t lanes[VSW_LG_ENTRIES]; /* by entry: the lanes it needs         */
    uint16_t rank[VSW_LG_ENTRIES];  /* by entry, ascending                  */
    uint16_t rng;           /* range lanes                                  */
    uint16_t valid;         /* entries in use, two bits each (as a byte
                               movemask of 16-bit compares gives them)      */
    uint8_t  verify;        /* entries to confirm against the full rule     */
    uint8_t  nent;
} __attribute__((aligned(64))) vsw_lgroup;
_Static_assert(sizeof(vsw_lgroup) == 192, "a leaf group is three cache lines");
_Static_assert(VSW_ACL_MAX_RULES <= 65536, "ranks are stored in 16 bits");

typedef struct vsw_tree {
    uint64_t   root;
    /* Where a key with in_port p is after the levels that cut only on the
     * in_port bits (usually the root's 8-bit cut of tenant rule sets): a
     * lookup starts at port_root[p], one load from a 2 KB table that stays
     * in L1, instead of walking those levels frame by frame. */
    uint64_t  *port_root;   /* 256 entries                                  */
    uint64_t  *mem;         /* child arrays, then leaf groups (64-byte
                               aligned): what descriptors' offsets index  */
    size_t     nwords;      /* of mem                                       */
    const vsw_crule *rules; /* the rule set's, for `verify` entries         */
    size_t     nleafrefs;   /* rule entries in leaves                      */
    size_t     nnodes;
    uint32_t   best_rank;   /* smallest rank among this tree's rules        */
    unsigned   depth;
    size_t     group_word;  /* first word of the leaf groups in mem          */
    /* Rule-table sets (rule_table.c) share unchanged trees between
     * generations: the number of sets holding mem and port_root, freed
     * with the last one.  NULL: owned by its one set. */
    unsigned  *shared;
} vsw_tree;
#define VSW_TN_LEAF (1ull << 63)
/* Leaves of this many groups or more keep their count before the first
 * group.  A test build lowers it to have such leaves with fewer rules. */
#ifndef VSW_TN_LONG
#define VSW_TN_LONG 0x7fffu
#endif

/* Word in mem internal node d leads key k to; for a leaf, its first group. */
static inline size_t vsw_tn_child(uint64_t d, const vsw_key *k)
{
    unsigned w = (unsigned)(d >> 56) & 7, s = (unsigned)(d >> 48) & 63;
    return (uint32_t)d + (size_t)((k->w[w] >> s) & (uint16_t)(d >> 32));
}

/* Leaf d's group count as its descriptor holds it: 0 for an empty leaf,
 * VSW_TN_LONG if the count is in the word before the first group. */
static inline unsigned vsw_tn_count_field(uint64_t d)
{
    return (unsigned)(d >> 48) & VSW_TN_LONG;
}

/* Leaf d's groups: the first, and how many (0 for an empty leaf). */
static inline const vsw_lgroup *vsw_tn_groups(const vsw_tree *t, uint64_t d)
{
    return (const vsw_lgroup *)(t->mem + (uint32_t)d);
}
static inline unsigned vsw_tn_ngroups(const vsw_tree *t, uint64_t d)
{
    unsigned n = vsw_tn_count_field(d);
    if (VSW_UNLIKELY(n == VSW_TN_LONG))
        n = (unsigned)t->mem[(uint32_t)d - 1];
    return n;
}

/* One level down from internal node d. */
static inline uint64_t vsw_tn_step(const vsw_tree *t, uint64_t d, const vsw_key *k)
{
    return t->mem[vsw_tn_child(d, k)];
}

/* What a matching rule does and its counters, by rank: 32 bytes, so the
 * data path touches one cache line per matched rule. */
typedef struct vsw_act {
    uint32_t index, flags;
    uint8_t  verdict, set_tc;
    uint16_t mirror_port, meter;
    uint16_t redirect_port;
    vsw_ctr  packets, bytes;    /* rules with VSW_ACTF_COUNT */
} vsw_act;

#define VSW_MAX_TREES 8
typedef struct vsw_acl {
    uint32_t   gen;
    size_t     nrules;
    vsw_crule *rules;       /* sorted by (priority, index): position = rank */
    vsw_act   *act;         /* by rank                                       */
    size_t     ntrees;
    vsw_tree   trees[VSW_MAX_TREES];
    uint32_t  *rank_of;     /* user index -> rank                           */
    size_t     nindex;      /* entries of rank_of                            */
    size_t     bytes;
    /* Sets built by the rule table (rule_table.c): by rank, the serial of
     * the table record it holds (0: a free rank, whose rule never
     * matches), so counters can be credited to the right rule when the set
     * is freed.  NULL for sets from vsw_acl_set. */
    uint64_t  *serial;
} vsw_acl;

/* How bursts walk a compiled rule set, by its size (rule copies, actions
 * and trees), as measured with the bench's tenant rule sets:
 *   < VSW_ACL_SMALL  one frame after the other: shallow trees, and
 *                    out-of-order execution overlaps the short walks
 *                    (16 and 256 rules: ~0.6 ns/frame faster than lockstep);
 *   < VSW_ACL_BIG    lockstep, one level of all frames per pass (4096
 *                    rules, 1.4 MB with leaf groups: 37 against 40 ns a
 *                    frame for the prefetching walk);
 *   otherwise        lockstep with the next level prefetched, and the
 *                    matched rule's action and counters prefetched before
 *                    egress.  At 65536 rules (25 MB), when the prefetch
 *                    address was still chosen with a branch, this cost
 *                    ~4 ns/frame on the bench's 16384-frame trace, whose
 *                    hot part stays in cache, but saved 5-45 ns/frame on a
 *                    131072-frame trace (71-78 against 76-124 ns), which
 *                    is closer to traffic with many flows; now ~47 and
 *                    ~54-68 (the long trace moves with the host's load).
 * The same two thresholds decide how process.c applies verdicts (one loop
 * below VSW_ACL_SMALL, dropped and passed frames split above). */
#define VSW_ACL_SMALL (256u * 1024u)
#define VSW_ACL_BIG   (2048u * 1024u)

int  vsw_acl_compile(const vsw_rule *rules, size_t n, unsigned num_ports,
                     vsw_acl **out, vsw_error *err);
/* One rule's validation and ternary form (what vsw_acl_compile does per
 * rule; c->index = idx). */
int  vsw_rule_convert(const vsw_rule *r, int idx, unsigned num_ports,
                      vsw_crule *c, vsw_error *err);
/* Trees for the rules of `a` at ranks[0..n) (ascending) instead of all of
 * them, in at most max_trees trees; keep_hidden: a rule that covers a node
 * does not drop the lower-priority rules below it, so that entries can
 * later be invalidated in place (rule_table.c).  Returns 0 or -1. */
int  vsw_acl_build_trees_on(vsw_acl *a, const uint32_t *ranks, size_t n,
                            unsigned max_trees, int keep_hidden);
/* One tree for ranks[0..n) (ascending) of a's rules; 0 or -1. */
int  vsw_acl_build_one_tree(const vsw_acl *a, vsw_tree *t, const uint32_t *ranks,
                            size_t n);
void vsw_acl_free(vsw_acl *a);
/* How leaves are checked (acl_lookup.c): the best the CPU has, or at most
 * AVX2, or portable C. */
enum vsw_leaf_isa { VSW_LEAF_BEST, VSW_LEAF_AVX2, VSW_LEAF_PORTABLE };
/* rank of the first matching rule, or UINT32_MAX */
uint32_t vsw_acl_lookup_tree(const vsw_acl *a, const vsw_key *k, enum vsw_leaf_isa isa);
uint32_t vsw_acl_lookup_linear(const vsw_acl *a, const vsw_key *k);
void vsw_acl_lookup_tree_burst(const vsw_acl *a, const vsw_key *k, size_t n,
                               uint32_t *rank, enum vsw_leaf_isa isa);
/* for bench/acl_profile.c: internal nodes walked, and leaf groups and
 * entries reached by key k, summed over all trees */
void vsw_acl_path_stats(const vsw_acl *a, const vsw_key *k, unsigned *levels,
                        unsigned *groups, unsigned *entries);
static inline int vsw_crule_match(const vsw_crule *r, const vsw_key *k)
{
    uint64_t x = 0;
    for (int i = 0; i < VSW_KEY_WORDS; i++)
        x |= (k->w[i] ^ r->v[i]) & r->m[i];
    if (x)
        return 0;
    if (VSW_UNLIKELY(r->ranges)) {
        unsigned sp = (unsigned)(k->w[1] & 0xffff), dp = (unsigned)(k->w[2] & 0xffff);
        if ((r->ranges & 1) && (sp < r->sp_lo || sp > r->sp_hi))
            return 0;
        if ((r->ranges & 2) && (dp < r->dp_lo || dp > r->dp_hi))
            return 0;
    }
    return 1;
}

/* ---- FDB (fdb.c) ---- */
typedef struct vsw_fdb_ent { uint64_t key; uint16_t port; } vsw_fdb_ent;
typedef struct vsw_fdb {           /* immutable static table               */
    size_t       n, mask;          /* mask = capacity - 1                  */
    vsw_fdb_ent *e;                /* key 0 = empty                         */
} vsw_fdb;
typedef struct vsw_learn_ent { uint64_t key; uint64_t seen; uint16_t port; } vsw_learn_ent;
typedef struct vsw_learn {         /* data-path-owned learned table         */
    size_t         mask, n, max;
    vsw_learn_ent *e;
    /* Full of live entries: no entry can expire before this time, so a new
     * address is not learned and no compaction is tried until then. A MAC
     * flood (every frame a new source) would otherwise pay a compaction of
     * the whole table per frame (issue 33's SYN flood test: 35% of the
     * QEMU process in vsw_learn_update). */
    uint64_t       full_until;
    uint64_t       not_learned;       /* addresses refused: table full      */
    uint64_t       compactions;
} vsw_learn;

/* the MAC as a big-endian 48-bit number: two loads and byte swaps, not a
 * byte loop (the data path builds two of these per frame) */
static inline uint64_t vsw_mac48(const uint8_t mac[6])
{
    uint32_t hi;
    uint16_t lo;
    memcpy(&hi, mac, 4);
    memcpy(&lo, mac + 4, 2);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    hi = __builtin_bswap32(hi);
    lo = __builtin_bswap16(lo);
#endif
    return (uint64_t)hi << 16 | lo;
}
static inline uint64_t vsw_fdb_key48(uint64_t mac48, uint16_t vid)
{
    return mac48 | ((uint64_t)(vid & 0xfff) << 48) | (1ull << 63);
}
static inline uint64_t vsw_fdb_key(const uint8_t mac[6], uint16_t vid)
{
    return vsw_fdb_key48(vsw_mac48(mac), vid);
}
/* one multiply: the data path hashes every frame's destination */
static inline uint64_t vsw_hash64(uint64_t x)
{
    return ((x ^ (x >> 29)) * 0x9e3779b97f4a7c15ull) >> 32;
}
vsw_fdb *vsw_fdb_clone_set(const vsw_fdb *old, uint64_t key, int port);
void vsw_fdb_free(vsw_fdb *f);
static inline int vsw_fdb_find(const vsw_fdb *f, uint64_t key)   /* port or -1 */
{
    if (!f->n)
        return -1;
    for (size_t i = vsw_hash64(key) & f->mask;; i = (i + 1) & f->mask) {
        if (f->e[i].key == key)
            return f->e[i].port;
        if (f->e[i].key == 0)
            return -1;
    }
}
int  vsw_learn_init(vsw_learn *l, size_t max);
void vsw_learn_fini(vsw_learn *l);
void vsw_learn_flush(vsw_learn *l);
int  vsw_learn_find(const vsw_learn *l, uint64_t key, uint64_t now, uint64_t age);
void vsw_learn_update(vsw_learn *l, uint64_t key, unsigned port, uint64_t now,
                      uint64_t age);

/* ---- ports (switch.c) ---- */
/* VLAN membership (link up only): bit p of v[vid] = port p is in VLAN vid.
 * An allocation of its own, shared by the port sets that follow while no
 * port's membership changes (a port's MAC, trust, classes, miss port...):
 * vsw_port_set then copies the existing ports' configs (632 bytes each)
 * and walks no VLAN.  The set was one 180 KB block (every port of
 * VSW_MAX_PORTS and the membership), above the 128 KB that allocators
 * (glibc's mmap threshold, ASan's primary allocator) serve from reused
 * memory: every port set mapped, faulted in and unmapped it
 * (fuzz_esw_rules spent ~2/3 of each execution there).  refs: the sets
 * using it; touched on the control side only (publication, reclaim). */
typedef struct vsw_vmember {
    unsigned    refs;
    vsw_portset v[4096];
} vsw_vmember;

typedef struct vsw_ports {
    vsw_portset  up;                 /* ports with link up                   */
    vsw_portset  promisc;            /* uplink + trusted ports              */
    vsw_vmember *member;             /* VLAN membership, maybe shared        */
    vsw_port_cfg cfg[];              /* the switch's ports (sw->nports): a
                                        set is copied on every port change,
                                        632 bytes a port, not VSW_MAX_PORTS */
} vsw_ports;
static inline size_t vsw_ports_size(unsigned nports)
{
    return sizeof(vsw_ports) + nports * sizeof(vsw_port_cfg);
}
/* A switch's first port set: membership derived from the configs. */
int  vsw_ports_derive(vsw_ports *p, unsigned nports);
void vsw_ports_free(vsw_ports *p);

/* ---- meters (meter.c) ---- */
typedef struct vsw_meter_param {
    uint8_t  used, mode;
    uint16_t parent;
    uint32_t gen;              /* bumped on every change: resets the bucket */
    uint64_t k;                /* cost(units) = (units * k) >> sh (ns<<16)   */
    uint8_t  sh;
    vsw_u128 tau;              /* burst tolerance, ns<<16                   */
    vsw_meter_cfg cfg;
} vsw_meter_param;
/* The meter table in pages of 64 meters, shared between successive tables
 * (refs: the tables using a page; control side only): a meter change
 * copies the 512-byte page table and the one page it changes.  As one
 * 4096-meter array (320 KB) every change copied it whole, into memory
 * fresh from mmap (fuzz_esw_rules: a police rule's add or delete).  A
 * NULL page: none of its meters was ever set. */
#define VSW_METER_PAGE 64u
typedef struct vsw_meter_page {
    unsigned        refs;
    vsw_meter_param m[VSW_METER_PAGE];
} vsw_meter_page;
typedef struct vsw_meters { vsw_meter_page *page[VSW_MAX_METERS / VSW_METER_PAGE]; } vsw_meters;
extern const vsw_meter_param vsw_meter_unset;
static inline const vsw_meter_param *vsw_meter_at(const vsw_meters *mt, unsigned id)
{
    const vsw_meter_page *p = mt->page[id / VSW_METER_PAGE];
    return p ? &p->m[id % VSW_METER_PAGE] : &vsw_meter_unset;
}
void vsw_meters_free(vsw_meters *mt);
typedef struct vsw_meter_state { vsw_u128 tat; uint32_t gen; } vsw_meter_state;

/* GCRA helpers shared by meters and the scheduler (times are ns << 16). */
void vsw_rate_factor(uint64_t rate, uint64_t *k, uint8_t *sh);
static inline vsw_u128 vsw_rate_cost(uint64_t units, uint64_t k, uint8_t sh)
{
    return ((vsw_u128)units * k) >> sh;
}

/* ---- scheduler (sched.c) ---- */
typedef struct vsw_scheds { vsw_sched_cfg cfg[VSW_MAX_PORTS]; uint32_t gen[VSW_MAX_PORTS]; } vsw_scheds;
struct vsw_sched_port;
struct vsw_sched_port *vsw_sched_port_new(unsigned qlen);
void vsw_sched_port_free(struct vsw_sched_port *sp);

/* ---- the published configuration ---- */
typedef struct vsw_cfgset {
    vsw_ports  *ports;
    vsw_fdb    *fdb;
    vsw_acl    *acl;
    vsw_meters *meters;
    vsw_scheds *sched;
} vsw_cfgset;

typedef struct vsw_retired {
    struct vsw_retired *next;
    void  *obj;
    void (*fn)(void *);
    uint64_t epoch;
} vsw_retired;

typedef struct vsw_port_ctrs {
    vsw_ctr rx_packets, rx_bytes, tx_packets, tx_bytes;
    vsw_ctr drops[VSW_DROP_REASONS];
    vsw_ctr tc_tx_packets[VSW_NUM_TC], tc_tx_bytes[VSW_NUM_TC], tc_drops[VSW_NUM_TC];
} vsw_port_ctrs;
typedef struct vsw_meter_ctrs { vsw_ctr pass_p, pass_b, drop_p, drop_b; } vsw_meter_ctrs;

struct vsw_switch {
    _Atomic(vsw_cfgset *) cur;
    _Atomic uint64_t epoch;
    _Atomic uint64_t reader_qs;        /* UINT64_MAX: data path offline     */
    _Atomic int      classifier;
    _Atomic int      flush_learned;
    vsw_retired     *retired;          /* control side                     */
    struct vsw_rtab *rtab;             /* incremental rules (rule_table.c) */
    uint32_t         acl_gen;          /* control side                     */
    unsigned         num_vfs, nports;
    vsw_config       cfg;
    /* data-path state */
    int              dp_online;
    vsw_learn        learned;
    vsw_meter_state  mstate[VSW_MAX_METERS];
    struct vsw_sched_port *sched[VSW_MAX_PORTS];
    uint32_t         sched_gen[VSW_MAX_PORTS];
    /* counters */
    vsw_port_ctrs    pc[VSW_MAX_PORTS];
    vsw_meter_ctrs   mc[VSW_MAX_METERS];
};

/* publish a new configuration built from the current one (switch.c):
 * `fresh` has the replaced members set; `old_obj/old_fn` is the replaced
 * member to free once safe. */
void vsw_publish(vsw_switch *sw, vsw_cfgset *fresh, void *old_obj,
                 void (*old_fn)(void *));
vsw_cfgset *vsw_cfg_clone(const vsw_switch *sw);   /* shallow copy of cur   */
static inline vsw_cfgset *vsw_cur(const vsw_switch *sw)
{
    return atomic_load_explicit(&((vsw_switch *)sw)->cur, memory_order_acquire);
}

/* data-path entry/exit: quiescent-state bookkeeping (switch.c) */
void vsw_dp_enter(vsw_switch *sw);
void vsw_dp_exit(vsw_switch *sw);
int  vsw_acl_build_trees(vsw_acl *a);    /* acl_tree.c */

/* the incremental rule table (rule_table.c): dropped when vsw_acl_set
 * installs a whole set, freed with the switch */
void vsw_rtab_reset(vsw_switch *sw);
void vsw_rtab_free(vsw_switch *sw);

/* meter chain check used by the data path (meter.c) */
int vsw_meters_police(vsw_switch *sw, const vsw_meters *mt, const uint16_t *ids,
                      unsigned nids, uint32_t bytes, uint64_t now_ns);

#endif
