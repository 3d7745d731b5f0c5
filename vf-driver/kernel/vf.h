/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vfwarp_vf: shared state of the VF driver (vf_main.c: probe and identity;
 * vf_netdev.c: the Ethernet netdev over the rings of common/kernel/vfw_eth.c).
 */
#ifndef VFW_VF_H
#define VFW_VF_H

#include <linux/netdevice.h>
#include <linux/pci.h>

#include "vfw_eth.h"

#define VFW_VF_DRV_NAME		"vfwarp_vf"
#define VFW_VF_VEC_LINK		0
#define VFW_VF_VEC_RX		1
#define VFW_VF_VEC_TX		2
#define VFW_VF_NUM_VEC		3

struct vfw_vf {
	struct vfw_eth eth;
	u32 index;
};

/* vf_netdev.c */
int vfw_vf_netdev_probe(struct pci_dev *pdev, void __iomem *bar0, u32 index);
void vfw_vf_netdev_remove(struct pci_dev *pdev);
extern const struct pci_error_handlers vfw_vf_err_handlers;

#endif /* VFW_VF_H */
