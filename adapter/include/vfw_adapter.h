/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfw_adapter.h - the whole emulated adapter as one object: the function
 * register files (PF + up to 128 VFs), the PF admin queue, the VF-to-PF
 * mailbox, the Ethernet data path with the embedded switch and the uplink
 * scheduler, and the RDMA NIC (verbs queues, iWARP engine, offloaded TCP).
 *
 * The host (QEMU's glue, or a native test) sees only this API and one ops
 * table: DMA as a function, MSI-X, the uplink wire, a clock, one timer and
 * a "run me soon" kick. Everything between the parts is wired inside:
 * the admin queue's VF config reaches the data path when a command
 * commits it, the engine's frames enter the switch as their function's
 * traffic, frames the switch delivers are offered to the engine first,
 * and a reset fans out to every part (QEMU's IGBCore in igb_core.c is the
 * model: igb.c/igbvf.c only do PCI).
 *
 * Function numbers: 0 = the PF, 1 + n = VF n (n < total_vfs).
 *
 * Trust: every BAR access, doorbell and queue entry comes from a guest;
 * the parts validate them. Not thread-safe: the host serialises calls
 * (QEMU's BQL). Re-entrancy: a host op may call back into the adapter (a
 * DMA or an MSI-X the guest aimed at config space or a BAR); the adapter
 * guards itself (adapter.c): from inside its work, resets, NumVFs and the
 * carrier are applied when that work ends, BAR writes and doorbells are
 * refused, uplink frames dropped, and a run or timer call becomes a new
 * request to the host. TX of the Ethernet rings and the RNIC's work are
 * done by vfw_adapter_run only: a TX ring's TAIL write and an RDMA
 * doorbell record work and kick.
 */
#ifndef VFW_ADAPTER_H
#define VFW_ADAPTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct vfw_adapter_ops {
    /* DMA as function fn, so the IOMMU of that requester and its Bus
     * Master Enable apply; 0 = done, non-zero = failed (no such function,
     * IOMMU fault). */
    int (*dma_read)(void *ctx, unsigned fn, uint64_t addr, void *buf,
                    size_t len);
    int (*dma_write)(void *ctx, unsigned fn, uint64_t addr, const void *buf,
                     size_t len);
    /* Raise MSI-X vector `vector` of function fn. The vector number may
     * come from a guest-written register: the host checks it against the
     * function's table. */
    void (*irq)(void *ctx, unsigned fn, unsigned vector);
    /* A frame leaves on the uplink (the wire). */
    void (*uplink_tx)(void *ctx, const uint8_t *frame, size_t len);
    /* Monotonic nanoseconds (QEMU: the virtual clock). */
    uint64_t (*now_ns)(void *ctx);
    /* Call vfw_adapter_timer() at or after when_ns; a later request
     * replaces an earlier one. The adapter keeps its own timers (a
     * shaping timer per function, the uplink scheduler's, the RNIC's)
     * and asks for the earliest. */
    void (*timer)(void *ctx, uint64_t when_ns);
    /* Call vfw_adapter_run() soon, outside any BAR access; idempotent.
     * A TX ring's TAIL and an RDMA doorbell only record work and kick. */
    void (*kick)(void *ctx);
};

struct vfw_adapter;

/* A new adapter with total_vfs VFs (<= 128), the PF's MAC, and the
 * uplink's line rate in bits/s (0 = none until the PF driver sets one).
 * NULL on bad arguments or no memory; *why (if not NULL) then says which. */
struct vfw_adapter *vfw_adapter_create(const struct vfw_adapter_ops *ops,
                                       void *ctx, const uint8_t mac[6],
                                       unsigned total_vfs, uint64_t line_rate,
                                       const char **why);
/* Frees everything; no op is called after it returns. */
void vfw_adapter_destroy(struct vfw_adapter *a);

/* BAR0 of function fn: the register windows of include/vfwarp/ (the PF's
 * admin queue, rings, RDMA registers, mailbox, identification). false =
 * the access was ignored (bad size, offset or function, or a write from
 * inside the adapter's work): the host may log it as a guest error.
 * Reads of an ignored access give 0. */
bool vfw_adapter_bar0_read(struct vfw_adapter *a, unsigned fn, uint64_t addr,
                           unsigned size, uint32_t *val);
bool vfw_adapter_bar0_write(struct vfw_adapter *a, unsigned fn,
                            uint64_t addr, uint64_t val, unsigned size);
/* A write to fn's doorbell BAR (VFW_DB_BAR) at `offset`; false = ignored.
 * Reads of that BAR return 0 (the host need not ask). */
bool vfw_adapter_doorbell(struct vfw_adapter *a, unsigned fn,
                          uint64_t offset, uint64_t val, unsigned size);

/* The uplink: a frame from the wire, and whether a wire is attached. */
void vfw_adapter_uplink_rx(struct vfw_adapter *a, const uint8_t *frame,
                           size_t len);
void vfw_adapter_set_uplink(struct vfw_adapter *a, bool attached);

/* The PF's SR-IOV NumVFs with VF Enable, as it is now: VFs beyond it lose
 * their admin config and QoS leaf. */
void vfw_adapter_set_num_vfs(struct vfw_adapter *a, unsigned num_vfs);

/* Called from inside the adapter's work (a host op), the three below and
 * vfw_adapter_set_uplink take effect when that work ends; until then the
 * function being reset gets no DMA and no MSI-X. */

/* Power-on, PCI reset or FLR of the PF: every function's state, the VF
 * configs, QoS (back to the line rate given at create) and quotas. */
void vfw_adapter_reset(struct vfw_adapter *a);
/* FLR of VF n, or the VF being enabled or disabled (fn = 1 + n): its
 * registers, rings, RDMA objects and connections, mailbox. Its admin
 * config (MAC, VLAN, rates) and quota stay: the PF owns those. */
void vfw_adapter_reset_fn(struct vfw_adapter *a, unsigned fn);

/* The host's timer fired / the kick's deferred call. */
void vfw_adapter_timer(struct vfw_adapter *a);
void vfw_adapter_run(struct vfw_adapter *a);

/* Read-only views for tests and diagnostics (NULL-safe). */
struct vfw_func_dev;
struct vfw_admin;
struct vfw_dp;
const struct vfw_func_dev *vfw_adapter_funcs(const struct vfw_adapter *a);
struct vfw_dp *vfw_adapter_dp(struct vfw_adapter *a);
const struct vfw_admin *vfw_adapter_admin(const struct vfw_adapter *a);

#endif /* VFW_ADAPTER_H */
