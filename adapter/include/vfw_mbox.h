/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfw_mbox.h - the VF-to-PF mailbox of the adapter (include/vfwarp/
 * vfwarp_mbox.h): a 64-byte message window per VF, the PF's pending bitmap,
 * its select/request/reply registers, and the two interrupts.
 *
 * Plain C11, no QEMU dependency. The device carries messages and never
 * interprets them: judging a VF's request is the PF driver's job. Every
 * register access is untrusted: offsets, sizes and the PF's VF select are
 * checked; a VF can have one request in flight, so it cannot flood the PF.
 * Not thread-safe; the caller serialises (QEMU's BQL).
 *
 * Function numbers as in the data path: 0 = PF, 1 + n = VF n.
 */
#ifndef VFW_MBOX_H
#define VFW_MBOX_H

#include <stdbool.h>
#include <stdint.h>

#include "vfwarp/vfwarp_mbox.h"
#include "vfw_func.h"

struct vfw_mbox_ops {
    /* Raise MSI-X vector `vector` of function `fn`. */
    void (*irq)(void *opaque, unsigned fn, unsigned vector);
    void *opaque;
};

struct vfw_mbox_vf {
    uint8_t msg[VFW_MBX_MSG_SIZE];     /* the VF's MSG window */
    uint8_t posted[VFW_MBX_MSG_SIZE];  /* the request the PF reads */
    uint32_t status;                   /* VFW_MBX_STS_* */
    uint32_t ctrl;
    bool irq_pending;                  /* reply came while IRQ_EN was off */
};

struct vfw_mbox {
    struct vfw_mbox_ops ops;
    uint16_t total_vfs;
    uint32_t sel;                      /* PF_MBX_SEL */
    uint32_t ctrl;                     /* PF_MBX_CTRL */
    bool irq_pending;                  /* request came while IRQ_EN was off */
    uint8_t reply[VFW_MBX_MSG_SIZE];   /* PF_MBX_REPLY */
    uint32_t pend[VFW_FUNC_MAX_VFS / 32];
    uint32_t requests, replies;        /* diagnostics (tests) */
    struct vfw_mbox_vf vf[VFW_FUNC_MAX_VFS];
};

/* Initialise; -1 if total_vfs > VFW_FUNC_MAX_VFS or ops->irq is missing. */
int vfw_mbox_init(struct vfw_mbox *m, const struct vfw_mbox_ops *ops,
                  uint16_t total_vfs);
/* PF reset: every mailbox empty, both sides' registers to reset values. */
void vfw_mbox_reset(struct vfw_mbox *m);
/* VF `vf` reset (FLR, VF disabled): its request is withdrawn. */
void vfw_mbox_reset_vf(struct vfw_mbox *m, unsigned vf);

/* Is `addr` in the mailbox window of BAR0? */
bool vfw_mbox_owns(uint64_t addr);
/* BAR0 accesses of function `fn` in the window; only aligned 32-bit
 * accesses decode (false otherwise, and for fn out of range). */
bool vfw_mbox_read(const struct vfw_mbox *m, unsigned fn, uint64_t addr,
                   unsigned size, uint32_t *val);
bool vfw_mbox_write(struct vfw_mbox *m, unsigned fn, uint64_t addr,
                    uint64_t val, unsigned size);

#endif /* VFW_MBOX_H */
