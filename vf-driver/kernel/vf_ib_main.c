// SPDX-License-Identifier: GPL-2.0-only
/*
 * vfwarp_rdma: the VF's iWARP ib_device "vfwarp%d", an auxiliary driver
 * bound to the device "vfwarp_vf.rdma.<id>" vfwarp_vf.ko creates per VF
 * while its enable_rdma is on (vf_rdma_aux.h; irdma binds to ice alike).
 * The VF driver owns the PCI function: BAR mappings, the MSI-X vector of
 * the event queue and the netdev come in the auxiliary device.
 *
 * Probe: read the limits the PF gave this VF (BAR0 0x0a00), start the
 * verbs command queue and the event queue (vf_ib_cmd.c), use doorbell
 * page 0 of BAR4 for kernel QPs/CQs, tell the device our IPv4 address
 * and MTU (SET_ADDR, again on every change),
 * and register an RNIC with one iWARP port bound to the netdev: GID 0 is
 * the MAC, the node GUID is made from the MAC (librdmacm skips a device
 * whose GUID is zero), and every verb rdma_cm needs of a kernel provider
 * is there (vf_ib_verbs.c), or it would never bind.
 */
#include <linux/auxiliary_bus.h>
#include <linux/etherdevice.h>
#include <linux/inetdevice.h>
#include <linux/io.h>
#include <linux/module.h>
#include <linux/pci.h>
#include <linux/sizes.h>

#include "vfwarp/vfwarp_regs.h"
#include "vf_ib.h"
#include "vf_rdma_aux.h"

static inline u32 rd(struct vfw_ib_dev *dev, u32 reg)
{
	return ioread32(dev->bar0 + reg);
}

/* ---- device and port queries ------------------------------------------- */

static int vfw_query_device(struct ib_device *ibdev, struct ib_device_attr *a,
			    struct ib_udata *udata)
{
	struct vfw_ib_dev *dev = to_vdev(ibdev);
	struct vfw_ib_limits *l = &dev->lim;

	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	a->fw_ver = (u64)VFW_HW_VERSION_MAJOR << 32 | VFW_HW_VERSION_MINOR << 16;
	a->sys_image_guid = ibdev->node_guid;
	a->max_mr_size = (u64)l->max_mr_pages * SZ_4K;
	a->page_size_cap = SZ_4K;
	a->vendor_id = dev->pdev->vendor;
	a->vendor_part_id = dev->pdev->device;
	a->hw_ver = dev->pdev->revision;
	a->max_qp = l->max_qp;
	a->max_qp_wr = l->max_qp_depth;
	a->max_send_sge = l->max_sge;
	a->max_recv_sge = l->max_sge;
	a->max_sge_rd = 1;
	a->max_cq = l->max_cq;
	a->max_cqe = l->max_cq_depth - 1;
	a->max_mr = l->max_mr;
	a->max_pd = l->max_pd;
	a->max_qp_rd_atom = l->max_ord_ird;
	a->max_qp_init_rd_atom = l->max_ord_ird;
	a->max_res_rd_atom = l->max_qp * l->max_ord_ird;
	a->atomic_cap = IB_ATOMIC_NONE;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 0;
	a->max_fast_reg_page_list_len = 0;
	return 0;
}

/* The core's iw_query_port has set state (ACTIVE only with carrier and an
 * IPv4 address), MTUs and the GID-0 netdev already. */
static int vfw_query_port(struct ib_device *ibdev, u32 port,
			  struct ib_port_attr *a)
{
	a->gid_tbl_len = 1;
	a->pkey_tbl_len = 1;
	a->port_cap_flags = IB_PORT_CM_SUP | IB_PORT_DEVICE_MGMT_SUP;
	a->max_msg_sz = 0x80000000;
	a->active_speed = IB_SPEED_SDR;
	a->active_width = IB_WIDTH_1X;
	return 0;
}

static int vfw_query_gid(struct ib_device *ibdev, u32 port, int index,
			 union ib_gid *gid)
{
	struct vfw_ib_dev *dev = to_vdev(ibdev);

	if (index != 0)
		return -EINVAL;
	memset(gid, 0, sizeof(*gid));
	ether_addr_copy(gid->raw, dev->netdev->dev_addr);
	return 0;
}

static int vfw_query_pkey(struct ib_device *ibdev, u32 port, u16 index,
			  u16 *pkey)
{
	if (index != 0)
		return -EINVAL;
	*pkey = 0xffff;
	return 0;
}

static int vfw_get_port_immutable(struct ib_device *ibdev, u32 port,
				  struct ib_port_immutable *im)
{
	struct ib_port_attr attr;
	int err;

	im->core_cap_flags = RDMA_CORE_PORT_IWARP;
	err = ib_query_port(ibdev, port, &attr);
	if (err)
		return err;
	im->gid_tbl_len = attr.gid_tbl_len;
	im->pkey_tbl_len = attr.pkey_tbl_len;
	return 0;
}

static void vfw_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	struct vfw_ib_dev *dev = to_vdev(ibdev);
	u32 v = rd(dev, VFW_REG_VERSION);

	snprintf(str, IB_FW_VERSION_NAME_MAX, "hw %u.%u", v >> 16, v & 0xffff);
}

/* The device's RDMA counters (VFW_REG_RSTAT, 32-bit wrapping):
 * `rdma statistic show link vfwarp0/1`. */
static const struct rdma_stat_desc vfw_stat_descs[VFW_RSTAT_COUNT] = {
	[VFW_RSTAT_CMDS_OK] = { .name = "cmds_ok" },
	[VFW_RSTAT_CMDS_ERR] = { .name = "cmds_err" },
	[VFW_RSTAT_DB_REFUSED] = { .name = "db_refused" },
	[VFW_RSTAT_DB_BAD] = { .name = "db_bad" },
	[VFW_RSTAT_EQ_OVERFLOW] = { .name = "eq_overflow" },
	[VFW_RSTAT_CQ_OVERFLOW] = { .name = "cq_overflow" },
	[VFW_RSTAT_RX_FRAMES] = { .name = "rx_frames" },
	[VFW_RSTAT_TX_FRAMES] = { .name = "tx_frames" },
	[VFW_RSTAT_RX_DROPS] = { .name = "rx_drops" },
	[VFW_RSTAT_DMA_ERR] = { .name = "dma_err" },
	[VFW_RSTAT_PROT_ERR] = { .name = "prot_err" },
	[VFW_RSTAT_SYN_DROPS] = { .name = "syn_drops" },
};

static struct rdma_hw_stats *vfw_alloc_hw_port_stats(struct ib_device *ibdev,
						     u32 port)
{
	return rdma_alloc_hw_stats_struct(vfw_stat_descs, VFW_RSTAT_COUNT,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int vfw_get_hw_stats(struct ib_device *ibdev, struct rdma_hw_stats *st,
			    u32 port, int index)
{
	struct vfw_ib_dev *dev = to_vdev(ibdev);
	int i;

	for (i = 0; i < VFW_RSTAT_COUNT; i++)
		st->value[i] = rd(dev, VFW_REG_RSTAT(i));
	return VFW_RSTAT_COUNT;
}

static const struct ib_device_ops vfw_ib_dev_ops = {
	.alloc_hw_port_stats = vfw_alloc_hw_port_stats,
	.get_hw_stats = vfw_get_hw_stats,
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = VFWARP_ABI_VERSION,
	.query_device = vfw_query_device,
	.query_port = vfw_query_port,
	.query_gid = vfw_query_gid,
	.query_pkey = vfw_query_pkey,
	.get_port_immutable = vfw_get_port_immutable,
	.get_dev_fw_str = vfw_get_dev_fw_str,
};

/* ---- local address --------------------------------------------------------- */

/* Tell the device the netdev's first IPv4 address and its MTU (0.0.0.0
 * when it has none): the device's TCP uses them for listeners and
 * connections, and it takes frames to that address off the netdev. */
static void vfw_ib_addr_work(struct work_struct *work)
{
	struct vfw_ib_dev *dev = container_of(work, struct vfw_ib_dev, addr_work);
	struct vfw_rcmd cmd = { .opcode = VFW_RCMD_SET_ADDR };
	struct in_device *in;
	__be32 ip = 0;
	u16 mtu;
	int err;

	rcu_read_lock();
	in = __in_dev_get_rcu(dev->netdev);
	if (in) {
		const struct in_ifaddr *ifa;

		in_dev_for_each_ifa_rcu(ifa, in) {
			ip = ifa->ifa_local;
			break;
		}
	}
	rcu_read_unlock();
	mtu = clamp_t(u32, READ_ONCE(dev->netdev->mtu), 576, 9000);
	if (ip == dev->cur_ip && mtu == dev->cur_mtu)
		return;
	memcpy(cmd.u.set_addr.ip, &ip, 4);
	cmd.u.set_addr.mtu = mtu;
	err = vfw_ib_cmd(dev, &cmd);
	if (err) {
		dev_err(&dev->pdev->dev, "RDMA SET_ADDR %pI4 mtu %u: %d\n", &ip, mtu, err);
		return;
	}
	dev->cur_mtu = mtu;
	vfw_ib_cm_addr_changed(dev, ip);
	dev_info(&dev->pdev->dev, "RDMA local address %pI4, MTU %u\n", &ip, mtu);
}

static int vfw_ib_inet_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct vfw_ib_dev *dev = container_of(nb, struct vfw_ib_dev, inet_nb);
	const struct in_ifaddr *ifa = ptr;

	if (ifa->ifa_dev && ifa->ifa_dev->dev == dev->netdev &&
	    (event == NETDEV_UP || event == NETDEV_DOWN))
		schedule_work(&dev->addr_work);
	return NOTIFY_DONE;
}

static int vfw_ib_netdev_event(struct notifier_block *nb, unsigned long event,
			       void *ptr)
{
	struct vfw_ib_dev *dev = container_of(nb, struct vfw_ib_dev, netdev_nb);
	struct net_device *nd = netdev_notifier_info_to_dev(ptr);

	if (nd != dev->netdev)
		return NOTIFY_DONE;
	switch (event) {
	case NETDEV_CHANGEMTU:
		schedule_work(&dev->addr_work);
		break;
	case NETDEV_CHANGENAME:
		memcpy(dev->ibdev.iw_ifname, nd->name, sizeof(dev->ibdev.iw_ifname));
		break;
	default:
		break;
	}
	return NOTIFY_DONE;
}

/* ---- probe / remove -------------------------------------------------------- */

static void read_limits(struct vfw_ib_dev *dev)
{
	struct vfw_ib_limits *l = &dev->lim;

	/* The device's word, bounded by the hardware maxima and by what
	 * this driver's structures can hold. */
	l->caps = rd(dev, VFW_REG_RDMA_CAPS);
	l->max_qp = min_t(u32, rd(dev, VFW_REG_RDMA_MAX_QP), VFW_RDMA_HW_QP);
	l->max_cq = min_t(u32, rd(dev, VFW_REG_RDMA_MAX_CQ), VFW_RDMA_HW_CQ);
	l->max_mr = min_t(u32, rd(dev, VFW_REG_RDMA_MAX_MR), VFW_RDMA_HW_MR);
	l->max_pd = min_t(u32, rd(dev, VFW_REG_RDMA_MAX_PD), VFW_RDMA_HW_PD);
	l->max_mr_pages = min_t(u32, rd(dev, VFW_REG_RDMA_MAX_MR_PAGES),
				VFW_RDMA_HW_MR_PAGES);
	l->max_conn = min_t(u32, rd(dev, VFW_REG_RDMA_MAX_CONN), VFW_RDMA_HW_CONN);
	l->max_qp_depth = min_t(u32, rd(dev, VFW_REG_RDMA_MAX_QP_DEPTH),
				VFW_RDMA_MAX_QP_DEPTH);
	l->max_cq_depth = min_t(u32, rd(dev, VFW_REG_RDMA_MAX_CQ_DEPTH),
				VFW_RDMA_MAX_CQ_DEPTH);
	l->max_sge = min_t(u32, rd(dev, VFW_REG_RDMA_MAX_SGE), VFW_RDMA_MAX_SGE);
	l->max_inline = min_t(u32, rd(dev, VFW_REG_RDMA_MAX_INLINE),
			      VFW_RDMA_MAX_INLINE);
	l->max_ord_ird = min_t(u32, rd(dev, VFW_REG_RDMA_MAX_ORD_IRD),
			       VFW_RDMA_MAX_ORD_IRD);
	l->db_pages = min_t(u32, rd(dev, VFW_REG_RDMA_DB_PAGES), VFW_DB_PAGES);
	l->max_pdata = min_t(u32, rd(dev, VFW_REG_RDMA_MAX_PDATA),
			     VFW_RDMA_MAX_PDATA);
	/* depths are powers of two; keep the largest one the device allows */
	if (l->max_qp_depth)
		l->max_qp_depth = rounddown_pow_of_two(l->max_qp_depth);
	if (l->max_cq_depth)
		l->max_cq_depth = rounddown_pow_of_two(l->max_cq_depth);
}

static u64 guid_from_mac(const u8 *mac)
{
	u8 g[8] = { mac[0] ^ 2, mac[1], mac[2], 0xff, 0xfe, mac[3], mac[4], mac[5] };

	return *(__be64 *)g;
}

static int vfw_ib_probe(struct auxiliary_device *adev,
			const struct auxiliary_device_id *id)
{
	struct vfw_rdma_aux_dev *ad = to_vfw_rdma_aux(adev);
	struct pci_dev *pdev = ad->pdev;
	struct net_device *netdev = ad->netdev;
	struct vfw_ib_dev *dev;
	struct ib_device *ibdev;
	int err;

	dev = ib_alloc_device(vfw_ib_dev, ibdev);
	if (!dev)
		return -ENOMEM;
	ibdev = &dev->ibdev;
	dev->adev = ad;
	dev->pdev = pdev;
	dev->netdev = netdev;
	dev->bar0 = ad->bar0;
	dev->eq_irq = ad->eq_irq;
	dev->eq_vec = ad->eq_vec;
	spin_lock_init(&dev->db_lock);
	spin_lock_init(&dev->cm_evt_lock);
	INIT_LIST_HEAD(&dev->cm_evts);
	INIT_LIST_HEAD(&dev->lsn_list);
	mutex_init(&dev->cm_lock);
	INIT_WORK(&dev->cm_work, vfw_ib_cm_work);
	INIT_WORK(&dev->addr_work, vfw_ib_addr_work);
	xa_init(&dev->ceps);
	xa_init_flags(&dev->cep_keys, XA_FLAGS_ALLOC1);
	xa_init(&dev->listeners);
	xa_init_flags(&dev->cqs, XA_FLAGS_LOCK_IRQ);
	xa_init_flags(&dev->qps, XA_FLAGS_LOCK_IRQ);
	dev->cur_mtu = 0;
	dev->cur_ip = 0;

	read_limits(dev);
	if (!dev->lim.max_qp || !dev->lim.max_cq || !dev->lim.max_pd ||
	    dev->lim.max_qp_depth < 2 || dev->lim.max_cq_depth < 2 ||
	    dev->lim.db_pages < 1 || dev->lim.max_ord_ird < 1 ||
	    dev->lim.max_pdata < 4) {
		dev_warn(&pdev->dev, "RDMA quota is empty (qp %u cq %u pd %u); no ib_device\n",
			 dev->lim.max_qp, dev->lim.max_cq, dev->lim.max_pd);
		err = -ENODEV;		/* the auxiliary device stays unbound */
		goto err_dealloc;
	}
	/* BAR4 page 0 (the VF driver mapped it) for ours; user pages are
	 * mapped by address */
	dev->kdb = ad->kdb;
	dev->db_phys = ad->db_phys;
	dev->lim.db_pages = min_t(u32, dev->lim.db_pages,
				  ad->db_len / VFW_DB_PAGE_SIZE);
	__set_bit(0, dev->db_used);

	dev->cm_wq = alloc_ordered_workqueue("vfwarp_cm/%s", 0, pci_name(pdev));
	if (!dev->cm_wq) {
		err = -ENOMEM;
		goto err_dealloc;
	}
	err = vfw_ib_rcq_init(dev);
	if (err)
		goto err_wq;
	err = vfw_ib_eq_init(dev);
	if (err)
		goto err_rcq;

	ibdev->node_type = RDMA_NODE_RNIC;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = 1;
	ibdev->dev.parent = &pdev->dev;
	ibdev->node_guid = guid_from_mac(netdev->dev_addr);
	strscpy(ibdev->node_desc, "vfwarp VF", sizeof(ibdev->node_desc));
	memcpy(ibdev->iw_ifname, netdev->name, sizeof(ibdev->iw_ifname));
	/* no iwpmd: ports stay as rdma_cm chose them; we reserve them */
	ibdev->iw_driver_flags = IW_F_NO_PORT_MAP;
	ib_set_device_ops(ibdev, &vfw_ib_dev_ops);
	ib_set_device_ops(ibdev, &vfw_ib_verbs_ops);
	ib_set_device_ops(ibdev, &vfw_ib_cm_ops);
	ib_set_device_ops(ibdev, &vfw_ib_mmap_ops);
	err = ib_device_set_netdev(ibdev, netdev, 1);
	if (err)
		goto err_eq;

	/* address before registration: rdma_cm may bind at once */
	vfw_ib_addr_work(&dev->addr_work);
	dev->inet_nb.notifier_call = vfw_ib_inet_event;
	err = register_inetaddr_notifier(&dev->inet_nb);
	if (err)
		goto err_netdev;
	dev->netdev_nb.notifier_call = vfw_ib_netdev_event;
	err = register_netdevice_notifier(&dev->netdev_nb);
	if (err)
		goto err_inet;

	err = ib_register_device(ibdev, "vfwarp%d", &pdev->dev);
	if (err)
		goto err_nd;
	dev->registered = true;
	auxiliary_set_drvdata(adev, dev);
	ibdev_info(ibdev, "iWARP on %s: qp %u cq %u mr %u pd %u conn %u, depth qp %u cq %u, %u doorbell pages\n",
		   netdev_name(netdev), dev->lim.max_qp, dev->lim.max_cq,
		   dev->lim.max_mr, dev->lim.max_pd, dev->lim.max_conn,
		   dev->lim.max_qp_depth, dev->lim.max_cq_depth, dev->lim.db_pages);
	return 0;

err_nd:
	unregister_netdevice_notifier(&dev->netdev_nb);
err_inet:
	unregister_inetaddr_notifier(&dev->inet_nb);
err_netdev:
	cancel_work_sync(&dev->addr_work);
	ib_device_set_netdev(ibdev, NULL, 1);
err_eq:
	vfw_ib_eq_fini(dev);
err_rcq:
	vfw_ib_rcq_fini(dev);
err_wq:
	destroy_workqueue(dev->cm_wq);
err_dealloc:
	ib_dealloc_device(ibdev);
	return err;
}

/* The VF driver deletes the auxiliary device before its netdev goes, before
 * an FLR and when enable_rdma is turned off: unregistering makes the core
 * close every user context and kernel client (users see DEVICE_REMOVAL, a
 * fatal event, EIO), which destroys all our objects while the device still
 * answers commands. */
static void vfw_ib_remove(struct auxiliary_device *adev)
{
	struct vfw_ib_dev *dev = auxiliary_get_drvdata(adev);

	if (!dev)
		return;
	auxiliary_set_drvdata(adev, NULL);
	unregister_netdevice_notifier(&dev->netdev_nb);
	unregister_inetaddr_notifier(&dev->inet_nb);
	cancel_work_sync(&dev->addr_work);
	ib_unregister_device(&dev->ibdev);
	vfw_ib_eq_fini(dev);
	vfw_ib_cm_fini(dev);
	destroy_workqueue(dev->cm_wq);
	vfw_ib_rcq_fini(dev);
	xa_destroy(&dev->ceps);
	xa_destroy(&dev->cep_keys);
	xa_destroy(&dev->listeners);
	xa_destroy(&dev->cqs);
	xa_destroy(&dev->qps);
	ib_dealloc_device(&dev->ibdev);
}

static const struct auxiliary_device_id vfw_ib_aux_ids[] = {
	{ .name = VFW_RDMA_AUX_MATCH },
	{ }
};
MODULE_DEVICE_TABLE(auxiliary, vfw_ib_aux_ids);

static struct auxiliary_driver vfw_ib_aux_driver = {
	.name = "ib",
	.id_table = vfw_ib_aux_ids,
	.probe = vfw_ib_probe,
	.remove = vfw_ib_remove,
};
module_auxiliary_driver(vfw_ib_aux_driver);

MODULE_DESCRIPTION("vfwarp SR-IOV iWARP adapter: RDMA (iWARP ib_device) of a VF");
MODULE_LICENSE("GPL");
/* user verbs need ib_uverbs; rdma_cm/iw_cm bind as ib_core clients */
MODULE_SOFTDEP("pre: ib_uverbs iw_cm rdma_cm");
