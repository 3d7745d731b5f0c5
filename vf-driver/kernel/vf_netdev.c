// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfwarp_vf: the VF's Ethernet netdev. MAC and link state come from the
 * device (VFW_REG_DP_MAC_*, VFW_REG_LINK_STATUS + the link vector); the PF
 * decides them (ip link set PF vf N mac/state ...). MSI-X: vector 0 link,
 * 1 RX ring, 2 TX ring. ethtool -S shows the driver's counters and the
 * device's per-function counters (including the switch's drops of this
 * VF's frames: spoof, VLAN, link, meter, ACL).
 */
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/interrupt.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/rtnetlink.h>

#include "vf.h"

static void vfw_vf_link_check(struct vfw_vf *vf)
{
	bool up = vfw_rd(vf, VFW_REG_LINK_STATUS) & VFW_LINK_UP;

	if (up && !netif_carrier_ok(vf->netdev))
		netif_carrier_on(vf->netdev);
	else if (!up && netif_carrier_ok(vf->netdev))
		netif_carrier_off(vf->netdev);
}

static irqreturn_t vfw_vf_link_irq(int irq, void *data)
{
	struct vfw_vf *vf = data;

	if (netif_running(vf->netdev))
		vfw_vf_link_check(vf);
	return IRQ_HANDLED;
}

static irqreturn_t vfw_vf_ring_irq(int irq, void *data)
{
	struct vfw_vf *vf = data;

	if (!vf->rings_up)
		return IRQ_HANDLED;
	vfw_vf_irq_enable(vf, false);
	napi_schedule_irqoff(&vf->napi);
	return IRQ_HANDLED;
}

static int vfw_vf_up(struct vfw_vf *vf)
{
	int err;

	err = vfw_vf_rings_up(vf);
	if (err)
		return err;
	napi_enable(&vf->napi);
	vfw_vf_irq_enable(vf, true);
	vfw_wr(vf, VFW_REG_LINK_CTRL, VFW_RING_CTRL_IRQ_EN |
	       (VFW_VF_VEC_LINK << VFW_RING_CTRL_VEC_SHIFT));
	vfw_vf_link_check(vf);
	netif_start_queue(vf->netdev);
	return 0;
}

static void vfw_vf_down(struct vfw_vf *vf)
{
	netif_stop_queue(vf->netdev);
	netif_carrier_off(vf->netdev);
	if (!vf->rings_up)
		return;
	vfw_wr(vf, VFW_REG_LINK_CTRL, 0);
	vfw_vf_irq_enable(vf, false);
	napi_disable(&vf->napi);
	vfw_vf_rings_down(vf);
}

static int vfw_vf_open(struct net_device *netdev)
{
	return vfw_vf_up(netdev_priv(netdev));
}

static int vfw_vf_stop(struct net_device *netdev)
{
	vfw_vf_down(netdev_priv(netdev));
	return 0;
}

static void vfw_vf_get_stats64(struct net_device *netdev,
			       struct rtnl_link_stats64 *st)
{
	struct vfw_vf *vf = netdev_priv(netdev);

	st->tx_packets = vf->stats.tx_packets;
	st->tx_bytes = vf->stats.tx_bytes;
	st->tx_errors = vf->stats.tx_errors;
	st->tx_dropped = vf->stats.tx_dropped;
	st->rx_packets = vf->stats.rx_packets;
	st->rx_bytes = vf->stats.rx_bytes;
	st->rx_errors = vf->stats.rx_errors;
}

static const struct net_device_ops vfw_vf_netdev_ops = {
	.ndo_open = vfw_vf_open,
	.ndo_stop = vfw_vf_stop,
	.ndo_start_xmit = vfw_vf_xmit,
	.ndo_get_stats64 = vfw_vf_get_stats64,
	/* The switch's spoof check decides whether another MAC may send. */
	.ndo_set_mac_address = eth_mac_addr,
	.ndo_validate_addr = eth_validate_addr,
};

/* ethtool -S: driver counters, then the device's (32-bit, wrapping). */
static const char vfw_vf_sw_names[][ETH_GSTRING_LEN] = {
	"tx_packets", "tx_bytes", "tx_errors", "tx_dropped", "tx_busy",
	"rx_packets", "rx_bytes", "rx_errors", "rx_alloc_fail",
};

static const char vfw_vf_hw_names[VFW_STAT_COUNT][ETH_GSTRING_LEN] = {
	[VFW_STAT_TX_PKTS] = "hw_tx_packets",
	[VFW_STAT_TX_BYTES] = "hw_tx_bytes",
	[VFW_STAT_RX_PKTS] = "hw_rx_packets",
	[VFW_STAT_RX_BYTES] = "hw_rx_bytes",
	[VFW_STAT_TX_DESC_ERR] = "hw_tx_desc_errors",
	[VFW_STAT_RX_NO_BUF] = "hw_rx_no_buffer",
	[VFW_STAT_RX_DESC_ERR] = "hw_rx_desc_errors",
	[VFW_STAT_TX_DROP_SPOOF] = "hw_tx_drop_spoof",
	[VFW_STAT_TX_DROP_VLAN] = "hw_tx_drop_vlan",
	[VFW_STAT_TX_DROP_LINK] = "hw_tx_drop_link",
	[VFW_STAT_TX_DROP_METER] = "hw_tx_drop_meter",
	[VFW_STAT_TX_DROP_ACL] = "hw_tx_drop_acl",
	[VFW_STAT_TX_DROP_OTHER] = "hw_tx_drop_other",
};

#define VFW_VF_NUM_SW ARRAY_SIZE(vfw_vf_sw_names)

static int vfw_vf_get_sset_count(struct net_device *netdev, int sset)
{
	return sset == ETH_SS_STATS ? VFW_VF_NUM_SW + VFW_STAT_COUNT :
				      -EOPNOTSUPP;
}

static void vfw_vf_get_strings(struct net_device *netdev, u32 sset, u8 *data)
{
	if (sset != ETH_SS_STATS)
		return;
	memcpy(data, vfw_vf_sw_names, sizeof(vfw_vf_sw_names));
	memcpy(data + sizeof(vfw_vf_sw_names), vfw_vf_hw_names,
	       sizeof(vfw_vf_hw_names));
}

static void vfw_vf_get_ethtool_stats(struct net_device *netdev,
				     struct ethtool_stats *es, u64 *data)
{
	struct vfw_vf *vf = netdev_priv(netdev);
	const struct vfw_vf_sw_stats *s = &vf->stats;
	int i = 0, n;

	data[i++] = s->tx_packets;
	data[i++] = s->tx_bytes;
	data[i++] = s->tx_errors;
	data[i++] = s->tx_dropped;
	data[i++] = s->tx_busy;
	data[i++] = s->rx_packets;
	data[i++] = s->rx_bytes;
	data[i++] = s->rx_errors;
	data[i++] = s->rx_alloc_fail;
	for (n = 0; n < VFW_STAT_COUNT; n++)
		data[i++] = vfw_rd(vf, VFW_REG_STAT(n));
}

static void vfw_vf_get_drvinfo(struct net_device *netdev,
			       struct ethtool_drvinfo *info)
{
	struct vfw_vf *vf = netdev_priv(netdev);

	strscpy(info->driver, VFW_VF_DRV_NAME, sizeof(info->driver));
	strscpy(info->bus_info, pci_name(vf->pdev), sizeof(info->bus_info));
}

static const struct ethtool_ops vfw_vf_ethtool_ops = {
	.get_drvinfo = vfw_vf_get_drvinfo,
	.get_link = ethtool_op_get_link,
	.get_sset_count = vfw_vf_get_sset_count,
	.get_strings = vfw_vf_get_strings,
	.get_ethtool_stats = vfw_vf_get_ethtool_stats,
};

static void vfw_vf_read_mac(struct vfw_vf *vf)
{
	u32 lo = vfw_rd(vf, VFW_REG_DP_MAC_LO);
	u32 hi = vfw_rd(vf, VFW_REG_DP_MAC_HI);
	u8 mac[ETH_ALEN] = { lo, lo >> 8, lo >> 16, lo >> 24, hi, hi >> 8 };

	if (is_valid_ether_addr(mac)) {
		eth_hw_addr_set(vf->netdev, mac);
	} else {
		eth_hw_addr_random(vf->netdev);
		dev_warn(&vf->pdev->dev, "no MAC from the device, using %pM\n",
			 vf->netdev->dev_addr);
	}
}

int vfw_vf_netdev_probe(struct pci_dev *pdev, void __iomem *bar0, u32 index)
{
	struct net_device *netdev;
	struct vfw_vf *vf;
	int err, nvec;

	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err)
		return err;
	pci_set_master(pdev);

	netdev = alloc_etherdev(sizeof(*vf));
	if (!netdev)
		return -ENOMEM;
	SET_NETDEV_DEV(netdev, &pdev->dev);
	vf = netdev_priv(netdev);
	vf->pdev = pdev;
	vf->netdev = netdev;
	vf->bar0 = bar0;
	vf->index = index;
	pci_set_drvdata(pdev, vf);

	nvec = pci_alloc_irq_vectors(pdev, VFW_VF_NUM_VEC, VFW_VF_NUM_VEC,
				     PCI_IRQ_MSIX);
	if (nvec < 0) {
		err = nvec;
		goto err_free;
	}
	err = request_irq(pci_irq_vector(pdev, VFW_VF_VEC_LINK),
			  vfw_vf_link_irq, 0, "vfwarp_vf-link", vf);
	if (err)
		goto err_vec;
	err = request_irq(pci_irq_vector(pdev, VFW_VF_VEC_RX),
			  vfw_vf_ring_irq, 0, "vfwarp_vf-rx", vf);
	if (err)
		goto err_irq0;
	err = request_irq(pci_irq_vector(pdev, VFW_VF_VEC_TX),
			  vfw_vf_ring_irq, 0, "vfwarp_vf-tx", vf);
	if (err)
		goto err_irq1;

	netdev->netdev_ops = &vfw_vf_netdev_ops;
	netdev->ethtool_ops = &vfw_vf_ethtool_ops;
	netdev->priv_flags |= IFF_LIVE_ADDR_CHANGE;
	netdev->min_mtu = ETH_MIN_MTU;
	netdev->max_mtu = ETH_DATA_LEN;
	netif_napi_add(netdev, &vf->napi, vfw_vf_poll);
	vfw_vf_read_mac(vf);
	netif_carrier_off(netdev);

	err = register_netdev(netdev);
	if (err)
		goto err_napi;
	netdev_info(netdev, "vfwarp VF %u netdev, mac %pM\n", index,
		    netdev->dev_addr);
	return 0;

err_napi:
	netif_napi_del(&vf->napi);
	free_irq(pci_irq_vector(pdev, VFW_VF_VEC_TX), vf);
err_irq1:
	free_irq(pci_irq_vector(pdev, VFW_VF_VEC_RX), vf);
err_irq0:
	free_irq(pci_irq_vector(pdev, VFW_VF_VEC_LINK), vf);
err_vec:
	pci_free_irq_vectors(pdev);
err_free:
	pci_set_drvdata(pdev, NULL);
	free_netdev(netdev);
	return err;
}

void vfw_vf_netdev_remove(struct pci_dev *pdev)
{
	struct vfw_vf *vf = pci_get_drvdata(pdev);

	if (!vf)
		return;
	unregister_netdev(vf->netdev);
	netif_napi_del(&vf->napi);
	free_irq(pci_irq_vector(pdev, VFW_VF_VEC_TX), vf);
	free_irq(pci_irq_vector(pdev, VFW_VF_VEC_RX), vf);
	free_irq(pci_irq_vector(pdev, VFW_VF_VEC_LINK), vf);
	pci_free_irq_vectors(pdev);
	pci_clear_master(pdev);
	pci_set_drvdata(pdev, NULL);
	free_netdev(vf->netdev);
}

/* FLR (sysfs reset, VFIO): the device forgets the rings; rebuild them. */
static void vfw_vf_reset_prepare(struct pci_dev *pdev)
{
	struct vfw_vf *vf = pci_get_drvdata(pdev);

	if (!vf)
		return;
	rtnl_lock();
	netif_device_detach(vf->netdev);
	if (netif_running(vf->netdev))
		vfw_vf_down(vf);
	rtnl_unlock();
}

static void vfw_vf_reset_done(struct pci_dev *pdev)
{
	struct vfw_vf *vf = pci_get_drvdata(pdev);

	if (!vf)
		return;
	rtnl_lock();
	pci_set_master(pdev);
	if (netif_running(vf->netdev) && vfw_vf_up(vf))
		netdev_err(vf->netdev, "cannot restart after reset\n");
	netif_device_attach(vf->netdev);
	rtnl_unlock();
}

const struct pci_error_handlers vfw_vf_err_handlers = {
	.reset_prepare = vfw_vf_reset_prepare,
	.reset_done = vfw_vf_reset_done,
};
