/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfw_func.h - the adapter's PCI functions (one PF, up to 128 VFs) as seen
 * through their BAR0 register files: the identification block of
 * include/vfwarp/vfwarp_regs.h, per-function state, and what a function
 * reset (FLR, VF enable, device reset) clears.
 *
 * Plain C11, no QEMU or kernel dependency (the igb_core.c vs igb.c split):
 * the QEMU glue (qemu-patches/hw/net/vfwarp/) owns PCI config space, BARs
 * and MSI-X and forwards BAR0 accesses here. Every access comes from a
 * guest and is untrusted: offsets, sizes and function indices are checked,
 * and nothing here allocates or loops over guest-controlled counts.
 * Not thread-safe; the caller serialises (QEMU's BQL).
 */
#ifndef VFW_FUNC_H
#define VFW_FUNC_H

#include <stdbool.h>
#include <stdint.h>

#include "vfwarp/vfwarp_regs.h"

/* Functions the register model holds state for (the SR-IOV TotalVFs). */
#define VFW_FUNC_MAX_VFS 128

/* One PCI function's register state. */
struct vfw_func {
    bool is_vf;
    uint16_t index;          /* VF index (0-based); 0 for the PF */
    uint32_t scratch;        /* VFW_REG_SCRATCH */
    uint32_t resets;         /* function resets seen (diagnostics, tests) */
};

/* The adapter's function table. Embed it in the device state. */
struct vfw_func_dev {
    uint8_t mac[6];          /* the PF's permanent MAC */
    bool uplink;             /* an uplink netdev is attached */
    uint16_t total_vfs;      /* VFs that exist (<= VFW_FUNC_MAX_VFS) */
    uint32_t uplink_rx;      /* frames seen on the uplink (wrapping) */
    uint32_t uplink_tx;      /* frames sent to the uplink (wrapping) */
    struct vfw_func pf;
    struct vfw_func vf[VFW_FUNC_MAX_VFS];
};

/* Initialise `d` for a PF with `total_vfs` VFs. Returns 0, or -1 (and
 * leaves `d` zeroed) when total_vfs exceeds VFW_FUNC_MAX_VFS or mac is NULL. */
int vfw_func_dev_init(struct vfw_func_dev *d, const uint8_t mac[6],
                      uint16_t total_vfs);

/* The PF's function, or VF `index`'s; NULL for an index >= total_vfs. */
struct vfw_func *vfw_func_pf(struct vfw_func_dev *d);
struct vfw_func *vfw_func_vf(struct vfw_func_dev *d, unsigned index);

/* A BAR0 access of `size` bytes at `addr` by function `f` (which must come
 * from vfw_func_pf/vfw_func_vf of the same `d`). Only naturally aligned
 * 32-bit accesses inside VFW_BAR0_SIZE decode; anything else reads 0 and
 * is ignored on write, as are unknown and read-only registers. Returns
 * false for an access that did not decode (the glue may log it). */
bool vfw_func_read(const struct vfw_func_dev *d, const struct vfw_func *f,
                   uint64_t addr, unsigned size, uint32_t *val);
bool vfw_func_write(struct vfw_func_dev *d, struct vfw_func *f,
                    uint64_t addr, uint64_t val, unsigned size);

/* Function-level reset (FLR of that function, or a VF being enabled):
 * the function's registers return to their reset values. */
void vfw_func_reset(struct vfw_func *f);

/* Whole-adapter reset (power-on, PCI reset, PF FLR): every function. The
 * uplink counters keep running (they belong to the port, not a function). */
void vfw_func_dev_reset(struct vfw_func_dev *d);

/* Uplink events from the glue. */
void vfw_func_set_uplink(struct vfw_func_dev *d, bool attached);
void vfw_func_uplink_rx(struct vfw_func_dev *d);
void vfw_func_uplink_tx(struct vfw_func_dev *d);

#endif /* VFW_FUNC_H */
