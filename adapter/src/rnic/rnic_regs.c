/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rnic_regs.c - the BAR0 RDMA window 0x0a00..0x0aff of every function:
 * limits (the function's quota), the verbs command queue registers, the
 * event queue registers (rnic_eq.c) and the counters. A function's state
 * is created on its first write; reads before that return reset values.
 */
#include "rnic_internal.h"

bool vfw_rnic_owns(uint64_t addr)
{
    return addr >= VFW_REGWIN_RDMA && addr < VFW_REGWIN_RDMA + 0x100;
}

static bool limit_reg(const struct vfw_rnic *r, unsigned fn, uint64_t addr,
                      uint32_t *v)
{
    const struct vfw_aq_rdma_quota *q = &r->quota[fn];
    switch (addr) {
    case VFW_REG_RDMA_CAPS: *v = VFW_RDMA_CAP_IWARP; return true;
    case VFW_REG_RDMA_MAX_QP: *v = q->qp; return true;
    case VFW_REG_RDMA_MAX_CQ: *v = q->cq; return true;
    case VFW_REG_RDMA_MAX_MR: *v = q->mr; return true;
    case VFW_REG_RDMA_MAX_PD: *v = q->pd; return true;
    case VFW_REG_RDMA_MAX_MR_PAGES: *v = q->mr_pages; return true;
    case VFW_REG_RDMA_MAX_CONN: *v = q->conn; return true;
    case VFW_REG_RDMA_MAX_QP_DEPTH: *v = VFW_RDMA_MAX_QP_DEPTH; return true;
    case VFW_REG_RDMA_MAX_CQ_DEPTH: *v = VFW_RDMA_MAX_CQ_DEPTH; return true;
    case VFW_REG_RDMA_MAX_SGE: *v = VFW_RDMA_MAX_SGE; return true;
    case VFW_REG_RDMA_MAX_INLINE: *v = VFW_RDMA_MAX_INLINE; return true;
    case VFW_REG_RDMA_MAX_ORD_IRD: *v = VFW_RDMA_MAX_ORD_IRD; return true;
    case VFW_REG_RDMA_DB_PAGES: *v = VFW_DB_PAGES; return true;
    case VFW_REG_RDMA_MAX_PDATA: *v = VFW_RDMA_MAX_PDATA; return true;
    default: return false;
    }
}

bool vfw_rnic_read(struct vfw_rnic *r, unsigned fn, uint64_t addr,
                   unsigned size, uint32_t *val)
{
    if (!r || !val || fn >= r->nfn || size != 4 || (addr & 3) ||
        !vfw_rnic_owns(addr))
        return false;
    *val = 0;
    if (limit_reg(r, fn, addr, val))
        return true;
    const struct rnic_fn *fs = r->fn[fn];
    if (!fs)
        return true;     /* reset values: all zero */
    if (rnic_eq_read_reg(fs, addr, val))
        return true;
    const struct rnic_rcq *c = &fs->rcq;
    switch (addr) {
    case VFW_REG_RCQ_BASE_LO: *val = (uint32_t)c->base; break;
    case VFW_REG_RCQ_BASE_HI: *val = (uint32_t)(c->base >> 32); break;
    case VFW_REG_RCQ_LEN: *val = c->len; break;
    case VFW_REG_RCQ_HEAD: *val = c->head; break;
    case VFW_REG_RCQ_TAIL: *val = c->tail; break;
    case VFW_REG_RCQ_CTRL: *val = c->ctrl; break;
    case VFW_REG_RCQ_STATUS: *val = c->status; break;
    default:
        if (addr >= VFW_REG_RSTAT(0) &&
            addr < VFW_REG_RSTAT(VFW_RSTAT_COUNT))
            *val = (uint32_t)rnic_stat_get(fs, (unsigned)
                                     ((addr - VFW_REG_RSTAT(0)) / 4));
        break;
    }
    return true;
}

bool vfw_rnic_write(struct vfw_rnic *r, unsigned fn, uint64_t addr,
                    uint64_t val, unsigned size)
{
    if (!r || fn >= r->nfn || size != 4 || (addr & 3) || !vfw_rnic_owns(addr))
        return false;
    uint32_t v = (uint32_t)val;
    bool rw = (addr >= VFW_REG_RCQ_BASE_LO && addr <= VFW_REG_RCQ_CTRL &&
               addr != VFW_REG_RCQ_HEAD) ||
              (addr >= VFW_REG_REQ_BASE_LO && addr <= VFW_REG_REQ_CONS &&
               addr != VFW_REG_REQ_STATUS && addr != VFW_REG_REQ_PROD);
    if (!rw)
        return true;     /* read-only or reserved: ignored */
    struct rnic_fn *fs = rnic_fn_get(r, fn, true);
    if (!fs)
        return true;     /* out of memory: the function's RDMA stays off */
    if (rnic_eq_write_reg(fs, addr, v))
        return true;
    struct rnic_rcq *c = &fs->rcq;
    bool en = c->status & VFW_RCQ_STATUS_ENABLED;
    switch (addr) {
    case VFW_REG_RCQ_BASE_LO:
        if (!en) c->base = (c->base & ~0xffffffffull) | v;
        break;
    case VFW_REG_RCQ_BASE_HI:
        if (!en) c->base = (c->base & 0xffffffffull) | (uint64_t)v << 32;
        break;
    case VFW_REG_RCQ_LEN:
        if (!en) c->len = v;
        break;
    case VFW_REG_RCQ_TAIL:
        if (!en)
            break;
        if (v >= c->len) {
            c->status |= VFW_RCQ_STATUS_TAIL_ERR;
            break;
        }
        c->tail = v;
        rnic_kick(fs);   /* commands run in vfw_rnic_run, bounded */
        break;
    case VFW_REG_RCQ_CTRL:
        c->ctrl = v & VFW_RCQ_CTRL_ENABLE;
        if (!(v & VFW_RCQ_CTRL_ENABLE)) {
            c->status &= ~VFW_RCQ_STATUS_ENABLED;
            break;
        }
        if (en)
            break;
        c->status = 0;
        c->head = c->tail = 0;
        if (c->len < 1 || c->len > VFW_RCQ_MAX_LEN ||
            (c->base & (VFW_RCQ_BASE_ALIGN - 1)) ||
            c->base + (uint64_t)c->len * VFW_RCQ_DESC_SIZE < c->base) {
            c->status = VFW_RCQ_STATUS_CFG_ERR;
            break;
        }
        c->status = VFW_RCQ_STATUS_ENABLED;
        break;
    default:
        break;
    }
    return true;
}
