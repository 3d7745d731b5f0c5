/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_rnic_harness.h - what the RNIC fuzz targets share: two VFs (fn 1
 * and 2) with 256 KiB of guest memory each, wired to each other, DMA ops
 * that refuse everything outside a function's own memory, queue bring-up
 * and a standard object set made through valid commands.
 * Guest memory of fn f: RING (command ring, 16 descriptors), EQ (16
 * entries), PDATA (EQ private data slots), PGL (a page list of the 48 data
 * pages, reverse order), PAGES (48 pages). setup() makes PD 1, CQ 1 (page
 * list entry 0 = page 47: 16 CQEs, control block at +512), QP 1 (SQ: entry
 * 1 = page 46, RQ: entry 2 = page 45, depth 16), MR 1 (STag 0x100 | key,
 * iova 0x1000, entries 3..6 = pages 44..41) and a listener on port 5000.
 */
#ifndef FUZZ_RNIC_HARNESS_H
#define FUZZ_RNIC_HARNESS_H
#include <stdbool.h>
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
static uint32_t mr_stag[2];     /* the STag of each function's MR 1 */

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
static bool fz_kicked;          /* the device asked for another run */
static void fz_kick(void *o) { (void)o; fz_kicked = true; }
static void fz_timer(void *o, uint64_t w) { (void)o; (void)w; }
static const struct vfw_rnic_ops ops = { fz_rd, fz_wr, fz_irq, fz_out,
                                         fz_clock, fz_kick, fz_timer };

static void w32(struct vfw_rnic *r, unsigned fn, uint64_t a, uint32_t v)
{
    vfw_rnic_write(r, fn, a, v, 4);
}

/* Post d on fn's command ring and run; returns the status the device
 * wrote back (the descriptor as completed is left in *out if non-NULL). */
static uint16_t run_cmd_out(struct vfw_rnic *r, unsigned fn,
                            const struct vfw_rcmd *d, struct vfw_rcmd *out)
{
    uint8_t *slot = win(fn, RING(fn), 0) + tail[fn - 1] * VFW_RCQ_DESC_SIZE;
    memcpy(slot, d, sizeof(*d));
    tail[fn - 1] = (tail[fn - 1] + 1) % 16;
    w32(r, fn, VFW_REG_RCQ_TAIL, tail[fn - 1]);
    vfw_rnic_run(r);
    struct vfw_rcmd done;
    memcpy(&done, slot, sizeof(done));
    if (out)
        *out = done;
    return done.status;
}

static void run_cmd(struct vfw_rnic *r, unsigned fn, const struct vfw_rcmd *d)
{
    run_cmd_out(r, fn, d, NULL);
}

/* queues up and SET_ADDR 10.0.0.fn, MTU 1500 */
static void bringup(struct vfw_rnic *r, unsigned fn)
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
}

/* the standard objects (see the top), through valid commands */
static void objects(struct vfw_rnic *r, unsigned fn)
{
    struct vfw_rcmd d;
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
    struct vfw_rcmd done;
    run_cmd_out(r, fn, &d, &done);
    mr_stag[fn - 1] = done.u.mr_reg.stag;
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_LISTEN;
    d.u.listen.port = 5000;
    d.u.listen.backlog = 4;
    run_cmd(r, fn, &d);
}

static void setup(struct vfw_rnic *r, unsigned fn)
{
    bringup(r, fn);
    objects(r, fn);
}

/* A fresh adapter with two VFs whose shares are small (set before their
 * state exists): the engine's tables follow the quota, so an input does
 * not pay for tables at the device limits. Quota ops in the targets still
 * raise them up to the limits (vfw_engine_grow on a live function). */
static struct vfw_rnic *fz_begin(void)
{
    memset(mem, 0, sizeof(mem));
    fz_now = 1000000000ull;
    tail[0] = tail[1] = 0;
    struct vfw_rnic *r = vfw_rnic_create(&ops, NULL, 2);
    if (!r)
        return NULL;
    g_r = r;
    static const struct vfw_aq_rdma_quota small = {
        .qp = 4, .cq = 8, .mr = 16, .pd = 4, .mr_pages = 4096, .conn = 8 };
    vfw_rnic_set_quota(r, 0, &small);
    vfw_rnic_set_quota(r, 1, &small);
    return r;
}

/* run until the device has nothing more to do (bounded) */
static void settle(struct vfw_rnic *r)
{
    for (unsigned i = 0; i < 64; i++) {
        fz_kicked = false;
        vfw_rnic_run(r);
        if (!fz_kicked)
            break;
    }
}

/* FUZZ_RNIC_VERBOSE=1: each function's counters (seed debugging) */
static void fz_verbose(struct vfw_rnic *r)
{
    if (!getenv("FUZZ_RNIC_VERBOSE"))
        return;
    for (unsigned f = 1; f <= 2; f++) {
        fprintf(stderr, "fn %u:", f);
        for (unsigned k = 0; k < VFW_RSTAT_COUNT; k++)
            fprintf(stderr, " %llu",
                    (unsigned long long)vfw_rnic_stat(r, f, k));
        uint32_t prod = 0;
        vfw_rnic_read(r, f, VFW_REG_REQ_PROD, 4, &prod);
        fprintf(stderr, " eq_prod %u mr 0x%x\n", prod, mr_stag[f - 1]);
        for (unsigned i = 0; i < 16; i++) {   /* CQ 1 (page 47) */
            struct vfw_cqe_hw c;
            memcpy(&c, win(f, PAGES(f) + 47 * 0x1000ull, 0) + i * 32,
                   sizeof(c));
            if (c.owner & 1)
                fprintf(stderr, "  cqe %u: wr_id %llu op %u status %u len %u\n",
                        i, (unsigned long long)c.wr_id, c.opcode, c.status,
                        c.byte_len);
        }
    }
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

/* Input: u16 offset (8-byte units; bit 15 picks function 1 or 2's memory),
 * u8 length, the bytes; written to guest memory if they fit. false when
 * the input ran out. */
static bool take_mem_write(struct in *in)
{
    uint16_t off;
    uint8_t b, buf[256];
    if (!take(in, &off, 2) || !take(in, &b, 1) || !take(in, buf, b))
        return false;
    uint32_t o = (uint32_t)(off & 0x7fff) * 8;
    if (o + b <= FZ_MEM)
        memcpy(mem[off >> 15] + o, buf, b);
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

#endif
