/* SPDX-License-Identifier: GPL-2.0-or-later */
/* fuzz_common_iwarp.h - a bounded fake function memory and a sink LLP for
 * the iWARP fuzz targets. */
#ifndef FUZZ_COMMON_IWARP_H
#define FUZZ_COMMON_IWARP_H
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "vfw_engine.h"

#define FZ_BASE 0x10000ull
#define FZ_MEM  65536u

struct fz {
    uint8_t mem[FZ_MEM];
    uint64_t now;
    struct vfw_engine *e;
    uint32_t cep, qp, pd, cq;
    int conn;                 /* dummy conn object */
    size_t sent;
    uint32_t calls;
    int accept;
};

static int fz_dma_read(void *o, uint16_t f, uint64_t a, void *b, size_t n)
{
    struct fz *z = o;
    (void)f;
    if (a < FZ_BASE || a - FZ_BASE > FZ_MEM || n > FZ_MEM - (a - FZ_BASE))
        abort();          /* the engine must never ask outside an MR */
    memcpy(b, z->mem + (a - FZ_BASE), n);
    return 0;
}
static int fz_dma_write(void *o, uint16_t f, uint64_t a, const void *b,
                        size_t n)
{
    struct fz *z = o;
    (void)f;
    if (a < FZ_BASE || a - FZ_BASE > FZ_MEM || n > FZ_MEM - (a - FZ_BASE))
        abort();
    memcpy(z->mem + (a - FZ_BASE), b, n);
    return 0;
}
static uint64_t fz_now(void *o) { return ((struct fz *)o)->now; }
static void fz_cm(void *o, const struct vfw_cm_event *ev)
{
    struct fz *z = o;
    if (ev->type == VFW_CM_CONNECT_REQUEST && z->accept) {
        struct vfw_conn_param p = { .mpa_rev = 2, .p2p = 1, .crc = 0 };
        if (z->accept == 2)
            vfw_reject(z->e, ev->cep_id, NULL, 0);
        else
            vfw_accept(z->e, ev->cep_id, z->qp, &p);
    }
}

static int fl_send(void *c, const uint8_t *d, size_t n)
{
    (void)d;
    struct fz *z = c;
    if (n > 1460)
        abort();          /* FPDU alignment: never above the MSS */
    z->sent += n;
    return (++z->calls % 61) == 0 ? -EAGAIN : 0;  /* occasional backpressure */
}
static size_t fl_space(void *c) { (void)c; return 65536; }
static uint16_t fl_mss(void *c) { (void)c; return 1460; }
static void fl_nop(void *c) { (void)c; }
static const struct vfw_llp_ops fz_llp = { fl_send, fl_space, fl_mss, fl_nop,
                                           fl_nop, fl_nop };

/* Engine with one PD, MRs of every flavour over the fake memory, a CQ and
 * a QP; receive and send WRs posted so that every opcode has state. */
static int fz_setup(struct fz *z)
{
    struct vfw_engine_ops ops = { .opaque = z, .dma_read = fz_dma_read,
        .dma_write = fz_dma_write, .cm_event = fz_cm, .now_ns = fz_now };
    struct vfw_engine_config cfg = { .func_id = 3, .max_mr = 16, .max_qp = 2,
                                     .max_cq = 2, .max_pd = 2 };
    z->e = vfw_engine_new(&ops, &cfg);
    if (!z->e)
        return -1;
    uint32_t st;
    vfw_pd_alloc(z->e, &z->pd);
    /* STags 0x101.., deterministic: full, read-only, write-only, small */
    vfw_mr_reg(z->e, z->pd, FZ_BASE, FZ_MEM, 7, &st);
    vfw_mr_reg(z->e, z->pd, FZ_BASE, 4096, VFW_ACC_REMOTE_READ, &st);
    vfw_mr_reg(z->e, z->pd, FZ_BASE + 4096, 4096, 3, &st);
    vfw_mr_reg(z->e, z->pd, FZ_BASE + 100, 16, 7, &st);
    /* 0x501: a page-list MR, TOs 0x7f0000000800.. over four scrambled
     * pages (the last one partly outside the fake memory: DMA faults) */
    static const uint64_t pgs[4] = { FZ_BASE + 3 * 4096, FZ_BASE + 15 * 4096,
                                     FZ_BASE + 4096, FZ_BASE + 16 * 4096 };
    vfw_mr_reg_pages(z->e, z->pd, 0x7f0000000800ull, 3 * 4096 + 0x100, 7, 12,
                     pgs, 4, &st);
    vfw_cq_create(z->e, 64, &z->cq);
    struct vfw_qp_attr a = { .pd_id = z->pd, .send_cq = z->cq,
        .recv_cq = z->cq, .sq_depth = 16, .rq_depth = 16, .ord = 4, .ird = 4,
        .max_sge = 4 };
    return vfw_qp_create(z->e, &a, &z->qp);
}

static void fz_post(struct fz *z)
{
    for (int i = 0; i < 4; i++) {
        struct vfw_recv_wr r = { .wr_id = (uint64_t)i, .num_sge = 3,
            .sge = { { 0x101, 1000, FZ_BASE + 8192 }, { 0x101, 3000, FZ_BASE },
                     { 0x501, 9000, 0x7f0000000900ull } } };
        vfw_post_recv(z->e, z->qp, &r);
    }
    struct vfw_send_wr rd = { .wr_id = 9, .opcode = VFW_WR_RDMA_READ,
        .num_sge = 1, .sge = { { 0x101, 5000, FZ_BASE + 20000 } },
        .remote_stag = 0x1234, .remote_addr = 0 };
    vfw_post_send(z->e, z->qp, &rd);
    vfw_post_send(z->e, z->qp, &rd);
}

static void fz_drain(struct fz *z)
{
    struct vfw_cqe c[64];
    while (vfw_cq_poll(z->e, z->cq, c, 64) > 0)
        ;
}
#endif
