// SPDX-License-Identifier: GPL-2.0-only
/*
 * pf_repr.c - VF representors (switchdev mode, docs/switchdev.md).
 *
 * One netdev per VF while the eswitch is in switchdev mode. It is the VF's
 * port on the host side of the adapter's switch: what the VF sends and no
 * offloaded rule forwards arrives here (the PF's RX ring, descriptors
 * tagged VFW_RXD_STS_SRC with the VF index), and what is sent here reaches
 * the VF (the PF's TX ring, VFW_TXD_TO_PORT). Both share the PF's rings
 * and NAPI (common/kernel/vfw_eth.c), so the PF netdev - the uplink
 * representor - must be up for representors to pass traffic.
 *
 * Linked to the VF's devlink port (SET_NETDEV_DEVLINK_PORT): the port
 * gives the netdev its phys_port_name "pf<N>vf<M>", from which udev names
 * it stably (systemd 257: enp1s0r2 for VF 2 of the PF at 01:00.0); its parent ID
 * is the port's switch ID (pf_devlink.c), the same on every VF port of the
 * adapter (devlink warns when a netdev with a port answers it itself).
 *
 * The RX path looks representors up under RCU (NAPI context); they are
 * created and destroyed under the devlink lock (pf_eswitch.c).
 */
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <linux/u64_stats_sync.h>

#include "pf.h"
#include "vfw_eth.h"

struct vfw_pf_repr {
	struct vfw_pf *pf;
	struct net_device *netdev;
	u16 vf;
	struct u64_stats_sync syncp;
	u64 rx_packets, rx_bytes;       /* NAPI */
	u64 tx_packets, tx_bytes, tx_dropped;
};

static struct vfw_pf_repr *repr_of(struct net_device *dev)
{
	return netdev_priv(dev);
}

static int vfw_pf_repr_open(struct net_device *dev)
{
	netif_carrier_on(dev);
	netif_start_queue(dev);
	return 0;
}

static int vfw_pf_repr_stop(struct net_device *dev)
{
	netif_stop_queue(dev);
	netif_carrier_off(dev);
	return 0;
}

static netdev_tx_t vfw_pf_repr_xmit(struct sk_buff *skb,
				    struct net_device *dev)
{
	struct vfw_pf_repr *r = repr_of(dev);
	unsigned int len = skb->len;
	bool sent = false;

	if (r->pf->netdev && netif_running(r->pf->netdev))
		sent = vfw_eth_xmit_port(vfw_pf_eth(r->pf), skb, r->vf);
	else
		dev_kfree_skb_any(skb);
	u64_stats_update_begin(&r->syncp);
	if (sent) {
		r->tx_packets++;
		r->tx_bytes += len;
	} else {
		r->tx_dropped++;
	}
	u64_stats_update_end(&r->syncp);
	return NETDEV_TX_OK;
}

static void vfw_pf_repr_get_stats64(struct net_device *dev,
				    struct rtnl_link_stats64 *st)
{
	struct vfw_pf_repr *r = repr_of(dev);
	unsigned int start;

	do {
		start = u64_stats_fetch_begin(&r->syncp);
		st->rx_packets = r->rx_packets;
		st->rx_bytes = r->rx_bytes;
		st->tx_packets = r->tx_packets;
		st->tx_bytes = r->tx_bytes;
		st->tx_dropped = r->tx_dropped;
	} while (u64_stats_fetch_retry(&r->syncp, start));
}

/* ethtool -S: the representor's own counters (the slow path), then the
 * VF's port as the adapter's switch counts it (GET_VF_STATS): everything
 * the VF sent and received, offloaded or not. */
static const char vfw_pf_repr_stat_names[][ETH_GSTRING_LEN] = {
	"rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "tx_dropped",
	"vf_rx_packets", "vf_tx_packets", "vf_rx_bytes", "vf_tx_bytes",
	"vf_rx_dropped", "vf_tx_dropped",
};

static int vfw_pf_repr_get_sset_count(struct net_device *dev, int sset)
{
	return sset == ETH_SS_STATS ? ARRAY_SIZE(vfw_pf_repr_stat_names) :
				      -EOPNOTSUPP;
}

static void vfw_pf_repr_get_strings(struct net_device *dev, u32 sset, u8 *data)
{
	if (sset == ETH_SS_STATS)
		memcpy(data, vfw_pf_repr_stat_names, sizeof(vfw_pf_repr_stat_names));
}

static void vfw_pf_repr_get_ethtool_stats(struct net_device *dev,
					  struct ethtool_stats *stats, u64 *data)
{
	struct vfw_pf_repr *r = repr_of(dev);
	struct rtnl_link_stats64 st = {};
	struct vfw_aq_desc d = {};

	vfw_pf_repr_get_stats64(dev, &st);
	data[0] = st.rx_packets;
	data[1] = st.rx_bytes;
	data[2] = st.tx_packets;
	data[3] = st.tx_bytes;
	data[4] = st.tx_dropped;
	d.opcode = cpu_to_le16(VFW_AQ_OP_GET_VF_STATS);
	d.vf = cpu_to_le16(r->vf);
	memset(data + 5, 0, 6 * sizeof(u64));
	if (vfw_pf_aq_exec(r->pf, &d) == VFW_AQ_S_OK) {
		data[5] = le64_to_cpu(d.u.stats.rx_packets);
		data[6] = le64_to_cpu(d.u.stats.tx_packets);
		data[7] = le64_to_cpu(d.u.stats.rx_bytes);
		data[8] = le64_to_cpu(d.u.stats.tx_bytes);
		data[9] = le64_to_cpu(d.u.stats.rx_dropped);
		data[10] = le64_to_cpu(d.u.stats.tx_dropped);
	}
}

static void vfw_pf_repr_get_drvinfo(struct net_device *dev,
				    struct ethtool_drvinfo *info)
{
	struct vfw_pf *pf = repr_of(dev)->pf;

	strscpy(info->driver, DRV_NAME, sizeof(info->driver));
	strscpy(info->bus_info, pci_name(pf->pdev), sizeof(info->bus_info));
}

static const struct ethtool_ops vfw_pf_repr_ethtool_ops = {
	.get_drvinfo = vfw_pf_repr_get_drvinfo,
	.get_link = ethtool_op_get_link,
	.get_sset_count = vfw_pf_repr_get_sset_count,
	.get_strings = vfw_pf_repr_get_strings,
	.get_ethtool_stats = vfw_pf_repr_get_ethtool_stats,
};

static const struct net_device_ops vfw_pf_repr_ops = {
	.ndo_open = vfw_pf_repr_open,
	.ndo_stop = vfw_pf_repr_stop,
	.ndo_start_xmit = vfw_pf_repr_xmit,
	.ndo_get_stats64 = vfw_pf_repr_get_stats64,
	.ndo_setup_tc = vfw_pf_setup_tc,
};

/* VF index of `dev` if it is one of pf's representors, else -1. */
int vfw_pf_repr_vf(struct vfw_pf *pf, const struct net_device *dev)
{
	const struct vfw_pf_repr *r;

	if (!dev || dev->netdev_ops != &vfw_pf_repr_ops)
		return -1;
	r = netdev_priv(dev);
	return r->pf == pf ? r->vf : -1;
}

/* The PF of a representor or of the PF netdev (the uplink representor). */
struct vfw_pf *vfw_pf_of_esw_netdev(struct net_device *dev)
{
	if (dev->netdev_ops == &vfw_pf_repr_ops)
		return repr_of(dev)->pf;
	if (vfw_pf_is_pf_netdev(dev))
		return vfw_pf_from_netdev(dev);
	return NULL;
}

/* vfw_eth's rx_port hook: a VF's slow-path frame to its representor. */
void vfw_pf_repr_rx(struct vfw_eth *eth, u16 vf, struct sk_buff *skb)
{
	struct vfw_pf *pf = vfw_pf_from_netdev(eth->netdev);
	struct vfw_pf_repr *r;
	unsigned int len = skb->len;

	rcu_read_lock();
	r = vf < VFW_SRIOV_TOTAL_VFS ? rcu_dereference(pf->repr[vf]) : NULL;
	if (!r || !netif_running(r->netdev)) {
		rcu_read_unlock();
		eth->stats.rx_errors++;
		dev_kfree_skb_any(skb);
		return;
	}
	skb->protocol = eth_type_trans(skb, r->netdev);
	u64_stats_update_begin(&r->syncp);
	r->rx_packets++;
	r->rx_bytes += len;
	u64_stats_update_end(&r->syncp);
	napi_gro_receive(&eth->napi, skb);
	rcu_read_unlock();
}

/* Caller holds the devlink lock; the VF's devlink port exists. */
int vfw_pf_repr_create(struct vfw_pf *pf, u16 vf)
{
	struct vfw_pf_repr *r;
	struct net_device *dev;
	int err;

	dev = alloc_etherdev(sizeof(*r));
	if (!dev)
		return -ENOMEM;
	r = netdev_priv(dev);
	r->pf = pf;
	r->netdev = dev;
	r->vf = vf;
	u64_stats_init(&r->syncp);
	SET_NETDEV_DEV(dev, &pf->pdev->dev);
	SET_NETDEV_DEVLINK_PORT(dev, &pf->vf_ports[vf].dl);
	dev->netdev_ops = &vfw_pf_repr_ops;
	dev->ethtool_ops = &vfw_pf_repr_ethtool_ops;
	dev->hw_features |= NETIF_F_HW_TC;  /* tc flower: pf_tc.c */
	dev->features |= NETIF_F_HW_TC;
	dev->min_mtu = ETH_MIN_MTU;
	dev->max_mtu = ETH_DATA_LEN;  /* the PF's RX buffers carry its frames */
	eth_hw_addr_random(dev);
	netif_carrier_off(dev);
	err = register_netdev(dev);
	if (err) {
		free_netdev(dev);
		return err;
	}
	rcu_assign_pointer(pf->repr[vf], r);
	return 0;
}

/* Caller holds the devlink lock. */
void vfw_pf_repr_destroy(struct vfw_pf *pf, u16 vf)
{
	struct vfw_pf_repr *r = rcu_dereference_protected(pf->repr[vf], true);

	if (!r)
		return;
	RCU_INIT_POINTER(pf->repr[vf], NULL);
	synchronize_net();      /* no NAPI poll still holds it */
	unregister_netdev(r->netdev);
	free_netdev(r->netdev);
}
