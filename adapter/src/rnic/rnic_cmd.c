/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rnic_cmd.c - the verbs command queue (RCQ) of a function: descriptors
 * fetched by DMA from the ring like the PF admin queue, every field
 * validated (reserved bytes must be zero), quotas enforced, the result
 * written back in place with DONE (+ ERR) and a status. A command that
 * fails changes nothing: all checks and all guest reads (page lists,
 * private data) happen before the first change of state.
 */
#include <errno.h>
#include <stdlib.h>
#include "rnic_internal.h"
#include "../iwarp/vfw_iwarp.h"

#define RZ(field) vfw_all_zero((field), sizeof(field))
/* exec(): not done yet, run it again in a later run (it changed nothing
 * and stays at the head of the queue; the commands behind it wait) */
#define CMD_AGAIN (-1)

static int st_of(int err)
{
    switch (err) {
    case 0: return VFW_RCMD_S_OK;
    case -ENOENT: return VFW_RCMD_S_NOENT;
    case -ENOSPC: case -ENOMEM: case -ENOBUFS: return VFW_RCMD_S_NOSPC;
    case -EBUSY: return VFW_RCMD_S_BUSY;
    case -EADDRINUSE: return VFW_RCMD_S_ADDRINUSE;
    case -EIO: return VFW_RCMD_S_DMA;
    case -EISCONN: case -EALREADY: case -ENOTCONN: case -EPERM:
        return VFW_RCMD_S_STATE;
    case -EOPNOTSUPP: return VFW_RCMD_S_UNSUPPORTED;
    default: return VFW_RCMD_S_INVAL;
    }
}

static bool pow2_in(uint32_t v, uint32_t lo, uint32_t hi)
{
    return v >= lo && v <= hi && (v & (v - 1)) == 0;
}

static const struct vfw_aq_rdma_quota *quota(const struct rnic_fn *fs)
{
    return &fs->r->quota[fs->fn];
}

static int cmd_pd(struct rnic_fn *fs, struct vfw_rcmd *d, bool alloc)
{
    struct vfw_rcmd_pd *c = &d->u.pd;
    if (!RZ(c->rsvd))
        return VFW_RCMD_S_INVAL;
    if (!alloc) {
        int rc = vfw_pd_free(fs->e, c->pd);
        if (rc == 0)
            fs->used.pd--;
        return st_of(rc);
    }
    if (fs->used.pd >= quota(fs)->pd)
        return VFW_RCMD_S_NOSPC;
    uint32_t id;
    int rc = vfw_pd_alloc(fs->e, &id);
    if (rc)
        return st_of(rc);
    fs->used.pd++;
    c->pd = id;
    return VFW_RCMD_S_OK;
}

static int cmd_mr_reg(struct rnic_fn *fs, struct vfw_rcmd *d)
{
    struct vfw_rcmd_mr_reg *c = &d->u.mr_reg;
    const uint32_t acc_all = VFW_MR_ACC_LOCAL_WRITE | VFW_MR_ACC_REMOTE_WRITE |
                             VFW_MR_ACC_REMOTE_READ;
    if (!RZ(c->rsvd) || (c->access & ~acc_all) ||
        (c->flags & ~VFW_MR_F_PHYS) || c->len == 0 ||
        c->iova + c->len < c->iova)
        return VFW_RCMD_S_INVAL;
    if (fs->used.mr >= quota(fs)->mr)
        return VFW_RCMD_S_NOSPC;
    /* VFW_MR_ACC_* and VFW_ACC_* share their values */
    uint32_t acc = c->access;
    uint32_t stag = 0, npages = 0;
    int rc;
    if (c->flags & VFW_MR_F_PHYS) {
        /* the kernel's DMA MR: TO == the function's DMA address */
        if (!vfw_all_zero(&c->pgl, sizeof(c->pgl)) ||
            (acc & (VFW_MR_ACC_REMOTE_WRITE | VFW_MR_ACC_REMOTE_READ)))
            return VFW_RCMD_S_INVAL;
        if (!vfw_pd_valid(fs->e, c->pd))
            return VFW_RCMD_S_NOENT;
        rc = vfw_mr_reg(fs->e, c->pd, c->iova, c->len, acc, &stag);
    } else {
        const struct vfw_pgl_ref *p = &c->pgl;
        if (p->page_shift < VFW_PGL_MIN_SHIFT ||
            p->page_shift > VFW_PGL_MAX_SHIFT)
            return VFW_RCMD_S_INVAL;
        uint64_t fbo = c->iova & ((1ull << p->page_shift) - 1);
        if (p->offset != (uint16_t)fbo)
            return VFW_RCMD_S_INVAL;
        npages = p->npages;
        if ((uint64_t)fs->used.mr_pages + npages > quota(fs)->mr_pages)
            return VFW_RCMD_S_NOSPC;
        if (!vfw_pd_valid(fs->e, c->pd))
            return VFW_RCMD_S_NOENT;
        uint64_t *pages;
        int st = rnic_pgl_fetch(fs, p, fbo, c->len, VFW_RDMA_MAX_MR_PGL,
                                true, &pages);
        if (st)
            return st;
        rc = vfw_mr_reg_pages(fs->e, c->pd, c->iova, c->len, acc,
                              p->page_shift, pages, npages, &stag);
        free(pages);
    }
    if (rc)
        return st_of(rc);
    uint32_t idx = stag >> 8;
    if (idx > VFW_RDMA_HW_MR) {      /* cannot happen: engine table size */
        vfw_mr_dereg(fs->e, stag);
        return VFW_RCMD_S_NOSPC;
    }
    fs->mr_pages[idx] = npages;
    fs->used.mr++;
    fs->used.mr_pages += npages;
    c->stag = stag;
    return VFW_RCMD_S_OK;
}

static int cmd_mr_dereg(struct rnic_fn *fs, struct vfw_rcmd *d)
{
    struct vfw_rcmd_mr_dereg *c = &d->u.mr_dereg;
    if (!RZ(c->rsvd))
        return VFW_RCMD_S_INVAL;
    uint32_t idx = c->stag >> 8;
    if (idx > VFW_RDMA_HW_MR)
        return VFW_RCMD_S_NOENT;
    int rc = vfw_mr_dereg(fs->e, c->stag);
    if (rc)
        return st_of(rc);
    fs->used.mr--;
    fs->used.mr_pages -= fs->mr_pages[idx];
    fs->mr_pages[idx] = 0;
    return VFW_RCMD_S_OK;
}

static int cmd_cq_create(struct rnic_fn *fs, struct vfw_rcmd *d)
{
    struct vfw_rcmd_cq_create *c = &d->u.cq_create;
    if (!RZ(c->rsvd) || c->rsvd0 ||
        !pow2_in(c->depth, 2, VFW_RDMA_MAX_CQ_DEPTH) ||
        c->db_page >= VFW_DB_PAGES)
        return VFW_RCMD_S_INVAL;
    if (fs->used.cq >= quota(fs)->cq)
        return VFW_RCMD_S_NOSPC;
    struct rnic_cq *cq = calloc(1, sizeof(*cq));
    if (!cq)
        return VFW_RCMD_S_NOSPC;
    int st = rnic_ring_init(fs, &cq->ring, &c->pgl,
                            (uint64_t)c->depth * VFW_CQE_SIZE +
                            VFW_CQ_CTRL_SIZE, 64);
    if (st) {
        free(cq);
        return st;
    }
    uint32_t id;
    /* the engine's own ring is unused with ops->cqe: keep it minimal */
    int rc = vfw_cq_create(fs->e, 1, &id);
    if (rc || id > VFW_RDMA_HW_CQ || fs->cq[id]) {
        if (!rc)
            vfw_cq_destroy(fs->e, id);
        rnic_ring_free(&cq->ring);
        free(cq);
        return rc ? st_of(rc) : VFW_RCMD_S_NOSPC;
    }
    cq->depth = c->depth;
    cq->db_page = c->db_page;
    fs->cq[id] = cq;
    if (id > fs->cq_hi)
        fs->cq_hi = id;
    fs->used.cq++;
    c->cq = id;
    return VFW_RCMD_S_OK;
}

static int cmd_cq_destroy(struct rnic_fn *fs, struct vfw_rcmd *d)
{
    struct vfw_rcmd_cq_destroy *c = &d->u.cq_destroy;
    if (!RZ(c->rsvd))
        return VFW_RCMD_S_INVAL;
    if (c->cq < 1 || c->cq > VFW_RDMA_HW_CQ || !fs->cq[c->cq])
        return VFW_RCMD_S_NOENT;
    int rc = vfw_cq_destroy(fs->e, c->cq);
    if (rc)
        return st_of(rc);
    rnic_cq_free(fs, c->cq);
    fs->used.cq--;
    return VFW_RCMD_S_OK;
}

static int cmd_qp_create(struct rnic_fn *fs, struct vfw_rcmd *d)
{
    struct vfw_rcmd_qp_create *c = &d->u.qp_create;
    if (!RZ(c->rsvd) || !pow2_in(c->sq_depth, 2, VFW_RDMA_MAX_QP_DEPTH) ||
        !pow2_in(c->rq_depth, 2, VFW_RDMA_MAX_QP_DEPTH) ||
        c->ord < 1 || c->ord > VFW_RDMA_MAX_ORD_IRD || c->ird < 1 ||
        c->ird > VFW_RDMA_MAX_ORD_IRD || c->db_page >= VFW_DB_PAGES)
        return VFW_RCMD_S_INVAL;
    if (fs->used.qp >= quota(fs)->qp)
        return VFW_RCMD_S_NOSPC;
    if (!vfw_pd_valid(fs->e, c->pd) || c->send_cq < 1 ||
        c->send_cq > VFW_RDMA_HW_CQ || !fs->cq[c->send_cq] ||
        c->recv_cq < 1 || c->recv_cq > VFW_RDMA_HW_CQ || !fs->cq[c->recv_cq])
        return VFW_RCMD_S_NOENT;
    struct rnic_qp *q = calloc(1, sizeof(*q));
    if (!q)
        return VFW_RCMD_S_NOSPC;
    int st = rnic_ring_init(fs, &q->sq, &c->sq,
                            (uint64_t)c->sq_depth * VFW_WQE_SIZE, VFW_WQE_SIZE);
    if (!st)
        st = rnic_ring_init(fs, &q->rq, &c->rq,
                            (uint64_t)c->rq_depth * VFW_WQE_SIZE,
                            VFW_WQE_SIZE);
    q->sq_wrid = calloc(c->sq_depth, sizeof(uint64_t));
    q->rq_wrid = calloc(c->rq_depth, sizeof(uint64_t));
    if (!st && (!q->sq_wrid || !q->rq_wrid))
        st = VFW_RCMD_S_NOSPC;
    uint32_t id = 0;
    if (!st) {
        struct vfw_qp_attr a = {
            .pd_id = c->pd, .send_cq = c->send_cq, .recv_cq = c->recv_cq,
            .sq_depth = c->sq_depth, .rq_depth = c->rq_depth,
            .ord = c->ord, .ird = c->ird, .max_sge = VFW_RDMA_MAX_SGE,
        };
        int rc = vfw_qp_create(fs->e, &a, &id);
        if (!rc && (id > VFW_RDMA_HW_QP || fs->qp[id])) {
            vfw_qp_destroy(fs->e, id);
            rc = -ENOSPC;
        }
        st = st_of(rc);
    }
    if (st) {
        rnic_ring_free(&q->sq);
        rnic_ring_free(&q->rq);
        free(q->sq_wrid);
        free(q->rq_wrid);
        free(q);
        return st;
    }
    q->sq_depth = c->sq_depth;
    q->rq_depth = c->rq_depth;
    q->db_page = c->db_page;
    q->pd = c->pd;
    q->send_cq = c->send_cq;
    q->recv_cq = c->recv_cq;
    fs->qp[id] = q;
    if (id > fs->qp_hi)
        fs->qp_hi = id;
    fs->used.qp++;
    c->qp = id;
    return VFW_RCMD_S_OK;
}

static struct rnic_qp *qp_get(struct rnic_fn *fs, uint32_t id)
{
    return id >= 1 && id <= VFW_RDMA_HW_QP ? fs->qp[id] : NULL;
}

static int cmd_qp_modify(struct rnic_fn *fs, struct vfw_rcmd *d)
{
    struct vfw_rcmd_qp_modify *c = &d->u.qp_modify;
    if (!RZ(c->rsvd) ||
        (c->state != VFW_QPS_CLOSING && c->state != VFW_QPS_ERROR))
        return VFW_RCMD_S_INVAL;
    if (!qp_get(fs, c->qp))
        return VFW_RCMD_S_NOENT;
    int rc = vfw_qp_modify(fs->e, c->qp, (enum vfw_qp_state)c->state);
    if (rc == 0 && c->state == VFW_QPS_ERROR)
        rnic_qp_drain(fs, c->qp);
    return rc == -EINVAL ? VFW_RCMD_S_STATE : st_of(rc);
}

static int cmd_qp_destroy(struct rnic_fn *fs, struct vfw_rcmd *d)
{
    struct vfw_rcmd_qp_modify *c = &d->u.qp_modify;   /* same shape */
    if (!RZ(c->rsvd) || c->state)
        return VFW_RCMD_S_INVAL;
    if (!qp_get(fs, c->qp))
        return VFW_RCMD_S_NOENT;
    /* An ERROR before it may have left WRs to later runs (the run's
     * budget): each must complete before the QP and its rings are
     * forgotten, so the destroy waits for that drain. */
    if (!rnic_qp_drain_step(fs, c->qp))
        return CMD_AGAIN;
    int rc = vfw_qp_destroy(fs->e, c->qp);  /* aborts its connection */
    if (rc)
        return st_of(rc);
    rnic_qp_free(fs, c->qp);
    fs->used.qp--;
    return VFW_RCMD_S_OK;
}

static int cmd_qp_query(struct rnic_fn *fs, struct vfw_rcmd *d)
{
    struct vfw_rcmd_qp_query *c = &d->u.qp_query;
    /* everything after qp is reply: the driver must zero it */
    if (!vfw_all_zero((uint8_t *)c + 4, sizeof(*c) - 4))
        return VFW_RCMD_S_INVAL;
    if (!qp_get(fs, c->qp))
        return VFW_RCMD_S_NOENT;
    struct vfw_qp_info in;
    int rc = vfw_qp_query(fs->e, c->qp, &in);
    if (rc)
        return st_of(rc);
    c->state = (uint8_t)in.state;
    c->ord = (uint8_t)in.ord;
    c->ird = (uint8_t)in.ird;
    c->mss = (uint16_t)in.mss;
    c->term_sent_valid = in.term_sent.valid;
    c->term_sent_layer = in.term_sent.layer;
    c->term_sent_etype = in.term_sent.etype;
    c->term_sent_ecode = in.term_sent.ecode;
    c->term_rcvd_valid = in.term_rcvd.valid;
    c->term_rcvd_layer = in.term_rcvd.layer;
    c->term_rcvd_etype = in.term_rcvd.etype;
    c->term_rcvd_ecode = in.term_rcvd.ecode;
    c->sq_outstanding = in.sq_outstanding;
    c->rq_posted = in.rq_posted;
    return VFW_RCMD_S_OK;
}

static uint32_t ip_of(const uint8_t b[4])
{
    return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 |
           b[3];
}

static bool ip_unicast(uint32_t ip)
{
    return ip != 0 && (ip >> 28) < 14 && (ip >> 24) != 127;
}

static int cmd_set_addr(struct rnic_fn *fs, struct vfw_rcmd *d)
{
    struct vfw_rcmd_set_addr *c = &d->u.set_addr;
    uint32_t ip = ip_of(c->ip);
    if (!RZ(c->rsvd) || c->mtu < 576 || c->mtu > 9000 ||
        (ip && !ip_unicast(ip)))
        return VFW_RCMD_S_INVAL;
    if (!ip) {
        /* The address is withdrawn for new LISTEN/CONNECT. The stack goes
         * only when nothing uses it; otherwise listeners and connections
         * keep the old address until the driver closes them (a driver
         * that loses its address need not tear down first). */
        if (!rnic_cm_any(fs))
            rnic_tcp_detach(fs);
    } else {
        int rc = rnic_tcp_attach(fs, ip, c->mtu);
        if (rc)
            return st_of(rc);
    }
    fs->ip = ip;
    fs->mtu = c->mtu;
    return VFW_RCMD_S_OK;
}

static int cmd_listen(struct rnic_fn *fs, struct vfw_rcmd *d)
{
    struct vfw_rcmd_listen *c = &d->u.listen;
    uint32_t ip = ip_of(c->ip);
    if (!RZ(c->rsvd) || c->port == 0 || c->backlog < 1 ||
        c->backlog > VFW_RDMA_HW_CONN || (ip && ip != fs->ip))
        return VFW_RCMD_S_INVAL;
    if (!fs->tcp || !fs->ip)
        return VFW_RCMD_S_STATE;         /* no address (SET_ADDR) */
    if (fs->used.conn >= quota(fs)->conn)
        return VFW_RCMD_S_NOSPC;
    uint32_t id;
    int rc = rnic_cm_listen(fs, ip, c->port, c->backlog, &id);
    if (rc)
        return st_of(rc);
    c->listener = id;
    return VFW_RCMD_S_OK;
}

static int cmd_unlisten(struct rnic_fn *fs, struct vfw_rcmd *d)
{
    struct vfw_rcmd_unlisten *c = &d->u.unlisten;
    if (!RZ(c->rsvd))
        return VFW_RCMD_S_INVAL;
    return st_of(rnic_cm_unlisten(fs, c->listener));
}

static int conn_param(struct rnic_fn *fs, struct vfw_conn_param *p,
                      uint8_t ord, uint8_t ird, uint8_t rev, uint8_t flags,
                      uint8_t rtr, uint16_t plen, uint64_t paddr, bool accept)
{
    memset(p, 0, sizeof(*p));
    if (ord > VFW_RDMA_MAX_ORD_IRD || ird > VFW_RDMA_MAX_ORD_IRD ||
        (rev != 1 && rev != 2 && !(accept && rev == 0)) ||
        (flags & ~(VFW_CONN_F_CRC | VFW_CONN_F_P2P)) ||
        (rtr & ~(VFW_RTR_SEND | VFW_RTR_WRITE | VFW_RTR_READ)) ||
        ((flags & VFW_CONN_F_P2P) && rev == 1) ||
        (!(flags & VFW_CONN_F_P2P) && rtr) ||
        plen > ((rev == 1) ? VFW_RDMA_MAX_PDATA : VFW_RDMA_MAX_PDATA - 4))
        return VFW_RCMD_S_INVAL;
    if (plen && rnic_dma_read(fs, paddr, p->pdata, plen))
        return VFW_RCMD_S_DMA;
    p->ord = ord;
    p->ird = ird;
    /* ACCEPT rev 0: as the peer asked; the engine answers v2 only to a v2
     * request, so offering 2 means "the peer's" */
    p->mpa_rev = rev ? rev : 2;
    p->p2p = (flags & VFW_CONN_F_P2P) != 0;
    p->crc = (flags & VFW_CONN_F_CRC) != 0;
    p->rtr_mask = rtr;
    p->pdata_len = plen;
    return VFW_RCMD_S_OK;
}

static int cmd_connect(struct rnic_fn *fs, struct vfw_rcmd *d)
{
    struct vfw_rcmd_connect *c = &d->u.connect;
    uint32_t lip = ip_of(c->lip), rip = ip_of(c->rip);
    static const uint8_t zmac[6];
    if (!RZ(c->rsvd) || (c->tos & 3) || c->vlan || (lip && lip != fs->ip) ||
        !ip_unicast(rip) || c->rport == 0 || (c->dmac[0] & 1) ||
        !memcmp(c->dmac, zmac, 6))
        return VFW_RCMD_S_INVAL;
    if (c->mss)
        return VFW_RCMD_S_UNSUPPORTED;   /* the MSS follows SET_ADDR's MTU */
    if (!fs->ip || !fs->tcp)
        return VFW_RCMD_S_STATE;         /* no SET_ADDR yet */
    if (!qp_get(fs, c->qp))
        return VFW_RCMD_S_NOENT;
    if (fs->used.conn >= quota(fs)->conn)
        return VFW_RCMD_S_NOSPC;
    struct vfw_conn_param *p = malloc(sizeof(*p));
    if (!p)
        return VFW_RCMD_S_NOSPC;
    int st = conn_param(fs, p, c->ord, c->ird, c->mpa_rev, c->flags,
                        c->rtr_mask, c->pdata_len, c->pdata_addr, false);
    uint32_t cep = 0;
    uint16_t lport = 0;
    if (!st)
        st = st_of(rnic_cm_connect(fs, c, p, &cep, &lport));
    free(p);
    if (st)
        return st;
    c->cep = cep;
    c->lport_used = lport;
    return VFW_RCMD_S_OK;
}

static int cmd_accept(struct rnic_fn *fs, struct vfw_rcmd *d)
{
    struct vfw_rcmd_accept *c = &d->u.accept;
    if (!RZ(c->rsvd) || (c->tos & 3))
        return VFW_RCMD_S_INVAL;
    struct vfw_conn_param *p = malloc(sizeof(*p));
    if (!p)
        return VFW_RCMD_S_NOSPC;
    int st = conn_param(fs, p, c->ord, c->ird, c->mpa_rev, c->flags,
                        c->rtr_mask, c->pdata_len, c->pdata_addr, true);
    if (!st)
        st = st_of(rnic_cm_accept(fs, c->cep, c->qp, c->tos, p));
    free(p);
    return st;
}

static int cmd_reject(struct rnic_fn *fs, struct vfw_rcmd *d)
{
    struct vfw_rcmd_reject *c = &d->u.reject;
    uint8_t pd[VFW_RDMA_MAX_PDATA];
    if (!RZ(c->rsvd) || c->rsvd0 || c->pdata_len > VFW_RDMA_MAX_PDATA - 4)
        return VFW_RCMD_S_INVAL;
    if (c->pdata_len && rnic_dma_read(fs, c->pdata_addr, pd, c->pdata_len))
        return VFW_RCMD_S_DMA;
    return st_of(rnic_cm_reject(fs, c->cep, pd, c->pdata_len));
}

static int exec(struct rnic_fn *fs, struct vfw_rcmd *d)
{
    if (d->rsvd0 || d->rsvd1)
        return VFW_RCMD_S_INVAL;
    switch (d->opcode) {
    case VFW_RCMD_NOP:
        return RZ(d->u.raw) ? VFW_RCMD_S_OK : VFW_RCMD_S_INVAL;
    case VFW_RCMD_PD_ALLOC: return cmd_pd(fs, d, true);
    case VFW_RCMD_PD_FREE: return cmd_pd(fs, d, false);
    case VFW_RCMD_MR_REG: return cmd_mr_reg(fs, d);
    case VFW_RCMD_MR_DEREG: return cmd_mr_dereg(fs, d);
    case VFW_RCMD_CQ_CREATE: return cmd_cq_create(fs, d);
    case VFW_RCMD_CQ_DESTROY: return cmd_cq_destroy(fs, d);
    case VFW_RCMD_QP_CREATE: return cmd_qp_create(fs, d);
    case VFW_RCMD_QP_MODIFY: return cmd_qp_modify(fs, d);
    case VFW_RCMD_QP_DESTROY: return cmd_qp_destroy(fs, d);
    case VFW_RCMD_QP_QUERY: return cmd_qp_query(fs, d);
    case VFW_RCMD_SET_ADDR: return cmd_set_addr(fs, d);
    case VFW_RCMD_LISTEN: return cmd_listen(fs, d);
    case VFW_RCMD_UNLISTEN: return cmd_unlisten(fs, d);
    case VFW_RCMD_CONNECT: return cmd_connect(fs, d);
    case VFW_RCMD_ACCEPT: return cmd_accept(fs, d);
    case VFW_RCMD_REJECT: return cmd_reject(fs, d);
    default: return VFW_RCMD_S_BAD_OPCODE;
    }
}

void rnic_cmd_run(struct rnic_fn *fs, unsigned budget, bool *more)
{
    struct rnic_rcq *q = &fs->rcq;
    for (unsigned n = 0; n < budget && fs->work_left > 0; n++) {
        if (!(q->status & VFW_RCQ_STATUS_ENABLED) || q->head == q->tail ||
            q->head >= q->len)
            return;
        rnic_work_charge(fs, 1);
        struct vfw_rcmd d, orig;
        uint64_t a = q->base + (uint64_t)q->head * VFW_RCQ_DESC_SIZE;
        if (rnic_dma_read(fs, a, &d, sizeof(d)))
            goto dma_err;
        orig = d;
        int st = exec(fs, &d);
        if (st == CMD_AGAIN) {
            *more = true;
            return;
        }
        if (st) {
            /* a failed command reports nothing but its status */
            d = orig;
            rnic_stat(fs, VFW_RSTAT_CMDS_ERR);
        } else {
            rnic_stat(fs, VFW_RSTAT_CMDS_OK);
        }
        d.status = (uint16_t)st;
        d.flags = (uint16_t)(VFW_RCMD_F_DONE | (st ? VFW_RCMD_F_ERR : 0));
        if (rnic_dma_write(fs, a, &d, sizeof(d)))
            goto dma_err;
        q->head = (q->head + 1) % q->len;
    }
    if ((q->status & VFW_RCQ_STATUS_ENABLED) && q->head != q->tail)
        *more = true;
    return;
dma_err:
    q->status = (q->status & ~VFW_RCQ_STATUS_ENABLED) |
                VFW_RCQ_STATUS_DMA_ERR;
}
