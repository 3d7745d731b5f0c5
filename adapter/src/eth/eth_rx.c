/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * eth_rx.c - frames into a function's RX ring (see vfw_dataplane.h; the
 * files are listed in eth_internal.h): what the switch delivers to the PF
 * or a VF (eth_tx.c, deliver) and a representor's xmit to its VF.
 * 2.0: the function's RDMA engine sees a frame first (ops->rx_steer); a
 * VF's multicast filter decides what reaches it; in switchdev mode a VF's
 * slow path reaches the PF tagged with the VF.
 * RX: one frame per descriptor; a frame larger than the posted buffer, or a
 * buffer the DMA refuses, consumes the descriptor with VFW_RXD_ERR_BUF.
 * Trust and bounds: the descriptor's buffer address and length are the
 * guest's: at most its length is written, through ops->dma_write only; an
 * empty or stopped ring drops the frame (RX_NO_BUF); a descriptor fetch or
 * write-back the DMA refuses stops the ring (VFW_RING_STS_ERR).
 */
#include <string.h>

#include "eth_internal.h"

/* Write a frame to fn's RX ring. src_vf >= 0 (switchdev, PF only): the
 * frame is VF src_vf's slow path, for its representor: tagged in the
 * descriptor, and never the PF's own RDMA engine's. */
void eth_rx_frame(struct vfw_dp *dp, unsigned fn, const uint8_t *frame,
                  size_t len, int src_vf)
{
    struct dp_fn *f = &dp->fn[fn];
    struct dp_ring *r = &f->rx;
    uint8_t raw[VFW_DESC_SIZE];
    uint64_t addr;
    uint16_t buf_len;

    /* 2.0: the function's RDMA engine sees the frame first (its flow
     * table decides); what it takes is fn's RX all the same */
    if (src_vf < 0 && dp->ops->rx_steer &&
        dp->ops->rx_steer(dp->ctx, fn, frame, len)) {
        f->stat[VFW_STAT_RX_PKTS]++;
        f->stat[VFW_STAT_RX_BYTES] += len;
        return;
    }
    if (!ring_on(r) || r->head == r->tail) {
        f->stat[VFW_STAT_RX_NO_BUF]++;
        return;
    }
    if (!fetch(dp, fn, r, r->head, raw)) {
        f->stat[VFW_STAT_RX_NO_BUF]++;
        return;
    }
    addr = vfw_ld_le64(raw);
    buf_len = vfw_ld_le16(raw + 8);
    memset(raw + 8, 0, 8);
    raw[10] = VFW_RXD_STS_DD;
    if (len > buf_len || dp->ops->dma_write(dp->ctx, fn, addr, frame, len)) {
        raw[11] = VFW_RXD_ERR_BUF;
        f->stat[VFW_STAT_RX_DESC_ERR]++;
    } else {
        raw[8] = (uint8_t)len;
        raw[9] = (uint8_t)(len >> 8);
        raw[10] |= VFW_RXD_STS_EOP;
        if (src_vf >= 0) {
            raw[10] |= VFW_RXD_STS_SRC;
            raw[14] = (uint8_t)src_vf;
            raw[15] = (uint8_t)(src_vf >> 8);
        }
        f->stat[VFW_STAT_RX_PKTS]++;
        f->stat[VFW_STAT_RX_BYTES] += len;
    }
    if (dp->ops->dma_write(dp->ctx, fn, r->base + (uint64_t)r->head *
                           VFW_DESC_SIZE + 8, raw + 8, 8)) {
        r->status |= VFW_RING_STS_ERR;
        return;
    }
    r->head = (r->head + 1) & (r->len - 1);
    eth_fire(dp, fn, r->ctrl, &r->irq_pending);
}

/* The VF's RX filter for multicast (broadcast always passes): the
 * addresses the PF granted, or all of them with allmulti/promiscuous,
 * which count only while the VF is trusted (revoking trust revokes them
 * at once, whatever the PF driver does next). */
static bool vf_rx_accepts(const struct vfw_dp_vf_cfg *c, const uint8_t *frame)
{
    static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };

    if (!(frame[0] & 1) || !memcmp(frame, bcast, 6) ||
        (c->trust && (c->rx_mode & (VFW_RXM_ALLMULTI | VFW_RXM_PROMISC)))) {
        return true;
    }
    for (unsigned i = 0; i < c->mc_count && i < VFW_MC_FILTER_MAX; i++) {
        if (!memcmp(frame, c->mc[i], 6)) {
            return true;
        }
    }
    return false;
}

/* The VF's multicast filter, then its ring. */
void eth_rx_vf(struct vfw_dp *dp, unsigned vf, const uint8_t *frame,
               size_t len)
{
    if (vf_rx_accepts(&dp->cfg[vf], frame)) {
        eth_rx_frame(dp, VFW_DP_FN_VF(vf), frame, len, -1);
    } else {
        dp->fn[VFW_DP_FN_VF(vf)].stat[VFW_STAT_RX_FILTERED]++;
    }
}
