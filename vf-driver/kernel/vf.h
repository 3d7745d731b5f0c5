/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vfwarp_vf: shared state of the VF driver (vf_main.c: probe and identity;
 * vf_netdev.c: the Ethernet netdev; vf_ring.c: TX/RX descriptor rings).
 */
#ifndef VFW_VF_H
#define VFW_VF_H

#include <linux/netdevice.h>
#include <linux/pci.h>

#include "vfwarp/vfwarp_regs.h"
#include "vfwarp/vfwarp_ring.h"

#define VFW_VF_DRV_NAME		"vfwarp_vf"
#define VFW_VF_RING_ENTRIES	256
#define VFW_VF_RX_BUF		2048
#define VFW_VF_VEC_LINK		0
#define VFW_VF_VEC_RX		1
#define VFW_VF_VEC_TX		2
#define VFW_VF_NUM_VEC		3

struct vfw_vf_ring {
	void *desc;			/* VFW_DESC_SIZE * count bytes */
	dma_addr_t desc_dma;
	u32 count;
	u32 next_to_use;		/* TX: next free slot; RX: tail */
	u32 next_to_clean;
	struct sk_buff **skb;
	dma_addr_t *buf_dma;
	u16 *buf_len;
};

struct vfw_vf_sw_stats {
	u64 tx_packets, tx_bytes, tx_errors, tx_dropped, tx_busy;
	u64 rx_packets, rx_bytes, rx_errors, rx_alloc_fail;
};

struct vfw_vf {
	struct pci_dev *pdev;
	struct net_device *netdev;
	void __iomem *bar0;
	u32 index;
	struct napi_struct napi;
	struct vfw_vf_ring tx, rx;
	struct vfw_vf_sw_stats stats;
	bool rings_up;
};

static inline u32 vfw_rd(struct vfw_vf *vf, u32 reg)
{
	return ioread32(vf->bar0 + reg);
}

static inline void vfw_wr(struct vfw_vf *vf, u32 reg, u32 val)
{
	iowrite32(val, vf->bar0 + reg);
}

/* vf_ring.c */
int vfw_vf_rings_up(struct vfw_vf *vf);
void vfw_vf_rings_down(struct vfw_vf *vf);
void vfw_vf_irq_enable(struct vfw_vf *vf, bool on);
int vfw_vf_poll(struct napi_struct *napi, int budget);
netdev_tx_t vfw_vf_xmit(struct sk_buff *skb, struct net_device *netdev);

/* vf_netdev.c */
int vfw_vf_netdev_probe(struct pci_dev *pdev, void __iomem *bar0, u32 index);
void vfw_vf_netdev_remove(struct pci_dev *pdev);
extern const struct pci_error_handlers vfw_vf_err_handlers;

#endif /* VFW_VF_H */
