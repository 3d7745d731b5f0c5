/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qp.c - reliable-connected QPs: creation, the iWARP state machine
 * (IDLE, RTS, CLOSING, TERMINATE, ERROR; RFC 5040 sec. 6.9 / verbs), work
 * request validation, in-order completion of the SQ and flush on error.
 */
#include <errno.h>
#include <stdlib.h>
#include "vfw_iwarp.h"

static uint32_t pow2_at_least(uint32_t v)
{
    uint32_t r = 1;
    while (r < v)
        r <<= 1;
    return r;
}

int vfw_qp_create(struct vfw_engine *e, const struct vfw_qp_attr *a,
                  uint32_t *qp_id)
{
    if (!e || !a || !qp_id)
        return -EINVAL;
    if (!vfw_pd_valid(e, a->pd_id))
        return -ENOENT;
    if (a->send_cq < 1 || a->send_cq > e->max_cq || !e->cq[a->send_cq].used ||
        a->recv_cq < 1 || a->recv_cq > e->max_cq || !e->cq[a->recv_cq].used)
        return -ENOENT;
    if (a->sq_depth < 1 || a->sq_depth > VFW_MAX_QP_DEPTH ||
        a->rq_depth < 1 || a->rq_depth > VFW_MAX_QP_DEPTH ||
        a->ord > VFW_MAX_ORD_IRD || a->ird > VFW_MAX_ORD_IRD ||
        a->max_sge < 1 || a->max_sge > VFW_MAX_SGE)
        return -EINVAL;
    for (uint32_t i = 1; i <= e->max_qp; i++) {
        struct vfw_qp *q = e->qp[i];
        if (q && q->used)
            continue;
        if (!q) {
            q = calloc(1, sizeof(*q));
            if (!q)
                return -ENOMEM;
            e->qp[i] = q;
        }
        if (i > e->qp_hi)
            e->qp_hi = i;
        free(q->sq);
        free(q->rq);
        free(q->txbuf);
        memset(q, 0, sizeof(*q));
        /* rings are powers of two so that free-running 32-bit indices
         * map to slots consistently across wrap-around */
        q->sq_ring = pow2_at_least(a->sq_depth);
        q->rq_ring = pow2_at_least(a->rq_depth);
        q->sq = calloc(q->sq_ring, sizeof(*q->sq));
        q->rq = calloc(q->rq_ring, sizeof(*q->rq));
        if (!q->sq || !q->rq) {
            free(q->sq);
            free(q->rq);
            q->sq = NULL;
            q->rq = NULL;
            return -ENOMEM;
        }
        q->used = true;
        q->attr = *a;
        q->state = VFW_QPS_IDLE;
        q->ord = a->ord;
        q->ird = a->ird;
        for (int k = 0; k < 3; k++)
            q->tx_msn[k] = q->rx_msn[k] = 1;
        e->pd[a->pd_id].refs++;
        e->cq[a->send_cq].refs++;
        e->cq[a->recv_cq].refs++;
        *qp_id = i;
        return 0;
    }
    return -ENOSPC;
}

int vfw_qp_destroy(struct vfw_engine *e, uint32_t qp_id)
{
    struct vfw_qp *q = vfw_qp_get(e, qp_id);
    if (!q)
        return -ENOENT;
    struct vfw_cep *c = vfw_cep_get(e, q->cep);
    if (c) {
        c->llp->abort(c->conn);   /* no upcall follows an abort */
        vfw_cep_release(e, q->cep);
    }
    e->pd[q->attr.pd_id].refs--;
    e->cq[q->attr.send_cq].refs--;
    e->cq[q->attr.recv_cq].refs--;
    free(q->sq);
    free(q->rq);
    free(q->txbuf);
    q->sq = NULL;
    q->rq = NULL;
    q->txbuf = NULL;
    q->used = false;
    /* an owed flush ends here: destroying forgets the WRs (an owner that
     * wants their completions waits for vfw_qp_query's counts to reach 0) */
    q->flush_owed = q->idle_when_flushed = false;
    return 0;
}

/* What one connection leaves in a QP that the next must not inherit: an
 * IDLE QP may have carried a connection that closed gracefully (cm.c's
 * vfw_llp_closed), and the peer of the new one starts every DDP queue's
 * MSN at 1 (RFC 5041 sec. 5.1), knows none of the old stream's Reads or
 * Terminate, and sends no RTR it was not asked for. Queued work requests
 * stay: a process may post before it connects. */
static void qp_stream_reset(struct vfw_qp *qp)
{
    for (int k = 0; k < 3; k++)
        qp->tx_msn[k] = qp->rx_msn[k] = 1;
    qp->ord_head = qp->ord_cnt = 0;
    qp->ird_head = qp->ird_cnt = 0;
    qp->cur_active = false;
    qp->tx_len = 0;
    qp->tx_last = false;
    qp->rx_active = false;
    qp->rx_cap = qp->rx_len = 0;
    qp->tx_gate = false;
    qp->rtr_expect = false;
    qp->rtr_send = 0;
    qp->tx_hold_until = 0;
    qp->rtr_read_pending = false;
    qp->term_pending = false;
    qp->term_len = 0;
    memset(&qp->term_sent, 0, sizeof(qp->term_sent));
    memset(&qp->term_rcvd, 0, sizeof(qp->term_rcvd));
    qp->close_after_tx = false;
}

/* Bind a QP to an established CEP and size the FPDU path to its MSS: the
 * start of every connection, active (vfw_connect) and passive
 * (vfw_accept), so the QP's stream state starts here too. */
int vfw_qp_bind(struct vfw_engine *e, struct vfw_qp *qp, uint32_t cep_id,
                uint16_t mss)
{
    (void)e;
    if (mss < 128)
        return -EINVAL;
    uint8_t *txbuf = malloc(mss);
    if (!txbuf)
        return -ENOMEM;
    free(qp->txbuf);
    qp->txbuf = txbuf;
    qp_stream_reset(qp);
    qp->cep = cep_id;
    qp->mss = mss;
    qp->mulpdu = vfw_mpa_mulpdu(mss);
    return 0;
}

static void sq_cqe(struct vfw_engine *e, struct vfw_qp *qp, uint32_t qp_id,
                   struct vfw_swqe *w)
{
    static const uint8_t wc_op[] = {
        [VFW_WR_SEND] = VFW_WC_SEND, [VFW_WR_SEND_INV] = VFW_WC_SEND,
        [VFW_WR_SEND_SE] = VFW_WC_SEND, [VFW_WR_SEND_SE_INV] = VFW_WC_SEND,
        [VFW_WR_RDMA_WRITE] = VFW_WC_RDMA_WRITE,
        [VFW_WR_RDMA_READ] = VFW_WC_RDMA_READ,
    };
    struct vfw_cqe c = {
        .wr_id = w->wr.wr_id, .qp_id = qp_id, .byte_len = w->byte_len,
        .opcode = w->wr.opcode <= VFW_WR_RDMA_READ ? wc_op[w->wr.opcode]
                                                   : VFW_WC_SEND,
        .status = w->status,
    };
    vfw_cq_push(e, qp->attr.send_cq, &c);
}

/* Complete finished SQ WQEs in posting order. */
void vfw_qp_retire(struct vfw_engine *e, struct vfw_qp *qp, uint32_t qp_id)
{
    while (qp->sq_head != qp->sq_next) {
        struct vfw_swqe *w = &qp->sq[qp->sq_head % qp->sq_ring];
        if (w->state != SWQE_DONE)
            break;
        if ((w->wr.flags & VFW_WR_F_SIGNALED) || w->status != VFW_WC_SUCCESS)
            sq_cqe(e, qp, qp_id, w);
        qp->sq_head++;
    }
}

static bool owner_lets_work(struct vfw_engine *e)
{
    return !e->ops.work_left || e->ops.work_left(e->ops.opaque);
}

/* Complete the queued WRs from the heads on, one at a time while the
 * owner's budget lasts: SQ WQEs keep an error status already set, the rest
 * get WR_FLUSH_ERR; every receive WQE is flushed. True when both queues
 * are empty. */
static bool flush_queues(struct vfw_engine *e, struct vfw_qp *qp,
                         uint32_t qp_id)
{
    /* nothing of the SQ goes out any more: the transmit cursor jumps to
     * the tail, so head <= next <= tail holds while a flush is partial */
    qp->sq_next = qp->sq_tail;
    while (qp->sq_head != qp->sq_tail) {
        if (!owner_lets_work(e))
            return false;
        struct vfw_swqe *w = &qp->sq[qp->sq_head % qp->sq_ring];
        if (w->state != SWQE_DONE) {
            w->status = VFW_WC_WR_FLUSH_ERR;
            e->st.flushed++;
        }
        if (w->state != SWQE_DONE || w->status != VFW_WC_SUCCESS ||
            (w->wr.flags & VFW_WR_F_SIGNALED))
            sq_cqe(e, qp, qp_id, w);
        qp->sq_head++;
    }
    while (qp->rq_head != qp->rq_tail) {
        if (!owner_lets_work(e))
            return false;
        struct vfw_recv_wr *r = &qp->rq[qp->rq_head % qp->rq_ring];
        struct vfw_cqe c = { .wr_id = r->wr_id, .qp_id = qp_id,
                             .opcode = VFW_WC_RECV,
                             .status = VFW_WC_WR_FLUSH_ERR };
        vfw_cq_push(e, qp->attr.recv_cq, &c);
        qp->rq_head++;
        e->st.flushed++;
    }
    return true;
}

static void flush_done(struct vfw_qp *qp)
{
    qp->flush_owed = false;
    if (qp->idle_when_flushed) {
        qp->idle_when_flushed = false;
        qp->state = VFW_QPS_IDLE;
    }
}

/* Flush every outstanding WR, as far as the owner's budget goes now; the
 * rest is owed (vfw_qp_flush_resume from vfw_engine_poll), in order: WRs
 * posted meanwhile queue behind and are flushed after. */
void vfw_qp_flush(struct vfw_engine *e, struct vfw_qp *qp, uint32_t qp_id)
{
    /* a half-received message completes with a flush error */
    if (qp->rx_active) {
        struct vfw_cqe c = { .wr_id = qp->rx_wqe.wr_id, .qp_id = qp_id,
                             .opcode = VFW_WC_RECV,
                             .status = VFW_WC_WR_FLUSH_ERR };
        vfw_cq_push(e, qp->attr.recv_cq, &c);
        qp->rx_active = false;
        e->st.flushed++;
    }
    qp->ord_cnt = qp->ird_cnt = 0;
    qp->cur_active = false;
    qp->tx_len = 0;
    qp->term_pending = false;
    qp->rtr_send = 0;
    qp->tx_hold_until = 0;
    if (flush_queues(e, qp, qp_id)) {
        flush_done(qp);
    } else {
        qp->flush_owed = true;
        e->flush_owed = true;
    }
}

/* Go on with an owed flush; true when nothing of it is left. */
bool vfw_qp_flush_resume(struct vfw_engine *e, struct vfw_qp *qp,
                         uint32_t qp_id)
{
    if (!qp->flush_owed)
        return true;
    if (!flush_queues(e, qp, qp_id))
        return false;
    flush_done(qp);
    return true;
}

/* The QP's connection ended gracefully: flush and be IDLE, at once or,
 * if the owner's budget stopped the flush, when it is done (until then
 * the QP keeps its state, so no new connection takes it half-flushed). */
void vfw_qp_close_idle(struct vfw_engine *e, struct vfw_qp *qp,
                       uint32_t qp_id)
{
    vfw_qp_flush(e, qp, qp_id);
    if (qp->flush_owed)
        qp->idle_when_flushed = true;
    else
        qp->state = VFW_QPS_IDLE;
}

/* Move to ERROR and flush. abort_llp: reset the connection now. */
void vfw_qp_error(struct vfw_engine *e, struct vfw_qp *qp, uint32_t qp_id,
                  bool abort_llp)
{
    qp->state = VFW_QPS_ERROR;
    qp->idle_when_flushed = false;    /* ERROR is where it ends now */
    if (abort_llp) {
        struct vfw_cep *c = vfw_cep_get(e, qp->cep);
        if (c) {
            uint32_t cep = qp->cep;
            c->llp->abort(c->conn);
            vfw_cep_release(e, cep);
        }
    }
    vfw_qp_flush(e, qp, qp_id);
}

int vfw_qp_modify(struct vfw_engine *e, uint32_t qp_id, enum vfw_qp_state to)
{
    struct vfw_qp *qp = vfw_qp_get(e, qp_id);
    if (!qp)
        return -ENOENT;
    switch (to) {
    case VFW_QPS_ERROR:
        vfw_qp_error(e, qp, qp_id, true);
        return 0;
    case VFW_QPS_CLOSING:
        if (qp->state != VFW_QPS_RTS)
            return -EINVAL;
        qp->state = VFW_QPS_CLOSING;
        qp->close_after_tx = true;
        vfw_rdmap_tx(e, qp_id);
        return 0;
    case VFW_QPS_IDLE:
        /* Reset a QP that is not connected (after ERROR or close). */
        if (qp->cep)
            return -EBUSY;
        qp_stream_reset(qp);
        vfw_qp_close_idle(e, qp, qp_id);
        return 0;
    default:
        return -EINVAL;   /* RTS and TERMINATE are entered by the engine */
    }
}

int vfw_qp_query(const struct vfw_engine *e, uint32_t qp_id,
                 struct vfw_qp_info *out)
{
    if (!out)
        return -EINVAL;
    const struct vfw_qp *qp = vfw_qp_get((struct vfw_engine *)e, qp_id);
    if (!qp)
        return -ENOENT;
    memset(out, 0, sizeof(*out));
    out->state = qp->state;
    out->ord = qp->ord;
    out->ird = qp->ird;
    out->mss = qp->mss;
    out->mulpdu = qp->mulpdu;
    out->term_sent = qp->term_sent;
    out->term_rcvd = qp->term_rcvd;
    out->sq_outstanding = qp->sq_tail - qp->sq_head;
    out->rq_posted = qp->rq_tail - qp->rq_head;
    return 0;
}

static int check_sges(const struct vfw_sge *s, unsigned n, unsigned max,
                      uint64_t *total)
{
    if (n > max)
        return -EINVAL;
    uint64_t t = 0;
    for (unsigned i = 0; i < n; i++)
        t += s[i].len;
    if (t > VFW_MAX_MSG)
        return -EINVAL;
    *total = t;
    return 0;
}

int vfw_post_send(struct vfw_engine *e, uint32_t qp_id,
                  const struct vfw_send_wr *wr)
{
    struct vfw_qp *qp = vfw_qp_get(e, qp_id);
    if (!qp)
        return -ENOENT;
    if (!wr || wr->opcode > VFW_WR_RDMA_READ ||
        (wr->flags & ~(VFW_WR_F_SIGNALED | VFW_WR_F_FENCE | VFW_WR_F_INLINE)))
        return -EINVAL;
    uint64_t total;
    if (wr->flags & VFW_WR_F_INLINE) {
        /* the payload travels in the WR copy: no lkey, no SGEs (num_sge is
         * ignored); an RDMA Read has no local payload to inline */
        if (wr->opcode == VFW_WR_RDMA_READ || wr->inline_len > VFW_MAX_INLINE)
            return -EINVAL;
        total = wr->inline_len;
    } else if (check_sges(wr->sge, wr->num_sge, qp->attr.max_sge, &total)) {
        return -EINVAL;
    }
    if (wr->opcode == VFW_WR_RDMA_READ && wr->num_sge != 1)
        return -EINVAL;     /* iWARP: the Read sink is one tagged buffer */
    if (qp->sq_tail - qp->sq_head >= qp->attr.sq_depth)
        return -ENOMEM;
    struct vfw_swqe *w = &qp->sq[qp->sq_tail % qp->sq_ring];
    memset(w, 0, sizeof(*w));
    w->wr = *wr;
    w->byte_len = (uint32_t)total;
    qp->sq_tail++;
    if (qp->state == VFW_QPS_ERROR) {
        vfw_qp_flush(e, qp, qp_id);
        return 0;
    }
    if (qp->state == VFW_QPS_RTS)
        vfw_rdmap_tx(e, qp_id);
    return 0;
}

int vfw_post_recv(struct vfw_engine *e, uint32_t qp_id,
                  const struct vfw_recv_wr *wr)
{
    struct vfw_qp *qp = vfw_qp_get(e, qp_id);
    if (!qp)
        return -ENOENT;
    uint64_t total;
    if (!wr || check_sges(wr->sge, wr->num_sge, qp->attr.max_sge, &total))
        return -EINVAL;
    if (qp->rq_tail - qp->rq_head >= qp->attr.rq_depth)
        return -ENOMEM;
    qp->rq[qp->rq_tail % qp->rq_ring] = *wr;
    qp->rq_tail++;
    if (qp->state == VFW_QPS_ERROR)
        vfw_qp_flush(e, qp, qp_id);
    return 0;
}
