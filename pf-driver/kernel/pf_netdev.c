// SPDX-License-Identifier: GPL-2.0-only
/*
 * pf_netdev.c - the PF's net_device: MAC from the device, carrier from the
 * uplink, the VF ops of pf_vf.c, and ethtool (driver info, link, admin
 * queue counters for `ethtool -S`). No data path yet: transmitted frames
 * are counted as dropped and freed (the data path will live here).
 */
#include <linux/ethtool.h>
#include <linux/io.h>

#include "pf.h"

struct vfw_pf_ndev {
	struct vfw_pf *pf;  /* first: vfw_pf_from_netdev() */
};

static struct vfw_pf *ndev_pf(struct net_device *dev)
{
	return vfw_pf_from_netdev(dev);
}

static int vfw_pf_open(struct net_device *dev)
{
	struct vfw_pf *pf = ndev_pf(dev);

	if (ioread32(pf->bar0 + VFW_REG_FEATURES_LO) & VFW_FEAT_UPLINK)
		netif_carrier_on(dev);
	netif_start_queue(dev);
	return 0;
}

static int vfw_pf_stop(struct net_device *dev)
{
	netif_stop_queue(dev);
	netif_carrier_off(dev);
	return 0;
}

static netdev_tx_t vfw_pf_start_xmit(struct sk_buff *skb,
				     struct net_device *dev)
{
	DEV_STATS_INC(dev, tx_dropped);
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

static const struct net_device_ops vfw_pf_netdev_ops = {
	.ndo_open = vfw_pf_open,
	.ndo_stop = vfw_pf_stop,
	.ndo_start_xmit = vfw_pf_start_xmit,
	.ndo_validate_addr = eth_validate_addr,
	.ndo_set_vf_mac = vfw_pf_set_vf_mac,
	.ndo_set_vf_vlan = vfw_pf_set_vf_vlan,
	.ndo_set_vf_rate = vfw_pf_set_vf_rate,
	.ndo_set_vf_spoofchk = vfw_pf_set_vf_spoofchk,
	.ndo_set_vf_trust = vfw_pf_set_vf_trust,
	.ndo_set_vf_link_state = vfw_pf_set_vf_link_state,
	.ndo_get_vf_config = vfw_pf_get_vf_config,
	.ndo_get_vf_stats = vfw_pf_get_vf_stats,
};

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

/* Driver-side counters, then the device's own (registers). */
static const char vfw_pf_stat_names[][ETH_GSTRING_LEN] = {
	"aq_cmds",
	"aq_errors",
	"aq_timeouts",
	"dev_aq_cmds_ok",
	"dev_aq_cmds_err",
	"uplink_rx_pkts",
	"uplink_tx_pkts",
};

static int vfw_pf_get_sset_count(struct net_device *dev, int sset)
{
	return sset == ETH_SS_STATS ? ARRAY_SIZE(vfw_pf_stat_names) :
				      -EOPNOTSUPP;
}

static void vfw_pf_get_strings(struct net_device *dev, u32 sset, u8 *data)
{
	if (sset == ETH_SS_STATS)
		memcpy(data, vfw_pf_stat_names, sizeof(vfw_pf_stat_names));
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
}

static const struct ethtool_ops vfw_pf_ethtool_ops = {
	.get_drvinfo = vfw_pf_get_drvinfo,
	.get_link = ethtool_op_get_link,
	.get_link_ksettings = vfw_pf_get_link_ksettings,
	.get_sset_count = vfw_pf_get_sset_count,
	.get_strings = vfw_pf_get_strings,
	.get_ethtool_stats = vfw_pf_get_ethtool_stats,
};

int vfw_pf_netdev_create(struct vfw_pf *pf)
{
	struct net_device *dev;
	int err;

	dev = alloc_etherdev(sizeof(struct vfw_pf_ndev));
	if (!dev)
		return -ENOMEM;
	((struct vfw_pf_ndev *)netdev_priv(dev))->pf = pf;
	SET_NETDEV_DEV(dev, &pf->pdev->dev);
	dev->netdev_ops = &vfw_pf_netdev_ops;
	dev->ethtool_ops = &vfw_pf_ethtool_ops;
	if (is_valid_ether_addr(pf->mac))
		eth_hw_addr_set(dev, pf->mac);
	else
		eth_hw_addr_random(dev);
	netif_carrier_off(dev);
	pf->netdev = dev;
	err = register_netdev(dev);
	if (err) {
		pf->netdev = NULL;
		free_netdev(dev);
		return err;
	}
	return 0;
}

void vfw_pf_netdev_destroy(struct vfw_pf *pf)
{
	if (!pf->netdev)
		return;
	unregister_netdev(pf->netdev);
	free_netdev(pf->netdev);
	pf->netdev = NULL;
}
