/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * eth_internal.h - private state of the Ethernet data path (vfw_dataplane.h),
 * shared by the eth_*.c files only: the descriptor rings of every function
 * (include/vfwarp/vfwarp_ring.h) joined by the embedded switch (vswitch/:
 * port 0 the uplink, port 1 the PF, port 2 + n VF n).
 *
 *   eth_dp.c      lifecycle: create, destroy, reset of the adapter and of
 *                 one function; the counters
 *   eth_regs.c    the ring window's registers and the interrupts they enable
 *   eth_tx.c      into the switch and out of it: TX rings (the run),
 *                 the shaper, the RDMA engine's frames and their hold queue,
 *                 frames from the wire, egress to each port
 *   eth_rx.c      into an RX ring: the RDMA engine's steering, a VF's filter
 *   eth_vf.c      VF port configuration, links, the switch's port settings
 *   eth_qos.c     QoS: the uplink scheduler's callbacks, line rate, DCB
 *                 classes, a VF's rates in the rate tree
 *   eth_esw.c     eswitch mode (2.2) and the switchdev offloads (2.3)
 *   eth_uplink.c  the uplink as a wire with a line rate (vfw_uplink.h)
 *   eth_pcap.c    pcap writer (vfw_pcap.h)
 *
 * Trust: every register value and descriptor comes from a guest and is
 * untrusted (vfw_dataplane.h states the rules; each file says how it keeps
 * them); guest memory is touched only through ops->dma_read/dma_write. The
 * configuration calls come from the PF's admin queue (dev/admin*.c); what
 * vfw_dataplane.h leaves to the caller to check, it checks. Function
 * numbers from outside are checked against fn_count() on every entry.
 * Not thread-safe; the caller serialises (QEMU's BQL).
 */
#ifndef VFW_ETH_INTERNAL_H
#define VFW_ETH_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vfw_dataplane.h"
#include "vfw_uplink.h"
#include "vfwarp/vfwarp_admin.h"
#include "vswitch.h"
#include "vfw_bytes.h"

/* struct vfw_dp_vf_cfg.link_state */
#define LINK_STATE_AUTO    0
#define LINK_STATE_ENABLE  1
#define LINK_STATE_DISABLE 2

/* A descriptor ring: its registers as the guest wrote them (eth_regs.c
 * checks base and length when it is enabled) and the device's head. */
struct dp_ring {
    uint64_t base;
    uint32_t len, head, tail, ctrl, status;
    bool irq_pending;
};

/* A function's (the PF's or a VF's) rings, link, counters and shaper. */
struct dp_fn {
    /* 2.5: TX ring n at VFW_REG_TXQ(n); a driver before 2.5 uses tx[0] */
    struct dp_ring tx[VFW_TXQ_MAX], rx;
    uint32_t link_ctrl;
    bool link_pending;
    bool link;                  /* as last reported */
    uint64_t stat[VFW_STAT_COUNT];
    /* TX shaping (max_mbps) */
    int64_t tokens;             /* bytes */
    uint64_t last_ns;
    bool timer_armed;
    /* The RDMA engine's frames over the VF's max_mbps wait here (FIFO)
     * for the shaper instead of being dropped: its TCP sees a slower
     * path, not loss. Allocated on first use; HOLD_N frames at most. */
    uint8_t *hold;
    uint16_t hold_len[16];
    unsigned hold_head, hold_count;
    /* TX rings with work for the run (bit q: ring q): a TAIL write, the
     * shaper's timer or the uplink resuming the function sets them. */
    uint8_t tx_pending;
};

/* Every TX ring of a function, as bits of dp_fn.tx_pending. */
#define ETH_TX_ALL ((1u << VFW_TXQ_MAX) - 1)
_Static_assert(VFW_TXQ_MAX <= 8, "tx_pending is 8 bits");

#define HOLD_N    16u
#define HOLD_SLOT (VFW_FRAME_MAX + 4)

/* The data path of one adapter: its functions and the embedded switch. */
struct vfw_dp {
    const struct vfw_dp_ops *ops;
    void *ctx;
    vsw_switch *sw;
    unsigned total_vfs;
    bool uplink_up;
    uint8_t pf_mac[6];
    struct dp_fn fn[VFW_DP_NUM_FN];
    struct vfw_dp_vf_cfg cfg[VFW_DP_MAX_VFS];
    /* installed static FDB entries: VF n's fdb_mac in each VID of fdb_vids */
    uint8_t fdb_mac[VFW_DP_MAX_VFS][6];
    uint8_t fdb_vids[VFW_DP_MAX_VFS][512];
    uint8_t buf[VFW_FRAME_MAX + 4];
    uint8_t out[VFW_FRAME_MAX + 8];
    unsigned inject_depth;      /* vfw_dp_fn_inject nesting (bounded) */
    bool in_run, rekick;        /* vfw_dp_run in progress; run again after */
    struct vfw_uplink *up;      /* QoS hook: NULL without ops->uplink_timer */
    uint64_t line_bps;          /* QoS: 0 = no line rate (frames go at once) */
    uint64_t line_default;      /* what a reset restores */
    struct vfw_dp_dcb dcb;      /* QoS: priority of a frame, priority -> TC */
    bool switchdev;             /* 2.2: eswitch mode (docs/switchdev.md) */
    /* 2.3: the switch's meters that offloaded rules' police actions use:
     * bit id of meter_used, and the rule's cookie (admin_esw.c) */
    uint8_t meter_used[VSW_MAX_METERS / 8];
    uint64_t meter_owner[VSW_MAX_METERS];
    /* 2.3: FDB entries offloaded from the PF's bridge (switchdev mode) */
    struct dp_fdb_off {
        uint8_t mac[6];
        uint16_t vid;
        bool used;
    } fdb_off[VFW_ESW_FDB_MAX];
    /* 2.3: VLANs of a VLAN-aware bridge per port in switchdev mode, index
     * 0 the uplink, 1 + n VF n (ESW_PORT_VLAN) */
    struct dp_esw_vlan {
        bool aware;
        uint16_t pvid;              /* 0: none */
        uint8_t member[512];        /* bit v: VLAN v */
    } esw_vlan[1 + VFW_DP_MAX_VFS];
};

/* --- helpers of the eth_*.c files (inline: on the per-frame path) ------- */

static inline uint64_t now(struct vfw_dp *dp)
{
    return dp->ops->now_ns ? dp->ops->now_ns(dp->ctx) : 0;
}

/* Functions of this adapter: the PF and its total_vfs VFs. */
static inline unsigned fn_count(const struct vfw_dp *dp)
{
    return 1 + dp->total_vfs;
}

/* Descriptor fields are little endian (vfwarp_ring.h): vfw_bytes.h. */

/* A ring the device may use: enabled, and not stopped by an error. */
static inline bool ring_on(const struct dp_ring *r)
{
    return (r->ctrl & VFW_RING_CTRL_ENABLE) &&
           !(r->status & VFW_RING_STS_ERR);
}

/* Fetch descriptor `idx`; a failed fetch stops the ring (its memory is gone). */
static inline bool fetch(struct vfw_dp *dp, unsigned fn, struct dp_ring *r,
                         uint32_t idx, uint8_t raw[VFW_DESC_SIZE])
{
    if (dp->ops->dma_read(dp->ctx, fn, r->base + (uint64_t)idx * VFW_DESC_SIZE,
                          raw, VFW_DESC_SIZE)) {
        r->status |= VFW_RING_STS_ERR;
        return false;
    }
    return true;
}


/* --- eth_regs.c --------------------------------------------------------- */

/* Raise the vector of `ctrl` (a ring's or the link's control register) if
 * its IRQ_EN is set, else latch *pending until the driver sets it. */
void eth_fire(struct vfw_dp *dp, unsigned fn, uint32_t ctrl, bool *pending);

/* --- eth_vf.c ------------------------------------------------------------- */

/* Link of function fn: the PF's is the uplink's carrier, a VF's its
 * link_state (auto: the uplink's carrier). */
bool eth_fn_link(const struct vfw_dp *dp, unsigned fn);
/* Program VF vf's switch port and its static FDB entries from dp->cfg[vf]
 * (and the eswitch state); returns the switch's error. */
int eth_apply_vf(struct vfw_dp *dp, unsigned vf);
/* Every port: the uplink's, the PF's, then eth_apply_vf for each VF. */
int eth_apply_ports(struct vfw_dp *dp);

/* --- eth_qos.c ------------------------------------------------------------ */

/* The uplink scheduler's callbacks (ctx: the struct vfw_dp). */
extern const struct vfw_uplink_ops eth_uplink_ops;
/* A port's classification (trust, prio -> TC) from dp->dcb; port_prio:
 * the VF's port VLAN priority, or -1. */
void eth_apply_classes(const struct vfw_dp *dp, vsw_port_cfg *pc,
                       int port_prio);
/* Re-program the classification of the PF's and VFs' ports only. */
int eth_apply_port_classes(struct vfw_dp *dp);
/* Adapter reset: a fresh scheduler at the default line rate, default DCB. */
void eth_qos_reset(struct vfw_dp *dp);
/* VF vf's leaf in the rate tree from c's min/max_mbps (-ERANGE if the
 * guarantees would exceed the line rate); 0 without a scheduler. */
int eth_leaf_rates(struct vfw_dp *dp, unsigned vf,
                   const struct vfw_dp_vf_cfg *c);

/* --- eth_tx.c ------------------------------------------------------------- */

/* TX rings `mask` (bit q: ring q) of fn have work: recorded, and a run
 * asked for (ops->kick); never sent here. */
void eth_tx_want(struct vfw_dp *dp, unsigned fn, unsigned mask);

/* --- eth_rx.c ------------------------------------------------------------- */

/* A frame into fn's RX ring (or its RDMA engine, when src_vf < 0 and
 * ops->rx_steer takes it); src_vf >= 0: VF src_vf's slow path for its
 * representor (PF, switchdev). */
void eth_rx_frame(struct vfw_dp *dp, unsigned fn, const uint8_t *frame,
                  size_t len, int src_vf);
/* A frame for VF vf: through its multicast filter (else RX_FILTERED) into
 * its RX ring. */
void eth_rx_vf(struct vfw_dp *dp, unsigned vf, const uint8_t *frame,
               size_t len);

#endif /* VFW_ETH_INTERNAL_H */
