/*
 * vswitch.h - the embedded switch of the vfwarp adapter.
 *
 * Read this file top to bottom: it is the whole public API.
 *
 * WHAT IT IS
 *   A plain C11 library (libc only) modelling the switch inside an SR-IOV
 *   adapter.  The PF manager programs it (through the device model's admin
 *   commands); every frame a VF sends or receives passes vsw_process().
 *   There is no I/O and no clock inside: the caller hands in frames and the
 *   current time in nanoseconds (a real clock in the device model, simulated
 *   time in tests), and gets back a decision.
 *
 * PORTS
 *   Port 0 is the uplink (the wire), port 1 the PF, ports 2..129 are VF0..VF127
 *   (VSW_PORT_VF(n)).  A switch is created with a number of VFs; ports beyond
 *   that do not exist.
 *
 * THE DATA PATH, STEP BY STEP (vsw_process)
 *    1. ingress port must exist and have link up          else DROP_LINK_DOWN
 *    2. parse Ethernet / one 802.1Q tag / IPv4 / IPv6 / TCP / UDP / SCTP
 *       (runt or truncated headers)                       else DROP_MALFORMED
 *    3. VLAN ingress: access port -> frame must be untagged (or priority
 *       tagged, VID 0) and gets the port's PVID; trunk port -> tagged VID must
 *       be in the allowed list, untagged frames get the native VID
 *                                                        else DROP_VLAN
 *    4. spoof check (if enabled): source MAC must equal the port MAC
 *                                                        else DROP_SPOOF
 *       a multicast source MAC is always dropped         (DROP_SPOOF)
 *    5. traffic class: port default TC, or 802.1p / DSCP mapped through the
 *       port's tables when the port's QoS trust says so
 *    6. forwarding: FDB lookup (dst MAC, VID) -> one port, or flooding:
 *       broadcast/multicast to every member of the VLAN, unknown unicast to
 *       the uplink and to trusted (promiscuous) members; never back to the
 *       ingress port; VF->VF hairpin is ordinary forwarding.  Learning of
 *       (src MAC, VID) on ports with `learn` set (normally the uplink).
 *       A port with a miss_port (switchdev) sends what the static FDB does
 *       not name to that port instead of flooding.
 *    7. ACL: the highest-priority matching rule (first match) decides:
 *       permit / drop, and optionally count, set TC, mirror, meter,
 *       redirect, VLAN push / pop (the frame's VLAN changes and step 6's
 *       FDB lookup is made again in the new VLAN)           DROP_ACL
 *    8. meters, hierarchical: ACL meter, (port, TC) meter, port meter and its
 *       parents (tenant groups); the frame passes only if every meter in the
 *       chain conforms, and only then are tokens taken  else DROP_METER
 *    9. egress: the port set, minus ports with link down or whose VLAN
 *       membership excludes the VID                      (DROP_NO_DEST if
 *       nothing is left).  vsw_egress_frame() then writes the frame as the
 *       given egress port must see it (tag inserted, stripped or kept).
 *   The device model then queues the frame on each egress port's scheduler
 *   (vsw_sched_enqueue) and drains it at the wire rate (vsw_sched_dequeue).
 *
 * THREADS AND ATOMIC UPDATES
 *   - One data-path thread per switch calls vsw_process*, vsw_egress_frame,
 *     vsw_sched_*.  (Meters, learned FDB entries and queues are its state.)
 *   - One control thread (may be the same thread) calls the configuration
 *     functions (vsw_port_set, vsw_fdb_*, vsw_acl_set, vsw_meter_set,
 *     vsw_sched_set).  Calls on the control side must not run concurrently
 *     with each other.
 *   - Every configuration call builds a new immutable table set and publishes
 *     it with one atomic pointer swap: the data path sees the old set or the
 *     new one, never half of either.  An invalid configuration returns a
 *     negative errno value with a message in *err and changes nothing.
 *   - Old tables are freed once the data path has passed a quiescent point
 *     (the end of each vsw_process / vsw_process_burst call, or an explicit
 *     vsw_quiescent()).  Freeing is attempted on every configuration call and
 *     by vsw_reclaim(); nothing ever waits.  A data-path thread that goes idle
 *     for long may call vsw_datapath_offline() and later vsw_datapath_online().
 *   - Counters are written by the data path with relaxed atomic stores and may
 *     be read from any thread.
 *
 * HOW A DEVICE MODEL USES IT (sketch)
 *     vsw_switch *sw = vsw_create(&(vsw_config){ .num_vfs = 8 });
 *     // admin commands from the PF driver:
 *     vsw_port_set(sw, VSW_PORT_VF(3), &pc, &err);     // MAC, VLAN, spoofchk
 *     vsw_fdb_add(sw, vf3_mac, 0, VSW_PORT_VF(3), &err);
 *     vsw_acl_set(sw, rules, nrules, &err);             // whole rule set
 *     // a VF's TX ring (or frames from the wire), in bursts:
 *     vsw_process_burst(sw, VSW_PORT_VF(3), frames, lens, n, now_ns, dec);
 *     for each frame i, for each port p in dec[i].egress:
 *         len = vsw_egress_frame(sw, &dec[i], p, frames[i], lens[i], buf, cap);
 *         vsw_sched_enqueue(sw, p, dec[i].tc, handle_of(buf), len, now_ns);
 *     // per port, when the wire is free (or at next_ns):
 *     while (vsw_sched_dequeue(sw, p, now_ns, &h, &len, &tc, &next_ns))
 *         transmit(h, len);
 *
 * The ACL classifier (decision trees over a 512-bit key, with a linear-scan
 * reference) and the measured figures are described in docs/vswitch.md.
 */
#ifndef VSWITCH_H
#define VSWITCH_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------- */
/* Ports                                                                    */

#define VSW_MAX_VFS      128
#define VSW_PORT_UPLINK  0u
#define VSW_PORT_PF      1u
#define VSW_PORT_VF(n)   (2u + (unsigned)(n))
#define VSW_MAX_PORTS    (2u + VSW_MAX_VFS)     /* 130 */
#define VSW_NUM_TC       8
#define VSW_PORT_ANY     0xffffu                /* ACL: any port            */
#define VSW_PORT_FLOOD   0xfffeu                /* ACL out_port: flooded    */

/* A set of ports (bit p of w[p / 64]). */
typedef struct vsw_portset { uint64_t w[3]; } vsw_portset;

static inline bool vsw_portset_has(const vsw_portset *s, unsigned p)
{
    return p < VSW_MAX_PORTS && ((s->w[p >> 6] >> (p & 63)) & 1u);
}

/* Errors: functions return 0 or a negative errno value (-EINVAL, -E2BIG,
 * -ENOMEM, -ENOENT, -ENOSPC).  When `err` is non-NULL it receives a
 * human-readable message and, for ACL rules, the offending rule index. */
typedef struct vsw_error {
    int  code;          /* same negative value as returned                  */
    int  rule;          /* rule index for vsw_acl_set errors, else -1        */
    char msg[160];
} vsw_error;

typedef struct vsw_switch vsw_switch;

typedef struct vsw_config {
    unsigned num_vfs;            /* 0..VSW_MAX_VFS                           */
    unsigned fdb_learn_max;      /* capacity of learned FDB (0: 4096)        */
    uint64_t fdb_age_ns;         /* learned entry lifetime (0: 300 s)        */
    unsigned sched_qlen;         /* per (port, TC) queue length (0: 1024)    */
} vsw_config;

vsw_switch *vsw_create(const vsw_config *cfg);   /* NULL on bad cfg / OOM   */
void vsw_destroy(vsw_switch *sw);                /* no data path may run    */
unsigned vsw_num_ports(const vsw_switch *sw);    /* 2 + num_vfs             */

/* ---------------------------------------------------------------------- */
/* Port configuration                                                       */

enum vsw_vlan_mode {
    VSW_VLAN_TRUNK  = 0,  /* tagged frames with an allowed VID pass as is;
                             untagged frames belong to native_vid; on egress
                             frames of native_vid leave untagged           */
    VSW_VLAN_ACCESS = 1,  /* the port sees untagged frames only: the switch
                             inserts pvid on ingress, strips it on egress  */
};

enum vsw_qos_trust {
    VSW_TRUST_NONE = 0,   /* TC = default_tc                               */
    VSW_TRUST_PCP  = 1,   /* TC = pcp_to_tc[PCP] for tagged frames         */
    VSW_TRUST_DSCP = 2,   /* TC = dscp_to_tc[DSCP] for IP frames           */
};

typedef struct vsw_port_cfg {
    uint8_t  mac[6];          /* the port's MAC (spoof check reference)     */
    uint8_t  vlan_mode;       /* enum vsw_vlan_mode                          */
    uint16_t pvid;            /* ACCESS: the VLAN (1..4095)                  */
    uint16_t native_vid;      /* TRUNK: VID of untagged frames (0 = none)    */
    uint8_t  pvid_pcp;        /* ACCESS: PCP written when inserting a tag    */
    uint64_t allowed[64];     /* TRUNK: VID bitmap (bit v of allowed[v/64]);
                                 vsw_port_cfg_default() allows all VIDs       */
    bool     spoofchk;        /* drop frames whose source MAC != mac         */
    bool     trust;           /* trusted VF (ip link ... trust on): may be
                                 promiscuous, i.e. also receives unknown
                                 unicast floods.  Does not bypass spoofchk.  */
    bool     link_up;         /* administrative + operational link          */
    bool     learn;           /* learn source MACs (normally uplink only)   */
    uint8_t  default_tc;      /* 0..7                                        */
    uint8_t  qos_trust;       /* enum vsw_qos_trust                          */
    uint8_t  pcp_to_tc[8];    /* 802.1p priority -> TC                       */
    uint8_t  dscp_to_tc[64];  /* DSCP -> TC                                  */
    uint16_t meter;           /* port meter id (0 = none); its parent chain
                                 models the tenant limit                     */
    uint16_t tc_meter[VSW_NUM_TC]; /* per (port, TC) meter id, 0 = none     */
    /* Switchdev forwarding (docs/vswitch.md, "Switchdev mode"): where a
     * frame received on this port goes when no static FDB entry names its
     * destination - unknown unicast, broadcast and multicast included -
     * instead of flooding: VSW_PORT_ANY (the default) floods as above;
     * another port sends it there alone (a VF's misses to the PF, which
     * hands them to the VF's representor).  With fdb_off the port's frames
     * skip the FDB altogether (the PF as the uplink representor: what it
     * sends goes to its miss_port, the wire).  ACL redirects win over both. */
    uint16_t miss_port;
    bool     fdb_off;
} vsw_port_cfg;

/* Defaults: trunk, native VID 0, all VIDs allowed, link up, no spoof check,
 * TC 0, identity PCP map, DSCP>>3 map, no meters, misses flooded
 * (miss_port VSW_PORT_ANY), FDB on. */
void vsw_port_cfg_default(vsw_port_cfg *c);
int  vsw_port_set(vsw_switch *sw, unsigned port, const vsw_port_cfg *c,
                  vsw_error *err);
int  vsw_port_get(const vsw_switch *sw, unsigned port, vsw_port_cfg *c);

/* ---------------------------------------------------------------------- */
/* Forwarding database                                                      */

/* Static entries, programmed by the PF: (mac, vid) -> port.  vid 0 is the
 * untagged domain.  Static entries win over learned ones.  Multicast MACs
 * may be added as well (the frame then goes to that single port). */
int vsw_fdb_add(vsw_switch *sw, const uint8_t mac[6], uint16_t vid,
                unsigned port, vsw_error *err);
int vsw_fdb_del(vsw_switch *sw, const uint8_t mac[6], uint16_t vid,
                vsw_error *err);               /* -ENOENT if absent         */
/* Lookup for the control side: static entries only; returns the port or -1. */
int vsw_fdb_lookup_static(const vsw_switch *sw, const uint8_t mac[6],
                          uint16_t vid);
/* Ask the data path to drop all learned entries (done on its next call). */
void vsw_fdb_flush_learned(vsw_switch *sw);
/* The learned table's state, read by the data path's thread (or with it
 * stopped): a full table (a MAC flood on the wire) learns nothing new until
 * its oldest entry ages out; `not_learned` counts the addresses refused. */
typedef struct vsw_learn_stats {
    uint64_t entries, max, not_learned, compactions;
} vsw_learn_stats;
void vsw_fdb_learn_stats(const vsw_switch *sw, vsw_learn_stats *st);

/* ---------------------------------------------------------------------- */
/* ACL                                                                      */

#define VSW_ACL_MAX_RULES 65536u

/* Which fields a rule matches on (a field not listed is a wildcard). */
enum {
    VSW_M_IN_PORT   = 1u << 0,   /* in_port                                 */
    VSW_M_OUT_PORT  = 1u << 1,   /* out_port: the unicast FDB destination,
                                    or VSW_PORT_FLOOD for flooded frames     */
    VSW_M_SRC_MAC   = 1u << 2,   /* (src_mac & src_mac_mask)                */
    VSW_M_DST_MAC   = 1u << 3,
    VSW_M_VLAN      = 1u << 4,   /* the frame's VID after ingress (0 = none) */
    VSW_M_ETHERTYPE = 1u << 5,   /* after any VLAN tag                       */
    VSW_M_SRC_IP    = 1u << 6,   /* src_ip / src_plen (needs ip_version)     */
    VSW_M_DST_IP    = 1u << 7,
    VSW_M_IP_PROTO  = 1u << 8,   /* IPv4 protocol / IPv6 next header         */
    VSW_M_SPORT     = 1u << 9,   /* L4 source port range [lo, hi]           */
    VSW_M_DPORT     = 1u << 10,
    VSW_M_DSCP      = 1u << 11,  /* (dscp & dscp_mask)                       */
    VSW_M_TCP_FLAGS = 1u << 12,  /* (flags & tcp_flags_mask), TCP only       */
    VSW_M_IP_VERSION= 1u << 13,  /* implied by SRC_IP / DST_IP               */
    VSW_M_ALL       = (1u << 14) - 1,
};

enum vsw_acl_verdict { VSW_ACT_PERMIT = 0, VSW_ACT_DROP = 1, VSW_ACT_MAX = 1 };

/* Optional extra actions (bitmask). */
enum {
    VSW_ACTF_COUNT   = 1u << 0,  /* count packets/bytes on this rule        */
    VSW_ACTF_SET_TC  = 1u << 1,  /* override the traffic class with set_tc  */
    VSW_ACTF_MIRROR  = 1u << 2,  /* send an unmodified copy to mirror_port  */
    VSW_ACTF_METER   = 1u << 3,  /* police through meter id `meter`         */
    VSW_ACTF_REDIRECT= 1u << 4,  /* forward to redirect_port instead of the
                                    FDB's choice (tc mirred redirect): the
                                    port must be up, its VLAN membership is
                                    not checked; not with VSW_ACT_DROP       */
    VSW_ACTF_VLAN_PUSH = 1u << 5,/* add an outer 802.1Q tag vlan_vid/vlan_pcp
                                    (tc vlan push): the frame's VLAN becomes
                                    vlan_vid before it is forwarded (FDB,
                                    flood domain), a tag it had stays as the
                                    inner one; ports write the new VLAN as
                                    for any frame of it (a trunk tags it
                                    unless it is the native VID)             */
    VSW_ACTF_VLAN_POP  = 1u << 6,/* remove the outer tag (tc vlan pop): the
                                    frame is forwarded as if it had arrived
                                    untagged on its port (native VID / PVID);
                                    a frame without a tag is left as it is
                                    (as tc's pop does); not with VLAN_PUSH.
                                    Both VLAN actions apply to every copy of
                                    the frame, the mirror's included         */
    VSW_ACTF_ALL     = (1u << 7) - 1,
};

typedef struct vsw_rule {
    uint32_t priority;          /* lower value = evaluated first; equal
                                   priorities: lower index first             */
    uint32_t match;             /* VSW_M_* bits                               */
    uint16_t in_port, out_port;
    uint8_t  src_mac[6], src_mac_mask[6];
    uint8_t  dst_mac[6], dst_mac_mask[6];
    uint16_t vid;
    uint16_t ethertype;
    uint8_t  ip_version;        /* 4 or 6 (with SRC_IP/DST_IP/IP_VERSION)     */
    uint8_t  src_plen, dst_plen;/* prefix lengths, <= 32 / 128               */
    uint8_t  src_ip[16], dst_ip[16]; /* network order; IPv4 in bytes 0..3;
                                   bits beyond the prefix must be zero        */
    uint8_t  ip_proto;
    uint16_t sport_lo, sport_hi, dport_lo, dport_hi; /* inclusive, lo <= hi  */
    uint8_t  dscp, dscp_mask;   /* 6-bit values                               */
    uint8_t  tcp_flags, tcp_flags_mask;
    /* action */
    uint8_t  verdict;           /* enum vsw_acl_verdict                      */
    uint8_t  set_tc;            /* with VSW_ACTF_SET_TC, 0..7                 */
    uint16_t mirror_port;       /* with VSW_ACTF_MIRROR                       */
    uint16_t meter;             /* with VSW_ACTF_METER, 1..VSW_MAX_METERS-1   */
    uint32_t flags;             /* VSW_ACTF_*                                 */
    uint16_t redirect_port;     /* with VSW_ACTF_REDIRECT                     */
    uint16_t vlan_vid;          /* with VSW_ACTF_VLAN_PUSH, 1..4094           */
    uint8_t  vlan_pcp;          /* with VSW_ACTF_VLAN_PUSH, 0..7              */
} vsw_rule;

/* Replace the whole rule set (n may be 0).  Frames that match no rule are
 * permitted.  Validation errors (bad prefix, inverted range, unknown verdict
 * or flag, bad port/TC/meter, more than VSW_ACL_MAX_RULES rules) return
 * -EINVAL / -E2BIG and leave the current rule set in place. */
int vsw_acl_set(vsw_switch *sw, const vsw_rule *rules, size_t n,
                vsw_error *err);
/* Check and compile a rule set without installing it (used by the fuzzer). */
int vsw_acl_check(const vsw_rule *rules, size_t n, unsigned num_ports,
                  vsw_error *err);

/* Classifier implementation used by vsw_process: the decision-tree
 * classifier (default: its leaves checked with AVX-512, else AVX2, else
 * portable C, as the CPU allows), the same trees with their leaves checked
 * in portable C or with AVX2 (if the CPU has it) even where the CPU has
 * AVX-512 (what other machines run), or the linear-scan reference.  All
 * give the same results; all but the first are for tests and the
 * benchmarks. */
enum vsw_classifier {
    VSW_CLASSIFIER_TREE = 0,
    VSW_CLASSIFIER_LINEAR = 1,
    VSW_CLASSIFIER_TREE_SCALAR = 2,
    VSW_CLASSIFIER_TREE_AVX2 = 3,
};
void vsw_set_classifier(vsw_switch *sw, enum vsw_classifier c);

/* Classifier statistics of the installed rule set. */
typedef struct vsw_acl_stats {
    size_t   rules;
    size_t   trees;          /* independent decision trees                  */
    size_t   nodes;          /* internal + leaf nodes                       */
    size_t   leaf_refs;      /* rule references stored in leaves             */
    unsigned max_depth;
    size_t   bytes;          /* total memory of the compiled set            */
} vsw_acl_stats;
void vsw_acl_get_stats(const vsw_switch *sw, vsw_acl_stats *st);

/* ---------------------------------------------------------------------- */
/* Rule table: incremental ACL rules by cookie (switchdev, tc flower)       */
/*
 * The alternative to vsw_acl_set for a rule set that changes one rule at a
 * time: tc flower offload adds, replaces and deletes filters by a 64-bit
 * cookie, each with a priority (tc's prio/pref: lower first) and a chain,
 * bound to the representor's in-port (its block) or to every port.
 *
 *   - Order: priority ascending, then the order rules were added (a
 *     replace keeps the rule's place among equal priorities).  First match
 *     decides, as with vsw_acl_set.
 *   - Scope: a port (the rule then matches only frames received on it; a
 *     rule that also matches in_port must name the same port) or
 *     VSW_RULE_GLOBAL (the rule's own match, any port).
 *   - Chains: the switch has one lookup stage, so only chain 0 without a
 *     goto can be expressed; other chains are refused with -EOPNOTSUPP.
 *   - Every call validates, then publishes a new rule set with one pointer
 *     swap (the data path sees the set before or after the call, never a
 *     mix), or returns an error with a message and changes nothing.
 *     Compilation is incremental (see docs/vswitch.md, "Incremental
 *     rules"): rules added since the last full build are compiled into a
 *     small tree of their own, deleted ones are struck from copies of the
 *     trees they were in, and every so often everything is rebuilt.
 *   - Counters (rules with VSW_ACTF_COUNT) belong to the cookie: they
 *     survive changes of other rules and a replace of the rule itself, and
 *     start at zero when the cookie is added.
 *   - Limits: rules per scope and in total (vsw_rule_limits_set); over
 *     them -ENOSPC.
 *   - vsw_acl_set replaces the whole rule set and empties the table; the
 *     table refuses changes (-EBUSY) while a non-empty set installed by
 *     vsw_acl_set is in place.
 *   - d->rule of a decision is the rule's id (vsw_rule_id_cookie maps it to
 *     the cookie); vsw_rule_counters_get returns -EOPNOTSUPP for table
 *     rules, vsw_acl_get_stats counts free ranks as rules.
 * Control-side calls, like the other configuration functions.
 */
#define VSW_RULE_GLOBAL VSW_PORT_ANY

typedef struct vsw_trule {
    uint64_t cookie;        /* the caller's name for the rule (tc cookie)   */
    uint32_t chain;         /* tc chain: 0 only                             */
    uint16_t scope;         /* in-port the rule belongs to, or VSW_RULE_GLOBAL */
    vsw_rule rule;          /* match and action; rule.priority = tc prio    */
} vsw_trule;

/* -EEXIST if the cookie is in use. */
int vsw_rule_add(vsw_switch *sw, const vsw_trule *r, vsw_error *err);
/* Replace the rule with r->cookie (match, action, priority, scope);
 * -ENOENT if there is none.  Its counters carry on. */
int vsw_rule_replace(vsw_switch *sw, const vsw_trule *r, vsw_error *err);
/* Add n rules at once, in order, with one full build and one publication
 * (a driver replaying a block's rules): all or nothing; err->rule is the
 * index of the rule refused. */
int vsw_rule_add_many(vsw_switch *sw, const vsw_trule *r, size_t n, vsw_error *err);
/* -ENOENT if there is no such rule. */
int vsw_rule_del(vsw_switch *sw, uint64_t cookie, vsw_error *err);
/* Delete every rule of a scope (a port going away), in one publication;
 * returns how many were deleted, or a negative errno value. */
int vsw_rule_flush_scope(vsw_switch *sw, uint16_t scope, vsw_error *err);
/* The rule as installed, and its counters (tc -s filter show). */
int vsw_rule_get(const vsw_switch *sw, uint64_t cookie, vsw_trule *r);
int vsw_rule_stats(const vsw_switch *sw, uint64_t cookie, uint64_t *packets,
                   uint64_t *bytes);
/* The cookie of the rule a decision reports in d->rule (-ENOENT if that
 * rule has been deleted since). */
int vsw_rule_id_cookie(const vsw_switch *sw, int32_t id, uint64_t *cookie);
/* Limits: rules per scope (each port, and the global scope) and in the
 * table; defaults 16384 and VSW_ACL_MAX_RULES.  -EINVAL if a limit is 0,
 * above VSW_ACL_MAX_RULES or below what is installed now. */
int vsw_rule_limits_set(vsw_switch *sw, unsigned per_scope, unsigned total,
                        vsw_error *err);

typedef struct vsw_rule_table_stats {
    size_t   rules;          /* in the table                                */
    size_t   rank_space;     /* ranks of the published set (rules + free)   */
    size_t   base_rules;     /* compiled in the last full build, still live */
    size_t   delta_rules;    /* compiled since, into the delta tree         */
    size_t   struck;         /* base entries struck out since (dead)        */
    uint64_t full_builds;    /* full rebuilds so far                         */
    uint64_t shifts;         /* inserts that had to move neighbours' ranks   */
} vsw_rule_table_stats;
void vsw_rule_table_get_stats(const vsw_switch *sw, vsw_rule_table_stats *st);

/* ---------------------------------------------------------------------- */
/* Meters (token buckets)                                                   */

#define VSW_MAX_METERS 4096u   /* ids 1..4095; 0 means "no meter"          */

enum vsw_meter_mode { VSW_METER_BPS = 0, VSW_METER_PPS = 1 };

typedef struct vsw_meter_cfg {
    uint8_t  mode;        /* VSW_METER_BPS: rate in bits/s, burst in bytes;
                             VSW_METER_PPS: rate in packets/s, burst in pkts */
    uint64_t rate;        /* > 0                                             */
    uint64_t burst;       /* > 0: bucket depth                                */
    uint16_t parent;      /* parent meter id (tenant group), 0 = none; the
                             chain may be at most 4 deep and must not loop   */
} vsw_meter_cfg;

/* Create or replace a meter; replacing resets its bucket to full. */
int vsw_meter_set(vsw_switch *sw, unsigned id, const vsw_meter_cfg *c,
                  vsw_error *err);
int vsw_meter_del(vsw_switch *sw, unsigned id, vsw_error *err);

/* ---------------------------------------------------------------------- */
/* Decisions                                                                */

enum vsw_drop_reason {
    VSW_DROP_NONE = 0,
    VSW_DROP_LINK_DOWN,     /* ingress port down or nonexistent            */
    VSW_DROP_MALFORMED,     /* runt / truncated headers                     */
    VSW_DROP_VLAN,          /* VLAN not allowed on ingress                   */
    VSW_DROP_SPOOF,         /* source MAC spoof / multicast source          */
    VSW_DROP_ACL,           /* ACL drop verdict                              */
    VSW_DROP_METER,         /* a meter in the chain did not conform          */
    VSW_DROP_NO_DEST,       /* nothing left to send to                       */
    VSW_DROP_QUEUE_FULL,    /* scheduler tail drop (counted by the sched)    */
    VSW_DROP_REASONS
};
const char *vsw_drop_reason_name(unsigned reason);

typedef struct vsw_decision {
    vsw_portset egress;     /* ports that get a copy (incl. mirror port)    */
    uint16_t    mirror_port;/* VSW_PORT_ANY if none; that port gets the frame
                               exactly as received                           */
    uint16_t    vid;        /* VLAN of the frame inside the switch (0: none) */
    uint8_t     pcp;        /* priority to use when a tag is written         */
    uint8_t     tc;         /* traffic class 0..7                            */
    uint8_t     drop;       /* enum vsw_drop_reason; NONE = forwarded        */
    uint8_t     flood;      /* 1 if flooded (no single FDB destination)      */
    int32_t     rule;       /* index of the matching ACL rule, -1 if none    */
    uint32_t    acl_gen;    /* generation of the rule set that decided       */
    uint16_t    in_port;
    uint16_t    l2_len;     /* header bytes before the payload of the
                               Ethernet frame (14 or 18)                     */
    uint8_t     vlan_act;   /* VSW_VLAN_ACT_*: what the matched rule did to
                               the frame's tags (vid/pcp are the result)     */
} vsw_decision;

enum {
    VSW_VLAN_ACT_NONE = 0,
    VSW_VLAN_ACT_PUSH = 1,  /* outer tag d->vid/d->pcp added                 */
    VSW_VLAN_ACT_POP  = 2,  /* the frame's tag removed                       */
};

/* Process one frame received on `in_port` at time now_ns (any monotonic
 * nanosecond clock).  Fills *d; returns the number of egress ports
 * (0 means dropped, reason in d->drop). */
unsigned vsw_process(vsw_switch *sw, unsigned in_port, const uint8_t *frame,
                     size_t len, uint64_t now_ns, vsw_decision *d);
/* The same for n frames received together on `in_port` (faster: the
 * classifier walks the frames together, so their memory loads overlap). */
void vsw_process_burst(vsw_switch *sw, unsigned in_port,
                       const uint8_t *const *frames, const size_t *lens,
                       size_t n, uint64_t now_ns, vsw_decision *d);

/* The traffic class vsw_process would give the frame now (steps 1-7:
 * port checks, trust, the ACL's set_tc), or -1 if it would be dropped
 * before egress (link, malformed, VLAN, spoof, an ACL drop).  Changes
 * nothing: no counters, no learning, no meter (so a frame dropped later
 * by a meter, or with no destination, still gets its class).  The
 * adapter asks it before it takes a frame from a TX ring (hw 2.5: a ring
 * waits while the class of its head frame is paused at the uplink). */
int vsw_frame_tc(vsw_switch *sw, unsigned in_port, const uint8_t *frame,
                 size_t len, uint64_t now_ns);

/* Write into `out` (capacity `cap`, may not overlap `frame`) the frame as
 * egress `port` must see it: with a tag for trunk ports (unless the VID is
 * the native VID), without one for access ports, after a VLAN push the
 * frame's own tag kept inside the new one; the mirror port gets the
 * original frame (with the rule's VLAN push or pop done on it).  Returns
 * the new length, or 0 if `cap` is too small (len + 4 always suffices). */
size_t vsw_egress_frame(const vsw_switch *sw, const vsw_decision *d,
                        unsigned port, const uint8_t *frame, size_t len,
                        uint8_t *out, size_t cap);

/* Data-path quiescence (see THREADS above). */
void vsw_quiescent(vsw_switch *sw);
void vsw_datapath_offline(vsw_switch *sw);
void vsw_datapath_online(vsw_switch *sw);
/* Free retired tables the data path can no longer see; returns how many
 * remain retired. */
size_t vsw_reclaim(vsw_switch *sw);

/* ---------------------------------------------------------------------- */
/* Egress scheduling (per port: 8 traffic classes)                          */
/*
 * Model (the one behind `devlink rate` and `dcb ets`): each port transmits
 * at link_rate bits/s.  Each TC is a node with
 *   - strict: strict-priority node; among strict nodes a higher TC number
 *     wins, and strict nodes go before weighted ones;
 *   - weight: DWRR share among the non-strict nodes (quantum = weight x
 *     1500 bytes);
 *   - tx_share: a guaranteed minimum in bits/s: while a node is below its
 *     share it is served before everything else;
 *   - tx_max: a ceiling in bits/s (0 = none): a node above it is not served.
 * Port-level tx_max caps the whole port (on top of link_rate).
 */
typedef struct vsw_sched_tc {
    bool     strict;
    uint32_t weight;        /* >= 1 for weighted nodes                       */
    uint64_t tx_share;      /* bits/s, 0 = none                               */
    uint64_t tx_max;        /* bits/s, 0 = unlimited                          */
} vsw_sched_tc;

typedef struct vsw_sched_cfg {
    uint64_t     link_rate; /* bits/s, > 0                                    */
    uint64_t     tx_max;    /* bits/s, 0 = link_rate                          */
    vsw_sched_tc tc[VSW_NUM_TC];
} vsw_sched_cfg;

/* Defaults: 100 Gbit/s, all TCs weighted with weight 1. */
void vsw_sched_cfg_default(vsw_sched_cfg *c);
int  vsw_sched_set(vsw_switch *sw, unsigned port, const vsw_sched_cfg *c,
                   vsw_error *err);

/* Queue an opaque handle of `len` bytes on (port, tc).  Returns 0 or
 * -ENOSPC (tail drop, counted as VSW_DROP_QUEUE_FULL). */
int vsw_sched_enqueue(vsw_switch *sw, unsigned port, unsigned tc,
                      uint64_t handle, uint32_t len, uint64_t now_ns);
/* Pick the next frame to put on the wire of `port` at now_ns.  Returns 1
 * and fills *handle, *len and *tc, or 0 if nothing may be sent now; then
 * *next_ns (if non-NULL) says when to call again (UINT64_MAX: queues
 * empty). */
int vsw_sched_dequeue(vsw_switch *sw, unsigned port, uint64_t now_ns,
                      uint64_t *handle, uint32_t *len, unsigned *tc,
                      uint64_t *next_ns);
unsigned vsw_sched_backlog(const vsw_switch *sw, unsigned port, unsigned tc);

/* ---------------------------------------------------------------------- */
/* Counters                                                                 */

typedef struct vsw_port_counters {
    uint64_t rx_packets, rx_bytes;            /* received on the port        */
    uint64_t tx_packets, tx_bytes;            /* forwarded to the port       */
    uint64_t drops[VSW_DROP_REASONS];         /* ingress drops by reason     */
    uint64_t tc_tx_packets[VSW_NUM_TC], tc_tx_bytes[VSW_NUM_TC]; /* dequeued */
    uint64_t tc_drops[VSW_NUM_TC];            /* scheduler tail drops        */
} vsw_port_counters;

typedef struct vsw_meter_counters {
    uint64_t pass_packets, pass_bytes;
    uint64_t drop_packets, drop_bytes;
} vsw_meter_counters;

int vsw_port_counters_get(const vsw_switch *sw, unsigned port,
                          vsw_port_counters *c);
/* Per-rule counters of the installed rule set (rules with VSW_ACTF_COUNT). */
int vsw_rule_counters_get(const vsw_switch *sw, unsigned rule,
                          uint64_t *packets, uint64_t *bytes);
int vsw_meter_counters_get(const vsw_switch *sw, unsigned id,
                           vsw_meter_counters *c);

/* ---------------------------------------------------------------------- */
/* Link QoS: 8 traffic classes over a rate tree (dcb ets + devlink rate)    */
/*
 * One scheduler for one link with a line rate (the adapter's uplink), in
 * qos_cfg.c (configuration, validation) and qos_sched.c (queues, service
 * order).  Sources are LEAVES 0..nleaves-1 (the adapter's functions: PF and
 * VFs); NODES 1..VSW_QOS_MAX_NODES group leaves and other nodes (tenants,
 * nested).  Node id 0 as a parent means the root: the link itself.
 *
 * QUEUES: a frame is queued on (leaf, class).  A class queue (all leaves)
 * and each leaf's part of it are bounded in frames and bytes.  A leaf may
 * hold at most the free space of the class queue (a dynamic threshold, so
 * n busy leaves get 1/(n+1) of it each) and never more than its own bound;
 * once fewer than VSW_QOS_RESERVE more of the largest frames would fit,
 * the enqueue still succeeds but the leaf is PAUSED: its source must stop
 * feeding frames (the adapter stops consuming the function's TX ring)
 * until its part drains to half of what it may hold and vsw_qos_resumed()
 * names the leaf again.  A frame that finds no room at all under the hard
 * bounds (a source that cannot be paused, e.g. a flood copy or the RDMA
 * engine) is dropped and counted.
 *
 * SERVICE ORDER, each time the wire is free:
 *   1. classes: strict classes first, the higher class number first; then
 *      the ETS classes, sharing what is left in proportion to their
 *      bandwidth percent (weighted fair queueing); ETS classes of 0% only
 *      when no other ETS class can send.  A class over its maxrate waits.
 *   2. inside the chosen class, down the rate tree from the root: among the
 *      siblings that have frames of that class and are under their tx_max,
 *        a. those below their tx_share (guarantee) first,
 *        b. then the higher tx_priority first (0..7, 7 first),
 *        c. then by tx_weight (weighted fair queueing).
 *      A node whose subtree cannot send (every leaf capped) is skipped.
 *   Rates (tx_share, tx_max) are per object across all classes, as devlink
 *   rate defines them; a guarantee is a floor, not an addition: an object
 *   below its tx_share is served first, above it it competes by weight
 *   like any other (so it gets max(tx_share, its weighted share)).  Strict
 *   classes go before any guarantee in an ETS class (a strict class can
 *   starve the others, as in 802.1Qaz); give strict classes a maxrate.
 *
 * Not thread-safe (unlike the switch tables): the caller serialises every
 * call (the adapter runs under QEMU's BQL).  All times are the caller's
 * nanoseconds (simulated in tests).  Every loop is bounded by the number of
 * objects (VSW_QOS_MAX_LEAVES + VSW_QOS_MAX_NODES) and classes.
 */
#define VSW_QOS_MAX_LEAVES  256u
#define VSW_QOS_MAX_NODES   63u      /* node ids 1..63; 0 = the root        */
#define VSW_QOS_MAX_DEPTH   4u       /* nodes between a leaf and the root   */
#define VSW_QOS_MAX_PRIO    7u
#define VSW_QOS_MAX_WEIGHT  1000u
#define VSW_QOS_RESERVE     2u       /* frames of room kept when pausing    */
#define VSW_QOS_MIN_RATE    1000u            /* bits/s                     */
#define VSW_QOS_MAX_RATE    1600000000000ull /* 1.6 Tbit/s                 */

typedef struct vsw_qos vsw_qos;

typedef struct vsw_qos_limits {
    uint32_t tc_frames, tc_bytes;     /* a class queue, all leaves
                                         (0: 2048 frames, 2 MiB)           */
    uint32_t leaf_frames, leaf_bytes; /* one leaf's frames in one class
                                         (0: 256 frames, 256 KiB)          */
    uint32_t max_frame;               /* largest frame in bytes (0: 9216);
                                         bounds must hold 4 of them        */
} vsw_qos_limits;

/* A link of `rate_bps` (default: 10 Gbit/s, overhead 24) for nleaves
 * sources (1..VSW_QOS_MAX_LEAVES).  NULL on bad arguments or OOM. */
vsw_qos *vsw_qos_create(unsigned nleaves, const vsw_qos_limits *lim);
void     vsw_qos_destroy(vsw_qos *q);   /* queued handles are forgotten */

/* The wire: rate_bps in [VSW_QOS_MIN_RATE, VSW_QOS_MAX_RATE]; overhead =
 * bytes the wire adds to every frame (preamble 8 + gap 12 + FCS 4 = 24 on
 * Ethernet, for frames handed over without FCS), 0..64.  Refused with
 * -ERANGE if the guarantees under the root would no longer fit. */
int vsw_qos_set_line(vsw_qos *q, uint64_t rate_bps, uint32_t overhead,
                     vsw_error *err);
void vsw_qos_get_line(const vsw_qos *q, uint64_t *rate_bps, uint32_t *overhead);

/* A rate object (devlink rate leaf or node).  Rates in bits/s; the PF
 * driver converts devlink's bytes/s. */
typedef struct vsw_qos_rate {
    uint64_t tx_share;      /* guaranteed minimum, 0 = none                */
    uint64_t tx_max;        /* ceiling, 0 = none                           */
    uint32_t tx_priority;   /* 0..VSW_QOS_MAX_PRIO, higher served first    */
    uint32_t tx_weight;     /* 1..VSW_QOS_MAX_WEIGHT among equal priority  */
    uint16_t parent;        /* node id, 0 = the root                       */
} vsw_qos_rate;
void vsw_qos_rate_default(vsw_qos_rate *r);     /* weight 1, the rest 0 */

/* Errors (nothing changes on error; err->msg says why):
 *   -EINVAL  a value out of range (weight 0, priority > 7, tx_share >
 *            tx_max, bad id);
 *   -ENOENT  the node (or the parent named) does not exist;
 *   -EEXIST  vsw_qos_node_add of an id in use;
 *   -EBUSY   vsw_qos_node_del of a node that still has children;
 *   -ELOOP   a parent chain that loops or is deeper than VSW_QOS_MAX_DEPTH;
 *   -ERANGE  guarantees oversubscribed: the tx_share of a node's children
 *            (a node without one of its own counts as the sum of its
 *            children's) exceed the node's tx_share, or its tx_max, or at
 *            the root the line rate. */
int vsw_qos_node_add(vsw_qos *q, unsigned node, const vsw_qos_rate *r,
                     vsw_error *err);
int vsw_qos_node_set(vsw_qos *q, unsigned node, const vsw_qos_rate *r,
                     vsw_error *err);
int vsw_qos_node_del(vsw_qos *q, unsigned node, vsw_error *err);
int vsw_qos_node_get(const vsw_qos *q, unsigned node, vsw_qos_rate *r);
int vsw_qos_leaf_set(vsw_qos *q, unsigned leaf, const vsw_qos_rate *r,
                     vsw_error *err);
int vsw_qos_leaf_get(const vsw_qos *q, unsigned leaf, vsw_qos_rate *r);

/* Classes (dcb ets, dcb maxrate).  Default: every class ETS, 12/12/12/12/
 * 13/13/13/13 percent, no maxrate. */
enum vsw_tsa { VSW_TSA_STRICT = 0, VSW_TSA_ETS = 1 };
typedef struct vsw_qos_ets {
    uint8_t  tsa[VSW_NUM_TC];     /* enum vsw_tsa                          */
    uint8_t  bw[VSW_NUM_TC];      /* percent; ETS classes sum to 100,
                                     strict classes 0                      */
    uint64_t maxrate[VSW_NUM_TC]; /* bits/s, 0 = none                      */
} vsw_qos_ets;
int  vsw_qos_ets_set(vsw_qos *q, const vsw_qos_ets *e, vsw_error *err);
void vsw_qos_ets_get(const vsw_qos *q, vsw_qos_ets *e);

/* Data path.  Enqueue: 0 queued; VSW_QOS_PAUSED queued and the leaf is now
 * paused in this class; -ENOSPC dropped (counted); -EINVAL bad leaf, class or len (0 or
 * more than max_frame; not counted). */
#define VSW_QOS_PAUSED 1
int vsw_qos_enqueue(vsw_qos *q, unsigned leaf, unsigned tc, uint64_t handle,
                    uint32_t len, uint64_t now_ns);

typedef struct vsw_qos_frame {
    uint64_t handle;
    uint32_t len;
    uint16_t leaf;
    uint8_t  tc;
    uint64_t queued_ns;     /* now_ns of its enqueue                       */
} vsw_qos_frame;
/* The next frame to put on the wire at now_ns: returns 1 and fills *f, or
 * 0 when nothing may be sent now.  *next_ns (if non-NULL) is when to call
 * again (UINT64_MAX: nothing queued).  The wire is busy for
 * (len + overhead) * 8 / rate after each frame. */
int vsw_qos_dequeue(vsw_qos *q, uint64_t now_ns, vsw_qos_frame *f,
                    uint64_t *next_ns);
bool vsw_qos_paused(const vsw_qos *q, unsigned leaf);   /* in any class */
/* Is the leaf paused in class tc (its part of that class full)?  A source
 * with a queue per class (the adapter's TX rings per class, hw 2.5) stops
 * only the queue whose next frame is of a paused class, so a leaf's full
 * bulk class does not hold back its strict class.  False for a bad leaf
 * or class. */
bool vsw_qos_paused_tc(const vsw_qos *q, unsigned leaf, unsigned tc);
/* Leaves that left a pause in some class since the last call (up to max
 * of them, each once; a leaf may still be paused in another class). */
size_t vsw_qos_resumed(vsw_qos *q, uint16_t *leaves, size_t max);
/* Drop every queued frame (link down, reset): drop(ctx, handle) for each,
 * counted as dropped; every paused leaf resumes.  Returns how many. */
size_t vsw_qos_flush(vsw_qos *q, void (*drop)(void *ctx, uint64_t handle),
                     void *ctx);

typedef struct vsw_qos_tc_stats {
    uint64_t queued_pkts, queued_bytes;   /* accepted by enqueue           */
    uint64_t sent_pkts, sent_bytes;       /* dequeued onto the wire        */
    uint64_t dropped_pkts, dropped_bytes; /* no room, or flushed           */
    uint64_t pauses;                      /* leaves paused by this class   */
    uint32_t backlog_frames, backlog_bytes;
} vsw_qos_tc_stats;
typedef struct vsw_qos_leaf_stats {
    uint64_t sent_pkts, sent_bytes, dropped_pkts, pauses;
    uint32_t backlog_frames;
    bool     paused;
} vsw_qos_leaf_stats;
int vsw_qos_tc_stats_get(const vsw_qos *q, unsigned tc, vsw_qos_tc_stats *s);
int vsw_qos_leaf_stats_get(const vsw_qos *q, unsigned leaf,
                           vsw_qos_leaf_stats *s);

/* ---------------------------------------------------------------------- */
/* Frame parsing (exposed for tests, fuzzing and the device model)          */

typedef struct vsw_pkt {
    uint8_t  dst[6], src[6];
    uint16_t ethertype;     /* after the VLAN tag                             */
    uint8_t  tagged;        /* 802.1Q tag present                             */
    uint8_t  pcp;
    uint16_t vid;           /* tag VID (0 if untagged)                        */
    uint16_t l2_len;        /* 14 or 18                                        */
    uint8_t  ip_version;    /* 0, 4 or 6                                       */
    uint8_t  dscp;
    uint8_t  ip_proto;
    uint8_t  l4_valid;      /* ports (and TCP flags for TCP) are present      */
    uint8_t  tcp_flags;
    uint8_t  src_ip[16], dst_ip[16];   /* IPv4 in bytes 0..3                  */
    uint16_t sport, dport;
} vsw_pkt;

/* Returns 0, or -EINVAL for a frame too short for its own headers (a runt,
 * a cut tag, a truncated IPv4/IPv6 header, bad IHL).  A frame of an unknown
 * ethertype or a non-first IP fragment parses fine with fewer fields. */
int vsw_parse(const uint8_t *frame, size_t len, vsw_pkt *p);

#ifdef __cplusplus
}
#endif
#endif /* VSWITCH_H */
