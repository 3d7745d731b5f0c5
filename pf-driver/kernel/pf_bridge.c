// SPDX-License-Identifier: GPL-2.0-only
/*
 * pf_bridge.c - bridge offload in switchdev mode (docs/switchdev.md): a
 * Linux bridge of VF representors and the PF netdev (the uplink
 * representor) programs the adapter's FDB, so that once the bridge has
 * learned where a MAC lives, frames to it are forwarded in the adapter and
 * no longer reach the host.
 *
 * - A representor or the PF netdev joining a bridge in switchdev mode is
 *   offloaded (switchdev_bridge_port_offload): the bridge then tells us of
 *   its FDB entries (SWITCHDEV_FDB_ADD/DEL_TO_DEVICE) and replays the
 *   existing ones.
 * - Each entry pointing at one of our ports - a representor (its VF) or the
 *   PF netdev (the wire) - becomes an ESW_FDB_ADD/DEL in the device; the
 *   bridge's local entries (its own MACs) stay in software. The notifier
 *   runs in atomic context: the command goes to an ordered workqueue, which
 *   then marks the bridge's entry offloaded (`bridge fdb show`: offload).
 * - A VLAN-aware bridge (vlan_filtering 1) programs each of our ports'
 *   VLANs (SWITCHDEV_OBJ_ID_PORT_VLAN: membership, PVID untagged) and its
 *   VLAN awareness into the device (ESW_PORT_VLAN), so a VF's untagged
 *   frames are in the port's PVID in the adapter as in the bridge, and the
 *   bridge's FDB entries (which carry the VLAN) match. A tagged PVID or an
 *   untagged non-PVID VLAN cannot be expressed: refused (-EOPNOTSUPP), the
 *   bridge then keeps that VLAN in software. Not yet: MDB.
 */
#include <linux/etherdevice.h>
#include <linux/if_bridge.h>
#include <linux/netdevice.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <net/switchdev.h>

#include "pf.h"

struct vfw_pf_fdb_work {
	struct work_struct work;
	struct net_device *dev;         /* held */
	netdevice_tracker tracker;
	unsigned long event;
	u8 mac[ETH_ALEN];
	u16 vid;
};

static struct workqueue_struct *vfw_pf_bridge_wq;

/* The switch port of one of our bridge ports: a representor's VF, the PF
 * netdev's uplink; -1 otherwise. */
static int bridge_port(struct vfw_pf *pf, struct net_device *dev)
{
	int vf = vfw_pf_repr_vf(pf, dev);

	if (vf >= 0)
		return vf;
	return dev == pf->netdev ? VFW_ESW_PORT_UPLINK : -1;
}

static void vfw_pf_fdb_work(struct work_struct *w)
{
	struct vfw_pf_fdb_work *fw = container_of(w, struct vfw_pf_fdb_work, work);
	bool add = fw->event == SWITCHDEV_FDB_ADD_TO_DEVICE;
	struct switchdev_notifier_fdb_info info = {};
	struct vfw_aq_desc d = {};
	struct vfw_pf *pf;
	int port, st;

	rtnl_lock();
	pf = vfw_pf_of_esw_netdev(fw->dev);
	port = pf ? bridge_port(pf, fw->dev) : -1;
	if (port < 0 || pf->eswitch_mode != DEVLINK_ESWITCH_MODE_SWITCHDEV)
		goto out;
	d.opcode = cpu_to_le16(add ? VFW_AQ_OP_ESW_FDB_ADD : VFW_AQ_OP_ESW_FDB_DEL);
	ether_addr_copy(d.u.fdb.mac, fw->mac);
	d.u.fdb.vid = cpu_to_le16(fw->vid);
	if (add)
		d.u.fdb.port = cpu_to_le16(port);
	st = vfw_pf_aq_exec(pf, &d);
	if (st == VFW_AQ_S_OK) {
		if (add) {
			info.addr = fw->mac;
			info.vid = fw->vid;
			info.offloaded = true;
			call_switchdev_notifiers(SWITCHDEV_FDB_OFFLOADED, fw->dev,
						 &info.info, NULL);
		}
	} else if (st != VFW_AQ_S_NOENT) {
		netdev_dbg(fw->dev, "FDB %s %pM vid %u: %s\n", add ? "add" : "del",
			   fw->mac, fw->vid, st < 0 ? "no answer" : vfw_pf_aq_status_str(st));
	}
out:
	rtnl_unlock();
	netdev_put(fw->dev, &fw->tracker);
	kfree(fw);
}

/* Atomic chain: FDB entries of bridges with an offloaded port of ours. */
static int vfw_pf_switchdev_event(struct notifier_block *nb,
				  unsigned long event, void *ptr)
{
	struct net_device *dev = switchdev_notifier_info_to_dev(ptr);
	struct switchdev_notifier_fdb_info *fdb;
	struct vfw_pf_fdb_work *fw;

	if (event != SWITCHDEV_FDB_ADD_TO_DEVICE &&
	    event != SWITCHDEV_FDB_DEL_TO_DEVICE)
		return NOTIFY_DONE;
	if (!vfw_pf_of_esw_netdev(dev))
		return NOTIFY_DONE;
	fdb = container_of(ptr, struct switchdev_notifier_fdb_info, info);
	if (fdb->is_local || !is_unicast_ether_addr(fdb->addr))
		return NOTIFY_DONE;
	fw = kzalloc(sizeof(*fw), GFP_ATOMIC);
	if (!fw)
		return notifier_from_errno(-ENOMEM);
	INIT_WORK(&fw->work, vfw_pf_fdb_work);
	fw->event = event;
	ether_addr_copy(fw->mac, fdb->addr);
	fw->vid = fdb->vid;
	fw->dev = dev;
	netdev_hold(dev, &fw->tracker, GFP_ATOMIC);
	queue_work(vfw_pf_bridge_wq, &fw->work);
	return NOTIFY_DONE;
}

static struct notifier_block vfw_pf_switchdev_nb = {
	.notifier_call = vfw_pf_switchdev_event,
};

static bool vfw_pf_is_esw_port(const struct net_device *dev)
{
	return vfw_pf_of_esw_netdev((struct net_device *)dev) != NULL;
}

static int vfw_pf_vlan_cmd(struct net_device *dev, u8 op, u16 vid, u8 flags,
			   struct netlink_ext_ack *extack)
{
	struct vfw_pf *pf = vfw_pf_of_esw_netdev(dev);
	struct vfw_aq_desc d = {};
	int port, st;

	port = pf ? bridge_port(pf, dev) : -1;
	if (port < 0 || pf->eswitch_mode != DEVLINK_ESWITCH_MODE_SWITCHDEV)
		return -EOPNOTSUPP;
	d.opcode = cpu_to_le16(VFW_AQ_OP_ESW_PORT_VLAN);
	d.u.vlan_obj.port = cpu_to_le16(port);
	d.u.vlan_obj.vid = cpu_to_le16(vid);
	d.u.vlan_obj.op = op;
	d.u.vlan_obj.flags = flags;
	st = vfw_pf_aq_exec(pf, &d);
	/* A port leaving the bridge gets its VLANs deleted twice: by the
	 * unoffload's replay (at the unlink) and by the bridge's own flush
	 * after it; the second finds nothing, which is what it wants. */
	if (st == VFW_AQ_S_OK || (op == VFW_ESW_VLAN_DEL && st == VFW_AQ_S_NOENT))
		return 0;
	if (st == VFW_AQ_S_UNSUPPORTED) {
		NL_SET_ERR_MSG_MOD(extack, "the adapter's switch has untagged VLANs only as a port's PVID (pvid untagged) and a PVID only untagged");
		return -EOPNOTSUPP;
	}
	return st < 0 ? st : vfw_pf_aq_errno(st);
}

static int vfw_pf_port_obj_add(struct net_device *dev, const void *ctx,
			       const struct switchdev_obj *obj,
			       struct netlink_ext_ack *extack)
{
	const struct switchdev_obj_port_vlan *v;
	u8 flags = 0;

	if (obj->id != SWITCHDEV_OBJ_ID_PORT_VLAN)
		return -EOPNOTSUPP;
	v = SWITCHDEV_OBJ_PORT_VLAN(obj);
	if (v->flags & BRIDGE_VLAN_INFO_PVID)
		flags |= VFW_ESW_VLAN_F_PVID;
	if (v->flags & BRIDGE_VLAN_INFO_UNTAGGED)
		flags |= VFW_ESW_VLAN_F_UNTAGGED;
	/* a changed entry (PVID moved off it) is added again with its flags;
	 * the device's PVID follows the last ADD with PVID */
	return vfw_pf_vlan_cmd(dev, VFW_ESW_VLAN_ADD, v->vid, flags, extack);
}

static int vfw_pf_port_obj_del(struct net_device *dev, const void *ctx,
			       const struct switchdev_obj *obj)
{
	if (obj->id != SWITCHDEV_OBJ_ID_PORT_VLAN)
		return -EOPNOTSUPP;
	return vfw_pf_vlan_cmd(dev, VFW_ESW_VLAN_DEL, SWITCHDEV_OBJ_PORT_VLAN(obj)->vid,
			       0, NULL);
}

static int vfw_pf_port_attr_set(struct net_device *dev, const void *ctx,
				const struct switchdev_attr *attr,
				struct netlink_ext_ack *extack)
{
	if (attr->id != SWITCHDEV_ATTR_ID_BRIDGE_VLAN_FILTERING)
		return -EOPNOTSUPP;
	return vfw_pf_vlan_cmd(dev, attr->u.vlan_filtering ? VFW_ESW_VLAN_AWARE_ON :
			       VFW_ESW_VLAN_AWARE_OFF, 0, 0, extack);
}

/* Blocking chain: port VLANs and the bridge's VLAN awareness. */
static int vfw_pf_switchdev_blocking_event(struct notifier_block *nb,
					   unsigned long event, void *ptr)
{
	struct net_device *dev = switchdev_notifier_info_to_dev(ptr);
	int err;

	switch (event) {
	case SWITCHDEV_PORT_OBJ_ADD:
		err = switchdev_handle_port_obj_add(dev, ptr, vfw_pf_is_esw_port,
						    vfw_pf_port_obj_add);
		return notifier_from_errno(err);
	case SWITCHDEV_PORT_OBJ_DEL:
		err = switchdev_handle_port_obj_del(dev, ptr, vfw_pf_is_esw_port,
						    vfw_pf_port_obj_del);
		return notifier_from_errno(err);
	case SWITCHDEV_PORT_ATTR_SET:
		err = switchdev_handle_port_attr_set(dev, ptr, vfw_pf_is_esw_port,
						     vfw_pf_port_attr_set);
		return notifier_from_errno(err);
	}
	return NOTIFY_DONE;
}

static struct notifier_block vfw_pf_switchdev_blocking_nb = {
	.notifier_call = vfw_pf_switchdev_blocking_event,
};

/* A representor or the PF netdev joins or leaves a bridge. */
static int vfw_pf_netdev_event(struct notifier_block *nb, unsigned long event,
			       void *ptr)
{
	struct net_device *dev = netdev_notifier_info_to_dev(ptr);
	struct netdev_notifier_changeupper_info *info = ptr;
	struct vfw_pf *pf;
	int err;

	if (event != NETDEV_CHANGEUPPER || !netif_is_bridge_master(info->upper_dev))
		return NOTIFY_DONE;
	pf = vfw_pf_of_esw_netdev(dev);
	if (!pf || pf->eswitch_mode != DEVLINK_ESWITCH_MODE_SWITCHDEV)
		return NOTIFY_DONE;
	if (info->linking) {
		err = switchdev_bridge_port_offload(dev, dev, NULL,
						    &vfw_pf_switchdev_nb,
						    &vfw_pf_switchdev_blocking_nb,
						    false, info->info.extack);
		if (err)
			return notifier_from_errno(err);
	} else {
		switchdev_bridge_port_unoffload(dev, NULL, &vfw_pf_switchdev_nb,
						&vfw_pf_switchdev_blocking_nb);
	}
	return NOTIFY_DONE;
}

static struct notifier_block vfw_pf_netdev_nb = {
	.notifier_call = vfw_pf_netdev_event,
};

/* Driver removal: no FDB work may still run for this PF. */
void vfw_pf_bridge_flush(void)
{
	if (vfw_pf_bridge_wq)
		flush_workqueue(vfw_pf_bridge_wq);
}

int vfw_pf_bridge_register(void)
{
	int err;

	vfw_pf_bridge_wq = alloc_ordered_workqueue("vfwarp_pf_fdb", 0);
	if (!vfw_pf_bridge_wq)
		return -ENOMEM;
	err = register_switchdev_notifier(&vfw_pf_switchdev_nb);
	if (err)
		goto err_wq;
	err = register_switchdev_blocking_notifier(&vfw_pf_switchdev_blocking_nb);
	if (err)
		goto err_sw;
	err = register_netdevice_notifier(&vfw_pf_netdev_nb);
	if (err)
		goto err_blocking;
	return 0;

err_blocking:
	unregister_switchdev_blocking_notifier(&vfw_pf_switchdev_blocking_nb);
err_sw:
	unregister_switchdev_notifier(&vfw_pf_switchdev_nb);
err_wq:
	destroy_workqueue(vfw_pf_bridge_wq);
	vfw_pf_bridge_wq = NULL;
	return err;
}

void vfw_pf_bridge_unregister(void)
{
	unregister_netdevice_notifier(&vfw_pf_netdev_nb);
	unregister_switchdev_blocking_notifier(&vfw_pf_switchdev_blocking_nb);
	unregister_switchdev_notifier(&vfw_pf_switchdev_nb);
	destroy_workqueue(vfw_pf_bridge_wq);
	vfw_pf_bridge_wq = NULL;
}
