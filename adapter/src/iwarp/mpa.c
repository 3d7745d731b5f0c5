/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mpa.c - MPA (RFC 5044) on the data path: FPDU framing, ULPDU_Length |
 * ULPDU | pad to 4 | CRC32c, and its receive side (deframing in place or
 * reassembly in the CEP's buffer, CRC check, hand-off to DDP). Markers are
 * always negotiated off (cm.c refuses a peer that requires them). One FPDU
 * per LLP record, and an FPDU never exceeds the MSS (RFC 5044 sec. 8,
 * "FPDU alignment"). The connection setup (Request/Reply, RFC 6581's
 * enhanced setup) is cm.c's.
 *
 * Trust: ULPDU_Length is the peer's. The FPDU's length follows from it,
 * at most MPA_MAX_FPDU (the reassembly buffer's size), and no byte past it
 * is taken; a CRC mismatch terminates the QP (MPA error 0x02).
 */
#include <string.h>
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
    vfw_st_be16(f, (uint16_t)ulen);
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
    uint16_t ulen = vfw_ld_be16(f);
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

/* One step of FPDU receive on an ESTABLISHED or CLOSING CEP (cm.c's
 * receive loop): a whole FPDU at d is taken in place, otherwise the bytes
 * of one FPDU are gathered in c->rxbuf (a partial FPDU waits there for the
 * next delivery). Returns the bytes consumed; all of them (rem) when the
 * CEP has no receive buffer: they are dropped. */
size_t vfw_mpa_rx_step(struct vfw_engine *e, uint32_t cep_id,
                       struct vfw_cep *c, const uint8_t *d, size_t rem)
{
    if (!c->rxbuf)
        return rem;
    if (c->rxlen == 0 && rem >= 2) {
        uint32_t fl = fpdu_len(vfw_ld_be16(d));
        if (rem >= fl) {        /* whole FPDU in place: no copy */
            rx_fpdu(e, cep_id, d, fl);
            return fl;
        }
    }
    uint32_t need = c->rxlen < 2 ? 2 : fpdu_len(vfw_ld_be16(c->rxbuf));
    uint32_t take = need - c->rxlen;
    if (take > rem)
        take = (uint32_t)rem;
    memcpy(c->rxbuf + c->rxlen, d, take);
    c->rxlen += take;
    if (c->rxlen >= 2 && c->rxlen == fpdu_len(vfw_ld_be16(c->rxbuf))) {
        c->rxlen = 0;
        rx_fpdu(e, cep_id, c->rxbuf, fpdu_len(vfw_ld_be16(c->rxbuf)));
    }
    return take;
}
