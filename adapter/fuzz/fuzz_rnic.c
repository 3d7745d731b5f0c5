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
#include "fuzz_rnic_harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vfw_rnic *r = fz_begin();
    if (!r)
        return 0;
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
            if (!take_mem_write(&in))
                goto out;
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
    fz_verbose(r);
    vfw_rnic_destroy(r);
    return 0;
}
