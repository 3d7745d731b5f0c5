/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfw_admin.h - the PF admin queue of the adapter (include/vfwarp/
 * vfwarp_admin.h): its registers in the PF's BAR0 window
 * VFW_REGWIN_ADMINQ, the command ring it reads from guest memory, and the
 * per-VF configuration store the commands write.
 *
 * Plain C11, no QEMU dependency. Guest memory is reached only through the
 * ops table (the QEMU glue uses pci_dma_read/pci_dma_write). Everything the
 * guest writes is untrusted: ring base/length, doorbell index and every
 * descriptor field are checked; a doorbell runs at most VFW_AQ_MAX_LEN
 * descriptors. Not thread-safe; the caller serialises (QEMU's BQL).
 */
#ifndef VFW_ADMIN_H
#define VFW_ADMIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vfwarp/vfwarp_admin.h"
#include "vfwarp/vfwarp_mbox.h"
#include "vfw_func.h"

struct vfw_dp;

/*
 * Per-VF configuration, as set by the PF driver through the admin queue.
 * FOR THE DATA PATH (embedded switch): read it with vfw_admin_vf_cfg() and
 * reprogram the switch for VF n whenever `gen` differs from the value you
 * last programmed. The admin queue only stores and validates; enforcing
 * (MAC/VLAN insert+strip, anti-spoof, link state, rate meters) is the data
 * path's job. Values are always in range:
 *   mac        all-zero = not assigned (the VF may choose its own)
 *   vlan, qos  port VLAN 1..4095 with 802.1p priority 0..7; vlan 0 and
 *              qos 0 = none (vlan 0 with qos != 0 = priority tag only);
 *              the protocol is always 802.1Q
 *   spoofchk   drop VF frames whose source MAC is not `mac` (default on)
 *   trust      VF may set its MAC/promiscuous mode itself (default off)
 *   link_state VFW_LINK_STATE_AUTO/ENABLE/DISABLE
 *   min_rate, max_rate  Mbps; 0 = no guarantee / no limit;
 *              min <= max when max != 0; <= VFW_UPLINK_SPEED_MBPS
 *   vlan_filter bit v of byte v/8: VLAN v may pass tagged (no port VLAN)
 *   rx_mode, mc_count, mc  VFW_RXM_* and the exact multicast filter
 *              (entries >= mc_count are zero)
 *   gen        increments on every change of any field above (also on
 *              reset), never on a failed or no-op command
 * The PF driver sets the last three on a VF's request (the mailbox); the
 * device does not judge them, except that allmulti and promiscuous count
 * only while `trust` is on.
 */
struct vfw_vf_cfg {
    uint8_t mac[6];
    uint16_t vlan;
    uint8_t qos;
    bool spoofchk;
    bool trust;
    uint8_t link_state;
    uint32_t min_rate;
    uint32_t max_rate;
    uint8_t vlan_filter[(VFW_VLAN_VID_MAX + 1) / 8];
    uint8_t rx_mode;
    uint8_t mc_count;
    uint8_t mc[VFW_MC_FILTER_MAX][6];
    uint32_t gen;
};

/* Per-VF traffic counters reported by GET_VF_STATS. The data path adds to
 * them through vfw_admin_vf_stats(); the admin queue only reads them. */
struct vfw_vf_stats {
    uint64_t rx_packets, tx_packets;
    uint64_t rx_bytes, tx_bytes;
    uint64_t rx_dropped, tx_dropped;
};

/* Guest memory access: return 0 on success, non-zero on a failed DMA. */
struct vfw_admin_ops {
    int (*dma_read)(void *opaque, uint64_t addr, void *buf, size_t len);
    int (*dma_write)(void *opaque, uint64_t addr, const void *buf,
                     size_t len);
    void *opaque;
    /* Optional (2.0): SET_VF_RDMA_QUOTA / GET_VF_RDMA go to the RNIC
     * (vfw_rnic_set_quota / vfw_rnic_get_quota), which returns a
     * VFW_AQ_S_* status. NULL: those commands fail with UNSUPPORTED. */
    int (*rdma_quota_set)(void *opaque, unsigned vf,
                          const struct vfw_aq_rdma_quota *q);
    int (*rdma_quota_get)(void *opaque, unsigned vf,
                          struct vfw_aq_rdma_quota *q,
                          struct vfw_aq_rdma_quota *used);
    /* Optional (2.1): the data path whose uplink scheduler the QoS
     * commands (0x02xx, admin_qos.c) configure and read: line rate, rate
     * tree, classes, classification, counters. The data path holds all
     * QoS state (the admin queue none), so vfw_dp_reset resets it. NULL,
     * or a data path without a scheduler: those commands fail with
     * UNSUPPORTED. With it SET_VF_RATE also sets the VF's leaf and fails
     * with OVERSUB when the guarantees would not fit. The eswitch mode
     * commands (2.2, 0x03xx, admin_esw.c) set and read the same data
     * path's mode; NULL: UNSUPPORTED. */
    struct vfw_dp *qos_dp;
    /* Optional: VF vf's config changed, at the moment it changed: a
     * command committed it (gen bumped), or NumVFs dropped below the VF
     * and its config went back to the defaults. The adapter object
     * (vfw_adapter.h) applies it to the data path and the RDMA engine's
     * MAC right there; NULL: nobody is told (the config is only read). */
    void (*vf_cfg_changed)(void *opaque, unsigned vf,
                           const struct vfw_vf_cfg *c);
    /* Optional: fill VF vf's counters just before GET_VF_STATS answers
     * (the data path counts; the admin queue only reports). NULL: the
     * counters are what vfw_admin_vf_stats() was given. */
    void (*vf_stats)(void *opaque, unsigned vf, struct vfw_vf_stats *st);
};

struct vfw_admin {
    struct vfw_admin_ops ops;
    uint16_t total_vfs;          /* VFs that can exist */
    uint16_t num_vfs;            /* VFs enabled now (NumVFs); glue updates */
    /* ring registers */
    uint64_t base;
    uint32_t len;
    uint32_t head, tail;
    uint32_t status;             /* VFW_AQ_STATUS_* */
    uint32_t cmds_ok, cmds_err;
    struct vfw_vf_cfg vf[VFW_FUNC_MAX_VFS];
    struct vfw_vf_stats stats[VFW_FUNC_MAX_VFS];
};

/* Initialise; -1 if total_vfs > VFW_FUNC_MAX_VFS or an op is missing. */
int vfw_admin_init(struct vfw_admin *a, const struct vfw_admin_ops *ops,
                   uint16_t total_vfs);

/* PF reset: queue disabled, registers and every VF's config to defaults.
 * (QoS state lives in the data path: vfw_dp_reset.) */
void vfw_admin_reset(struct vfw_admin *a);

/* NumVFs as the PF's SR-IOV capability says now (clamped to total_vfs).
 * Commands for VF indices >= this fail with VFW_AQ_S_BAD_VF; VFs that went
 * away (index >= the new count) return to the default config. */
void vfw_admin_set_num_vfs(struct vfw_admin *a, uint16_t num_vfs);

/* Is `addr` in the admin register window? */
bool vfw_admin_owns(uint64_t addr);

/* PF BAR0 accesses in the admin window (only 4-byte aligned decode;
 * false if not decoded). A TAIL write runs the ring synchronously. */
bool vfw_admin_read(const struct vfw_admin *a, uint64_t addr, unsigned size,
                    uint32_t *val);
bool vfw_admin_write(struct vfw_admin *a, uint64_t addr, uint64_t val,
                     unsigned size);

/* Execute one descriptor in place (also used by tests and fuzzing).
 * Returns its status; fills flags and reply fields. */
uint16_t vfw_admin_exec(struct vfw_admin *a, uint8_t desc[VFW_AQ_DESC_SIZE]);

/* VF n's config / counters; NULL for n >= total_vfs. */
const struct vfw_vf_cfg *vfw_admin_vf_cfg(const struct vfw_admin *a,
                                          unsigned vf);
struct vfw_vf_stats *vfw_admin_vf_stats(struct vfw_admin *a, unsigned vf);

#endif /* VFW_ADMIN_H */
