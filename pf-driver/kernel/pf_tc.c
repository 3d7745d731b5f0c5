// SPDX-License-Identifier: GPL-2.0-only
/*
 * pf_tc.c - tc flower offload into the adapter's switch (switchdev mode,
 * docs/switchdev.md; hardware interface 2.3 ESW_RULE_* commands).
 *
 * A flower filter on a VF's representor (its ingress block: what the VF
 * sends) or on the PF netdev (the uplink representor: what the wire sends)
 * becomes one rule in the adapter, named by the filter's cookie. The match
 * and actions are translated key by key; anything the switch cannot do
 * exactly (a key, a mask shape, an action, chains, goto) is refused with an
 * extack message and nothing is installed, so `skip_sw` filters fail and
 * plain filters stay in software only. Counters: the device counts every
 * rule; FLOW_CLS_STATS reports the change since the last read.
 *
 * Rules are tracked here by cookie (to choose ADD or REPLACE and to turn
 * cumulative counters into deltas). The rule is handed to the device in
 * one coherent DMA buffer, under tc_lock with the table.
 */
#include <linux/dma-mapping.h>
#include <linux/hashtable.h>
#include <linux/slab.h>
#include <net/flow_offload.h>
#include <net/ipv6.h>
#include <net/pkt_cls.h>

#include "pf.h"

struct vfw_pf_tc_rule {
	struct hlist_node node;
	unsigned long cookie;
	u64 pkts, bytes;        /* the device's counters at the last read */
};

static LIST_HEAD(vfw_pf_block_cb_list);

static struct vfw_pf_tc_rule *rule_find(struct vfw_pf *pf, unsigned long cookie)
{
	struct vfw_pf_tc_rule *r;

	hash_for_each_possible(pf->tc_rules, r, node, cookie)
		if (r->cookie == cookie)
			return r;
	return NULL;
}

/* The switch port a netdev of this adapter stands for: a representor's VF,
 * or the uplink for the PF netdev; -1 for anything else. */
static int port_of_dev(struct vfw_pf *pf, const struct net_device *dev)
{
	int vf = vfw_pf_repr_vf(pf, dev);

	if (vf >= 0)
		return vf;
	if (dev == pf->netdev)
		return VFW_ESW_PORT_UPLINK;
	return -1;
}

#define REFUSE(extack, msg) ({ NL_SET_ERR_MSG_MOD(extack, msg); -EOPNOTSUPP; })

/* A contiguous prefix mask of `bits` bits in `len` bytes: its length, or
 * -1. */
static int prefix_len(const u8 *mask, int len)
{
	int n = 0, i;

	for (i = 0; i < len * 8; i++) {
		bool on = mask[i / 8] & (0x80 >> (i % 8));

		if (on && n != i)
			return -1;
		n += on;
	}
	return n;
}

static int parse_ports(struct flow_rule *rule, struct vfw_esw_rule *r,
		       struct netlink_ext_ack *extack)
{
	if (flow_rule_match_key(rule, FLOW_DISSECTOR_KEY_PORTS)) {
		struct flow_match_ports m;

		flow_rule_match_ports(rule, &m);
		if (m.mask->src) {
			if (m.mask->src != htons(0xffff))
				return REFUSE(extack, "L4 source port: only exact values or ranges");
			r->match |= VFW_ESW_M_SPORT;
			r->sport_lo = r->sport_hi = ntohs(m.key->src);
		}
		if (m.mask->dst) {
			if (m.mask->dst != htons(0xffff))
				return REFUSE(extack, "L4 destination port: only exact values or ranges");
			r->match |= VFW_ESW_M_DPORT;
			r->dport_lo = r->dport_hi = ntohs(m.key->dst);
		}
	}
	if (flow_rule_match_key(rule, FLOW_DISSECTOR_KEY_PORTS_RANGE)) {
		struct flow_match_ports_range m;

		flow_rule_match_ports_range(rule, &m);
		if (m.key->tp_max.src) {
			r->match |= VFW_ESW_M_SPORT;
			r->sport_lo = ntohs(m.key->tp_min.src);
			r->sport_hi = ntohs(m.key->tp_max.src);
		}
		if (m.key->tp_max.dst) {
			r->match |= VFW_ESW_M_DPORT;
			r->dport_lo = ntohs(m.key->tp_min.dst);
			r->dport_hi = ntohs(m.key->tp_max.dst);
		}
	}
	return 0;
}

static int parse_match(struct flow_rule *rule, struct vfw_esw_rule *r,
		       struct netlink_ext_ack *extack)
{
	const u64 supported = BIT_ULL(FLOW_DISSECTOR_KEY_CONTROL) |
		BIT_ULL(FLOW_DISSECTOR_KEY_BASIC) |
		BIT_ULL(FLOW_DISSECTOR_KEY_ETH_ADDRS) |
		BIT_ULL(FLOW_DISSECTOR_KEY_VLAN) |
		BIT_ULL(FLOW_DISSECTOR_KEY_IPV4_ADDRS) |
		BIT_ULL(FLOW_DISSECTOR_KEY_IPV6_ADDRS) |
		BIT_ULL(FLOW_DISSECTOR_KEY_PORTS) |
		BIT_ULL(FLOW_DISSECTOR_KEY_PORTS_RANGE) |
		BIT_ULL(FLOW_DISSECTOR_KEY_IP) |
		BIT_ULL(FLOW_DISSECTOR_KEY_TCP);
	struct flow_dissector *d = rule->match.dissector;
	u16 addr_type = 0;
	int n;

	if (d->used_keys & ~supported)
		return REFUSE(extack, "a match key the adapter's switch does not support (supported: MACs, VLAN id, ethertype, IPv4/IPv6 prefixes, IP protocol, L4 ports and ranges, DSCP, TCP flags)");
	if (flow_rule_match_key(rule, FLOW_DISSECTOR_KEY_CONTROL)) {
		struct flow_match_control m;

		flow_rule_match_control(rule, &m);
		if (m.mask->flags)
			return REFUSE(extack, "IP fragment flags cannot be matched");
		/* flower keeps IPv4 and IPv6 addresses in one union: which
		 * one the filter has is the control key's addr_type */
		addr_type = m.key->addr_type;
	}
	if (flow_rule_match_key(rule, FLOW_DISSECTOR_KEY_BASIC)) {
		struct flow_match_basic m;

		flow_rule_match_basic(rule, &m);
		if (m.mask->n_proto) {
			if (m.mask->n_proto != htons(0xffff))
				return REFUSE(extack, "ethertype: only exact values");
			r->match |= VFW_ESW_M_ETHERTYPE;
			r->ethertype = ntohs(m.key->n_proto);
		}
		if (m.mask->ip_proto) {
			if (m.mask->ip_proto != 0xff)
				return REFUSE(extack, "IP protocol: only exact values");
			r->match |= VFW_ESW_M_IP_PROTO;
			r->ip_proto = m.key->ip_proto;
		}
	}
	if (flow_rule_match_key(rule, FLOW_DISSECTOR_KEY_ETH_ADDRS)) {
		struct flow_match_eth_addrs m;

		flow_rule_match_eth_addrs(rule, &m);
		if (!is_zero_ether_addr(m.mask->dst)) {
			r->match |= VFW_ESW_M_DST_MAC;
			ether_addr_copy(r->dst_mac, m.key->dst);
			ether_addr_copy(r->dst_mac_mask, m.mask->dst);
		}
		if (!is_zero_ether_addr(m.mask->src)) {
			r->match |= VFW_ESW_M_SRC_MAC;
			ether_addr_copy(r->src_mac, m.key->src);
			ether_addr_copy(r->src_mac_mask, m.mask->src);
		}
	}
	if (flow_rule_match_key(rule, FLOW_DISSECTOR_KEY_VLAN)) {
		struct flow_match_vlan m;

		flow_rule_match_vlan(rule, &m);
		if (m.mask->vlan_priority || m.mask->vlan_dei)
			return REFUSE(extack, "VLAN priority and DEI cannot be matched (classify by DSCP or 802.1p trust instead)");
		if (m.mask->vlan_id) {
			if (m.mask->vlan_id != VLAN_VID_MASK)
				return REFUSE(extack, "VLAN id: only exact values");
			r->match |= VFW_ESW_M_VLAN;
			r->vid = m.key->vlan_id;
		}
	}
	if (addr_type == FLOW_DISSECTOR_KEY_IPV4_ADDRS) {
		struct flow_match_ipv4_addrs m;

		flow_rule_match_ipv4_addrs(rule, &m);
		r->ip_version = 4;
		r->match |= VFW_ESW_M_IP_VERSION;
		if (m.mask->src) {
			n = prefix_len((const u8 *)&m.mask->src, 4);
			if (n < 0)
				return REFUSE(extack, "IPv4 source: only prefixes (contiguous masks)");
			r->match |= VFW_ESW_M_SRC_IP;
			r->src_plen = n;
			memcpy(r->src_ip, &m.key->src, 4);
		}
		if (m.mask->dst) {
			n = prefix_len((const u8 *)&m.mask->dst, 4);
			if (n < 0)
				return REFUSE(extack, "IPv4 destination: only prefixes (contiguous masks)");
			r->match |= VFW_ESW_M_DST_IP;
			r->dst_plen = n;
			memcpy(r->dst_ip, &m.key->dst, 4);
		}
	}
	if (addr_type == FLOW_DISSECTOR_KEY_IPV6_ADDRS) {
		struct flow_match_ipv6_addrs m;

		flow_rule_match_ipv6_addrs(rule, &m);
		r->ip_version = 6;
		r->match |= VFW_ESW_M_IP_VERSION;
		if (!ipv6_addr_any(&m.mask->src)) {
			n = prefix_len(m.mask->src.s6_addr, 16);
			if (n < 0)
				return REFUSE(extack, "IPv6 source: only prefixes (contiguous masks)");
			r->match |= VFW_ESW_M_SRC_IP;
			r->src_plen = n;
			memcpy(r->src_ip, &m.key->src, 16);
		}
		if (!ipv6_addr_any(&m.mask->dst)) {
			n = prefix_len(m.mask->dst.s6_addr, 16);
			if (n < 0)
				return REFUSE(extack, "IPv6 destination: only prefixes (contiguous masks)");
			r->match |= VFW_ESW_M_DST_IP;
			r->dst_plen = n;
			memcpy(r->dst_ip, &m.key->dst, 16);
		}
	}
	if (flow_rule_match_key(rule, FLOW_DISSECTOR_KEY_IP)) {
		struct flow_match_ip m;

		flow_rule_match_ip(rule, &m);
		if (m.mask->ttl || (m.mask->tos & 0x03))
			return REFUSE(extack, "IP TTL and ECN cannot be matched (DSCP can: ip_tos with mask 0xfc)");
		if (m.mask->tos) {
			r->match |= VFW_ESW_M_DSCP;
			r->dscp = m.key->tos >> 2;
			r->dscp_mask = m.mask->tos >> 2;
		}
	}
	if (flow_rule_match_key(rule, FLOW_DISSECTOR_KEY_TCP)) {
		struct flow_match_tcp m;

		flow_rule_match_tcp(rule, &m);
		if (ntohs(m.mask->flags) & ~0xff)
			return REFUSE(extack, "TCP flags: only the low 8 (FIN..CWR)");
		if (m.mask->flags) {
			r->match |= VFW_ESW_M_TCP_FLAGS;
			r->tcp_flags = ntohs(m.key->flags) & ntohs(m.mask->flags);
			r->tcp_flags_mask = ntohs(m.mask->flags);
		}
	}
	return parse_ports(rule, r, extack);
}

/* vlan push (802.1Q only) / pop (hardware interface 2.4). The switch
 * applies its VLAN action to every copy of the frame, so a mirror placed
 * before it in tc's list (whose copy tc would send unchanged) cannot be
 * expressed. */
static int parse_vlan(struct vfw_pf *pf, const struct flow_action_entry *act,
		      struct vfw_esw_rule *r, struct netlink_ext_ack *extack)
{
	if ((pf->version & 0xffff) < 4)
		return REFUSE(extack, "vlan push/pop: the adapter's interface is older than 2.4");
	if (r->actions & (VFW_ESW_A_VLAN_PUSH | VFW_ESW_A_VLAN_POP))
		return REFUSE(extack, "one vlan action per filter");
	if (r->actions & VFW_ESW_A_MIRROR)
		return REFUSE(extack, "vlan push/pop after a mirror: the mirror's copy would carry the change (put the vlan action first)");
	if (r->actions & VFW_ESW_A_REDIRECT)
		return REFUSE(extack, "vlan push/pop after the redirect (put the vlan action first)");
	if (act->id == FLOW_ACTION_VLAN_POP) {
		r->actions |= VFW_ESW_A_VLAN_POP;
		return 0;
	}
	if (act->vlan.proto != htons(ETH_P_8021Q))
		return REFUSE(extack, "vlan push: only 802.1Q (the adapter's switch cannot push an 802.1ad tag)");
	if (act->vlan.vid < 1 || act->vlan.vid > 4094)
		return REFUSE(extack, "vlan push: id 1..4094");
	if (act->vlan.prio > 7)
		return REFUSE(extack, "vlan push: priority 0..7");
	r->actions |= VFW_ESW_A_VLAN_PUSH;
	r->vlan_vid = act->vlan.vid;
	r->vlan_prio = act->vlan.prio;
	return 0;
}

static int parse_actions(struct vfw_pf *pf, struct flow_rule *rule,
			 struct vfw_esw_rule *r, struct netlink_ext_ack *extack)
{
	const struct flow_action_entry *act;
	int i, port, err;

	if (!flow_action_has_entries(&rule->action))
		return REFUSE(extack, "a filter without actions");
	if (!flow_action_basic_hw_stats_check(&rule->action, extack))
		return -EOPNOTSUPP;
	flow_action_for_each(i, act, &rule->action) {
		switch (act->id) {
		case FLOW_ACTION_DROP:
			r->actions |= VFW_ESW_A_DROP;
			break;
		case FLOW_ACTION_ACCEPT:
			break;
		case FLOW_ACTION_REDIRECT:
		case FLOW_ACTION_MIRRED:
			port = port_of_dev(pf, act->dev);
			if (port < 0)
				return REFUSE(extack, "mirred: the target must be a representor or the uplink of the same adapter");
			if (act->id == FLOW_ACTION_REDIRECT) {
				if (r->actions & VFW_ESW_A_REDIRECT)
					return REFUSE(extack, "one redirect per filter");
				r->actions |= VFW_ESW_A_REDIRECT;
				r->redirect_port = port;
			} else {
				if (r->actions & VFW_ESW_A_MIRROR)
					return REFUSE(extack, "one mirror per filter");
				r->actions |= VFW_ESW_A_MIRROR;
				r->mirror_port = port;
			}
			break;
		case FLOW_ACTION_PRIORITY:
			/* skbedit priority P: the class of priority P (dcb ets
			 * prio-tc), as for the host's own frames */
			if (act->priority > 7)
				return REFUSE(extack, "skbedit priority: 0..7 (an 802.1p priority)");
			r->actions |= VFW_ESW_A_SET_TC;
			r->set_tc = vfw_pf_prio_tc(pf, act->priority);
			break;
		case FLOW_ACTION_POLICE:
			/* tc always gives an mtu (~0, or 255 << the rate
			 * table's cell_log): the meter has none, which is the
			 * same for frames up to it; a smaller one is refused */
			if (act->police.rate_pkt_ps || act->police.peakrate_bytes_ps ||
			    act->police.avrate || act->police.overhead ||
			    act->police.mtu < ETH_FRAME_LEN + VLAN_HLEN)
				return REFUSE(extack, "police: only rate (bytes/s) and burst; no packet rate, peak rate, avrate, overhead, nor an mtu below 1518");
			if (act->police.exceed.act_id != FLOW_ACTION_DROP ||
			    (act->police.notexceed.act_id != FLOW_ACTION_PIPE &&
			     act->police.notexceed.act_id != FLOW_ACTION_ACCEPT))
				return REFUSE(extack, "police: conform-exceed drop/pipe (or drop/ok) only");
			if (!act->police.rate_bytes_ps || !act->police.burst)
				return REFUSE(extack, "police: rate and burst must be above 0");
			r->actions |= VFW_ESW_A_POLICE;
			r->police_rate = act->police.rate_bytes_ps * 8;
			r->police_burst = act->police.burst;
			break;
		case FLOW_ACTION_VLAN_PUSH:
		case FLOW_ACTION_VLAN_POP:
			err = parse_vlan(pf, act, r, extack);
			if (err)
				return err;
			break;
		case FLOW_ACTION_GOTO:
			return REFUSE(extack, "goto chain: the adapter's switch has one lookup stage");
		default:
			return REFUSE(extack, "an action the adapter's switch does not support (supported: drop, pass, mirred redirect/mirror, skbedit priority, police, vlan push/pop)");
		}
	}
	if ((r->actions & VFW_ESW_A_DROP) &&
	    (r->actions & ~VFW_ESW_A_DROP))
		return REFUSE(extack, "drop with other actions");
	return 0;
}

/* Run one rule command; 0 or -errno with the extack message set. */
static int rule_cmd(struct vfw_pf *pf, u16 op, unsigned long cookie, bool buf,
		    struct vfw_aq_desc *d, struct netlink_ext_ack *extack)
{
	int st;

	d->opcode = cpu_to_le16(op);
	d->u.rule.cookie = cpu_to_le64(cookie);
	if (buf) {
		d->u.rule.addr = cpu_to_le64(pf->tc_buf_dma);
		d->u.rule.len = cpu_to_le16(sizeof(struct vfw_esw_rule));
	}
	st = vfw_pf_aq_exec(pf, d);
	if (st == VFW_AQ_S_OK)
		return 0;
	if (st < 0) {
		NL_SET_ERR_MSG_MOD(extack, "the adapter did not answer");
		return st;
	}
	NL_SET_ERR_MSG_FMT_MOD(extack, "the adapter refused the rule: %s",
			       vfw_pf_aq_status_str(st));
	return st == VFW_AQ_S_UNSUPPORTED ? -EOPNOTSUPP : vfw_pf_aq_errno(st);
}

static int vfw_pf_tc_replace(struct vfw_pf *pf, struct net_device *dev,
			     struct flow_cls_offload *f)
{
	struct netlink_ext_ack *extack = f->common.extack;
	struct flow_rule *rule = flow_cls_offload_flow_rule(f);
	struct vfw_esw_rule *r = pf->tc_buf;
	struct vfw_pf_tc_rule *tr;
	struct vfw_aq_desc d = {};
	int err;

	if (f->common.chain_index)
		return REFUSE(extack, "only chain 0: the adapter's switch has one lookup stage");
	memset(r, 0, sizeof(*r));
	r->prio = f->common.prio;
	r->scope = port_of_dev(pf, dev);
	err = parse_match(rule, r, extack);
	if (!err)
		err = parse_actions(pf, rule, r, extack);
	if (err)
		return err;
	tr = rule_find(pf, f->cookie);
	if (tr) {
		err = rule_cmd(pf, VFW_AQ_OP_ESW_RULE_REPLACE, f->cookie, true, &d,
			       extack);
		return err;
	}
	tr = kzalloc(sizeof(*tr), GFP_KERNEL);
	if (!tr)
		return -ENOMEM;
	err = rule_cmd(pf, VFW_AQ_OP_ESW_RULE_ADD, f->cookie, true, &d, extack);
	if (err) {
		kfree(tr);
		return err;
	}
	tr->cookie = f->cookie;
	hash_add(pf->tc_rules, &tr->node, f->cookie);
	pf->tc_num_rules++;
	return 0;
}

static int vfw_pf_tc_destroy(struct vfw_pf *pf, struct flow_cls_offload *f)
{
	struct vfw_pf_tc_rule *tr = rule_find(pf, f->cookie);
	struct vfw_aq_desc d = {};

	if (!tr)
		return -ENOENT;
	/* The device may have dropped it already (legacy mode, reset): the
	 * filter goes either way. */
	rule_cmd(pf, VFW_AQ_OP_ESW_RULE_DEL, f->cookie, false, &d, NULL);
	hash_del(&tr->node);
	kfree(tr);
	pf->tc_num_rules--;
	return 0;
}

static int vfw_pf_tc_stats(struct vfw_pf *pf, struct flow_cls_offload *f)
{
	struct vfw_pf_tc_rule *tr = rule_find(pf, f->cookie);
	struct vfw_aq_desc d = {};
	u64 pkts, bytes;
	int err;

	if (!tr)
		return -ENOENT;
	err = rule_cmd(pf, VFW_AQ_OP_ESW_RULE_STATS, f->cookie, false, &d,
		       f->common.extack);
	if (err)
		return err;
	pkts = le64_to_cpu(d.u.rule.packets);
	bytes = le64_to_cpu(d.u.rule.bytes);
	if (pkts != tr->pkts)
		flow_stats_update(&f->stats, bytes - tr->bytes, pkts - tr->pkts,
				  0, jiffies, FLOW_ACTION_HW_STATS_IMMEDIATE);
	tr->pkts = pkts;
	tr->bytes = bytes;
	return 0;
}

static int vfw_pf_tc_block_cb(enum tc_setup_type type, void *type_data,
			      void *cb_priv)
{
	struct net_device *dev = cb_priv;
	struct vfw_pf *pf = vfw_pf_of_esw_netdev(dev);
	struct flow_cls_offload *f = type_data;
	int err;

	if (type != TC_SETUP_CLSFLOWER || !pf)
		return -EOPNOTSUPP;
	mutex_lock(&pf->tc_lock);
	if (pf->eswitch_mode != DEVLINK_ESWITCH_MODE_SWITCHDEV && f->command != FLOW_CLS_DESTROY) {
		NL_SET_ERR_MSG_MOD(f->common.extack, "tc offload needs the eswitch in switchdev mode");
		err = -EOPNOTSUPP;
		goto out;
	}
	switch (f->command) {
	case FLOW_CLS_REPLACE:
		err = vfw_pf_tc_replace(pf, dev, f);
		break;
	case FLOW_CLS_DESTROY:
		err = vfw_pf_tc_destroy(pf, f);
		break;
	case FLOW_CLS_STATS:
		err = vfw_pf_tc_stats(pf, f);
		break;
	default:
		err = -EOPNOTSUPP;
		break;
	}
out:
	mutex_unlock(&pf->tc_lock);
	return err;
}

/* ndo_setup_tc of the representors and the PF netdev: ingress flower blocks. */
int vfw_pf_setup_tc(struct net_device *dev, enum tc_setup_type type,
		    void *type_data)
{
	if (type != TC_SETUP_BLOCK)
		return -EOPNOTSUPP;
	return flow_block_cb_setup_simple(type_data, &vfw_pf_block_cb_list,
					  vfw_pf_tc_block_cb, dev, dev, true);
}

int vfw_pf_tc_init(struct vfw_pf *pf)
{
	mutex_init(&pf->tc_lock);
	hash_init(pf->tc_rules);
	pf->tc_buf = dma_alloc_coherent(&pf->pdev->dev, sizeof(struct vfw_esw_rule),
					&pf->tc_buf_dma, GFP_KERNEL);
	return pf->tc_buf ? 0 : -ENOMEM;
}

/* After the netdevs are gone (their blocks unbound, rules destroyed): what
 * is left is freed. */
void vfw_pf_tc_fini(struct vfw_pf *pf)
{
	struct vfw_pf_tc_rule *tr;
	struct hlist_node *tmp;
	int b;

	hash_for_each_safe(pf->tc_rules, b, tmp, tr, node) {
		hash_del(&tr->node);
		kfree(tr);
	}
	pf->tc_num_rules = 0;
	if (pf->tc_buf)
		dma_free_coherent(&pf->pdev->dev, sizeof(struct vfw_esw_rule),
				  pf->tc_buf, pf->tc_buf_dma);
	pf->tc_buf = NULL;
}
