// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfwarp_vf: TX/RX descriptor rings (include/vfwarp/vfwarp_ring.h), NAPI.
 *
 * One TX and one RX ring per VF. TX: one descriptor per frame (the netdev
 * does not advertise scatter-gather), the doorbell is the ring's TAIL. RX:
 * one VFW_VF_RX_BUF buffer per descriptor; the driver keeps one slot empty
 * so TAIL == HEAD always means "no buffers". Both ring vectors schedule the
 * same NAPI context; the handler masks the rings' interrupts (IRQ_EN) and the
 * poll re-enables them, and the device raises anything that completed while
 * they were masked.
 */
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/pci.h>

#include "vf.h"

static u32 ring_ctrl(unsigned int vec, bool irq)
{
	return VFW_RING_CTRL_ENABLE | (irq ? VFW_RING_CTRL_IRQ_EN : 0) |
	       (vec << VFW_RING_CTRL_VEC_SHIFT);
}

void vfw_vf_irq_enable(struct vfw_vf *vf, bool on)
{
	vfw_wr(vf, VFW_REG_RXQ0 + VFW_RING_CTRL, ring_ctrl(VFW_VF_VEC_RX, on));
	vfw_wr(vf, VFW_REG_TXQ0 + VFW_RING_CTRL, ring_ctrl(VFW_VF_VEC_TX, on));
}

static int ring_alloc(struct vfw_vf *vf, struct vfw_vf_ring *r)
{
	struct device *dev = &vf->pdev->dev;

	r->count = VFW_VF_RING_ENTRIES;
	r->next_to_use = 0;
	r->next_to_clean = 0;
	r->desc = dma_alloc_coherent(dev, r->count * VFW_DESC_SIZE,
				     &r->desc_dma, GFP_KERNEL);
	r->skb = kcalloc(r->count, sizeof(*r->skb), GFP_KERNEL);
	r->buf_dma = kcalloc(r->count, sizeof(*r->buf_dma), GFP_KERNEL);
	r->buf_len = kcalloc(r->count, sizeof(*r->buf_len), GFP_KERNEL);
	if (!r->desc || !r->skb || !r->buf_dma || !r->buf_len)
		return -ENOMEM;
	return 0;
}

static void ring_free(struct vfw_vf *vf, struct vfw_vf_ring *r,
		      enum dma_data_direction dir)
{
	struct device *dev = &vf->pdev->dev;
	u32 i;

	for (i = 0; r->skb && i < r->count; i++) {
		if (!r->skb[i])
			continue;
		dma_unmap_single(dev, r->buf_dma[i], r->buf_len[i], dir);
		dev_kfree_skb_any(r->skb[i]);
		r->skb[i] = NULL;
	}
	if (r->desc)
		dma_free_coherent(dev, r->count * VFW_DESC_SIZE, r->desc,
				  r->desc_dma);
	kfree(r->skb);
	kfree(r->buf_dma);
	kfree(r->buf_len);
	memset(r, 0, sizeof(*r));
}

static void ring_program(struct vfw_vf *vf, u32 base, struct vfw_vf_ring *r,
			 unsigned int vec)
{
	vfw_wr(vf, base + VFW_RING_CTRL, 0);
	vfw_wr(vf, base + VFW_RING_BASE_LO, lower_32_bits(r->desc_dma));
	vfw_wr(vf, base + VFW_RING_BASE_HI, upper_32_bits(r->desc_dma));
	vfw_wr(vf, base + VFW_RING_LEN, r->count);
	vfw_wr(vf, base + VFW_RING_CTRL, ring_ctrl(vec, false));
}

/* Give the device every free RX slot but one. */
static void rx_refill(struct vfw_vf *vf)
{
	struct vfw_vf_ring *r = &vf->rx;
	struct device *dev = &vf->pdev->dev;
	u32 mask = r->count - 1;
	bool posted = false;

	while (((r->next_to_use + 1) & mask) != r->next_to_clean) {
		struct vfw_rx_desc *d = (struct vfw_rx_desc *)r->desc +
					r->next_to_use;
		struct sk_buff *skb;
		dma_addr_t dma;

		skb = netdev_alloc_skb_ip_align(vf->netdev, VFW_VF_RX_BUF);
		if (!skb) {
			vf->stats.rx_alloc_fail++;
			break;
		}
		dma = dma_map_single(dev, skb->data, VFW_VF_RX_BUF,
				     DMA_FROM_DEVICE);
		if (dma_mapping_error(dev, dma)) {
			dev_kfree_skb_any(skb);
			vf->stats.rx_alloc_fail++;
			break;
		}
		r->skb[r->next_to_use] = skb;
		r->buf_dma[r->next_to_use] = dma;
		r->buf_len[r->next_to_use] = VFW_VF_RX_BUF;
		d->addr = cpu_to_le64(dma);
		d->buf_len = cpu_to_le16(VFW_VF_RX_BUF);
		d->status = 0;
		d->err = 0;
		d->vlan = 0;
		d->rsvd = 0;
		r->next_to_use = (r->next_to_use + 1) & mask;
		posted = true;
	}
	if (posted) {
		/* Descriptors visible before the doorbell. */
		wmb();
		vfw_wr(vf, VFW_REG_RXQ0 + VFW_RING_TAIL, r->next_to_use);
	}
}

int vfw_vf_rings_up(struct vfw_vf *vf)
{
	int err;

	err = ring_alloc(vf, &vf->tx);
	if (!err)
		err = ring_alloc(vf, &vf->rx);
	if (err) {
		ring_free(vf, &vf->tx, DMA_TO_DEVICE);
		ring_free(vf, &vf->rx, DMA_FROM_DEVICE);
		return err;
	}
	ring_program(vf, VFW_REG_TXQ0, &vf->tx, VFW_VF_VEC_TX);
	ring_program(vf, VFW_REG_RXQ0, &vf->rx, VFW_VF_VEC_RX);
	if (!(vfw_rd(vf, VFW_REG_TXQ0 + VFW_RING_STATUS) & VFW_RING_STS_ENABLED) ||
	    !(vfw_rd(vf, VFW_REG_RXQ0 + VFW_RING_STATUS) & VFW_RING_STS_ENABLED)) {
		netdev_err(vf->netdev, "device refused the rings\n");
		vfw_vf_rings_down(vf);
		return -EIO;
	}
	rx_refill(vf);
	vf->rings_up = true;
	return 0;
}

void vfw_vf_rings_down(struct vfw_vf *vf)
{
	/* The device stops using both rings before their memory goes. */
	vfw_wr(vf, VFW_REG_TXQ0 + VFW_RING_CTRL, 0);
	vfw_wr(vf, VFW_REG_RXQ0 + VFW_RING_CTRL, 0);
	vfw_rd(vf, VFW_REG_MAGIC);
	ring_free(vf, &vf->tx, DMA_TO_DEVICE);
	ring_free(vf, &vf->rx, DMA_FROM_DEVICE);
	vf->rings_up = false;
}

static u32 tx_free(const struct vfw_vf_ring *r)
{
	return (r->next_to_clean - r->next_to_use - 1) & (r->count - 1);
}

netdev_tx_t vfw_vf_xmit(struct sk_buff *skb, struct net_device *netdev)
{
	struct vfw_vf *vf = netdev_priv(netdev);
	struct vfw_vf_ring *r = &vf->tx;
	struct device *dev = &vf->pdev->dev;
	struct vfw_tx_desc *d;
	dma_addr_t dma;
	u32 i;

	if (skb_put_padto(skb, ETH_ZLEN)) {
		vf->stats.tx_dropped++;
		return NETDEV_TX_OK;
	}
	if (skb_linearize(skb) || skb->len > VFW_FRAME_MAX) {
		vf->stats.tx_dropped++;
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	if (!tx_free(r)) {
		netif_stop_queue(netdev);
		vf->stats.tx_busy++;
		return NETDEV_TX_BUSY;
	}
	dma = dma_map_single(dev, skb->data, skb->len, DMA_TO_DEVICE);
	if (dma_mapping_error(dev, dma)) {
		vf->stats.tx_dropped++;
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	i = r->next_to_use;
	r->skb[i] = skb;
	r->buf_dma[i] = dma;
	r->buf_len[i] = skb->len;
	d = (struct vfw_tx_desc *)r->desc + i;
	d->addr = cpu_to_le64(dma);
	d->len = cpu_to_le16(skb->len);
	d->flags = VFW_TXD_EOP;
	d->status = 0;
	d->vlan = 0;
	d->rsvd = 0;
	r->next_to_use = (i + 1) & (r->count - 1);
	skb_tx_timestamp(skb);
	if (tx_free(r) < 2) {
		netif_stop_queue(netdev);
		/* tx_clean() may have freed slots before it saw the stop. */
		smp_mb();
		if (tx_free(r) >= 2)
			netif_start_queue(netdev);
	}
	if (!netdev_xmit_more() || netif_queue_stopped(netdev)) {
		wmb();
		vfw_wr(vf, VFW_REG_TXQ0 + VFW_RING_TAIL, r->next_to_use);
	}
	return NETDEV_TX_OK;
}

static void tx_clean(struct vfw_vf *vf, int budget)
{
	struct vfw_vf_ring *r = &vf->tx;
	struct device *dev = &vf->pdev->dev;
	u32 mask = r->count - 1;

	while (r->next_to_clean != r->next_to_use) {
		u32 i = r->next_to_clean;
		struct vfw_tx_desc *d = (struct vfw_tx_desc *)r->desc + i;
		u8 status = READ_ONCE(d->status);

		if (!(status & VFW_TXD_STS_DD))
			break;
		dma_rmb();
		dma_unmap_single(dev, r->buf_dma[i], r->buf_len[i],
				 DMA_TO_DEVICE);
		if (status & VFW_TXD_STS_ERR) {
			vf->stats.tx_errors++;
		} else if (status & VFW_TXD_STS_DROP) {
			vf->stats.tx_dropped++;
		} else {
			vf->stats.tx_packets++;
			vf->stats.tx_bytes += r->buf_len[i];
		}
		napi_consume_skb(r->skb[i], budget);
		r->skb[i] = NULL;
		r->next_to_clean = (i + 1) & mask;
	}
	smp_mb();
	if (netif_queue_stopped(vf->netdev) && tx_free(r) >= r->count / 4)
		netif_wake_queue(vf->netdev);
}

static int rx_clean(struct vfw_vf *vf, int budget)
{
	struct vfw_vf_ring *r = &vf->rx;
	struct device *dev = &vf->pdev->dev;
	u32 mask = r->count - 1;
	int done = 0;

	while (done < budget && r->next_to_clean != r->next_to_use) {
		u32 i = r->next_to_clean;
		struct vfw_rx_desc *d = (struct vfw_rx_desc *)r->desc + i;
		u8 status = READ_ONCE(d->status);
		struct sk_buff *skb;
		u16 len;

		if (!(status & VFW_RXD_STS_DD))
			break;
		dma_rmb();
		len = le16_to_cpu(d->buf_len);
		skb = r->skb[i];
		r->skb[i] = NULL;
		dma_unmap_single(dev, r->buf_dma[i], r->buf_len[i],
				 DMA_FROM_DEVICE);
		r->next_to_clean = (i + 1) & mask;
		done++;
		if (d->err || !(status & VFW_RXD_STS_EOP) || len < ETH_HLEN ||
		    len > VFW_VF_RX_BUF) {
			vf->stats.rx_errors++;
			dev_kfree_skb_any(skb);
			continue;
		}
		skb_put(skb, len);
		skb->protocol = eth_type_trans(skb, vf->netdev);
		vf->stats.rx_packets++;
		vf->stats.rx_bytes += len;
		napi_gro_receive(&vf->napi, skb);
	}
	rx_refill(vf);
	return done;
}

int vfw_vf_poll(struct napi_struct *napi, int budget)
{
	struct vfw_vf *vf = container_of(napi, struct vfw_vf, napi);
	int done;

	tx_clean(vf, budget);
	done = rx_clean(vf, budget);
	if (done < budget && napi_complete_done(napi, done))
		vfw_vf_irq_enable(vf, true);
	return min(done, budget);
}
