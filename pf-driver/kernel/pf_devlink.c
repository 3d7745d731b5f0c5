// SPDX-License-Identifier: GPL-2.0-only
/*
 * pf_devlink.c - the PF's devlink instance and its ports.
 *
 * One instance per adapter (pci/<BDF>), with:
 *  - the uplink, flavour physical, port index VFW_PF_UPLINK_PORT_INDEX;
 *  - the PF, flavour pcipf, port index 0;
 *  - each VF while SR-IOV is enabled, flavour pcivf, port index 1 + n
 *    (created and removed with sriov_numvfs).
 * Port index = the device's function index (0 PF, 1 + n VF n), the index
 * of the function's QoS leaf, so `pci/<BDF>/3` is VF 2 in devlink rate
 * and in the admin commands alike. The PF and VF ports carry a devlink
 * rate leaf (pf_rate.c).
 *
 * The eswitch mode and the VF representors of switchdev mode are
 * pf_eswitch.c's and pf_repr.c's; VFs added or removed here gain or lose
 * their representors in switchdev mode.
 *
 * The PF netdev is deliberately not linked to the uplink port
 * (SET_NETDEV_DEVLINK_PORT): the link gives it a phys_port_name ("p0"),
 * from which udev's predictable names rename enp1s0 to enp1s0np0 and break
 * every existing configuration. Issue 16 (uplink representor) revisits it.
 *
 * Lock order: devlink instance lock, then vf_ports_lock. The ndo path
 * (pf_vf.c, under rtnl) takes only vf_ports_lock: drivers with representors
 * register netdevs (rtnl) under the devlink lock, so rtnl -> devlink would
 * invert that order.
 */
#include <linux/slab.h>

#include "pf.h"

/* Driver-specific devlink params. */
enum {
	VFW_PF_PARAM_LINE_RATE = DEVLINK_PARAM_GENERIC_ID_MAX + 1,
};

static struct vfw_pf *devlink_pf(struct devlink *devlink)
{
	return *(struct vfw_pf **)devlink_priv(devlink);
}

static int vfw_pf_info_get(struct devlink *devlink,
			   struct devlink_info_req *req,
			   struct netlink_ext_ack *extack)
{
	struct vfw_pf *pf = devlink_pf(devlink);
	char buf[32];
	int err;

	/* The driver name is filled in by the devlink core. The hardware
	 * interface (include/vfwarp/) is what a firmware's interface version
	 * is on silicon: the contract the driver speaks with the device. */
	snprintf(buf, sizeof(buf), "%u.%u", pf->version >> 16,
		 pf->version & 0xffff);
	err = devlink_info_version_running_put(req,
			DEVLINK_INFO_VERSION_GENERIC_FW_MGMT_API, buf);
	if (err)
		return err;
	snprintf(buf, sizeof(buf), "%04x:%04x", pf->pdev->vendor,
		 pf->pdev->device);
	return devlink_info_version_fixed_put(req,
			DEVLINK_INFO_VERSION_GENERIC_ASIC_ID, buf);
}

/*
 * line_rate_kbps: the uplink's line rate (QOS_SET_LINE / QOS_GET_LINE),
 * kbit/s as dcb maxrate, 0 = no line rate. A devlink param rather than
 * ethtool's link speed: the rate is the adapter scheduler's, not a
 * negotiated PHY mode (the port stays a 10 Gbit/s link for ip link's VF
 * rates), and devlink params are where device-wide knobs live. Read from
 * the device, so it shows what the device enforces (also a QEMU
 * line-rate= property). docs/qos.md says more.
 */
static int vfw_pf_param_line_rate_get(struct devlink *devlink, u32 id,
				      struct devlink_param_gset_ctx *ctx)
{
	u64 bps;
	int err = vfw_pf_line_rate_get(devlink_pf(devlink), &bps);

	if (err)
		return err;
	ctx->val.vu32 = min_t(u64, div_u64(bps, 1000), U32_MAX);
	return 0;
}

static int vfw_pf_param_line_rate_set(struct devlink *devlink, u32 id,
				      struct devlink_param_gset_ctx *ctx,
				      struct netlink_ext_ack *extack)
{
	return vfw_pf_line_rate_set(devlink_pf(devlink),
				    (u64)ctx->val.vu32 * 1000, extack);
}

static const struct devlink_param vfw_pf_params[] = {
	DEVLINK_PARAM_DRIVER(VFW_PF_PARAM_LINE_RATE, "line_rate_kbps",
			     DEVLINK_PARAM_TYPE_U32,
			     BIT(DEVLINK_PARAM_CMODE_RUNTIME),
			     vfw_pf_param_line_rate_get,
			     vfw_pf_param_line_rate_set, NULL),
};

static const struct devlink_ops vfw_pf_devlink_ops = {
	.eswitch_mode_get = vfw_pf_eswitch_mode_get,
	.eswitch_mode_set = vfw_pf_eswitch_mode_set,
	.info_get = vfw_pf_info_get,
	.rate_leaf_tx_share_set = vfw_pf_rate_leaf_tx_share_set,
	.rate_leaf_tx_max_set = vfw_pf_rate_leaf_tx_max_set,
	.rate_leaf_tx_priority_set = vfw_pf_rate_leaf_tx_priority_set,
	.rate_leaf_tx_weight_set = vfw_pf_rate_leaf_tx_weight_set,
	.rate_leaf_parent_set = vfw_pf_rate_leaf_parent_set,
	.rate_node_new = vfw_pf_rate_node_new,
	.rate_node_del = vfw_pf_rate_node_del,
	.rate_node_tx_share_set = vfw_pf_rate_node_tx_share_set,
	.rate_node_tx_max_set = vfw_pf_rate_node_tx_max_set,
	.rate_node_tx_priority_set = vfw_pf_rate_node_tx_priority_set,
	.rate_node_tx_weight_set = vfw_pf_rate_node_tx_weight_set,
	.rate_node_parent_set = vfw_pf_rate_node_parent_set,
};

/* The PCI function number of the PF: the pf number of pcipf/pcivf ports. */
static u16 vfw_pf_pf_num(struct vfw_pf *pf)
{
	return PCI_FUNC(pf->pdev->devfn);
}

/* Register a function's port (PF: fn 0, VF n: fn 1 + n) and its leaf. */
static int vfw_pf_fn_port_add(struct vfw_pf *pf, struct vfw_pf_port *port,
			      u16 fn)
{
	int err;

	port->pf = pf;
	port->fn = fn;
	/* The switch's ID, the adapter's permanent MAC, on every VF port: a
	 * representor's parent ID (switchdev, the bridge's hardware domain) */
	port->dl.attrs.switch_id.id_len = ETH_ALEN;
	memcpy(port->dl.attrs.switch_id.id, pf->mac, ETH_ALEN);
	if (fn == 0)
		devlink_port_attrs_pci_pf_set(&port->dl, 0, vfw_pf_pf_num(pf),
					      false);
	else
		devlink_port_attrs_pci_vf_set(&port->dl, 0, vfw_pf_pf_num(pf),
					      fn - 1, false);
	err = devl_port_register(pf->devlink, &port->dl, fn);
	if (err)
		return err;
	err = vfw_pf_rate_leaf_create(port);
	if (err) {
		devl_port_unregister(&port->dl);
		return err;
	}
	return 0;
}

static void vfw_pf_fn_port_del(struct vfw_pf_port *port)
{
	/* Callers destroy leaves before nodes: devl_rate_nodes_destroy()
	 * leaves a leaf's parent pointer set, which devl_rate_leaf_destroy()
	 * would then follow into a freed node. In the device, removed VFs'
	 * leaves return to the defaults by themselves (docs/qos.md). */
	devl_rate_leaf_destroy(&port->dl);
	devl_port_unregister(&port->dl);
}

/* Caller holds the devlink lock. */
static int __vfw_pf_devlink_vfs_add(struct vfw_pf *pf, int num_vfs)
{
	struct vfw_pf_port *ports;
	int i, err;

	ports = kcalloc(num_vfs, sizeof(*ports), GFP_KERNEL);
	if (!ports)
		return -ENOMEM;
	for (i = 0; i < num_vfs; i++) {
		err = vfw_pf_fn_port_add(pf, &ports[i], 1 + i);
		if (err)
			goto err_port;
	}
	mutex_lock(&pf->vf_ports_lock);
	pf->vf_ports = ports;
	pf->num_vf_ports = num_vfs;
	mutex_unlock(&pf->vf_ports_lock);
	err = vfw_pf_eswitch_vfs_add(pf, num_vfs);
	if (err) {
		mutex_lock(&pf->vf_ports_lock);
		pf->vf_ports = NULL;
		pf->num_vf_ports = 0;
		mutex_unlock(&pf->vf_ports_lock);
		goto err_port;
	}
	return 0;

err_port:
	while (i--)
		vfw_pf_fn_port_del(&ports[i]);
	kfree(ports);
	return err;
}

/* Caller holds the devlink lock. */
static void __vfw_pf_devlink_vfs_del(struct vfw_pf *pf)
{
	struct vfw_pf_port *ports;
	int i, num;

	/* Representors go before the ports they are linked to. */
	vfw_pf_eswitch_vfs_del(pf, pf->num_vf_ports);
	/* Unpublish first: the ndo path must not reach a leaf being freed. */
	mutex_lock(&pf->vf_ports_lock);
	ports = pf->vf_ports;
	num = pf->num_vf_ports;
	pf->vf_ports = NULL;
	pf->num_vf_ports = 0;
	mutex_unlock(&pf->vf_ports_lock);
	for (i = num - 1; i >= 0; i--)
		vfw_pf_fn_port_del(&ports[i]);
	kfree(ports);
}

/* sriov_configure: a port (and leaf) per VF just enabled. */
int vfw_pf_devlink_vfs_add(struct vfw_pf *pf, int num_vfs)
{
	int err;

	devl_lock(pf->devlink);
	err = __vfw_pf_devlink_vfs_add(pf, num_vfs);
	devl_unlock(pf->devlink);
	return err;
}

/* sriov_configure: the VF ports go before the VFs do. */
void vfw_pf_devlink_vfs_del(struct vfw_pf *pf)
{
	devl_lock(pf->devlink);
	__vfw_pf_devlink_vfs_del(pf);
	devl_unlock(pf->devlink);
}

int vfw_pf_devlink_init(struct vfw_pf *pf)
{
	struct devlink_port_attrs attrs = {};
	struct devlink *devlink;
	int err;

	devlink = devlink_alloc(&vfw_pf_devlink_ops, sizeof(pf),
				&pf->pdev->dev);
	if (!devlink)
		return -ENOMEM;
	*(struct vfw_pf **)devlink_priv(devlink) = pf;
	pf->devlink = devlink;
	mutex_init(&pf->vf_ports_lock);

	devl_lock(devlink);
	vfw_pf_rate_init(pf);
	err = devl_params_register(devlink, vfw_pf_params,
				   ARRAY_SIZE(vfw_pf_params));
	if (err)
		goto err_params;

	pf->uplink_port.pf = pf;
	attrs.flavour = DEVLINK_PORT_FLAVOUR_PHYSICAL;
	attrs.phys.port_number = 0;
	devlink_port_attrs_set(&pf->uplink_port.dl, &attrs);
	err = devl_port_register(devlink, &pf->uplink_port.dl,
				 VFW_PF_UPLINK_PORT_INDEX);
	if (err)
		goto err_uplink;
	err = vfw_pf_fn_port_add(pf, &pf->pf_port, 0);
	if (err)
		goto err_pf_port;
	/* VFs left enabled by a previous instance of the driver. */
	if (pci_num_vf(pf->pdev)) {
		err = __vfw_pf_devlink_vfs_add(pf, pci_num_vf(pf->pdev));
		if (err)
			goto err_vfs;
	}
	err = devl_register(devlink);
	if (err)
		goto err_register;
	devl_unlock(devlink);
	return 0;

err_register:
	__vfw_pf_devlink_vfs_del(pf);
err_vfs:
	vfw_pf_fn_port_del(&pf->pf_port);
err_pf_port:
	devl_port_unregister(&pf->uplink_port.dl);
err_uplink:
	devl_params_unregister(devlink, vfw_pf_params,
			       ARRAY_SIZE(vfw_pf_params));
err_params:
	devl_unlock(devlink);
	devlink_free(devlink);
	pf->devlink = NULL;
	return err;
}

void vfw_pf_devlink_fini(struct vfw_pf *pf)
{
	struct devlink *devlink = pf->devlink;

	if (!devlink)
		return;
	devl_lock(devlink);
	/* No new user requests from here on; then take the tree apart: in
	 * the device (pf_rate.c, robust to guarantees that no longer fit),
	 * then devlink's leaves before its nodes (vfw_pf_fn_port_del). */
	devl_unregister(devlink);
	vfw_pf_eswitch_fini(pf);
	vfw_pf_rate_fini(pf);
	__vfw_pf_devlink_vfs_del(pf);
	vfw_pf_fn_port_del(&pf->pf_port);
	devl_rate_nodes_destroy(devlink);
	devl_port_unregister(&pf->uplink_port.dl);
	devl_params_unregister(devlink, vfw_pf_params,
			       ARRAY_SIZE(vfw_pf_params));
	devl_unlock(devlink);
	devlink_free(devlink);
	pf->devlink = NULL;
}
