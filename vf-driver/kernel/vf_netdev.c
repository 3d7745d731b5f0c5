// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfwarp_vf: the VF's Ethernet netdev. MAC and link state come from the
 * device (VFW_REG_DP_MAC_*, VFW_REG_LINK_STATUS + the link vector); the PF
 * decides them (ip link set PF vf N mac/state ...). A MAC change, VLAN
 * devices and the multicast list / allmulti / promiscuous mode are asked
 * of the PF over the mailbox (vf_mbox.c), and a refusal is the syscall's
 * error. MSI-X: vector 0 link (also raised when the PF changes our MAC),
 * 1 RX ring, 2 TX ring, 3 mailbox. ethtool -S shows the driver's counters
 * and the device's per-function counters (including the switch's drops of
 * this VF's frames: spoof, VLAN, link, meter, ACL; multicast it filtered).
 * Rings, NAPI and counters are the function-agnostic
 * common/kernel/vfw_eth.c the PF shares.
 */
#include <linux/etherdevice.h>
#include <linux/ethtool.h>
#include <linux/interrupt.h>
#include <linux/netdevice.h>
#include <linux/pci.h>
#include <linux/rtnetlink.h>

#include "vf.h"

static int vfw_vf_open(struct net_device *netdev)
{
	struct vfw_vf *vf = netdev_priv(netdev);

	return vfw_eth_up(&vf->eth);
}

static int vfw_vf_stop(struct net_device *netdev)
{
	struct vfw_vf *vf = netdev_priv(netdev);

	vfw_eth_down(&vf->eth);
	return 0;
}

/* RX buffers are sized for the MTU when the rings are made: a running
 * netdev gets new rings (jumbo frames up to VFW_ETH_MAX_MTU). The RDMA
 * engine follows the MTU through the netdev notifier (vf_ib_main.c of
 * vfwarp_rdma). */
static int vfw_vf_change_mtu(struct net_device *netdev, int mtu)
{
	struct vfw_vf *vf = netdev_priv(netdev);
	bool running = netif_running(netdev);

	if (running)
		vfw_eth_down(&vf->eth);
	WRITE_ONCE(netdev->mtu, mtu);
	return running ? vfw_eth_up(&vf->eth) : 0;
}

static netdev_tx_t vfw_vf_xmit(struct sk_buff *skb, struct net_device *netdev)
{
	struct vfw_vf *vf = netdev_priv(netdev);

	return vfw_eth_xmit(&vf->eth, skb);
}

static u16 vfw_vf_select_queue(struct net_device *netdev, struct sk_buff *skb,
			       struct net_device *sb_dev)
{
	struct vfw_vf *vf = netdev_priv(netdev);

	return vfw_eth_select_queue(&vf->eth, skb);
}

static void vfw_vf_get_stats64(struct net_device *netdev,
			       struct rtnl_link_stats64 *st)
{
	struct vfw_vf *vf = netdev_priv(netdev);

	vfw_eth_get_stats64(&vf->eth, st);
}

/* The PF decides; the switch's FDB and spoof check follow its answer. */
static int vfw_vf_set_mac(struct net_device *netdev, void *p)
{
	struct vfw_vf *vf = netdev_priv(netdev);
	struct sockaddr *sa = p;
	int err;

	if (!is_valid_ether_addr(sa->sa_data))
		return -EADDRNOTAVAIL;
	if (ether_addr_equal(netdev->dev_addr, sa->sa_data))
		return 0;
	err = vfw_vf_mbx_set_mac(vf, sa->sa_data);
	if (err) {
		netdev_err(netdev, "PF refused MAC %pM: %d\n", sa->sa_data, err);
		return err;
	}
	eth_hw_addr_set(netdev, sa->sa_data);
	return 0;
}

/* VLAN devices on top of the VF: the PF grants each VLAN. VID 0 (priority
 * tags) is always allowed and needs no request. */
static int vfw_vf_vlan_add(struct net_device *netdev, __be16 proto, u16 vid)
{
	struct vfw_vf *vf = netdev_priv(netdev);
	int err;

	if (!vid)
		return 0;
	err = vfw_vf_mbx_vlan(vf, vid, true);
	if (err)
		netdev_err(netdev, "PF refused VLAN %u: %d\n", vid, err);
	return err;
}

static int vfw_vf_vlan_kill(struct net_device *netdev, __be16 proto, u16 vid)
{
	struct vfw_vf *vf = netdev_priv(netdev);

	return vid ? vfw_vf_mbx_vlan(vf, vid, false) : 0;
}

/* Called with the address lock held (atomic): ask from a work item. */
static void vfw_vf_set_rx_mode(struct net_device *netdev)
{
	struct vfw_vf *vf = netdev_priv(netdev);

	schedule_work(&vf->rx_mode_work);
}

static const struct net_device_ops vfw_vf_netdev_ops = {
	.ndo_open = vfw_vf_open,
	.ndo_stop = vfw_vf_stop,
	.ndo_start_xmit = vfw_vf_xmit,
	.ndo_select_queue = vfw_vf_select_queue,
	.ndo_change_mtu = vfw_vf_change_mtu,
	.ndo_get_stats64 = vfw_vf_get_stats64,
	.ndo_set_mac_address = vfw_vf_set_mac,
	.ndo_validate_addr = eth_validate_addr,
	.ndo_vlan_rx_add_vid = vfw_vf_vlan_add,
	.ndo_vlan_rx_kill_vid = vfw_vf_vlan_kill,
	.ndo_set_rx_mode = vfw_vf_set_rx_mode,
};

/* ethtool -S: driver counters, then the device's (32-bit, wrapping). */
static int vfw_vf_get_sset_count(struct net_device *netdev, int sset)
{
	return sset == ETH_SS_STATS ? VFW_ETH_NUM_STATS : -EOPNOTSUPP;
}

static void vfw_vf_get_strings(struct net_device *netdev, u32 sset, u8 *data)
{
	if (sset == ETH_SS_STATS)
		vfw_eth_get_strings(data);
}

static void vfw_vf_get_ethtool_stats(struct net_device *netdev,
				     struct ethtool_stats *es, u64 *data)
{
	struct vfw_vf *vf = netdev_priv(netdev);

	vfw_eth_get_ethtool_stats(&vf->eth, data);
}

static void vfw_vf_get_drvinfo(struct net_device *netdev,
			       struct ethtool_drvinfo *info)
{
	struct vfw_vf *vf = netdev_priv(netdev);

	strscpy(info->driver, VFW_VF_DRV_NAME, sizeof(info->driver));
	strscpy(info->bus_info, pci_name(vf->eth.pdev), sizeof(info->bus_info));
}

static const struct ethtool_ops vfw_vf_ethtool_ops = {
	.get_drvinfo = vfw_vf_get_drvinfo,
	.get_link = ethtool_op_get_link,
	.get_sset_count = vfw_vf_get_sset_count,
	.get_strings = vfw_vf_get_strings,
	.get_ethtool_stats = vfw_vf_get_ethtool_stats,
};

/* The link vector also fires when the PF changes our MAC (ip link set PF
 * vf N mac ...): the switch's spoof check now wants the new one. */
static irqreturn_t vfw_vf_link_irq(int irq, void *data)
{
	struct vfw_vf *vf = data;

	schedule_work(&vf->mac_work);
	return vfw_eth_link_irq(irq, &vf->eth);
}

static void vfw_vf_mac_work(struct work_struct *work)
{
	struct vfw_vf *vf = container_of(work, struct vfw_vf, mac_work);
	struct net_device *netdev = vf->eth.netdev;
	u32 lo = vfw_eth_rd(&vf->eth, VFW_REG_DP_MAC_LO);
	u32 hi = vfw_eth_rd(&vf->eth, VFW_REG_DP_MAC_HI);
	u8 mac[ETH_ALEN] = { lo, lo >> 8, lo >> 16, lo >> 24, hi, hi >> 8 };

	/* unchanged: the common case when the link handler shares the VF's
	 * one vector with the rings (one_vec) and runs at every interrupt */
	if (!is_valid_ether_addr(mac) || ether_addr_equal(netdev->dev_addr, mac))
		return;
	rtnl_lock();
	if (netdev->reg_state == NETREG_REGISTERED &&
	    !ether_addr_equal(netdev->dev_addr, mac)) {
		eth_hw_addr_set(netdev, mac);
		call_netdevice_notifiers(NETDEV_CHANGEADDR, netdev);
		netdev_info(netdev, "MAC %pM set by the PF\n", mac);
	}
	rtnl_unlock();
}

static void vfw_vf_read_mac(struct vfw_eth *eth)
{
	u32 lo = vfw_eth_rd(eth, VFW_REG_DP_MAC_LO);
	u32 hi = vfw_eth_rd(eth, VFW_REG_DP_MAC_HI);
	u8 mac[ETH_ALEN] = { lo, lo >> 8, lo >> 16, lo >> 24, hi, hi >> 8 };

	if (is_valid_ether_addr(mac)) {
		eth_hw_addr_set(eth->netdev, mac);
	} else {
		eth_hw_addr_random(eth->netdev);
		dev_warn(&eth->pdev->dev, "no MAC from the device, using %pM\n",
			 eth->netdev->dev_addr);
	}
}

/*
 * MSI-X. The device offers VFW_VF_NUM_VEC vectors (2.0: 8; 4 = the RDMA event
 * queue) and Ethernet needs the first VFW_VF_MIN_VEC. Or one vector for every
 * cause, the handlers shared on it (one_vec, vfw_vf_vec): with
 * msix_vectors=1, or when the CPUs' vector space is spent. x86 has about 200
 * vectors per CPU, and a VF's come out of it when its handlers are requested:
 * 128 VFs bound on a host of one CPU (the soak of issue 33) took them all by
 * the 37th VF, whose request_irq failed with -ENOSPC, and the fallback then
 * found about 20 left for 92 VFs. Such a host loads the module with
 * msix_vectors=1: 128 vectors in all.
 */
static int msix_vectors;
module_param(msix_vectors, int, 0444);
MODULE_PARM_DESC(msix_vectors, "MSI-X vectors per VF: 0 = all the VF offers (default), 1 = one shared by every cause (hosts binding many VFs on few CPUs)");

static void vfw_vf_irqs_down(struct vfw_vf *vf)
{
	struct pci_dev *pdev = vf->eth.pdev;
	struct vfw_eth *eth = &vf->eth;

	free_irq(pci_irq_vector(pdev, vfw_vf_vec(vf, VFW_VF_VEC_MBOX)), vf);
	if (!vf->one_vec)
		free_irq(pci_irq_vector(pdev, eth->vec_tx), eth);
	free_irq(pci_irq_vector(pdev, eth->vec_rx), eth);
	free_irq(pci_irq_vector(pdev, eth->vec_link), vf);
	pci_free_irq_vectors(pdev);
}

static int vfw_vf_irqs_up(struct vfw_vf *vf, bool one)
{
	struct pci_dev *pdev = vf->eth.pdev;
	struct vfw_eth *eth = &vf->eth;
	int err, nvec;

	one = one || msix_vectors == 1;
	nvec = one ? pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_MSIX) :
		     pci_alloc_irq_vectors(pdev, VFW_VF_MIN_VEC, VFW_VF_NUM_VEC, PCI_IRQ_MSIX);
	if (nvec < 0)
		return nvec;
	vf->nvec = nvec;
	vf->one_vec = one;
	eth->vec_link = vfw_vf_vec(vf, VFW_VF_VEC_LINK);
	eth->vec_rx = vfw_vf_vec(vf, VFW_VF_VEC_RX);
	eth->vec_tx = vfw_vf_vec(vf, VFW_VF_VEC_TX);
	err = request_irq(pci_irq_vector(pdev, eth->vec_link),
			  vfw_vf_link_irq, vfw_vf_irqf(vf), "vfwarp_vf-link", vf);
	if (err)
		goto err_vec;
	err = request_irq(pci_irq_vector(pdev, eth->vec_rx),
			  vfw_eth_ring_irq, vfw_vf_irqf(vf), "vfwarp_vf-rx", eth);
	if (err)
		goto err_irq0;
	/* one_vec: the RX handler serves both rings (one NAPI context) */
	err = vf->one_vec ? 0 : request_irq(pci_irq_vector(pdev, eth->vec_tx),
					    vfw_eth_ring_irq, 0, "vfwarp_vf-tx", eth);
	if (err)
		goto err_irq1;
	err = request_irq(pci_irq_vector(pdev, vfw_vf_vec(vf, VFW_VF_VEC_MBOX)),
			  vfw_vf_mbx_irq, vfw_vf_irqf(vf), "vfwarp_vf-mbox", vf);
	if (err)
		goto err_irq2;
	return 0;

err_irq2:
	if (!vf->one_vec)
		free_irq(pci_irq_vector(pdev, eth->vec_tx), eth);
err_irq1:
	free_irq(pci_irq_vector(pdev, eth->vec_rx), eth);
err_irq0:
	free_irq(pci_irq_vector(pdev, eth->vec_link), vf);
err_vec:
	pci_free_irq_vectors(pdev);
	vf->one_vec = false;
	return err;
}

int vfw_vf_netdev_probe(struct pci_dev *pdev, void __iomem *bar0, u32 index)
{
	struct net_device *netdev;
	struct vfw_eth *eth;
	struct vfw_vf *vf;
	int err;

	err = dma_set_mask_and_coherent(&pdev->dev, DMA_BIT_MASK(64));
	if (err)
		return err;
	pci_set_master(pdev);

	/* 2.5: a TX queue per traffic class (vfw_eth_select_queue) */
	netdev = alloc_etherdev_mqs(sizeof(*vf), VFW_TXQ_MAX, 1);
	if (!netdev)
		return -ENOMEM;
	SET_NETDEV_DEV(netdev, &pdev->dev);
	vf = netdev_priv(netdev);
	eth = &vf->eth;
	eth->pdev = pdev;
	eth->netdev = netdev;
	eth->bar0 = bar0;
	vfw_eth_init(eth);
	vf->index = index;
	mutex_init(&vf->mbx_lock);
	init_completion(&vf->mbx_done);
	INIT_WORK(&vf->rx_mode_work, vfw_vf_rx_mode_work);
	INIT_WORK(&vf->mac_work, vfw_vf_mac_work);
	pci_set_drvdata(pdev, vf);

	err = vfw_vf_irqs_up(vf, false);
	if (err == -ENOSPC && !vf->one_vec) {
		/* the CPUs' vector space is spent (vfw_vf_vec): one for all */
		err = vfw_vf_irqs_up(vf, true);
		if (!err)
			dev_info(&pdev->dev, "no vector space for %d MSI-X vectors: one for every cause\n",
				 VFW_VF_MIN_VEC);
	}
	if (err)
		goto err_free;
	vfw_vf_mbx_enable(vf);
	/* A new driver starts clean; without a PF driver answering, the VF
	 * still passes traffic, it only cannot change its port. */
	err = vfw_vf_mbx_hello(vf);
	if (err)
		dev_warn(&pdev->dev, "PF mailbox: hello failed (%d); MAC, VLAN and multicast changes will fail\n",
			 err);

	netdev->netdev_ops = &vfw_vf_netdev_ops;
	netdev->ethtool_ops = &vfw_vf_ethtool_ops;
	netdev->priv_flags |= IFF_LIVE_ADDR_CHANGE;
	netdev->features |= NETIF_F_HW_VLAN_CTAG_FILTER;
	netdev->min_mtu = ETH_MIN_MTU;
	netdev->max_mtu = VFW_ETH_MAX_MTU;
	netif_napi_add(netdev, &eth->napi, vfw_eth_poll);
	vfw_vf_read_mac(eth);
	netif_carrier_off(netdev);

	err = register_netdev(netdev);
	if (err)
		goto err_napi;
	netdev_info(netdev, "vfwarp VF %u netdev, mac %pM\n", index,
		    netdev->dev_addr);
	/* RDMA is an addition: its auxiliary device and devlink instance */
	err = vfw_vf_rdma_probe(vf);
	if (err)
		goto err_unreg;
	return 0;

err_unreg:
	unregister_netdev(netdev);
	cancel_work_sync(&vf->rx_mode_work);
err_napi:
	netif_napi_del(&eth->napi);
	vfw_vf_irqs_down(vf);
	cancel_work_sync(&vf->mac_work);
err_free:
	pci_set_drvdata(pdev, NULL);
	free_netdev(netdev);
	return err;
}

void vfw_vf_netdev_remove(struct pci_dev *pdev)
{
	struct vfw_vf *vf = pci_get_drvdata(pdev);
	struct vfw_eth *eth;

	if (!vf)
		return;
	eth = &vf->eth;
	vfw_vf_rdma_remove(vf);		/* the ib_device before its netdev */
	unregister_netdev(eth->netdev);
	cancel_work_sync(&vf->rx_mode_work);
	netif_napi_del(&eth->napi);
	vfw_vf_irqs_down(vf);
	cancel_work_sync(&vf->mac_work);
	pci_clear_master(pdev);
	pci_set_drvdata(pdev, NULL);
	free_netdev(eth->netdev);
}

/* FLR (sysfs reset, VFIO): the device forgets the rings; rebuild them. */
static void vfw_vf_reset_prepare(struct pci_dev *pdev)
{
	struct vfw_vf *vf = pci_get_drvdata(pdev);

	if (!vf)
		return;
	vfw_vf_rdma_reset_prepare(vf);
	rtnl_lock();
	netif_device_detach(vf->eth.netdev);
	if (netif_running(vf->eth.netdev))
		vfw_eth_down(&vf->eth);
	rtnl_unlock();
}

static void vfw_vf_reset_done(struct pci_dev *pdev)
{
	struct vfw_vf *vf = pci_get_drvdata(pdev);

	if (!vf)
		return;
	rtnl_lock();
	pci_set_master(pdev);
	/* The FLR withdrew any request and cleared the reply vector; what
	 * the PF granted (MAC, VLANs, RX mode) lives on in the switch. */
	vfw_vf_mbx_enable(vf);
	if (netif_running(vf->eth.netdev) && vfw_eth_up(&vf->eth))
		netdev_err(vf->eth.netdev, "cannot restart after reset\n");
	netif_device_attach(vf->eth.netdev);
	rtnl_unlock();
	vfw_vf_rdma_reset_done(vf);
}

const struct pci_error_handlers vfw_vf_err_handlers = {
	.reset_prepare = vfw_vf_reset_prepare,
	.reset_done = vfw_vf_reset_done,
};
