/* qos_internal.h - state of the link QoS scheduler (vswitch.h "Link QoS"),
 * shared by qos_cfg.c (configuration) and qos_sched.c (data path).
 *
 * Every rate object is an "entity" with one index space:
 *   leaves  0 .. nleaves-1
 *   root    QOS_ROOT          (node id 0: the link)
 *   nodes   QOS_ROOT + id     (ids 1..VSW_QOS_MAX_NODES)
 * so a walk from a leaf to the root is `e = ent[e].parent` until QOS_ROOT.
 */
#ifndef QOS_INTERNAL_H
#define QOS_INTERNAL_H

#include "vsw_internal.h"

#define QOS_ROOT  VSW_QOS_MAX_LEAVES
#define QOS_NENT  (VSW_QOS_MAX_LEAVES + 1u + VSW_QOS_MAX_NODES)
#define QOS_NONE  0xffffu
/* Burst tolerance of the tx_max and tx_share buckets and of class maxrates:
 * 16 KiB, as the port scheduler (sched.c) uses; the long-run rate does not
 * depend on it (GCRA charges every byte). */
#define QOS_BURST_BYTES 16384u

/* A GCRA rate in the meters' arithmetic (meter.c): times are ns << 16. */
typedef struct qos_gcra {
    uint8_t  on;
    uint8_t  sh;
    uint64_t k;
    vsw_u128 tau;
} qos_gcra;

/* The configuration the data path runs on (validated as a whole). */
typedef struct qos_conf {
    vsw_qos_rate rate[QOS_NENT];  /* leaves and nodes; root unused         */
    uint8_t      used[QOS_NENT];  /* leaves < nleaves and nodes added      */
    vsw_qos_ets  ets;
    uint64_t     line_bps;
    uint32_t     overhead;
} qos_conf;

/* One (leaf, class) FIFO of handles. */
typedef struct qos_slot {
    uint64_t handle, queued_ns;
    uint32_t len;
} qos_slot;
typedef struct qos_fifo {
    qos_slot *s;                  /* cap entries, allocated on first use   */
    uint32_t  cap, head, cnt, bytes;
} qos_fifo;

typedef struct qos_ent {
    uint16_t parent;              /* entity index; QOS_NONE for the root   */
    uint16_t kid0, nkids;         /* children: kids[kid0 .. kid0+nkids)    */
    uint32_t weight;
    uint8_t  prio;
    qos_gcra max, share;          /* tx_max, tx_share                      */
    vsw_u128 max_tat, share_tat;
    /* weighted fair queueing per class: this entity's tag among its
     * siblings, and (as a parent) the smallest tag of its active kids */
    vsw_u128 vt[VSW_NUM_TC];
    vsw_u128 vclock[VSW_NUM_TC];
    uint32_t backlog[VSW_NUM_TC]; /* frames queued in its subtree          */
} qos_ent;

typedef struct qos_tc_ctrs {
    uint64_t queued_p, queued_b, sent_p, sent_b, drop_p, drop_b, pauses;
} qos_tc_ctrs;
typedef struct qos_leaf_ctrs {
    uint64_t sent_p, sent_b, drop_p, pauses;
} qos_leaf_ctrs;

struct vsw_qos {
    unsigned       nleaves;
    vsw_qos_limits lim;
    qos_conf       conf;
    /* derived from conf by qos_apply() */
    qos_ent        ent[QOS_NENT];
    uint16_t       kids[QOS_NENT];
    qos_gcra       line, tc_max[VSW_NUM_TC];
    uint32_t       tc_weight[VSW_NUM_TC];   /* ETS percent (0: last tier)  */
    /* class level: fair-queueing tags and maxrate buckets */
    vsw_u128       tc_vt[VSW_NUM_TC], tc_vclock;
    vsw_u128       tc_max_tat[VSW_NUM_TC];
    vsw_u128       busy;                    /* wire busy until (ns << 16)  */
    vsw_u128       waiting_since;           /* queues non-empty since      */
    /* queues */
    qos_fifo      *fifo;                    /* [leaf * VSW_NUM_TC + tc]    */
    uint32_t       tc_frames[VSW_NUM_TC], tc_bytes[VSW_NUM_TC];
    uint8_t       *pause_mask;              /* by leaf: classes it waits on */
    uint32_t       npaused[VSW_NUM_TC];
    uint64_t       resumed[VSW_QOS_MAX_LEAVES / 64];
    /* counters */
    qos_tc_ctrs    tcc[VSW_NUM_TC];
    qos_leaf_ctrs *lc;
};

/* qos_cfg.c: rebuild the derived state (tree, rates) from q->conf; queued
 * frames and fair-queueing tags stay, backlog counts are recomputed. */
void qos_apply(vsw_qos *q);
void qos_gcra_set(qos_gcra *g, uint64_t bps);

static inline int qos_is_leaf(const vsw_qos *q, unsigned e)
{
    return e < q->nleaves;
}

/* Walks over the entities that can be in use: leaves 0..nleaves-1, then the
 * root and the nodes.  Leaf slots nleaves..QOS_ROOT-1 never are (leaf calls
 * refuse them) and keep the state vsw_qos_create gave them (no parent, no
 * children, no backlog), so a configuration change need not visit them: an
 * adapter with 3 functions has 67 entities, not 320. */
static inline unsigned qos_ent_next(const vsw_qos *q, unsigned e)
{
    return ++e == q->nleaves ? QOS_ROOT : e;
}
#define QOS_FOR_ENT(q, e) for (unsigned e = 0; e < QOS_NENT; e = qos_ent_next((q), e))

#endif /* QOS_INTERNAL_H */
