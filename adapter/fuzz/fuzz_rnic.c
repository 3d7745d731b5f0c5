/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_rnic.c - the RNIC device model (src/rnic*.c) under guest control:
 * register writes to the RDMA window, command descriptors in the verbs
 * command queue, guest memory contents (page lists, WQE rings, CQ control
 * blocks, private data), doorbells, input frames, function resets, quota
 * changes and time. Each input starts from a function with its queues up
 * and a PD, CQ, QP, MR and listener made through the command queue, so the
 * fuzzer reaches the WQE and doorbell paths at once.
 * Checks: no sanitizer finding, DMA only inside guest memory (the ops
 * refuse the rest; the device must cope), usage never above the quota.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vfw_rnic.h"

/* function f (1 or 2) owns [FZ_BASE(f), FZ_BASE(f) + FZ_MEM) */
#define FZ_BASE(f) (0x10000ull + ((uint64_t)(f) - 1) * 0x100000)
#define FZ_MEM  0x40000u
#define RING(f)    (FZ_BASE(f))
#define EQ(f)      (FZ_BASE(f) + 0x1000)
#define PDATA(f)   (FZ_BASE(f) + 0x2000)
#define PGL(f)     (FZ_BASE(f) + 0x4000)
#define PAGES(f)   (FZ_BASE(f) + 0x10000)    /* 48 pages of data */

static uint8_t mem[2][FZ_MEM];
static uint64_t fz_now;
static uint32_t tail[2];

static uint8_t *win(unsigned fn, uint64_t a, size_t n)
{
    if (fn < 1 || fn > 2 || a < FZ_BASE(fn) || a - FZ_BASE(fn) > FZ_MEM ||
        n > FZ_MEM - (a - FZ_BASE(fn)))
        return NULL;
    return mem[fn - 1] + (a - FZ_BASE(fn));
}
static int fz_rd(void *o, unsigned fn, uint64_t a, void *b, size_t n)
{
    (void)o;
    uint8_t *p = win(fn, a, n);
    if (!p)
        return -1;
    memcpy(b, p, n);
    return 0;
}
static int fz_wr(void *o, unsigned fn, uint64_t a, const void *b, size_t n)
{
    (void)o;
    uint8_t *p = win(fn, a, n);
    if (!p)
        return -1;
    memcpy(p, b, n);
    return 0;
}
static void fz_irq(void *o, unsigned fn, unsigned v) { (void)o; (void)fn; (void)v; }
static struct vfw_rnic *g_r;
/* fn 1 and fn 2 are wired to each other (the eswitch; rx only queues) */
static void fz_out(void *o, unsigned fn, const uint8_t *f, size_t n)
{
    (void)o;
    if (fn == 1 || fn == 2)
        vfw_rnic_rx_frame(g_r, 3 - fn, f, n);
}
static uint64_t fz_clock(void *o) { (void)o; return fz_now; }
static void fz_kick(void *o) { (void)o; }
static void fz_timer(void *o, uint64_t w) { (void)o; (void)w; }
static const struct vfw_rnic_ops ops = { fz_rd, fz_wr, fz_irq, fz_out,
                                         fz_clock, fz_kick, fz_timer };

static void w32(struct vfw_rnic *r, unsigned fn, uint64_t a, uint32_t v)
{
    vfw_rnic_write(r, fn, a, v, 4);
}

static void run_cmd(struct vfw_rnic *r, unsigned fn, const struct vfw_rcmd *d)
{
    memcpy(win(fn, RING(fn), 0) + tail[fn - 1] * VFW_RCQ_DESC_SIZE, d,
           sizeof(*d));
    tail[fn - 1] = (tail[fn - 1] + 1) % 16;
    w32(r, fn, VFW_REG_RCQ_TAIL, tail[fn - 1]);
    vfw_rnic_run(r);
}

static void setup(struct vfw_rnic *r, unsigned fn)
{
    const uint8_t mac[6] = { 2, 0, 0, 0, 0, (uint8_t)fn };
    vfw_rnic_set_mac(r, fn, mac);
    for (unsigned i = 0; i < 48; i++) {   /* scattered: reverse order */
        uint64_t p = PAGES(fn) + (uint64_t)(47 - i) * 0x1000;
        memcpy(win(fn, PGL(fn), 0) + 8 * i, &p, 8);
    }
    w32(r, fn, VFW_REG_RCQ_BASE_LO, (uint32_t)RING(fn));
    w32(r, fn, VFW_REG_RCQ_LEN, 16);
    w32(r, fn, VFW_REG_RCQ_CTRL, 1);
    w32(r, fn, VFW_REG_REQ_BASE_LO, (uint32_t)EQ(fn));
    w32(r, fn, VFW_REG_REQ_LEN, 16);
    w32(r, fn, VFW_REG_REQ_PDATA_LO, (uint32_t)PDATA(fn));
    w32(r, fn, VFW_REG_REQ_CTRL, 3 | 4u << 16);
    struct vfw_rcmd d;
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_SET_ADDR;
    memcpy(d.u.set_addr.ip, (uint8_t[]){ 10, 0, 0, (uint8_t)fn }, 4);
    d.u.set_addr.mtu = 1500;
    run_cmd(r, fn, &d);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_PD_ALLOC;
    run_cmd(r, fn, &d);                                   /* pd 1 */
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_CQ_CREATE;                    /* cq 1: page 0 */
    d.u.cq_create.depth = 16;
    d.u.cq_create.pgl = (struct vfw_pgl_ref){ PGL(fn), 1, 12, 0, 0 };
    run_cmd(r, fn, &d);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_QP_CREATE;                    /* qp 1: pages 1, 2 */
    d.u.qp_create.pd = 1;
    d.u.qp_create.send_cq = d.u.qp_create.recv_cq = 1;
    d.u.qp_create.sq_depth = d.u.qp_create.rq_depth = 16;
    d.u.qp_create.ord = d.u.qp_create.ird = 2;
    d.u.qp_create.sq = (struct vfw_pgl_ref){ PGL(fn) + 8, 1, 12, 0, 0 };
    d.u.qp_create.rq = (struct vfw_pgl_ref){ PGL(fn) + 16, 1, 12, 0, 0 };
    run_cmd(r, fn, &d);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_MR_REG;                       /* pages 3..6 */
    d.u.mr_reg.pd = 1;
    d.u.mr_reg.access = 7;
    d.u.mr_reg.iova = 0x1000;
    d.u.mr_reg.len = 0x4000;
    d.u.mr_reg.pgl = (struct vfw_pgl_ref){ PGL(fn) + 24, 4, 12, 0, 0 };
    run_cmd(r, fn, &d);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_LISTEN;
    d.u.listen.port = 5000;
    d.u.listen.backlog = 4;
    run_cmd(r, fn, &d);
}

struct in { const uint8_t *p; size_t n; };
static bool take(struct in *in, void *dst, size_t n)
{
    if (in->n < n)
        return false;
    memcpy(dst, in->p, n);
    in->p += n;
    in->n -= n;
    return true;
}

static void check_quota(struct vfw_rnic *r)
{
    for (unsigned vf = 0; vf < 2; vf++) {
        struct vfw_aq_rdma_quota q, u;
        if (vfw_rnic_get_quota(r, vf, &q, &u) != VFW_AQ_S_OK)
            abort();
        if (u.qp > q.qp || u.cq > q.cq || u.mr > q.mr || u.pd > q.pd ||
            u.mr_pages > q.mr_pages || u.conn > q.conn)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    memset(mem, 0, sizeof(mem));
    fz_now = 1000000000ull;
    tail[0] = tail[1] = 0;
    struct vfw_rnic *r = vfw_rnic_create(&ops, NULL, 2);
    if (!r)
        return 0;
    g_r = r;
    setup(r, 1);
    setup(r, 2);
    for (unsigned vf = 0; vf < 2; vf++) {
        /* the setup's commands are valid: they must all have worked */
        struct vfw_aq_rdma_quota q, u;
        vfw_rnic_get_quota(r, vf, &q, &u);
        if (u.pd != 1 || u.cq != 1 || u.qp != 1 || u.mr != 1 ||
            u.mr_pages != 4 || u.conn != 1)
            abort();
    }
    struct in in = { data, size };
    uint8_t op;
    for (unsigned steps = 0; steps < 256 && take(&in, &op, 1); steps++) {
        uint8_t fn = 0, b = 0;
        uint16_t off = 0;
        uint32_t v = 0;
        switch (op % 11) {
        case 0:                 /* register write */
            if (!take(&in, &fn, 1) || !take(&in, &b, 1) || !take(&in, &v, 4))
                goto out;
            vfw_rnic_write(r, fn % 4, VFW_REGWIN_RDMA + (b % 64) * 4u, v, 4);
            break;
        case 1: {               /* register read */
            uint32_t x;
            if (!take(&in, &fn, 1) || !take(&in, &b, 1))
                goto out;
            vfw_rnic_read(r, fn % 4, VFW_REGWIN_RDMA + (b % 64) * 4u, 4, &x);
            break;
        }
        case 2: {               /* guest memory write */
            uint8_t buf[256];
            if (!take(&in, &off, 2) || !take(&in, &b, 1) ||
                !take(&in, buf, b))
                goto out;
            uint32_t o = (uint32_t)(off & 0x7fff) * 8;
            if (o + b <= FZ_MEM)
                memcpy(mem[off >> 15] + o, buf, b);
            break;
        }
        case 3: {               /* a command descriptor (fn 1 or 2) */
            struct vfw_rcmd d;
            if (!take(&in, &fn, 1) || !take(&in, &d, sizeof(d)))
                goto out;
            run_cmd(r, 1 + (fn & 1), &d);
            break;
        }
        case 4:                 /* doorbell */
            if (!take(&in, &fn, 1) || !take(&in, &off, 2) || !take(&in, &v, 4))
                goto out;
            vfw_rnic_doorbell(r, fn % 4, off, v, 4);
            break;
        case 5:
            vfw_rnic_run(r);
            break;
        case 6: {               /* input frame */
            uint8_t f[1600];
            if (!take(&in, &fn, 1) || !take(&in, &off, 2))
                goto out;
            off %= sizeof(f);
            if (!take(&in, f, off))
                goto out;
            vfw_rnic_rx_frame(r, fn % 4, f, off);
            break;
        }
        case 7:
            if (!take(&in, &fn, 1))
                goto out;
            vfw_rnic_reset_fn(r, fn % 4);
            break;
        case 8: {
            struct vfw_aq_rdma_quota q;
            if (!take(&in, &fn, 1) || !take(&in, &q, sizeof(q)))
                goto out;
            vfw_rnic_set_quota(r, fn % 3, &q);
            break;
        }
        case 9:
            if (!take(&in, &v, 4))
                goto out;
            fz_now += (uint64_t)v * 1000;
            break;
        case 10: {              /* a WQE into QP 1's ring + its doorbell */
            struct vfw_wqe w;
            if (!take(&in, &b, 1) || !take(&in, &w, sizeof(w)))
                goto out;
            unsigned f = 1 + ((b >> 6) & 1);
            bool sq = b & 0x80;
            unsigned slot = b & 15;
            uint64_t page = PAGES(f) + (uint64_t)(47 - (sq ? 1 : 2)) * 0x1000;
            memcpy(win(f, page, 0) + slot * VFW_WQE_SIZE, &w, sizeof(w));
            vfw_rnic_doorbell(r, f, sq ? VFW_DB_SQ : VFW_DB_RQ,
                              1u | (uint32_t)(slot + 1) << 16, 4);
            vfw_rnic_run(r);
            break;
        }
        }
        check_quota(r);
    }
out:
    vfw_rnic_run(r);
    check_quota(r);
    if (getenv("FUZZ_RNIC_VERBOSE")) {    /* seed debugging */
        for (unsigned f = 1; f <= 2; f++) {
            fprintf(stderr, "fn %u:", f);
            for (unsigned k = 0; k < VFW_RSTAT_COUNT; k++)
                fprintf(stderr, " %llu",
                        (unsigned long long)vfw_rnic_stat(r, f, k));
            uint32_t prod = 0;
            vfw_rnic_read(r, f, VFW_REG_REQ_PROD, 4, &prod);
            fprintf(stderr, " eq_prod %u\n", prod);
        }
    }
    vfw_rnic_destroy(r);
    return 0;
}
