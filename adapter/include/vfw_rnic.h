/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfw_rnic.h - the adapter's RDMA NIC: per function (PF and every VF) the
 * verbs command queue, event queue, doorbells, SQ/RQ/CQ rings in function
 * memory, MR page lists, and the iWARP engine (vfw_engine.h) over the
 * function's own offloaded TCP (vfw_tcp.h). Hardware interface:
 * include/vfwarp/vfwarp_rdma.h.
 *
 * Plain C11, no QEMU (the igb_core.c pattern): the glue hands in register
 * and doorbell accesses, frames the eswitch delivered to a function, and
 * "run" calls from a bottom half / timer; it gets DMA, interrupts, frames
 * out and run requests back through struct vfw_rnic_ops.
 *
 * Everything a guest writes is untrusted: every id, index, count, length
 * and address is validated; guest memory is touched only through
 * ops->dma_* as the function; every loop is bounded (a doorbell records
 * work and the run call does a bounded amount of it).
 *
 * Function numbers as in vfw_dataplane.h: 0 the PF, 1 + n VF n.
 * Not thread-safe; the caller serialises (QEMU's BQL).
 */
#ifndef VFW_RNIC_H
#define VFW_RNIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "vfwarp/vfwarp_rdma.h"
#include "vfwarp/vfwarp_admin.h"

struct vfw_rnic;

struct vfw_rnic_ops {
    /* DMA as function fn (IOMMU / bus mastering apply). 0 or non-zero on
     * failure. */
    int (*dma_read)(void *ctx, unsigned fn, uint64_t addr, void *buf,
                    size_t len);
    int (*dma_write)(void *ctx, unsigned fn, uint64_t addr, const void *buf,
                     size_t len);
    /* Raise MSI-X vector `vector` of function fn. */
    void (*irq)(void *ctx, unsigned fn, unsigned vector);
    /* A frame of function fn's engine enters the eswitch as fn's traffic
     * (spoof check, VLAN, ACL, meters and classes apply as to its TX
     * ring). Must not call back into the rnic synchronously with a frame
     * for the same rnic: deliveries go through vfw_rnic_rx_frame(), which
     * only queues. */
    void (*frame_out)(void *ctx, unsigned fn, const uint8_t *frame,
                      size_t len);
    uint64_t (*now_ns)(void *ctx);
    /* Please call vfw_rnic_run() soon (bottom half); idempotent. */
    void (*kick)(void *ctx);
    /* Please call vfw_rnic_run() at or after when_ns (replaces an earlier
     * request). */
    void (*timer)(void *ctx, uint64_t when_ns);
};

/* An RNIC for the PF and total_vfs VFs. NULL on bad arguments/OOM. */
struct vfw_rnic *vfw_rnic_create(const struct vfw_rnic_ops *ops, void *ctx,
                                 unsigned total_vfs);
void vfw_rnic_destroy(struct vfw_rnic *r);

/* BAR0 accesses in the VFW_REGWIN_RDMA window (0x0a00..0x0aff).
 * vfw_rnic_owns: the address belongs to the window. read/write return
 * false when addr/size is not a 32-bit register of the window. */
bool vfw_rnic_owns(uint64_t addr);
bool vfw_rnic_read(struct vfw_rnic *r, unsigned fn, uint64_t addr,
                   unsigned size, uint32_t *val);
bool vfw_rnic_write(struct vfw_rnic *r, unsigned fn, uint64_t addr,
                    uint64_t val, unsigned size);

/* A write to fn's doorbell BAR (VFW_DB_BAR) at `offset` (page * 4 KiB +
 * register). Records the work and kicks; never runs it inline. */
void vfw_rnic_doorbell(struct vfw_rnic *r, unsigned fn, uint64_t offset,
                       uint64_t val, unsigned size);

/* The eswitch delivers `frame` to function fn. Returns true if it belongs
 * to one of fn's offloaded connections or listeners (the frame is copied
 * into fn's bounded input queue, or dropped and counted when full); false
 * if it goes to fn's Ethernet RX ring. ARP frames return false but are
 * also seen by the engine (it learns next hops, never answers: ARP
 * belongs to the netdev). */
bool vfw_rnic_rx_frame(struct vfw_rnic *r, unsigned fn, const uint8_t *frame,
                       size_t len);

/* The MAC of function fn as the switch knows it (its engine's source). */
void vfw_rnic_set_mac(struct vfw_rnic *r, unsigned fn, const uint8_t mac[6]);

/* Bottom half / timer: doorbells, input frames, TCP timers, event
 * delivery, each with a bounded budget; re-kicks itself when work is left. */
void vfw_rnic_run(struct vfw_rnic *r);

/* FLR, VF enable/disable, driver reset of function fn: every RDMA object
 * of fn is destroyed, its connections reset (peers see RST), queues off,
 * registers back to reset values. The quota (the PF's) stays. */
void vfw_rnic_reset_fn(struct vfw_rnic *r, unsigned fn);
/* Whole-adapter reset: every function; VF quotas back to defaults. */
void vfw_rnic_reset(struct vfw_rnic *r);

/* The PF's admin commands SET_VF_RDMA_QUOTA / GET_VF_RDMA for VF vf.
 * Return a VFW_AQ_S_* status. */
int vfw_rnic_set_quota(struct vfw_rnic *r, unsigned vf,
                       const struct vfw_aq_rdma_quota *q);
int vfw_rnic_get_quota(const struct vfw_rnic *r, unsigned vf,
                       struct vfw_aq_rdma_quota *q,
                       struct vfw_aq_rdma_quota *used);

/* The counters and gauges of fn's offloaded TCP (vfw_tcp.h): connection
 * buffer bytes, half-open connections. -ENOENT while fn has no IPv4
 * address (no stack). For tests and the glue's diagnostics; the guest's
 * view is the RSTAT registers. */
struct vfw_tcp_stats;
int vfw_rnic_tcp_stats(const struct vfw_rnic *r, unsigned fn,
                       struct vfw_tcp_stats *st);

/* Counters of function fn (enum vfw_rdma_stat), 64-bit. */
uint64_t vfw_rnic_stat(const struct vfw_rnic *r, unsigned fn, unsigned stat);

#endif /* VFW_RNIC_H */
