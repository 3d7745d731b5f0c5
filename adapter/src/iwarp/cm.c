/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cm.c - connection management of the iWARP engine, all of it: the CEP
 * table (one connection endpoint per LLP connection: lookup, allocation,
 * release, the MPA handshake timer), the LLP upcalls (data, writable,
 * closed) with the receive loop that hands bytes to the handshake or to
 * the FPDU path of mpa.c, the MPA Request/Reply/Reject handshake, the CM
 * events, and a vfw_tcp_conn as a CEP's LLP (vfw_iwarp_tcp.h, and the link
 * head rnic/rnic_cm.c builds its own connections on).
 *
 * Wire: RFC 5044 sec. 7.1 (connection setup). The initiator sends an MPA
 * Request, the responder answers with a Reply or a Reject (R flag), each a
 * 16-byte key, the M (markers), C (CRC), R flags, Rev and PD_Length, then
 * up to 512 bytes of private data (sec. 7.1.1); no FPDU before the
 * handshake allows it (sec. 7.1.2: the initiator after the Reply, the
 * responder after the initiator's first FPDU). Rev 2 is RFC 6581's
 * enhanced setup: when the H flag is set the private data begins with the
 * IRD and ORD words (control flags: peer-to-peer mode and the RTR type);
 * rev 2 without H is plain private data. Markers are never inserted: a
 * peer asking for them is refused.
 *
 * Trust and bounds: everything from the wire is the peer's and checked
 * here. The key must be the frame the CEP waits for and PD_Length at most
 * VFW_MAX_PDATA, both checked as soon as the 20-byte header is in; the
 * frame is then gathered whole in c->hbuf (sized for the largest) before
 * its fields are read. The v2 words are read only when PD_Length holds
 * them; ORD is cut to the peer's IRD; a Reply with a rev above the
 * Request's, or rev 0, fails the handshake; a peer that sends before its
 * step is cut off. A handshake has VFW_MPA_TIMEOUT_NS to complete
 * (vfw_cm_poll). Ids from the device model are validated (vfw_cep_get,
 * vfw_qp_get), connection parameters by check_param. The receive loop is
 * bounded (every step consumes bytes or changes state, and a guard caps
 * it), and a recursive delivery is deferred to recv_resume. The timer and
 * the teardown scan the CEP table up to cep_hi only.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include "vfw_iwarp.h"
#include "vfw_iwarp_tcp.h"

/* ---- the CEP table --------------------------------------------------------*/
struct vfw_cep *vfw_cep_get(struct vfw_engine *e, uint32_t id)
{
    if (!e || id < 1 || id > e->max_cep || !e->cep[id] ||
        e->cep[id]->state == CEP_FREE)
        return NULL;
    return e->cep[id];
}

void vfw_cm_emit(struct vfw_engine *e, enum vfw_cm_event_type t, uint32_t cep,
                 uint32_t qp, int err, const uint8_t *pdata, uint16_t plen)
{
    if (!e->ops.cm_event)
        return;
    struct vfw_cm_event ev = { .type = t, .cep_id = cep, .qp_id = qp,
                               .err = err, .pdata = pdata,
                               .pdata_len = pdata ? plen : 0 };
    struct vfw_qp *q = vfw_qp_get(e, qp);
    struct vfw_cep *c = vfw_cep_get(e, cep);
    if (q) {
        ev.ord = q->ord;
        ev.ird = q->ird;
    }
    if (c) {
        ev.mpa_rev = c->peer_rev;
        if (t == VFW_CM_CONNECT_REQUEST) {
            ev.ord = c->peer_ord & MPA_V2_MASK;
            ev.ird = c->peer_ird & MPA_V2_MASK;
        }
    }
    e->ops.cm_event(e->ops.opaque, &ev);
}

int vfw_cep_create(struct vfw_engine *e, const struct vfw_llp_ops *llp,
                   void *conn, int active, uint32_t *cep_id)
{
    if (!e || !llp || !conn || !cep_id || !llp->send_record ||
        !llp->send_space || !llp->mss || !llp->recv_resume || !llp->close ||
        !llp->abort)
        return -EINVAL;
    for (uint32_t i = 1; i <= e->max_cep; i++) {
        struct vfw_cep *c = e->cep[i];
        if (c && c->state != CEP_FREE)
            continue;
        if (!c) {
            c = calloc(1, sizeof(*c));
            if (!c)
                return -ENOMEM;
            e->cep[i] = c;
        }
        if (i > e->cep_hi)
            e->cep_hi = i;
        uint8_t *rxbuf = c->rxbuf;
        memset(c, 0, sizeof(*c));
        c->rxbuf = rxbuf;
        c->state = active ? CEP_INIT : CEP_REQ_WAIT;
        c->active = active != 0;
        c->llp = llp;
        c->conn = conn;
        c->deadline = e->ops.now_ns(e->ops.opaque) + VFW_MPA_TIMEOUT_NS;
        *cep_id = i;
        return 0;
    }
    return -ENOSPC;
}

/* Drop the CEP; the LLP conn is already gone or aborted by the caller. */
void vfw_cep_release(struct vfw_engine *e, uint32_t cep_id)
{
    struct vfw_cep *c = vfw_cep_get(e, cep_id);
    if (!c)
        return;
    struct vfw_qp *qp = vfw_qp_get(e, c->qp);
    if (qp && qp->cep == cep_id)
        qp->cep = 0;
    c->state = CEP_FREE;
    c->conn = NULL;
    c->llp = NULL;
    c->qp = 0;
    c->rxlen = 0;
}

void vfw_cep_free_all(struct vfw_engine *e)
{
    for (uint32_t i = 1; i <= e->cep_hi; i++) {
        struct vfw_cep *c = e->cep[i];
        if (!c)
            continue;
        if (c->state != CEP_FREE && c->conn && c->llp)
            c->llp->abort(c->conn);
        free(c->rxbuf);
        free(c);
    }
}

/* The MPA handshake timer: a CEP still handshaking at its deadline is
 * aborted with CONNECT_ERROR (-ETIMEDOUT). */
void vfw_cm_poll(struct vfw_engine *e, uint64_t now)
{
    for (uint32_t i = 1; i <= e->cep_hi; i++) {
        struct vfw_cep *c = e->cep[i];
        if (!c)
            continue;
        bool handshaking = c->state == CEP_REQ_WAIT ||
                           c->state == CEP_REP_WAIT ||
                           c->state == CEP_REQ_RCVD;
        if (!handshaking || now < c->deadline)
            continue;
        uint32_t qp_id = c->qp;
        c->llp->abort(c->conn);
        vfw_cm_emit(e, VFW_CM_CONNECT_ERROR, i, qp_id, -ETIMEDOUT, NULL, 0);
        vfw_cep_release(e, i);
        struct vfw_qp *qp = vfw_qp_get(e, qp_id);
        if (qp)
            vfw_qp_error(e, qp, qp_id, false);
    }
}

/* ---- the MPA handshake ----------------------------------------------------*/
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
    vfw_st_be16(buf + 18, total);
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

/* What CONNECT and ACCEPT share: the CEP (of the side `active` says, in
 * state `want`) and an idle, unbound QP are looked up, the parameters
 * checked, and the QP bound to the CEP. 0, or the errno either returns. */
static int cep_bind_qp(struct vfw_engine *e, uint32_t cep_id, uint32_t qp_id,
                       const struct vfw_conn_param *p, bool active, int want,
                       struct vfw_cep **cp, struct vfw_qp **qpp)
{
    struct vfw_cep *c = vfw_cep_get(e, cep_id);
    struct vfw_qp *qp = vfw_qp_get(e, qp_id);
    if (!c || !qp)
        return -ENOENT;
    if (check_param(p))
        return -EINVAL;
    if (c->active != active || (int)c->state != want ||
        qp->state != VFW_QPS_IDLE || qp->cep)
        return -EINVAL;
    *cp = c;
    *qpp = qp;
    return vfw_qp_bind(e, qp, cep_id, c->llp->mss(c->conn));
}

int vfw_connect(struct vfw_engine *e, uint32_t cep_id, uint32_t qp_id,
                const struct vfw_conn_param *p)
{
    struct vfw_cep *c;
    struct vfw_qp *qp;
    int rc = cep_bind_qp(e, cep_id, qp_id, p, true, CEP_INIT, &c, &qp);
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
        vfw_st_be16(v2, ird);
        vfw_st_be16(v2 + 2, ord);
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
    struct vfw_cep *c;
    struct vfw_qp *qp;
    int rc = cep_bind_qp(e, cep_id, qp_id, p, false, CEP_REQ_RCVD, &c, &qp);
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
        vfw_st_be16(v2, ird);
        vfw_st_be16(v2 + 2, ord);
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
    /* A Reject that did not go out (over the peer's MSS, no send space)
     * changes nothing: the request stays answerable, by an ACCEPT or a
     * Reject that fits, until the handshake timer ends it. */
    if (rc)
        return rc;
    c->state = CEP_CLOSING;
    c->close_called = true;
    c->llp->close(c->conn);
    return 0;
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
    uint16_t pdl = vfw_ld_be16(h + 18);
    const uint8_t *pd = h + MPA_HDR_LEN;
    c->peer_flags = h[16];
    c->peer_rev = h[17];
    /* rev 2 without H: plain private data, no IRD/ORD header (RFC 6581) */
    if (c->peer_rev == 2 && (h[16] & MPA_FLAG_H) && pdl >= MPA_V2_HDR) {
        c->peer_v2hdr = true;
        c->peer_ird = vfw_ld_be16(pd);
        c->peer_ord = vfw_ld_be16(pd + 2);
        pd += MPA_V2_HDR;
        pdl -= MPA_V2_HDR;
    }
    if (!c->active) {
        if ((h[16] & MPA_FLAG_R) || (h[16] & MPA_FLAG_M)) {
            /* Reject bit in a request, or the peer wants markers, which
             * this engine never inserts: refuse the connection. */
            c->state = CEP_REQ_RCVD;
            if (vfw_reject(e, cep_id, NULL, 0))
                hs_fail(e, cep_id, -EPROTO);   /* not even that went out */
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

/* ---- LLP upcalls ----------------------------------------------------------*/
/* Bytes of one delivery, by the CEP's state: the handshake frame is
 * gathered here, FPDUs go to mpa.c one step at a time. */
static size_t cep_rx(struct vfw_engine *e, uint32_t cep_id, const uint8_t *d,
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
                    vfw_ld_be16(c->hbuf + 18) > VFW_MAX_PDATA) {
                    hs_fail(e, cep_id, -EPROTO);
                    return len;
                }
            }
            uint32_t need = MPA_HDR_LEN + vfw_ld_be16(c->hbuf + 18);
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
        case CEP_CLOSING:
            off += vfw_mpa_rx_step(e, cep_id, c, d + off, rem);
            break;
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
size_t vfw_llp_recv(struct vfw_engine *e, uint32_t cep_id,
                    const uint8_t *data, size_t len)
{
    struct vfw_cep *c = vfw_cep_get(e, cep_id);
    if (!c || !data)
        return len;           /* nobody to deliver to: drop */
    if (c->in_rx) {
        c->rx_again = true;
        return 0;
    }
    c->in_rx = true;
    size_t n = cep_rx(e, cep_id, data, len);
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

void vfw_llp_writable(struct vfw_engine *e, uint32_t cep_id)
{
    struct vfw_cep *c = vfw_cep_get(e, cep_id);
    if (c && c->qp)
        vfw_rdmap_tx(e, c->qp);
}

void vfw_llp_closed(struct vfw_engine *e, uint32_t cep_id, int err)
{
    struct vfw_cep *c = vfw_cep_get(e, cep_id);
    if (!c)
        return;
    uint32_t qp_id = c->qp;
    struct vfw_qp *qp = vfw_qp_get(e, qp_id);
    if (err == 0 && !c->close_called) {
        /* Peer FIN while we are open: close our side; the final closed
         * upcall follows. The QP stops here (graceful if CLOSING). */
        c->close_called = true;
        c->llp->close(c->conn);
        if (qp && qp->state == VFW_QPS_RTS)
            qp->state = VFW_QPS_CLOSING;
        return;
    }
    if (c->state != CEP_ESTABLISHED && c->state != CEP_CLOSING && c->active &&
        qp_id)
        vfw_cm_emit(e, VFW_CM_CONNECT_ERROR, cep_id, qp_id,
                    err ? err : -ECONNRESET, NULL, 0);
    vfw_cep_release(e, cep_id);
    if (qp) {
        if (qp->state == VFW_QPS_CLOSING && err == 0) {
            vfw_qp_close_idle(e, qp, qp_id);
        } else if (qp->state != VFW_QPS_IDLE) {
            vfw_qp_error(e, qp, qp_id, false);
        }
        vfw_cm_emit(e, VFW_CM_CLOSED, cep_id, qp_id, err, NULL, 0);
    }
}

/* ---- a vfw_tcp_conn as the LLP --------------------------------------------*/
static int l_send(void *o, const uint8_t *d, size_t n)
{
    return vfw_tcp_send_record(((struct vfw_cm_tcp *)o)->c, d, n);
}
static size_t l_space(void *o)
{
    return vfw_tcp_send_space(((struct vfw_cm_tcp *)o)->c);
}
static uint16_t l_mss(void *o)
{
    return vfw_tcp_mss(((struct vfw_cm_tcp *)o)->c);
}
static void l_resume(void *o)
{
    vfw_tcp_recv_resume(((struct vfw_cm_tcp *)o)->c);
}
static void l_close(void *o)
{
    struct vfw_cm_tcp *t = o;
    t->close_called = true;
    vfw_tcp_close(t->c);
}
static void l_abort(void *o)
{
    struct vfw_cm_tcp *t = o;
    vfw_tcp_abort(t->c);          /* RST; no upcall follows */
    t->aborted(t);
}
static uint8_t *l_reserve(void *o, size_t n)
{
    return vfw_tcp_send_reserve(((struct vfw_cm_tcp *)o)->c, n);
}
static int l_commit(void *o, size_t n)
{
    return vfw_tcp_send_commit(((struct vfw_cm_tcp *)o)->c, n);
}
const struct vfw_llp_ops vfw_cm_tcp_llp = { l_send, l_space, l_mss, l_resume,
                                            l_close, l_abort, l_reserve,
                                            l_commit };

size_t vfw_cm_tcp_recv(struct vfw_tcp_conn *c, const uint8_t *d, size_t n,
                       void *user)
{
    struct vfw_cm_tcp *t = user;
    (void)c;
    return vfw_llp_recv(t->e, t->cep, d, n);
}

void vfw_cm_tcp_writable(struct vfw_tcp_conn *c, void *user)
{
    struct vfw_cm_tcp *t = user;
    (void)c;
    vfw_llp_writable(t->e, t->cep);
}

void vfw_cm_tcp_closed(struct vfw_cm_tcp *t, int err)
{
    bool final = err < 0 || t->close_called;
    vfw_llp_closed(t->e, t->cep, err);
    if (!final) {
        /* Peer FIN while open: the engine answered with llp->close. The
         * TCP stack reports a connection's end once, so this close is the
         * last word on the conn: finish the CEP now. */
        vfw_llp_closed(t->e, t->cep, 0);
    }
}

/* ---- vfw_iwarp_tcp.h: connect and listen on the adapter's TCP -------------*/
/* One link per TCP connection, freed on the final closed upcall or on
 * abort. */
struct link {
    struct vfw_cm_tcp t;          /* first: the TCP callbacks' user */
    uint32_t qp;
    struct vfw_conn_param param;
};
_Static_assert(offsetof(struct link, t) == 0, "link head first");

static void link_aborted(struct vfw_cm_tcp *t)
{
    free((struct link *)t);     /* no upcall follows an abort */
}

static void cb_connected(struct vfw_tcp_conn *c, int err, void *user)
{
    struct link *l = user;
    (void)c;
    if (err < 0) {
        vfw_cm_emit(l->t.e, VFW_CM_CONNECT_ERROR, 0, l->qp, err, NULL, 0);
        free(l);
        return;
    }
    int rc = vfw_cep_create(l->t.e, &vfw_cm_tcp_llp, l, 1, &l->t.cep);
    if (rc == 0)
        rc = vfw_connect(l->t.e, l->t.cep, l->qp, &l->param);
    if (rc) {
        if (l->t.cep)
            vfw_cep_release(l->t.e, l->t.cep);
        vfw_cm_emit(l->t.e, VFW_CM_CONNECT_ERROR, 0, l->qp, rc, NULL, 0);
        vfw_tcp_abort(l->t.c);
        free(l);
    }
}

static void cb_closed(struct vfw_tcp_conn *c, int err, void *user)
{
    struct link *l = user;
    (void)c;
    vfw_cm_tcp_closed(&l->t, err);
    free(l);
}

static const struct vfw_tcp_cb tcp_cb = { cb_connected, vfw_cm_tcp_recv,
                                          vfw_cm_tcp_writable, cb_closed };

int vfw_iwarp_tcp_connect_from(struct vfw_engine *e, struct vfw_tcp_stack *s,
                               uint32_t rip, uint16_t rport, uint16_t lport,
                               uint32_t qp_id, const struct vfw_conn_param *p,
                               uint16_t *lport_used)
{
    if (!e || !s || !p || !vfw_qp_get(e, qp_id))
        return -EINVAL;
    struct link *l = calloc(1, sizeof(*l));
    if (!l)
        return -ENOMEM;
    l->t.e = e;
    l->t.aborted = link_aborted;
    l->qp = qp_id;
    l->param = *p;
    int err = 0;
    l->t.c = vfw_tcp_connect(s, rip, rport, lport, &tcp_cb, l, &err);
    if (!l->t.c) {
        free(l);
        return err ? err : -ENOMEM;
    }
    /* the SYN is only queued: no upcall has run, the conn is still ours */
    if (lport_used)
        vfw_tcp_conn_addr(l->t.c, NULL, lport_used, NULL, NULL);
    return 0;
}

int vfw_iwarp_tcp_connect(struct vfw_engine *e, struct vfw_tcp_stack *s,
                          uint32_t rip, uint16_t rport, uint32_t qp_id,
                          const struct vfw_conn_param *p)
{
    return vfw_iwarp_tcp_connect_from(e, s, rip, rport, 0, qp_id, p, NULL);
}

static const struct vfw_tcp_cb *on_accept(struct vfw_tcp_conn *c,
                                          void *listen_user, void **conn_user)
{
    struct vfw_engine *e = listen_user;
    struct link *l = calloc(1, sizeof(*l));
    if (!l)
        return NULL;
    l->t.e = e;
    l->t.c = c;
    l->t.aborted = link_aborted;
    if (vfw_cep_create(e, &vfw_cm_tcp_llp, l, 0, &l->t.cep)) {
        free(l);
        return NULL;
    }
    *conn_user = l;
    return &tcp_cb;
}

int vfw_iwarp_tcp_listen(struct vfw_engine *e, struct vfw_tcp_stack *s,
                         uint16_t port)
{
    if (!e || !s)
        return -EINVAL;
    return vfw_tcp_listen(s, port, on_accept, e);
}
