/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vfwarp hardware interface: the PF admin queue (VFW_REGWIN_ADMINQ).
 *
 * The PF driver configures VFs (MAC, VLAN, anti-spoof, trust, link state,
 * rate) through a command ring in host memory, the way real NICs do:
 *
 *   - The driver allocates VFW_AQ_DESC_SIZE * len bytes of DMA memory
 *     (VFW_AQ_BASE_ALIGN aligned), writes BASE_LO/BASE_HI/LEN, then sets
 *     CTRL.ENABLE. The device checks base and len; a bad one sets
 *     STATUS.CFG_ERR and the queue stays disabled. Enabling zeroes HEAD and
 *     TAIL. BASE/LEN writes while enabled are ignored.
 *   - To submit, the driver fills the descriptor at TAIL (flags = 0), and
 *     writes TAIL = (TAIL + 1) % LEN (the doorbell). The device executes
 *     descriptors from HEAD up to TAIL in order, writes each back with
 *     VFW_AQ_F_DONE (and VFW_AQ_F_ERR when status != OK) and the reply
 *     parameters, and advances HEAD. A TAIL >= LEN sets STATUS.TAIL_ERR and
 *     is ignored. A DMA failure sets STATUS.DMA_ERR and disables the queue.
 *   - A bad command fails only that command: its status says why, nothing
 *     of the device state changes, and the next descriptor runs normally.
 *
 * All fields little endian. Must compile in the kernel, QEMU and user space.
 * docs/hw-interface.md ("Admin queue") explains it.
 */
#ifndef VFWARP_ADMIN_H
#define VFWARP_ADMIN_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/build_bug.h>
#else
#include <stdint.h>
#endif

#include "vfwarp_mbox.h"  /* VFW_RXM_*, VFW_MC_FILTER_MAX */

/* Registers in the VFW_REGWIN_ADMINQ window of the PF's BAR0 (VFs: 0). */
#define VFW_REG_AQ_BASE_LO     0x0100  /* RW: ring base, bits 31:0 */
#define VFW_REG_AQ_BASE_HI     0x0104  /* RW: ring base, bits 63:32 */
#define VFW_REG_AQ_LEN         0x0108  /* RW: descriptors, 1..VFW_AQ_MAX_LEN */
#define VFW_REG_AQ_HEAD        0x010c  /* RO: next descriptor the device runs */
#define VFW_REG_AQ_TAIL        0x0110  /* RW: doorbell, next free descriptor */
#define VFW_REG_AQ_CTRL        0x0114  /* RW: VFW_AQ_CTRL_* */
#define VFW_REG_AQ_STATUS      0x0118  /* RO: VFW_AQ_STATUS_*; errors clear on enable */
#define VFW_REG_AQ_CMDS_OK     0x011c  /* RO: commands completed OK (wrapping) */
#define VFW_REG_AQ_CMDS_ERR    0x0120  /* RO: commands failed (wrapping) */

#define VFW_AQ_CTRL_ENABLE     (1u << 0)
#define VFW_AQ_STATUS_ENABLED  (1u << 0)
#define VFW_AQ_STATUS_CFG_ERR  (1u << 1)  /* bad BASE/LEN at enable */
#define VFW_AQ_STATUS_TAIL_ERR (1u << 2)  /* TAIL >= LEN written */
#define VFW_AQ_STATUS_DMA_ERR  (1u << 3)  /* ring DMA failed; queue disabled */

#define VFW_AQ_MAX_LEN         256
#define VFW_AQ_DESC_SIZE       64
#define VFW_AQ_BASE_ALIGN      64

/* Uplink speed the device reports and checks rates against. */
#define VFW_UPLINK_SPEED_MBPS  10000

/* Opcodes. */
#define VFW_AQ_OP_NOP               0x0000
#define VFW_AQ_OP_SET_VF_MAC        0x0101
#define VFW_AQ_OP_SET_VF_VLAN       0x0102
#define VFW_AQ_OP_SET_VF_SPOOFCHK   0x0103
#define VFW_AQ_OP_SET_VF_TRUST      0x0104
#define VFW_AQ_OP_SET_VF_LINK_STATE 0x0105
#define VFW_AQ_OP_SET_VF_RATE       0x0106
#define VFW_AQ_OP_SET_VF_VLAN_FILTER 0x0107 /* a VLAN the VF may use tagged */
#define VFW_AQ_OP_SET_VF_RX_MODE    0x0108  /* multicast filter, allmulti */
#define VFW_AQ_OP_CLEAR_VF_FILTERS  0x0109  /* no VLAN filters, RX mode 0 */
#define VFW_AQ_OP_SET_VF_RDMA_QUOTA 0x010a  /* 2.0: the VF's RDMA resource share */
#define VFW_AQ_OP_GET_VF_CONFIG     0x0181
#define VFW_AQ_OP_GET_VF_STATS      0x0182
#define VFW_AQ_OP_GET_VF_RDMA       0x0183  /* 2.0: quota and objects in use */
/* 2.1: QoS of the uplink (docs/qos.md): line rate, devlink rate tree, DCB.
 * For these the header's `vf` field is the command's object index: a
 * function (0 = PF, 1 + n = VF n) for the LEAF commands, a node id for
 * the NODE commands, a traffic class for GET_TC_STATS; 0 for the rest.
 * The header's rsvd must be 0. */
#define VFW_AQ_OP_QOS_SET_LINE      0x0201  /* struct vfw_aq_qos_line */
#define VFW_AQ_OP_QOS_NODE_ADD      0x0202  /* vfw_aq_qos_rate; id returned */
#define VFW_AQ_OP_QOS_NODE_DEL      0x0203
#define VFW_AQ_OP_QOS_NODE_SET      0x0204  /* vfw_aq_qos_rate, by mask */
#define VFW_AQ_OP_QOS_LEAF_SET      0x0205  /* vfw_aq_qos_rate, by mask */
#define VFW_AQ_OP_DCB_SET_ETS       0x0206  /* struct vfw_aq_dcb_ets */
#define VFW_AQ_OP_DCB_SET_MAXRATE   0x0207  /* struct vfw_aq_dcb_maxrate */
#define VFW_AQ_OP_DCB_SET_APP       0x0208  /* struct vfw_aq_dcb_app */
#define VFW_AQ_OP_DCB_DEL_APP       0x0209  /* struct vfw_aq_dcb_app */
#define VFW_AQ_OP_DCB_SET_TRUST     0x020a  /* struct vfw_aq_dcb_trust */
#define VFW_AQ_OP_QOS_GET_LINE      0x0281  /* -> struct vfw_aq_qos_line */
#define VFW_AQ_OP_QOS_NODE_GET      0x0282  /* -> struct vfw_aq_qos_rate */
#define VFW_AQ_OP_QOS_NODES_GET     0x0283  /* -> struct vfw_aq_qos_nodes */
#define VFW_AQ_OP_QOS_LEAF_GET      0x0284  /* -> struct vfw_aq_qos_rate */
#define VFW_AQ_OP_DCB_GET_ETS       0x0285  /* -> struct vfw_aq_dcb_ets */
#define VFW_AQ_OP_DCB_GET_MAXRATE   0x0286  /* -> struct vfw_aq_dcb_maxrate */
#define VFW_AQ_OP_DCB_GET_APP       0x0287  /* -> struct vfw_aq_dcb_apps */
#define VFW_AQ_OP_QOS_GET_TC_STATS  0x0288  /* -> struct vfw_aq_qos_tc_stats */

/* 2.2: the embedded switch's mode (docs/switchdev.md). `vf` and rsvd 0. */
#define VFW_AQ_OP_ESW_SET_MODE      0x0301  /* struct vfw_aq_esw_mode */
#define VFW_AQ_OP_ESW_GET_MODE      0x0381  /* -> struct vfw_aq_esw_mode */
/* 2.3: offloaded rules (tc flower) by cookie, switchdev mode only. */
#define VFW_AQ_OP_ESW_RULE_ADD      0x0302  /* vfw_aq_esw_rule_ref -> vfw_esw_rule */
#define VFW_AQ_OP_ESW_RULE_REPLACE  0x0303  /* vfw_aq_esw_rule_ref -> vfw_esw_rule */
#define VFW_AQ_OP_ESW_RULE_DEL      0x0304  /* vfw_aq_esw_rule_ref: cookie */
#define VFW_AQ_OP_ESW_RULE_FLUSH    0x0305  /* vfw_aq_esw_rule_ref: scope */
#define VFW_AQ_OP_ESW_RULE_STATS    0x0382  /* vfw_aq_esw_rule_ref: counters */
/* 2.3: bridge FDB entries (switchdev bridge offload), switchdev mode only. */
#define VFW_AQ_OP_ESW_FDB_ADD       0x0306  /* struct vfw_aq_esw_fdb */
#define VFW_AQ_OP_ESW_FDB_DEL       0x0307  /* struct vfw_aq_esw_fdb */
#define VFW_AQ_OP_ESW_PORT_VLAN     0x0308  /* struct vfw_aq_esw_vlan */

/* Descriptor flags (written by the device; the driver submits 0). */
#define VFW_AQ_F_DONE          (1u << 0)
#define VFW_AQ_F_ERR           (1u << 1)

/* Completion status. */
#define VFW_AQ_S_OK            0
#define VFW_AQ_S_BAD_OPCODE    1  /* unknown opcode */
#define VFW_AQ_S_BAD_VF        2  /* VF index >= NumVFs */
#define VFW_AQ_S_RANGE         3  /* a value out of its range */
#define VFW_AQ_S_INVAL         4  /* reserved field/bits non-zero, bad MAC */
#define VFW_AQ_S_UNSUPPORTED   5  /* valid but unsupported (VLAN protocol) */
#define VFW_AQ_S_NOENT         6  /* 2.1: no such node (or parent, app entry) */
#define VFW_AQ_S_BUSY          7  /* 2.1: the node still has children */
#define VFW_AQ_S_NOSPC         8  /* 2.1: every node id is in use */
#define VFW_AQ_S_LOOP          9  /* 2.1: parent chain loops or > 4 nodes deep */
#define VFW_AQ_S_OVERSUB      10  /* 2.1: tx_share guarantees would not fit */
#define VFW_AQ_S_EXIST        11  /* 2.3: the cookie is in use */
#define VFW_AQ_S_DMA          12  /* 2.3: the command's buffer could not be read */

#define VFW_VLAN_PROTO_8021Q   0x8100
#define VFW_VLAN_VID_MAX       4095
#define VFW_VLAN_QOS_MAX       7

#define VFW_LINK_STATE_AUTO    0  /* follows the uplink */
#define VFW_LINK_STATE_ENABLE  1
#define VFW_LINK_STATE_DISABLE 2

/* SET_VF_MAC: unicast or all-zero (zero = let the VF choose). */
struct vfw_aq_vf_mac {
	uint8_t mac[6];
	uint8_t rsvd[2];
};

/* SET_VF_VLAN: vid 0 with qos 0 = no port VLAN. */
struct vfw_aq_vf_vlan {
	uint16_t vid;    /* 0..4095 */
	uint8_t qos;     /* 802.1p priority 0..7 */
	uint8_t rsvd;
	uint16_t proto;  /* VFW_VLAN_PROTO_8021Q (0 means the same) */
	uint16_t rsvd2;
};

/* SET_VF_SPOOFCHK, SET_VF_TRUST: enable 0 or 1. */
struct vfw_aq_vf_bool {
	uint8_t enable;
	uint8_t rsvd[3];
};

/* SET_VF_LINK_STATE: VFW_LINK_STATE_*. */
struct vfw_aq_vf_link {
	uint8_t state;
	uint8_t rsvd[3];
};

/* SET_VF_RATE: Mbps; 0 = no guarantee / no limit; min <= max when max != 0;
 * both <= VFW_UPLINK_SPEED_MBPS. */
struct vfw_aq_vf_rate {
	uint32_t min_mbps;
	uint32_t max_mbps;
};

/* SET_VF_VLAN_FILTER: without a port VLAN, the VF's port is a trunk
 * carrying untagged frames and the VLANs whose filter is on (none after a
 * reset). With a port VLAN the filters are kept but have no effect. */
struct vfw_aq_vf_vlan_filter {
	uint16_t vid;    /* 1..4095 */
	uint8_t on;      /* 1 add, 0 remove */
	uint8_t rsvd;
};

/* SET_VF_RX_MODE: which multicast frames reach the VF (broadcast always
 * does): those to the mc_count addresses of the exact-match filter, or all
 * with VFW_RXM_ALLMULTI; VFW_RXM_PROMISC adds unknown unicast of its VLANs.
 * The two flags count only while the VF is trusted (SET_VF_TRUST), so
 * revoking trust revokes them at once. Replaces the previous mode. */
struct vfw_aq_vf_rx_mode {
	uint8_t flags;
	uint8_t mc_count; /* 0..VFW_MC_FILTER_MAX */
	uint16_t rsvd;
	uint8_t mc[VFW_MC_FILTER_MAX][6]; /* group addresses */
};

/* GET_VF_CONFIG reply. */
struct vfw_aq_vf_config {
	uint8_t mac[6];
	uint16_t vid;
	uint16_t proto;
	uint8_t qos;
	uint8_t spoofchk;
	uint8_t trust;
	uint8_t link_state;
	uint8_t rx_mode;  /* VFW_RXM_* */
	uint8_t mc_count; /* multicast filter entries */
	uint32_t min_mbps;
	uint32_t max_mbps;
	uint32_t gen;     /* bumps on every change of this VF's config */
	uint16_t vlan_filters; /* VLAN filters on */
};

/* GET_VF_STATS reply: the VF's traffic as the embedded switch sees it. */
struct vfw_aq_vf_stats {
	uint64_t rx_packets;
	uint64_t tx_packets;
	uint64_t rx_bytes;
	uint64_t tx_bytes;
	uint64_t rx_dropped;
	uint64_t tx_dropped;
};

/* SET_VF_RDMA_QUOTA request and GET_VF_RDMA reply (2.0). Each quota is
 * 0..the hardware limit VFW_RDMA_HW_* (vfwarp_rdma.h); 0 denies the
 * resource. A quota below what the VF uses now fails with RANGE and
 * changes nothing. GET_VF_RDMA returns the quota in q and the objects the
 * VF holds now in used (same field order). A VF reset (FLR, disable) frees
 * its objects; the quota is the PF's and stays. */
struct vfw_aq_rdma_quota {
	uint32_t qp, cq, mr, pd, mr_pages, conn;
};
struct vfw_aq_vf_rdma {
	struct vfw_aq_rdma_quota q;     /* request (SET) / quota (GET) */
	struct vfw_aq_rdma_quota used;  /* GET only; SET: zero */
};

/*
 * 2.1: QoS (docs/qos.md). Rates follow the kernel interface each command
 * serves, so the PF driver passes values through: devlink rate in bytes/s,
 * dcb maxrate in kbit/s (struct ieee_maxrate), the line in bits/s.
 */

/* QOS_SET_LINE / QOS_GET_LINE. rate_bps 0 = no line rate: frames leave at
 * once (nothing is scheduled; the tree and classes are kept and apply once
 * a rate is set), else VFW_QOS_LINE_MIN..VFW_QOS_LINE_MAX (RANGE) and not
 * below the guarantees under the root (OVERSUB). Switching the rate off
 * drops the frames queued at that moment (counted in their class). SET:
 * every field but rate_bps zero. GET also reports the limits. */
#define VFW_QOS_LINE_MIN       1000ull            /* bits/s */
#define VFW_QOS_LINE_MAX       1600000000000ull   /* 1.6 Tbit/s */
#define VFW_QOS_MAX_NODES      63    /* node ids 1..63; 0 = the root */
#define VFW_QOS_MAX_DEPTH      4     /* nodes between a leaf and the root */
#define VFW_QOS_MAX_PRIO       7
#define VFW_QOS_MAX_WEIGHT     1000
#define VFW_QOS_NUM_TC         8
struct vfw_aq_qos_line {
	uint64_t rate_bps;      /* SET/GET */
	uint64_t min_bps;       /* GET: VFW_QOS_LINE_MIN */
	uint64_t max_bps;       /* GET: VFW_QOS_LINE_MAX */
	uint32_t overhead;      /* GET: bytes the wire adds per frame (24) */
	uint16_t max_nodes;     /* GET: VFW_QOS_MAX_NODES */
	uint8_t max_depth;      /* GET: VFW_QOS_MAX_DEPTH */
	uint8_t num_tc;         /* GET: VFW_QOS_NUM_TC */
	uint16_t max_weight;    /* GET: VFW_QOS_MAX_WEIGHT */
	uint8_t max_prio;       /* GET: VFW_QOS_MAX_PRIO */
	uint8_t rsvd[13];
};

/* A devlink rate object: a leaf (one per function) or a node. The SET
 * commands change the fields named in `mask` (VFW_QOS_F_*; one devlink
 * rate op = one bit, so each op is one command) and keep the others; a
 * field not in mask must be 0 (INVAL). NODE_ADD creates a node from the
 * defaults (0, 0, 0, weight 1, parent 0) plus the masked fields and writes
 * its id (1..VFW_QOS_MAX_NODES, chosen by the device) into the header's
 * `vf` field; the index given must be 0. GETs fill every field, mask = 0.
 *   tx_share, tx_max: bytes/s as devlink; tx_max 0 = no limit; tx_share <=
 *     tx_max when tx_max != 0; bits/s (x8) <= VFW_QOS_LINE_MAX. A VF's
 *     leaf is also `ip link set PF vf N min_tx_rate/max_tx_rate` (one
 *     model): whole Mbit/s (multiples of 125000 bytes/s) <=
 *     VFW_UPLINK_SPEED_MBPS, else RANGE; GET_VF_CONFIG reads them in Mbps.
 *   tx_priority 0..7 (7 served first), tx_weight 0..1000 (0 = devlink's
 *     unset = 1; GET returns 1), parent 0 (root) or a node id.
 * Errors: RANGE (a value), NOENT (node or parent), LOOP (the parent chain
 * would loop or be deeper than 4 nodes), OVERSUB (the tx_share of a
 * parent's children would exceed its tx_share, else its tx_max, else at
 * the root the line rate), NOSPC (NODE_ADD: no free id), BUSY (NODE_DEL of
 * a node that still is a parent). */
#define VFW_QOS_F_TX_SHARE     (1u << 0)
#define VFW_QOS_F_TX_MAX       (1u << 1)
#define VFW_QOS_F_TX_PRIORITY  (1u << 2)
#define VFW_QOS_F_TX_WEIGHT    (1u << 3)
#define VFW_QOS_F_PARENT       (1u << 4)
#define VFW_QOS_F_ALL          0x1fu
struct vfw_aq_qos_rate {
	uint64_t tx_share;      /* bytes/s */
	uint64_t tx_max;        /* bytes/s, 0 = no limit */
	uint32_t tx_priority;
	uint32_t tx_weight;
	uint16_t parent;        /* node id, 0 = root */
	uint16_t mask;          /* SET: VFW_QOS_F_*; GET: 0 */
	uint16_t children;      /* GET of a node: leaves + nodes under it */
	uint8_t rsvd[18];
};

/* QOS_NODES_GET: the node ids in use, bit n = node n (bit 0 is 0). */
struct vfw_aq_qos_nodes {
	uint64_t in_use;
	uint8_t rsvd[40];
};

/* DCB_SET_ETS / DCB_GET_ETS, as struct ieee_ets (dcbnl ieee_setets):
 * tc_tsa VFW_TSA_STRICT or VFW_TSA_ETS (IEEE 802.1Qaz values; CBS and
 * vendor: UNSUPPORTED); tc_tx_bw percent 0..100, the ETS classes' summing
 * to 100 (RANGE) - a strict class's share is ignored and read back 0;
 * prio_tc[p] the class of priority p (0..7). Default: every class ETS,
 * 12/12/12/12/13/13/13/13, priority p in class p. */
#define VFW_TSA_STRICT         0
#define VFW_TSA_CBS            1
#define VFW_TSA_ETS            2
#define VFW_TSA_VENDOR         255
struct vfw_aq_dcb_ets {
	uint8_t tc_tsa[VFW_QOS_NUM_TC];
	uint8_t tc_tx_bw[VFW_QOS_NUM_TC];
	uint8_t prio_tc[VFW_QOS_NUM_TC];
	uint8_t rsvd[24];
};

/* DCB_SET_MAXRATE / DCB_GET_MAXRATE, as struct ieee_maxrate: kbit/s per
 * class, 0 = no limit, at most VFW_QOS_LINE_MAX / 1000 (RANGE). 32 bits
 * where ieee_maxrate has 64 (4.29 Pbit/s > the limit: the driver refuses
 * larger values with -EINVAL). */
struct vfw_aq_dcb_maxrate {
	uint32_t tc_maxrate_kbps[VFW_QOS_NUM_TC];
	uint8_t rsvd[16];
};

/* DCB_SET_APP / DCB_DEL_APP, as struct dcb_app (ieee_setapp/ieee_delapp):
 *   selector VFW_APP_SEL_DSCP, protocol a DSCP 0..63: frames with that
 *     DSCP get `priority` (in trust dscp);
 *   selector VFW_APP_SEL_ETHERTYPE, protocol 0: the default priority
 *     (`dcb app ... default-prio`), for frames the trust mode does not
 *     classify (untagged in pcp, non-IP or unmapped DSCP in dscp);
 *   other selectors/protocols: UNSUPPORTED; priority 0..7 (RANGE).
 * SET replaces the entry; DEL removes it if its priority matches (else
 * NOENT). An unmapped DSCP gets the default priority; with no default
 * entry that is 0. */
#define VFW_APP_SEL_ETHERTYPE  1
#define VFW_APP_SEL_DSCP       5
struct vfw_aq_dcb_app {
	uint8_t selector;
	uint8_t priority;
	uint16_t protocol;
	uint8_t rsvd[44];
};

/* DCB_SET_TRUST: how a frame's priority is found (dcb apptrust order of
 * one selector): VFW_TRUST_PCP (802.1p of tagged frames; a VF's port VLAN
 * priority for its untagged frames; the default), VFW_TRUST_DSCP (the app
 * table), VFW_TRUST_NONE (the default priority). Priority -> class by
 * the ETS prio_tc. */
#define VFW_TRUST_NONE         0
#define VFW_TRUST_PCP          1
#define VFW_TRUST_DSCP         2
struct vfw_aq_dcb_trust {
	uint8_t trust;
	uint8_t rsvd[47];
};

/* DCB_GET_APP: trust, the default priority and the DSCP table; DSCP d's
 * priority is nibble d % 2 (low first) of dscp_prio[d / 2], valid when bit
 * d of dscp_mapped is set. */
#define VFW_APP_F_DEFAULT      (1u << 0)  /* a default priority is set */
struct vfw_aq_dcb_apps {
	uint8_t trust;
	uint8_t default_prio;
	uint8_t flags;          /* VFW_APP_F_* */
	uint8_t rsvd[5];
	uint64_t dscp_mapped;
	uint8_t dscp_prio[32];
};

/* QOS_GET_TC_STATS (index = class): counters at the uplink since reset. */
struct vfw_aq_qos_tc_stats {
	uint64_t queued_pkts, queued_bytes;   /* accepted into the queue */
	uint64_t sent_pkts, sent_bytes;       /* put on the wire */
	uint64_t dropped_pkts, dropped_bytes; /* no room, or flushed */
};

/*
 * 2.2: ESW_SET_MODE / ESW_GET_MODE (docs/switchdev.md), the model of
 * `devlink dev eswitch set ... mode legacy|switchdev`.
 *   legacy (the default, and after a device reset): as in 1.x - VF MACs in
 *     the switch's FDB, PF and VFs forward to each other, unknown and group
 *     destinations flood, the uplink learns.
 *   switchdev: the PF driver's representors carry the slow path. A frame a
 *     VF sends that no offloaded rule or FDB entry forwards goes to the PF's
 *     RX ring tagged with the VF (VFW_RXD_STS_SRC, src_port = VF index): the
 *     VF's representor receives it. A frame from the wire that nothing
 *     forwards reaches the PF untagged (the PF netdev is the uplink
 *     representor). What the PF sends untagged goes to the wire only; a PF TX
 *     descriptor with VFW_TXD_TO_PORT sends a frame straight to one VF
 *     (representor transmit). The VFs' MAC entries leave the FDB and the
 *     uplink stops learning; a VF's other settings (VLAN, spoof check, rates)
 *     stay in force.
 * SET: mode VFW_ESW_MODE_*, rsvd zero (INVAL), other modes RANGE; setting
 * the current mode is a no-op. GET: the mode and the number of VFs the
 * switch has ports for.
 */
#define VFW_ESW_MODE_LEGACY    0
#define VFW_ESW_MODE_SWITCHDEV 1
struct vfw_aq_esw_mode {
	uint8_t mode;
	uint8_t rsvd0;
	uint16_t num_vfs;       /* GET: VF ports (SET: 0) */
	uint8_t rsvd[44];
};

/*
 * 2.3: offloaded rules (docs/switchdev.md), the model of tc flower filters
 * with skip_sw on a representor (its VF's frames) or on the uplink
 * representor (the wire's frames). Switchdev mode only (UNSUPPORTED in
 * legacy); leaving switchdev mode or a device reset deletes every rule.
 *
 * ADD / REPLACE: the rule (struct vfw_esw_rule, `len` bytes = its size)
 * is read from PF memory at `addr` (DMA: fails with DMA); `cookie` names
 * it (EXIST if in use for ADD, NOENT if not for REPLACE; a replace keeps
 * the rule's counters). DEL: by cookie (NOENT). FLUSH: every rule of one
 * scope; the count deleted comes back in `packets`. STATS: the rule's
 * frames and bytes since it was added (every rule counts).
 *
 * A rule sees the frames received on its scope port (a VF's own frames
 * for a VF, the wire's for the uplink) after the port's VLAN and spoof
 * checks; rules are tried in prio order (then the order added), the first
 * that matches decides; frames no rule matches take the switch's
 * forwarding (FDB, or the representor's slow path). Limits: 16384 rules
 * per scope, 65536 in all (NOSPC), 4095 police meters in all (NOSPC).
 * Every field is validated (INVAL: reserved bytes, a bit beyond the
 * defined ones, host bits past a prefix, a port range lo > hi, an
 * inverted mask; RANGE: a port index beyond the VFs or a class > 7;
 * BAD_VF: a VF port not enabled; UNSUPPORTED: chain != 0, a key or
 * action the switch lacks). A refused command changes nothing.
 */
#define VFW_ESW_PORT_UPLINK    0xffff  /* ports in rules: VF index, or these */
#define VFW_ESW_PORT_PF        0xfffe
#define VFW_ESW_RULES_PER_SCOPE 16384
#define VFW_ESW_RULES_MAX      65536

struct vfw_aq_esw_rule_ref {
	uint64_t cookie;        /* ADD, REPLACE, DEL, STATS */
	uint64_t addr;          /* ADD, REPLACE: DMA address of the rule */
	uint16_t len;           /* ADD, REPLACE: sizeof(struct vfw_esw_rule) */
	uint16_t scope;         /* FLUSH: a VF index or VFW_ESW_PORT_UPLINK */
	uint32_t rsvd0;
	uint64_t packets;       /* STATS (FLUSH: rules deleted) */
	uint64_t bytes;         /* STATS */
	uint8_t rsvd[8];
};

/* What a rule matches on (a key not named is a wildcard). */
#define VFW_ESW_M_DST_MAC      (1u << 0)   /* dst_mac under dst_mac_mask */
#define VFW_ESW_M_SRC_MAC      (1u << 1)
#define VFW_ESW_M_VLAN         (1u << 2)   /* vid, the frame's VLAN in the switch */
#define VFW_ESW_M_ETHERTYPE    (1u << 3)   /* after any VLAN tag */
#define VFW_ESW_M_SRC_IP       (1u << 4)   /* src_ip/src_plen, needs ip_version */
#define VFW_ESW_M_DST_IP       (1u << 5)
#define VFW_ESW_M_IP_PROTO     (1u << 6)
#define VFW_ESW_M_SPORT        (1u << 7)   /* [sport_lo, sport_hi] */
#define VFW_ESW_M_DPORT        (1u << 8)
#define VFW_ESW_M_DSCP         (1u << 9)   /* dscp under dscp_mask */
#define VFW_ESW_M_TCP_FLAGS    (1u << 10)  /* tcp_flags under tcp_flags_mask */
#define VFW_ESW_M_IP_VERSION   (1u << 11)  /* 4 or 6 alone (no address) */
#define VFW_ESW_M_ALL          0x0fffu

/* What it does. Without DROP the frame passes (tc's pass/ok). */
#define VFW_ESW_A_DROP         (1u << 0)
#define VFW_ESW_A_REDIRECT     (1u << 1)   /* to redirect_port (mirred redirect) */
#define VFW_ESW_A_MIRROR       (1u << 2)   /* a copy to mirror_port (mirred mirror) */
#define VFW_ESW_A_SET_TC       (1u << 3)   /* traffic class set_tc (skbedit priority) */
#define VFW_ESW_A_POLICE       (1u << 4)   /* police rate/burst, exceed drops */
/* 2.4: tc vlan push / pop. PUSH adds an outer 802.1Q tag (TPID 0x8100)
 * vlan_vid (1..4094, else RANGE), priority vlan_prio (0..7, else RANGE) to
 * the frame the rule matched; a tag the frame had stays inside it. POP
 * removes the frame's outer tag; a frame without one goes on unchanged (as
 * tc's pop does: the device cannot refuse such a rule, a match on VLAN 0
 * also admits priority-tagged frames, whose tag pop does remove). Either
 * is done before the frame is forwarded: it is forwarded in its new VLAN
 * (FDB entries of that VLAN), and redirect and mirror copies carry the
 * change. PUSH with POP: INVAL; vlan_vid/vlan_prio without PUSH are
 * reserved (INVAL if not 0). */
#define VFW_ESW_A_VLAN_PUSH    (1u << 5)
#define VFW_ESW_A_VLAN_POP     (1u << 6)
#define VFW_ESW_A_ALL          0x007fu

struct vfw_esw_rule {
	uint32_t prio;          /* tc pref: lower is tried first */
	uint32_t chain;         /* 0 (UNSUPPORTED otherwise) */
	uint16_t scope;         /* a VF index or VFW_ESW_PORT_UPLINK */
	uint16_t match;         /* VFW_ESW_M_* */
	uint16_t actions;       /* VFW_ESW_A_*; DROP excludes REDIRECT */
	uint16_t rsvd0;
	uint8_t dst_mac[6], dst_mac_mask[6];
	uint8_t src_mac[6], src_mac_mask[6];
	uint16_t vid;           /* 0..4095 */
	uint16_t ethertype;     /* host order value, e.g. 0x0800 */
	uint8_t ip_version;     /* 4 or 6 with SRC_IP/DST_IP/IP_VERSION */
	uint8_t src_plen, dst_plen;
	uint8_t ip_proto;
	uint8_t src_ip[16], dst_ip[16]; /* network order; IPv4 in bytes 0..3 */
	uint16_t sport_lo, sport_hi, dport_lo, dport_hi;
	uint8_t dscp, dscp_mask, tcp_flags, tcp_flags_mask;
	uint16_t redirect_port; /* VF index, VFW_ESW_PORT_UPLINK or _PF */
	uint16_t mirror_port;
	uint8_t set_tc;         /* 0..7 */
	uint8_t rsvd1[3];
	uint32_t police_burst;  /* bytes, > 0 */
	uint64_t police_rate;   /* bits/s, > 0 */
	uint16_t vlan_vid;      /* 2.4, VLAN_PUSH: 1..4094 */
	uint8_t vlan_prio;      /* 2.4, VLAN_PUSH: 802.1p 0..7 */
	uint8_t rsvd2[13];
};

/*
 * 2.3: ESW_FDB_ADD / ESW_FDB_DEL - a forwarding entry (mac, vid) -> port
 * the PF driver learned from its bridge (switchdev FDB notifications):
 * frames to that MAC in that VLAN are forwarded in the switch, from any
 * port, instead of taking the slow path. Switchdev mode only (UNSUPPORTED
 * in legacy; leaving switchdev or a reset removes them all). ADD of an
 * existing (mac, vid) moves it to the new port; DEL of an absent one:
 * NOENT. mac unicast (INVAL), vid 0..4095 (RANGE; 0 = untagged), port a
 * VF index (BAD_VF / RANGE) or VFW_ESW_PORT_UPLINK. At most
 * VFW_ESW_FDB_MAX entries (NOSPC).
 */
#define VFW_ESW_FDB_MAX        4096
struct vfw_aq_esw_fdb {
	uint8_t mac[6];
	uint16_t vid;
	uint16_t port;
	uint8_t rsvd[38];
};

/*
 * 2.3: ESW_PORT_VLAN - a port's VLANs in switchdev mode, as a VLAN-aware
 * bridge has them on a representor (its VF's port) or on the PF netdev
 * (the uplink): the model of SWITCHDEV_OBJ_ID_PORT_VLAN and the bridge's
 * vlan_filtering. The device keeps a membership per port; while the port
 * is VLAN-aware (op AWARE_ON) it is a trunk of those VLANs whose PVID is
 * the VLAN of its untagged frames, which leave it untagged; VLAN-unaware
 * (op AWARE_OFF, the default) the port keeps its legacy VLAN settings.
 * ops: DEL / ADD (vid 1..4094, RANGE), AWARE_OFF / AWARE_ON (vid 0).
 * flags (ADD only): none = a tagged member; PVID | UNTAGGED = the port's
 * untagged VLAN (replaces the previous PVID); PVID or UNTAGGED alone: the
 * switch cannot express it (UNSUPPORTED). port: a VF index or
 * VFW_ESW_PORT_UPLINK. Switchdev mode only (UNSUPPORTED); leaving it
 * forgets every port's VLANs.
 */
#define VFW_ESW_VLAN_DEL       0
#define VFW_ESW_VLAN_ADD       1
#define VFW_ESW_VLAN_AWARE_OFF 2
#define VFW_ESW_VLAN_AWARE_ON  3
#define VFW_ESW_VLAN_F_PVID     (1u << 0)
#define VFW_ESW_VLAN_F_UNTAGGED (1u << 1)
struct vfw_aq_esw_vlan {
	uint16_t port;
	uint16_t vid;
	uint8_t op;
	uint8_t flags;
	uint8_t rsvd[42];
};

/* One 64-byte descriptor; the device writes it back in place. */
struct vfw_aq_desc {
	uint16_t opcode;   /* VFW_AQ_OP_* */
	uint16_t flags;    /* VFW_AQ_F_*, device-written */
	uint16_t status;   /* VFW_AQ_S_*, device-written */
	uint16_t vf;       /* VF index (0-based) */
	uint32_t cookie;   /* opaque to the device, echoed */
	uint32_t rsvd;
	union {
		struct vfw_aq_vf_mac mac;
		struct vfw_aq_vf_vlan vlan;
		struct vfw_aq_vf_bool en;
		struct vfw_aq_vf_link link;
		struct vfw_aq_vf_rate rate;
		struct vfw_aq_vf_vlan_filter vlan_filter;
		struct vfw_aq_vf_rx_mode rx_mode;
		struct vfw_aq_vf_config cfg;
		struct vfw_aq_vf_stats stats;
		struct vfw_aq_vf_rdma rdma;
		struct vfw_aq_qos_line line;        /* 2.1 */
		struct vfw_aq_qos_rate rate_obj;
		struct vfw_aq_qos_nodes nodes;
		struct vfw_aq_dcb_ets ets;
		struct vfw_aq_dcb_maxrate maxrate;
		struct vfw_aq_dcb_app app;
		struct vfw_aq_dcb_trust trust;
		struct vfw_aq_dcb_apps apps;
		struct vfw_aq_qos_tc_stats tc_stats;
		struct vfw_aq_esw_mode esw;         /* 2.2 */
		struct vfw_aq_esw_rule_ref rule;    /* 2.3 */
		struct vfw_aq_esw_fdb fdb;
		struct vfw_aq_esw_vlan vlan_obj;
		uint8_t raw[48];
	} u;
};

#ifdef __KERNEL__
static_assert(sizeof(struct vfw_aq_desc) == VFW_AQ_DESC_SIZE);
static_assert(sizeof(struct vfw_aq_vf_config) == 32);
static_assert(sizeof(struct vfw_aq_qos_rate) == 48);
#else
_Static_assert(sizeof(struct vfw_aq_desc) == VFW_AQ_DESC_SIZE, "desc size");
_Static_assert(sizeof(struct vfw_aq_vf_config) == 32, "config size");
_Static_assert(sizeof(struct vfw_aq_qos_line) == 48, "line size");
_Static_assert(sizeof(struct vfw_aq_qos_rate) == 48, "rate size");
_Static_assert(sizeof(struct vfw_aq_qos_nodes) == 48, "nodes size");
_Static_assert(sizeof(struct vfw_aq_dcb_ets) == 48, "ets size");
_Static_assert(sizeof(struct vfw_aq_dcb_maxrate) == 48, "maxrate size");
_Static_assert(sizeof(struct vfw_aq_dcb_app) == 48, "app size");
_Static_assert(sizeof(struct vfw_aq_dcb_trust) == 48, "trust size");
_Static_assert(sizeof(struct vfw_aq_dcb_apps) == 48, "apps size");
_Static_assert(sizeof(struct vfw_aq_qos_tc_stats) == 48, "tc stats size");
_Static_assert(sizeof(struct vfw_aq_esw_mode) == 48, "esw mode size");
_Static_assert(sizeof(struct vfw_aq_esw_rule_ref) == 48, "rule ref size");
_Static_assert(sizeof(struct vfw_esw_rule) == 128, "rule size");
_Static_assert(sizeof(struct vfw_aq_esw_fdb) == 48, "fdb size");
_Static_assert(sizeof(struct vfw_aq_esw_vlan) == 48, "esw vlan size");
#endif

#endif /* VFWARP_ADMIN_H */
