/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pf.h - state shared by the parts of the vfwarp PF driver: probe
 * (pf_main.c), admin queue client (pf_admin.c), netdev (pf_netdev.c) and
 * the VF configuration ops (pf_vf.c).
 */
#ifndef VFW_PF_H
#define VFW_PF_H

#include <linux/etherdevice.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/pci.h>

#include "vfwarp/vfwarp_regs.h"
#include "vfwarp/vfwarp_admin.h"

#define DRV_NAME "vfwarp_pf"
#define VFW_PF_AQ_LEN 64

struct vfw_pf_aq_stats {
	u64 cmds;       /* commands submitted */
	u64 errors;     /* completed with a non-OK status */
	u64 timeouts;   /* no completion in time (queue then disabled) */
};

struct vfw_pf {
	struct pci_dev *pdev;
	void __iomem *bar0;
	u32 version;
	u32 features;
	u8 mac[ETH_ALEN];
	struct net_device *netdev;
	struct dentry *dbg;

	/* admin queue (pf_admin.c); aq_lock serialises submitters */
	struct mutex aq_lock;
	struct vfw_aq_desc *aq_ring;
	dma_addr_t aq_dma;
	u32 aq_tail;
	u32 aq_cookie;
	bool aq_up;
	struct vfw_pf_aq_stats aq_stats;

	/* VF-to-PF mailbox (pf_mbox.c) */
	DECLARE_BITMAP(vf_admin_mac, VFW_SRIOV_TOTAL_VFS); /* MAC set by
							       the admin */
	u64 mbx_served;         /* VF requests answered */
	u64 mbx_refused;        /* ... with a status other than OK */
};

/* The PF behind its netdev (pf_netdev.c keeps the pointer first in priv). */
static inline struct vfw_pf *vfw_pf_from_netdev(struct net_device *dev)
{
	return *(struct vfw_pf **)netdev_priv(dev);
}

/* pf_admin.c */
int vfw_pf_aq_init(struct vfw_pf *pf);
void vfw_pf_aq_fini(struct vfw_pf *pf);
int vfw_pf_aq_exec(struct vfw_pf *pf, struct vfw_aq_desc *desc);
int vfw_pf_aq_errno(u16 status);

/* pf_netdev.c */
int vfw_pf_netdev_create(struct vfw_pf *pf);
void vfw_pf_netdev_destroy(struct vfw_pf *pf);

/* pf_mbox.c */
int vfw_pf_mbox_init(struct vfw_pf *pf);
void vfw_pf_mbox_fini(struct vfw_pf *pf);

/* pf_vf.c */
int vfw_pf_set_vf_mac(struct net_device *dev, int vf, u8 *mac);
int vfw_pf_set_vf_vlan(struct net_device *dev, int vf, u16 vlan, u8 qos,
		       __be16 proto);
int vfw_pf_set_vf_rate(struct net_device *dev, int vf, int min_tx_rate,
		       int max_tx_rate);
int vfw_pf_set_vf_spoofchk(struct net_device *dev, int vf, bool enable);
int vfw_pf_set_vf_trust(struct net_device *dev, int vf, bool enable);
int vfw_pf_set_vf_link_state(struct net_device *dev, int vf, int state);
int vfw_pf_get_vf_config(struct net_device *dev, int vf,
			 struct ifla_vf_info *ivi);
int vfw_pf_get_vf_stats(struct net_device *dev, int vf,
			struct ifla_vf_stats *vf_stats);
void vfw_pf_debugfs_init(struct vfw_pf *pf);
void vfw_pf_debugfs_fini(struct vfw_pf *pf);
void vfw_pf_debugfs_register(void);
void vfw_pf_debugfs_unregister(void);

/* pf_irq.c */
/* The PF's MSI-X vectors, all allocated at probe: link, RX and TX as on the
 * VFs, and the VF->PF mailbox's (its handler belongs to pf_mbox.c).
 */
#define VFW_PF_VEC_LINK	0
#define VFW_PF_VEC_RX	1
#define VFW_PF_VEC_TX	2
#define VFW_PF_VEC_MBOX	3
#define VFW_PF_NUM_VEC	4
int vfw_pf_irq_init(struct vfw_pf *pf);
void vfw_pf_irq_fini(struct vfw_pf *pf);

#endif /* VFW_PF_H */
