/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * func.c - PF/VF register files of the adapter (see vfw_func.h).
 *
 * Rev 1.0 register semantics per function:
 *   MAGIC, VERSION, FEATURES_*  same on every function
 *   SCRATCH                     per function, RW, 0 after a function reset
 *   FUNC_INFO                   PF: 0; VF n: VFW_FUNC_IS_VF | n
 *   UPLINK_*, MAC_*             PF only; a VF reads 0 (its MAC is the PF's
 *                               to assign, through the mailbox, later)
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "vfw_func.h"

int vfw_func_dev_init(struct vfw_func_dev *d, const uint8_t mac[6],
                      uint16_t total_vfs)
{
    memset(d, 0, sizeof(*d));
    if (!mac || total_vfs > VFW_FUNC_MAX_VFS) {
        return -1;
    }
    memcpy(d->mac, mac, sizeof(d->mac));
    d->total_vfs = total_vfs;
    d->pf.is_vf = false;
    d->pf.index = 0;
    for (unsigned i = 0; i < VFW_FUNC_MAX_VFS; i++) {
        d->vf[i].is_vf = true;
        d->vf[i].index = (uint16_t)i;
    }
    return 0;
}

struct vfw_func *vfw_func_pf(struct vfw_func_dev *d)
{
    return &d->pf;
}

struct vfw_func *vfw_func_vf(struct vfw_func_dev *d, unsigned index)
{
    if (index >= d->total_vfs || index >= VFW_FUNC_MAX_VFS) {
        return NULL;
    }
    return &d->vf[index];
}

/* Is `f` one of `d`'s live functions? Compared as integers so a stray
 * pointer is rejected without undefined behaviour. */
static bool func_owned(const struct vfw_func_dev *d, const struct vfw_func *f)
{
    uintptr_t p = (uintptr_t)f;
    uintptr_t v0 = (uintptr_t)&d->vf[0];

    if (!f) {
        return false;
    }
    if (f == &d->pf) {
        return true;
    }
    if (p < v0 || p >= v0 + (uintptr_t)d->total_vfs * sizeof(d->vf[0])) {
        return false;
    }
    return (p - v0) % sizeof(d->vf[0]) == 0;
}

static bool access_ok(uint64_t addr, unsigned size)
{
    return size == 4 && addr < VFW_BAR0_SIZE && (addr & 3) == 0;
}

bool vfw_func_read(const struct vfw_func_dev *d, const struct vfw_func *f,
                   uint64_t addr, unsigned size, uint32_t *val)
{
    const uint8_t *mac = d->mac;
    bool pf;

    *val = 0;
    if (!func_owned(d, f) || !access_ok(addr, size)) {
        return false;
    }
    pf = !f->is_vf;
    switch (addr) {
    case VFW_REG_MAGIC:
        *val = VFW_MAGIC;
        break;
    case VFW_REG_VERSION:
        *val = (uint32_t)VFW_HW_VERSION_MAJOR << 16 | VFW_HW_VERSION_MINOR;
        break;
    case VFW_REG_FEATURES_LO:
        *val = d->uplink ? (uint32_t)VFW_FEAT_UPLINK : 0;
        break;
    case VFW_REG_FEATURES_HI:
        *val = 0;
        break;
    case VFW_REG_SCRATCH:
        *val = f->scratch;
        break;
    case VFW_REG_FUNC_INFO:
        *val = f->is_vf ? VFW_FUNC_IS_VF | (f->index & VFW_FUNC_INDEX_MASK) : 0;
        break;
    case VFW_REG_UPLINK_RX_PKTS:
        *val = pf ? d->uplink_rx : 0;
        break;
    case VFW_REG_UPLINK_TX_PKTS:
        *val = pf ? d->uplink_tx : 0;
        break;
    case VFW_REG_MAC_LO:
        *val = pf ? (uint32_t)mac[0] | (uint32_t)mac[1] << 8 |
                    (uint32_t)mac[2] << 16 | (uint32_t)mac[3] << 24 : 0;
        break;
    case VFW_REG_MAC_HI:
        *val = pf ? (uint32_t)mac[4] | (uint32_t)mac[5] << 8 : 0;
        break;
    default:
        *val = 0;  /* reserved: reads 0 */
        break;
    }
    return true;
}

bool vfw_func_write(struct vfw_func_dev *d, struct vfw_func *f,
                    uint64_t addr, uint64_t val, unsigned size)
{
    if (!func_owned(d, f) || !access_ok(addr, size)) {
        return false;
    }
    if (addr == VFW_REG_SCRATCH) {
        f->scratch = (uint32_t)val;
    }
    /* Everything else is read-only or reserved: dropped. */
    return true;
}

void vfw_func_reset(struct vfw_func *f)
{
    if (!f) {
        return;
    }
    f->scratch = 0;
    f->resets++;
}

void vfw_func_dev_reset(struct vfw_func_dev *d)
{
    vfw_func_reset(&d->pf);
    for (unsigned i = 0; i < d->total_vfs && i < VFW_FUNC_MAX_VFS; i++) {
        vfw_func_reset(&d->vf[i]);
    }
}

void vfw_func_set_uplink(struct vfw_func_dev *d, bool attached)
{
    d->uplink = attached;
}

void vfw_func_uplink_rx(struct vfw_func_dev *d)
{
    d->uplink_rx++;
}

void vfw_func_uplink_tx(struct vfw_func_dev *d)
{
    d->uplink_tx++;
}
