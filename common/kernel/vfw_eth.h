/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vfw_eth: the Ethernet data path of one vfwarp function (PF or VF): its
 * TX/RX descriptor rings (include/vfwarp/vfwarp_ring.h), NAPI, link state
 * and counters. Every function has the same ring window in its BAR0, so
 * both drivers compile this file in and differ only in how they find their
 * MSI-X vectors and which netdev ops surround it.
 *
 * TX queues (hw 2.5): one TX ring per netdev TX queue, up to VFW_TXQ_MAX as
 * the device reports (VFW_REG_TXQ_NUM; 1 on an older device). The netdev
 * must be allocated with VFW_TXQ_MAX TX queues (alloc_etherdev_mqs) and
 * use vfw_eth_select_queue: a frame goes to the ring of its class (DSCP
 * class selector, else 802.1p, else skb->priority), so the device can hold
 * a full bulk class without holding a strict class's frames behind it.
 */
#ifndef VFW_ETH_H
#define VFW_ETH_H

#include <linux/if_vlan.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/netdevice.h>
#include <linux/pci.h>

#include "vfwarp/vfwarp_regs.h"
#include "vfwarp/vfwarp_ring.h"

#define VFW_ETH_RING_ENTRIES	256
#define VFW_ETH_RX_BUF		2048
/* The largest MTU: a VFW_FRAME_MAX frame less its Ethernet and VLAN header */
#define VFW_ETH_MAX_MTU		(VFW_FRAME_MAX - ETH_HLEN - VLAN_HLEN)

struct vfw_eth_ring {
	void *desc;			/* VFW_DESC_SIZE * count bytes */
	dma_addr_t desc_dma;
	u32 count;
	u32 next_to_use;		/* TX: next free slot; RX: tail */
	u32 next_to_clean;
	struct sk_buff **skb;
	dma_addr_t *buf_dma;
	u16 *buf_len;
};

struct vfw_eth_sw_stats {
	u64 tx_packets, tx_bytes, tx_errors, tx_dropped, tx_busy;
	u64 rx_packets, rx_bytes, rx_errors, rx_alloc_fail;
};

struct vfw_eth;

/*
 * Switchdev slow path (PF only, docs/switchdev.md): a received frame the
 * device tagged VFW_RXD_STS_SRC belongs to VF `port`'s representor. The
 * hook takes the skb (delivers or frees it); with no hook such frames are
 * dropped as rx_errors.
 */
typedef void (*vfw_eth_rx_port_fn)(struct vfw_eth *eth, u16 port,
				   struct sk_buff *skb);

struct vfw_eth {
	struct pci_dev *pdev;
	struct net_device *netdev;
	void __iomem *bar0;
	/* MSI-X vectors the device raises for link changes and each ring */
	u8 vec_link, vec_rx, vec_tx;
	struct napi_struct napi;
	struct vfw_eth_ring tx[VFW_TXQ_MAX], rx;
	unsigned int num_txq;		/* TX rings in use (real TX queues) */
	struct vfw_eth_sw_stats stats;
	u16 rx_buf;			/* RX buffer bytes, fixed while the rings are up */
	bool rings_up;
	/* Producers of the TX rings: the netdev's queues and, on the PF in
	 * switchdev mode, every representor's (ring 0): they serialise here. */
	spinlock_t tx_lock;
	vfw_eth_rx_port_fn rx_port;	/* PF: representors' RX, else NULL */
};

static inline u32 vfw_eth_rd(const struct vfw_eth *eth, u32 reg)
{
	return ioread32(eth->bar0 + reg);
}

static inline void vfw_eth_wr(const struct vfw_eth *eth, u32 reg, u32 val)
{
	iowrite32(val, eth->bar0 + reg);
}

/* Bring the rings, NAPI, the ring and link interrupts and the carrier up
 * (ndo_open) or down (ndo_stop); down is a no-op when they are not up.
 */
int vfw_eth_up(struct vfw_eth *eth);
void vfw_eth_down(struct vfw_eth *eth);

int vfw_eth_rings_up(struct vfw_eth *eth);
void vfw_eth_rings_down(struct vfw_eth *eth);
void vfw_eth_irq_enable(struct vfw_eth *eth, bool on);
void vfw_eth_link_check(struct vfw_eth *eth);
int vfw_eth_poll(struct napi_struct *napi, int budget);
netdev_tx_t vfw_eth_xmit(struct vfw_eth *eth, struct sk_buff *skb);
/* ndo_select_queue: the TX queue of the frame's class. */
u16 vfw_eth_select_queue(struct vfw_eth *eth, struct sk_buff *skb);
/* Representor transmit on the PF's ring (VFW_TXD_TO_PORT): the frame goes
 * to VF `port`. Never stops a queue: with the ring full or down the frame
 * is dropped (false), as a congested switch port would. */
bool vfw_eth_xmit_port(struct vfw_eth *eth, struct sk_buff *skb, u16 port);
/* Call once before the rings first come up and before register_netdev,
 * with bar0 and netdev set: reads how many TX rings the device has and
 * sets the netdev's real TX queues to that. */
void vfw_eth_init(struct vfw_eth *eth);

/* Interrupt handlers; the cookie is the struct vfw_eth. */
irqreturn_t vfw_eth_link_irq(int irq, void *data);
irqreturn_t vfw_eth_ring_irq(int irq, void *data);

/* rtnl stats and ethtool -S: the driver's counters, then the device's. */
void vfw_eth_get_stats64(const struct vfw_eth *eth,
			 struct rtnl_link_stats64 *st);
#define VFW_ETH_NUM_SW_STATS	9	/* u64s in struct vfw_eth_sw_stats */
#define VFW_ETH_NUM_STATS	(VFW_ETH_NUM_SW_STATS + VFW_STAT_COUNT)
void vfw_eth_get_strings(u8 *data);
void vfw_eth_get_ethtool_stats(const struct vfw_eth *eth, u64 *data);

#endif /* VFW_ETH_H */
