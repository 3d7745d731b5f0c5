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
		uint8_t raw[48];
	} u;
};

#ifdef __KERNEL__
static_assert(sizeof(struct vfw_aq_desc) == VFW_AQ_DESC_SIZE);
static_assert(sizeof(struct vfw_aq_vf_config) == 32);
#else
_Static_assert(sizeof(struct vfw_aq_desc) == VFW_AQ_DESC_SIZE, "desc size");
_Static_assert(sizeof(struct vfw_aq_vf_config) == 32, "config size");
#endif

#endif /* VFWARP_ADMIN_H */
