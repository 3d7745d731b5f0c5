/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * pf.h - state shared by the parts of the vfwarp PF driver: probe
 * (pf_main.c), admin queue client (pf_admin.c), netdev (pf_netdev.c), the
 * VF configuration ops (pf_vf.c), the devlink instance and its ports
 * (pf_devlink.c), devlink rate (pf_rate.c), dcbnl (pf_dcb.c), the eswitch
 * mode (pf_eswitch.c), the VF representors (pf_repr.c) and tc flower
 * offload (pf_tc.c) and bridge offload (pf_bridge.c).
 */
#ifndef VFW_PF_H
#define VFW_PF_H

#include <linux/etherdevice.h>
#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <net/devlink.h>

#include "vfwarp/vfwarp_regs.h"
#include "vfwarp/vfwarp_admin.h"

#define DRV_NAME "vfwarp_pf"
#define VFW_PF_AQ_LEN 64

struct vfw_pf_aq_stats {
	u64 cmds;       /* commands submitted */
	u64 errors;     /* completed with a non-OK status */
	u64 timeouts;   /* no completion in time (queue then disabled) */
};

/*
 * A devlink port of the PF (pf_devlink.c) and, for the PF and VF ports, the
 * priv of its rate leaf (pf_rate.c): `fn` is the device's function index,
 * 0 the PF and 1 + n VF n, which is also the QoS leaf index and the devlink
 * port index.
 */
struct vfw_pf_port {
	struct devlink_port dl;
	struct vfw_pf *pf;
	u16 fn;
};

/* devlink port index of the uplink: outside the function range (as mlx5's
 * uplink vport 0xffff), so function n keeps port index n. */
#define VFW_PF_UPLINK_PORT_INDEX 0xffff

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

	/* devlink (pf_devlink.c): the instance, the uplink and PF ports, and
	 * one port per enabled VF. vf_ports_lock guards vf_ports/num_vf_ports
	 * for the ndo path (rtnl), which must not take the devlink lock. */
	struct devlink *devlink;
	struct vfw_pf_port uplink_port;
	struct vfw_pf_port pf_port;
	struct mutex vf_ports_lock;
	struct vfw_pf_port *vf_ports;
	int num_vf_ports;
	bool rate_closed;	/* pf_rate.c: the device's tree is emptied */

	/* switchdev (pf_eswitch.c, pf_repr.c): the mode (DEVLINK_ESWITCH_MODE_*,
	 * changed under the devlink lock) and VF n's representor, read by
	 * the RX path under RCU. */
	u16 eswitch_mode;
	struct vfw_pf_repr __rcu *repr[VFW_SRIOV_TOTAL_VFS];

	/* tc flower offload (pf_tc.c): offloaded filters by cookie and the
	 * DMA buffer a rule goes to the device in, under tc_lock. */
	struct mutex tc_lock;
	DECLARE_HASHTABLE(tc_rules, 10);
	unsigned int tc_num_rules;
	struct vfw_esw_rule *tc_buf;
	dma_addr_t tc_buf_dma;
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
const char *vfw_pf_aq_status_str(u16 status);

/* pf_netdev.c */
struct vfw_eth;
int vfw_pf_netdev_create(struct vfw_pf *pf);
void vfw_pf_netdev_destroy(struct vfw_pf *pf);
struct vfw_eth *vfw_pf_eth(struct vfw_pf *pf);

/* pf_eswitch.c (under the devlink lock) */
int vfw_pf_eswitch_mode_get(struct devlink *devlink, u16 *mode);
int vfw_pf_eswitch_mode_set(struct devlink *devlink, u16 mode,
			    struct netlink_ext_ack *extack);
int vfw_pf_eswitch_vfs_add(struct vfw_pf *pf, int num);
void vfw_pf_eswitch_vfs_del(struct vfw_pf *pf, int num);
void vfw_pf_eswitch_fini(struct vfw_pf *pf);

/* pf_repr.c */
struct sk_buff;
int vfw_pf_repr_create(struct vfw_pf *pf, u16 vf);
void vfw_pf_repr_destroy(struct vfw_pf *pf, u16 vf);
void vfw_pf_repr_rx(struct vfw_eth *eth, u16 vf, struct sk_buff *skb);
int vfw_pf_repr_vf(struct vfw_pf *pf, const struct net_device *dev);
struct vfw_pf *vfw_pf_of_esw_netdev(struct net_device *dev);
bool vfw_pf_is_pf_netdev(const struct net_device *dev);

/* pf_bridge.c: module-wide notifiers (init/exit) */
int vfw_pf_bridge_register(void);
void vfw_pf_bridge_unregister(void);
void vfw_pf_bridge_flush(void);

/* pf_tc.c */
enum tc_setup_type;
int vfw_pf_setup_tc(struct net_device *dev, enum tc_setup_type type,
		    void *type_data);
int vfw_pf_tc_init(struct vfw_pf *pf);
void vfw_pf_tc_fini(struct vfw_pf *pf);

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

/* pf_devlink.c */
int vfw_pf_devlink_init(struct vfw_pf *pf);
void vfw_pf_devlink_fini(struct vfw_pf *pf);
int vfw_pf_devlink_vfs_add(struct vfw_pf *pf, int num_vfs);
void vfw_pf_devlink_vfs_del(struct vfw_pf *pf);

/* pf_rate.c */
int vfw_pf_rate_leaf_create(struct vfw_pf_port *port);
void vfw_pf_rate_init(struct vfw_pf *pf);
void vfw_pf_rate_fini(struct vfw_pf *pf);
void vfw_pf_rate_debugfs_init(struct vfw_pf *pf);
void vfw_pf_rate_vf_sync(struct vfw_pf *pf, int vf);
/* Which values a RANGE status refers to (the extack message). */
enum vfw_pf_range {
	VFW_RANGE_ANY,
	VFW_RANGE_VF_RATE,
	VFW_RANGE_RATE,
	VFW_RANGE_PRIO,
	VFW_RANGE_WEIGHT,
	VFW_RANGE_LINE,
};
int vfw_pf_qos_errno(u16 status, enum vfw_pf_range range,
		     struct netlink_ext_ack *extack);
int vfw_pf_rate_leaf_tx_share_set(struct devlink_rate *rate, void *priv,
				  u64 tx_share, struct netlink_ext_ack *extack);
int vfw_pf_rate_leaf_tx_max_set(struct devlink_rate *rate, void *priv,
				u64 tx_max, struct netlink_ext_ack *extack);
int vfw_pf_rate_leaf_tx_priority_set(struct devlink_rate *rate, void *priv,
				     u32 tx_priority,
				     struct netlink_ext_ack *extack);
int vfw_pf_rate_leaf_tx_weight_set(struct devlink_rate *rate, void *priv,
				   u32 tx_weight,
				   struct netlink_ext_ack *extack);
int vfw_pf_rate_leaf_parent_set(struct devlink_rate *child,
				struct devlink_rate *parent, void *priv_child,
				void *priv_parent,
				struct netlink_ext_ack *extack);
int vfw_pf_rate_node_new(struct devlink_rate *node, void **priv,
			 struct netlink_ext_ack *extack);
int vfw_pf_rate_node_del(struct devlink_rate *node, void *priv,
			 struct netlink_ext_ack *extack);
int vfw_pf_rate_node_tx_share_set(struct devlink_rate *rate, void *priv,
				  u64 tx_share, struct netlink_ext_ack *extack);
int vfw_pf_rate_node_tx_max_set(struct devlink_rate *rate, void *priv,
				u64 tx_max, struct netlink_ext_ack *extack);
int vfw_pf_rate_node_tx_priority_set(struct devlink_rate *rate, void *priv,
				     u32 tx_priority,
				     struct netlink_ext_ack *extack);
int vfw_pf_rate_node_tx_weight_set(struct devlink_rate *rate, void *priv,
				   u32 tx_weight,
				   struct netlink_ext_ack *extack);
int vfw_pf_rate_node_parent_set(struct devlink_rate *child,
				struct devlink_rate *parent, void *priv_child,
				void *priv_parent,
				struct netlink_ext_ack *extack);
int vfw_pf_line_rate_get(struct vfw_pf *pf, u64 *bps);
int vfw_pf_line_rate_set(struct vfw_pf *pf, u64 bps,
			 struct netlink_ext_ack *extack);

/* DCB_GET_APP: DSCP d's priority, nibble d % 2 (low first) of byte d / 2. */
static inline u8 vfw_apps_dscp_prio(const struct vfw_aq_dcb_apps *a, int d)
{
	return (a->dscp_prio[d / 2] >> (4 * (d % 2))) & 0xf;
}

/* pf_dcb.c */
void vfw_pf_dcb_set_ops(struct net_device *dev);
u8 vfw_pf_prio_tc(struct vfw_pf *pf, u8 prio);
void vfw_pf_dcb_init(struct vfw_pf *pf);

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
