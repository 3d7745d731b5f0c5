/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rnic_wq.c - the data path: doorbells in BAR4 pages (ownership checked,
 * work only recorded), WQEs read from the guest's SQ/RQ rings in the run
 * call and posted to the engine, and the engine's CQEs written into the
 * guest's CQ rings (owner byte last, overflow judged against the consumer
 * count in the CQ control block, arming -> VFW_EQE_COMP).
 *
 * The engine's wr_id is the WQE's ring index (mod 65536); the guest's
 * wr_id is kept in a per-QP shadow array by ring slot, so nothing the
 * guest rewrites in its ring after the doorbell changes a completion.
 */
#include <errno.h>
#include <stdlib.h>
#include "rnic_internal.h"

static struct rnic_qp *qp_of(struct rnic_fn *fs, uint32_t id)
{
    return id >= 1 && id <= VFW_RDMA_HW_QP ? fs->qp[id] : NULL;
}
static struct rnic_cq *cq_of(struct rnic_fn *fs, uint32_t id)
{
    return id >= 1 && id <= VFW_RDMA_HW_CQ ? fs->cq[id] : NULL;
}

void rnic_qp_free(struct rnic_fn *fs, uint32_t id)
{
    struct rnic_qp *q = qp_of(fs, id);
    if (!q)
        return;
    if (q->conn && q->conn <= VFW_RDMA_HW_CONN &&
        fs->conn[q->conn].qp == id)
        fs->conn[q->conn].qp = 0;
    rnic_ring_free(&q->sq);
    rnic_ring_free(&q->rq);
    free(q->sq_wrid);
    free(q->rq_wrid);
    free(q);
    fs->qp[id] = NULL;
}

void rnic_cq_free(struct rnic_fn *fs, uint32_t id)
{
    struct rnic_cq *c = cq_of(fs, id);
    if (!c)
        return;
    rnic_ring_free(&c->ring);
    free(c);
    fs->cq[id] = NULL;
}

/* ---- doorbells ----------------------------------------------------------*/
void vfw_rnic_doorbell(struct vfw_rnic *r, unsigned fn, uint64_t offset,
                       uint64_t val, unsigned size)
{
    struct rnic_fn *fs = rnic_fn_get(r, fn, false);
    if (!fs)
        return;          /* RDMA never touched: nothing to ring */
    if (size != 4 || offset >= VFW_DB_BAR_SIZE || (offset & 3)) {
        rnic_stat(fs, VFW_RSTAT_DB_BAD);
        return;
    }
    uint32_t v = (uint32_t)val;
    uint16_t page = (uint16_t)(offset / VFW_DB_PAGE_SIZE);
    uint32_t reg = (uint32_t)(offset % VFW_DB_PAGE_SIZE);
    uint32_t id = v & VFW_DB_ID_MASK;
    if (reg == VFW_DB_SQ || reg == VFW_DB_RQ) {
        struct rnic_qp *q = qp_of(fs, id);
        if (!q) {
            rnic_stat(fs, VFW_RSTAT_DB_BAD);
            return;
        }
        if (q->db_page != page) {
            rnic_stat(fs, VFW_RSTAT_DB_REFUSED);
            return;
        }
        uint16_t pi = (uint16_t)(v >> VFW_DB_PI_SHIFT);
        bool sq = reg == VFW_DB_SQ;
        uint16_t ci = sq ? q->sq_ci : q->rq_ci;
        uint32_t depth = sq ? q->sq_depth : q->rq_depth;
        if ((uint16_t)(pi - ci) > depth) {
            rnic_stat(fs, VFW_RSTAT_DB_BAD);
            return;
        }
        if (sq)
            q->sq_pi = pi;
        else
            q->rq_pi = pi;
    } else if (reg == VFW_DB_CQ) {
        struct rnic_cq *c = cq_of(fs, id);
        if (!c || (v & ~(VFW_DB_ID_MASK | VFW_DB_CQ_ARM_NEXT |
                         VFW_DB_CQ_ARM_SOLICITED))) {
            rnic_stat(fs, VFW_RSTAT_DB_BAD);
            return;
        }
        if (c->db_page != page) {
            rnic_stat(fs, VFW_RSTAT_DB_REFUSED);
            return;
        }
        /* arming is a flag, applied at once: the next CQE written checks
         * it (no ring access happens here) */
        if (v & VFW_DB_CQ_ARM_NEXT)
            c->arm = 1;
        else if (v & VFW_DB_CQ_ARM_SOLICITED)
            c->arm = c->arm == 1 ? 1 : 2;
        return;
    } else {
        rnic_stat(fs, VFW_RSTAT_DB_BAD);
        return;
    }
    fs->db_pending = true;
    rnic_kick(fs);
}

/* ---- CQEs ---------------------------------------------------------------*/
static void cq_error(struct rnic_fn *fs, uint32_t cq_id, struct rnic_cq *c)
{
    if (c->error)
        return;
    c->error = true;
    c->error_pending = true;
    fs->cq_err_pending = true;
    struct vfw_eqe ev = { .type = VFW_EQE_CQ_ERROR, .obj = cq_id };
    rnic_eq_post(fs, &ev, NULL, 0);
}

static void cqe_write(struct rnic_fn *fs, uint32_t cq_id,
                      struct vfw_cqe_hw *hw)
{
    struct rnic_cq *c = cq_of(fs, cq_id);
    if (!c || c->error || fs->resetting)
        return;
    if (c->prod - c->cons_seen >= c->depth) {
        uint8_t b[4];
        if (rnic_ring_read(fs, &c->ring, (uint64_t)c->depth * VFW_CQE_SIZE,
                           b, 4)) {
            cq_error(fs, cq_id, c);
            return;
        }
        c->cons_seen = vfw_ld_le32(b);
        if (c->prod - c->cons_seen >= c->depth) {
            rnic_stat(fs, VFW_RSTAT_CQ_OVERFLOW);
            cq_error(fs, cq_id, c);
            return;
        }
    }
    uint64_t off = (uint64_t)(c->prod & (c->depth - 1)) * VFW_CQE_SIZE;
    hw->owner = (uint8_t)(((c->prod / c->depth) & 1) ^ 1);
    /* the owner byte last: the process polls it */
    if (rnic_ring_write(fs, &c->ring, off, hw, VFW_CQE_SIZE - 1) ||
        rnic_ring_write(fs, &c->ring, off + VFW_CQE_SIZE - 1, &hw->owner, 1)) {
        cq_error(fs, cq_id, c);
        return;
    }
    c->prod++;
    if (c->arm == 1 || (c->arm == 2 && ((hw->flags & VFW_CQE_F_SOLICITED) ||
                                        hw->status != VFW_CQE_S_SUCCESS))) {
        c->arm = 0;
        struct vfw_eqe ev = { .type = VFW_EQE_COMP, .obj = cq_id };
        rnic_eq_post(fs, &ev, NULL, 0);
    }
}

void rnic_cqe_hook(void *opaque, uint32_t cq_id, const struct vfw_cqe *c)
{
    struct rnic_fn *fs = opaque;
    /* a completion cannot wait: charged, a debt if need be; the engine's
     * flushes, the one source of many at once, ask e_work_left first */
    rnic_work_charge(fs, 1);
    struct rnic_qp *q = qp_of(fs, c->qp_id);
    if (!q)
        return;
    bool recv = c->opcode == VFW_WC_RECV;
    uint16_t idx = (uint16_t)c->wr_id;
    struct vfw_cqe_hw hw = {
        .wr_id = recv ? q->rq_wrid[idx & (q->rq_depth - 1)]
                      : q->sq_wrid[idx & (q->sq_depth - 1)],
        .qp = c->qp_id, .byte_len = c->byte_len,
        .inv_stag = c->invalidated_stag, .wqe_idx = idx,
        .opcode = c->opcode, .status = c->status, .flags = c->flags,
    };
    cqe_write(fs, cq_id, &hw);
    /* a retired WQE frees a slot in the engine: blocked posts may go */
    if (q->sq_ci != q->sq_pi || q->rq_ci != q->rq_pi)
        fs->db_pending = true;
}

/* The QPs of CQs that failed go to ERROR: one pass over the CQs, one over
 * the QPs (each asks about its own two CQs), not every QP for every
 * failed CQ. A CQ that fails during the pass (the flushes write CQEs) is
 * the next call's: error_now marks this pass's. */
void rnic_cq_errors(struct rnic_fn *fs)
{
    if (!fs->cq_err_pending)
        return;
    fs->cq_err_pending = false;
    for (uint32_t i = 1; i <= fs->cq_hi; i++) {
        struct rnic_cq *c = fs->cq[i];
        if (c) {
            c->error_now = c->error_pending;
            c->error_pending = false;
        }
    }
    for (uint32_t k = 1; k <= fs->qp_hi; k++) {
        struct rnic_qp *q = fs->qp[k];
        if (!q)
            continue;
        struct rnic_cq *s = cq_of(fs, q->send_cq), *r = cq_of(fs, q->recv_cq);
        if ((s && s->error_now) || (r && r->error_now))
            vfw_qp_modify(fs->e, k, VFW_QPS_ERROR);
    }
    for (uint32_t i = 1; i <= fs->cq_hi; i++)
        if (fs->cq[i])
            fs->cq[i]->error_now = false;
}

/* ---- WQEs ---------------------------------------------------------------*/
/* A malformed WQE is fatal for its QP (as on silicon): it completes with
 * LOC_QP_OP_ERR and the QP goes to ERROR, which flushes the rest. */
static void wqe_fatal(struct rnic_fn *fs, uint32_t qp_id, struct rnic_qp *q,
                      bool sq, uint16_t idx, uint64_t wr_id)
{
    struct vfw_cqe_hw hw = {
        .wr_id = wr_id, .qp = qp_id, .wqe_idx = idx,
        .opcode = sq ? VFW_CQE_OP_SEND : VFW_CQE_OP_RECV,
        .status = VFW_CQE_S_LOC_QP_OP_ERR,
    };
    cqe_write(fs, sq ? q->send_cq : q->recv_cq, &hw);
    vfw_qp_modify(fs->e, qp_id, VFW_QPS_ERROR);
}

/* The WQE's SGEs (num_sge already checked against VFW_RDMA_MAX_SGE) as the
 * engine's, for sends and receives alike. */
static void copy_sges(const struct vfw_wqe *w, struct vfw_sge *sge)
{
    for (unsigned i = 0; i < w->num_sge; i++) {
        sge[i].stag = w->u.sge[i].lkey;
        sge[i].len = w->u.sge[i].len;
        sge[i].addr = w->u.sge[i].addr;
    }
}

static int to_send_wr(const struct vfw_wqe *w, struct vfw_send_wr *wr)
{
    const uint8_t fl_all = VFW_WQE_F_SIGNALED | VFW_WQE_F_FENCE |
                           VFW_WQE_F_SOLICITED | VFW_WQE_F_INLINE;
    if (w->rsvd0 || (w->flags & ~fl_all) || w->num_sge > VFW_RDMA_MAX_SGE)
        return -EINVAL;
    bool se = w->flags & VFW_WQE_F_SOLICITED;
    bool inl = w->flags & VFW_WQE_F_INLINE;
    switch (w->opcode) {
    case VFW_WQE_OP_SEND:
        wr->opcode = se ? VFW_WR_SEND_SE : VFW_WR_SEND;
        break;
    case VFW_WQE_OP_SEND_INV:
        wr->opcode = se ? VFW_WR_SEND_SE_INV : VFW_WR_SEND_INV;
        wr->invalidate_stag = w->inv_stag;
        break;
    case VFW_WQE_OP_RDMA_WRITE:
        if (se)
            return -EINVAL;
        wr->opcode = VFW_WR_RDMA_WRITE;
        break;
    case VFW_WQE_OP_RDMA_READ:
        if (se || inl || w->num_sge != 1)
            return -EINVAL;
        wr->opcode = VFW_WR_RDMA_READ;
        break;
    default:
        return -EINVAL;
    }
    if (w->opcode != VFW_WQE_OP_SEND_INV && w->inv_stag)
        return -EINVAL;
    if (w->opcode == VFW_WQE_OP_RDMA_WRITE || w->opcode == VFW_WQE_OP_RDMA_READ) {
        wr->remote_stag = w->remote_stag;
        wr->remote_addr = w->remote_addr;
    } else if (w->remote_stag || w->remote_addr) {
        return -EINVAL;
    }
    if (w->flags & VFW_WQE_F_SIGNALED)
        wr->flags |= VFW_WR_F_SIGNALED;
    if (w->flags & VFW_WQE_F_FENCE)
        wr->flags |= VFW_WR_F_FENCE;
    if (inl) {
        if (w->num_sge || w->inline_len > VFW_RDMA_MAX_INLINE)
            return -EINVAL;
        wr->flags |= VFW_WR_F_INLINE;
        wr->inline_len = w->inline_len;
        memcpy(wr->inline_data, w->u.inline_data, w->inline_len);
        return 0;
    }
    if (w->inline_len)
        return -EINVAL;
    wr->num_sge = w->num_sge;
    copy_sges(w, wr->sge);
    return 0;
}

static int to_recv_wr(const struct vfw_wqe *w, struct vfw_recv_wr *wr)
{
    if (w->opcode || w->flags || w->rsvd0 || w->inline_len || w->inv_stag ||
        w->remote_stag || w->remote_addr || w->num_sge > VFW_RDMA_MAX_SGE)
        return -EINVAL;
    wr->num_sge = w->num_sge;
    copy_sges(w, wr->sge);
    return 0;
}

/* Take WQEs of one queue while the run's budget lasts, a unit each.
 * Returns true if it stopped with work left that a later run can do
 * (budget), false when done or blocked (blocked work resumes on a CQE, an
 * ESTABLISHED event or a doorbell). */
static bool qp_queue(struct rnic_fn *fs, uint32_t id, struct rnic_qp *q,
                     bool sq)
{
    while ((sq ? q->sq_ci != q->sq_pi : q->rq_ci != q->rq_pi)) {
        if (fs->work_left <= 0)
            return true;
        rnic_work_charge(fs, 1);
        uint16_t idx = sq ? q->sq_ci : q->rq_ci;
        uint32_t depth = sq ? q->sq_depth : q->rq_depth;
        struct vfw_wqe w;
        if (rnic_ring_read(fs, sq ? &q->sq : &q->rq,
                           (uint64_t)(idx & (depth - 1)) * VFW_WQE_SIZE,
                           &w, sizeof(w))) {
            /* the ring is gone from the function's memory: fatal */
            vfw_qp_modify(fs->e, id, VFW_QPS_ERROR);
            if (sq) q->sq_ci = q->sq_pi; else q->rq_ci = q->rq_pi;
            return false;
        }
        int rc;
        if (sq) {
            struct vfw_send_wr wr;
            memset(&wr, 0, sizeof(wr));
            rc = to_send_wr(&w, &wr);
            if (rc == 0) {
                wr.wr_id = idx;
                q->sq_wrid[idx & (depth - 1)] = w.wr_id;
                rc = vfw_post_send(fs->e, id, &wr);
            }
        } else {
            struct vfw_recv_wr wr;
            memset(&wr, 0, sizeof(wr));
            rc = to_recv_wr(&w, &wr);
            if (rc == 0) {
                wr.wr_id = idx;
                q->rq_wrid[idx & (depth - 1)] = w.wr_id;
                rc = vfw_post_recv(fs->e, id, &wr);
            }
        }
        if (rc == -ENOMEM)
            return false;      /* engine queue full: retry after a CQE */
        if (rc == -ENOTCONN) {
            struct vfw_qp_info in;
            if (vfw_qp_query(fs->e, id, &in) == 0 &&
                in.state == VFW_QPS_IDLE)
                return false;  /* not connected yet: wait, keep the WQE */
            rc = 0;            /* ERROR: the engine flushed it (CQE) */
        }
        if (sq) q->sq_ci++; else q->rq_ci++;
        if (rc) {
            rnic_stat(fs, VFW_RSTAT_PROT_ERR);
            wqe_fatal(fs, id, q, sq, idx, w.wr_id);
        }
    }
    return false;
}

/* A QP just moved to ERROR: every WR the driver rang in completes with
 * WR_FLUSH_ERR, also those whose WQEs the device has not fetched yet
 * (their doorbell came in the same batch as the command, or the engine's
 * queue was full). Fetched on an ERROR QP, each is flushed as it is
 * posted. How many there are is the guest's choice (32 QPs of depth 4096
 * are 262,144 WQEs), so the drain takes what the run's budget allows and
 * later runs fetch the rest (rnic_wq_run); it is owed until then: a
 * QP_DESTROY behind the command waits for it, or the ring would be
 * forgotten and a process would wait for completions that never come. */
void rnic_qp_drain(struct rnic_fn *fs, uint32_t id)
{
    struct rnic_qp *q = qp_of(fs, id);
    if (!q)
        return;
    q->drain_owed = true;
    rnic_qp_drain_step(fs, id);
}

/* Go on with an owed drain within the run's budget; true when every WR
 * rung in has completed (fetched, and flushed by the engine too). */
bool rnic_qp_drain_step(struct rnic_fn *fs, uint32_t id)
{
    struct rnic_qp *q = qp_of(fs, id);
    if (!q || !q->drain_owed)
        return true;
    qp_queue(fs, id, q, false);
    qp_queue(fs, id, q, true);
    if (q->sq_ci != q->sq_pi || q->rq_ci != q->rq_pi) {
        fs->db_pending = true;      /* the rest: rnic_wq_run, later runs */
        return false;
    }
    struct vfw_qp_info in;
    if (vfw_qp_query(fs->e, id, &in) == 0 && (in.sq_outstanding ||
                                              in.rq_posted))
        return false;               /* the engine's flush: vfw_engine_poll */
    q->drain_owed = false;
    return true;
}

void rnic_wq_run(struct rnic_fn *fs, bool *more)
{
    if (!fs->db_pending)
        return;
    fs->db_pending = false;
    /* round robin: the QP after the one where the budget ran out comes
     * first, so one deep ring cannot starve the others */
    uint32_t n = fs->qp_hi;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = 1 + (fs->wq_next + k) % n;
        struct rnic_qp *q = fs->qp[i];
        if (!q)
            continue;
        /* receives first: a Send posted in the same batch may be answered
         * by the peer before the next run */
        bool left = qp_queue(fs, i, q, false);
        left |= qp_queue(fs, i, q, true);
        if (left) {                 /* out of budget: the rest waits */
            fs->db_pending = true;
            *more = true;
            fs->wq_next = i % n;
            return;
        }
    }
}
