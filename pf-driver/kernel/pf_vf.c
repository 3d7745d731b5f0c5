// SPDX-License-Identifier: GPL-2.0-only
/*
 * pf_vf.c - per-VF configuration of the vfwarp PF driver: the legacy
 * ndo_set_vf_* / ndo_get_vf_* ops (ip link set PF vf N ...), carried to
 * the adapter as admin queue commands. The driver keeps no copy: what
 * `ip link show` reports is read back from the device (GET_VF_CONFIG).
 * debugfs <debugfs>/vfwarp_pf/<pci>/vf_config dumps the device's view of
 * every VF, including its config generation counter.
 */
#include <linux/debugfs.h>
#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/seq_file.h>

#include "pf.h"

static struct dentry *vfw_pf_dbg_root;

/* The VF index must name an existing VF; range errors are logged because
 * the legacy VF ops carry no extack. */
static int vfw_pf_vf_check(struct vfw_pf *pf, int vf, const char *what)
{
	int num = pci_num_vf(pf->pdev);

	if (vf < 0 || vf >= num) {
		netdev_err(pf->netdev, "%s: VF %d does not exist (%d VFs)\n",
			   what, vf, num);
		return -EINVAL;
	}
	return 0;
}

static int vfw_pf_vf_cmd(struct vfw_pf *pf, u16 op, int vf,
			 struct vfw_aq_desc *d, const char *what)
{
	int st;

	d->opcode = cpu_to_le16(op);
	d->vf = cpu_to_le16(vf);
	st = vfw_pf_aq_exec(pf, d);
	if (st < 0)
		return st;
	if (st != VFW_AQ_S_OK)
		netdev_err(pf->netdev, "%s for VF %d refused by the adapter (status %d %s)\n",
			   what, vf, st, vfw_pf_aq_status_str(st));
	return vfw_pf_aq_errno(st);
}

int vfw_pf_set_vf_mac(struct net_device *dev, int vf, u8 *mac)
{
	struct vfw_pf *pf = vfw_pf_from_netdev(dev);
	struct vfw_aq_desc d = {};
	int err = vfw_pf_vf_check(pf, vf, "set VF MAC");

	if (err)
		return err;
	if (is_multicast_ether_addr(mac)) {
		netdev_err(dev, "VF %d: %pM is not a unicast MAC\n", vf, mac);
		return -EINVAL;
	}
	memcpy(d.u.mac.mac, mac, ETH_ALEN);
	err = vfw_pf_vf_cmd(pf, VFW_AQ_OP_SET_VF_MAC, vf, &d, "set MAC");
	if (err)
		return err;
	/* An administrator's MAC binds the VF (pf_mbox.c); zero frees it. */
	if (is_zero_ether_addr(mac))
		clear_bit(vf, pf->vf_admin_mac);
	else
		set_bit(vf, pf->vf_admin_mac);
	return 0;
}

int vfw_pf_set_vf_vlan(struct net_device *dev, int vf, u16 vlan, u8 qos,
		       __be16 proto)
{
	struct vfw_pf *pf = vfw_pf_from_netdev(dev);
	struct vfw_aq_desc d = {};
	int err = vfw_pf_vf_check(pf, vf, "set VF VLAN");

	if (err)
		return err;
	if (proto != htons(ETH_P_8021Q)) {
		netdev_err(dev, "VF %d: VLAN protocol 0x%04x not supported (802.1Q only)\n",
			   vf, ntohs(proto));
		return -EPROTONOSUPPORT;
	}
	if (vlan > VFW_VLAN_VID_MAX || qos > VFW_VLAN_QOS_MAX) {
		netdev_err(dev, "VF %d: VLAN %u qos %u out of range (0..%u, 0..%u)\n",
			   vf, vlan, qos, VFW_VLAN_VID_MAX, VFW_VLAN_QOS_MAX);
		return -EINVAL;
	}
	d.u.vlan.vid = cpu_to_le16(vlan);
	d.u.vlan.qos = qos;
	d.u.vlan.proto = cpu_to_le16(VFW_VLAN_PROTO_8021Q);
	return vfw_pf_vf_cmd(pf, VFW_AQ_OP_SET_VF_VLAN, vf, &d, "set VLAN");
}

int vfw_pf_set_vf_rate(struct net_device *dev, int vf, int min_tx_rate,
		       int max_tx_rate)
{
	struct vfw_pf *pf = vfw_pf_from_netdev(dev);
	struct vfw_aq_desc d = {};
	int err = vfw_pf_vf_check(pf, vf, "set VF rate");

	if (err)
		return err;
	if (min_tx_rate < 0 || max_tx_rate < 0 ||
	    min_tx_rate > VFW_UPLINK_SPEED_MBPS ||
	    max_tx_rate > VFW_UPLINK_SPEED_MBPS) {
		netdev_err(dev, "VF %d: rate %d..%d Mbps exceeds the link speed %d Mbps\n",
			   vf, min_tx_rate, max_tx_rate, VFW_UPLINK_SPEED_MBPS);
		return -EINVAL;
	}
	if (max_tx_rate && min_tx_rate > max_tx_rate) {
		netdev_err(dev, "VF %d: min_tx_rate %d > max_tx_rate %d\n",
			   vf, min_tx_rate, max_tx_rate);
		return -EINVAL;
	}
	d.u.rate.min_mbps = cpu_to_le32(min_tx_rate);
	d.u.rate.max_mbps = cpu_to_le32(max_tx_rate);
	/* OVERSUB (-ERANGE): the guarantee does not fit under the VF's parent
	 * rate node or the line rate (docs/qos.md). */
	err = vfw_pf_vf_cmd(pf, VFW_AQ_OP_SET_VF_RATE, vf, &d, "set rate");
	if (err)
		return err;
	/* The same numbers are the VF's devlink rate leaf (one model). */
	vfw_pf_rate_vf_sync(pf, vf);
	return 0;
}

static int vfw_pf_set_vf_bool(struct net_device *dev, int vf, u16 op,
			      bool enable, const char *what)
{
	struct vfw_pf *pf = vfw_pf_from_netdev(dev);
	struct vfw_aq_desc d = {};
	int err = vfw_pf_vf_check(pf, vf, what);

	if (err)
		return err;
	d.u.en.enable = enable;
	return vfw_pf_vf_cmd(pf, op, vf, &d, what);
}

int vfw_pf_set_vf_spoofchk(struct net_device *dev, int vf, bool enable)
{
	return vfw_pf_set_vf_bool(dev, vf, VFW_AQ_OP_SET_VF_SPOOFCHK, enable,
				  "set VF spoofchk");
}

int vfw_pf_set_vf_trust(struct net_device *dev, int vf, bool enable)
{
	return vfw_pf_set_vf_bool(dev, vf, VFW_AQ_OP_SET_VF_TRUST, enable,
				  "set VF trust");
}

int vfw_pf_set_vf_link_state(struct net_device *dev, int vf, int state)
{
	struct vfw_pf *pf = vfw_pf_from_netdev(dev);
	struct vfw_aq_desc d = {};
	int err = vfw_pf_vf_check(pf, vf, "set VF link state");

	if (err)
		return err;
	switch (state) {
	case IFLA_VF_LINK_STATE_AUTO:
		d.u.link.state = VFW_LINK_STATE_AUTO;
		break;
	case IFLA_VF_LINK_STATE_ENABLE:
		d.u.link.state = VFW_LINK_STATE_ENABLE;
		break;
	case IFLA_VF_LINK_STATE_DISABLE:
		d.u.link.state = VFW_LINK_STATE_DISABLE;
		break;
	default:
		netdev_err(dev, "VF %d: link state %d unknown\n", vf, state);
		return -EINVAL;
	}
	return vfw_pf_vf_cmd(pf, VFW_AQ_OP_SET_VF_LINK_STATE, vf, &d,
			     "set link state");
}

static int vfw_pf_get_cfg(struct vfw_pf *pf, int vf, struct vfw_aq_desc *d)
{
	memset(d, 0, sizeof(*d));
	return vfw_pf_vf_cmd(pf, VFW_AQ_OP_GET_VF_CONFIG, vf, d, "get config");
}

int vfw_pf_get_vf_config(struct net_device *dev, int vf,
			 struct ifla_vf_info *ivi)
{
	struct vfw_pf *pf = vfw_pf_from_netdev(dev);
	struct vfw_aq_desc d;
	int err = vfw_pf_vf_check(pf, vf, "get VF config");

	if (err)
		return err;
	err = vfw_pf_get_cfg(pf, vf, &d);
	if (err)
		return err;
	ivi->vf = vf;
	ether_addr_copy(ivi->mac, d.u.cfg.mac);
	ivi->vlan = le16_to_cpu(d.u.cfg.vid);
	ivi->qos = d.u.cfg.qos;
	ivi->vlan_proto = htons(ETH_P_8021Q);
	ivi->spoofchk = d.u.cfg.spoofchk;
	ivi->trusted = d.u.cfg.trust;
	switch (d.u.cfg.link_state) {
	case VFW_LINK_STATE_ENABLE:
		ivi->linkstate = IFLA_VF_LINK_STATE_ENABLE;
		break;
	case VFW_LINK_STATE_DISABLE:
		ivi->linkstate = IFLA_VF_LINK_STATE_DISABLE;
		break;
	default:
		ivi->linkstate = IFLA_VF_LINK_STATE_AUTO;
		break;
	}
	ivi->min_tx_rate = le32_to_cpu(d.u.cfg.min_mbps);
	ivi->max_tx_rate = le32_to_cpu(d.u.cfg.max_mbps);
	return 0;
}

int vfw_pf_get_vf_stats(struct net_device *dev, int vf,
			struct ifla_vf_stats *vf_stats)
{
	struct vfw_pf *pf = vfw_pf_from_netdev(dev);
	struct vfw_aq_desc d = {};
	int err = vfw_pf_vf_check(pf, vf, "get VF stats");

	if (err)
		return err;
	err = vfw_pf_vf_cmd(pf, VFW_AQ_OP_GET_VF_STATS, vf, &d, "get stats");
	if (err)
		return err;
	vf_stats->rx_packets = le64_to_cpu(d.u.stats.rx_packets);
	vf_stats->tx_packets = le64_to_cpu(d.u.stats.tx_packets);
	vf_stats->rx_bytes = le64_to_cpu(d.u.stats.rx_bytes);
	vf_stats->tx_bytes = le64_to_cpu(d.u.stats.tx_bytes);
	vf_stats->rx_dropped = le64_to_cpu(d.u.stats.rx_dropped);
	vf_stats->tx_dropped = le64_to_cpu(d.u.stats.tx_dropped);
	return 0;
}

/* The device's view of every VF, straight from GET_VF_CONFIG. */
static int vfw_pf_vf_config_show(struct seq_file *s, void *unused)
{
	struct vfw_pf *pf = s->private;
	int num = pci_num_vf(pf->pdev), vf, err;
	struct vfw_aq_desc d;

	for (vf = 0; vf < num && vf < VFW_SRIOV_TOTAL_VFS; vf++) {
		err = vfw_pf_get_cfg(pf, vf, &d);
		if (err) {
			seq_printf(s, "vf %d error %d\n", vf, err);
			continue;
		}
		seq_printf(s, "vf %d mac %pM vlan %u qos %u proto 0x%04x spoofchk %u trust %u link_state %u min_rate %u max_rate %u gen %u admin_mac %u vlan_filters %u rx_mode %u mc_count %u\n",
			   vf, d.u.cfg.mac, le16_to_cpu(d.u.cfg.vid),
			   d.u.cfg.qos, le16_to_cpu(d.u.cfg.proto),
			   d.u.cfg.spoofchk, d.u.cfg.trust, d.u.cfg.link_state,
			   le32_to_cpu(d.u.cfg.min_mbps),
			   le32_to_cpu(d.u.cfg.max_mbps),
			   le32_to_cpu(d.u.cfg.gen),
			   test_bit(vf, pf->vf_admin_mac),
			   le16_to_cpu(d.u.cfg.vlan_filters),
			   d.u.cfg.rx_mode, d.u.cfg.mc_count);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vfw_pf_vf_config);

/* The mailbox's counters (pf_mbox.c): requests answered, and refused. */
static int vfw_pf_mbox_show(struct seq_file *s, void *unused)
{
	struct vfw_pf *pf = s->private;

	seq_printf(s, "served %llu refused %llu\n", pf->mbx_served,
		   pf->mbx_refused);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(vfw_pf_mbox);

void vfw_pf_debugfs_init(struct vfw_pf *pf)
{
	pf->dbg = debugfs_create_dir(pci_name(pf->pdev), vfw_pf_dbg_root);
	debugfs_create_file("vf_config", 0400, pf->dbg, pf,
			    &vfw_pf_vf_config_fops);
	debugfs_create_file("mbox", 0400, pf->dbg, pf, &vfw_pf_mbox_fops);
	vfw_pf_rate_debugfs_init(pf);
}

void vfw_pf_debugfs_fini(struct vfw_pf *pf)
{
	debugfs_remove_recursive(pf->dbg);
	pf->dbg = NULL;
}

void vfw_pf_debugfs_register(void)
{
	vfw_pf_dbg_root = debugfs_create_dir(DRV_NAME, NULL);
}

void vfw_pf_debugfs_unregister(void)
{
	debugfs_remove_recursive(vfw_pf_dbg_root);
	vfw_pf_dbg_root = NULL;
}
