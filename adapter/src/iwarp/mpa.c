/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mpa.c - MPA (RFC 5044) with enhanced connection setup (RFC 6581):
 * Request/Reply frames with private data, IRD/ORD negotiation, the RTR
 * (ready-to-receive) message type for peer-to-peer mode, and FPDU framing:
 * ULPDU_Length | ULPDU | pad to 4 | CRC32c. Markers are always negotiated
 * off (a peer that requires them is rejected). One FPDU per LLP record, and
 * an FPDU never exceeds the MSS (RFC 5044 sec. 8, "FPDU alignment").
 */
#include <errno.h>
#include <stdlib.h>
#include "vfw_iwarp.h"

uint16_t vfw_mpa_mulpdu(uint16_t mss)
{
    /* largest ULPDU with 2 + ULPDU + pad + 4 <= mss, pad = 0 */
    return (uint16_t)(((mss - 4u) & ~3u) - 2u);
}

static uint32_t fpdu_len(uint16_t ulen)
{
    uint32_t n = 2u + ulen;
    return ((n + 3u) & ~3u) + 4u;
}

/* Frame the ULPDU already at fpdu+2: length, pad, CRC. Returns FPDU size. */
uint32_t vfw_mpa_frame(struct vfw_qp *qp, uint8_t *f, uint32_t ulen)
{
    uint32_t n = 2 + ulen;
    put_be16(f, (uint16_t)ulen);
    while (n & 3)
        f[n++] = 0;
    uint32_t crc = qp->crc ? vfw_crc32c(0, f, n) : 0;
    /* stored least significant byte first, as the CRC32c register
     * streams out (the iSCSI/RFC 3385 convention MPA inherits) */
    f[n] = (uint8_t)crc;
    f[n + 1] = (uint8_t)(crc >> 8);
    f[n + 2] = (uint8_t)(crc >> 16);
    f[n + 3] = (uint8_t)(crc >> 24);
    return n + 4;
}

static int send_frame(struct vfw_cep *c, bool req, uint8_t flags, uint8_t rev,
                      const uint8_t *v2hdr, const uint8_t *pd, uint16_t pdl)
{
    uint8_t buf[MPA_HDR_LEN + VFW_MAX_PDATA];
    uint16_t total = (uint16_t)(pdl + (v2hdr ? MPA_V2_HDR : 0));
    if (total > VFW_MAX_PDATA)
        return -EINVAL;
    memcpy(buf, req ? MPA_KEY_REQ : MPA_KEY_REP, 16);
    /* the IRD/ORD header is only recognised by peers (siw, hardware RNICs)
     * when the H bit announces it */
    buf[16] = (uint8_t)(flags | (v2hdr ? MPA_FLAG_H : 0));
    buf[17] = rev;
    put_be16(buf + 18, total);
    uint32_t n = MPA_HDR_LEN;
    if (v2hdr) {
        memcpy(buf + n, v2hdr, MPA_V2_HDR);
        n += MPA_V2_HDR;
    }
    if (pdl)
        memcpy(buf + n, pd, pdl);
    n += pdl;
    if (n > c->llp->mss(c->conn))
        return -EMSGSIZE;
    return c->llp->send_record(c->conn, buf, n);
}

static int check_param(const struct vfw_conn_param *p)
{
    if (!p || (p->mpa_rev != 1 && p->mpa_rev != 2) ||
        p->ord > VFW_MAX_ORD_IRD || p->ird > VFW_MAX_ORD_IRD ||
        p->pdata_len > VFW_MAX_PDATA - (p->mpa_rev == 2 ? MPA_V2_HDR : 0) ||
        (p->rtr_mask & ~7u))
        return -EINVAL;
    return 0;
}

static int establish(struct vfw_engine *e, struct vfw_cep *c,
                     struct vfw_qp *qp)
{
    if (!c->rxbuf) {
        c->rxbuf = malloc(MPA_MAX_FPDU);
        if (!c->rxbuf)
            return -ENOMEM;
    }
    c->rxlen = 0;
    c->state = CEP_ESTABLISHED;
    qp->state = VFW_QPS_RTS;
    (void)e;
    return 0;
}

int vfw_connect(struct vfw_engine *e, uint32_t cep_id, uint32_t qp_id,
                const struct vfw_conn_param *p)
{
    struct vfw_cep *c = vfw_cep_get(e, cep_id);
    struct vfw_qp *qp = vfw_qp_get(e, qp_id);
    if (!c || !qp)
        return -ENOENT;
    if (check_param(p))
        return -EINVAL;
    if (!c->active || c->state != CEP_INIT || qp->state != VFW_QPS_IDLE ||
        qp->cep)
        return -EINVAL;
    int rc = vfw_qp_bind(e, qp, cep_id, c->llp->mss(c->conn));
    if (rc)
        return rc;
    qp->ord = p->ord ? p->ord : qp->attr.ord;
    qp->ird = p->ird ? p->ird : qp->attr.ird;
    qp->initiator = true;
    qp->crc = p->crc;
    c->param = *p;
    c->qp = qp_id;
    uint8_t v2[MPA_V2_HDR];
    if (p->mpa_rev == 2) {
        uint16_t ird = (uint16_t)qp->ird, ord = (uint16_t)qp->ord;
        if (p->p2p) {
            uint8_t m = p->rtr_mask ? p->rtr_mask : 7;
            ird |= MPA_V2_P2P;
            if (m & VFW_RTR_SEND)
                ird |= MPA_V2_SEND0_RTR;
            if (m & VFW_RTR_WRITE)
                ord |= MPA_V2_WRITE_RTR;
            if (m & VFW_RTR_READ)
                ord |= MPA_V2_READ_RTR;
        }
        put_be16(v2, ird);
        put_be16(v2 + 2, ord);
    }
    rc = send_frame(c, true, p->crc ? MPA_FLAG_C : 0, p->mpa_rev,
                    p->mpa_rev == 2 ? v2 : NULL, p->pdata, p->pdata_len);
    if (rc) {
        qp->cep = 0;
        c->qp = 0;
        return rc;
    }
    c->state = CEP_REP_WAIT;
    c->deadline = e->ops.now_ns(e->ops.opaque) + VFW_MPA_TIMEOUT_NS;
    return 0;
}

static uint8_t pick_rtr(uint8_t offered)
{
    if (offered & VFW_RTR_WRITE)
        return VFW_RTR_WRITE;
    if (offered & VFW_RTR_SEND)
        return VFW_RTR_SEND;
    if (offered & VFW_RTR_READ)
        return VFW_RTR_READ;
    return 0;
}

int vfw_accept(struct vfw_engine *e, uint32_t cep_id, uint32_t qp_id,
               const struct vfw_conn_param *p)
{
    struct vfw_cep *c = vfw_cep_get(e, cep_id);
    struct vfw_qp *qp = vfw_qp_get(e, qp_id);
    if (!c || !qp)
        return -ENOENT;
    if (check_param(p))
        return -EINVAL;
    if (c->active || c->state != CEP_REQ_RCVD || qp->state != VFW_QPS_IDLE ||
        qp->cep)
        return -EINVAL;
    int rc = vfw_qp_bind(e, qp, cep_id, c->llp->mss(c->conn));
    if (rc)
        return rc;
    uint8_t rev = (c->peer_rev == 2 && p->mpa_rev == 2) ? 2 : 1;
    qp->ird = p->ird ? p->ird : qp->attr.ird;
    qp->ord = p->ord ? p->ord : qp->attr.ord;
    qp->initiator = false;
    qp->crc = p->crc || (c->peer_flags & MPA_FLAG_C);
    uint8_t rtr = 0;
    uint8_t v2[MPA_V2_HDR];
    if (rev == 2) {
        if (c->peer_v2hdr) {
            uint32_t pird = c->peer_ird & MPA_V2_MASK;
            if (qp->ord > pird)
                qp->ord = pird;
            if (c->peer_ird & MPA_V2_P2P) {
                uint8_t off = 0;
                if (c->peer_ird & MPA_V2_SEND0_RTR)
                    off |= VFW_RTR_SEND;
                if (c->peer_ord & MPA_V2_WRITE_RTR)
                    off |= VFW_RTR_WRITE;
                if (c->peer_ord & MPA_V2_READ_RTR)
                    off |= VFW_RTR_READ;
                rtr = pick_rtr(off & (p->rtr_mask ? p->rtr_mask : 7));
            }
        }
        uint16_t ird = (uint16_t)qp->ird, ord = (uint16_t)qp->ord;
        if (rtr) {
            ird |= MPA_V2_P2P;   /* echo control flag A */
            if (rtr == VFW_RTR_SEND)
                ird |= MPA_V2_SEND0_RTR;
            if (rtr == VFW_RTR_WRITE)
                ord |= MPA_V2_WRITE_RTR;
            if (rtr == VFW_RTR_READ)
                ord |= MPA_V2_READ_RTR;
        }
        put_be16(v2, ird);
        put_be16(v2 + 2, ord);
    }
    c->qp = qp_id;
    rc = send_frame(c, false, p->crc ? MPA_FLAG_C : 0, rev,
                    rev == 2 && c->peer_v2hdr ? v2 : NULL, p->pdata, p->pdata_len);
    if (rc == 0)
        rc = establish(e, c, qp);
    if (rc) {
        qp->cep = 0;
        c->qp = 0;
        return rc;
    }
    qp->tx_gate = true;           /* RFC 5044: responder waits for the
                                     initiator's first FPDU (or RTR) */
    qp->rtr_expect = rtr != 0;
    vfw_cm_emit(e, VFW_CM_ESTABLISHED, cep_id, qp_id, 0, NULL, 0);
    return 0;
}

int vfw_reject(struct vfw_engine *e, uint32_t cep_id, const uint8_t *pdata,
               uint16_t len)
{
    struct vfw_cep *c = vfw_cep_get(e, cep_id);
    if (!c)
        return -ENOENT;
    if (c->active || c->state != CEP_REQ_RCVD)
        return -EINVAL;
    uint8_t rev = c->peer_rev == 2 ? 2 : 1;
    uint8_t v2[MPA_V2_HDR] = { 0 };
    if (len > VFW_MAX_PDATA - (rev == 2 ? MPA_V2_HDR : 0) || (len && !pdata))
        return -EINVAL;
    int rc = send_frame(c, false, MPA_FLAG_R, rev,
                        rev == 2 && c->peer_v2hdr ? v2 : NULL, pdata, len);
    c->state = CEP_CLOSING;
    c->close_called = true;
    c->llp->close(c->conn);
    return rc;
}

static void hs_fail(struct vfw_engine *e, uint32_t cep_id, int err)
{
    struct vfw_cep *c = vfw_cep_get(e, cep_id);
    if (!c)
        return;
    uint32_t qp_id = c->qp;
    c->llp->abort(c->conn);
    vfw_cm_emit(e, VFW_CM_CONNECT_ERROR, cep_id, qp_id, err, NULL, 0);
    vfw_cep_release(e, cep_id);
    struct vfw_qp *qp = vfw_qp_get(e, qp_id);
    if (qp)
        qp->state = VFW_QPS_IDLE;
}

/* A whole Request (passive) or Reply (active) frame sits in c->hbuf. */
static void hs_frame(struct vfw_engine *e, uint32_t cep_id, struct vfw_cep *c)
{
    const uint8_t *h = c->hbuf;
    uint16_t pdl = get_be16(h + 18);
    const uint8_t *pd = h + MPA_HDR_LEN;
    c->peer_flags = h[16];
    c->peer_rev = h[17];
    /* rev 2 without H: plain private data, no IRD/ORD header (RFC 6581) */
    if (c->peer_rev == 2 && (h[16] & MPA_FLAG_H) && pdl >= MPA_V2_HDR) {
        c->peer_v2hdr = true;
        c->peer_ird = get_be16(pd);
        c->peer_ord = get_be16(pd + 2);
        pd += MPA_V2_HDR;
        pdl -= MPA_V2_HDR;
    }
    if (!c->active) {
        if ((h[16] & MPA_FLAG_R) || (h[16] & MPA_FLAG_M)) {
            /* Reject bit in a request, or the peer wants markers, which
             * this engine never inserts: refuse the connection. */
            c->state = CEP_REQ_RCVD;
            vfw_reject(e, cep_id, NULL, 0);
            return;
        }
        c->state = CEP_REQ_RCVD;
        c->deadline = e->ops.now_ns(e->ops.opaque) + VFW_MPA_TIMEOUT_NS;
        vfw_cm_emit(e, VFW_CM_CONNECT_REQUEST, cep_id, 0, 0, pd, pdl);
        return;
    }
    uint32_t qp_id = c->qp;
    struct vfw_qp *qp = vfw_qp_get(e, qp_id);
    if (!qp) {
        hs_fail(e, cep_id, -ENOENT);
        return;
    }
    if (h[16] & MPA_FLAG_R) {
        qp->cep = 0;
        c->qp = 0;
        c->state = CEP_CLOSING;
        vfw_cm_emit(e, VFW_CM_REJECTED, cep_id, qp_id, -ECONNREFUSED, pd, pdl);
        c = vfw_cep_get(e, cep_id);
        if (c && !c->close_called) {
            c->close_called = true;
            c->llp->close(c->conn);
        }
        return;
    }
    if ((h[16] & MPA_FLAG_M) || c->peer_rev > c->param.mpa_rev ||
        c->peer_rev == 0) {
        hs_fail(e, cep_id, -EPROTO);
        return;
    }
    if (h[16] & MPA_FLAG_C)
        qp->crc = true;
    if (c->peer_rev == 2 && c->peer_v2hdr) {
        uint32_t pird = c->peer_ird & MPA_V2_MASK;
        if (qp->ord > pird)
            qp->ord = pird;
        if (c->param.p2p && (c->peer_ird & MPA_V2_P2P)) {
            if (c->peer_ord & MPA_V2_WRITE_RTR)
                qp->rtr_send = VFW_RTR_WRITE;
            else if (c->peer_ird & MPA_V2_SEND0_RTR)
                qp->rtr_send = VFW_RTR_SEND;
            else if (c->peer_ord & MPA_V2_READ_RTR)
                qp->rtr_send = VFW_RTR_READ;
        }
    }
    if (establish(e, c, qp)) {
        hs_fail(e, cep_id, -ENOMEM);
        return;
    }
    if (e->initiator_settle_ns) {
        qp->tx_hold_until = e->ops.now_ns(e->ops.opaque) + e->initiator_settle_ns;
        e->held++;
    }
    vfw_cm_emit(e, VFW_CM_ESTABLISHED, cep_id, qp_id, 0, pd, pdl);
    vfw_rdmap_tx(e, qp_id);
}

static void rx_fpdu(struct vfw_engine *e, uint32_t cep_id, const uint8_t *f,
                    uint32_t flen)
{
    struct vfw_cep *c = vfw_cep_get(e, cep_id);
    if (!c)
        return;
    uint32_t qp_id = c->qp;
    struct vfw_qp *qp = vfw_qp_get(e, qp_id);
    if (!qp || (qp->state != VFW_QPS_RTS && qp->state != VFW_QPS_CLOSING))
        return;               /* after Terminate/ERROR: discard */
    uint16_t ulen = get_be16(f);
    e->st.rx_fpdus++;
    if (qp->crc) {
        uint32_t n = flen - 4;
        uint32_t want = vfw_crc32c(0, f, n);
        uint32_t got = (uint32_t)f[n] | (uint32_t)f[n + 1] << 8 |
                       (uint32_t)f[n + 2] << 16 | (uint32_t)f[n + 3] << 24;
        if (want != got) {
            e->st.crc_errors++;
            vfw_rdmap_terminate(e, qp, qp_id, VFW_TERM_LAYER_MPA, 0,
                                MPA_EC_CRC, NULL, 0, 0);
            return;
        }
    }
    vfw_ddp_rx(e, qp, qp_id, f + 2, ulen);
}

static size_t mpa_rx(struct vfw_engine *e, uint32_t cep_id, const uint8_t *d,
                     size_t len)
{
    size_t off = 0;
    /* every iteration consumes bytes or changes state; bound it anyway */
    for (size_t guard = 0; off < len && guard < len + 16; guard++) {
        struct vfw_cep *c = vfw_cep_get(e, cep_id);
        if (!c)
            return len;
        size_t rem = len - off;
        switch (c->state) {
        case CEP_REQ_WAIT:
        case CEP_REP_WAIT: {
            const char *key = c->state == CEP_REQ_WAIT ? MPA_KEY_REQ
                                                       : MPA_KEY_REP;
            if (c->hlen < MPA_HDR_LEN) {
                uint32_t take = MPA_HDR_LEN - c->hlen;
                if (take > rem)
                    take = (uint32_t)rem;
                memcpy(c->hbuf + c->hlen, d + off, take);
                c->hlen += take;
                off += take;
                rem -= take;
                if (c->hlen < MPA_HDR_LEN)
                    break;
                if (memcmp(c->hbuf, key, 16) != 0 ||
                    get_be16(c->hbuf + 18) > VFW_MAX_PDATA) {
                    hs_fail(e, cep_id, -EPROTO);
                    return len;
                }
            }
            uint32_t need = MPA_HDR_LEN + get_be16(c->hbuf + 18);
            uint32_t take = need - c->hlen;
            if (take > rem)
                take = (uint32_t)rem;
            memcpy(c->hbuf + c->hlen, d + off, take);
            c->hlen += take;
            off += take;
            if (c->hlen == need)
                hs_frame(e, cep_id, c);
            break;
        }
        case CEP_ESTABLISHED:
        case CEP_CLOSING: {
            if (!c->rxbuf)
                return len;
            if (c->rxlen == 0 && rem >= 2) {
                uint32_t fl = fpdu_len(get_be16(d + off));
                if (rem >= fl) {        /* whole FPDU in place: no copy */
                    rx_fpdu(e, cep_id, d + off, fl);
                    off += fl;
                    break;
                }
            }
            uint32_t need = c->rxlen < 2 ? 2 : fpdu_len(get_be16(c->rxbuf));
            uint32_t take = need - c->rxlen;
            if (take > rem)
                take = (uint32_t)rem;
            memcpy(c->rxbuf + c->rxlen, d + off, take);
            c->rxlen += take;
            off += take;
            if (c->rxlen >= 2 && c->rxlen == fpdu_len(get_be16(c->rxbuf))) {
                c->rxlen = 0;
                rx_fpdu(e, cep_id, c->rxbuf, fpdu_len(get_be16(c->rxbuf)));
            }
            break;
        }
        case CEP_REQ_RCVD:
        case CEP_INIT:
            /* The peer may not send before the handshake step allows it. */
            hs_fail(e, cep_id, -EPROTO);
            return len;
        default:
            return len;
        }
    }
    return len;
}

/* Entry from the LLP. A recursive delivery (the LLP looping our own send
 * back into us) consumes nothing now and is re-offered by recv_resume. */
size_t vfw_mpa_rx(struct vfw_engine *e, uint32_t cep_id, const uint8_t *d,
                  size_t len)
{
    struct vfw_cep *c = vfw_cep_get(e, cep_id);
    if (!c)
        return len;
    if (c->in_rx) {
        c->rx_again = true;
        return 0;
    }
    c->in_rx = true;
    size_t n = mpa_rx(e, cep_id, d, len);
    c = vfw_cep_get(e, cep_id);
    if (c) {
        c->in_rx = false;
        if (c->rx_again && c->conn) {
            c->rx_again = false;
            c->llp->recv_resume(c->conn);
        }
    }
    return n;
}
