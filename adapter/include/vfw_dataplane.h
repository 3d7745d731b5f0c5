/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfw_dataplane.h - the adapter's Ethernet data path: per-function TX/RX
 * descriptor rings (include/vfwarp/vfwarp_ring.h) joined by the embedded
 * switch (vswitch/): one vsw switch per adapter, port 0 the uplink, port 1
 * the PF, ports 2.. the VFs.
 *
 * Plain C11, no QEMU: the glue hands in register accesses, uplink frames
 * and timer expiries, and gets DMA, interrupts, uplink frames and timer
 * requests back through `struct vfw_dp_ops`. Every register value and
 * descriptor comes from a guest and is untrusted: ring sizes are bounded
 * (power of two <= VFW_RING_MAX_ENTRIES), one doorbell processes at most one
 * ring's worth of descriptors, a bad descriptor fails that descriptor only,
 * and guest memory is touched only through the DMA ops.
 * Not thread-safe; the caller serialises (QEMU's BQL).
 *
 * Function numbers: VFW_DP_FN_PF (0) is the PF, VFW_DP_FN_VF(n) is VF n.
 */
#ifndef VFW_DATAPLANE_H
#define VFW_DATAPLANE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vfwarp/vfwarp_ring.h"
#include "vfwarp/vfwarp_mbox.h"

#define VFW_DP_MAX_VFS    128
#define VFW_DP_FN_PF      0u
#define VFW_DP_FN_VF(n)   (1u + (unsigned)(n))
#define VFW_DP_NUM_FN     (1u + VFW_DP_MAX_VFS)

struct vfw_dp_ops {
    /* DMA as function `fn` (so the IOMMU of that requester applies).
     * Return 0, or non-zero when the access failed. */
    int (*dma_read)(void *ctx, unsigned fn, uint64_t addr, void *buf,
                    size_t len);
    int (*dma_write)(void *ctx, unsigned fn, uint64_t addr, const void *buf,
                     size_t len);
    /* Raise MSI-X vector `vector` of function `fn` (the glue checks the
     * vector against the function's table). */
    void (*irq)(void *ctx, unsigned fn, unsigned vector);
    /* A frame leaves on the uplink. */
    void (*uplink_tx)(void *ctx, const uint8_t *frame, size_t len);
    /* Monotonic nanoseconds (the glue's virtual clock). */
    uint64_t (*now_ns)(void *ctx);
    /* Call vfw_dp_timer(dp, fn) at (or after) `when_ns`; a later request
     * for the same fn replaces an earlier one. May be NULL (then a shaped
     * ring resumes on its next doorbell only). */
    void (*timer)(void *ctx, unsigned fn, uint64_t when_ns);
    /* Optional (2.0): a frame the switch delivers to function fn is first
     * offered here; true = taken by the function's RDMA engine (it never
     * reaches the RX ring, but counts as fn's RX). May be NULL. */
    bool (*rx_steer)(void *ctx, unsigned fn, const uint8_t *frame,
                     size_t len);
    /* Optional (QoS, issue 17): call vfw_dp_uplink_timer(dp) at (or
     * after) when_ns; a later request replaces an earlier one. When set,
     * the uplink is a wire with a line rate (default 10 Gbit/s) behind the
     * link QoS scheduler (vfw_uplink.h): frames wait in per-(function,
     * class) queues, a function whose queue is full is paused (its TX
     * ring is not consumed) until the queue drains. When NULL, frames go
     * out at once as before (no line rate, no congestion). */
    void (*uplink_timer)(void *ctx, uint64_t when_ns);
    /* Call vfw_dp_run() soon, outside any register access; idempotent.
     * A TX ring's TAIL write, the shaper's timer and the uplink resuming
     * a function only record that its rings have work; the run sends
     * (issue 33: TX inside the TAIL write nested through another
     * function's BAR and mixed their frames). May be NULL only where no
     * TX ring is used (the rings then wait for a vfw_dp_run the owner
     * makes on its own). */
    void (*kick)(void *ctx);
};

/* A VF's port configuration, as `ip link set PF vf N ...` sets it. */
struct vfw_dp_vf_cfg {
    uint8_t mac[6];      /* all-zero: the device's default MAC */
    uint16_t vlan;       /* port VLAN 1..4095, 0 = none */
    uint8_t qos;         /* 802.1p of the port VLAN */
    bool spoofchk;
    bool trust;
    uint8_t link_state;  /* 0 auto, 1 enable, 2 disable (VFW_LINK_STATE_*) */
    uint32_t min_mbps;   /* the VF's tx_share in the uplink's rate tree
                            (with ops->uplink_timer; else stored only) */
    uint32_t max_mbps;   /* TX shaping at the VF's TX ring, 0 = none; also
                            the VF's tx_max in the uplink's rate tree */
    /* What the PF granted on the VF's requests (the mailbox): */
    uint8_t vlan_filter[512]; /* no port VLAN: bit v = VLAN v passes tagged */
    uint8_t rx_mode;     /* VFW_RXM_ALLMULTI, VFW_RXM_PROMISC (with trust) */
    uint8_t mc_count;    /* exact multicast filter: mc[0..mc_count) */
    uint8_t mc[VFW_MC_FILTER_MAX][6];
};

struct vfw_dp;
struct vsw_qos;

/* A data path for a PF with MAC `pf_mac` and `total_vfs` VFs. VF n's
 * default MAC is 02:00:00:<pf_mac[4]>:<n>:01. NULL on bad arguments/OOM. */
struct vfw_dp *vfw_dp_create(const struct vfw_dp_ops *ops, void *ctx,
                             const uint8_t pf_mac[6], unsigned total_vfs);
void vfw_dp_destroy(struct vfw_dp *dp);

/* BAR0 accesses in the VFW_REGWIN_RING window (0x0800..0x08ff) of `fn`.
 * Returns false when addr/size is not a 32-bit register of the window. */
bool vfw_dp_owns(uint64_t addr);
bool vfw_dp_read(struct vfw_dp *dp, unsigned fn, uint64_t addr,
                 unsigned size, uint32_t *val);
bool vfw_dp_write(struct vfw_dp *dp, unsigned fn, uint64_t addr,
                  uint64_t val, unsigned size);

/* TX of every ring with recorded work, each at most one ring's worth of
 * descriptors; kicks again when work is left. Not re-entrant: a call from
 * inside a run (through an op) only asks for another run. */
void vfw_dp_run(struct vfw_dp *dp);

/* Function reset (FLR, VF enable/disable): rings off, registers cleared.
 * The VF's port configuration (owned by the PF) stays. */
void vfw_dp_reset_fn(struct vfw_dp *dp, unsigned fn);
/* Whole-adapter reset: every function, and VF configs back to defaults. */
void vfw_dp_reset(struct vfw_dp *dp);

/* A frame of function fn's RDMA engine enters the switch as fn's traffic,
 * exactly as a frame from fn's TX ring would (spoof check, VLAN insert,
 * ACLs, meters, classes, counters). Does not call ops->rx_steer for fn
 * itself synchronously in a way that re-enters the engine: rx_steer only
 * queues. */
/* As implemented: length VFW_FRAME_MIN..VFW_FRAME_MAX (else
 * TX_DROP_OTHER); counted in TX_PKTS/TX_BYTES before the switch decides,
 * like a ring frame; a frame over the VF's max_mbps waits in the
 * function's hold queue (16 frames) until the shaper's timer lets it go,
 * and only a full queue drops (TX_DROP_METER);
 * frames delivered to fn2 (hairpin, uplink) are offered to
 * ops->rx_steer(fn2) first. Synchronous re-injection from rx_steer is
 * tolerated up to 4 levels deep (deeper: TX_DROP_OTHER). Unknown fn,
 * NULL dp or frame: ignored. */
void vfw_dp_fn_inject(struct vfw_dp *dp, unsigned fn, const uint8_t *frame,
                      size_t len);

/* A frame arrived on the uplink. */
void vfw_dp_uplink_rx(struct vfw_dp *dp, const uint8_t *frame, size_t len);
/* Uplink carrier (a netdev peer is attached). */
void vfw_dp_set_uplink(struct vfw_dp *dp, bool up);
/* The timer requested through ops->timer for `fn` expired. */
void vfw_dp_timer(struct vfw_dp *dp, unsigned fn);

/* VF port configuration (from the PF's admin queue). Returns 0 or a
 * negative errno (bad VF, bad MAC/VLAN/qos/link_state). */
int vfw_dp_set_vf(struct vfw_dp *dp, unsigned vf,
                  const struct vfw_dp_vf_cfg *cfg);
int vfw_dp_get_vf(const struct vfw_dp *dp, unsigned vf,
                  struct vfw_dp_vf_cfg *cfg);
/* The MAC the switch uses for VF `vf` (configured or default). */
int vfw_dp_vf_mac(const struct vfw_dp *dp, unsigned vf, uint8_t mac[6]);

/* QoS (issue 17). The uplink's scheduler (vswitch.h "Link QoS": line
 * rate, classes, rate tree, counters), NULL without ops->uplink_timer.
 * Leaf n of its rate tree is function n (VFW_DP_FN_*); vfw_dp_set_vf
 * keeps a VF leaf's tx_share/tx_max equal to min_mbps/max_mbps. */
struct vsw_qos *vfw_dp_qos(struct vfw_dp *dp);
/* The timer requested through ops->uplink_timer expired. */
void vfw_dp_uplink_timer(struct vfw_dp *dp);
/* Is function fn paused by the uplink (its queue full)? Its TX ring then
 * waits; the RDMA engine should hold its frames too (an injected frame
 * that finds no room is dropped). */
bool vfw_dp_fn_tx_paused(const struct vfw_dp *dp, unsigned fn);

/* QoS 2.1 (admin_qos.c): the line rate and the classification.
 * Line rate in bits/s: 0 = none (frames to the uplink leave at once, the
 * scheduler's configuration is kept; switching it off drops what is
 * queued), else VSW_QOS_MIN_RATE..VSW_QOS_MAX_RATE; -ERANGE if the
 * guarantees under the root exceed it, -EINVAL out of range, -EOPNOTSUPP
 * without ops->uplink_timer. Default with ops->uplink_timer:
 * VFW_DP_LINE_DEFAULT until vfw_dp_set_line_default() (the device
 * property) says otherwise; vfw_dp_reset restores the default. */
#define VFW_DP_LINE_DEFAULT 10000000000ull
struct vsw_error;
int vfw_dp_set_line_rate(struct vfw_dp *dp, uint64_t bps,
                         struct vsw_error *err);
uint64_t vfw_dp_line_rate(const struct vfw_dp *dp);
int vfw_dp_set_line_default(struct vfw_dp *dp, uint64_t bps);

/* Classification (dcb apptrust/app/ets prio_tc) of the PF's and VFs'
 * frames. trust VFW_TRUST_*; a frame's priority: PCP of a tagged frame
 * (trust pcp; a VF with a port VLAN: its priority), dscp_prio[DSCP] when
 * bit DSCP of dscp_mapped is set (trust dscp), else default_prio; its
 * class prio_tc[priority]. Default: trust pcp, default 0, nothing
 * mapped, prio_tc identity. vfw_dp_reset restores it. */
struct vfw_dp_dcb {
    uint8_t trust;
    uint8_t default_prio;
    bool default_set;    /* an app entry set it (read back by the PF) */
    uint8_t prio_tc[8];
    uint64_t dscp_mapped;
    uint8_t dscp_prio[64];
};
void vfw_dp_dcb_default(struct vfw_dp_dcb *b);
/* -EINVAL on a value out of range; nothing changes on error. */
int vfw_dp_set_dcb(struct vfw_dp *dp, const struct vfw_dp_dcb *b);
void vfw_dp_get_dcb(const struct vfw_dp *dp, struct vfw_dp_dcb *b);

/* Counters of function `fn` (VFW_STAT_*), 64-bit. */
/* 2.2: eswitch mode (docs/switchdev.md): legacy (false, the default and
 * after vfw_dp_reset) or switchdev (true). */
int vfw_dp_set_switchdev(struct vfw_dp *dp, bool on);
bool vfw_dp_switchdev(const struct vfw_dp *dp);
unsigned vfw_dp_num_vfs(const struct vfw_dp *dp);
/* 2.3: the switch (offloaded rules are installed in it by admin_esw.c),
 * and the meters its rules' police actions use: allocate one for the rule
 * `owner` (its cookie; -ENOSPC when all 4095 are taken), free one, free
 * those whose rule is gone. Leaving switchdev mode deletes every rule and
 * frees every such meter. */
struct vsw_switch;
struct vsw_switch *vfw_dp_switch(struct vfw_dp *dp);
int vfw_dp_meter_alloc(struct vfw_dp *dp, uint64_t owner);
void vfw_dp_meter_free(struct vfw_dp *dp, unsigned id);
void vfw_dp_meter_gc(struct vfw_dp *dp);
/* 2.3: an FDB entry offloaded from the PF's bridge: (mac, vid) -> switch
 * port, or port < 0 to delete it. -EOPNOTSUPP in legacy mode, -ENOENT,
 * -ENOSPC, -EEXIST (the device's own entry), or the switch's error. */
int vfw_dp_fdb_offload(struct vfw_dp *dp, const uint8_t mac[6], uint16_t vid,
                       int port);
/* 2.3: a port's VLANs from a VLAN-aware bridge (switchdev mode; idx 0 the
 * uplink, 1 + n VF n; op VFW_ESW_VLAN_*, vid checked by the caller).
 * -EOPNOTSUPP in legacy mode, -ENOENT (DEL of a VLAN not there). */
int vfw_dp_esw_vlan(struct vfw_dp *dp, unsigned idx, unsigned op, uint16_t vid,
                    bool pvid);
/* Is meter id in use by a rule, and whose (its cookie)? */
bool vfw_dp_meter_owner(const struct vfw_dp *dp, unsigned id, uint64_t *owner);

uint64_t vfw_dp_stat(const struct vfw_dp *dp, unsigned fn, unsigned stat);
bool vfw_dp_link_up(const struct vfw_dp *dp, unsigned fn);

#endif /* VFW_DATAPLANE_H */
