/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_rnic_cmd.c - the verbs command queue under guest control. Every
 * input starts from two VFs with their command and event queues up and an
 * address set; fn 2 also has the standard objects and a listener (so that
 * CONNECT has a peer), fn 1 has nothing. The input then posts arbitrary
 * command descriptors (the opcode raw or picked from the valid ones) on
 * either function, fills page lists with valid, unaligned or foreign page
 * addresses, writes any guest memory (rings, page lists, private data),
 * writes and reads the RDMA window registers (ring base / length / tail /
 * enable, EQ set-up and consumer count), changes quotas, resets functions
 * and lets time pass.
 * Checks: no sanitizer finding, DMA only inside guest memory, usage never
 * above the quota.
 */
#include "fuzz_rnic_harness.h"

static const uint16_t opcodes[16] = {
    VFW_RCMD_NOP, VFW_RCMD_PD_ALLOC, VFW_RCMD_PD_FREE, VFW_RCMD_MR_REG,
    VFW_RCMD_MR_DEREG, VFW_RCMD_CQ_CREATE, VFW_RCMD_CQ_DESTROY,
    VFW_RCMD_QP_CREATE, VFW_RCMD_QP_MODIFY, VFW_RCMD_QP_DESTROY,
    VFW_RCMD_QP_QUERY, VFW_RCMD_SET_ADDR, VFW_RCMD_LISTEN,
    VFW_RCMD_UNLISTEN, VFW_RCMD_CONNECT, VFW_RCMD_ACCEPT,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct vfw_rnic *r = fz_begin();
    if (!r)
        return 0;
    bringup(r, 1);
    setup(r, 2);
    struct in in = { data, size };
    uint8_t op;
    for (unsigned steps = 0; steps < 256 && take(&in, &op, 1); steps++) {
        uint8_t fn = 0, b = 0;
        uint16_t off = 0;
        uint32_t v = 0;
        unsigned f = 1 + ((op >> 4) & 1);
        switch (op % 10) {
        case 0: case 1: case 2: {   /* a command descriptor */
            struct vfw_rcmd d;
            if (!take(&in, &b, 1) || !take(&in, &d, sizeof(d)))
                goto out;
            if (!(b & 0x80))
                d.opcode = opcodes[b % 16];
            if (b & 0x40)           /* the device writes these */
                d.flags = d.status = 0;
            if (op & 0x20)          /* REJECT is 16th: reach it too */
                d.opcode = b & 0x20 ? VFW_RCMD_REJECT : d.opcode;
            run_cmd(r, f, &d);
            if (op & 0x40)
                settle(r);
            break;
        }
        case 3: {                   /* page list entries from a menu */
            uint8_t n, sel[32];
            if (!take(&in, &off, 2) || !take(&in, &n, 1))
                goto out;
            n %= sizeof(sel);
            if (!take(&in, sel, n))
                goto out;
            for (unsigned i = 0; i < n; i++) {
                uint64_t a;
                switch (sel[i] >> 6) {
                case 0:  a = PAGES(f) + (uint64_t)(sel[i] % 48) * 0x1000; break;
                case 1:  a = PAGES(f) + (uint64_t)(sel[i] % 48) * 0x1000 + 8; break;
                case 2:  a = PAGES(3 - f) + (uint64_t)(sel[i] % 48) * 0x1000; break;
                default: a = (uint64_t)sel[i] << 56 | 0x1000; break;
                }
                uint32_t o = (uint32_t)(PGL(f) - FZ_BASE(f)) +
                             (uint32_t)(off % 1024 + i) * 8;
                if (o + 8 <= FZ_MEM)
                    memcpy(mem[f - 1] + o, &a, 8);
            }
            break;
        }
        case 4: {                   /* guest memory write */
            if (!take_mem_write(&in))
                goto out;
            break;
        }
        case 5:                     /* register write (any function) */
            if (!take(&in, &fn, 1) || !take(&in, &b, 1) || !take(&in, &v, 4))
                goto out;
            vfw_rnic_write(r, fn % 4, VFW_REGWIN_RDMA + (b % 64) * 4u, v, 4);
            if (op & 0x20)
                vfw_rnic_run(r);
            break;
        case 6: {                   /* register read */
            uint32_t x;
            if (!take(&in, &fn, 1) || !take(&in, &b, 1))
                goto out;
            vfw_rnic_read(r, fn % 4, VFW_REGWIN_RDMA + (b % 64) * 4u, 4, &x);
            break;
        }
        case 7: {                   /* quota */
            struct vfw_aq_rdma_quota q;
            if (!take(&in, &fn, 1) || !take(&in, &q, sizeof(q)))
                goto out;
            vfw_rnic_set_quota(r, fn % 3, &q);
            break;
        }
        case 8:                     /* function reset */
            if (!take(&in, &fn, 1))
                goto out;
            vfw_rnic_reset_fn(r, fn % 4);
            if (fn % 4 == 1 || fn % 4 == 2)
                tail[fn % 4 - 1] = 0;
            break;
        case 9:                     /* time */
            if (!take(&in, &v, 4))
                goto out;
            fz_now += (uint64_t)v * 1000;
            settle(r);
            break;
        }
        check_quota(r);
    }
out:
    settle(r);
    check_quota(r);
    fz_verbose(r);
    vfw_rnic_destroy(r);
    return 0;
}
