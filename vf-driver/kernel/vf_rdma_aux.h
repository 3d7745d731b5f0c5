/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The RDMA auxiliary device: what vfwarp_vf.ko hands vfwarp_rdma.ko for one
 * VF, as ice hands irdma its function (struct iidc_auxiliary_dev). The VF
 * driver owns the PCI function (BARs, MSI-X, DMA, the netdev, the mailbox)
 * and creates "vfwarp_vf.rdma.<id>" while the VF's enable_rdma is on
 * (module parameter rdma= for a new VF, `devlink dev param set pci/<VF>
 * name enable_rdma value true|false cmode runtime` after); the RDMA driver
 * binds to it and registers the iWARP ib_device. The VF driver deletes the
 * device before an FLR and before its netdev goes, and adds it again after
 * the reset: the ib_device goes and comes with it.
 *
 * Everything here stays valid while the auxiliary device exists; the RDMA
 * driver maps nothing and requests no vector itself.
 */
#ifndef VFW_VF_RDMA_AUX_H
#define VFW_VF_RDMA_AUX_H

#include <linux/auxiliary_bus.h>
#include <linux/netdevice.h>
#include <linux/pci.h>

/* device name "<VF driver module>.rdma.<id>"; the RDMA driver matches this */
#define VFW_RDMA_AUX_NAME	"rdma"
#define VFW_RDMA_AUX_MATCH	"vfwarp_vf." VFW_RDMA_AUX_NAME

struct vfw_rdma_aux_dev {
	struct auxiliary_device adev;
	struct pci_dev *pdev;		/* DMA device, the ib_device's parent */
	struct net_device *netdev;	/* the VF's netdev: the iWARP port */
	void __iomem *bar0;		/* registers, RDMA window and counters */
	void __iomem *kdb;		/* BAR4 doorbell page 0 (kernel QPs/CQs) */
	phys_addr_t db_phys;		/* BAR4: user doorbell pages by address */
	resource_size_t db_len;
	int eq_irq;			/* IRQ of MSI-X vector eq_vec */
	u32 eq_vec;			/* VFW_MSIX_VEC_RDMA_EQ, or 0 when the VF has one
					 * vector for all: the IRQ is then shared */
	u32 vf_index;
};

static inline struct vfw_rdma_aux_dev *to_vfw_rdma_aux(struct auxiliary_device *a)
{
	return container_of(a, struct vfw_rdma_aux_dev, adev);
}

#endif /* VFW_VF_RDMA_AUX_H */
