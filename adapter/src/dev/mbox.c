/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * mbox.c - the VF-to-PF mailbox (see vfw_mbox.h and include/vfwarp/
 * vfwarp_mbox.h).
 *
 * Both sides' registers live at the same offsets of their own BAR0; what
 * an offset means depends on whether the PF or a VF is asking. Interrupts
 * follow the ring rule: an event while IRQ_EN is clear is remembered and
 * raised when IRQ_EN is set again, so a driver that masks while it works
 * never loses one.
 */
#include <string.h>

#include "vfw_bytes.h"
#include "vfw_mbox.h"

#define WIN_END       0x0300   /* window 0x0200..0x02ff */
#define CTRL_MASK     (VFW_MBX_CTRL_IRQ_EN | \
                       (VFW_MBX_CTRL_VEC_MASK << VFW_MBX_CTRL_VEC_SHIFT))

static void fire(struct vfw_mbox *m, unsigned fn, uint32_t ctrl,
                 bool *pending)
{
    if (ctrl & VFW_MBX_CTRL_IRQ_EN) {
        *pending = false;
        m->ops.irq(m->ops.opaque, fn,
                   (ctrl >> VFW_MBX_CTRL_VEC_SHIFT) & VFW_MBX_CTRL_VEC_MASK);
    } else {
        *pending = true;
    }
}

static bool pending(const struct vfw_mbox *m, unsigned vf)
{
    return m->pend[vf / 32] & (1u << (vf % 32));
}

int vfw_mbox_init(struct vfw_mbox *m, const struct vfw_mbox_ops *ops,
                  uint16_t total_vfs)
{
    memset(m, 0, sizeof(*m));
    if (!ops || !ops->irq || total_vfs > VFW_FUNC_MAX_VFS) {
        return -1;
    }
    m->ops = *ops;
    m->total_vfs = total_vfs;
    return 0;
}

void vfw_mbox_reset(struct vfw_mbox *m)
{
    m->sel = 0;
    m->ctrl = 0;
    m->irq_pending = false;
    memset(m->reply, 0, sizeof(m->reply));
    for (unsigned vf = 0; vf < VFW_FUNC_MAX_VFS; vf++) {
        vfw_mbox_reset_vf(m, vf);
    }
}

void vfw_mbox_reset_vf(struct vfw_mbox *m, unsigned vf)
{
    if (vf >= VFW_FUNC_MAX_VFS) {
        return;
    }
    memset(&m->vf[vf], 0, sizeof(m->vf[vf]));
    m->pend[vf / 32] &= ~(1u << (vf % 32));
}

bool vfw_mbox_owns(uint64_t addr)
{
    return addr >= VFW_REGWIN_MBOX && addr < WIN_END;
}

static bool decodes(const struct vfw_mbox *m, unsigned fn, uint64_t addr,
                    unsigned size)
{
    return size == 4 && !(addr & 3) && vfw_mbox_owns(addr) &&
           fn <= m->total_vfs;
}

static bool in_words(uint64_t addr, uint64_t base, unsigned words)
{
    return addr >= base && addr < base + 4ull * words;
}

static uint32_t pf_read(const struct vfw_mbox *m, uint64_t addr)
{
    if (in_words(addr, VFW_REG_PF_MBX_PEND(0), VFW_FUNC_MAX_VFS / 32)) {
        return m->pend[(addr - VFW_REG_PF_MBX_PEND(0)) / 4];
    }
    if (in_words(addr, VFW_REG_PF_MBX_REQ(0), VFW_MBX_MSG_WORDS)) {
        if (m->sel >= m->total_vfs || !pending(m, m->sel)) {
            return 0;
        }
        return vfw_ld_le32(m->vf[m->sel].posted + (addr - VFW_REG_PF_MBX_REQ(0)));
    }
    if (in_words(addr, VFW_REG_PF_MBX_REPLY(0), VFW_MBX_MSG_WORDS)) {
        return vfw_ld_le32(m->reply + (addr - VFW_REG_PF_MBX_REPLY(0)));
    }
    switch (addr) {
    case VFW_REG_PF_MBX_SEL:
        return m->sel;
    case VFW_REG_PF_MBX_CTRL:
        return m->ctrl;
    default:
        return 0;
    }
}

static uint32_t vf_read(const struct vfw_mbox_vf *v, uint64_t addr)
{
    if (in_words(addr, VFW_REG_MBX_MSG(0), VFW_MBX_MSG_WORDS)) {
        return vfw_ld_le32(v->msg + (addr - VFW_REG_MBX_MSG(0)));
    }
    switch (addr) {
    case VFW_REG_MBX_CTRL:
        return v->ctrl;
    case VFW_REG_MBX_STATUS:
        return v->status;
    default:
        return 0;
    }
}

bool vfw_mbox_read(const struct vfw_mbox *m, unsigned fn, uint64_t addr,
                   unsigned size, uint32_t *val)
{
    *val = 0;
    if (!decodes(m, fn, addr, size)) {
        return false;
    }
    *val = fn == 0 ? pf_read(m, addr) : vf_read(&m->vf[fn - 1], addr);
    return true;
}

/* The PF answers the selected VF: only a VF that asked gets a reply. */
static void pf_reply(struct vfw_mbox *m)
{
    unsigned vf = m->sel;
    struct vfw_mbox_vf *v;

    if (vf >= m->total_vfs || !pending(m, vf)) {
        return;
    }
    v = &m->vf[vf];
    memcpy(v->msg, m->reply, sizeof(v->msg));
    m->pend[vf / 32] &= ~(1u << (vf % 32));
    v->status = (v->status & ~VFW_MBX_STS_BUSY) | VFW_MBX_STS_REPLY;
    m->replies++;
    fire(m, 1 + vf, v->ctrl, &v->irq_pending);
}

static void pf_write(struct vfw_mbox *m, uint64_t addr, uint32_t v)
{
    if (in_words(addr, VFW_REG_PF_MBX_REPLY(0), VFW_MBX_MSG_WORDS)) {
        vfw_st_le32(m->reply + (addr - VFW_REG_PF_MBX_REPLY(0)), v);
        return;
    }
    switch (addr) {
    case VFW_REG_PF_MBX_SEL:
        m->sel = v;   /* checked at use: REQ reads 0, DOORBELL is ignored */
        break;
    case VFW_REG_PF_MBX_DOORBELL:
        pf_reply(m);
        break;
    case VFW_REG_PF_MBX_CTRL:
        m->ctrl = v & CTRL_MASK;
        if ((m->ctrl & VFW_MBX_CTRL_IRQ_EN) && m->irq_pending) {
            fire(m, 0, m->ctrl, &m->irq_pending);
        }
        break;
    default:
        break;        /* read-only or reserved */
    }
}

/* VF `vf` posts its MSG window as a request. */
static void vf_post(struct vfw_mbox *m, unsigned vf)
{
    struct vfw_mbox_vf *v = &m->vf[vf];

    if (v->status & VFW_MBX_STS_BUSY) {
        v->status |= VFW_MBX_STS_OVERRUN;
        return;
    }
    memcpy(v->posted, v->msg, sizeof(v->posted));
    v->status = VFW_MBX_STS_BUSY;
    m->pend[vf / 32] |= 1u << (vf % 32);
    m->requests++;
    fire(m, 0, m->ctrl, &m->irq_pending);
}

static void vf_write(struct vfw_mbox *m, unsigned vf, uint64_t addr,
                     uint32_t val)
{
    struct vfw_mbox_vf *v = &m->vf[vf];

    if (in_words(addr, VFW_REG_MBX_MSG(0), VFW_MBX_MSG_WORDS)) {
        vfw_st_le32(v->msg + (addr - VFW_REG_MBX_MSG(0)), val);
        return;
    }
    switch (addr) {
    case VFW_REG_MBX_DOORBELL:
        vf_post(m, vf);
        break;
    case VFW_REG_MBX_CTRL:
        v->ctrl = val & CTRL_MASK;
        if ((v->ctrl & VFW_MBX_CTRL_IRQ_EN) && v->irq_pending) {
            fire(m, 1 + vf, v->ctrl, &v->irq_pending);
        }
        break;
    default:
        break;
    }
}

bool vfw_mbox_write(struct vfw_mbox *m, unsigned fn, uint64_t addr,
                    uint64_t val, unsigned size)
{
    if (!decodes(m, fn, addr, size)) {
        return false;
    }
    if (fn == 0) {
        pf_write(m, addr, (uint32_t)val);
    } else {
        vf_write(m, fn - 1, addr, (uint32_t)val);
    }
    return true;
}
