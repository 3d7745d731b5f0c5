/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * engine.c - one iWARP engine per adapter function: object tables, the ops
 * table, timers and statistics. The CEPs in the table and everything about
 * connections are cm.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include "vfw_iwarp.h"

#define DEF_MAX_PD  64
#define DEF_MAX_MR  1024
#define DEF_MAX_CQ  64
#define DEF_MAX_QP  64
#define LIM_OBJ     65536

static uint32_t lim(uint32_t v, uint32_t def)
{
    if (v == 0)
        return def;
    return v > LIM_OBJ ? LIM_OBJ : v;
}

struct vfw_engine *vfw_engine_new(const struct vfw_engine_ops *ops,
                                  const struct vfw_engine_config *cfg)
{
    if (!ops || !ops->dma_read || !ops->dma_write || !ops->now_ns || !cfg)
        return NULL;
    struct vfw_engine *e = calloc(1, sizeof(*e));
    if (!e)
        return NULL;
    e->ops = *ops;
    e->func_id = cfg->func_id;
    e->max_pd = lim(cfg->max_pd, DEF_MAX_PD);
    e->max_mr = lim(cfg->max_mr, DEF_MAX_MR);
    if (e->max_mr > 0xffffff)
        e->max_mr = 0xffffff;
    e->max_cq = lim(cfg->max_cq, DEF_MAX_CQ);
    e->max_qp = lim(cfg->max_qp, DEF_MAX_QP);
    e->max_cep = lim(cfg->max_cep, 2 * e->max_qp);
    e->max_mr_pages = cfg->max_mr_pages ? cfg->max_mr_pages
                                        : VFW_DEF_MR_PAGES;
    e->initiator_settle_ns = cfg->initiator_settle_ns;
    e->pd = calloc(e->max_pd + 1, sizeof(*e->pd));
    e->mr = calloc(e->max_mr + 1, sizeof(*e->mr));
    e->cq = calloc(e->max_cq + 1, sizeof(*e->cq));
    e->qp = calloc(e->max_qp + 1, sizeof(*e->qp));
    e->cep = calloc(e->max_cep + 1, sizeof(*e->cep));
    if (!e->pd || !e->mr || !e->cq || !e->qp || !e->cep) {
        vfw_engine_free(e);
        return NULL;
    }
    return e;
}

/* Grow one table from old + 1 to n + 1 entries, the new ones zero (free);
 * on failure the old table stays as it is. */
static int grow_tab(void **tab, uint32_t old, uint32_t n, size_t sz)
{
    if (n <= old)
        return 0;
    uint8_t *p = realloc(*tab, ((size_t)n + 1) * sz);
    if (!p)
        return -ENOMEM;
    memset(p + ((size_t)old + 1) * sz, 0, (size_t)(n - old) * sz);
    *tab = p;
    return 0;
}

int vfw_engine_grow(struct vfw_engine *e, const struct vfw_engine_config *cfg)
{
    if (!e || !cfg)
        return -EINVAL;
    /* Only ever larger: ids in use stay valid and keep their slots. The
     * tables move, so no caller may hold an entry's address across this
     * (none does: the engine is not running when its owner grows it). */
    uint32_t pd = cfg->max_pd ? lim(cfg->max_pd, 0) : e->max_pd;
    uint32_t mr = cfg->max_mr ? lim(cfg->max_mr, 0) : e->max_mr;
    uint32_t cq = cfg->max_cq ? lim(cfg->max_cq, 0) : e->max_cq;
    uint32_t qp = cfg->max_qp ? lim(cfg->max_qp, 0) : e->max_qp;
    uint32_t cep = cfg->max_cep ? lim(cfg->max_cep, 0) : e->max_cep;
    if (mr > 0xffffff)
        mr = 0xffffff;
    if (grow_tab((void **)&e->pd, e->max_pd, pd, sizeof(*e->pd)))
        return -ENOMEM;
    if (pd > e->max_pd)
        e->max_pd = pd;
    if (grow_tab((void **)&e->mr, e->max_mr, mr, sizeof(*e->mr)))
        return -ENOMEM;
    if (mr > e->max_mr)
        e->max_mr = mr;
    if (grow_tab((void **)&e->cq, e->max_cq, cq, sizeof(*e->cq)))
        return -ENOMEM;
    if (cq > e->max_cq)
        e->max_cq = cq;
    if (grow_tab((void **)&e->qp, e->max_qp, qp, sizeof(*e->qp)))
        return -ENOMEM;
    if (qp > e->max_qp)
        e->max_qp = qp;
    if (grow_tab((void **)&e->cep, e->max_cep, cep, sizeof(*e->cep)))
        return -ENOMEM;
    if (cep > e->max_cep)
        e->max_cep = cep;
    return 0;
}

void vfw_engine_free(struct vfw_engine *e)
{
    if (!e)
        return;
    if (e->cep)
        vfw_cep_free_all(e);
    if (e->qp) {
        for (uint32_t i = 1; i <= e->qp_hi; i++) {
            struct vfw_qp *q = e->qp[i];
            if (!q)
                continue;
            free(q->sq);
            free(q->rq);
            free(q->txbuf);
            free(q);
        }
    }
    if (e->mr && e->pd)
        vfw_mr_free_all(e);
    if (e->cq)
        for (uint32_t i = 1; i <= e->cq_hi; i++)
            free(e->cq[i].ring);
    free(e->pd);
    free(e->mr);
    free(e->cq);
    free(e->qp);
    free(e->cep);
    free(e);
}

struct vfw_qp *vfw_qp_get(struct vfw_engine *e, uint32_t id)
{
    if (!e || id < 1 || id > e->max_qp || !e->qp[id] || !e->qp[id]->used)
        return NULL;
    return e->qp[id];
}

/* Release QPs whose initiator settle time is over (bounded by qp_hi). */
static void release_held(struct vfw_engine *e, uint64_t now)
{
    uint32_t still = 0;
    for (uint32_t i = 1; i <= e->qp_hi && e->held; i++) {
        struct vfw_qp *qp = e->qp[i];
        if (!qp || !qp->tx_hold_until)
            continue;
        if (now < qp->tx_hold_until) {
            still++;
            continue;
        }
        qp->tx_hold_until = 0;
        vfw_rdmap_tx(e, i);
    }
    e->held = still;
}

/* Go on with the flushes the owner's budget stopped, in QP order, while
 * it lasts (each step asks ops->work_left; bounded by qp_hi). */
static void resume_flushes(struct vfw_engine *e)
{
    bool owed = false;
    for (uint32_t i = 1; i <= e->qp_hi; i++) {
        struct vfw_qp *qp = vfw_qp_get(e, i);
        if (qp && qp->flush_owed && !vfw_qp_flush_resume(e, qp, i))
            owed = true;
    }
    e->flush_owed = owed;
}

void vfw_engine_poll(struct vfw_engine *e)
{
    if (!e)
        return;
    uint64_t now = e->ops.now_ns(e->ops.opaque);
    vfw_cm_poll(e, now);
    if (e->held)
        release_held(e, now);
    if (e->flush_owed)
        resume_flushes(e);
}

bool vfw_engine_busy(const struct vfw_engine *e)
{
    return e && e->flush_owed;
}

uint64_t vfw_engine_next_ns(struct vfw_engine *e)
{
    uint64_t next = UINT64_MAX;
    if (!e || !e->held)
        return next;
    for (uint32_t i = 1; i <= e->qp_hi; i++)
        if (e->qp[i] && e->qp[i]->tx_hold_until &&
            e->qp[i]->tx_hold_until < next)
            next = e->qp[i]->tx_hold_until;
    return next;
}

void vfw_engine_stats(const struct vfw_engine *e, struct vfw_engine_stats *st)
{
    if (e && st)
        *st = e->st;
}
