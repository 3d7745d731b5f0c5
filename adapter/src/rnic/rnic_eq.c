/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rnic_eq.c - the function's event queue: entries with an owner bit (the
 * owner byte written last), a private-data slot per entry, overflow
 * accounting against the driver's consumer count, and the MSI-X vector
 * with IRQ_EN masking remembered (an event while masked is raised when
 * IRQ_EN is set again).
 */
#include "rnic_internal.h"

static bool eq_on(const struct rnic_eq *q)
{
    return q->status & VFW_REQ_STATUS_ENABLED;
}

void rnic_eq_post(struct rnic_fn *fs, const struct vfw_eqe *ev,
                  const uint8_t *pdata, uint16_t plen)
{
    struct rnic_eq *q = &fs->eq;
    if (fs->resetting || !eq_on(q))
        return;
    if (q->prod - q->cons >= q->len) {
        /* full, or CONS is nonsense (ahead of PROD): never overwrite an
         * entry the driver may not have read */
        q->status |= VFW_REQ_STATUS_OVERFLOW;
        rnic_stat(fs, VFW_RSTAT_EQ_OVERFLOW);
        return;
    }
    rnic_work_charge(fs, 1);     /* an event cannot wait: a debt if need be */
    uint32_t idx = q->prod & (q->len - 1);
    struct vfw_eqe e = *ev;
    e.owner = (uint8_t)(((q->prod / q->len) & 1) ^ 1);
    if (!q->pdata || !pdata)
        plen = 0;
    if (plen > VFW_EQ_PDATA_SLOT)
        plen = VFW_EQ_PDATA_SLOT;
    e.pdata_len = plen;
    uint64_t a = q->base + (uint64_t)idx * VFW_EQE_SIZE;
    if ((plen && rnic_dma_write(fs, q->pdata + (uint64_t)idx *
                                VFW_EQ_PDATA_SLOT, pdata, plen)) ||
        rnic_dma_write(fs, a, &e, VFW_EQE_SIZE - 1) ||
        rnic_dma_write(fs, a + VFW_EQE_SIZE - 1, &e.owner, 1)) {
        q->status = (q->status & ~VFW_REQ_STATUS_ENABLED) |
                    VFW_REQ_STATUS_DMA_ERR;
        return;
    }
    q->prod++;
    q->irq_pending = true;
    /* raised at the end of the run's batch (rnic_eq_flush_irq) */
    rnic_kick(fs);
}

void rnic_eq_flush_irq(struct rnic_fn *fs)
{
    struct rnic_eq *q = &fs->eq;
    if (!q->irq_pending || !(q->ctrl & VFW_REQ_CTRL_IRQ_EN))
        return;      /* masked: remembered until IRQ_EN */
    q->irq_pending = false;
    fs->r->ops.irq(fs->r->ctx, fs->fn,
                   (q->ctrl & VFW_REQ_CTRL_VEC_MASK) >> VFW_REQ_CTRL_VEC_SHIFT);
}

static void eq_enable(struct rnic_eq *q)
{
    q->status = 0;
    q->prod = q->cons = 0;
    q->irq_pending = false;
    if (!q->base || (q->base & 63) || (q->pdata & 63) ||
        q->len < VFW_EQ_MIN_LEN || q->len > VFW_EQ_MAX_LEN ||
        (q->len & (q->len - 1)) ||
        q->base + (uint64_t)q->len * VFW_EQE_SIZE < q->base ||
        q->pdata + (uint64_t)q->len * VFW_EQ_PDATA_SLOT < q->pdata) {
        q->status = VFW_REQ_STATUS_CFG_ERR;
        return;
    }
    q->status = VFW_REQ_STATUS_ENABLED;
}

bool rnic_eq_write_reg(struct rnic_fn *fs, uint64_t addr, uint32_t v)
{
    struct rnic_eq *q = &fs->eq;
    bool en = eq_on(q);
    switch (addr) {
    case VFW_REG_REQ_BASE_LO:
        if (!en) q->base = (q->base & ~0xffffffffull) | v;
        return true;
    case VFW_REG_REQ_BASE_HI:
        if (!en) q->base = (q->base & 0xffffffffull) | (uint64_t)v << 32;
        return true;
    case VFW_REG_REQ_LEN:
        if (!en) q->len = v;
        return true;
    case VFW_REG_REQ_PDATA_LO:
        if (!en) q->pdata = (q->pdata & ~0xffffffffull) | v;
        return true;
    case VFW_REG_REQ_PDATA_HI:
        if (!en) q->pdata = (q->pdata & 0xffffffffull) | (uint64_t)v << 32;
        return true;
    case VFW_REG_REQ_CTRL: {
        uint32_t old = q->ctrl;
        q->ctrl = v & (VFW_REQ_CTRL_ENABLE | VFW_REQ_CTRL_IRQ_EN |
                       VFW_REQ_CTRL_VEC_MASK);
        if (!(v & VFW_REQ_CTRL_ENABLE))
            q->status &= ~VFW_REQ_STATUS_ENABLED;
        else if (!en)
            eq_enable(q);
        if (!(old & VFW_REQ_CTRL_IRQ_EN) && (q->ctrl & VFW_REQ_CTRL_IRQ_EN))
            rnic_eq_flush_irq(fs);
        return true;
    }
    case VFW_REG_REQ_CONS:
        q->cons = v;
        return true;
    default:
        return false;
    }
}

bool rnic_eq_read_reg(const struct rnic_fn *fs, uint64_t addr, uint32_t *v)
{
    const struct rnic_eq *q = &fs->eq;
    switch (addr) {
    case VFW_REG_REQ_BASE_LO: *v = (uint32_t)q->base; return true;
    case VFW_REG_REQ_BASE_HI: *v = (uint32_t)(q->base >> 32); return true;
    case VFW_REG_REQ_LEN: *v = q->len; return true;
    case VFW_REG_REQ_PDATA_LO: *v = (uint32_t)q->pdata; return true;
    case VFW_REG_REQ_PDATA_HI: *v = (uint32_t)(q->pdata >> 32); return true;
    case VFW_REG_REQ_CTRL: *v = q->ctrl; return true;
    case VFW_REG_REQ_STATUS: *v = q->status; return true;
    case VFW_REG_REQ_PROD: *v = q->prod; return true;
    case VFW_REG_REQ_CONS: *v = q->cons; return true;
    default: return false;
    }
}
