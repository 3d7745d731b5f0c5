/* qos_cfg.c - configuration of the link QoS scheduler (vswitch.h "Link
 * QoS"): the line, the classes (dcb ets / maxrate) and the rate tree
 * (devlink rate leaves and nodes), each change validated as a whole
 * before it replaces the running configuration.
 *
 * Every change is checked on a copy of the whole configuration (a few KB)
 * and only then installed, so a refused change leaves nothing behind and
 * the checks never depend on the order in which an operator sets things. */
#include "qos_internal.h"
#include <stdlib.h>
#include <string.h>

void qos_gcra_set(qos_gcra *g, uint64_t bps)
{
    g->on = bps != 0;
    if (g->on) {
        vsw_rate_factor(bps, &g->k, &g->sh);
        g->tau = vsw_rate_cost(QOS_BURST_BYTES * 8ull, g->k, g->sh);
    }
}

void vsw_qos_rate_default(vsw_qos_rate *r)
{
    memset(r, 0, sizeof(*r));
    r->tx_weight = 1;
}

static void ets_default(vsw_qos_ets *e)
{
    memset(e, 0, sizeof(*e));
    for (unsigned t = 0; t < VSW_NUM_TC; t++) {
        e->tsa[t] = VSW_TSA_ETS;
        e->bw[t] = t < 4 ? 12 : 13;
    }
}

/* ---- validation ---------------------------------------------------------- */

static unsigned node_ent(unsigned id) { return QOS_ROOT + id; }
static unsigned parent_ent(const vsw_qos_rate *r) { return QOS_ROOT + r->parent; }

/* Rates of one object, alone. */
static int check_rate(const char *what, unsigned id, const vsw_qos_rate *r, vsw_error *err)
{
    if (r->tx_weight < 1 || r->tx_weight > VSW_QOS_MAX_WEIGHT)
        return vsw_err(err, -EINVAL, -1, "%s %u: tx_weight %u not in 1..%u", what, id,
                       r->tx_weight, VSW_QOS_MAX_WEIGHT);
    if (r->tx_priority > VSW_QOS_MAX_PRIO)
        return vsw_err(err, -EINVAL, -1, "%s %u: tx_priority %u not in 0..%u", what, id,
                       r->tx_priority, VSW_QOS_MAX_PRIO);
    if (r->tx_share > VSW_QOS_MAX_RATE || r->tx_max > VSW_QOS_MAX_RATE)
        return vsw_err(err, -EINVAL, -1, "%s %u: rate above %llu bit/s", what, id,
                       (unsigned long long)VSW_QOS_MAX_RATE);
    if (r->tx_max && r->tx_share > r->tx_max)
        return vsw_err(err, -EINVAL, -1, "%s %u: tx_share %llu > tx_max %llu bit/s", what, id,
                       (unsigned long long)r->tx_share, (unsigned long long)r->tx_max);
    if (r->parent > VSW_QOS_MAX_NODES)
        return vsw_err(err, -EINVAL, -1, "%s %u: parent %u not a node id (1..%u, 0 = root)",
                       what, id, r->parent, VSW_QOS_MAX_NODES);
    return 0;
}

static const char *kind(const vsw_qos *q, unsigned e) { return qos_is_leaf(q, e) ? "leaf" : "node"; }
static unsigned ident(const vsw_qos *q, unsigned e) { return qos_is_leaf(q, e) ? e : e - QOS_ROOT; }

/* Parents exist, chains end at the root within VSW_QOS_MAX_DEPTH nodes. */
static int check_tree(const vsw_qos *q, const qos_conf *c, vsw_error *err)
{
    QOS_FOR_ENT(q, e) {
        if (!c->used[e] || e == QOS_ROOT)
            continue;
        unsigned p = parent_ent(&c->rate[e]);
        if (p != QOS_ROOT && !c->used[p])
            return vsw_err(err, -ENOENT, -1, "%s %u: parent node %u does not exist",
                           kind(q, e), ident(q, e), c->rate[e].parent);
        unsigned depth = qos_is_leaf(q, e) ? 0 : 1;
        for (unsigned x = p; x != QOS_ROOT; x = parent_ent(&c->rate[x])) {
            if (x == e || ++depth > VSW_QOS_MAX_DEPTH)
                return vsw_err(err, -ELOOP, -1, "%s %u: parent chain %s", kind(q, e),
                               ident(q, e), x == e ? "loops" : "deeper than 4 nodes");
        }
    }
    return 0;
}

/* Guarantees fit: what a subtree needs guaranteed (its own tx_share, or for
 * a node the sum of its children's needs if larger) must fit in its parent:
 * the parent's tx_share if it has one, else its tx_max, and at the root the
 * line rate.  Computed bottom-up in VSW_QOS_MAX_DEPTH + 1 passes (a pass
 * settles one more level). */
static int check_shares(const vsw_qos *q, const qos_conf *c, vsw_error *err)
{
    static const uint64_t big = UINT64_MAX / 4;
    uint64_t need[QOS_NENT], sum[QOS_NENT];
    QOS_FOR_ENT(q, e)
        need[e] = c->used[e] ? c->rate[e].tx_share : 0;
    for (unsigned pass = 0; pass <= VSW_QOS_MAX_DEPTH; pass++) {
        memset(sum, 0, sizeof(sum));
        QOS_FOR_ENT(q, e) {
            if (c->used[e] && e != QOS_ROOT) {
                unsigned p = parent_ent(&c->rate[e]);
                sum[p] = sum[p] + need[e] > big ? big : sum[p] + need[e];
            }
        }
        for (unsigned e = QOS_ROOT + 1; e < QOS_NENT; e++)
            if (c->used[e])
                need[e] = sum[e] > c->rate[e].tx_share ? sum[e] : c->rate[e].tx_share;
    }
    if (sum[QOS_ROOT] > c->line_bps)
        return vsw_err(err, -ERANGE, -1,
                       "guarantees oversubscribed: tx_share under the root sums to %llu bit/s, "
                       "more than the line rate %llu bit/s",
                       (unsigned long long)sum[QOS_ROOT], (unsigned long long)c->line_bps);
    for (unsigned e = QOS_ROOT + 1; e < QOS_NENT; e++) {
        if (!c->used[e])
            continue;
        const vsw_qos_rate *r = &c->rate[e];
        uint64_t cap = r->tx_share ? r->tx_share : r->tx_max;
        if (cap && sum[e] > cap)
            return vsw_err(err, -ERANGE, -1,
                           "guarantees oversubscribed: tx_share of node %u's children sums to "
                           "%llu bit/s, more than its %s %llu bit/s",
                           e - QOS_ROOT, (unsigned long long)sum[e],
                           r->tx_share ? "tx_share" : "tx_max", (unsigned long long)cap);
    }
    return 0;
}

static int check_ets(const vsw_qos_ets *e, vsw_error *err)
{
    unsigned sum = 0, nets = 0;
    for (unsigned t = 0; t < VSW_NUM_TC; t++) {
        if (e->tsa[t] > VSW_TSA_ETS)
            return vsw_err(err, -EINVAL, -1, "tc %u: unknown tsa %u", t, e->tsa[t]);
        if (e->bw[t] > 100)
            return vsw_err(err, -EINVAL, -1, "tc %u: bandwidth %u%% > 100", t, e->bw[t]);
        if (e->tsa[t] == VSW_TSA_STRICT && e->bw[t])
            return vsw_err(err, -EINVAL, -1, "tc %u: a strict class takes no bandwidth share", t);
        if (e->maxrate[t] > VSW_QOS_MAX_RATE)
            return vsw_err(err, -EINVAL, -1, "tc %u: maxrate above %llu bit/s", t,
                           (unsigned long long)VSW_QOS_MAX_RATE);
        if (e->tsa[t] == VSW_TSA_ETS) {
            nets++;
            sum += e->bw[t];
        }
    }
    if (nets && sum != 100)
        return vsw_err(err, -EINVAL, -1, "ETS bandwidth shares sum to %u%%, not 100", sum);
    return 0;
}

static int check_all(const vsw_qos *q, const qos_conf *c, vsw_error *err)
{
    if (c->line_bps < VSW_QOS_MIN_RATE || c->line_bps > VSW_QOS_MAX_RATE)
        return vsw_err(err, -EINVAL, -1, "line rate %llu bit/s not in %u..%llu",
                       (unsigned long long)c->line_bps, VSW_QOS_MIN_RATE,
                       (unsigned long long)VSW_QOS_MAX_RATE);
    if (c->overhead > 64)
        return vsw_err(err, -EINVAL, -1, "wire overhead %u bytes > 64", c->overhead);
    QOS_FOR_ENT(q, e) {
        if (c->used[e] && e != QOS_ROOT) {
            int rc = check_rate(kind(q, e), ident(q, e), &c->rate[e], err);
            if (rc)
                return rc;
        }
    }
    int rc = check_tree(q, c, err);
    if (!rc)
        rc = check_shares(q, c, err);
    if (!rc)
        rc = check_ets(&c->ets, err);
    return rc;
}

/* Validate a candidate configuration and install it. */
static int install(vsw_qos *q, const qos_conf *c, vsw_error *err)
{
    int rc = check_all(q, c, err);
    if (rc)
        return rc;
    q->conf = *c;
    qos_apply(q);
    return 0;
}

/* ---- derived state ------------------------------------------------------- */

static vsw_u128 lag(const vsw_qos *q, uint32_t weight)
{
    return ((vsw_u128)2 * q->lim.max_frame << 32) / weight;
}

void qos_apply(vsw_qos *q)
{
    const qos_conf *c = &q->conf;
    uint16_t count[QOS_NENT] = {0};

    qos_gcra_set(&q->line, c->line_bps);
    for (unsigned t = 0; t < VSW_NUM_TC; t++) {
        qos_gcra_set(&q->tc_max[t], c->ets.maxrate[t]);
        q->tc_weight[t] = c->ets.tsa[t] == VSW_TSA_ETS ? c->ets.bw[t] : 0;
    }
    /* children lists, by counting sort on the parent */
    QOS_FOR_ENT(q, e) {
        qos_ent *x = &q->ent[e];
        x->parent = QOS_NONE;
        x->nkids = 0;
        if (!c->used[e] || e == QOS_ROOT)
            continue;
        x->parent = (uint16_t)parent_ent(&c->rate[e]);
        x->weight = c->rate[e].tx_weight;
        x->prio = (uint8_t)c->rate[e].tx_priority;
        qos_gcra_set(&x->max, c->rate[e].tx_max);
        qos_gcra_set(&x->share, c->rate[e].tx_share);
        count[x->parent]++;
    }
    q->ent[QOS_ROOT].weight = 1;
    unsigned off = 0;
    QOS_FOR_ENT(q, e) {
        q->ent[e].kid0 = (uint16_t)off;
        off += count[e];
    }
    QOS_FOR_ENT(q, e) {
        qos_ent *x = &q->ent[e];
        if (x->parent != QOS_NONE) {
            qos_ent *p = &q->ent[x->parent];
            q->kids[p->kid0 + p->nkids++] = (uint16_t)e;
        }
    }
    /* backlog counts along the (possibly new) paths */
    QOS_FOR_ENT(q, e)
        memset(q->ent[e].backlog, 0, sizeof(q->ent[e].backlog));
    for (unsigned l = 0; l < q->nleaves; l++) {
        for (unsigned t = 0; t < VSW_NUM_TC; t++) {
            uint32_t n = q->fifo[l * VSW_NUM_TC + t].cnt;
            for (unsigned e = l, d = 0; n && e != QOS_NONE && d <= VSW_QOS_MAX_DEPTH + 1;
                 e = q->ent[e].parent, d++)
                q->ent[e].backlog[t] += n;
        }
    }
    /* a moved object joins its new siblings' fair-queueing order where they
     * are: not ahead of them (it would wait) nor far behind (it would take
     * the link until it caught up) */
    QOS_FOR_ENT(q, e) {
        qos_ent *x = &q->ent[e];
        if (x->parent == QOS_NONE)
            continue;
        const qos_ent *p = &q->ent[x->parent];
        for (unsigned t = 0; t < VSW_NUM_TC; t++) {
            if (!x->backlog[t])
                continue;
            vsw_u128 hi = p->vclock[t] + lag(q, x->weight);
            if (x->vt[t] < p->vclock[t])
                x->vt[t] = p->vclock[t];
            if (x->vt[t] > hi)
                x->vt[t] = hi;
        }
    }
}

/* ---- create / destroy ---------------------------------------------------- */

vsw_qos *vsw_qos_create(unsigned nleaves, const vsw_qos_limits *lim)
{
    if (nleaves == 0 || nleaves > VSW_QOS_MAX_LEAVES)
        return NULL;
    vsw_qos_limits l = lim ? *lim : (vsw_qos_limits){0};
    if (!l.max_frame)
        l.max_frame = 9216;
    if (!l.tc_frames)
        l.tc_frames = 2048;
    if (!l.tc_bytes)
        l.tc_bytes = 2u << 20;
    if (!l.leaf_frames)
        l.leaf_frames = 256;
    if (!l.leaf_bytes)
        l.leaf_bytes = 256u << 10;
    /* each bound must hold a few frames beyond the pause reserve */
    if (l.max_frame < 64 || l.max_frame > 65535 ||
        l.tc_frames < 2 * VSW_QOS_RESERVE || l.leaf_frames < 2 * VSW_QOS_RESERVE ||
        l.tc_frames > (1u << 20) || l.leaf_frames > (1u << 20) ||
        l.tc_bytes / 4 < l.max_frame || l.leaf_bytes / 4 < l.max_frame)
        return NULL;
    vsw_qos *q = calloc(1, sizeof(*q));
    if (!q)
        return NULL;
    q->nleaves = nleaves;
    q->lim = l;
    q->fifo = calloc((size_t)nleaves * VSW_NUM_TC, sizeof(*q->fifo));
    q->pause_mask = calloc(nleaves, 1);
    q->lc = calloc(nleaves, sizeof(*q->lc));
    if (!q->fifo || !q->pause_mask || !q->lc) {
        vsw_qos_destroy(q);
        return NULL;
    }
    /* every entity starts outside the tree; the unused leaf slots stay so
     * (qos_apply and the walks skip them, QOS_FOR_ENT) */
    for (unsigned e = 0; e < QOS_NENT; e++)
        q->ent[e].parent = QOS_NONE;
    for (unsigned e = 0; e < nleaves; e++) {
        q->conf.used[e] = 1;
        vsw_qos_rate_default(&q->conf.rate[e]);
    }
    ets_default(&q->conf.ets);
    q->conf.line_bps = 10000000000ull;
    q->conf.overhead = 24;
    qos_apply(q);
    return q;
}

void vsw_qos_destroy(vsw_qos *q)
{
    if (!q)
        return;
    if (q->fifo)
        for (size_t i = 0; i < (size_t)q->nleaves * VSW_NUM_TC; i++)
            free(q->fifo[i].s);
    free(q->fifo);
    free(q->pause_mask);
    free(q->lc);
    free(q);
}

/* ---- configuration calls ------------------------------------------------- */

int vsw_qos_set_line(vsw_qos *q, uint64_t rate_bps, uint32_t overhead, vsw_error *err)
{
    qos_conf c = q->conf;
    c.line_bps = rate_bps;
    c.overhead = overhead;
    return install(q, &c, err);
}

void vsw_qos_get_line(const vsw_qos *q, uint64_t *rate_bps, uint32_t *overhead)
{
    *rate_bps = q->conf.line_bps;
    *overhead = q->conf.overhead;
}

static int node_id_ok(unsigned node, vsw_error *err)
{
    if (node < 1 || node > VSW_QOS_MAX_NODES)
        return vsw_err(err, -EINVAL, -1, "node id %u not in 1..%u", node, VSW_QOS_MAX_NODES);
    return 0;
}

int vsw_qos_node_add(vsw_qos *q, unsigned node, const vsw_qos_rate *r, vsw_error *err)
{
    if (!r)
        return vsw_err(err, -EINVAL, -1, "node %u: no rate given", node);
    int rc = node_id_ok(node, err);
    if (rc)
        return rc;
    if (q->conf.used[node_ent(node)])
        return vsw_err(err, -EEXIST, -1, "node %u exists", node);
    qos_conf c = q->conf;
    c.used[node_ent(node)] = 1;
    c.rate[node_ent(node)] = *r;
    rc = install(q, &c, err);
    if (!rc) {
        /* a fresh node starts with fresh buckets and tags */
        qos_ent *x = &q->ent[node_ent(node)];
        x->max_tat = x->share_tat = 0;
        memset(x->vt, 0, sizeof(x->vt));
        memset(x->vclock, 0, sizeof(x->vclock));
    }
    return rc;
}

int vsw_qos_node_set(vsw_qos *q, unsigned node, const vsw_qos_rate *r, vsw_error *err)
{
    if (!r)
        return vsw_err(err, -EINVAL, -1, "node %u: no rate given", node);
    int rc = node_id_ok(node, err);
    if (rc)
        return rc;
    if (!q->conf.used[node_ent(node)])
        return vsw_err(err, -ENOENT, -1, "node %u does not exist", node);
    qos_conf c = q->conf;
    c.rate[node_ent(node)] = *r;
    return install(q, &c, err);
}

int vsw_qos_node_del(vsw_qos *q, unsigned node, vsw_error *err)
{
    int rc = node_id_ok(node, err);
    if (rc)
        return rc;
    unsigned n = node_ent(node);
    if (!q->conf.used[n])
        return vsw_err(err, -ENOENT, -1, "node %u does not exist", node);
    QOS_FOR_ENT(q, e)
        if (q->conf.used[e] && e != QOS_ROOT && parent_ent(&q->conf.rate[e]) == n)
            return vsw_err(err, -EBUSY, -1, "node %u has children (%s %u)", node, kind(q, e),
                           ident(q, e));
    qos_conf c = q->conf;
    c.used[n] = 0;
    vsw_qos_rate_default(&c.rate[n]);
    return install(q, &c, err);
}

int vsw_qos_node_get(const vsw_qos *q, unsigned node, vsw_qos_rate *r)
{
    if (node < 1 || node > VSW_QOS_MAX_NODES || !q->conf.used[node_ent(node)])
        return -ENOENT;
    *r = q->conf.rate[node_ent(node)];
    return 0;
}

int vsw_qos_leaf_set(vsw_qos *q, unsigned leaf, const vsw_qos_rate *r, vsw_error *err)
{
    if (!r || leaf >= q->nleaves)
        return vsw_err(err, -EINVAL, -1, "leaf %u not in 0..%u", leaf, q->nleaves - 1);
    qos_conf c = q->conf;
    c.rate[leaf] = *r;
    return install(q, &c, err);
}

int vsw_qos_leaf_get(const vsw_qos *q, unsigned leaf, vsw_qos_rate *r)
{
    if (leaf >= q->nleaves)
        return -EINVAL;
    *r = q->conf.rate[leaf];
    return 0;
}

int vsw_qos_ets_set(vsw_qos *q, const vsw_qos_ets *e, vsw_error *err)
{
    if (!e)
        return vsw_err(err, -EINVAL, -1, "no ETS configuration");
    qos_conf c = q->conf;
    c.ets = *e;
    return install(q, &c, err);
}

void vsw_qos_ets_get(const vsw_qos *q, vsw_qos_ets *e)
{
    *e = q->conf.ets;
}
