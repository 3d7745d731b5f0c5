// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfw_eth: TX/RX descriptor rings (include/vfwarp/vfwarp_ring.h), NAPI,
 * link and counters of one vfwarp function, shared by the PF and VF drivers.
 *
 * One RX ring and up to VFW_TXQ_MAX TX rings per function, one per netdev
 * TX queue (hw 2.5; a device before 2.5 has one). TX: one descriptor per
 * frame (the netdev does not advertise scatter-gather), the doorbell is
 * the ring's TAIL. RX: one buffer per descriptor (rx_buf, sized for the MTU); the
 * driver keeps one slot empty so TAIL == HEAD always means "no buffers".
 * Every TX ring raises the TX vector; both vectors schedule the same NAPI context; the handler masks the
 * rings' interrupts (IRQ_EN) and the poll re-enables them, and the device
 * raises anything that completed while they were masked.
 */
#include <linux/dma-mapping.h>
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/pci.h>

#include "vfw_eth.h"

static u32 ring_ctrl(unsigned int vec, bool irq)
{
	return VFW_RING_CTRL_ENABLE | (irq ? VFW_RING_CTRL_IRQ_EN : 0) |
	       (vec << VFW_RING_CTRL_VEC_SHIFT);
}

void vfw_eth_irq_enable(struct vfw_eth *eth, bool on)
{
	unsigned int q;

	vfw_eth_wr(eth, VFW_REG_RXQ0 + VFW_RING_CTRL,
		   ring_ctrl(eth->vec_rx, on));
	for (q = 0; q < eth->num_txq; q++)
		vfw_eth_wr(eth, VFW_REG_TXQ(q) + VFW_RING_CTRL,
			   ring_ctrl(eth->vec_tx, on));
}

static int ring_alloc(struct vfw_eth *eth, struct vfw_eth_ring *r)
{
	struct device *dev = &eth->pdev->dev;

	r->count = VFW_ETH_RING_ENTRIES;
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

static void ring_free(struct vfw_eth *eth, struct vfw_eth_ring *r,
		      enum dma_data_direction dir)
{
	struct device *dev = &eth->pdev->dev;
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

static void ring_program(struct vfw_eth *eth, u32 base,
			 struct vfw_eth_ring *r, unsigned int vec)
{
	vfw_eth_wr(eth, base + VFW_RING_CTRL, 0);
	vfw_eth_wr(eth, base + VFW_RING_BASE_LO, lower_32_bits(r->desc_dma));
	vfw_eth_wr(eth, base + VFW_RING_BASE_HI, upper_32_bits(r->desc_dma));
	vfw_eth_wr(eth, base + VFW_RING_LEN, r->count);
	vfw_eth_wr(eth, base + VFW_RING_CTRL, ring_ctrl(vec, false));
}

/* Give the device every free RX slot but one. */
static void rx_refill(struct vfw_eth *eth)
{
	struct vfw_eth_ring *r = &eth->rx;
	struct device *dev = &eth->pdev->dev;
	u32 mask = r->count - 1;
	bool posted = false;

	while (((r->next_to_use + 1) & mask) != r->next_to_clean) {
		struct vfw_rx_desc *d = (struct vfw_rx_desc *)r->desc +
					r->next_to_use;
		struct sk_buff *skb;
		dma_addr_t dma;

		skb = netdev_alloc_skb_ip_align(eth->netdev, eth->rx_buf);
		if (!skb) {
			eth->stats.rx_alloc_fail++;
			break;
		}
		dma = dma_map_single(dev, skb->data, eth->rx_buf,
				     DMA_FROM_DEVICE);
		if (dma_mapping_error(dev, dma)) {
			dev_kfree_skb_any(skb);
			eth->stats.rx_alloc_fail++;
			break;
		}
		r->skb[r->next_to_use] = skb;
		r->buf_dma[r->next_to_use] = dma;
		r->buf_len[r->next_to_use] = eth->rx_buf;
		d->addr = cpu_to_le64(dma);
		d->buf_len = cpu_to_le16(eth->rx_buf);
		d->status = 0;
		d->err = 0;
		d->vlan = 0;
		d->src_port = 0;
		r->next_to_use = (r->next_to_use + 1) & mask;
		posted = true;
	}
	if (posted) {
		/* Descriptors visible before the doorbell. */
		wmb();
		vfw_eth_wr(eth, VFW_REG_RXQ0 + VFW_RING_TAIL, r->next_to_use);
	}
}

static void rings_free(struct vfw_eth *eth)
{
	unsigned int q;

	for (q = 0; q < VFW_TXQ_MAX; q++)
		ring_free(eth, &eth->tx[q], DMA_TO_DEVICE);
	ring_free(eth, &eth->rx, DMA_FROM_DEVICE);
}

int vfw_eth_rings_up(struct vfw_eth *eth)
{
	unsigned int q;
	bool ok;
	int err;

	/* One frame per RX buffer (the device does not chain them): 2 KiB up
	 * to a 1500 MTU, a whole VFW_FRAME_MAX frame above it. */
	eth->rx_buf = eth->netdev->mtu <= ETH_DATA_LEN ? VFW_ETH_RX_BUF :
						       VFW_FRAME_MAX;
	err = ring_alloc(eth, &eth->rx);
	for (q = 0; !err && q < eth->num_txq; q++)
		err = ring_alloc(eth, &eth->tx[q]);
	if (err) {
		rings_free(eth);
		return err;
	}
	ok = true;
	for (q = 0; q < eth->num_txq; q++) {
		ring_program(eth, VFW_REG_TXQ(q), &eth->tx[q], eth->vec_tx);
		ok &= !!(vfw_eth_rd(eth, VFW_REG_TXQ(q) + VFW_RING_STATUS) &
			 VFW_RING_STS_ENABLED);
	}
	ring_program(eth, VFW_REG_RXQ0, &eth->rx, eth->vec_rx);
	if (!ok || !(vfw_eth_rd(eth, VFW_REG_RXQ0 + VFW_RING_STATUS) &
		     VFW_RING_STS_ENABLED)) {
		netdev_err(eth->netdev, "device refused the rings\n");
		vfw_eth_rings_down(eth);
		return -EIO;
	}
	rx_refill(eth);
	spin_lock_bh(&eth->tx_lock);
	eth->rings_up = true;
	spin_unlock_bh(&eth->tx_lock);
	return 0;
}

void vfw_eth_rings_down(struct vfw_eth *eth)
{
	unsigned int q;

	/* Representors (vfw_eth_xmit_port) post to the TX ring outside the
	 * netdev's own queue, which the core has stopped: they stop here. */
	spin_lock_bh(&eth->tx_lock);
	eth->rings_up = false;
	spin_unlock_bh(&eth->tx_lock);
	/* The device stops using the rings before their memory goes. */
	for (q = 0; q < eth->num_txq; q++)
		vfw_eth_wr(eth, VFW_REG_TXQ(q) + VFW_RING_CTRL, 0);
	vfw_eth_wr(eth, VFW_REG_RXQ0 + VFW_RING_CTRL, 0);
	vfw_eth_rd(eth, VFW_REG_MAGIC);
	rings_free(eth);
}

void vfw_eth_link_check(struct vfw_eth *eth)
{
	bool up = vfw_eth_rd(eth, VFW_REG_LINK_STATUS) & VFW_LINK_UP;

	if (up && !netif_carrier_ok(eth->netdev))
		netif_carrier_on(eth->netdev);
	else if (!up && netif_carrier_ok(eth->netdev))
		netif_carrier_off(eth->netdev);
}

irqreturn_t vfw_eth_link_irq(int irq, void *data)
{
	struct vfw_eth *eth = data;

	if (netif_running(eth->netdev))
		vfw_eth_link_check(eth);
	return IRQ_HANDLED;
}

irqreturn_t vfw_eth_ring_irq(int irq, void *data)
{
	struct vfw_eth *eth = data;

	if (!eth->rings_up)
		return IRQ_HANDLED;
	vfw_eth_irq_enable(eth, false);
	napi_schedule_irqoff(&eth->napi);
	return IRQ_HANDLED;
}

int vfw_eth_up(struct vfw_eth *eth)
{
	int err;

	err = vfw_eth_rings_up(eth);
	if (err)
		return err;
	napi_enable(&eth->napi);
	vfw_eth_irq_enable(eth, true);
	vfw_eth_wr(eth, VFW_REG_LINK_CTRL, VFW_RING_CTRL_IRQ_EN |
		   (eth->vec_link << VFW_RING_CTRL_VEC_SHIFT));
	vfw_eth_link_check(eth);
	netif_tx_start_all_queues(eth->netdev);
	return 0;
}

void vfw_eth_down(struct vfw_eth *eth)
{
	netif_tx_stop_all_queues(eth->netdev);
	netif_carrier_off(eth->netdev);
	if (!eth->rings_up)
		return;
	vfw_eth_wr(eth, VFW_REG_LINK_CTRL, 0);
	vfw_eth_irq_enable(eth, false);
	napi_disable(&eth->napi);
	vfw_eth_rings_down(eth);
}

static u32 tx_free(const struct vfw_eth_ring *r)
{
	return (r->next_to_clean - r->next_to_use - 1) & (r->count - 1);
}

void vfw_eth_init(struct vfw_eth *eth)
{
	u32 n = vfw_eth_rd(eth, VFW_REG_TXQ_NUM);

	spin_lock_init(&eth->tx_lock);
	/* a device before 2.5 reads 0 here: ring 0 only */
	n = clamp_t(u32, n, 1, min_t(u32, VFW_TXQ_MAX,
				      eth->netdev->num_tx_queues));
	eth->num_txq = n;
	if (netif_set_real_num_tx_queues(eth->netdev, n))
		eth->num_txq = eth->netdev->real_num_tx_queues;
}

/*
 * The frame's class, 0..7, read from its headers (TX VLAN offload is not
 * advertised, so a tag is in the frame): the class selector of an IP
 * frame's DSCP (dscp >> 3: EF 46 -> 5, CS6 -> 6, best effort -> 0), else
 * the 802.1p priority of a tagged frame, else skb->priority. It only
 * chooses the ring: the device classifies every frame by the PF's tables
 * (dcb app/apptrust, port VLAN qos), and what it needs from the driver is
 * that two flows of different classes do not share a ring.
 */
static unsigned int frame_class(struct sk_buff *skb)
{
	unsigned int off = ETH_HLEN, cls = skb->priority & 7;
	__be16 proto;
	u8 b[2];

	if (skb_copy_bits(skb, 12, b, 2))
		return cls;
	proto = cpu_to_be16(b[0] << 8 | b[1]);
	if (proto == htons(ETH_P_8021Q)) {
		if (skb_copy_bits(skb, 14, b, 2))
			return cls;
		cls = b[0] >> 5;		/* PCP */
		if (skb_copy_bits(skb, 16, b, 2))
			return cls;
		proto = cpu_to_be16(b[0] << 8 | b[1]);
		off += VLAN_HLEN;
	}
	if (skb_copy_bits(skb, off, b, 2))
		return cls;
	if (proto == htons(ETH_P_IP) && (b[0] >> 4) == 4)
		return b[1] >> 5;			/* TOS >> 5 = DSCP >> 3 */
	if (proto == htons(ETH_P_IPV6) && (b[0] >> 4) == 6)
		return (b[0] & 0x0f) >> 1;		/* traffic class >> 5 */
	return cls;
}

u16 vfw_eth_select_queue(struct vfw_eth *eth, struct sk_buff *skb)
{
	unsigned int cls;

	if (eth->num_txq <= 1)
		return 0;
	cls = frame_class(skb);
	return min_t(unsigned int, cls, eth->num_txq - 1);
}

/* Fill the next TX descriptor with skb; caller holds tx_lock and has
 * checked there is room. 0, or -ENOMEM when the DMA mapping failed (the
 * skb is then the caller's). */
static int tx_put(struct vfw_eth *eth, struct vfw_eth_ring *r,
		  struct sk_buff *skb, u8 flags, u16 port)
{
	struct device *dev = &eth->pdev->dev;
	struct vfw_tx_desc *d;
	dma_addr_t dma;
	u32 i;

	dma = dma_map_single(dev, skb->data, skb->len, DMA_TO_DEVICE);
	if (dma_mapping_error(dev, dma))
		return -ENOMEM;
	i = r->next_to_use;
	r->skb[i] = skb;
	r->buf_dma[i] = dma;
	r->buf_len[i] = skb->len;
	d = (struct vfw_tx_desc *)r->desc + i;
	d->addr = cpu_to_le64(dma);
	d->len = cpu_to_le16(skb->len);
	d->flags = VFW_TXD_EOP | flags;
	d->status = 0;
	d->vlan = 0;
	d->port = cpu_to_le16(port);
	r->next_to_use = (i + 1) & (r->count - 1);
	return 0;
}

/* Pad and linearise for the device; false: dropped (and freed). */
static bool tx_prepare(struct vfw_eth *eth, struct sk_buff *skb)
{
	if (skb_put_padto(skb, ETH_ZLEN)) {
		eth->stats.tx_dropped++;
		return false;
	}
	if (skb_linearize(skb) || skb->len > VFW_FRAME_MAX) {
		eth->stats.tx_dropped++;
		dev_kfree_skb_any(skb);
		return false;
	}
	return true;
}

netdev_tx_t vfw_eth_xmit(struct vfw_eth *eth, struct sk_buff *skb)
{
	unsigned int q = skb_get_queue_mapping(skb);
	struct netdev_queue *txq;
	struct vfw_eth_ring *r;

	if (q >= eth->num_txq)		/* not from our select_queue */
		q = 0;
	txq = netdev_get_tx_queue(eth->netdev, q);
	r = &eth->tx[q];
	if (!tx_prepare(eth, skb))
		return NETDEV_TX_OK;
	spin_lock(&eth->tx_lock);
	if (!tx_free(r)) {
		netif_tx_stop_queue(txq);
		eth->stats.tx_busy++;
		spin_unlock(&eth->tx_lock);
		return NETDEV_TX_BUSY;
	}
	if (tx_put(eth, r, skb, 0, 0)) {
		eth->stats.tx_dropped++;
		spin_unlock(&eth->tx_lock);
		dev_kfree_skb_any(skb);
		return NETDEV_TX_OK;
	}
	skb_tx_timestamp(skb);
	if (tx_free(r) < 2) {
		netif_tx_stop_queue(txq);
		/* tx_clean() may have freed slots before it saw the stop. */
		smp_mb();
		if (tx_free(r) >= 2)
			netif_tx_start_queue(txq);
	}
	if (!netdev_xmit_more() || netif_xmit_stopped(txq)) {
		wmb();
		vfw_eth_wr(eth, VFW_REG_TXQ(q) + VFW_RING_TAIL, r->next_to_use);
	}
	spin_unlock(&eth->tx_lock);
	return NETDEV_TX_OK;
}

bool vfw_eth_xmit_port(struct vfw_eth *eth, struct sk_buff *skb, u16 port)
{
	struct vfw_eth_ring *r = &eth->tx[0];
	bool sent = false;

	if (!tx_prepare(eth, skb))
		return false;
	spin_lock(&eth->tx_lock);
	/* keep a slot for the netdev's own queue, which stops at 2 */
	if (eth->rings_up && tx_free(r) > 2 &&
	    !tx_put(eth, r, skb, VFW_TXD_TO_PORT, port)) {
		wmb();
		vfw_eth_wr(eth, VFW_REG_TXQ0 + VFW_RING_TAIL, r->next_to_use);
		sent = true;
	}
	spin_unlock(&eth->tx_lock);
	if (!sent)
		dev_kfree_skb_any(skb);
	return sent;
}

static void tx_clean(struct vfw_eth *eth, unsigned int q, int budget)
{
	struct vfw_eth_ring *r = &eth->tx[q];
	struct netdev_queue *txq = netdev_get_tx_queue(eth->netdev, q);
	struct device *dev = &eth->pdev->dev;
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
			eth->stats.tx_errors++;
		} else if (status & VFW_TXD_STS_DROP) {
			eth->stats.tx_dropped++;
		} else {
			eth->stats.tx_packets++;
			eth->stats.tx_bytes += r->buf_len[i];
		}
		napi_consume_skb(r->skb[i], budget);
		r->skb[i] = NULL;
		r->next_to_clean = (i + 1) & mask;
	}
	smp_mb();
	if (netif_tx_queue_stopped(txq) && tx_free(r) >= r->count / 4)
		netif_tx_wake_queue(txq);
}

static int rx_clean(struct vfw_eth *eth, int budget)
{
	struct vfw_eth_ring *r = &eth->rx;
	struct device *dev = &eth->pdev->dev;
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
		    len > r->buf_len[i]) {
			eth->stats.rx_errors++;
			dev_kfree_skb_any(skb);
			continue;
		}
		skb_put(skb, len);
		if (status & VFW_RXD_STS_SRC) {
			/* switchdev: a VF's frame for its representor */
			if (eth->rx_port) {
				eth->rx_port(eth, le16_to_cpu(d->src_port), skb);
			} else {
				eth->stats.rx_errors++;
				dev_kfree_skb_any(skb);
			}
			continue;
		}
		skb->protocol = eth_type_trans(skb, eth->netdev);
		eth->stats.rx_packets++;
		eth->stats.rx_bytes += len;
		napi_gro_receive(&eth->napi, skb);
	}
	rx_refill(eth);
	return done;
}

int vfw_eth_poll(struct napi_struct *napi, int budget)
{
	struct vfw_eth *eth = container_of(napi, struct vfw_eth, napi);
	unsigned int q;
	int done;

	for (q = 0; q < eth->num_txq; q++)
		tx_clean(eth, q, budget);
	done = rx_clean(eth, budget);
	if (done < budget && napi_complete_done(napi, done))
		vfw_eth_irq_enable(eth, true);
	return min(done, budget);
}

void vfw_eth_get_stats64(const struct vfw_eth *eth,
			 struct rtnl_link_stats64 *st)
{
	st->tx_packets = eth->stats.tx_packets;
	st->tx_bytes = eth->stats.tx_bytes;
	st->tx_errors = eth->stats.tx_errors;
	st->tx_dropped = eth->stats.tx_dropped;
	st->rx_packets = eth->stats.rx_packets;
	st->rx_bytes = eth->stats.rx_bytes;
	st->rx_errors = eth->stats.rx_errors;
}

static const char vfw_eth_sw_names[][ETH_GSTRING_LEN] = {
	"tx_packets", "tx_bytes", "tx_errors", "tx_dropped", "tx_busy",
	"rx_packets", "rx_bytes", "rx_errors", "rx_alloc_fail",
};
static_assert(ARRAY_SIZE(vfw_eth_sw_names) == VFW_ETH_NUM_SW_STATS);

static const char vfw_eth_hw_names[VFW_STAT_COUNT][ETH_GSTRING_LEN] = {
	[VFW_STAT_TX_PKTS] = "hw_tx_packets",
	[VFW_STAT_TX_BYTES] = "hw_tx_bytes",
	[VFW_STAT_RX_PKTS] = "hw_rx_packets",
	[VFW_STAT_RX_BYTES] = "hw_rx_bytes",
	[VFW_STAT_TX_DESC_ERR] = "hw_tx_desc_errors",
	[VFW_STAT_RX_NO_BUF] = "hw_rx_no_buffer",
	[VFW_STAT_RX_DESC_ERR] = "hw_rx_desc_errors",
	[VFW_STAT_TX_DROP_SPOOF] = "hw_tx_drop_spoof",
	[VFW_STAT_TX_DROP_VLAN] = "hw_tx_drop_vlan",
	[VFW_STAT_TX_DROP_LINK] = "hw_tx_drop_link",
	[VFW_STAT_TX_DROP_METER] = "hw_tx_drop_meter",
	[VFW_STAT_TX_DROP_ACL] = "hw_tx_drop_acl",
	[VFW_STAT_TX_DROP_OTHER] = "hw_tx_drop_other",
	[VFW_STAT_RX_FILTERED] = "hw_rx_filtered",
};

/* VFW_ETH_NUM_STATS names of ETH_GSTRING_LEN bytes. */
void vfw_eth_get_strings(u8 *data)
{
	memcpy(data, vfw_eth_sw_names, sizeof(vfw_eth_sw_names));
	memcpy(data + sizeof(vfw_eth_sw_names), vfw_eth_hw_names,
	       sizeof(vfw_eth_hw_names));
}

/* VFW_ETH_NUM_STATS values; the device's are 32-bit and wrap. */
void vfw_eth_get_ethtool_stats(const struct vfw_eth *eth, u64 *data)
{
	const struct vfw_eth_sw_stats *s = &eth->stats;
	int i = 0, n;

	data[i++] = s->tx_packets;
	data[i++] = s->tx_bytes;
	data[i++] = s->tx_errors;
	data[i++] = s->tx_dropped;
	data[i++] = s->tx_busy;
	data[i++] = s->rx_packets;
	data[i++] = s->rx_bytes;
	data[i++] = s->rx_errors;
	data[i++] = s->rx_alloc_fail;
	for (n = 0; n < VFW_STAT_COUNT; n++)
		data[i++] = vfw_eth_rd(eth, VFW_REG_STAT(n));
}
