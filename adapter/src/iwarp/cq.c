/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cq.c - completion queues: a bounded ring of plain CQEs in engine memory.
 * The device model polls them out and writes them to the guest's ring.
 */
#include <errno.h>
#include <stdlib.h>
#include "vfw_iwarp.h"

static struct vfw_cq *cq_get(struct vfw_engine *e, uint32_t id)
{
    if (!e || id < 1 || id > e->max_cq || !e->cq[id].used)
        return NULL;
    return &e->cq[id];
}

int vfw_cq_create(struct vfw_engine *e, uint32_t depth, uint32_t *cq_id)
{
    if (!e || !cq_id || depth < 1 || depth > VFW_MAX_CQ_DEPTH)
        return -EINVAL;
    for (uint32_t i = 1; i <= e->max_cq; i++) {
        struct vfw_cq *c = &e->cq[i];
        if (c->used)
            continue;
        c->ring = calloc(depth, sizeof(*c->ring));
        if (!c->ring)
            return -ENOMEM;
        if (i > e->cq_hi)
            e->cq_hi = i;
        c->used = true;
        c->depth = depth;
        c->head = c->count = c->refs = 0;
        c->armed = 0;
        c->overflows = 0;
        *cq_id = i;
        return 0;
    }
    return -ENOSPC;
}

int vfw_cq_destroy(struct vfw_engine *e, uint32_t cq_id)
{
    struct vfw_cq *c = cq_get(e, cq_id);
    if (!c)
        return -ENOENT;
    if (c->refs)
        return -EBUSY;
    free(c->ring);
    c->ring = NULL;
    c->used = false;
    return 0;
}

void vfw_cq_push(struct vfw_engine *e, uint32_t cq_id, const struct vfw_cqe *q)
{
    struct vfw_cq *c = cq_get(e, cq_id);
    if (!c)
        return;
    if (e->ops.cqe) {
        /* 2.0 device: the CQ ring lives in function memory and the device
         * writes it (and judges overrun and arming) there. */
        e->ops.cqe(e->ops.opaque, cq_id, q);
        return;
    }
    if (c->count >= c->depth) {
        c->overflows++;          /* CQ overrun: the CQE is lost, counted */
        return;
    }
    c->ring[(c->head + c->count) % c->depth] = *q;
    c->count++;
    bool fire = c->armed == 1 ||
                (c->armed == 2 && ((q->flags & VFW_WC_F_SOLICITED) ||
                                   q->status != VFW_WC_SUCCESS));
    if (fire) {
        c->armed = 0;
        if (e->ops.cq_notify)
            e->ops.cq_notify(e->ops.opaque, cq_id);
    }
}

int vfw_cq_poll(struct vfw_engine *e, uint32_t cq_id, struct vfw_cqe *out,
                int n)
{
    struct vfw_cq *c = cq_get(e, cq_id);
    if (!c)
        return -ENOENT;
    if (n < 0 || (n > 0 && !out))
        return -EINVAL;
    int k = 0;
    while (k < n && c->count) {
        out[k++] = c->ring[c->head];
        c->head = (c->head + 1) % c->depth;
        c->count--;
    }
    return k;
}

int vfw_cq_arm(struct vfw_engine *e, uint32_t cq_id, int solicited_only)
{
    struct vfw_cq *c = cq_get(e, cq_id);
    if (!c)
        return -ENOENT;
    c->armed = solicited_only ? 2 : 1;
    return 0;
}
