/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_rnic_wqe.c - WQE parsing and the data path under guest control.
 * Every input starts from two VFs whose QP 1s are connected to each other
 * (fn 1 CONNECTs to fn 2's listener, fn 2 ACCEPTs; all through valid
 * commands; the set-up is checked), each with a PD, CQ 1 (16 CQEs) and MR
 * 1 over four scattered pages. The input then writes arbitrary WQEs into
 * either ring and rings doorbells (in order or with any producer index,
 * from any doorbell page), moves the CQ consumer counts, arms CQs, writes
 * guest memory (data pages, rings, page lists), injects frames, lets time
 * pass, and issues a few object commands (QP_MODIFY, MR_REG/DEREG, ...).
 * Checks: no sanitizer finding, DMA only inside guest memory, usage never
 * above the quota.
 */
#include "fuzz_rnic_harness.h"

#define SQ_PAGE(f)  (PAGES(f) + 46 * 0x1000ull)
#define RQ_PAGE(f)  (PAGES(f) + 45 * 0x1000ull)
#define CQ_CTRL(f)  (PAGES(f) + 47 * 0x1000ull + 16 * VFW_CQE_SIZE)

static uint16_t pi[2][2];       /* producer index: [fn - 1][sq] */

static const struct vfw_eqe *find_eqe(unsigned fn, uint8_t type)
{
    for (unsigned i = 0; i < 16; i++) {
        const struct vfw_eqe *e =
            (const void *)(win(fn, EQ(fn), 0) + i * VFW_EQE_SIZE);
        if (e->type == type)
            return e;
    }
    return NULL;
}

/* fn 1 QP 1 -> fn 2 port 5000, accepted with fn 2 QP 1 */
static void connect_pair(struct vfw_rnic *r)
{
    struct vfw_rcmd d;
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_CONNECT;
    d.u.connect.qp = 1;
    memcpy(d.u.connect.lip, (uint8_t[]){ 10, 0, 0, 1 }, 4);
    memcpy(d.u.connect.rip, (uint8_t[]){ 10, 0, 0, 2 }, 4);
    d.u.connect.rport = 5000;
    memcpy(d.u.connect.dmac, (uint8_t[]){ 2, 0, 0, 0, 0, 2 }, 6);
    d.u.connect.ord = d.u.connect.ird = 2;
    d.u.connect.mpa_rev = 2;
    d.u.connect.flags = VFW_CONN_F_CRC;
    if (run_cmd_out(r, 1, &d, NULL) != VFW_RCMD_S_OK)
        abort();
    settle(r);
    const struct vfw_eqe *req = find_eqe(2, VFW_EQE_CONNECT_REQUEST);
    if (!req)
        abort();
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_RCMD_ACCEPT;
    d.u.accept.cep = req->obj;
    d.u.accept.qp = 1;
    d.u.accept.ord = d.u.accept.ird = 2;
    if (run_cmd_out(r, 2, &d, NULL) != VFW_RCMD_S_OK)
        abort();
    settle(r);
    const struct vfw_eqe *rep = find_eqe(1, VFW_EQE_CONNECT_REPLY);
    if (!rep || rep->status != VFW_CM_S_OK ||
        !find_eqe(2, VFW_EQE_ESTABLISHED))
        abort();
}

/* commands that act on the set-up objects (the rest is fuzz_rnic_cmd's) */
static const uint16_t obj_ops[] = {
    VFW_RCMD_QP_MODIFY, VFW_RCMD_QP_QUERY, VFW_RCMD_QP_DESTROY,
    VFW_RCMD_MR_REG, VFW_RCMD_MR_DEREG, VFW_RCMD_CQ_DESTROY,
    VFW_RCMD_PD_FREE, VFW_RCMD_NOP,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vfw_rnic *r = fz_begin();
    if (!r)
        return 0;
    memset(pi, 0, sizeof(pi));
    setup(r, 1);
    setup(r, 2);
    connect_pair(r);
    struct in in = { data, size };
    uint8_t op;
    for (unsigned steps = 0; steps < 256 && take(&in, &op, 1); steps++) {
        uint8_t b = 0;
        uint16_t off = 0;
        uint32_t v = 0;
        unsigned f = 1 + ((op >> 4) & 1);
        switch (op % 10) {
        case 0: case 1: {       /* a WQE at the producer index, doorbell */
            struct vfw_wqe w;
            if (!take(&in, &w, sizeof(w)))
                goto out;
            bool sq = op & 0x20;
            uint16_t *p = &pi[f - 1][sq];
            if (op & 0x80) {    /* aim at the MRs: own for SGEs, peer's */
                unsigned n = w.num_sge % (VFW_RDMA_MAX_SGE + 1);
                for (unsigned i = 0; i < n && !(w.flags & VFW_WQE_F_INLINE);
                     i++) {
                    w.u.sge[i].lkey = mr_stag[f - 1];
                    w.u.sge[i].addr = 0x1000 + w.u.sge[i].addr % 0x4000;
                    w.u.sge[i].len %= 0x2000;
                }
                w.opcode %= 6;
                if (w.opcode == VFW_WQE_OP_RDMA_WRITE ||
                    w.opcode == VFW_WQE_OP_RDMA_READ) {
                    w.remote_stag = mr_stag[2 - f];
                    w.remote_addr = 0x1000 + w.remote_addr % 0x4000;
                } else {
                    w.remote_stag = 0;
                    w.remote_addr = 0;
                }
                if (!sq)        /* a receive has SGEs only */
                    w.opcode = w.flags = 0;
            }
            memcpy(win(f, sq ? SQ_PAGE(f) : RQ_PAGE(f), 0) +
                   (*p % 16) * VFW_WQE_SIZE, &w, sizeof(w));
            (*p)++;
            vfw_rnic_doorbell(r, f, sq ? VFW_DB_SQ : VFW_DB_RQ,
                              1u | (uint32_t)*p << VFW_DB_PI_SHIFT, 4);
            if (op & 0x40)
                vfw_rnic_run(r);
            break;
        }
        case 2: {               /* a short WQE: only the head, sge 0 */
            uint8_t h[40];
            if (!take(&in, h, sizeof(h)))
                goto out;
            bool sq = op & 0x20;
            uint16_t *p = &pi[f - 1][sq];
            uint8_t *slot = win(f, sq ? SQ_PAGE(f) : RQ_PAGE(f), 0) +
                            (*p % 16) * VFW_WQE_SIZE;
            memset(slot, 0, VFW_WQE_SIZE);
            memcpy(slot, h, sizeof(h));
            (*p)++;
            vfw_rnic_doorbell(r, f, sq ? VFW_DB_SQ : VFW_DB_RQ,
                              1u | (uint32_t)*p << VFW_DB_PI_SHIFT, 4);
            vfw_rnic_run(r);
            break;
        }
        case 3: {               /* any doorbell: fn, page, register, value */
            uint8_t fn;
            if (!take(&in, &fn, 1) || !take(&in, &off, 2) || !take(&in, &v, 4))
                goto out;
            vfw_rnic_doorbell(r, fn % 4, off, v, 4);
            if (op & 0x40)
                vfw_rnic_run(r);
            break;
        }
        case 4:                 /* CQ consumer count (+ arm) */
            if (!take(&in, &v, 4))
                goto out;
            memcpy(win(f, CQ_CTRL(f), 0), &v, 4);
            if (op & 0x20)
                vfw_rnic_doorbell(r, f, VFW_DB_CQ,
                                  1u | (op & 0x40 ? VFW_DB_CQ_ARM_SOLICITED
                                                  : VFW_DB_CQ_ARM_NEXT), 4);
            vfw_rnic_run(r);
            break;
        case 5: {               /* guest memory: any byte of the function */
            uint8_t buf[128];
            if (!take(&in, &off, 2) || !take(&in, &b, 1) ||
                !take(&in, buf, b % sizeof(buf)))
                goto out;
            uint32_t o = (uint32_t)off * 4;
            if (o + b % sizeof(buf) <= FZ_MEM)
                memcpy(mem[f - 1] + o, buf, b % sizeof(buf));
            break;
        }
        case 6:
            vfw_rnic_run(r);
            break;
        case 7:                 /* time */
            if (!take(&in, &v, 4))
                goto out;
            fz_now += (uint64_t)v * 1000;
            vfw_rnic_run(r);
            break;
        case 8: {               /* input frame */
            uint8_t fr[1600];
            if (!take(&in, &off, 2))
                goto out;
            off %= sizeof(fr);
            if (!take(&in, fr, off))
                goto out;
            vfw_rnic_rx_frame(r, f, fr, off);
            vfw_rnic_run(r);
            break;
        }
        case 9: {               /* an object command */
            struct vfw_rcmd d;
            if (!take(&in, &b, 1) || !take(&in, &d.u, sizeof(d.u)))
                goto out;
            d.opcode = obj_ops[b % (sizeof(obj_ops) / sizeof(obj_ops[0]))];
            d.flags = d.status = d.rsvd0 = 0;
            d.cookie = d.rsvd1 = 0;
            run_cmd(r, f, &d);
            break;
        }
        }
        check_quota(r);
    }
out:
    vfw_rnic_run(r);
    check_quota(r);
    fz_verbose(r);
    vfw_rnic_destroy(r);
    return 0;
}
