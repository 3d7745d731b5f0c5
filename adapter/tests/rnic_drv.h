/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rnic_drv.h - a simulated host for RNIC tests and the fuzzer: a flat
 * "guest memory" per side with bounds-checked DMA, a simulated clock, and
 * a tiny driver that talks to the device only as a real one would: BAR0
 * registers, command descriptors in a ring, WQEs in rings, doorbells, and
 * EQEs/CQEs read from memory by their owner bits.
 */
#ifndef RNIC_DRV_H
#define RNIC_DRV_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "vfw_rnic.h"

#define GM_BASE  0x100000ull
#define GM_SIZE  (8u << 20)
#define PG       4096u

static uint64_t sim_now = 1000000000ull;

struct side {
    struct vfw_rnic *r;
    unsigned fn;
    uint8_t *mem;
    uint64_t brk;             /* bump allocator in guest memory */
    struct side *peer;
    unsigned peer_fn;
    uint8_t mac[6];
    uint32_t ip;
    unsigned irqs, last_vec, kicks, frames_out;
    unsigned long dma_ops;    /* DMA reads and writes the device asked */
    bool drop_out;            /* cable cut */
    /* a middlebox on the cable: rewrites a copy of each frame sent (the
     * device's own buffer stays untouched), NULL none */
    void (*mangle_out)(uint8_t *frame, size_t len);
    /* IPv4 TCP frames sent: how many, the TOS of the first and the last,
     * and the AND / OR of all of them */
    unsigned tcp_out;
    uint8_t tos_first, tos_last, tos_and, tos_or;
    /* driver state */
    uint64_t rcq, eq, eq_pdata;
    uint32_t rcq_tail, eq_cons;
    uint32_t cookie;
    uint8_t mangled[14 + 4 + 9216];   /* mangle_out's copy */
};

static uint8_t *gm(struct side *s, uint64_t a) { return s->mem + (a - GM_BASE); }

static int sd_dma_read(void *ctx, unsigned fn, uint64_t a, void *b, size_t n)
{
    struct side *s = ctx;
    s->dma_ops++;
    if (fn != s->fn || a < GM_BASE || n > GM_SIZE ||
        a - GM_BASE > GM_SIZE - n)
        return -1;
    memcpy(b, gm(s, a), n);
    return 0;
}
static int sd_dma_write(void *ctx, unsigned fn, uint64_t a, const void *b,
                        size_t n)
{
    struct side *s = ctx;
    s->dma_ops++;
    if (fn != s->fn || a < GM_BASE || n > GM_SIZE ||
        a - GM_BASE > GM_SIZE - n)
        return -1;
    memcpy(gm(s, a), b, n);
    return 0;
}
static void sd_irq(void *ctx, unsigned fn, unsigned vec)
{
    struct side *s = ctx;
    (void)fn;
    s->irqs++;
    s->last_vec = vec;
}
static void sd_frame_out(void *ctx, unsigned fn, const uint8_t *f, size_t n)
{
    struct side *s = ctx;
    (void)fn;
    s->frames_out++;
    if (n >= 34 && f[12] == 0x08 && f[13] == 0 && f[23] == 6) {
        if (!s->tcp_out++) {
            s->tos_first = s->tos_and = f[15];
        }
        s->tos_last = f[15];
        s->tos_and &= f[15];
        s->tos_or |= f[15];
    }
    if (!s->peer || s->drop_out)
        return;
    if (s->mangle_out && n <= sizeof(s->mangled)) {
        memcpy(s->mangled, f, n);
        s->mangle_out(s->mangled, n);
        f = s->mangled;
    }
    vfw_rnic_rx_frame(s->peer->r, s->peer_fn, f, n);
}
static uint64_t sd_now(void *ctx) { (void)ctx; return sim_now; }
static void sd_kick(void *ctx) { ((struct side *)ctx)->kicks++; }
static void sd_timer(void *ctx, uint64_t when) { (void)ctx; (void)when; }

static const struct vfw_rnic_ops sd_ops = {
    sd_dma_read, sd_dma_write, sd_irq, sd_frame_out, sd_now, sd_kick,
    sd_timer,
};

static uint64_t g_alloc(struct side *s, uint64_t n, uint64_t align)
{
    uint64_t a = (s->brk + align - 1) & ~(align - 1);
    if (a + n > GM_BASE + GM_SIZE)
        abort();
    s->brk = a + n;
    memset(gm(s, a), 0, n);
    return a;
}

static void reg_w(struct side *s, uint64_t a, uint32_t v)
{
    vfw_rnic_write(s->r, s->fn, a, v, 4);
}
static uint32_t reg_r(struct side *s, uint64_t a)
{
    uint32_t v = 0xdeadbeef;
    vfw_rnic_read(s->r, s->fn, a, 4, &v);
    return v;
}

static void pump(struct side *a, struct side *b, unsigned n)
{
    for (unsigned i = 0; i < n; i++) {
        vfw_rnic_run(a->r);
        if (b && b->r != a->r)
            vfw_rnic_run(b->r);
        sim_now += 200000;     /* 200 us */
    }
}

/* Queues: RCQ of 16, EQ of 64 with pdata slots. */
static void drv_start(struct side *s)
{
    s->brk = GM_BASE + PG;
    s->rcq = g_alloc(s, 16 * VFW_RCQ_DESC_SIZE, PG);
    s->eq = g_alloc(s, 64 * VFW_EQE_SIZE, PG);
    s->eq_pdata = g_alloc(s, 64 * VFW_EQ_PDATA_SLOT, PG);
    reg_w(s, VFW_REG_RCQ_BASE_LO, (uint32_t)s->rcq);
    reg_w(s, VFW_REG_RCQ_BASE_HI, (uint32_t)(s->rcq >> 32));
    reg_w(s, VFW_REG_RCQ_LEN, 16);
    reg_w(s, VFW_REG_RCQ_CTRL, VFW_RCQ_CTRL_ENABLE);
    reg_w(s, VFW_REG_REQ_BASE_LO, (uint32_t)s->eq);
    reg_w(s, VFW_REG_REQ_BASE_HI, 0);
    reg_w(s, VFW_REG_REQ_LEN, 64);
    reg_w(s, VFW_REG_REQ_PDATA_LO, (uint32_t)s->eq_pdata);
    reg_w(s, VFW_REG_REQ_PDATA_HI, 0);
    reg_w(s, VFW_REG_REQ_CTRL, VFW_REQ_CTRL_ENABLE | VFW_REQ_CTRL_IRQ_EN |
                               (4u << VFW_REQ_CTRL_VEC_SHIFT));
    s->rcq_tail = 0;
    s->eq_cons = 0;
}

/* Put a command in the ring without ringing or running; its address. */
static uint64_t cmd_put(struct side *s, struct vfw_rcmd *d)
{
    uint64_t a = s->rcq + (uint64_t)s->rcq_tail * VFW_RCQ_DESC_SIZE;
    d->cookie = ++s->cookie;
    d->flags = 0;
    d->status = 0;
    memcpy(gm(s, a), d, sizeof(*d));
    s->rcq_tail = (s->rcq_tail + 1) % 16;
    return a;
}

/* Run one command; *d gets the written-back descriptor. Returns the
 * status, or -1 if the device never completed it. */
static int cmd(struct side *s, struct vfw_rcmd *d)
{
    uint64_t a = cmd_put(s, d);
    reg_w(s, VFW_REG_RCQ_TAIL, s->rcq_tail);
    for (int i = 0; i < 50; i++) {
        vfw_rnic_run(s->r);
        struct vfw_rcmd out;
        memcpy(&out, gm(s, a), sizeof(out));
        if (out.flags & VFW_RCMD_F_DONE) {
            if (out.cookie != d->cookie)
                return -2;
            *d = out;
            return out.status;
        }
    }
    return -1;
}

/* Next EQE if the owner bit says it is new (consumes it). */
static bool eq_poll(struct side *s, struct vfw_eqe *e, uint8_t *pdata)
{
    uint32_t idx = s->eq_cons % 64;
    struct vfw_eqe x;
    memcpy(&x, gm(s, s->eq + idx * VFW_EQE_SIZE), sizeof(x));
    if ((x.owner & 1) != (((s->eq_cons / 64) & 1) ^ 1))
        return false;
    *e = x;
    if (pdata)
        memcpy(pdata, gm(s, s->eq_pdata + idx * VFW_EQ_PDATA_SLOT),
               x.pdata_len);
    s->eq_cons++;
    reg_w(s, VFW_REG_REQ_CONS, s->eq_cons);
    return true;
}

/* Pump until an EQE of `type` arrives (others are skipped into *skipped). */
static bool eq_wait(struct side *s, struct side *o, uint8_t type,
                    struct vfw_eqe *e, uint8_t *pdata)
{
    for (int i = 0; i < 2000; i++) {
        while (eq_poll(s, e, pdata))
            if (e->type == type)
                return true;
        pump(s, o, 1);
    }
    return false;
}

/* A ring / MR in scattered pages: npages pages allocated with a gap page
 * between them and in reverse order; the page list is stored in guest
 * memory too. */
struct g_buf {
    uint64_t pages[64];
    uint32_t npages;
    uint64_t pgl;             /* guest address of the page list */
};

static void g_scatter(struct side *s, struct g_buf *b, uint32_t npages)
{
    b->npages = npages;
    uint64_t base = g_alloc(s, (uint64_t)2 * npages * PG, PG);
    for (uint32_t i = 0; i < npages; i++)
        b->pages[i] = base + (uint64_t)2 * (npages - 1 - i) * PG;
    b->pgl = g_alloc(s, 8 * npages, 8);
    memcpy(gm(s, b->pgl), b->pages, 8 * npages);
}

/* Byte k of a scattered buffer (from its start, page 0 offset 0). */
static uint8_t *g_byte(struct side *s, struct g_buf *b, uint64_t k)
{
    return gm(s, b->pages[k / PG] + k % PG);
}
static void g_put(struct side *s, struct g_buf *b, uint64_t off,
                  const void *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        *g_byte(s, b, off + i) = ((const uint8_t *)src)[i];
}
static void g_get(struct side *s, struct g_buf *b, uint64_t off, void *dst,
                  size_t n)
{
    for (size_t i = 0; i < n; i++)
        ((uint8_t *)dst)[i] = *g_byte(s, b, off + i);
}

static struct vfw_pgl_ref g_ref(const struct g_buf *b, uint16_t off)
{
    struct vfw_pgl_ref r = { .pgl_addr = b->pgl, .npages = b->npages,
                             .page_shift = 12, .offset = off };
    return r;
}

/* Driver view of a CQ / QP. */
struct d_cq { uint32_t id, depth, cons; struct g_buf ring; };
struct d_qp {
    uint32_t id, sq_depth, rq_depth;
    uint16_t sq_pi, rq_pi, db_page;
    struct g_buf sq, rq;
};

static int cq_make(struct side *s, struct d_cq *c, uint32_t depth,
                   uint16_t db_page)
{
    c->depth = depth;
    c->cons = 0;
    g_scatter(s, &c->ring, (depth * VFW_CQE_SIZE + VFW_CQ_CTRL_SIZE + PG - 1) / PG);
    struct vfw_rcmd d = { .opcode = VFW_RCMD_CQ_CREATE };
    d.u.cq_create.depth = depth;
    d.u.cq_create.db_page = db_page;
    d.u.cq_create.pgl = g_ref(&c->ring, 0);
    int st = cmd(s, &d);
    c->id = d.u.cq_create.cq;
    return st;
}

static bool cq_poll(struct side *s, struct d_cq *c, struct vfw_cqe_hw *e)
{
    uint32_t idx = c->cons % c->depth;
    struct vfw_cqe_hw x;
    g_get(s, &c->ring, (uint64_t)idx * VFW_CQE_SIZE, &x, sizeof(x));
    if ((x.owner & 1) != (((c->cons / c->depth) & 1) ^ 1))
        return false;
    *e = x;
    c->cons++;
    uint8_t b[4] = { (uint8_t)c->cons, (uint8_t)(c->cons >> 8),
                     (uint8_t)(c->cons >> 16), (uint8_t)(c->cons >> 24) };
    g_put(s, &c->ring, (uint64_t)c->depth * VFW_CQE_SIZE, b, 4);
    return true;
}

static bool cq_wait(struct side *s, struct side *o, struct d_cq *c,
                    struct vfw_cqe_hw *e)
{
    for (int i = 0; i < 2000; i++) {
        if (cq_poll(s, c, e))
            return true;
        pump(s, o, 1);
    }
    return false;
}

static int qp_make(struct side *s, struct d_qp *q, uint32_t pd,
                   uint32_t scq, uint32_t rcq, uint32_t depth,
                   uint16_t db_page)
{
    memset(q, 0, sizeof(*q));
    q->sq_depth = q->rq_depth = depth;
    q->db_page = db_page;
    g_scatter(s, &q->sq, (depth * VFW_WQE_SIZE + PG - 1) / PG);
    g_scatter(s, &q->rq, (depth * VFW_WQE_SIZE + PG - 1) / PG);
    struct vfw_rcmd d = { .opcode = VFW_RCMD_QP_CREATE };
    struct vfw_rcmd_qp_create *c = &d.u.qp_create;
    c->pd = pd;
    c->send_cq = scq;
    c->recv_cq = rcq;
    c->sq_depth = c->rq_depth = depth;
    c->ord = c->ird = 4;
    c->db_page = db_page;
    c->sq = g_ref(&q->sq, 0);
    c->rq = g_ref(&q->rq, 0);
    int st = cmd(s, &d);
    q->id = c->qp;
    return st;
}

static void post(struct side *s, struct d_qp *q, bool sq,
                 const struct vfw_wqe *w, uint16_t page)
{
    uint16_t *pi = sq ? &q->sq_pi : &q->rq_pi;
    uint32_t depth = sq ? q->sq_depth : q->rq_depth;
    g_put(s, sq ? &q->sq : &q->rq, (uint64_t)(*pi % depth) * VFW_WQE_SIZE, w,
          sizeof(*w));
    (*pi)++;
    vfw_rnic_doorbell(s->r, s->fn, (uint64_t)page * VFW_DB_PAGE_SIZE +
                      (sq ? VFW_DB_SQ : VFW_DB_RQ),
                      q->id | (uint32_t)*pi << VFW_DB_PI_SHIFT, 4);
}

static int mr_make(struct side *s, uint32_t pd, struct g_buf *b,
                   uint32_t npages, uint32_t access, uint32_t *stag)
{
    g_scatter(s, b, npages);
    struct vfw_rcmd d = { .opcode = VFW_RCMD_MR_REG };
    d.u.mr_reg.pd = pd;
    d.u.mr_reg.access = access;
    /* VA-based TO: the "user VA" of the buffer */
    d.u.mr_reg.iova = 0x7f0000000000ull;
    d.u.mr_reg.len = (uint64_t)npages * PG;
    d.u.mr_reg.pgl = g_ref(b, 0);
    int st = cmd(s, &d);
    *stag = d.u.mr_reg.stag;
    return st;
}

#endif /* RNIC_DRV_H */
