// SPDX-License-Identifier: GPL-2.0-only
/*
 * pf_rate.c - devlink rate of the vfwarp PF: the device's QoS rate tree
 * (hardware interface 2.1, docs/qos.md "devlink rate -> admin command").
 *
 *  - A leaf per function port (pf_devlink.c): the PF (leaf 0) and each
 *    enabled VF (leaf 1 + n). The device has the leaves; devlink's leaf
 *    priv is the port, whose `fn` is the leaf index.
 *  - Nodes: `devlink port function rate add pci/<BDF>/<name>`; the device
 *    picks the id (QOS_NODE_ADD), kept as the node's priv.
 *  - One devlink op = one admin command with one field-mask bit. The device
 *    changes nothing when it refuses a command, and the devlink core
 *    records a value only when the op returned 0, so a refused op leaves
 *    both as they were; the status becomes an errno and an extack message.
 *  - A VF leaf's tx_share/tx_max are the VF's `ip link` min_tx_rate /
 *    max_tx_rate (one model in the device): ip link reads them back from
 *    the device, and ndo_set_vf_rate refreshes the devlink leaf's values
 *    (vfw_pf_rate_vf_sync).
 *  - The uplink's line rate (QOS_SET_LINE), devlink param line_rate_kbps
 *    (pf_devlink.c).
 *
 * No rate state is kept beyond devlink's own: the device is the authority,
 * and QOS_LEAF_GET seeds a leaf from it when its port appears.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "pf.h"

/* Node ids live in devlink's priv pointer. */
static u16 node_id(void *priv)
{
	return (u16)(unsigned long)priv;
}

/* What a RANGE status means depends on the field (the extack says which
 * values are allowed). */
static void vfw_pf_range_extack(enum vfw_pf_range range,
				struct netlink_ext_ack *extack)
{
	switch (range) {
	case VFW_RANGE_VF_RATE:
		NL_SET_ERR_MSG_MOD(extack, "value out of range: a VF's tx_share and tx_max are whole Mbit/s (multiples of 125000 bytes/s) up to 10 Gbit/s, tx_share <= tx_max");
		break;
	case VFW_RANGE_RATE:
		NL_SET_ERR_MSG_MOD(extack, "value out of range: tx_share <= tx_max, each at most 1.6 Tbit/s");
		break;
	case VFW_RANGE_PRIO:
		NL_SET_ERR_MSG_MOD(extack, "value out of range: tx_priority is 0..7");
		break;
	case VFW_RANGE_WEIGHT:
		NL_SET_ERR_MSG_MOD(extack, "value out of range: tx_weight is 0..1000");
		break;
	case VFW_RANGE_LINE:
		NL_SET_ERR_MSG_MOD(extack, "value out of range: the line rate is 0 (none) or 1 kbit/s to 1.6 Tbit/s");
		break;
	default:
		NL_SET_ERR_MSG_MOD(extack, "value out of range");
		break;
	}
}

/* The extack text per status (docs/qos.md "Status -> errno and extack").
 * Constant strings: a formatted extack is cut at 80 characters. */
int vfw_pf_qos_errno(u16 status, enum vfw_pf_range range,
		     struct netlink_ext_ack *extack)
{
	switch (status) {
	case VFW_AQ_S_OK:
		return 0;
	case VFW_AQ_S_RANGE:
		vfw_pf_range_extack(range, extack);
		return -EINVAL;
	case VFW_AQ_S_INVAL:
		NL_SET_ERR_MSG_MOD(extack, "the device refused the command as malformed (driver bug)");
		return -EINVAL;
	case VFW_AQ_S_BAD_VF:
		NL_SET_ERR_MSG_MOD(extack, "no such function (VF not enabled)");
		return -EINVAL;
	case VFW_AQ_S_NOENT:
		NL_SET_ERR_MSG_MOD(extack, "no such node");
		return -ENOENT;
	case VFW_AQ_S_BUSY:
		NL_SET_ERR_MSG_MOD(extack, "node still has children");
		return -EBUSY;
	case VFW_AQ_S_NOSPC:
		NL_SET_ERR_MSG_MOD(extack, "all 63 rate nodes are in use");
		return -ENOSPC;
	case VFW_AQ_S_LOOP:
		NL_SET_ERR_MSG_MOD(extack, "parent chain would loop or nest deeper than 4 nodes");
		return -ELOOP;
	case VFW_AQ_S_OVERSUB:
		NL_SET_ERR_MSG_MOD(extack, "guarantees oversubscribed: the tx_share of the children exceed the parent's tx_share, tx_max or the line rate");
		return -ERANGE;
	case VFW_AQ_S_UNSUPPORTED:
	case VFW_AQ_S_BAD_OPCODE:
		NL_SET_ERR_MSG_MOD(extack, "the device has no QoS scheduler (hardware interface before 2.1)");
		return -EOPNOTSUPP;
	default:
		NL_SET_ERR_MSG_MOD(extack, "the device answered with an unknown status");
		return -EIO;
	}
}

/* Send one QoS command on object `index`; the status as an errno with its
 * extack. On success *d holds the device's write-back. */
static int vfw_pf_qos_cmd(struct vfw_pf *pf, u16 op, u16 index,
			  struct vfw_aq_desc *d, enum vfw_pf_range range,
			  struct netlink_ext_ack *extack)
{
	int st;

	d->opcode = cpu_to_le16(op);
	d->vf = cpu_to_le16(index);
	st = vfw_pf_aq_exec(pf, d);
	if (st < 0) {
		NL_SET_ERR_MSG_MOD(extack, "admin queue down or command timed out");
		return st;
	}
	if (st != VFW_AQ_S_OK)
		dev_dbg(&pf->pdev->dev, "QoS command 0x%04x on %u: status %s\n",
			op, index, vfw_pf_aq_status_str(st));
	return vfw_pf_qos_errno(st, range, extack);
}

/* QOS_LEAF_SET (leaf = function index) or QOS_NODE_SET (node id) of the
 * fields r->mask names; the others must be 0. */
static int vfw_pf_rate_set(struct vfw_pf *pf, u16 op, u16 index,
			   const struct vfw_aq_qos_rate *r,
			   enum vfw_pf_range range,
			   struct netlink_ext_ack *extack)
{
	struct vfw_aq_desc d = { .u.rate_obj = *r };

	return vfw_pf_qos_cmd(pf, op, index, &d, range, extack);
}

/* One field of a rate object, in the command's little-endian layout. */
#define RATE_SHARE(v) ((struct vfw_aq_qos_rate){			\
	.mask = cpu_to_le16(VFW_QOS_F_TX_SHARE), .tx_share = cpu_to_le64(v) })
#define RATE_MAX(v) ((struct vfw_aq_qos_rate){				\
	.mask = cpu_to_le16(VFW_QOS_F_TX_MAX), .tx_max = cpu_to_le64(v) })
#define RATE_PRIO(v) ((struct vfw_aq_qos_rate){				\
	.mask = cpu_to_le16(VFW_QOS_F_TX_PRIORITY),			\
	.tx_priority = cpu_to_le32(v) })
#define RATE_WEIGHT(v) ((struct vfw_aq_qos_rate){			\
	.mask = cpu_to_le16(VFW_QOS_F_TX_WEIGHT),			\
	.tx_weight = cpu_to_le32(v) })
#define RATE_PARENT(v) ((struct vfw_aq_qos_rate){			\
	.mask = cpu_to_le16(VFW_QOS_F_PARENT), .parent = cpu_to_le16(v) })

static int vfw_leaf_set(struct vfw_pf *pf, u16 fn, struct vfw_aq_qos_rate r,
			enum vfw_pf_range range,
			struct netlink_ext_ack *extack)
{
	return vfw_pf_rate_set(pf, VFW_AQ_OP_QOS_LEAF_SET, fn, &r, range,
			       extack);
}

/* A devlink leaf op: priv is the function's port. */
static int vfw_port_leaf_set(void *priv, struct vfw_aq_qos_rate r,
			     enum vfw_pf_range range,
			     struct netlink_ext_ack *extack)
{
	struct vfw_pf_port *port = priv;

	if (port->pf->rate_closed)
		return 0;
	return vfw_leaf_set(port->pf, port->fn, r, range, extack);
}

/* A VF's rates are also its ip link Mbit/s; the PF's are not. */
static enum vfw_pf_range leaf_rate_range(void *priv)
{
	struct vfw_pf_port *port = priv;

	return port->fn ? VFW_RANGE_VF_RATE : VFW_RANGE_RATE;
}

int vfw_pf_rate_leaf_tx_share_set(struct devlink_rate *rate, void *priv,
				  u64 tx_share, struct netlink_ext_ack *extack)
{
	return vfw_port_leaf_set(priv, RATE_SHARE(tx_share),
				 leaf_rate_range(priv), extack);
}

int vfw_pf_rate_leaf_tx_max_set(struct devlink_rate *rate, void *priv,
				u64 tx_max, struct netlink_ext_ack *extack)
{
	return vfw_port_leaf_set(priv, RATE_MAX(tx_max), leaf_rate_range(priv),
				 extack);
}

int vfw_pf_rate_leaf_tx_priority_set(struct devlink_rate *rate, void *priv,
				     u32 tx_priority,
				     struct netlink_ext_ack *extack)
{
	return vfw_port_leaf_set(priv, RATE_PRIO(tx_priority), VFW_RANGE_PRIO,
				 extack);
}

int vfw_pf_rate_leaf_tx_weight_set(struct devlink_rate *rate, void *priv,
				   u32 tx_weight,
				   struct netlink_ext_ack *extack)
{
	return vfw_port_leaf_set(priv, RATE_WEIGHT(tx_weight),
				 VFW_RANGE_WEIGHT, extack);
}

int vfw_pf_rate_leaf_parent_set(struct devlink_rate *child,
				struct devlink_rate *parent, void *priv_child,
				void *priv_parent,
				struct netlink_ext_ack *extack)
{
	return vfw_port_leaf_set(priv_child,
				 RATE_PARENT(parent ? node_id(priv_parent) : 0),
				 VFW_RANGE_ANY, extack);
}

static struct vfw_pf *node_pf(struct devlink_rate *rate)
{
	return *(struct vfw_pf **)devlink_priv(rate->devlink);
}

int vfw_pf_rate_node_new(struct devlink_rate *node, void **priv,
			 struct netlink_ext_ack *extack)
{
	struct vfw_pf *pf = node_pf(node);
	struct vfw_aq_desc d = {};
	u16 id;
	int err;

	/* Created with the defaults; devlink then sends each attribute given
	 * with `rate add` as its own set op (and deletes the node if one
	 * fails). */
	err = vfw_pf_qos_cmd(pf, VFW_AQ_OP_QOS_NODE_ADD, 0, &d, VFW_RANGE_ANY,
			     extack);
	if (err)
		return err;
	id = le16_to_cpu(d.vf);
	if (!id || id > VFW_QOS_MAX_NODES) {
		dev_err(&pf->pdev->dev, "QOS_NODE_ADD returned node id %u\n",
			id);
		NL_SET_ERR_MSG_MOD(extack, "the device returned an invalid node id");
		return -EIO;
	}
	*priv = (void *)(unsigned long)id;
	return 0;
}

int vfw_pf_rate_node_del(struct devlink_rate *node, void *priv,
			 struct netlink_ext_ack *extack)
{
	struct vfw_aq_desc d = {};

	if (node_pf(node)->rate_closed)
		return 0;
	return vfw_pf_qos_cmd(node_pf(node), VFW_AQ_OP_QOS_NODE_DEL,
			      node_id(priv), &d, VFW_RANGE_ANY, extack);
}

static int vfw_node_set(struct devlink_rate *rate, void *priv,
			struct vfw_aq_qos_rate r, enum vfw_pf_range range,
			struct netlink_ext_ack *extack)
{
	if (node_pf(rate)->rate_closed)
		return 0;
	return vfw_pf_rate_set(node_pf(rate), VFW_AQ_OP_QOS_NODE_SET,
			       node_id(priv), &r, range, extack);
}

int vfw_pf_rate_node_tx_share_set(struct devlink_rate *rate, void *priv,
				  u64 tx_share, struct netlink_ext_ack *extack)
{
	return vfw_node_set(rate, priv, RATE_SHARE(tx_share), VFW_RANGE_RATE,
			    extack);
}

int vfw_pf_rate_node_tx_max_set(struct devlink_rate *rate, void *priv,
				u64 tx_max, struct netlink_ext_ack *extack)
{
	return vfw_node_set(rate, priv, RATE_MAX(tx_max), VFW_RANGE_RATE,
			    extack);
}

int vfw_pf_rate_node_tx_priority_set(struct devlink_rate *rate, void *priv,
				     u32 tx_priority,
				     struct netlink_ext_ack *extack)
{
	return vfw_node_set(rate, priv, RATE_PRIO(tx_priority), VFW_RANGE_PRIO,
			    extack);
}

int vfw_pf_rate_node_tx_weight_set(struct devlink_rate *rate, void *priv,
				   u32 tx_weight,
				   struct netlink_ext_ack *extack)
{
	return vfw_node_set(rate, priv, RATE_WEIGHT(tx_weight),
			    VFW_RANGE_WEIGHT, extack);
}

int vfw_pf_rate_node_parent_set(struct devlink_rate *child,
				struct devlink_rate *parent, void *priv_child,
				void *priv_parent,
				struct netlink_ext_ack *extack)
{
	return vfw_node_set(child, priv_child,
			    RATE_PARENT(parent ? node_id(priv_parent) : 0),
			    VFW_RANGE_ANY, extack);
}

static int vfw_pf_leaf_get(struct vfw_pf *pf, u16 fn,
			   struct vfw_aq_qos_rate *r)
{
	struct vfw_aq_desc d = {};
	int err;

	err = vfw_pf_qos_cmd(pf, VFW_AQ_OP_QOS_LEAF_GET, fn, &d, VFW_RANGE_ANY,
			     NULL);
	if (err)
		return err;
	*r = d.u.rate_obj;
	return 0;
}

/*
 * A function port's leaf, seeded from the device: the PF's leaf keeps its
 * rates across a driver reload (the device only resets them on a PF
 * reset), and a VF's may have been set with ip link before. Its parent is
 * the root (vfw_pf_rate_init emptied the tree at probe; new VFs start
 * there). Devlink lock held.
 */
int vfw_pf_rate_leaf_create(struct vfw_pf_port *port)
{
	struct vfw_pf *pf = port->pf;
	struct vfw_aq_qos_rate r;
	struct devlink_rate *rate;
	u32 weight;
	int err;

	err = devl_rate_leaf_create(&port->dl, port, NULL);
	if (err)
		return err;
	if (vfw_pf_leaf_get(pf, port->fn, &r)) {
		/* A pre-2.1 device has no QoS: the ops will say so. */
		return 0;
	}
	rate = port->dl.devlink_rate;
	rate->tx_share = le64_to_cpu(r.tx_share);
	rate->tx_max = le64_to_cpu(r.tx_max);
	rate->tx_priority = le32_to_cpu(r.tx_priority);
	/* The device reads an unset weight back as 1, devlink shows it 0. */
	weight = le32_to_cpu(r.tx_weight);
	rate->tx_weight = weight == 1 ? 0 : weight;
	return 0;
}

/*
 * Empty the device's rate tree: every leaf (PF and enabled VFs) to the
 * root, every node deleted. At probe this removes what an earlier driver
 * instance may have left (its nodes are not in this devlink); at removal it
 * leaves the device with no node of ours, also when VFs stay enabled
 * (in use) or a step would not fit.
 *
 * It does not replay devlink's parent changes in reverse: moving a leaf or
 * node to the root can fail with OVERSUB (its guarantee no longer fits
 * under the line rate), and a node cannot be deleted while it has
 * children. Instead leaves go to the root first, giving up their tx_share
 * if that is what does not fit, then childless nodes are deleted, which
 * only ever removes guarantees, level by level.
 */
static void vfw_pf_rate_tree_clear(struct vfw_pf *pf)
{
	int fn, pass, num = pci_num_vf(pf->pdev);
	struct vfw_aq_qos_rate r;
	struct vfw_aq_desc d;
	u64 in_use;
	int err;

	for (fn = 0; fn <= num; fn++) {
		if (vfw_pf_leaf_get(pf, fn, &r))
			return;	/* no QoS in this device */
		if (!le16_to_cpu(r.parent))
			continue;
		err = vfw_leaf_set(pf, fn, RATE_PARENT(0), VFW_RANGE_ANY,
				   NULL);
		if (err == -ERANGE) {
			vfw_leaf_set(pf, fn, RATE_SHARE(0), VFW_RANGE_ANY,
				     NULL);
			err = vfw_leaf_set(pf, fn, RATE_PARENT(0),
					   VFW_RANGE_ANY, NULL);
		}
		if (err)
			dev_warn(&pf->pdev->dev,
				 "rate leaf of function %d not moved to the root: %d\n",
				 fn, err);
	}
	for (pass = 0; pass <= VFW_QOS_MAX_DEPTH; pass++) {
		memset(&d, 0, sizeof(d));
		if (vfw_pf_qos_cmd(pf, VFW_AQ_OP_QOS_NODES_GET, 0, &d,
				   VFW_RANGE_ANY, NULL))
			return;
		in_use = le64_to_cpu(d.u.nodes.in_use);
		if (!in_use)
			return;
		for (fn = 1; fn <= VFW_QOS_MAX_NODES; fn++) {
			if (!(in_use & BIT_ULL(fn)))
				continue;
			memset(&d, 0, sizeof(d));
			if (vfw_pf_qos_cmd(pf, VFW_AQ_OP_QOS_NODE_GET, fn, &d,
					   VFW_RANGE_ANY, NULL) ||
			    le16_to_cpu(d.u.rate_obj.children))
				continue;
			memset(&d, 0, sizeof(d));
			vfw_pf_qos_cmd(pf, VFW_AQ_OP_QOS_NODE_DEL, fn, &d,
				       VFW_RANGE_ANY, NULL);
		}
	}
	dev_warn(&pf->pdev->dev, "rate nodes left in the device: 0x%llx\n",
		 in_use);
}

/* Probe: the tree starts empty (see vfw_pf_rate_tree_clear). */
void vfw_pf_rate_init(struct vfw_pf *pf)
{
	vfw_pf_rate_tree_clear(pf);
}

/*
 * Removal: empty the device's tree, then let the devlink core free its
 * nodes without sending anything more (rate_closed: the ops it calls from
 * devl_rate_nodes_destroy() would only find the nodes gone). Devlink lock
 * held, instance unregistered, so no user op can come in between.
 */
void vfw_pf_rate_fini(struct vfw_pf *pf)
{
	vfw_pf_rate_tree_clear(pf);
	pf->rate_closed = true;
}

/*
 * After `ip link set PF vf N min_tx_rate/max_tx_rate` (SET_VF_RATE, which
 * changes the same leaf): copy the device's leaf rates into the devlink
 * leaf so `devlink port function rate show` agrees. Called under rtnl,
 * where the devlink lock may not be taken (pf_devlink.c, lock order), so
 * the two u64 are written without it: a concurrent `devlink ... rate set`
 * of the same leaf may leave devlink's copy stale until the next set;
 * the device (ip link show, debugfs) is always right.
 */
void vfw_pf_rate_vf_sync(struct vfw_pf *pf, int vf)
{
	struct devlink_rate *rate;
	struct vfw_aq_qos_rate r;

	mutex_lock(&pf->vf_ports_lock);
	if (vf >= 0 && vf < pf->num_vf_ports &&
	    (rate = pf->vf_ports[vf].dl.devlink_rate) &&
	    !vfw_pf_leaf_get(pf, 1 + vf, &r)) {
		WRITE_ONCE(rate->tx_share, le64_to_cpu(r.tx_share));
		WRITE_ONCE(rate->tx_max, le64_to_cpu(r.tx_max));
	}
	mutex_unlock(&pf->vf_ports_lock);
}

int vfw_pf_line_rate_get(struct vfw_pf *pf, u64 *bps)
{
	struct vfw_aq_desc d = {};
	int err;

	err = vfw_pf_qos_cmd(pf, VFW_AQ_OP_QOS_GET_LINE, 0, &d, VFW_RANGE_ANY,
			     NULL);
	if (err)
		return err;
	*bps = le64_to_cpu(d.u.line.rate_bps);
	return 0;
}

int vfw_pf_line_rate_set(struct vfw_pf *pf, u64 bps,
			 struct netlink_ext_ack *extack)
{
	struct vfw_aq_desc d = {};

	d.u.line.rate_bps = cpu_to_le64(bps);
	return vfw_pf_qos_cmd(pf, VFW_AQ_OP_QOS_SET_LINE, 0, &d,
			      VFW_RANGE_LINE, extack);
}

static void vfw_pf_qos_show_obj(struct seq_file *s, const char *kind, int i,
				const struct vfw_aq_qos_rate *r)
{
	seq_printf(s, "%s %d tx_share %llu tx_max %llu tx_priority %u tx_weight %u parent %u",
		   kind, i, le64_to_cpu(r->tx_share), le64_to_cpu(r->tx_max),
		   le32_to_cpu(r->tx_priority), le32_to_cpu(r->tx_weight),
		   le16_to_cpu(r->parent));
	if (!strcmp(kind, "node"))
		seq_printf(s, " children %u", le16_to_cpu(r->children));
	seq_putc(s, '\n');
}

/*
 * <debugfs>/vfwarp_pf/<pci>/qos: the device's rate tree as the GET commands
 * report it (line rate, every leaf, every node), independent of devlink's
 * copy: what the lab tests compare to see that a refused op changed
 * nothing in the device.
 */
static int vfw_pf_qos_show(struct seq_file *s, void *unused)
{
	struct vfw_pf *pf = s->private;
	int i, num = pci_num_vf(pf->pdev);
	struct vfw_aq_qos_rate r;
	struct vfw_aq_desc d = {};
	u64 bps, in_use;
	int err;

	err = vfw_pf_line_rate_get(pf, &bps);
	if (err) {
		seq_printf(s, "error %d\n", err);
		return 0;
	}
	seq_printf(s, "line_rate_bps %llu\n", bps);
	for (i = 0; i <= num; i++) {
		if (vfw_pf_leaf_get(pf, i, &r))
			seq_printf(s, "leaf %d error\n", i);
		else
			vfw_pf_qos_show_obj(s, "leaf", i, &r);
	}
	if (vfw_pf_qos_cmd(pf, VFW_AQ_OP_QOS_NODES_GET, 0, &d, VFW_RANGE_ANY,
			   NULL))
		return 0;
	in_use = le64_to_cpu(d.u.nodes.in_use);
	for (i = 1; i <= VFW_QOS_MAX_NODES; i++) {
		if (!(in_use & BIT_ULL(i)))
			continue;
		memset(&d, 0, sizeof(d));
		if (vfw_pf_qos_cmd(pf, VFW_AQ_OP_QOS_NODE_GET, i, &d,
				   VFW_RANGE_ANY, NULL))
			seq_printf(s, "node %d error\n", i);
		else
			vfw_pf_qos_show_obj(s, "node", i, &d.u.rate_obj);
	}
	/* The device's app table (dcb app show lists the kernel's). */
	memset(&d, 0, sizeof(d));
	if (vfw_pf_qos_cmd(pf, VFW_AQ_OP_DCB_GET_APP, 0, &d, VFW_RANGE_ANY,
			   NULL))
		return 0;
	seq_printf(s, "app trust %u default_prio %d\n", d.u.apps.trust,
		   d.u.apps.flags & VFW_APP_F_DEFAULT ?
		   d.u.apps.default_prio : -1);
	in_use = le64_to_cpu(d.u.apps.dscp_mapped);
	for (i = 0; i < 64; i++)
		if (in_use & BIT_ULL(i))
			seq_printf(s, "dscp %d prio %u\n", i,
				   vfw_apps_dscp_prio(&d.u.apps, i));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vfw_pf_qos);

/* <debugfs>/vfwarp_pf/<pci>/qos_tc_stats: the uplink's per-class counters
 * (QOS_GET_TC_STATS): which class the device put the traffic in. */
static int vfw_pf_qos_tc_stats_show(struct seq_file *s, void *unused)
{
	struct vfw_pf *pf = s->private;
	struct vfw_aq_qos_tc_stats *t;
	struct vfw_aq_desc d;
	int tc;

	for (tc = 0; tc < VFW_QOS_NUM_TC; tc++) {
		memset(&d, 0, sizeof(d));
		if (vfw_pf_qos_cmd(pf, VFW_AQ_OP_QOS_GET_TC_STATS, tc, &d,
				   VFW_RANGE_ANY, NULL)) {
			seq_printf(s, "tc %d error\n", tc);
			continue;
		}
		t = &d.u.tc_stats;
		seq_printf(s, "tc %d queued_pkts %llu queued_bytes %llu sent_pkts %llu sent_bytes %llu dropped_pkts %llu dropped_bytes %llu\n",
			   tc, le64_to_cpu(t->queued_pkts),
			   le64_to_cpu(t->queued_bytes),
			   le64_to_cpu(t->sent_pkts),
			   le64_to_cpu(t->sent_bytes),
			   le64_to_cpu(t->dropped_pkts),
			   le64_to_cpu(t->dropped_bytes));
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vfw_pf_qos_tc_stats);

void vfw_pf_rate_debugfs_init(struct vfw_pf *pf)
{
	debugfs_create_file("qos", 0400, pf->dbg, pf, &vfw_pf_qos_fops);
	debugfs_create_file("qos_tc_stats", 0400, pf->dbg, pf,
			    &vfw_pf_qos_tc_stats_fops);
}
