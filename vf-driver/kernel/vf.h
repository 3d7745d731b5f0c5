/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * vfwarp_vf: shared state of the VF driver (vf_main.c: probe and identity;
 * vf_netdev.c: the Ethernet netdev over the rings of common/kernel/vfw_eth.c;
 * vf_mbox.c: requests to the PF; vf_rdma_aux.c: the RDMA auxiliary device
 * for vfwarp_rdma.ko and the devlink parameter enable_rdma).
 */
#ifndef VFW_VF_H
#define VFW_VF_H

#include <linux/completion.h>
#include <linux/interrupt.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/workqueue.h>

#include "vfw_eth.h"
#include "vfwarp/vfwarp_regs.h"

#define VFW_VF_DRV_NAME		"vfwarp_vf"
#define VFW_VF_VEC_LINK		0
#define VFW_VF_VEC_RX		1
#define VFW_VF_VEC_TX		2
#define VFW_VF_VEC_MBOX		3
#define VFW_VF_MIN_VEC		4	/* the Ethernet part */
#define VFW_VF_NUM_VEC		VFW_VF_MSIX_VECTORS	/* + 4: RDMA event queue */

struct devlink;
struct vfw_rdma_aux_dev;
struct vfw_vf;

/*
 * The MSI-X vector of cause `vec` (VFW_VF_VEC_*, VFW_MSIX_VEC_RDMA_EQ). A VF
 * that could not get its vectors runs every cause on vector 0 (one_vec),
 * its handlers shared there: the CPUs' vector space is finite (x86: about
 * 200 per CPU), and 128 VFs bound on one host of one CPU took it all by the
 * 37th VF, whose probe then failed with -ENOSPC (the soak of issue 33).
 */
#define vfw_vf_vec(vf, vec)	((vf)->one_vec ? 0 : (vec))
#define vfw_vf_irqf(vf)		((vf)->one_vec ? IRQF_SHARED : 0)

struct vfw_vf {
	struct vfw_eth eth;
	u32 index;
	/* VF-to-PF mailbox (vf_mbox.c) */
	struct mutex mbx_lock;		/* one request in flight */
	struct completion mbx_done;	/* the reply vector fired */
	u32 mbx_seq;
	struct work_struct rx_mode_work;
	struct work_struct mac_work;	/* take on a MAC the PF set */
	int nvec;			/* MSI-X vectors we got */
	bool one_vec;			/* every cause on vector 0, handlers shared */
	/* RDMA (vf_rdma_aux.c) */
	struct devlink *devlink;	/* enable_rdma */
	struct mutex aux_lock;		/* rdma_aux, rdma_on, in_reset */
	struct vfw_rdma_aux_dev *rdma_aux;	/* plugged, or NULL */
	int rdma_id;			/* aux device id; -1: no RDMA on this VF */
	bool rdma_on;			/* enable_rdma */
	bool in_reset;			/* between FLR prepare and done */
	void __iomem *rdma_kdb;		/* BAR4 page 0, for the RDMA driver */
};

/* vf_mbox.c: requests the PF decides; they sleep (errno on refusal) */
irqreturn_t vfw_vf_mbx_irq(int irq, void *data);
void vfw_vf_mbx_enable(struct vfw_vf *vf);
int vfw_vf_mbx_hello(struct vfw_vf *vf);
int vfw_vf_mbx_set_mac(struct vfw_vf *vf, const u8 *mac);
int vfw_vf_mbx_vlan(struct vfw_vf *vf, u16 vid, bool add);
void vfw_vf_rx_mode_work(struct work_struct *work);

/* vf_netdev.c */
int vfw_vf_netdev_probe(struct pci_dev *pdev, void __iomem *bar0, u32 index);
void vfw_vf_netdev_remove(struct pci_dev *pdev);
extern const struct pci_error_handlers vfw_vf_err_handlers;

/* vf_rdma_aux.c: the RDMA auxiliary device beside the netdev */
int vfw_vf_rdma_probe(struct vfw_vf *vf);
void vfw_vf_rdma_remove(struct vfw_vf *vf);
void vfw_vf_rdma_reset_prepare(struct vfw_vf *vf);
void vfw_vf_rdma_reset_done(struct vfw_vf *vf);

#endif /* VFW_VF_H */
