/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * vfwarp hardware interface: Ethernet TX/RX descriptor rings of every
 * function (PF and VFs), the function's link state and its data-path
 * counters. Registers live in the VFW_REGWIN_RING window of BAR0
 * (vfwarp_regs.h); docs/hw-interface.md explains the protocol.
 *
 * Every function has one RX ring (queue 0) and VFW_REG_TXQ_NUM TX rings
 * (2.5: 8; queue 0 at VFW_REG_TXQ0, the others at VFW_REG_TXQ(n)). A ring is an
 * array of 16-byte descriptors in host memory (DMA, through the IOMMU) of
 * a power-of-two number of entries (VFW_RING_MIN_ENTRIES..MAX). The device
 * owns the descriptors [HEAD, TAIL), the driver the rest: the driver fills
 * descriptors and writes TAIL (the doorbell); the device consumes from HEAD
 * up to TAIL (at most LEN - 1 per doorbell), writes each descriptor back with VFW_*_STS_DD set, advances
 * HEAD and raises the ring's MSI-X vector (if IRQ_EN) once per batch.
 *
 * Must compile in the kernel, in QEMU and in user space: fixed-width types
 * only, little endian fields.
 */
#ifndef VFWARP_RING_H
#define VFWARP_RING_H

#include "vfwarp_regs.h"

/* Ring sizes (entries): a power of two in [MIN, MAX]. */
#define VFW_RING_MIN_ENTRIES   8
#define VFW_RING_MAX_ENTRIES   4096
#define VFW_DESC_SIZE          16

/* Frame bounds the device accepts on TX (without FCS). */
#define VFW_FRAME_MIN          14
#define VFW_FRAME_MAX          9018
#define VFW_TX_MAX_FRAGS       16      /* descriptors per frame */

/* --- TX descriptor (driver writes; device writes back `status`) -------- */
struct vfw_tx_desc {
	uint64_t addr;     /* DMA address of this fragment */
	uint16_t len;      /* fragment length, 1..VFW_FRAME_MAX */
	uint8_t  flags;    /* VFW_TXD_* */
	uint8_t  status;   /* written back: VFW_TXD_STS_* */
	uint16_t vlan;     /* with VFW_TXD_VLAN: TCI to insert */
	uint16_t port;     /* 2.2, with VFW_TXD_TO_PORT (first descriptor of
			      the frame): destination VF index; else 0 */
};

#define VFW_TXD_EOP            (1u << 0)  /* last fragment of the frame */
#define VFW_TXD_VLAN           (1u << 1)  /* insert an 802.1Q tag (vlan) */
#define VFW_TXD_TO_PORT        (1u << 2)  /* 2.2: PF in switchdev mode only
					     (else STS_ERR): the frame goes to
					     VF `port`'s RX as is, bypassing
					     the switch (representor xmit) */

#define VFW_TXD_STS_DD         (1u << 0)  /* descriptor done */
#define VFW_TXD_STS_ERR        (1u << 1)  /* bad descriptor: frame dropped */
#define VFW_TXD_STS_DROP       (1u << 2)  /* the switch dropped the frame */

/* --- RX descriptor: read format (driver) / write-back (device) --------- */
struct vfw_rx_desc {
	uint64_t addr;     /* DMA address of the buffer (kept on write-back) */
	uint16_t buf_len;  /* read: buffer size; write-back: frame length */
	uint8_t  status;   /* write-back: VFW_RXD_STS_* (driver writes 0) */
	uint8_t  err;      /* write-back: VFW_RXD_ERR_* */
	uint16_t vlan;     /* write-back: stripped TCI (with STS_VLAN) */
	uint16_t src_port; /* 2.2 write-back, with STS_SRC: the VF index */
};

#define VFW_RXD_STS_DD         (1u << 0)  /* descriptor done */
#define VFW_RXD_STS_EOP        (1u << 1)  /* whole frame in this buffer */
#define VFW_RXD_STS_VLAN       (1u << 2)  /* vlan holds a stripped tag */
#define VFW_RXD_STS_SRC        (1u << 3)  /* 2.2, PF in switchdev mode: a
					     frame VF `src_port` sent that the
					     switch did not forward (the
					     representor's RX) */

#define VFW_RXD_ERR_BUF        (1u << 0)  /* bad buffer (address/size): the
					   frame was dropped, descriptor
					   consumed, len 0 */

/* --- Registers (offsets in BAR0, window VFW_REGWIN_RING) ---------------- */
/* One block per ring: */
#define VFW_RING_BASE_LO       0x00  /* RW: descriptor array, 16-byte aligned */
#define VFW_RING_BASE_HI       0x04
#define VFW_RING_LEN           0x08  /* RW: entries (power of two) */
#define VFW_RING_HEAD          0x0c  /* RO: next descriptor the device uses */
#define VFW_RING_TAIL          0x10  /* RW: doorbell, 0..LEN-1 */
#define VFW_RING_CTRL          0x14  /* RW: VFW_RING_CTRL_* */
#define VFW_RING_STATUS        0x18  /* RO: VFW_RING_STS_* */

#define VFW_REG_TXQ0           (VFW_REGWIN_RING + 0x00)
#define VFW_REG_RXQ0           (VFW_REGWIN_RING + 0x20)

/*
 * 2.5: TX rings 1..VFW_TXQ_MAX-1, one block each (the layout of TXQ0) past
 * the window's counters, so a driver can put each traffic class on a ring
 * of its own: the device stops consuming a ring only while the class of
 * its head frame is paused at the uplink, and a full bulk class no longer
 * holds a strict class's frames behind it on the same ring. The device
 * classifies every frame by its own tables, whatever ring it came on.
 * VFW_REG_TXQ_NUM says how many TX rings the function has (1 on a device
 * before 2.5, where the register reads as 0). A driver that uses TXQ0 only
 * works as before.
 */
#define VFW_TXQ_MAX            8
#define VFW_REG_TXQ(n)         ((n) ? VFW_REGWIN_RING + 0x100 + 0x20 * ((n) - 1) \
				    : VFW_REG_TXQ0)
#define VFW_REG_TXQ_NUM        (VFW_REGWIN_RING + 0x94) /* RO: TX rings */

#define VFW_RING_CTRL_ENABLE   (1u << 0)  /* 0->1 validates BASE/LEN, HEAD =
					     TAIL = 0 */
#define VFW_RING_CTRL_IRQ_EN   (1u << 1)  /* raise the vector on completion
					     (set again: fires if work is
					     pending since it was cleared) */
#define VFW_RING_CTRL_VEC_SHIFT 16        /* bits 23:16: MSI-X vector */
#define VFW_RING_CTRL_VEC_MASK 0xffu

#define VFW_RING_STS_ENABLED   (1u << 0)
#define VFW_RING_STS_ERR       (1u << 1)  /* enable refused: BASE/LEN bad, or
					     a descriptor fetch failed (the
					     ring stopped) */

/* Link and identity of the function as the switch sees it. */
#define VFW_REG_LINK_STATUS    (VFW_REGWIN_RING + 0x80) /* RO: bit 0 up */
#define VFW_REG_LINK_CTRL      (VFW_REGWIN_RING + 0x84) /* RW: IRQ_EN + VEC
							   as RING_CTRL */
#define VFW_REG_DP_MAC_LO      (VFW_REGWIN_RING + 0x88) /* RO: current MAC 0..3 */
#define VFW_REG_DP_MAC_HI      (VFW_REGWIN_RING + 0x8c) /* RO: bytes 4..5 */
#define VFW_REG_DP_MTU         (VFW_REGWIN_RING + 0x90) /* RO: max frame */

#define VFW_LINK_UP            (1u << 0)

/* Data-path counters of the function (RO, wrapping 32-bit). */
#define VFW_REG_STAT_BASE      (VFW_REGWIN_RING + 0xc0)
enum vfw_dp_stat {
	VFW_STAT_TX_PKTS = 0,     /* frames taken from the TX ring */
	VFW_STAT_TX_BYTES,
	VFW_STAT_RX_PKTS,         /* frames written to the RX ring */
	VFW_STAT_RX_BYTES,
	VFW_STAT_TX_DESC_ERR,     /* bad TX descriptors (frame dropped) */
	VFW_STAT_RX_NO_BUF,       /* frames for us dropped: RX ring full/off */
	VFW_STAT_RX_DESC_ERR,     /* bad RX buffers */
	VFW_STAT_TX_DROP_SPOOF,   /* switch drops of our TX frames, by reason */
	VFW_STAT_TX_DROP_VLAN,
	VFW_STAT_TX_DROP_LINK,
	VFW_STAT_TX_DROP_METER,
	VFW_STAT_TX_DROP_ACL,
	VFW_STAT_TX_DROP_OTHER,   /* malformed, no destination */
	VFW_STAT_RX_FILTERED,     /* multicast frames our RX filter refused */
	VFW_STAT_COUNT
};
#define VFW_REG_STAT(n)        (VFW_REG_STAT_BASE + 4 * (n))

#endif /* VFWARP_RING_H */
