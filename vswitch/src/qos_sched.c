/* qos_sched.c - the data path of the link QoS scheduler (vswitch.h "Link
 * QoS"): bounded (leaf, class) queues with back-pressure, and the service
 * order: classes (strict, then ETS shares), then the rate tree (guarantees,
 * tx_priority, tx_weight; tx_max caps), at the line rate.
 *
 * Weighted sharing (ETS classes, tx_weight siblings) is weighted fair
 * queueing by start tags (SFQ, Goyal et al. 1996) rather than DWRR: every
 * object keeps a tag that advances by len / weight when it sends, the
 * parent serves its active child with the smallest tag, and a child that
 * becomes active starts at its parent's clock (the smallest tag among the
 * active children).  The share error is bounded by one largest frame per
 * sibling whatever the number of siblings and needs no quantum to tune;
 * DWRR gives the same long-run shares but sends a quantum (weight x MTU) at
 * a time.  A child served out of tag order (below its guarantee, or of a
 * higher tx_priority) is charged all the same, so above its guarantee it
 * waits for the others; its lead is capped at two largest frames so that
 * it is not starved for long once the reason disappears (that cap is what
 * makes a guarantee a floor: tx_share + nothing, or the weighted share if
 * larger, never both).
 *
 * Rates (tx_max, tx_share, class maxrate, the line) are GCRA buckets in
 * the meters' arithmetic: ns << 16 in 128 bits (meter.c). */
#include "qos_internal.h"
#include <stdlib.h>
#include <string.h>

static vsw_u128 fp(uint64_t ns) { return (vsw_u128)ns << 16; }

static uint64_t fp_to_ns_ceil(vsw_u128 x)
{
    vsw_u128 ns = (x + 0xffff) >> 16;
    return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

static vsw_u128 gcra_cost(const qos_gcra *g, uint64_t bytes)
{
    return vsw_rate_cost(bytes * 8, g->k, g->sh);
}

static int under(const qos_gcra *g, vsw_u128 tat, vsw_u128 now)
{
    return !g->on || tat <= now + g->tau;
}

/* Fair-queueing tag cost of len bytes at weight w (32 fraction bits). */
static vsw_u128 tag_cost(uint32_t len, uint32_t w)
{
    return ((vsw_u128)len << 32) / (w ? w : 1);
}

static vsw_u128 tag_lag(const vsw_qos *q, uint32_t w)
{
    return tag_cost(2 * q->lim.max_frame, w);
}

static qos_fifo *fifo_of(vsw_qos *q, unsigned leaf, unsigned tc)
{
    return &q->fifo[leaf * VSW_NUM_TC + tc];
}

/* ---- enqueue and back-pressure -------------------------------------------- */

/* How much of class tc's queue one leaf may hold before it is paused: a
 * "dynamic threshold" (Choudhury and Hahne, 1998), as shared-buffer
 * switches use: the free space of the class queue, at most the leaf's own
 * bound.  With n leaves busy in a class each settles at 1/(n+1) of it, so a
 * leaf that drains fast (a large share) finds room again after draining
 * half of its part instead of waiting for the whole class to drain, which
 * would leave it idle and break its share (measured: a 3:1 tenant split
 * came out 1.27:1 with a fixed "pause everyone at full, resume at half"). */
static void leaf_room(const vsw_qos *q, unsigned tc, uint32_t *frames, uint32_t *bytes)
{
    const vsw_qos_limits *l = &q->lim;
    uint32_t ff = l->tc_frames - q->tc_frames[tc], fb = l->tc_bytes - q->tc_bytes[tc];
    *frames = ff < l->leaf_frames ? ff : l->leaf_frames;
    *bytes = fb < l->leaf_bytes ? fb : l->leaf_bytes;
}

/* Pause once the next VSW_QOS_RESERVE largest frames would not fit. */
static int must_pause(const vsw_qos *q, const qos_fifo *f, unsigned tc)
{
    uint32_t rf, rb;
    leaf_room(q, tc, &rf, &rb);
    return (uint64_t)f->cnt + VSW_QOS_RESERVE > rf ||
           (uint64_t)f->bytes + (uint64_t)VSW_QOS_RESERVE * q->lim.max_frame > rb;
}

/* Resume once down to half of what it may hold (hysteresis: a source is
 * not switched on and off frame by frame). */
static int may_resume(const vsw_qos *q, const qos_fifo *f, unsigned tc)
{
    uint32_t rf, rb;
    leaf_room(q, tc, &rf, &rb);
    return f->cnt <= rf / 2 && f->bytes <= rb / 2;
}

static void pause_leaf(vsw_qos *q, unsigned leaf, unsigned tc)
{
    uint8_t bit = (uint8_t)(1u << tc);
    if (q->pause_mask[leaf] & bit)
        return;
    if (!q->pause_mask[leaf])
        q->lc[leaf].pauses++;
    q->tcc[tc].pauses++;
    q->pause_mask[leaf] |= bit;
    q->npaused[tc]++;
    /* a resume of another class not yet reported stays reported: the
     * source's queue of that class may go on (a stale report only makes
     * the source look again) */
}

int vsw_qos_enqueue(vsw_qos *q, unsigned leaf, unsigned tc, uint64_t handle, uint32_t len,
                    uint64_t now_ns)
{
    if (!q || leaf >= q->nleaves || tc >= VSW_NUM_TC || len == 0 || len > q->lim.max_frame)
        return -EINVAL;
    const vsw_qos_limits *l = &q->lim;
    qos_fifo *f = fifo_of(q, leaf, tc);
    if (f->cnt >= l->leaf_frames || (uint64_t)f->bytes + len > l->leaf_bytes ||
        q->tc_frames[tc] >= l->tc_frames || (uint64_t)q->tc_bytes[tc] + len > l->tc_bytes) {
        q->tcc[tc].drop_p++;
        q->tcc[tc].drop_b += len;
        q->lc[leaf].drop_p++;
        return -ENOSPC;
    }
    if (!f->s) {
        f->s = calloc(l->leaf_frames, sizeof(*f->s));
        if (!f->s) {
            q->tcc[tc].drop_p++;
            q->tcc[tc].drop_b += len;
            q->lc[leaf].drop_p++;
            return -ENOSPC;
        }
        f->cap = l->leaf_frames;
    }
    unsigned waiting = 0;
    for (unsigned t = 0; t < VSW_NUM_TC; t++)
        waiting += q->tc_frames[t];
    if (!waiting)
        q->waiting_since = fp(now_ns);      /* the wire may start from here */
    qos_slot *s = &f->s[(f->head + f->cnt) % f->cap];
    s->handle = handle;
    s->len = len;
    s->queued_ns = now_ns;
    f->cnt++;
    f->bytes += len;
    q->tc_frames[tc]++;
    q->tc_bytes[tc] += len;
    q->tcc[tc].queued_p++;
    q->tcc[tc].queued_b += len;
    /* the path becomes active in this class: each object that had nothing
     * of it joins its siblings' fair order at the parent's clock */
    unsigned e = leaf;
    for (unsigned d = 0; d <= VSW_QOS_MAX_DEPTH + 1 && e != QOS_NONE; d++) {
        qos_ent *x = &q->ent[e];
        if (x->backlog[tc]++ == 0) {
            if (x->parent != QOS_NONE) {
                const qos_ent *p = &q->ent[x->parent];
                if (x->vt[tc] < p->vclock[tc])
                    x->vt[tc] = p->vclock[tc];
            } else if (q->tc_vt[tc] < q->tc_vclock) {
                q->tc_vt[tc] = q->tc_vclock;        /* the root: the class */
            }
        }
        e = x->parent;
    }
    if (must_pause(q, f, tc))
        pause_leaf(q, leaf, tc);
    return q->pause_mask[leaf] >> tc & 1u ? VSW_QOS_PAUSED : 0;
}

bool vsw_qos_paused(const vsw_qos *q, unsigned leaf)
{
    return q && leaf < q->nleaves && q->pause_mask[leaf] != 0;
}

bool vsw_qos_paused_tc(const vsw_qos *q, unsigned leaf, unsigned tc)
{
    return q && leaf < q->nleaves && tc < VSW_NUM_TC &&
           (q->pause_mask[leaf] >> tc & 1u);
}

size_t vsw_qos_resumed(vsw_qos *q, uint16_t *leaves, size_t max)
{
    size_t n = 0;
    for (unsigned w = 0; w < VSW_QOS_MAX_LEAVES / 64 && n < max; w++) {
        while (q->resumed[w] && n < max) {
            unsigned b = (unsigned)__builtin_ctzll(q->resumed[w]);
            q->resumed[w] &= q->resumed[w] - 1;
            leaves[n++] = (uint16_t)(w * 64 + b);
        }
    }
    return n;
}

/* After class tc drained a frame, the leaves waiting on it that may
 * resume (room grows for all of them as the class drains). */
static void maybe_resume(vsw_qos *q, unsigned tc)
{
    uint8_t bit = (uint8_t)(1u << tc);
    for (unsigned leaf = 0; leaf < q->nleaves && q->npaused[tc]; leaf++) {
        if (!(q->pause_mask[leaf] & bit) || !may_resume(q, fifo_of(q, leaf, tc), tc))
            continue;
        q->pause_mask[leaf] &= (uint8_t)~bit;
        q->npaused[tc]--;
        /* reported when any class resumes, not only the last: a source
         * with a queue per class may feed this class again */
        q->resumed[leaf / 64] |= 1ull << (leaf % 64);
    }
}

/* ---- service order -------------------------------------------------------- */

static int below_share(const qos_ent *x, vsw_u128 now)
{
    return x->share.on && x->share_tat <= now;
}

/* The leaf to serve for class tc in the subtree of entity e, or -1 when
 * none can send (empty, or every path capped by a tx_max).  Siblings are
 * tried in service order; one whose subtree turns out to be capped is
 * skipped and the next one tried, so each object is visited at most once
 * per call. */
static int pick_in(const vsw_qos *q, unsigned e, unsigned tc, vsw_u128 now, unsigned depth)
{
    if (qos_is_leaf(q, e))
        return q->fifo[e * VSW_NUM_TC + tc].cnt ? (int)e : -1;
    if (depth > VSW_QOS_MAX_DEPTH)
        return -1;
    const qos_ent *x = &q->ent[e];
    uint64_t skip[(QOS_NENT + 63) / 64] = {0};
    for (unsigned round = 0; round < x->nkids; round++) {
        int best = -1, bs = 0;
        unsigned bp = 0;
        vsw_u128 bv = 0;
        for (unsigned i = 0; i < x->nkids; i++) {
            if ((skip[i / 64] >> (i % 64)) & 1)
                continue;
            const qos_ent *c = &q->ent[q->kids[x->kid0 + i]];
            if (!c->backlog[tc] || !under(&c->max, c->max_tat, now)) {
                skip[i / 64] |= 1ull << (i % 64);
                continue;
            }
            int s = below_share(c, now);
            if (best < 0 || s > bs ||
                (s == bs && (c->prio > bp || (c->prio == bp && c->vt[tc] < bv)))) {
                best = (int)i;
                bs = s;
                bp = c->prio;
                bv = c->vt[tc];
            }
        }
        if (best < 0)
            return -1;
        int leaf = pick_in(q, q->kids[x->kid0 + (unsigned)best], tc, now, depth + 1);
        if (leaf >= 0)
            return leaf;
        skip[(unsigned)best / 64] |= 1ull << ((unsigned)best % 64);
    }
    return -1;
}

static int class_can(const vsw_qos *q, unsigned tc, vsw_u128 now)
{
    return q->ent[QOS_ROOT].backlog[tc] && under(&q->tc_max[tc], q->tc_max_tat[tc], now);
}

/* Class, then leaf: returns the leaf and sets *tc, or -1. */
static int pick(const vsw_qos *q, vsw_u128 now, unsigned *tc)
{
    for (int t = VSW_NUM_TC - 1; t >= 0; t--) {
        if (q->conf.ets.tsa[t] != VSW_TSA_STRICT || !class_can(q, (unsigned)t, now))
            continue;
        int leaf = pick_in(q, QOS_ROOT, (unsigned)t, now, 0);
        if (leaf >= 0) {
            *tc = (unsigned)t;
            return leaf;
        }
    }
    /* ETS: classes with a share, then the 0% ones */
    for (int tier = 0; tier < 2; tier++) {
        uint8_t skip = 0;
        for (unsigned round = 0; round < VSW_NUM_TC; round++) {
            int best = -1;
            for (unsigned t = 0; t < VSW_NUM_TC; t++) {
                if (q->conf.ets.tsa[t] != VSW_TSA_ETS || (skip >> t & 1) ||
                    (q->tc_weight[t] == 0) != (tier == 1) || !class_can(q, t, now))
                    continue;
                if (best < 0 || q->tc_vt[t] < q->tc_vt[best])
                    best = (int)t;
            }
            if (best < 0)
                break;
            int leaf = pick_in(q, QOS_ROOT, (unsigned)best, now, 0);
            if (leaf >= 0) {
                *tc = (unsigned)best;
                return leaf;
            }
            skip |= (uint8_t)(1u << best);
        }
    }
    return -1;
}

/* The parent's clock: the smallest tag among its children still active
 * in the class (never moving back). */
static void advance_clock(vsw_qos *q, qos_ent *p, unsigned tc)
{
    int found = 0;
    vsw_u128 m = 0;
    for (unsigned i = 0; i < p->nkids; i++) {
        const qos_ent *c = &q->ent[q->kids[p->kid0 + i]];
        if (c->backlog[tc] && (!found || c->vt[tc] < m)) {
            m = c->vt[tc];
            found = 1;
        }
    }
    if (found && m > p->vclock[tc])
        p->vclock[tc] = m;
}

/* The ETS classes' clock: the smallest tag among the waiting classes of
 * the tier being served (those with a share; the 0% ones only when none
 * with a share waits).  A 0% class that waits behind the shared ones is
 * not served, so its tag stands still: counted here it would hold the
 * clock back, every shared class would reach the same lag cap in charge()
 * and the lowest class would win every tie (measured in the lab: 97% for
 * a 70% class). */
static void class_clock(vsw_qos *q)
{
    for (int tier = 0; tier < 2; tier++) {
        int found = 0;
        vsw_u128 m = 0;
        for (unsigned t = 0; t < VSW_NUM_TC; t++) {
            if (q->conf.ets.tsa[t] == VSW_TSA_ETS && q->ent[QOS_ROOT].backlog[t] &&
                (q->tc_weight[t] == 0) == (tier == 1) && (!found || q->tc_vt[t] < m)) {
                m = q->tc_vt[t];
                found = 1;
            }
        }
        if (found) {
            if (m > q->tc_vclock)
                q->tc_vclock = m;
            return;
        }
    }
}

/* Charge a frame of `len` bytes of class tc sent by `leaf` along its path. */
static void charge(vsw_qos *q, unsigned leaf, unsigned tc, uint32_t len, vsw_u128 now)
{
    unsigned e = leaf;
    for (unsigned d = 0; d <= VSW_QOS_MAX_DEPTH && e != QOS_ROOT && e != QOS_NONE; d++) {
        qos_ent *x = &q->ent[e];
        qos_ent *p = &q->ent[x->parent];
        x->backlog[tc]--;
        vsw_u128 hi = p->vclock[tc] + tag_lag(q, x->weight);
        x->vt[tc] += tag_cost(len, x->weight);
        if (x->vt[tc] > hi)
            x->vt[tc] = hi;
        if (x->max.on)
            x->max_tat = (x->max_tat > now ? x->max_tat : now) + gcra_cost(&x->max, len);
        if (x->share.on) {
            /* credit for an idle spell is capped at the burst */
            vsw_u128 floor = now > x->share.tau ? now - x->share.tau : 0;
            x->share_tat = (x->share_tat > floor ? x->share_tat : floor) +
                           gcra_cost(&x->share, len);
        }
        advance_clock(q, p, tc);
        e = x->parent;
    }
    q->ent[QOS_ROOT].backlog[tc]--;
    if (q->conf.ets.tsa[tc] == VSW_TSA_ETS) {
        uint32_t w = q->tc_weight[tc] ? q->tc_weight[tc] : 1;
        vsw_u128 hi = q->tc_vclock + tag_lag(q, w);
        q->tc_vt[tc] += tag_cost(len, w);
        if (q->tc_vt[tc] > hi)
            q->tc_vt[tc] = hi;
        class_clock(q);
    }
    if (q->tc_max[tc].on)
        q->tc_max_tat[tc] = (q->tc_max_tat[tc] > now ? q->tc_max_tat[tc] : now) +
                            gcra_cost(&q->tc_max[tc], len);
}

/* Nothing could be sent although frames wait: every path is capped.  The
 * earliest moment a cap lifts. */
static uint64_t wake_time(const vsw_qos *q, vsw_u128 now)
{
    vsw_u128 w = ~(vsw_u128)0;
    QOS_FOR_ENT(q, e) {
        const qos_ent *x = &q->ent[e];
        if (x->parent == QOS_NONE || !x->max.on || x->max_tat <= now + x->max.tau)
            continue;
        int busy = 0;
        for (unsigned t = 0; t < VSW_NUM_TC; t++)
            busy |= x->backlog[t] != 0;
        if (busy && x->max_tat - x->max.tau < w)
            w = x->max_tat - x->max.tau;
    }
    for (unsigned t = 0; t < VSW_NUM_TC; t++)
        if (q->ent[QOS_ROOT].backlog[t] && q->tc_max[t].on &&
            q->tc_max_tat[t] > now + q->tc_max[t].tau && q->tc_max_tat[t] - q->tc_max[t].tau < w)
            w = q->tc_max_tat[t] - q->tc_max[t].tau;
    /* cannot happen (something capped is what stopped pick()); poll in 1 us
     * rather than never */
    if (w == ~(vsw_u128)0 || w <= now)
        w = now + fp(1000);
    return fp_to_ns_ceil(w);
}

int vsw_qos_dequeue(vsw_qos *q, uint64_t now_ns, vsw_qos_frame *out, uint64_t *next_ns)
{
    uint64_t dummy;
    if (!next_ns)
        next_ns = &dummy;
    *next_ns = UINT64_MAX;
    if (!q)
        return 0;
    unsigned backlog = 0;
    for (unsigned t = 0; t < VSW_NUM_TC; t++)
        backlog += q->ent[QOS_ROOT].backlog[t];
    if (!backlog)
        return 0;
    vsw_u128 now = fp(now_ns);
    if (q->busy > now) {
        *next_ns = fp_to_ns_ceil(q->busy);
        return 0;
    }
    /* When the next frame starts: as soon as the wire was free and something
     * waited, not when the caller came back.  The caller is a timer of an
     * emulator, which a loaded machine fires late (by whole milliseconds
     * under TCG): a frame started at `now` would leave the wire idle for
     * that lateness, and a 12 Mbit/s line carried 87% of its rate in a CI
     * run.  Time the queues were empty is not made up (a frame never starts
     * before something waited).  The rate tree is asked at that moment too,
     * so guarantees and caps count time as the wire does. */
    vsw_u128 at = q->busy > q->waiting_since ? q->busy : q->waiting_since;
    if (at > now)
        at = now;
    unsigned tc = 0;
    int leaf = pick(q, at, &tc);
    if (leaf < 0 && at < now) {
        /* every waiting path was capped at `at`: the wire idled until the
         * first cap lifted */
        vsw_u128 w = fp(wake_time(q, at));
        if (w <= now) {
            at = w > at ? w : at;
            leaf = pick(q, at, &tc);
        }
    }
    if (leaf < 0) {
        *next_ns = wake_time(q, now);
        return 0;
    }
    qos_fifo *f = fifo_of(q, (unsigned)leaf, tc);
    qos_slot s = f->s[f->head];
    f->head = (f->head + 1) % f->cap;
    f->cnt--;
    f->bytes -= s.len;
    q->tc_frames[tc]--;
    q->tc_bytes[tc] -= s.len;
    if (at < fp(s.queued_ns) && fp(s.queued_ns) <= now)
        at = fp(s.queued_ns);           /* it came after the wire got free */
    charge(q, (unsigned)leaf, tc, s.len, at);
    q->busy = at + gcra_cost(&q->line, (uint64_t)s.len + q->conf.overhead);
    q->tcc[tc].sent_p++;
    q->tcc[tc].sent_b += s.len;
    q->lc[leaf].sent_p++;
    q->lc[leaf].sent_b += s.len;
    maybe_resume(q, tc);
    out->handle = s.handle;
    out->len = s.len;
    out->leaf = (uint16_t)leaf;
    out->tc = (uint8_t)tc;
    out->queued_ns = s.queued_ns;
    *next_ns = fp_to_ns_ceil(q->busy);
    return 1;
}

size_t vsw_qos_flush(vsw_qos *q, void (*drop)(void *ctx, uint64_t handle), void *ctx)
{
    size_t n = 0;
    for (unsigned leaf = 0; leaf < q->nleaves; leaf++) {
        for (unsigned tc = 0; tc < VSW_NUM_TC; tc++) {
            qos_fifo *f = fifo_of(q, leaf, tc);
            for (uint32_t i = 0; i < f->cnt; i++) {
                const qos_slot *s = &f->s[(f->head + i) % f->cap];
                if (drop)
                    drop(ctx, s->handle);
                q->tcc[tc].drop_p++;
                q->tcc[tc].drop_b += s->len;
                q->lc[leaf].drop_p++;
                n++;
            }
            f->head = f->cnt = f->bytes = 0;
        }
        if (q->pause_mask[leaf])
            q->resumed[leaf / 64] |= 1ull << (leaf % 64);
        q->pause_mask[leaf] = 0;
    }
    memset(q->tc_frames, 0, sizeof(q->tc_frames));
    memset(q->tc_bytes, 0, sizeof(q->tc_bytes));
    memset(q->npaused, 0, sizeof(q->npaused));
    QOS_FOR_ENT(q, e)
        memset(q->ent[e].backlog, 0, sizeof(q->ent[e].backlog));
    return n;
}

int vsw_qos_tc_stats_get(const vsw_qos *q, unsigned tc, vsw_qos_tc_stats *s)
{
    if (tc >= VSW_NUM_TC)
        return -EINVAL;
    const qos_tc_ctrs *c = &q->tcc[tc];
    s->queued_pkts = c->queued_p;
    s->queued_bytes = c->queued_b;
    s->sent_pkts = c->sent_p;
    s->sent_bytes = c->sent_b;
    s->dropped_pkts = c->drop_p;
    s->dropped_bytes = c->drop_b;
    s->pauses = c->pauses;
    s->backlog_frames = q->tc_frames[tc];
    s->backlog_bytes = q->tc_bytes[tc];
    return 0;
}

int vsw_qos_leaf_stats_get(const vsw_qos *q, unsigned leaf, vsw_qos_leaf_stats *s)
{
    if (leaf >= q->nleaves)
        return -EINVAL;
    const qos_leaf_ctrs *c = &q->lc[leaf];
    s->sent_pkts = c->sent_p;
    s->sent_bytes = c->sent_b;
    s->dropped_pkts = c->drop_p;
    s->pauses = c->pauses;
    s->backlog_frames = 0;
    for (unsigned t = 0; t < VSW_NUM_TC; t++)
        s->backlog_frames += q->fifo[leaf * VSW_NUM_TC + t].cnt;
    s->paused = q->pause_mask[leaf] != 0;
    return 0;
}
