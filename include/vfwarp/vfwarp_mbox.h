/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vfwarp hardware interface: the VF-to-PF mailbox (VFW_REGWIN_MBOX).
 *
 * A VF driver cannot configure its own switch port; it asks, and the PF
 * driver decides (MAC change, VLAN filters, multicast / all-multicast /
 * promiscuous), then programs the switch through the admin queue
 * (vfwarp_admin.h) and answers. The device only carries the messages:
 *
 *   VF:  write the request into MBX_MSG, write MBX_DOORBELL. The device
 *        copies the 64 bytes (the "posted request"), sets STATUS.BUSY and
 *        the VF's bit in the PF's PEND bitmap, and raises the PF's mailbox
 *        vector. A doorbell while BUSY is ignored (STATUS.OVERRUN).
 *   PF:  on the vector, read PEND; for each VF: write SEL, read REQ (the
 *        posted request), decide, write REPLY, write PF_MBX_DOORBELL. The
 *        device copies REPLY into the VF's MBX_MSG, clears BUSY and the
 *        PEND bit, sets STATUS.REPLY and raises the VF's mailbox vector.
 *
 * One request per VF is in flight at a time, so a VF cannot flood the PF.
 * A VF's FLR (or the VF going away) withdraws its posted request; a PF
 * reset clears every mailbox. Message contents are never interpreted by
 * the device: the PF driver must validate everything a VF sends.
 *
 * All fields little endian. Must compile in the kernel, QEMU and user space.
 * docs/hw-interface.md ("Mailbox") explains it.
 */
#ifndef VFWARP_MBOX_H
#define VFWARP_MBOX_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <linux/build_bug.h>
#else
#include <stdint.h>
#endif

#define VFW_MBX_MSG_SIZE        64
#define VFW_MBX_MSG_WORDS       (VFW_MBX_MSG_SIZE / 4)

/* --- VF side: registers in the VF's BAR0 -------------------------------- */
#define VFW_REG_MBX_MSG(i)      (0x0200 + 4 * (i)) /* RW: 16 words, request
							out / reply in */
#define VFW_REG_MBX_DOORBELL    0x0240  /* WO: post MSG as a request */
#define VFW_REG_MBX_CTRL        0x0244  /* RW: IRQ_EN + VEC (reply vector) */
#define VFW_REG_MBX_STATUS      0x0248  /* RO: VFW_MBX_STS_* */

#define VFW_MBX_STS_BUSY        (1u << 0)  /* request posted, no reply yet */
#define VFW_MBX_STS_REPLY       (1u << 1)  /* MSG holds the reply (cleared
					      by the next doorbell) */
#define VFW_MBX_STS_OVERRUN     (1u << 2)  /* a doorbell came while BUSY and
					      was ignored (cleared as REPLY) */

/* --- PF side: registers in the PF's BAR0 -------------------------------- */
#define VFW_REG_PF_MBX_PEND(i)  (0x0200 + 4 * (i)) /* RO: 4 words, bit n of
							word n/32 = VF n has
							a posted request */
#define VFW_REG_PF_MBX_SEL      0x0210  /* RW: VF index for REQ/DOORBELL */
#define VFW_REG_PF_MBX_DOORBELL 0x0214  /* WO: deliver REPLY to VF SEL */
#define VFW_REG_PF_MBX_CTRL     0x0218  /* RW: IRQ_EN + VEC (request vector) */
#define VFW_REG_PF_MBX_REQ(i)   (0x0220 + 4 * (i)) /* RO: VF SEL's posted
							request (0 if none) */
#define VFW_REG_PF_MBX_REPLY(i) (0x0260 + 4 * (i)) /* RW: reply to send */

/* CTRL of both sides: as the ring CTRL registers (vfwarp_ring.h). */
#define VFW_MBX_CTRL_IRQ_EN     (1u << 1)
#define VFW_MBX_CTRL_VEC_SHIFT  16
#define VFW_MBX_CTRL_VEC_MASK   0xffu

/* --- Messages ------------------------------------------------------------ */
/* Opcodes (VF -> PF); the reply echoes opcode and seq. */
#define VFW_MBX_OP_HELLO        0x0001  /* driver (re)starts: forget what I
					   asked before (VLANs, RX mode) */
#define VFW_MBX_OP_SET_MAC      0x0002  /* use this unicast MAC */
#define VFW_MBX_OP_VLAN         0x0003  /* join / leave a VLAN (tagged) */
#define VFW_MBX_OP_RX_MODE      0x0004  /* multicast list, allmulti, promisc */

/* Reply status. */
#define VFW_MBX_S_OK            0
#define VFW_MBX_S_DENIED        1  /* the PF's policy says no */
#define VFW_MBX_S_INVAL         2  /* malformed request or value */
#define VFW_MBX_S_NOSPC         3  /* a per-VF limit is reached */
#define VFW_MBX_S_UNSUPPORTED   4  /* unknown opcode */
#define VFW_MBX_S_ERR           5  /* the PF could not program the device */

#define VFW_MBX_API_VERSION     1
/* Multicast addresses one VF may ask for (exact-match filter per VF). */
#define VFW_MC_FILTER_MAX       7

#define VFW_RXM_ALLMULTI        (1u << 0)
#define VFW_RXM_PROMISC         (1u << 1)

struct vfw_mbx_hello {           /* request and reply */
	uint16_t api;            /* VFW_MBX_API_VERSION */
	uint16_t rsvd;
};

struct vfw_mbx_mac {             /* SET_MAC request */
	uint8_t mac[6];
	uint16_t rsvd;
};

struct vfw_mbx_vlan {            /* VLAN request */
	uint16_t vid;            /* 1..4095 */
	uint8_t add;             /* 1 join, 0 leave */
	uint8_t rsvd;
};

struct vfw_mbx_rx_mode {         /* RX_MODE request; reply: flags granted */
	uint8_t flags;           /* VFW_RXM_* asked (reply: granted) */
	uint8_t mc_count;        /* 0..VFW_MC_FILTER_MAX */
	uint16_t rsvd;
	uint8_t mc[VFW_MC_FILTER_MAX][6];
};

struct vfw_mbx_msg {
	uint16_t opcode;         /* VFW_MBX_OP_* */
	uint16_t status;         /* reply: VFW_MBX_S_*; request: 0 */
	uint32_t seq;            /* chosen by the VF, echoed */
	union {
		struct vfw_mbx_hello hello;
		struct vfw_mbx_mac mac;
		struct vfw_mbx_vlan vlan;
		struct vfw_mbx_rx_mode rx_mode;
		uint8_t raw[56];
	} u;
};

#ifdef __KERNEL__
static_assert(sizeof(struct vfw_mbx_msg) == VFW_MBX_MSG_SIZE);
#else
_Static_assert(sizeof(struct vfw_mbx_msg) == VFW_MBX_MSG_SIZE, "mbx size");
#endif

#endif /* VFWARP_MBOX_H */
