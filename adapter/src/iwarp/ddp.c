/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ddp.c - DDP (RFC 5041): segment headers for tagged and untagged buffers,
 * segmentation of outgoing messages into MULPDU-sized segments (gathering
 * the payload through the DMA ops after the PD/STag/bounds check), and the
 * first validation of incoming segments before RDMAP dispatch.
 *
 * Tagged header (14 B):  ctrl | rdmap ctrl | STag | TO(64)
 * Untagged header (18 B): ctrl | rdmap ctrl | rsvd/inv STag | QN | MSN | MO
 */
#include <errno.h>
#include "vfw_iwarp.h"

uint32_t vfw_ddp_hdr(const struct vfw_txmsg *m, uint8_t *p, bool last)
{
    p[0] = (uint8_t)((m->tagged ? DDP_F_TAGGED : 0) | (last ? DDP_F_LAST : 0) |
                     DDP_VERSION);
    p[1] = (uint8_t)(RDMAP_VERSION << 6 | m->opcode);
    if (m->tagged) {
        vfw_st_be32(p + 2, m->stag);
        vfw_st_be64(p + 6, m->to);
        return DDP_TAGGED_HDR;
    }
    vfw_st_be32(p + 2, m->rsvd);
    vfw_st_be32(p + 6, m->qn);
    vfw_st_be32(p + 10, m->msn);
    vfw_st_be32(p + 14, m->off);     /* MO */
    return DDP_UNTAGGED_HDR;
}

/* Gather `n` bytes of the SQ WQE's SGE list at the message cursor. */
static int gather_sges(struct vfw_engine *e, struct vfw_qp *qp,
                       struct vfw_txmsg *m, uint8_t *dst, uint32_t n)
{
    struct vfw_swqe *w = &qp->sq[m->sq_idx % qp->sq_ring];
    uint32_t done = 0;
    if (w->wr.flags & VFW_WR_F_INLINE) {
        /* inline payload: copied into the WR at post time, bounded there */
        if (w->wr.inline_len > VFW_MAX_INLINE || m->off > w->wr.inline_len ||
            n > w->wr.inline_len - m->off)
            return -EINVAL;
        memcpy(dst, w->wr.inline_data + m->off, n);
        return 0;
    }
    while (done < n) {
        if (m->sge_i >= w->wr.num_sge)
            return -EINVAL;
        const struct vfw_sge *s = &w->wr.sge[m->sge_i];
        if (m->sge_off >= s->len) {
            m->sge_i++;
            m->sge_off = 0;
            continue;
        }
        uint32_t chunk = s->len - m->sge_off;
        if (chunk > n - done)
            chunk = n - done;
        uint64_t a = s->addr + m->sge_off;
        if (vfw_mr_check(e, qp->attr.pd_id, s->stag, a, chunk, 0) != MR_OK) {
            e->st.prot_errors++;
            return -EACCES;
        }
        int rc = vfw_mr_dma_read(e, s->stag, a, dst + done, chunk);
        if (rc)
            return rc;
        done += chunk;
        m->sge_off += chunk;
    }
    return 0;
}

/* Payload bytes of the next FPDU of qp->cur. */
static uint32_t next_pl(const struct vfw_qp *qp)
{
    const struct vfw_txmsg *m = &qp->cur;
    uint32_t hl = m->tagged ? DDP_TAGGED_HDR : DDP_UNTAGGED_HDR;
    uint32_t maxpl = qp->mulpdu - hl;
    uint32_t pl = m->total - m->off;
    return pl > maxpl ? maxpl : pl;
}

/* Size of the FPDU vfw_ddp_build() will produce next (<= qp->mss). */
uint32_t vfw_ddp_next_fpdu_len(const struct vfw_qp *qp)
{
    uint32_t hl = qp->cur.tagged ? DDP_TAGGED_HDR : DDP_UNTAGGED_HDR;
    return (((2u + hl + next_pl(qp)) + 3u) & ~3u) + 4u;
}

/* Build the next FPDU of qp->cur into `fpdu` (qp->txbuf, or a span the LLP
 * reserved in its send buffer: the payload is gathered straight into the
 * record, no staging copy). Sets qp->tx_len / tx_last on success; on
 * error the message is abandoned by the caller. */
int vfw_ddp_build(struct vfw_engine *e, struct vfw_qp *qp, uint32_t qp_id,
                  uint8_t *fpdu)
{
    (void)qp_id;
    struct vfw_txmsg *m = &qp->cur;
    uint32_t hl = m->tagged ? DDP_TAGGED_HDR : DDP_UNTAGGED_HDR;
    uint32_t pl = next_pl(qp);
    bool last = m->off + pl == m->total;
    uint8_t *u = fpdu + 2;
    vfw_ddp_hdr(m, u, last);
    uint8_t *p = u + hl;
    int rc = 0;
    switch (m->kind) {
    case TX_SQ:
        rc = gather_sges(e, qp, m, p, pl);
        break;
    case TX_READ_RESP:
        if (pl == 0)
            break;
        if (vfw_mr_check(e, qp->attr.pd_id, m->src_stag, m->src_to + m->off,
                         pl, VFW_ACC_REMOTE_READ) != MR_OK) {
            e->st.prot_errors++;
            return -EACCES;
        }
        rc = vfw_mr_dma_read(e, m->src_stag, m->src_to + m->off, p, pl);
        if (rc)
            return rc;
        break;
    default:
        if (m->off + pl > sizeof(m->small))
            return -EINVAL;
        memcpy(p, m->small + m->off, pl);
        break;
    }
    if (rc)
        return rc;
    qp->tx_len = vfw_mpa_frame(qp, fpdu, hl + pl);
    qp->tx_last = last;
    m->off += pl;
    if (m->tagged)
        m->to += pl;
    if (m->kind == TX_SQ || m->kind == TX_READ_RESP)
        e->st.tx_bytes += pl;
    return 0;
}

/* A CRC-checked ULPDU. Validate the DDP/RDMAP control fields, handle the
 * RFC 6581 RTR, and dispatch. */
void vfw_ddp_rx(struct vfw_engine *e, struct vfw_qp *qp, uint32_t qp_id,
                const uint8_t *u, uint32_t len)
{
    if (len < 2 || len < ((u[0] & DDP_F_TAGGED) ? DDP_TAGGED_HDR
                                                 : DDP_UNTAGGED_HDR)) {
        vfw_rdmap_terminate(e, qp, qp_id, VFW_TERM_LAYER_DDP, DDP_ET_CATA, 0,
                            NULL, 0, len);
        return;
    }
    bool tagged = u[0] & DDP_F_TAGGED;
    uint32_t hl = tagged ? DDP_TAGGED_HDR : DDP_UNTAGGED_HDR;
    if ((u[0] & 3) != DDP_VERSION) {
        vfw_rdmap_terminate(e, qp, qp_id, VFW_TERM_LAYER_DDP,
                            tagged ? DDP_ET_TAGGED : DDP_ET_UNTAGGED,
                            tagged ? DDP_EC_T_VERSION : DDP_EC_U_VERSION,
                            u, hl, len);
        return;
    }
    if ((u[1] >> 6) != RDMAP_VERSION) {
        vfw_rdmap_terminate(e, qp, qp_id, VFW_TERM_LAYER_RDMAP,
                            RDMAP_ET_REMOTE_OP, RDMAP_EC_VERSION, u, hl, len);
        return;
    }
    bool gated = qp->tx_gate;
    qp->tx_gate = false;
    uint8_t op = u[1] & 0xf;
    if (qp->rtr_expect) {
        /* RFC 6581: the first FPDU is the negotiated zero-length RTR. */
        qp->rtr_expect = false;
        bool last = u[0] & DDP_F_LAST;
        if (tagged && op == VFW_RDMAP_WRITE && len == hl && last) {
            if (gated)
                vfw_rdmap_tx(e, qp_id);
            return;
        }
        if (!tagged && op == VFW_RDMAP_SEND && len == hl && last &&
            vfw_ld_be32(u + 6) == DDP_QN_SEND &&
            vfw_ld_be32(u + 10) == qp->rx_msn[DDP_QN_SEND]) {
            qp->rx_msn[DDP_QN_SEND]++;
            if (gated)
                vfw_rdmap_tx(e, qp_id);
            return;
        }
        /* a zero-length Read RTR is an ordinary (empty) Read Request */
    }
    if (tagged)
        vfw_rdmap_rx_tagged(e, qp, qp_id, u, len);
    else
        vfw_rdmap_rx_untagged(e, qp, qp_id, u, len);
    if (gated && vfw_qp_get(e, qp_id))
        vfw_rdmap_tx(e, qp_id);
}
