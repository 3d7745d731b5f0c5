/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_func.c - the PF/VF register files (src/dev/func.c): identification
 * block on every function, FUNC_INFO per VF, per-function SCRATCH, reset
 * semantics (function reset vs adapter reset), and guest-controlled
 * accesses that must not decode (bad size, misaligned, out of BAR, foreign
 * or out-of-range function).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vfw_func.h"

#include "check.h"

static const uint8_t MAC[6] = {0x02, 0x00, 0x00, 0x00, 0x01, 0x00};

static uint32_t rd(struct vfw_func_dev *d, struct vfw_func *f, uint64_t addr)
{
    uint32_t v = 0xdeadbeef;

    if (!vfw_func_read(d, f, addr, 4, &v)) {
        return 0xdeadbeef;
    }
    return v;
}

static int t_init_bounds(void)
{
    static struct vfw_func_dev d;

    CHECK(vfw_func_dev_init(&d, MAC, VFW_FUNC_MAX_VFS) == 0);
    CHECK(d.total_vfs == 128);
    CHECK(vfw_func_vf(&d, 127) != NULL);
    CHECK(vfw_func_vf(&d, 128) == NULL);
    CHECK(vfw_func_vf(&d, 0xffffffffu) == NULL);
    CHECK(vfw_func_dev_init(&d, MAC, VFW_FUNC_MAX_VFS + 1) == -1);
    CHECK(d.total_vfs == 0);
    CHECK(vfw_func_vf(&d, 0) == NULL);
    CHECK(vfw_func_dev_init(&d, NULL, 4) == -1);
    CHECK(vfw_func_dev_init(&d, MAC, 4) == 0);
    CHECK(vfw_func_vf(&d, 3) != NULL);
    CHECK(vfw_func_vf(&d, 4) == NULL);
    return 0;
}

static int t_identity_every_function(void)
{
    static struct vfw_func_dev d;
    struct vfw_func *pf;

    CHECK(vfw_func_dev_init(&d, MAC, VFW_FUNC_MAX_VFS) == 0);
    pf = vfw_func_pf(&d);
    CHECK(rd(&d, pf, VFW_REG_MAGIC) == VFW_MAGIC);
    CHECK(rd(&d, pf, VFW_REG_VERSION) ==
          ((VFW_HW_VERSION_MAJOR << 16) | VFW_HW_VERSION_MINOR));
    CHECK(rd(&d, pf, VFW_REG_FUNC_INFO) == 0);
    CHECK(rd(&d, pf, VFW_REG_MAC_LO) == 0x00000002u);
    CHECK(rd(&d, pf, VFW_REG_MAC_HI) == 0x0001u);
    CHECK(rd(&d, pf, VFW_REG_FEATURES_LO) == 0);
    vfw_func_set_uplink(&d, true);
    CHECK(rd(&d, pf, VFW_REG_FEATURES_LO) == VFW_FEAT_UPLINK);
    CHECK(rd(&d, pf, VFW_REG_FEATURES_HI) == 0);
    for (unsigned i = 0; i < VFW_FUNC_MAX_VFS; i++) {
        struct vfw_func *vf = vfw_func_vf(&d, i);

        CHECK(vf != NULL);
        CHECK(rd(&d, vf, VFW_REG_MAGIC) == VFW_MAGIC);
        CHECK(rd(&d, vf, VFW_REG_VERSION) == rd(&d, pf, VFW_REG_VERSION));
        CHECK(rd(&d, vf, VFW_REG_FEATURES_LO) == VFW_FEAT_UPLINK);
        CHECK(rd(&d, vf, VFW_REG_FUNC_INFO) == (VFW_FUNC_IS_VF | i));
        /* Port-level registers belong to the PF. */
        CHECK(rd(&d, vf, VFW_REG_MAC_LO) == 0);
        CHECK(rd(&d, vf, VFW_REG_MAC_HI) == 0);
        CHECK(rd(&d, vf, VFW_REG_UPLINK_RX_PKTS) == 0);
    }
    return 0;
}

static int t_uplink_counters(void)
{
    static struct vfw_func_dev d;

    CHECK(vfw_func_dev_init(&d, MAC, 2) == 0);
    for (int i = 0; i < 5; i++) {
        vfw_func_uplink_rx(&d);
    }
    vfw_func_uplink_tx(&d);
    CHECK(rd(&d, vfw_func_pf(&d), VFW_REG_UPLINK_RX_PKTS) == 5);
    CHECK(rd(&d, vfw_func_pf(&d), VFW_REG_UPLINK_TX_PKTS) == 1);
    d.uplink_rx = 0xffffffffu;
    vfw_func_uplink_rx(&d);
    CHECK(rd(&d, vfw_func_pf(&d), VFW_REG_UPLINK_RX_PKTS) == 0);
    /* The counters belong to the port: an adapter reset keeps them. */
    vfw_func_uplink_rx(&d);
    vfw_func_dev_reset(&d);
    CHECK(rd(&d, vfw_func_pf(&d), VFW_REG_UPLINK_RX_PKTS) == 1);
    return 0;
}

static int t_scratch_per_function_and_reset(void)
{
    static struct vfw_func_dev d;
    struct vfw_func *pf, *v0, *v1, *v127;

    CHECK(vfw_func_dev_init(&d, MAC, VFW_FUNC_MAX_VFS) == 0);
    pf = vfw_func_pf(&d);
    v0 = vfw_func_vf(&d, 0);
    v1 = vfw_func_vf(&d, 1);
    v127 = vfw_func_vf(&d, 127);
    CHECK(vfw_func_write(&d, pf, VFW_REG_SCRATCH, 0x11111111u, 4));
    CHECK(vfw_func_write(&d, v0, VFW_REG_SCRATCH, 0xa0a0a0a0u, 4));
    CHECK(vfw_func_write(&d, v1, VFW_REG_SCRATCH, 0xa1a1a1a1u, 4));
    CHECK(vfw_func_write(&d, v127, VFW_REG_SCRATCH, 0x1234567fu, 4));
    CHECK(rd(&d, pf, VFW_REG_SCRATCH) == 0x11111111u);
    CHECK(rd(&d, v0, VFW_REG_SCRATCH) == 0xa0a0a0a0u);
    CHECK(rd(&d, v1, VFW_REG_SCRATCH) == 0xa1a1a1a1u);
    CHECK(rd(&d, v127, VFW_REG_SCRATCH) == 0x1234567fu);
    /* Upper bits of a 64-bit value are not stored in a 32-bit register. */
    CHECK(vfw_func_write(&d, v1, VFW_REG_SCRATCH, 0xffffffff00000005ull, 4));
    CHECK(rd(&d, v1, VFW_REG_SCRATCH) == 5);

    /* FLR of one VF clears only that VF. */
    vfw_func_reset(v1);
    CHECK(rd(&d, v1, VFW_REG_SCRATCH) == 0);
    CHECK(v1->resets == 1);
    CHECK(rd(&d, v0, VFW_REG_SCRATCH) == 0xa0a0a0a0u);
    CHECK(rd(&d, pf, VFW_REG_SCRATCH) == 0x11111111u);
    vfw_func_reset(NULL);  /* tolerated */

    /* Adapter reset clears every function. */
    vfw_func_dev_reset(&d);
    CHECK(rd(&d, pf, VFW_REG_SCRATCH) == 0);
    CHECK(rd(&d, v0, VFW_REG_SCRATCH) == 0);
    CHECK(rd(&d, v127, VFW_REG_SCRATCH) == 0);
    CHECK(v1->resets == 2);
    /* Identity survives resets. */
    CHECK(rd(&d, v127, VFW_REG_FUNC_INFO) == (VFW_FUNC_IS_VF | 127));
    return 0;
}

static int t_read_only_and_reserved(void)
{
    static struct vfw_func_dev d;
    struct vfw_func *pf, *vf;
    static const uint64_t ro[] = {
        VFW_REG_MAGIC, VFW_REG_VERSION, VFW_REG_FEATURES_LO,
        VFW_REG_FEATURES_HI, VFW_REG_FUNC_INFO, VFW_REG_UPLINK_RX_PKTS,
        VFW_REG_UPLINK_TX_PKTS, VFW_REG_MAC_LO, VFW_REG_MAC_HI,
    };

    CHECK(vfw_func_dev_init(&d, MAC, 8) == 0);
    pf = vfw_func_pf(&d);
    vf = vfw_func_vf(&d, 7);
    for (size_t i = 0; i < sizeof(ro) / sizeof(ro[0]); i++) {
        uint32_t before_pf = rd(&d, pf, ro[i]);
        uint32_t before_vf = rd(&d, vf, ro[i]);

        CHECK(vfw_func_write(&d, pf, ro[i], 0xffffffffu, 4));
        CHECK(vfw_func_write(&d, vf, ro[i], 0xffffffffu, 4));
        CHECK(rd(&d, pf, ro[i]) == before_pf);
        CHECK(rd(&d, vf, ro[i]) == before_vf);
    }
    /* Reserved windows and unknown offsets read 0, writes dropped. */
    CHECK(vfw_func_write(&d, vf, VFW_REGWIN_MBOX, 0x55u, 4));
    CHECK(rd(&d, vf, VFW_REGWIN_MBOX) == 0);
    CHECK(rd(&d, pf, VFW_REGWIN_DOORBELLS) == 0);
    CHECK(rd(&d, pf, VFW_BAR0_SIZE - 4) == 0);
    return 0;
}

static int t_bad_accesses(void)
{
    static struct vfw_func_dev d, other;
    struct vfw_func *pf, *vf, stray;
    uint32_t v;
    static const unsigned sizes[] = {0, 1, 2, 3, 8, 16, 0xffffffffu};
    static const uint64_t addrs[] = {
        1, 2, 3, VFW_REG_SCRATCH + 1, VFW_BAR0_SIZE, VFW_BAR0_SIZE + 0x10,
        0xfffffffffffffffcull, 0x100000010ull,
    };

    CHECK(vfw_func_dev_init(&d, MAC, 4) == 0);
    CHECK(vfw_func_dev_init(&other, MAC, 4) == 0);
    pf = vfw_func_pf(&d);
    vf = vfw_func_vf(&d, 2);
    CHECK(vfw_func_write(&d, vf, VFW_REG_SCRATCH, 0x77u, 4));

    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        v = 1;
        CHECK(!vfw_func_read(&d, pf, VFW_REG_MAGIC, sizes[i], &v));
        CHECK(v == 0);
        CHECK(!vfw_func_write(&d, vf, VFW_REG_SCRATCH, 0x99u, sizes[i]));
    }
    for (size_t i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
        v = 1;
        CHECK(!vfw_func_read(&d, vf, addrs[i], 4, &v));
        CHECK(v == 0);
        CHECK(!vfw_func_write(&d, vf, addrs[i], 0x99u, 4));
    }
    CHECK(rd(&d, vf, VFW_REG_SCRATCH) == 0x77u);

    /* A function of another adapter, a VF beyond total_vfs, a stray
     * pointer, NULL: not decoded, nothing written. */
    memset(&stray, 0, sizeof(stray));
    v = 1;
    CHECK(!vfw_func_read(&d, vfw_func_pf(&other), VFW_REG_MAGIC, 4, &v));
    CHECK(v == 0);
    CHECK(!vfw_func_read(&d, &d.vf[4], VFW_REG_MAGIC, 4, &v));
    CHECK(!vfw_func_write(&d, &d.vf[4], VFW_REG_SCRATCH, 1, 4));
    CHECK(d.vf[4].scratch == 0);
    CHECK(!vfw_func_read(&d, &stray, VFW_REG_MAGIC, 4, &v));
    CHECK(!vfw_func_write(&d, &stray, VFW_REG_SCRATCH, 1, 4));
    CHECK(stray.scratch == 0);
    CHECK(!vfw_func_read(&d, NULL, VFW_REG_MAGIC, 4, &v));
    CHECK(!vfw_func_write(&d, NULL, VFW_REG_SCRATCH, 1, 4));
    CHECK(!vfw_func_read(&d, (const struct vfw_func *)((char *)&d.vf[1] + 2),
                         VFW_REG_MAGIC, 4, &v));
    return 0;
}

/* Deterministic random accesses from every function: never out of bounds
 * (ASan/UBSan watch), identification always intact. */
static int t_random_accesses(void)
{
    static struct vfw_func_dev d;
    uint64_t x = 0x9e3779b97f4a7c15ull;

    CHECK(vfw_func_dev_init(&d, MAC, VFW_FUNC_MAX_VFS) == 0);
    for (int i = 0; i < 200000; i++) {
        uint32_t v;
        struct vfw_func *f;
        uint64_t addr;
        unsigned size;

        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        f = (x & 0xff) == 0xff ? vfw_func_pf(&d)
                               : vfw_func_vf(&d, (unsigned)(x & 0xff));
        addr = (x >> 8) & 0x1ffff;
        size = 1u << ((x >> 30) & 3);
        if (x & (1ull << 40)) {
            (void)vfw_func_write(&d, f, addr, x, size);
        } else {
            (void)vfw_func_read(&d, f, addr, size, &v);
        }
    }
    for (unsigned i = 0; i < VFW_FUNC_MAX_VFS; i++) {
        CHECK(rd(&d, vfw_func_vf(&d, i), VFW_REG_MAGIC) == VFW_MAGIC);
        CHECK(rd(&d, vfw_func_vf(&d, i), VFW_REG_FUNC_INFO) ==
              (VFW_FUNC_IS_VF | i));
    }
    return 0;
}

#define T(fn) { #fn, fn }
static const struct unit_test tests[] = {
    T(t_init_bounds),
    T(t_identity_every_function),
    T(t_uplink_counters),
    T(t_scratch_per_function_and_reset),
    T(t_read_only_and_reserved),
    T(t_bad_accesses),
    T(t_random_accesses),
};

int main(int argc, char **argv)
{
    return run_tests("func", tests, sizeof(tests) / sizeof(tests[0]), argc,
                     argv, NULL);
}
