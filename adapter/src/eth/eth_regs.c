/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * eth_regs.c - the ring window of a function's BAR0 (VFW_REGWIN_RING,
 * include/vfwarp/vfwarp_ring.h): per ring (TX rings 0..VFW_TXQ_MAX-1, the
 * RX ring) base, length, head, tail, control and status; link control and
 * status, the function's MAC, MTU, number of TX rings and counters; and
 * the interrupts the control registers enable.
 * Trust: every value written is the guest's. Only aligned 32-bit accesses
 * inside the window are taken. A ring's base and length are frozen while it
 * is enabled and checked when it is enabled (descriptor-aligned, a power of
 * two within VFW_RING_MIN/MAX_ENTRIES, no wrap of the address space), else
 * the ring reports VFW_RING_STS_ERR and stays off; a TAIL beyond the ring
 * is ignored. A TX ring's TAIL write is its doorbell: it records the work
 * and asks for a run (eth_tx.c sends in vfw_dp_run, never in the write).
 */
#include <string.h>

#include "eth_internal.h"

#define CTRL_MASK (VFW_RING_CTRL_ENABLE | VFW_RING_CTRL_IRQ_EN | \
                   (VFW_RING_CTRL_VEC_MASK << VFW_RING_CTRL_VEC_SHIFT))

/* --- interrupts -------------------------------------------------------- */

void eth_fire(struct vfw_dp *dp, unsigned fn, uint32_t ctrl, bool *pending)
{
    if (ctrl & VFW_RING_CTRL_IRQ_EN) {
        *pending = false;
        if (dp->ops->irq) {
            dp->ops->irq(dp->ctx, fn, (ctrl >> VFW_RING_CTRL_VEC_SHIFT) &
                         VFW_RING_CTRL_VEC_MASK);
        }
    } else {
        *pending = true;
    }
}

/* --- registers ----------------------------------------------------------- */

bool vfw_dp_owns(uint64_t addr)
{
    return addr >= VFW_REGWIN_RING &&
           addr < VFW_REG_TXQ(VFW_TXQ_MAX - 1) + 0x20;
}

/* The ring block addr falls in, or NULL; *reg its offset in the block. */
static struct dp_ring *ring_at(struct dp_fn *f, uint64_t addr, unsigned *reg)
{
    if (addr >= VFW_REG_TXQ0 && addr < VFW_REG_TXQ0 + 0x20) {
        *reg = (unsigned)(addr - VFW_REG_TXQ0);
        return &f->tx[0];
    }
    if (addr >= VFW_REG_TXQ(1) && addr < VFW_REG_TXQ(VFW_TXQ_MAX - 1) + 0x20) {
        unsigned q = 1 + (unsigned)((addr - VFW_REG_TXQ(1)) / 0x20);

        *reg = (unsigned)((addr - VFW_REG_TXQ(1)) % 0x20);
        return &f->tx[q];
    }
    if (addr >= VFW_REG_RXQ0 && addr < VFW_REG_RXQ0 + 0x20) {
        *reg = (unsigned)(addr - VFW_REG_RXQ0);
        return &f->rx;
    }
    return NULL;
}

static bool reg_ok(const struct vfw_dp *dp, unsigned fn, uint64_t addr,
                   unsigned size)
{
    return dp && fn < fn_count(dp) && size == 4 && (addr & 3) == 0 &&
           vfw_dp_owns(addr);
}

bool vfw_dp_read(struct vfw_dp *dp, unsigned fn, uint64_t addr,
                 unsigned size, uint32_t *val)
{
    struct dp_fn *f;
    struct dp_ring *r;
    unsigned reg;
    uint8_t mac[6];

    *val = 0;
    if (!reg_ok(dp, fn, addr, size)) {
        return false;
    }
    f = &dp->fn[fn];
    r = ring_at(f, addr, &reg);
    if (r) {
        switch (reg) {
        case VFW_RING_BASE_LO: *val = (uint32_t)r->base; break;
        case VFW_RING_BASE_HI: *val = (uint32_t)(r->base >> 32); break;
        case VFW_RING_LEN: *val = r->len; break;
        case VFW_RING_HEAD: *val = r->head; break;
        case VFW_RING_TAIL: *val = r->tail; break;
        case VFW_RING_CTRL: *val = r->ctrl; break;
        case VFW_RING_STATUS: *val = r->status; break;
        default: break;
        }
        return true;
    }
    if (fn == VFW_DP_FN_PF) {
        memcpy(mac, dp->pf_mac, 6);
    } else {
        vfw_dp_vf_mac(dp, fn - 1, mac);
    }
    if (addr == VFW_REG_LINK_STATUS) {
        *val = eth_fn_link(dp, fn) ? VFW_LINK_UP : 0;
    } else if (addr == VFW_REG_LINK_CTRL) {
        *val = f->link_ctrl;
    } else if (addr == VFW_REG_DP_MAC_LO) {
        *val = (uint32_t)mac[0] | (uint32_t)mac[1] << 8 |
               (uint32_t)mac[2] << 16 | (uint32_t)mac[3] << 24;
    } else if (addr == VFW_REG_DP_MAC_HI) {
        *val = (uint32_t)mac[4] | (uint32_t)mac[5] << 8;
    } else if (addr == VFW_REG_DP_MTU) {
        *val = VFW_FRAME_MAX;
    } else if (addr == VFW_REG_TXQ_NUM) {
        *val = VFW_TXQ_MAX;
    } else if (addr >= VFW_REG_STAT_BASE &&
               addr < VFW_REG_STAT(VFW_STAT_COUNT)) {
        *val = (uint32_t)f->stat[(addr - VFW_REG_STAT_BASE) / 4];
    }
    return true;
}

static bool ring_enable(struct dp_ring *r)
{
    if ((r->base & (VFW_DESC_SIZE - 1)) || r->len < VFW_RING_MIN_ENTRIES ||
        r->len > VFW_RING_MAX_ENTRIES || (r->len & (r->len - 1)) ||
        r->base + (uint64_t)r->len * VFW_DESC_SIZE < r->base) {
        return false;
    }
    return true;
}

static void ring_write(struct vfw_dp *dp, unsigned fn, struct dp_ring *r,
                       unsigned reg, uint32_t v)
{
    bool on = r->ctrl & VFW_RING_CTRL_ENABLE;

    switch (reg) {
    case VFW_RING_BASE_LO:
        if (!on) {
            r->base = (r->base & ~0xffffffffull) | v;
        }
        break;
    case VFW_RING_BASE_HI:
        if (!on) {
            r->base = (r->base & 0xffffffffull) | (uint64_t)v << 32;
        }
        break;
    case VFW_RING_LEN:
        if (!on) {
            r->len = v;
        }
        break;
    case VFW_RING_TAIL:
        if (on && v < r->len) {
            struct dp_fn *f = &dp->fn[fn];

            r->tail = v;
            if (r >= &f->tx[0] && r < &f->tx[VFW_TXQ_MAX]) {
                eth_tx_want(dp, fn, 1u << (r - f->tx));
            }
        }
        break;
    case VFW_RING_CTRL:
        v &= CTRL_MASK;
        if ((v & VFW_RING_CTRL_ENABLE) && !on) {
            r->head = r->tail = 0;
            r->irq_pending = false;
            if (ring_enable(r)) {
                r->status = VFW_RING_STS_ENABLED;
            } else {
                r->status = VFW_RING_STS_ERR;
                v &= ~VFW_RING_CTRL_ENABLE;
            }
        } else if (!(v & VFW_RING_CTRL_ENABLE) && on) {
            r->status = 0;
            r->head = r->tail = 0;
            r->irq_pending = false;
        }
        r->ctrl = v;
        if ((v & VFW_RING_CTRL_IRQ_EN) && r->irq_pending) {
            eth_fire(dp, fn, r->ctrl, &r->irq_pending);
        }
        break;
    default:
        break;
    }
}

bool vfw_dp_write(struct vfw_dp *dp, unsigned fn, uint64_t addr,
                  uint64_t val, unsigned size)
{
    struct dp_fn *f;
    struct dp_ring *r;
    unsigned reg;

    if (!reg_ok(dp, fn, addr, size)) {
        return false;
    }
    f = &dp->fn[fn];
    r = ring_at(f, addr, &reg);
    if (r) {
        ring_write(dp, fn, r, reg, (uint32_t)val);
    } else if (addr == VFW_REG_LINK_CTRL) {
        f->link_ctrl = (uint32_t)val & (VFW_RING_CTRL_IRQ_EN |
                       (VFW_RING_CTRL_VEC_MASK << VFW_RING_CTRL_VEC_SHIFT));
        if ((f->link_ctrl & VFW_RING_CTRL_IRQ_EN) && f->link_pending) {
            eth_fire(dp, fn, f->link_ctrl, &f->link_pending);
        }
    }
    return true;
}
