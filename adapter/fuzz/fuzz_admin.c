/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_admin.c - the PF admin queue (src/dev/admin.c) under guest control: the
 * input is a script of BAR0 accesses to the admin window and NumVFs
 * changes, followed by a 4 KiB guest memory image (the ring). Checks that the
 * device never touches memory outside what the DMA ops allow and that every
 * VF config stays in range.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vfw_admin.h"

#define FZ_BASE 0x4000ull
#define FZ_MEM  4096u

static uint8_t mem[FZ_MEM];

static int fz_rd(void *o, uint64_t a, void *b, size_t n)
{
    (void)o;
    if (a < FZ_BASE || a - FZ_BASE > FZ_MEM || n > FZ_MEM - (a - FZ_BASE)) {
        return -1;
    }
    memcpy(b, mem + (a - FZ_BASE), n);
    return 0;
}

static int fz_wr(void *o, uint64_t a, const void *b, size_t n)
{
    (void)o;
    if (a < FZ_BASE || a - FZ_BASE > FZ_MEM || n > FZ_MEM - (a - FZ_BASE)) {
        return -1;
    }
    memcpy(mem + (a - FZ_BASE), b, n);
    return 0;
}

/* The RNIC's quota ops: the admin queue must only call them for an
 * enabled VF; the fuzzed status comes back as the command's. */
static struct vfw_admin *fz_a;
static uint32_t fz_quota_calls;

static int fz_qset(void *o, unsigned vf, const struct vfw_aq_rdma_quota *q)
{
    (void)o;
    if (vf >= fz_a->num_vfs || !q) {
        abort();
    }
    fz_quota_calls++;
    return (int)(q->qp % 7);    /* any status, including bogus ones */
}

static int fz_qget(void *o, unsigned vf, struct vfw_aq_rdma_quota *q,
                   struct vfw_aq_rdma_quota *used)
{
    (void)o;
    if (vf >= fz_a->num_vfs || !q || !used) {
        abort();
    }
    fz_quota_calls++;
    q->qp = vf;
    used->conn = fz_quota_calls;
    return (fz_quota_calls & 3) ? 0 : -22;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static struct vfw_admin a;
    struct vfw_admin_ops ops = { .dma_read = fz_rd, .dma_write = fz_wr };
    const uint8_t *script;
    size_t steps, n;

    if (size < 1) {
        return 0;
    }
    /* Byte 0: steps; then 7-byte steps (kind, offset, value LE u32, size);
     * the rest is the guest memory the ring lives in. */
    steps = data[0];
    script = data + 1;
    size -= 1;
    if (steps * 7 > size) {
        steps = size / 7;
    }
    n = size - steps * 7;
    memset(mem, 0, sizeof(mem));
    memcpy(mem, script + steps * 7, n < FZ_MEM ? n : FZ_MEM);
    /* half the inputs run without an RNIC (commands UNSUPPORTED) */
    if (n & 1) {
        ops.rdma_quota_set = fz_qset;
        ops.rdma_quota_get = fz_qget;
    }
    fz_a = &a;
    if (vfw_admin_init(&a, &ops, 128)) {
        abort();
    }
    for (const uint8_t *data = script; steps--; data += 7) {
        uint64_t addr = VFW_REGWIN_ADMINQ + data[1];
        uint32_t v = (uint32_t)data[2] | (uint32_t)data[3] << 8 |
                     (uint32_t)data[4] << 16 | (uint32_t)data[5] << 24;
        unsigned sz = data[6] & 4 ? 4 : data[6] & 7;
        uint32_t r;

        switch (data[0] & 3) {
        case 0:
            if (data[1] == 0) {  /* a convenient valid ring */
                v = (uint32_t)FZ_BASE;
            }
            vfw_admin_write(&a, addr, v, sz);
            break;
        case 1:
            vfw_admin_read(&a, addr, sz, &r);
            break;
        case 2:
            vfw_admin_set_num_vfs(&a, (uint16_t)v);
            break;
        default:
            vfw_admin_reset(&a);
            break;
        }
        if (a.head >= VFW_AQ_MAX_LEN || (a.len && a.head >= a.len &&
                                         (a.status & VFW_AQ_STATUS_ENABLED))) {
            abort();
        }
    }
    for (unsigned i = 0; i < 128; i++) {
        const struct vfw_vf_cfg *c = vfw_admin_vf_cfg(&a, i);

        if (c->vlan > 4095 || c->qos > 7 || c->link_state > 2 ||
            c->max_rate > VFW_UPLINK_SPEED_MBPS ||
            (c->max_rate && c->min_rate > c->max_rate) || (c->mac[0] & 1)) {
            abort();
        }
    }
    return 0;
}
