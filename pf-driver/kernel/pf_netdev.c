// SPDX-License-Identifier: GPL-2.0-only
/*
 * pf_netdev.c - the PF's net_device: the PF function's own TX/RX rings
 * through the embedded switch (to the uplink and to the VFs), with the
 * data path the VFs use (common/kernel/vfw_eth.c: rings, NAPI, counters);
 * MAC = the adapter's permanent MAC, carrier = the uplink's (LINK_STATUS +
 * the link vector); the VF ops of pf_vf.c; ethtool -S with the admin queue
 * counters and the ring counters; dcbnl ops from pf_dcb.c. MSI-X vectors
 * come from pf_irq.c.
 */
#include <linux/ethtool.h>
#include <linux/interrupt.h>
#include <linux/io.h>

#include "pf.h"
#include "vfw_eth.h"

struct vfw_pf_ndev {
	struct vfw_pf *pf;  /* first: vfw_pf_from_netdev() */
	struct vfw_eth eth;
};

static struct vfw_pf *ndev_pf(struct net_device *dev)
{
	return vfw_pf_from_netdev(dev);
}

static struct vfw_eth *ndev_eth(struct net_device *dev)
{
	return &((struct vfw_pf_ndev *)netdev_priv(dev))->eth;
}

static int vfw_pf_open(struct net_device *dev)
{
	return vfw_eth_up(ndev_eth(dev));
}

static int vfw_pf_stop(struct net_device *dev)
{
	vfw_eth_down(ndev_eth(dev));
	return 0;
}

static netdev_tx_t vfw_pf_start_xmit(struct sk_buff *skb,
				     struct net_device *dev)
{
	return vfw_eth_xmit(ndev_eth(dev), skb);
}

static u16 vfw_pf_select_queue(struct net_device *dev, struct sk_buff *skb,
			       struct net_device *sb_dev)
{
	return vfw_eth_select_queue(ndev_eth(dev), skb);
}

static void vfw_pf_get_stats64(struct net_device *dev,
			       struct rtnl_link_stats64 *st)
{
	vfw_eth_get_stats64(ndev_eth(dev), st);
}

/* The switch's ID (the adapter's MAC), as on the VF ports (pf_devlink.c):
 * the PF netdev is the uplink representor in switchdev mode, so a bridge
 * can offload it with the representors (one hardware domain). Answered
 * here rather than by the uplink devlink port: linking the netdev to the
 * port would rename it (docs/qos.md). */
static int vfw_pf_get_port_parent_id(struct net_device *dev,
				     struct netdev_phys_item_id *ppid)
{
	struct vfw_pf *pf = ndev_pf(dev);

	ppid->id_len = ETH_ALEN;
	memcpy(ppid->id, pf->mac, ETH_ALEN);
	return 0;
}

static const struct net_device_ops vfw_pf_netdev_ops = {
	.ndo_open = vfw_pf_open,
	.ndo_stop = vfw_pf_stop,
	.ndo_start_xmit = vfw_pf_start_xmit,
	.ndo_select_queue = vfw_pf_select_queue,
	.ndo_get_stats64 = vfw_pf_get_stats64,
	.ndo_validate_addr = eth_validate_addr,
	.ndo_set_vf_mac = vfw_pf_set_vf_mac,
	.ndo_set_vf_vlan = vfw_pf_set_vf_vlan,
	.ndo_set_vf_rate = vfw_pf_set_vf_rate,
	.ndo_set_vf_spoofchk = vfw_pf_set_vf_spoofchk,
	.ndo_set_vf_trust = vfw_pf_set_vf_trust,
	.ndo_set_vf_link_state = vfw_pf_set_vf_link_state,
	.ndo_get_vf_config = vfw_pf_get_vf_config,
	.ndo_get_vf_stats = vfw_pf_get_vf_stats,
	.ndo_setup_tc = vfw_pf_setup_tc,
	.ndo_get_port_parent_id = vfw_pf_get_port_parent_id,
};

bool vfw_pf_is_pf_netdev(const struct net_device *dev)
{
	return dev->netdev_ops == &vfw_pf_netdev_ops;
}

static void vfw_pf_get_drvinfo(struct net_device *dev,
			       struct ethtool_drvinfo *info)
{
	struct vfw_pf *pf = ndev_pf(dev);

	strscpy(info->driver, DRV_NAME, sizeof(info->driver));
	snprintf(info->fw_version, sizeof(info->fw_version), "hw %u.%u",
		 pf->version >> 16, pf->version & 0xffff);
	strscpy(info->bus_info, pci_name(pf->pdev), sizeof(info->bus_info));
}

static int vfw_pf_get_link_ksettings(struct net_device *dev,
				     struct ethtool_link_ksettings *ks)
{
	ethtool_link_ksettings_zero_link_mode(ks, supported);
	ethtool_link_ksettings_zero_link_mode(ks, advertising);
	ks->base.speed = netif_carrier_ok(dev) ? VFW_UPLINK_SPEED_MBPS :
						 SPEED_UNKNOWN;
	ks->base.duplex = netif_carrier_ok(dev) ? DUPLEX_FULL :
						  DUPLEX_UNKNOWN;
	ks->base.port = PORT_OTHER;
	ks->base.autoneg = AUTONEG_DISABLE;
	return 0;
}

/*
 * The driver's admin queue counters, then the device's (admin queue, uplink
 * port); then the ring counters of vfw_eth (driver, then device).
 */
static const char vfw_pf_stat_names[][ETH_GSTRING_LEN] = {
	"aq_cmds",
	"aq_errors",
	"aq_timeouts",
	"dev_aq_cmds_ok",
	"dev_aq_cmds_err",
	"uplink_rx_pkts",
	"uplink_tx_pkts",
};

#define VFW_PF_NUM_AQ_STATS ARRAY_SIZE(vfw_pf_stat_names)

static int vfw_pf_get_sset_count(struct net_device *dev, int sset)
{
	return sset == ETH_SS_STATS ? VFW_PF_NUM_AQ_STATS + VFW_ETH_NUM_STATS :
				      -EOPNOTSUPP;
}

static void vfw_pf_get_strings(struct net_device *dev, u32 sset, u8 *data)
{
	if (sset != ETH_SS_STATS)
		return;
	memcpy(data, vfw_pf_stat_names, sizeof(vfw_pf_stat_names));
	vfw_eth_get_strings(data + sizeof(vfw_pf_stat_names));
}

static void vfw_pf_get_ethtool_stats(struct net_device *dev,
				     struct ethtool_stats *stats, u64 *data)
{
	struct vfw_pf *pf = ndev_pf(dev);

	mutex_lock(&pf->aq_lock);
	data[0] = pf->aq_stats.cmds;
	data[1] = pf->aq_stats.errors;
	data[2] = pf->aq_stats.timeouts;
	mutex_unlock(&pf->aq_lock);
	data[3] = ioread32(pf->bar0 + VFW_REG_AQ_CMDS_OK);
	data[4] = ioread32(pf->bar0 + VFW_REG_AQ_CMDS_ERR);
	data[5] = ioread32(pf->bar0 + VFW_REG_UPLINK_RX_PKTS);
	data[6] = ioread32(pf->bar0 + VFW_REG_UPLINK_TX_PKTS);
	vfw_eth_get_ethtool_stats(ndev_eth(dev), data + VFW_PF_NUM_AQ_STATS);
}

static const struct ethtool_ops vfw_pf_ethtool_ops = {
	.get_drvinfo = vfw_pf_get_drvinfo,
	.get_link = ethtool_op_get_link,
	.get_link_ksettings = vfw_pf_get_link_ksettings,
	.get_sset_count = vfw_pf_get_sset_count,
	.get_strings = vfw_pf_get_strings,
	.get_ethtool_stats = vfw_pf_get_ethtool_stats,
};

struct vfw_eth *vfw_pf_eth(struct vfw_pf *pf)
{
	return ndev_eth(pf->netdev);
}

int vfw_pf_netdev_create(struct vfw_pf *pf)
{
	struct pci_dev *pdev = pf->pdev;
	struct vfw_pf_ndev *nd;
	struct net_device *dev;
	struct vfw_eth *eth;
	int err;

	/* 2.5: a TX queue per traffic class (vfw_eth_select_queue) */
	dev = alloc_etherdev_mqs(sizeof(struct vfw_pf_ndev), VFW_TXQ_MAX, 1);
	if (!dev)
		return -ENOMEM;
	nd = netdev_priv(dev);
	nd->pf = pf;
	eth = &nd->eth;
	eth->pdev = pdev;
	eth->netdev = dev;
	eth->bar0 = pf->bar0;
	eth->vec_link = VFW_PF_VEC_LINK;
	eth->vec_rx = VFW_PF_VEC_RX;
	eth->vec_tx = VFW_PF_VEC_TX;
	vfw_eth_init(eth);
	eth->rx_port = vfw_pf_repr_rx;

	err = request_irq(pci_irq_vector(pdev, VFW_PF_VEC_LINK),
			  vfw_eth_link_irq, 0, "vfwarp_pf-link", eth);
	if (err)
		goto err_free;
	err = request_irq(pci_irq_vector(pdev, VFW_PF_VEC_RX),
			  vfw_eth_ring_irq, 0, "vfwarp_pf-rx", eth);
	if (err)
		goto err_irq_link;
	err = request_irq(pci_irq_vector(pdev, VFW_PF_VEC_TX),
			  vfw_eth_ring_irq, 0, "vfwarp_pf-tx", eth);
	if (err)
		goto err_irq_rx;

	SET_NETDEV_DEV(dev, &pdev->dev);
	dev->netdev_ops = &vfw_pf_netdev_ops;
	dev->ethtool_ops = &vfw_pf_ethtool_ops;
	/* tc flower offload as the uplink representor (switchdev mode) */
	dev->hw_features |= NETIF_F_HW_TC;
	dev->features |= NETIF_F_HW_TC;
	/* RX buffers are VFW_ETH_RX_BUF bytes: no jumbo frames. */
	dev->min_mtu = ETH_MIN_MTU;
	dev->max_mtu = ETH_DATA_LEN;
	netif_napi_add(dev, &eth->napi, vfw_eth_poll);
	if (is_valid_ether_addr(pf->mac))
		eth_hw_addr_set(dev, pf->mac);
	else
		eth_hw_addr_random(dev);
	netif_carrier_off(dev);
	vfw_pf_dcb_set_ops(dev);
	pf->netdev = dev;
	err = register_netdev(dev);
	if (err)
		goto err_napi;
	vfw_pf_dcb_init(pf);
	return 0;

err_napi:
	pf->netdev = NULL;
	netif_napi_del(&eth->napi);
	free_irq(pci_irq_vector(pdev, VFW_PF_VEC_TX), eth);
err_irq_rx:
	free_irq(pci_irq_vector(pdev, VFW_PF_VEC_RX), eth);
err_irq_link:
	free_irq(pci_irq_vector(pdev, VFW_PF_VEC_LINK), eth);
err_free:
	free_netdev(dev);
	return err;
}

void vfw_pf_netdev_destroy(struct vfw_pf *pf)
{
	struct pci_dev *pdev = pf->pdev;
	struct vfw_eth *eth;

	if (!pf->netdev)
		return;
	eth = ndev_eth(pf->netdev);
	/* Stops the rings (ndo_stop) before their vectors go. */
	unregister_netdev(pf->netdev);
	netif_napi_del(&eth->napi);
	free_irq(pci_irq_vector(pdev, VFW_PF_VEC_TX), eth);
	free_irq(pci_irq_vector(pdev, VFW_PF_VEC_RX), eth);
	free_irq(pci_irq_vector(pdev, VFW_PF_VEC_LINK), eth);
	free_netdev(pf->netdev);
	pf->netdev = NULL;
}
