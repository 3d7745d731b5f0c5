/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rdmap.c - RDMAP (RFC 5040): Send (with Invalidate / Solicited Event),
 * RDMA Write, RDMA Read Request/Response with ORD/IRD limits, Terminate;
 * the transmit scheduler (Terminate > RTR > Read Responses > SQ) and the
 * receive side of every opcode with its protection checks. The mapping of
 * failures to Terminate layer/type/code is tabled in docs/adapter-iwarp.md.
 */
#include <errno.h>
#include "vfw_iwarp.h"

#define RTR_STAG 0x100u   /* non-zero STag in zero-length RTRs (siw interop) */

static void term_tagged_err(struct vfw_engine *e, struct vfw_qp *qp,
                            uint32_t qp_id, enum vfw_mr_err err,
                            const uint8_t *u, uint32_t len)
{
    uint8_t layer = VFW_TERM_LAYER_DDP, et = DDP_ET_TAGGED, ec;
    switch (err) {
    case MR_INV_STAG: ec = DDP_EC_T_INV_STAG; break;
    case MR_PD:       ec = DDP_EC_T_STAG_NOT_ASSOC; break;
    case MR_BOUNDS:   ec = DDP_EC_T_BOUNDS; break;
    case MR_WRAP:     ec = DDP_EC_T_TO_WRAP; break;
    default:
        layer = VFW_TERM_LAYER_RDMAP;
        et = RDMAP_ET_REMOTE_PROT;
        ec = RDMAP_EC_ACCESS;
        break;
    }
    e->st.prot_errors++;
    vfw_rdmap_terminate(e, qp, qp_id, layer, et, ec, u, DDP_TAGGED_HDR, len);
}

static void term_readreq_err(struct vfw_engine *e, struct vfw_qp *qp,
                             uint32_t qp_id, enum vfw_mr_err err,
                             const uint8_t *u, uint32_t len)
{
    uint8_t ec;
    switch (err) {
    case MR_INV_STAG: ec = RDMAP_EC_INV_STAG; break;
    case MR_PD:       ec = RDMAP_EC_STAG_NOT_ASSOC; break;
    case MR_BOUNDS:   ec = RDMAP_EC_BOUNDS; break;
    case MR_WRAP:     ec = RDMAP_EC_TO_WRAP; break;
    default:          ec = RDMAP_EC_ACCESS; break;
    }
    e->st.prot_errors++;
    vfw_rdmap_terminate(e, qp, qp_id, VFW_TERM_LAYER_RDMAP,
                        RDMAP_ET_REMOTE_PROT, ec, u,
                        DDP_UNTAGGED_HDR + RDMAP_READ_REQ_LEN, len);
}

static void term_untagged(struct vfw_engine *e, struct vfw_qp *qp,
                          uint32_t qp_id, uint8_t ec, const uint8_t *u,
                          uint32_t len)
{
    vfw_rdmap_terminate(e, qp, qp_id, VFW_TERM_LAYER_DDP, DDP_ET_UNTAGGED, ec,
                        u, DDP_UNTAGGED_HDR, len);
}

static void term_op(struct vfw_engine *e, struct vfw_qp *qp, uint32_t qp_id,
                    uint8_t ec, const uint8_t *u, uint32_t hl, uint32_t len)
{
    vfw_rdmap_terminate(e, qp, qp_id, VFW_TERM_LAYER_RDMAP, RDMAP_ET_REMOTE_OP,
                        ec, u, hl, len);
}

/*
 * Queue a Terminate (RFC 5040 sec. 5.3 / 7): the offending DDP header (and
 * RDMAP Read Request header) is echoed. The QP enters TERMINATE now; once
 * the Terminate is handed to the LLP it closes and the QP goes to ERROR.
 */
void vfw_rdmap_terminate(struct vfw_engine *e, struct vfw_qp *qp,
                         uint32_t qp_id, uint8_t layer, uint8_t etype,
                         uint8_t ecode, const uint8_t *hdr, uint32_t hdr_len,
                         uint32_t seg_len)
{
    if (qp->state == VFW_QPS_TERMINATE || qp->state == VFW_QPS_ERROR ||
        qp->state == VFW_QPS_IDLE)
        return;
    uint8_t *t = qp->term_msg;
    memset(t, 0, sizeof(qp->term_msg));
    t[0] = (uint8_t)(layer << 4 | (etype & 0xf));
    t[1] = ecode;
    uint32_t n = TERM_HDR_LEN;
    qp->term_sent = (struct vfw_term_info){ .valid = 1, .layer = layer,
                                            .etype = etype, .ecode = ecode };
    if (hdr && hdr_len >= DDP_TAGGED_HDR) {
        uint32_t hl = (hdr[0] & DDP_F_TAGGED) ? DDP_TAGGED_HDR
                                              : DDP_UNTAGGED_HDR;
        bool rhdr = hdr_len >= DDP_UNTAGGED_HDR + RDMAP_READ_REQ_LEN &&
                    !(hdr[0] & DDP_F_TAGGED) &&
                    (hdr[1] & 0xf) == VFW_RDMAP_READ_REQ;
        if (hdr_len >= hl) {
            t[2] = TERM_F_M | TERM_F_D | (rhdr ? TERM_F_R : 0);
            vfw_st_be16(t + n, (uint16_t)(seg_len > 0xffff ? 0xffff : seg_len));
            n += 2;
            memcpy(t + n, hdr, hl);
            n += hl;
            if (rhdr) {
                memcpy(t + n, hdr + hl, RDMAP_READ_REQ_LEN);
                n += RDMAP_READ_REQ_LEN;
            }
            qp->term_sent.opcode = hdr[1] & 0xf;
        }
    }
    qp->term_len = n;
    qp->term_pending = true;
    /* nothing more of the stream goes out: drop the message in progress
     * (and its built, not yet accepted FPDU); the Terminate is next */
    qp->cur_active = false;
    qp->tx_len = 0;
    qp->state = VFW_QPS_TERMINATE;
    e->st.terms_sent++;
    struct vfw_cep *c = vfw_cep_get(e, qp->cep);
    if (!c || c->close_called) {        /* nobody to tell: just fail */
        qp->term_pending = false;
        vfw_qp_error(e, qp, qp_id, false);
        return;
    }
    /* a half-received message will never complete */
    if (qp->rx_active) {
        struct vfw_cqe q = { .wr_id = qp->rx_wqe.wr_id, .qp_id = qp_id,
                             .opcode = VFW_WC_RECV,
                             .status = VFW_WC_GENERAL_ERR };
        vfw_cq_push(e, qp->attr.recv_cq, &q);
        qp->rx_active = false;
    }
    vfw_rdmap_tx(e, qp_id);
}

/* ---- receive ------------------------------------------------------------ */

/* Place a tagged payload (Write, Read Response): checked against the QP's PD,
 * the STag, bounds and REMOTE_WRITE before one byte moves; a violation or a
 * DMA fault terminates the QP with the RFC's error. 0 when placed. */
static int place_tagged(struct vfw_engine *e, struct vfw_qp *qp,
                        uint32_t qp_id, uint32_t stag, uint64_t to,
                        const uint8_t *p, uint32_t pl, const uint8_t *u,
                        uint32_t len)
{
    enum vfw_mr_err r = vfw_mr_check(e, qp->attr.pd_id, stag, to, pl,
                                     VFW_ACC_REMOTE_WRITE);
    if (r != MR_OK) {
        term_tagged_err(e, qp, qp_id, r, u, len);
        return -1;
    }
    if (vfw_mr_dma_write(e, stag, to, p, pl)) {
        vfw_rdmap_terminate(e, qp, qp_id, VFW_TERM_LAYER_RDMAP,
                            RDMAP_ET_LOCAL_CATA, 0, u, DDP_TAGGED_HDR, len);
        return -1;
    }
    e->st.rx_bytes += pl;
    return 0;
}

void vfw_rdmap_rx_tagged(struct vfw_engine *e, struct vfw_qp *qp,
                         uint32_t qp_id, const uint8_t *u, uint32_t len)
{
    uint8_t op = u[1] & 0xf;
    bool last = u[0] & DDP_F_LAST;
    uint32_t stag = vfw_ld_be32(u + 2);
    uint64_t to = vfw_ld_be64(u + 6);
    const uint8_t *p = u + DDP_TAGGED_HDR;
    uint32_t pl = len - DDP_TAGGED_HDR;

    if (op == VFW_RDMAP_WRITE) {
        if (pl)            /* zero-length Write: no STag validation */
            place_tagged(e, qp, qp_id, stag, to, p, pl, u, len);
        return;
    }
    if (op != VFW_RDMAP_READ_RESP) {
        term_op(e, qp, qp_id, RDMAP_EC_OPCODE, u, DDP_TAGGED_HDR, len);
        return;
    }
    if (qp->rtr_read_pending && stag == RTR_STAG && pl == 0 && last) {
        qp->rtr_read_pending = false;   /* the answer to our Read RTR; it
                                           precedes every other response */
        return;
    }
    if (qp->ord_cnt == 0) {
        term_op(e, qp, qp_id, RDMAP_EC_OPCODE, u, DDP_TAGGED_HDR, len);
        return;
    }
    struct vfw_ord_ent *o = &qp->ord_q[qp->ord_head % VFW_MAX_ORD_IRD];
    if (stag != o->sink_stag) {
        term_tagged_err(e, qp, qp_id, MR_INV_STAG, u, len);
        return;
    }
    uint64_t want_to = o->sink_to + o->placed;
    if (to != want_to || pl > o->len - o->placed) {
        term_tagged_err(e, qp, qp_id, MR_BOUNDS, u, len);
        return;
    }
    if (pl && place_tagged(e, qp, qp_id, stag, to, p, pl, u, len))
        return;
    o->placed += pl;
    if (!last)
        return;
    if (o->placed != o->len) {
        term_tagged_err(e, qp, qp_id, MR_BOUNDS, u, len);
        return;
    }
    struct vfw_swqe *w = &qp->sq[o->sq_idx % qp->sq_ring];
    w->state = SWQE_DONE;
    w->status = VFW_WC_SUCCESS;
    w->byte_len = o->len;
    qp->ord_head++;
    qp->ord_cnt--;
    vfw_qp_retire(e, qp, qp_id);
    vfw_rdmap_tx(e, qp_id);       /* an ORD slot opened */
}

/* Place `pl` bytes at message offset `mo` into the receive WQE's SGEs. */
static int place_untagged(struct vfw_engine *e, struct vfw_qp *qp,
                          uint32_t mo, const uint8_t *p, uint32_t pl)
{
    const struct vfw_recv_wr *r = &qp->rx_wqe;
    uint32_t pos = 0;
    for (unsigned i = 0; i < r->num_sge && pl; i++) {
        const struct vfw_sge *s = &r->sge[i];
        if (mo >= pos + s->len) {
            pos += s->len;
            continue;
        }
        uint32_t o = mo - pos;
        uint32_t chunk = s->len - o;
        if (chunk > pl)
            chunk = pl;
        if (vfw_mr_check(e, qp->attr.pd_id, s->stag, s->addr + o, chunk,
                         VFW_ACC_LOCAL_WRITE) != MR_OK) {
            e->st.prot_errors++;
            return -EACCES;
        }
        int rc = vfw_mr_dma_write(e, s->stag, s->addr + o, p, chunk);
        if (rc)
            return rc;
        p += chunk;
        pl -= chunk;
        mo += chunk;
        pos += s->len;
    }
    return pl ? -EINVAL : 0;
}

static void rx_recv_error(struct vfw_engine *e, struct vfw_qp *qp,
                          uint32_t qp_id, uint8_t status)
{
    struct vfw_cqe c = { .wr_id = qp->rx_wqe.wr_id, .qp_id = qp_id,
                         .opcode = VFW_WC_RECV, .status = status };
    vfw_cq_push(e, qp->attr.recv_cq, &c);
    qp->rx_active = false;
}

static void rx_send(struct vfw_engine *e, struct vfw_qp *qp, uint32_t qp_id,
                    const uint8_t *u, uint32_t len)
{
    uint8_t op = u[1] & 0xf;
    bool last = u[0] & DDP_F_LAST;
    uint32_t msn = vfw_ld_be32(u + 10), mo = vfw_ld_be32(u + 14);
    const uint8_t *p = u + DDP_UNTAGGED_HDR;
    uint32_t pl = len - DDP_UNTAGGED_HDR;

    if (op != VFW_RDMAP_SEND && op != VFW_RDMAP_SEND_INV &&
        op != VFW_RDMAP_SEND_SE && op != VFW_RDMAP_SEND_SE_INV) {
        term_op(e, qp, qp_id, RDMAP_EC_OPCODE, u, DDP_UNTAGGED_HDR, len);
        return;
    }
    if (msn != qp->rx_msn[DDP_QN_SEND]) {
        term_untagged(e, qp, qp_id, DDP_EC_U_MSN_RANGE, u, len);
        return;
    }
    bool inv = op == VFW_RDMAP_SEND_INV || op == VFW_RDMAP_SEND_SE_INV;
    uint32_t inv_stag = vfw_ld_be32(u + 2);
    /* only an STag of this stream's PD can be invalidated; refuse before
     * any byte of the message is placed */
    enum vfw_mr_err ie = inv ? vfw_mr_check(e, qp->attr.pd_id, inv_stag, 0,
                                            0, 0) : MR_OK;
    if (ie == MR_INV_STAG || ie == MR_PD) {
        if (qp->rx_active)
            rx_recv_error(e, qp, qp_id, VFW_WC_REM_INV_REQ_ERR);
        e->st.prot_errors++;
        vfw_rdmap_terminate(e, qp, qp_id, VFW_TERM_LAYER_RDMAP,
                            RDMAP_ET_REMOTE_PROT, RDMAP_EC_CANT_INVALIDATE, u,
                            DDP_UNTAGGED_HDR, len);
        return;
    }
    if (!qp->rx_active) {
        if (qp->rq_head == qp->rq_tail) {
            term_untagged(e, qp, qp_id, DDP_EC_U_NO_BUF, u, len);
            return;
        }
        qp->rx_wqe = qp->rq[qp->rq_head % qp->rq_ring];
        qp->rq_head++;
        qp->rx_active = true;
        qp->rx_len = 0;
        uint64_t cap = 0;
        for (unsigned i = 0; i < qp->rx_wqe.num_sge; i++)
            cap += qp->rx_wqe.sge[i].len;
        qp->rx_cap = (uint32_t)cap;       /* bounded at post_recv */
    }
    if (mo > qp->rx_cap || pl > qp->rx_cap - mo) {
        rx_recv_error(e, qp, qp_id, VFW_WC_LOC_LEN_ERR);
        term_untagged(e, qp, qp_id, DDP_EC_U_TOO_LONG, u, len);
        return;
    }
    int rc = place_untagged(e, qp, mo, p, pl);
    if (rc) {
        rx_recv_error(e, qp, qp_id, VFW_WC_LOC_PROT_ERR);
        vfw_rdmap_terminate(e, qp, qp_id, VFW_TERM_LAYER_RDMAP,
                            RDMAP_ET_LOCAL_CATA, 0, u, DDP_UNTAGGED_HDR, len);
        return;
    }
    e->st.rx_bytes += pl;
    if (mo + pl > qp->rx_len)
        qp->rx_len = mo + pl;
    if (!last)
        return;
    struct vfw_cqe c = { .wr_id = qp->rx_wqe.wr_id, .qp_id = qp_id,
                         .opcode = VFW_WC_RECV, .byte_len = mo + pl };
    if (op == VFW_RDMAP_SEND_SE || op == VFW_RDMAP_SEND_SE_INV)
        c.flags |= VFW_WC_F_SOLICITED;
    qp->rx_active = false;
    qp->rx_msn[DDP_QN_SEND]++;
    if (inv) {
        vfw_mr_invalidate(e, inv_stag);
        c.flags |= VFW_WC_F_WITH_INV;
        c.invalidated_stag = inv_stag;
    }
    vfw_cq_push(e, qp->attr.recv_cq, &c);
}

static void rx_read_req(struct vfw_engine *e, struct vfw_qp *qp,
                        uint32_t qp_id, const uint8_t *u, uint32_t len)
{
    uint8_t op = u[1] & 0xf;
    const uint8_t *p = u + DDP_UNTAGGED_HDR;
    if (op != VFW_RDMAP_READ_REQ) {
        term_op(e, qp, qp_id, RDMAP_EC_OPCODE, u, DDP_UNTAGGED_HDR, len);
        return;
    }
    if (!(u[0] & DDP_F_LAST) || vfw_ld_be32(u + 14) != 0) {
        term_untagged(e, qp, qp_id, DDP_EC_U_INV_MO, u, len);
        return;
    }
    if (vfw_ld_be32(u + 10) != qp->rx_msn[DDP_QN_READ]) {
        term_untagged(e, qp, qp_id, DDP_EC_U_MSN_RANGE, u, len);
        return;
    }
    if (len != DDP_UNTAGGED_HDR + RDMAP_READ_REQ_LEN) {
        term_op(e, qp, qp_id, RDMAP_EC_UNSPEC, u, DDP_UNTAGGED_HDR, len);
        return;
    }
    struct vfw_ird_ent r = {
        .sink_stag = vfw_ld_be32(p), .sink_to = vfw_ld_be64(p + 4),
        .len = vfw_ld_be32(p + 12), .src_stag = vfw_ld_be32(p + 16),
        .src_to = vfw_ld_be64(p + 20),
    };
    uint32_t limit = r.len ? qp->ird : VFW_MAX_ORD_IRD;  /* Read RTR */
    if (qp->ird_cnt >= limit) {
        term_op(e, qp, qp_id, RDMAP_EC_CATA_STREAM, u, len, len);
        return;
    }
    if (r.len) {
        enum vfw_mr_err err = r.len > VFW_MAX_MSG ? MR_BOUNDS :
            vfw_mr_check(e, qp->attr.pd_id, r.src_stag, r.src_to, r.len,
                         VFW_ACC_REMOTE_READ);
        if (err != MR_OK) {
            term_readreq_err(e, qp, qp_id, err, u, len);
            return;
        }
    }
    qp->ird_q[(qp->ird_head + qp->ird_cnt) % VFW_MAX_ORD_IRD] = r;
    qp->ird_cnt++;
    qp->rx_msn[DDP_QN_READ]++;
    vfw_rdmap_tx(e, qp_id);
}

static void rx_terminate(struct vfw_engine *e, struct vfw_qp *qp,
                         uint32_t qp_id, const uint8_t *u, uint32_t len)
{
    const uint8_t *p = u + DDP_UNTAGGED_HDR;
    uint32_t pl = len - DDP_UNTAGGED_HDR;
    if ((u[1] & 0xf) != VFW_RDMAP_TERMINATE) {
        term_op(e, qp, qp_id, RDMAP_EC_OPCODE, u, DDP_UNTAGGED_HDR, len);
        return;
    }
    e->st.terms_rcvd++;
    struct vfw_term_info t = { .valid = 1 };
    if (pl >= TERM_HDR_LEN) {
        t.layer = p[0] >> 4;
        t.etype = p[0] & 0xf;
        t.ecode = p[1];
        uint32_t hoff = TERM_HDR_LEN + ((p[2] & TERM_F_M) ? 2 : 0);
        if ((p[2] & TERM_F_D) && pl >= hoff + 2)
            t.opcode = p[hoff + 1] & 0xf;
    }
    qp->term_rcvd = t;
    /* The peer's error ends the stream. Blame the operation it names. */
    bool prot = (t.layer == VFW_TERM_LAYER_RDMAP &&
                 t.etype == RDMAP_ET_REMOTE_PROT) ||
                (t.layer == VFW_TERM_LAYER_DDP && t.etype == DDP_ET_TAGGED);
    uint8_t st = prot ? VFW_WC_REM_ACCESS_ERR : VFW_WC_REM_OP_ERR;
    if (t.opcode == VFW_RDMAP_READ_REQ && qp->ord_cnt) {
        struct vfw_ord_ent *o = &qp->ord_q[qp->ord_head % VFW_MAX_ORD_IRD];
        struct vfw_swqe *w = &qp->sq[o->sq_idx % qp->sq_ring];
        w->state = SWQE_DONE;
        w->status = st;
    } else if (qp->sq_head != qp->sq_next) {
        struct vfw_swqe *w = &qp->sq[qp->sq_head % qp->sq_ring];
        if (w->state == SWQE_ACTIVE) {
            w->state = SWQE_DONE;
            w->status = st;
        }
    }
    qp->state = VFW_QPS_TERMINATE;
    uint32_t cep_id = qp->cep;
    struct vfw_cep *c = vfw_cep_get(e, cep_id);
    vfw_qp_error(e, qp, qp_id, false);
    if (c && !c->close_called) {
        c->close_called = true;
        c->state = CEP_CLOSING;
        c->llp->close(c->conn);
    }
    vfw_cm_emit(e, VFW_CM_TERMINATE, cep_id, qp_id, -ECONNABORTED, NULL, 0);
}

void vfw_rdmap_rx_untagged(struct vfw_engine *e, struct vfw_qp *qp,
                           uint32_t qp_id, const uint8_t *u, uint32_t len)
{
    switch (vfw_ld_be32(u + 6)) {
    case DDP_QN_SEND:
        rx_send(e, qp, qp_id, u, len);
        break;
    case DDP_QN_READ:
        rx_read_req(e, qp, qp_id, u, len);
        break;
    case DDP_QN_TERM:
        rx_terminate(e, qp, qp_id, u, len);
        break;
    default:
        term_untagged(e, qp, qp_id, DDP_EC_U_INV_QN, u, len);
        break;
    }
}

/* ---- transmit ----------------------------------------------------------- */

static void local_sq_error(struct vfw_engine *e, struct vfw_qp *qp,
                           uint32_t qp_id, struct vfw_swqe *w, uint8_t status)
{
    w->state = SWQE_DONE;
    w->status = status;
    vfw_qp_retire(e, qp, qp_id);
    vfw_rdmap_terminate(e, qp, qp_id, VFW_TERM_LAYER_RDMAP,
                        RDMAP_ET_LOCAL_CATA, 0, NULL, 0, 0);
}

static void untagged(struct vfw_txmsg *m, struct vfw_qp *qp, uint32_t qn,
                     uint8_t op)
{
    m->tagged = false;
    m->qn = qn;
    m->msn = qp->tx_msn[qn]++;
    m->opcode = op;
}

/* Choose the next message to transmit. */
static bool pick(struct vfw_engine *e, struct vfw_qp *qp, uint32_t qp_id)
{
    struct vfw_txmsg *m = &qp->cur;
    memset(m, 0, sizeof(*m));
    if (qp->term_pending) {
        qp->term_pending = false;
        m->kind = TX_TERM;
        untagged(m, qp, DDP_QN_TERM, VFW_RDMAP_TERMINATE);
        memcpy(m->small, qp->term_msg, qp->term_len);
        m->total = qp->term_len;
        return true;
    }
    if (qp->state != VFW_QPS_RTS && qp->state != VFW_QPS_CLOSING)
        return false;
    if (qp->tx_hold_until)      /* initiator settle: vfw_engine_poll */
        return false;
    if (qp->rtr_send) {
        m->kind = TX_RTR;
        if (qp->rtr_send == VFW_RTR_WRITE) {
            m->tagged = true;
            m->opcode = VFW_RDMAP_WRITE;
            m->stag = RTR_STAG;
        } else if (qp->rtr_send == VFW_RTR_SEND) {
            untagged(m, qp, DDP_QN_SEND, VFW_RDMAP_SEND);
        } else {
            untagged(m, qp, DDP_QN_READ, VFW_RDMAP_READ_REQ);
            vfw_st_be32(m->small, RTR_STAG);
            vfw_st_be32(m->small + 16, RTR_STAG);
            m->total = RDMAP_READ_REQ_LEN;
            qp->rtr_read_pending = true;
        }
        qp->rtr_send = 0;
        return true;
    }
    if (qp->tx_gate)
        return false;
    if (qp->ird_cnt) {
        struct vfw_ird_ent *r = &qp->ird_q[qp->ird_head % VFW_MAX_ORD_IRD];
        m->kind = TX_READ_RESP;
        m->tagged = true;
        m->opcode = VFW_RDMAP_READ_RESP;
        m->stag = r->sink_stag;
        m->to = r->sink_to;
        m->total = r->len;
        m->src_stag = r->src_stag;
        m->src_to = r->src_to;
        return true;
    }
    /* bounded: each pass consumes a WQE or returns */
    for (uint32_t guard = 0; qp->sq_next != qp->sq_tail &&
                             guard < qp->attr.sq_depth; guard++) {
        uint32_t idx = qp->sq_next;
        struct vfw_swqe *w = &qp->sq[idx % qp->sq_ring];
        const struct vfw_send_wr *wr = &w->wr;
        if ((wr->flags & VFW_WR_F_FENCE) && qp->ord_cnt)
            return false;
        if (wr->opcode == VFW_WR_RDMA_READ) {
            if (qp->ord == 0) {
                qp->sq_next++;
                local_sq_error(e, qp, qp_id, w, VFW_WC_LOC_QP_OP_ERR);
                return qp->term_pending ? pick(e, qp, qp_id) : false;
            }
            if (qp->ord_cnt >= qp->ord)
                return false;
            const struct vfw_sge *s = &wr->sge[0];
            if (vfw_mr_check(e, qp->attr.pd_id, s->stag, s->addr, s->len,
                             VFW_ACC_LOCAL_WRITE | VFW_ACC_REMOTE_WRITE) !=
                MR_OK && s->len) {
                e->st.prot_errors++;
                qp->sq_next++;
                local_sq_error(e, qp, qp_id, w, VFW_WC_LOC_PROT_ERR);
                return qp->term_pending ? pick(e, qp, qp_id) : false;
            }
            m->kind = TX_READ_REQ;
            m->sq_idx = idx;
            untagged(m, qp, DDP_QN_READ, VFW_RDMAP_READ_REQ);
            vfw_st_be32(m->small, s->stag);
            vfw_st_be64(m->small + 4, s->addr);
            vfw_st_be32(m->small + 12, s->len);
            vfw_st_be32(m->small + 16, wr->remote_stag);
            vfw_st_be64(m->small + 20, wr->remote_addr);
            m->total = RDMAP_READ_REQ_LEN;
            struct vfw_ord_ent *o =
                &qp->ord_q[(qp->ord_head + qp->ord_cnt) % VFW_MAX_ORD_IRD];
            *o = (struct vfw_ord_ent){ .sq_idx = idx, .sink_stag = s->stag,
                                       .sink_to = s->addr, .len = s->len };
            qp->ord_cnt++;
            w->state = SWQE_ACTIVE;
            qp->sq_next++;
            return true;
        }
        /* every local SGE is checked before any byte moves */
        bool ok = true;
        bool inl = wr->flags & VFW_WR_F_INLINE;   /* no lkey to check */
        for (unsigned i = 0; !inl && i < wr->num_sge; i++)
            if (wr->sge[i].len &&
                vfw_mr_check(e, qp->attr.pd_id, wr->sge[i].stag,
                             wr->sge[i].addr, wr->sge[i].len, 0) != MR_OK)
                ok = false;
        if (!ok) {
            e->st.prot_errors++;
            qp->sq_next++;
            local_sq_error(e, qp, qp_id, w, VFW_WC_LOC_PROT_ERR);
            return qp->term_pending ? pick(e, qp, qp_id) : false;
        }
        m->kind = TX_SQ;
        m->sq_idx = idx;
        m->total = w->byte_len;
        switch (wr->opcode) {
        case VFW_WR_RDMA_WRITE:
            m->tagged = true;
            m->opcode = VFW_RDMAP_WRITE;
            m->stag = wr->remote_stag;
            m->to = wr->remote_addr;
            break;
        case VFW_WR_SEND:
            untagged(m, qp, DDP_QN_SEND, VFW_RDMAP_SEND);
            break;
        case VFW_WR_SEND_SE:
            untagged(m, qp, DDP_QN_SEND, VFW_RDMAP_SEND_SE);
            break;
        case VFW_WR_SEND_INV:
            untagged(m, qp, DDP_QN_SEND, VFW_RDMAP_SEND_INV);
            m->rsvd = wr->invalidate_stag;
            break;
        default:
            untagged(m, qp, DDP_QN_SEND, VFW_RDMAP_SEND_SE_INV);
            m->rsvd = wr->invalidate_stag;
            break;
        }
        w->state = SWQE_ACTIVE;
        qp->sq_next++;
        return true;
    }
    return false;
}

static void record_sent(struct vfw_engine *e, struct vfw_qp *qp,
                        uint32_t qp_id)
{
    e->st.tx_fpdus++;
    if (!qp->tx_last)
        return;
    qp->cur_active = false;
    struct vfw_txmsg *m = &qp->cur;
    switch (m->kind) {
    case TX_SQ: {
        struct vfw_swqe *w = &qp->sq[m->sq_idx % qp->sq_ring];
        w->state = SWQE_DONE;
        w->status = VFW_WC_SUCCESS;
        vfw_qp_retire(e, qp, qp_id);
        break;
    }
    case TX_READ_RESP:
        qp->ird_head++;
        qp->ird_cnt--;
        break;
    case TX_TERM: {
        uint32_t cep_id = qp->cep;
        struct vfw_cep *c = vfw_cep_get(e, cep_id);
        if (c && !c->close_called) {
            c->close_called = true;
            c->state = CEP_CLOSING;
            c->llp->close(c->conn);
        }
        vfw_qp_error(e, qp, qp_id, false);
        vfw_cm_emit(e, VFW_CM_TERMINATE, cep_id, qp_id, -ECONNABORTED, NULL,
                    0);
        break;
    }
    default:
        break;
    }
}

static void tx_run(struct vfw_engine *e, uint32_t qp_id)
{
    for (;;) {
        struct vfw_qp *qp = vfw_qp_get(e, qp_id);
        if (!qp)
            return;
        struct vfw_cep *c = vfw_cep_get(e, qp->cep);
        if (!c || c->close_called ||
            (c->state != CEP_ESTABLISHED && c->state != CEP_CLOSING))
            return;
        if (qp->tx_len) {
            int rc = c->llp->send_record(c->conn, qp->txbuf, qp->tx_len);
            if (rc == -EAGAIN)
                return;
            if (rc < 0) {
                vfw_qp_error(e, qp, qp_id, true);
                return;
            }
            qp->tx_len = 0;
            record_sent(e, qp, qp_id);
            continue;
        }
        if (!qp->cur_active) {
            if (!pick(e, qp, qp_id)) {
                if (qp->close_after_tx && qp->sq_head == qp->sq_tail &&
                    qp->ord_cnt == 0 && qp->ird_cnt == 0 &&
                    !qp->term_pending) {
                    qp->close_after_tx = false;
                    c->close_called = true;
                    c->state = CEP_CLOSING;
                    c->llp->close(c->conn);
                }
                return;
            }
            qp->cur_active = true;
        }
        /* Zero-copy: build the FPDU in the LLP's send buffer when it offers
         * a contiguous span; else in qp->txbuf and hand it over above. */
        uint8_t *dst = NULL;
        uint32_t flen = 0;
        if (c->llp->reserve_record && c->llp->commit_record) {
            flen = vfw_ddp_next_fpdu_len(qp);
            dst = c->llp->reserve_record(c->conn, flen);
        }
        int rc = vfw_ddp_build(e, qp, qp_id, dst ? dst : qp->txbuf);
        if (rc == 0 && dst) {
            uint32_t n = qp->tx_len;
            qp->tx_len = 0;
            int crc = c->llp->commit_record(c->conn, n);
            if (crc < 0) {
                vfw_qp_error(e, qp, qp_id, true);
                return;
            }
            record_sent(e, qp, qp_id);
            continue;
        }
        if (rc) {
            qp->cur_active = false;
            if (qp->cur.kind == TX_SQ) {
                local_sq_error(e, qp, qp_id,
                               &qp->sq[qp->cur.sq_idx % qp->sq_ring],
                               VFW_WC_LOC_PROT_ERR);
            } else {
                vfw_rdmap_terminate(e, qp, qp_id, VFW_TERM_LAYER_RDMAP,
                                    qp->cur.kind == TX_READ_RESP
                                        ? RDMAP_ET_REMOTE_PROT
                                        : RDMAP_ET_LOCAL_CATA,
                                    0, NULL, 0, 0);
            }
        }
    }
}

void vfw_rdmap_tx(struct vfw_engine *e, uint32_t qp_id)
{
    struct vfw_qp *qp = vfw_qp_get(e, qp_id);
    if (!qp)
        return;
    if (qp->in_tx) {
        qp->tx_again = true;
        return;
    }
    qp->in_tx = true;
    do {
        qp->tx_again = false;
        tx_run(e, qp_id);
        qp = vfw_qp_get(e, qp_id);
    } while (qp && qp->tx_again);
    if (qp)
        qp->in_tx = false;
}
