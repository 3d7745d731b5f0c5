/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_dataplane.c - rings + embedded switch (adapter/src/eth/) with a
 * fake guest memory, fake MSI-X and a fake uplink.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vfw_admin.h"
#include "vfw_dataplane.h"
#include "dp_host.h"
#include "vswitch.h"

static int passed, failed;
#define CHECK(c) do { if (c) { passed++; } else { failed++; \
    fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #c); } } while (0)

#include "guest_mem.h"
static uint64_t clock_ns;
static unsigned irqs[VFW_DP_NUM_FN][8];
static unsigned uplink_frames;
static uint8_t uplink_last[VFW_FRAME_MAX + 8];
static size_t uplink_last_len;
static uint64_t timer_at[VFW_DP_NUM_FN];

static void t_irq(void *ctx, unsigned fn, unsigned v)
{
    (void)ctx;
    if (fn < VFW_DP_NUM_FN && v < 8) {
        irqs[fn][v]++;
    }
}

static void t_uplink(void *ctx, const uint8_t *f, size_t l)
{
    (void)ctx;
    uplink_frames++;
    if (l <= sizeof(uplink_last)) {
        memcpy(uplink_last, f, l);
        uplink_last_len = l;
    }
}

static uint64_t t_now(void *ctx)
{
    (void)ctx;
    return clock_ns;
}

static void t_timer(void *ctx, unsigned fn, uint64_t when)
{
    (void)ctx;
    if (fn < VFW_DP_NUM_FN) {
        timer_at[fn] = when;
    }
}

static const struct vfw_dp_ops ops = {
    .kick = t_kick,
    .dma_read = t_read, .dma_write = t_write, .irq = t_irq,
    .uplink_tx = t_uplink, .now_ns = t_now, .timer = t_timer,
};

static const uint8_t pf_mac[6] = { 0x02, 0, 0, 0, 7, 0 };

/* Layout per function fn: TX ring at R(fn), RX ring at R(fn)+0x1000 (256
 * entries each), TX buffers at B(fn), RX buffers at B(fn)+0x8000 (2 KiB). */
#define RING_N 16
static uint64_t R(unsigned fn) { return MEM_BASE + 0x10000ull * fn; }
static uint64_t B(unsigned fn) { return MEM_BASE + 0x200000ull + 0x10000ull * fn; }

static uint32_t rd(struct vfw_dp *dp, unsigned fn, uint32_t reg)
{
    uint32_t v = 0xdeadbeef;

    vfw_dp_read(dp, fn, reg, 4, &v);
    return v;
}

static void wr(struct vfw_dp *dp, unsigned fn, uint32_t reg, uint32_t v)
{
    vfw_dp_write(dp, fn, reg, v, 4);
    host_run(dp);
}

static uint8_t *at(uint64_t a) { return mem + (a - MEM_BASE); }

static void put16(uint8_t *p, uint16_t v) { p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); }
static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++) {
        p[i] = (uint8_t)(v >> (8 * i));
    }
}

static void rings_up(struct vfw_dp *dp, unsigned fn)
{
    wr(dp, fn, VFW_REG_TXQ0 + VFW_RING_BASE_LO, (uint32_t)R(fn));
    wr(dp, fn, VFW_REG_TXQ0 + VFW_RING_BASE_HI, 0);
    wr(dp, fn, VFW_REG_TXQ0 + VFW_RING_LEN, RING_N);
    wr(dp, fn, VFW_REG_TXQ0 + VFW_RING_CTRL, VFW_RING_CTRL_ENABLE |
       VFW_RING_CTRL_IRQ_EN | 2u << VFW_RING_CTRL_VEC_SHIFT);
    wr(dp, fn, VFW_REG_RXQ0 + VFW_RING_BASE_LO, (uint32_t)(R(fn) + 0x1000));
    wr(dp, fn, VFW_REG_RXQ0 + VFW_RING_LEN, RING_N);
    wr(dp, fn, VFW_REG_RXQ0 + VFW_RING_CTRL, VFW_RING_CTRL_ENABLE |
       VFW_RING_CTRL_IRQ_EN | 1u << VFW_RING_CTRL_VEC_SHIFT);
    /* post RING_N - 1 RX buffers */
    for (unsigned i = 0; i < RING_N; i++) {
        uint8_t *d = at(R(fn) + 0x1000 + 16 * i);

        memset(d, 0, 16);
        put64(d, B(fn) + 0x8000 + 2048 * i);
        put16(d + 8, 2048);
    }
    wr(dp, fn, VFW_REG_RXQ0 + VFW_RING_TAIL, RING_N - 1);
}

static unsigned tx_tail[VFW_DP_NUM_FN];

/* Post one frame (one descriptor) on fn's TX ring and ring the doorbell. */
static unsigned tx_post(struct vfw_dp *dp, unsigned fn, const uint8_t *frame,
                        uint16_t len, uint8_t flags, uint16_t vlan, bool kick)
{
    unsigned i = tx_tail[fn];
    uint8_t *d = at(R(fn) + 16 * i);

    memcpy(at(B(fn) + 2048 * i), frame, len);
    memset(d, 0, 16);
    put64(d, B(fn) + 2048 * i);
    put16(d + 8, len);
    d[10] = (uint8_t)(VFW_TXD_EOP | flags);
    put16(d + 12, vlan);
    tx_tail[fn] = (i + 1) % RING_N;
    if (kick) {
        wr(dp, fn, VFW_REG_TXQ0 + VFW_RING_TAIL, tx_tail[fn]);
    }
    return i;
}

static uint8_t tx_status(unsigned fn, unsigned i) { return at(R(fn) + 16 * i)[11]; }

static void frame_make(uint8_t *f, const uint8_t dst[6], const uint8_t src[6],
                       size_t len, uint8_t fill)
{
    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    f[12] = 0x88;               /* local experimental ethertype */
    f[13] = 0xb5;
    memset(f + 14, fill, len - 14);
}

static void vmac(struct vfw_dp *dp, unsigned vf, uint8_t m[6])
{
    vfw_dp_vf_mac(dp, vf, m);
}

static struct vfw_dp *fresh(void)
{
    struct vfw_dp *dp = vfw_dp_create(&ops, NULL, pf_mac, 4);

    memset(mem, 0, sizeof(mem));
    memset(irqs, 0, sizeof(irqs));
    memset(tx_tail, 0, sizeof(tx_tail));
    memset(timer_at, 0, sizeof(timer_at));
    uplink_frames = 0;
    clock_ns = 1000;
    if (dp) {
        vfw_dp_set_uplink(dp, true);
        for (unsigned fn = 0; fn < 5; fn++) {
            rings_up(dp, fn);
        }
    }
    return dp;
}

static void test_regs(void)
{
    struct vfw_dp *dp = vfw_dp_create(&ops, NULL, pf_mac, 4);
    uint8_t m[6];
    uint32_t v;

    CHECK(dp != NULL);
    CHECK(vfw_dp_create(&ops, NULL, pf_mac, 129) == NULL);
    CHECK(!vfw_dp_link_up(dp, 1));
    vfw_dp_set_uplink(dp, true);
    CHECK(rd(dp, 1, VFW_REG_LINK_STATUS) == VFW_LINK_UP);
    vmac(dp, 3, m);
    CHECK(m[0] == 2 && m[3] == 7 && m[4] == 3 && m[5] == 1);
    CHECK(rd(dp, 4, VFW_REG_DP_MAC_LO) == (0x02u | 7u << 24));
    CHECK(rd(dp, 4, VFW_REG_DP_MAC_HI) == (3u | 1u << 8));
    CHECK(!vfw_dp_read(dp, 5, VFW_REG_LINK_STATUS, 4, &v));   /* no VF 4 */
    CHECK(!vfw_dp_read(dp, 1, VFW_REG_LINK_STATUS, 2, &v));
    CHECK(!vfw_dp_read(dp, 1, VFW_REG_TXQ(VFW_TXQ_MAX - 1) + 0x20, 4, &v));
    /* ring validation */
    wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_BASE_LO, 0x1008);       /* unaligned */
    wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_LEN, 64);
    wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_CTRL, VFW_RING_CTRL_ENABLE);
    CHECK(rd(dp, 1, VFW_REG_TXQ0 + VFW_RING_STATUS) == VFW_RING_STS_ERR);
    CHECK(rd(dp, 1, VFW_REG_TXQ0 + VFW_RING_CTRL) == 0);
    wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_BASE_LO, 0x1000);
    wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_LEN, 100);               /* not 2^n */
    wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_CTRL, VFW_RING_CTRL_ENABLE);
    CHECK(rd(dp, 1, VFW_REG_TXQ0 + VFW_RING_STATUS) == VFW_RING_STS_ERR);
    wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_LEN, 8192);              /* too big */
    wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_CTRL, VFW_RING_CTRL_ENABLE);
    CHECK(rd(dp, 1, VFW_REG_TXQ0 + VFW_RING_STATUS) == VFW_RING_STS_ERR);
    wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_BASE_HI, 0xffffffffu);
    wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_BASE_LO, 0xffffff00u);   /* wraps */
    wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_LEN, 4096);
    wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_CTRL, VFW_RING_CTRL_ENABLE);
    CHECK(rd(dp, 1, VFW_REG_TXQ0 + VFW_RING_STATUS) == VFW_RING_STS_ERR);
    wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_BASE_HI, 0);
    wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_BASE_LO, 0x1000);
    wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_CTRL, VFW_RING_CTRL_ENABLE);
    CHECK(rd(dp, 1, VFW_REG_TXQ0 + VFW_RING_STATUS) == VFW_RING_STS_ENABLED);
    /* base/len frozen while enabled; tail bounded */
    wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_LEN, 8);
    CHECK(rd(dp, 1, VFW_REG_TXQ0 + VFW_RING_LEN) == 4096);
    wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_TAIL, 4096);
    CHECK(rd(dp, 1, VFW_REG_TXQ0 + VFW_RING_TAIL) == 0);
    /* a descriptor fetch outside memory stops the ring (no crash) */
    wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_TAIL, 5);
    CHECK(rd(dp, 1, VFW_REG_TXQ0 + VFW_RING_STATUS) & VFW_RING_STS_ERR);
    CHECK(rd(dp, 1, VFW_REG_TXQ0 + VFW_RING_HEAD) == 0);
    vfw_dp_reset_fn(dp, 1);
    CHECK(rd(dp, 1, VFW_REG_TXQ0 + VFW_RING_STATUS) == 0);
    CHECK(rd(dp, 1, VFW_REG_TXQ0 + VFW_RING_LEN) == 0);
    vfw_dp_destroy(dp);
}

/* 2.5: TX rings 1..7. Every ring validates its registers as ring 0 does
 * (bad BASE/LEN refused, frozen while enabled, TAIL bounded, a failed
 * fetch stops that ring only), each carries frames with its own HEAD,
 * write-back and vector, and an FLR clears them all. */
static uint64_t RQ(unsigned fn, unsigned q) { return MEM_BASE + 0x300000ull + 0x10000ull * fn + 0x1000ull * q; }

static void txq_post(struct vfw_dp *dp, unsigned fn, unsigned q, unsigned i,
                     const uint8_t *frame, uint16_t len)
{
    uint8_t *d = at(RQ(fn, q) + 16 * i);
    uint64_t buf = RQ(fn, q) + 0x200 + 0x80 * i;

    memcpy(at(buf), frame, len);
    memset(d, 0, 16);
    put64(d, buf);
    put16(d + 8, len);
    d[10] = VFW_TXD_EOP;
    wr(dp, fn, VFW_REG_TXQ(q) + VFW_RING_TAIL, i + 1);
}

static void test_tx_rings(void)
{
    struct vfw_dp *dp = vfw_dp_create(&ops, NULL, pf_mac, 4);
    static const uint8_t away[6] = { 2, 0, 0, 9, 9, 9 };
    uint8_t m[6], f[128];
    uint32_t v;

    printf("TX rings 1..7 (2.5)\n");
    memset(mem, 0, sizeof(mem));
    memset(irqs, 0, sizeof(irqs));
    uplink_frames = 0;
    clock_ns = 1000;
    CHECK(dp != NULL);
    vfw_dp_set_uplink(dp, true);
    CHECK(rd(dp, 0, VFW_REG_TXQ_NUM) == VFW_TXQ_MAX);
    CHECK(rd(dp, 2, VFW_REG_TXQ_NUM) == VFW_TXQ_MAX);
    CHECK(VFW_REG_TXQ(0) == VFW_REG_TXQ0);
    CHECK(VFW_REG_TXQ(1) == 0x0900 && VFW_REG_TXQ(7) == 0x09c0);
    CHECK(vfw_dp_owns(VFW_REG_TXQ(7) + VFW_RING_STATUS));
    CHECK(!vfw_dp_owns(VFW_REG_TXQ(7) + 0x20));
    CHECK(!vfw_dp_owns(VFW_REGWIN_RDMA_REGS));
    CHECK(!vfw_dp_write(dp, 1, VFW_REG_TXQ(7) + 0x20, 1, 4));
    for (unsigned q = 0; q < VFW_TXQ_MAX; q++) {
        uint32_t t = VFW_REG_TXQ(q);
        unsigned before = 0;

        /* refused: unaligned, not a power of two, too small, too big,
         * wrapping the address space; nothing consumed on a doorbell */
        static const struct { uint32_t lo, hi, len; } bad[] = {
            { 0x1008, 0, 64 }, { 0x1000, 0, 100 }, { 0x1000, 0, 4 },
            { 0x1000, 0, 8192 }, { 0xffffff00u, 0xffffffffu, 4096 },
            { 0x1000, 0, 0 },
        };
        for (unsigned b = 0; b < sizeof(bad) / sizeof(bad[0]); b++) {
            wr(dp, 1, t + VFW_RING_BASE_LO, bad[b].lo);
            wr(dp, 1, t + VFW_RING_BASE_HI, bad[b].hi);
            wr(dp, 1, t + VFW_RING_LEN, bad[b].len);
            wr(dp, 1, t + VFW_RING_CTRL, VFW_RING_CTRL_ENABLE);
            CHECK(rd(dp, 1, t + VFW_RING_STATUS) == VFW_RING_STS_ERR);
            CHECK(rd(dp, 1, t + VFW_RING_CTRL) == 0);
            wr(dp, 1, t + VFW_RING_TAIL, 3);
            CHECK(rd(dp, 1, t + VFW_RING_TAIL) == 0);
            CHECK(rd(dp, 1, t + VFW_RING_HEAD) == 0);
        }
        /* descriptors outside guest memory: enabled, then the first fetch
         * stops this ring and no other */
        wr(dp, 1, t + VFW_RING_BASE_HI, 0);
        wr(dp, 1, t + VFW_RING_BASE_LO, 0x1000);
        wr(dp, 1, t + VFW_RING_LEN, 4096);
        wr(dp, 1, t + VFW_RING_CTRL, VFW_RING_CTRL_ENABLE);
        CHECK(rd(dp, 1, t + VFW_RING_STATUS) == VFW_RING_STS_ENABLED);
        wr(dp, 1, t + VFW_RING_LEN, 8);                         /* frozen */
        CHECK(rd(dp, 1, t + VFW_RING_LEN) == 4096);
        wr(dp, 1, t + VFW_RING_TAIL, 4096);                     /* >= LEN */
        CHECK(rd(dp, 1, t + VFW_RING_TAIL) == 0);
        wr(dp, 1, t + VFW_RING_TAIL, 5);
        CHECK(rd(dp, 1, t + VFW_RING_STATUS) & VFW_RING_STS_ERR);
        CHECK(rd(dp, 1, t + VFW_RING_HEAD) == 0);
        for (unsigned o = 0; o < VFW_TXQ_MAX; o++) {
            if (o != q) {
                before += !!(rd(dp, 1, VFW_REG_TXQ(o) + VFW_RING_STATUS) & VFW_RING_STS_ERR);
            }
        }
        CHECK(before == q);          /* the rings before this one only */
    }
    vfw_dp_reset_fn(dp, 1);
    for (unsigned q = 0; q < VFW_TXQ_MAX; q++) {
        CHECK(rd(dp, 1, VFW_REG_TXQ(q) + VFW_RING_STATUS) == 0);
        CHECK(rd(dp, 1, VFW_REG_TXQ(q) + VFW_RING_LEN) == 0);
        CHECK(rd(dp, 1, VFW_REG_TXQ(q) + VFW_RING_BASE_LO) == 0);
    }
    /* every ring carries frames: its own HEAD, write-back and vector */
    vmac(dp, 0, m);
    frame_make(f, away, m, 100, 0x5a);
    for (unsigned q = 0; q < VFW_TXQ_MAX; q++) {
        uint32_t t = VFW_REG_TXQ(q);

        wr(dp, 1, t + VFW_RING_BASE_LO, (uint32_t)RQ(1, q));
        wr(dp, 1, t + VFW_RING_BASE_HI, 0);
        wr(dp, 1, t + VFW_RING_LEN, RING_N);
        wr(dp, 1, t + VFW_RING_CTRL, VFW_RING_CTRL_ENABLE | VFW_RING_CTRL_IRQ_EN |
           (2u + q % 2) << VFW_RING_CTRL_VEC_SHIFT);
        CHECK(rd(dp, 1, t + VFW_RING_STATUS) == VFW_RING_STS_ENABLED);
        CHECK(rd(dp, 1, t + VFW_RING_BASE_LO) == (uint32_t)RQ(1, q));
    }
    for (unsigned q = 0; q < VFW_TXQ_MAX; q++) {
        unsigned up0 = uplink_frames, v2 = irqs[1][2], v3 = irqs[1][3];

        f[14] = (uint8_t)q;
        txq_post(dp, 1, q, 0, f, 100);
        CHECK(uplink_frames == up0 + 1);
        CHECK(uplink_last[14] == q);
        CHECK(rd(dp, 1, VFW_REG_TXQ(q) + VFW_RING_HEAD) == 1);
        CHECK(at(RQ(1, q))[11] == VFW_TXD_STS_DD);
        CHECK(irqs[1][2] + irqs[1][3] == v2 + v3 + 1);
        CHECK((q % 2 ? irqs[1][3] - v3 : irqs[1][2] - v2) == 1);
        for (unsigned o = 0; o < VFW_TXQ_MAX; o++) {
            CHECK(rd(dp, 1, VFW_REG_TXQ(o) + VFW_RING_HEAD) == (o <= q ? 1u : 0u));
        }
    }
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_TX_PKTS) == VFW_TXQ_MAX);
    /* a bad descriptor on ring 6 fails that frame only */
    txq_post(dp, 1, 6, 1, f, 5);                /* shorter than a header */
    CHECK(at(RQ(1, 6) + 16)[11] == (VFW_TXD_STS_DD | VFW_TXD_STS_ERR));
    CHECK(rd(dp, 1, VFW_REG_TXQ(6) + VFW_RING_STATUS) == VFW_RING_STS_ENABLED);
    /* ring 4 disabled: HEAD/TAIL back to 0, doorbells ignored */
    wr(dp, 1, VFW_REG_TXQ(4) + VFW_RING_CTRL, 0);
    CHECK(rd(dp, 1, VFW_REG_TXQ(4) + VFW_RING_HEAD) == 0);
    wr(dp, 1, VFW_REG_TXQ(4) + VFW_RING_TAIL, 2);
    CHECK(rd(dp, 1, VFW_REG_TXQ(4) + VFW_RING_TAIL) == 0);
    /* FLR: every ring off and cleared; the other VF's rings untouched */
    wr(dp, 2, VFW_REG_TXQ(5) + VFW_RING_BASE_LO, (uint32_t)RQ(2, 5));
    wr(dp, 2, VFW_REG_TXQ(5) + VFW_RING_LEN, RING_N);
    wr(dp, 2, VFW_REG_TXQ(5) + VFW_RING_CTRL, VFW_RING_CTRL_ENABLE);
    vfw_dp_reset_fn(dp, 1);
    for (unsigned q = 0; q < VFW_TXQ_MAX; q++) {
        CHECK(rd(dp, 1, VFW_REG_TXQ(q) + VFW_RING_STATUS) == 0);
        CHECK(rd(dp, 1, VFW_REG_TXQ(q) + VFW_RING_CTRL) == 0);
        CHECK(rd(dp, 1, VFW_REG_TXQ(q) + VFW_RING_HEAD) == 0);
        CHECK(rd(dp, 1, VFW_REG_TXQ(q) + VFW_RING_LEN) == 0);
    }
    CHECK(rd(dp, 2, VFW_REG_TXQ(5) + VFW_RING_STATUS) == VFW_RING_STS_ENABLED);
    CHECK(vfw_dp_read(dp, 1, VFW_REG_TXQ(3) + 0x1c, 4, &v) && v == 0);
    vfw_dp_destroy(dp);
}

static void test_vf_to_vf(void)
{
    struct vfw_dp *dp = fresh();
    uint8_t a[6], b[6], f[1514];
    unsigned i;

    vmac(dp, 0, a);
    vmac(dp, 1, b);
    frame_make(f, b, a, sizeof(f), 0x5a);
    i = tx_post(dp, 1, f, sizeof(f), 0, 0, true);
    CHECK(tx_status(1, i) == VFW_TXD_STS_DD);
    CHECK(rd(dp, 1, VFW_REG_TXQ0 + VFW_RING_HEAD) == 1);
    CHECK(irqs[1][2] == 1);                         /* TX vector of VF0 */
    CHECK(rd(dp, 2, VFW_REG_RXQ0 + VFW_RING_HEAD) == 1);
    CHECK(irqs[2][1] == 1);                         /* RX vector of VF1 */
    {
        uint8_t *d = at(R(2) + 0x1000);

        CHECK(d[10] == (VFW_RXD_STS_DD | VFW_RXD_STS_EOP));
        CHECK((d[8] | d[9] << 8) == sizeof(f));
        CHECK(!memcmp(at(B(2) + 0x8000), f, sizeof(f)));
    }
    CHECK(uplink_frames == 0);
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_TX_PKTS) == 1);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 1);
    CHECK(rd(dp, 2, VFW_REG_STAT(VFW_STAT_RX_BYTES)) == sizeof(f));
    /* unknown unicast leaves on the uplink */
    f[0] = 0x02; f[5] = 0x77;
    tx_post(dp, 1, f, 60, 0, 0, true);
    CHECK(uplink_frames == 1 && uplink_last_len == 60);
    /* broadcast: uplink, PF and the other VFs */
    memset(f, 0xff, 6);
    tx_post(dp, 1, f, 60, 0, 0, true);
    CHECK(uplink_frames == 2);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 2);
    CHECK(vfw_dp_stat(dp, 4, VFW_STAT_RX_PKTS) == 1);
    CHECK(vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == 1);
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_RX_PKTS) == 0);   /* not back */
    /* from the uplink to VF1 */
    frame_make(f, b, (const uint8_t[6]){ 2, 0, 0, 9, 9, 9 }, 100, 1);
    vfw_dp_uplink_rx(dp, f, 100);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 3);
    /* learned: VF1 answers the remote MAC, only the uplink gets it */
    frame_make(f, (const uint8_t[6]){ 2, 0, 0, 9, 9, 9 }, b, 100, 2);
    tx_post(dp, 2, f, 100, 0, 0, true);
    CHECK(uplink_frames == 3);
    vfw_dp_uplink_rx(dp, f, 5);                     /* runt: ignored */
    vfw_dp_uplink_rx(dp, f, 20000);                 /* too big: ignored */
    vfw_dp_destroy(dp);
}

static void test_bad_descriptors(void)
{
    struct vfw_dp *dp = fresh();
    uint8_t a[6], b[6], f[200];
    unsigned i;

    vmac(dp, 0, a);
    vmac(dp, 1, b);
    frame_make(f, b, a, sizeof(f), 3);
    /* zero length */
    i = tx_post(dp, 1, f, 0, 0, 0, true);
    CHECK(tx_status(1, i) == (VFW_TXD_STS_DD | VFW_TXD_STS_ERR));
    /* length over the maximum */
    i = tx_post(dp, 1, f, 100, 0, 0, false);
    put16(at(R(1) + 16 * i) + 8, VFW_FRAME_MAX + 1);
    wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_TAIL, tx_tail[1]);
    CHECK(tx_status(1, i) == (VFW_TXD_STS_DD | VFW_TXD_STS_ERR));
    /* address outside guest memory */
    i = tx_post(dp, 1, f, 100, 0, 0, false);
    put64(at(R(1) + 16 * i), 0xfff0000000ull);
    wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_TAIL, tx_tail[1]);
    CHECK(tx_status(1, i) == (VFW_TXD_STS_DD | VFW_TXD_STS_ERR));
    /* runt */
    i = tx_post(dp, 1, f, 10, 0, 0, true);
    CHECK(tx_status(1, i) == (VFW_TXD_STS_DD | VFW_TXD_STS_ERR));
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_TX_DESC_ERR) == 4);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 0);
    /* the ring still works: next good frame arrives */
    i = tx_post(dp, 1, f, sizeof(f), 0, 0, true);
    CHECK(tx_status(1, i) == VFW_TXD_STS_DD);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 1);
    /* no EOP: waits while fewer than VFW_TX_MAX_FRAGS are posted */
    for (unsigned k = 0; k < 5; k++) {
        i = tx_post(dp, 1, f, 50, 0, 0, false);
        at(R(1) + 16 * i)[10] = 0;
    }
    wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_TAIL, tx_tail[1]);
    CHECK(tx_status(1, i) == 0);
    CHECK(rd(dp, 1, VFW_REG_TXQ0 + VFW_RING_HEAD) == 5);
    /* ... then a gather of 6 fragments with EOP forms one frame */
    i = tx_post(dp, 1, f, 50, 0, 0, true);
    CHECK(tx_status(1, i) == VFW_TXD_STS_DD);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 2);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_BYTES) == 200 + 300);
    /* RX buffer too small: that descriptor errors, frame dropped */
    put16(at(R(2) + 0x1000 + 16 * 2) + 8, 64);
    i = tx_post(dp, 1, f, sizeof(f), 0, 0, true);
    CHECK(at(R(2) + 0x1000 + 32)[11] == VFW_RXD_ERR_BUF);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_DESC_ERR) == 1);
    i = tx_post(dp, 1, f, sizeof(f), 0, 0, true);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 3);
    /* RX ring exhausted: counted, not written */
    for (unsigned k = 0; k < 20; k++) {
        tx_post(dp, 1, f, sizeof(f), 0, 0, true);
    }
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_NO_BUF) > 0);
    CHECK(rd(dp, 2, VFW_REG_RXQ0 + VFW_RING_HEAD) == RING_N - 1);
    vfw_dp_destroy(dp);
}

static void test_policy(void)
{
    struct vfw_dp *dp = fresh();
    struct vfw_dp_vf_cfg c;
    uint8_t a[6], b[6], f[200];
    unsigned i;

    vmac(dp, 0, a);
    vmac(dp, 1, b);
    /* spoofed source MAC: dropped and counted */
    frame_make(f, b, (const uint8_t[6]){ 2, 0xaa, 0, 0, 0, 1 }, sizeof(f), 4);
    i = tx_post(dp, 1, f, sizeof(f), 0, 0, true);
    CHECK(tx_status(1, i) == (VFW_TXD_STS_DD | VFW_TXD_STS_DROP));
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_TX_DROP_SPOOF) == 1);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 0);
    /* spoofchk off: passes (the FDB has b) */
    vfw_dp_get_vf(dp, 0, &c);
    c.spoofchk = false;
    CHECK(vfw_dp_set_vf(dp, 0, &c) == 0);
    tx_post(dp, 1, f, sizeof(f), 0, 0, true);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 1);
    /* VLANs: VF0 in 10, VF1 in 20: isolated; VF1 in 10: connected */
    c.spoofchk = true;
    c.vlan = 10;
    CHECK(vfw_dp_set_vf(dp, 0, &c) == 0);
    vfw_dp_get_vf(dp, 1, &c);
    c.vlan = 20;
    CHECK(vfw_dp_set_vf(dp, 1, &c) == 0);
    frame_make(f, b, a, sizeof(f), 5);
    tx_post(dp, 1, f, sizeof(f), 0, 0, true);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 1);
    /* (b is unknown in VLAN 10: the frame leaves on the uplink, tagged) */
    CHECK(uplink_frames == 1 && uplink_last[15] == 10);
    c.vlan = 10;
    CHECK(vfw_dp_set_vf(dp, 1, &c) == 0);
    tx_post(dp, 1, f, sizeof(f), 0, 0, true);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 2);
    {   /* delivered untagged to the access port */
        uint8_t *d = at(R(2) + 0x1000 + 16);
        CHECK((d[8] | d[9] << 8) == sizeof(f));
    }
    /* a VF may not tag its own frames on an access port */
    i = tx_post(dp, 1, f, sizeof(f), VFW_TXD_VLAN, 20, true);
    CHECK(tx_status(1, i) & VFW_TXD_STS_DROP);
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_TX_DROP_VLAN) == 1);
    /* unknown unicast from VLAN 10 reaches the uplink tagged */
    f[5] = 0x99;
    tx_post(dp, 1, f, sizeof(f), 0, 0, true);
    CHECK(uplink_frames == 2 && uplink_last_len == sizeof(f) + 4);
    CHECK(uplink_last[12] == 0x81 && uplink_last[13] == 0 &&
          uplink_last[15] == 10);
    /* and tagged 10 from the uplink reaches VF1 untagged */
    {
        uint8_t t[204];

        memcpy(t, uplink_last, sizeof(t));
        memcpy(t, b, 6);
        t[6 + 5] = 0x42;
        vfw_dp_uplink_rx(dp, t, sizeof(t));
        CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 3);
        t[15] = 20;
        vfw_dp_uplink_rx(dp, t, sizeof(t));
        CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 3);
    }
    /* link-state disable: link irq, traffic stops both ways */
    wr(dp, 1, VFW_REG_LINK_CTRL, VFW_RING_CTRL_IRQ_EN | 0u << VFW_RING_CTRL_VEC_SHIFT);
    CHECK(irqs[1][0] == 1);         /* the link-up while it was masked */
    irqs[1][0] = 0;
    vfw_dp_get_vf(dp, 0, &c);
    c.link_state = 2;
    CHECK(vfw_dp_set_vf(dp, 0, &c) == 0);
    CHECK(irqs[1][0] == 1);
    CHECK(rd(dp, 1, VFW_REG_LINK_STATUS) == 0);
    f[5] = b[5];
    i = tx_post(dp, 1, f, sizeof(f), 0, 0, true);
    CHECK(tx_status(1, i) & VFW_TXD_STS_DROP);
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_TX_DROP_LINK) == 1);
    c.link_state = 0;
    CHECK(vfw_dp_set_vf(dp, 0, &c) == 0);
    CHECK(irqs[1][0] == 2 && rd(dp, 1, VFW_REG_LINK_STATUS) == 1);
    /* configured MAC replaces the default in the FDB and spoof check */
    memcpy(c.mac, (const uint8_t[6]){ 0x02, 0x12, 0x34, 0x56, 0x78, 0x9a }, 6);
    CHECK(vfw_dp_set_vf(dp, 0, &c) == 0);
    CHECK(rd(dp, 1, VFW_REG_DP_MAC_LO) == 0x56341202u);
    CHECK(irqs[1][0] == 3);         /* the new MAC raised the link vector */
    CHECK(vfw_dp_set_vf(dp, 0, &c) == 0);
    CHECK(irqs[1][0] == 3);         /* the same MAC again: no event */
    i = tx_post(dp, 1, f, sizeof(f), 0, 0, true);       /* old source MAC */
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_TX_DROP_SPOOF) == 2);
    c.mac[0] = 0x01;
    CHECK(vfw_dp_set_vf(dp, 0, &c) < 0);                /* multicast */
    c.mac[0] = 0x02;
    c.vlan = 5000;
    CHECK(vfw_dp_set_vf(dp, 0, &c) < 0);
    CHECK(vfw_dp_set_vf(dp, 4, &c) < 0);                /* no VF 4 */
    vfw_dp_destroy(dp);
}

/* What the PF grants on a VF's mailbox requests: the multicast filter,
 * allmulti, promiscuous (with trust), and VLAN filters on a trunk port. */
static void test_rx_filters(void)
{
    static const uint8_t grp[6] = { 0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb };
    static const uint8_t bc[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    static const uint8_t stranger[6] = { 0x02, 0x77, 0, 0, 0, 1 };
    struct vfw_dp *dp = fresh();
    struct vfw_dp_vf_cfg c;
    uint8_t a[6], f[100];
    unsigned i;

    CHECK(dp != NULL);
    vmac(dp, 0, a);
    /* multicast: VF1 (fn 2) did not ask for the group */
    frame_make(f, grp, a, sizeof(f), 1);
    tx_post(dp, 1, f, sizeof(f), 0, 0, true);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 0);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_FILTERED) == 1);
    CHECK(uplink_frames == 1);              /* the uplink is not filtered */
    frame_make(f, bc, a, sizeof(f), 1);     /* broadcast always passes */
    tx_post(dp, 1, f, sizeof(f), 0, 0, true);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 1);
    vfw_dp_get_vf(dp, 1, &c);
    c.mc_count = 1;
    memcpy(c.mc[0], grp, 6);
    CHECK(vfw_dp_set_vf(dp, 1, &c) == 0);
    frame_make(f, grp, a, sizeof(f), 1);
    tx_post(dp, 1, f, sizeof(f), 0, 0, true);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 2);
    CHECK(vfw_dp_stat(dp, 3, VFW_STAT_RX_FILTERED) == 2);  /* VF2 did not */
    f[5] = 0xfc;                            /* another group: filtered */
    tx_post(dp, 1, f, sizeof(f), 0, 0, true);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 2);
    c.rx_mode = VFW_RXM_ALLMULTI;           /* counts only with trust */
    CHECK(vfw_dp_set_vf(dp, 1, &c) == 0);
    tx_post(dp, 1, f, sizeof(f), 0, 0, true);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 2);
    c.trust = true;
    CHECK(vfw_dp_set_vf(dp, 1, &c) == 0);
    tx_post(dp, 1, f, sizeof(f), 0, 0, true);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 3);
    c.trust = false;
    c.mc_count = VFW_MC_FILTER_MAX + 1;
    CHECK(vfw_dp_set_vf(dp, 1, &c) < 0);
    c.mc_count = 1;
    c.rx_mode = 4;
    CHECK(vfw_dp_set_vf(dp, 1, &c) < 0);

    /* unknown unicast: only a trusted VF that asked for promiscuous */
    frame_make(f, stranger, a, sizeof(f), 2);
    tx_post(dp, 1, f, sizeof(f), 0, 0, true);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 3);
    c.rx_mode = VFW_RXM_PROMISC;
    CHECK(vfw_dp_set_vf(dp, 1, &c) == 0);
    tx_post(dp, 1, f, sizeof(f), 0, 0, true);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 3);   /* not trusted */
    c.trust = true;
    CHECK(vfw_dp_set_vf(dp, 1, &c) == 0);
    tx_post(dp, 1, f, sizeof(f), 0, 0, true);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 4);
    c.trust = false;
    c.rx_mode = 0;
    CHECK(vfw_dp_set_vf(dp, 1, &c) == 0);

    /* VLAN filters: tagged VLAN 100 passes only where the PF allowed it */
    vmac(dp, 1, f);
    memcpy(f + 6, a, 6);
    i = tx_post(dp, 1, f, sizeof(f), VFW_TXD_VLAN, 100, true);
    CHECK(tx_status(1, i) & VFW_TXD_STS_DROP);
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_TX_DROP_VLAN) == 1);
    vfw_dp_get_vf(dp, 0, &c);
    c.vlan_filter[100 / 8] |= 1u << (100 % 8);
    CHECK(vfw_dp_set_vf(dp, 0, &c) == 0);
    i = tx_post(dp, 1, f, sizeof(f), VFW_TXD_VLAN, 100, true);
    CHECK(!(tx_status(1, i) & VFW_TXD_STS_DROP));
    /* VF1 is not in VLAN 100 (and its MAC is not known there) */
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 4);
    vfw_dp_get_vf(dp, 1, &c);
    c.vlan_filter[100 / 8] |= 1u << (100 % 8);
    CHECK(vfw_dp_set_vf(dp, 1, &c) == 0);
    frame_make(f, bc, a, sizeof(f), 3);     /* broadcast in VLAN 100 */
    tx_post(dp, 1, f, sizeof(f), VFW_TXD_VLAN, 100, true);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 5);
    CHECK(vfw_dp_stat(dp, 3, VFW_STAT_RX_PKTS) == 1);   /* VF2: untagged bc only */
    {   /* VF1 got it tagged: the tag is stripped into the descriptor or
         * kept in the frame; either way it is VLAN 100 */
        uint8_t *d = at(R(2) + 0x1000 + 16 * 4);
        uint8_t *buf = at(B(2) + 0x8000 + 2048 * 4);
        bool stripped = d[10] & VFW_RXD_STS_VLAN;

        CHECK(stripped ? (d[12] | d[13] << 8) == 100
                       : buf[12] == 0x81 && buf[15] == 100);
    }
    {   /* unicast to VF1 in VLAN 100: forwarded (its MAC is in the FDB
         * for every VLAN granted to it), not flooded to the uplink */
        unsigned up = uplink_frames;

        vmac(dp, 1, f);
        tx_post(dp, 1, f, sizeof(f), VFW_TXD_VLAN, 100, true);
        CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 6);
        CHECK(uplink_frames == up);
        /* VF1 leaves VLAN 100: its entry goes, the frame is unknown */
        vfw_dp_get_vf(dp, 1, &c);
        c.vlan_filter[100 / 8] = 0;
        CHECK(vfw_dp_set_vf(dp, 1, &c) == 0);
        tx_post(dp, 1, f, sizeof(f), VFW_TXD_VLAN, 100, true);
        CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 6);
        CHECK(uplink_frames == up + 1);
    }
    /* a port VLAN overrides the filters: access port, tags refused */
    vfw_dp_get_vf(dp, 0, &c);
    c.vlan = 7;
    CHECK(vfw_dp_set_vf(dp, 0, &c) == 0);
    i = tx_post(dp, 1, f, sizeof(f), VFW_TXD_VLAN, 100, true);
    CHECK(tx_status(1, i) & VFW_TXD_STS_DROP);
    vfw_dp_destroy(dp);
}

static void test_shaping(void)
{
    struct vfw_dp *dp = fresh();
    struct vfw_dp_vf_cfg c;
    uint8_t a[6], b[6], f[1000];
    uint64_t end;
    unsigned sent = 0, guard = 0;

    vmac(dp, 0, a);
    vmac(dp, 1, b);
    vfw_dp_get_vf(dp, 0, &c);
    c.max_mbps = 80;                                /* 10 MB/s */
    CHECK(vfw_dp_set_vf(dp, 0, &c) == 0);
    frame_make(f, (const uint8_t[6]){ 2, 0, 0, 9, 9, 9 }, a, sizeof(f), 6);
    end = clock_ns + 100000000ull;                  /* 100 ms */
    /* keep the ring full; the driver refills what the device consumed */
    while (clock_ns < end && guard++ < 1000000) {
        unsigned head = rd(dp, 1, VFW_REG_TXQ0 + VFW_RING_HEAD);

        while (((tx_tail[1] + 1) % RING_N) != head) {
            tx_post(dp, 1, f, sizeof(f), 0, 0, false);
        }
        wr(dp, 1, VFW_REG_TXQ0 + VFW_RING_TAIL, tx_tail[1]);
        if (timer_at[1] > clock_ns) {
            clock_ns = timer_at[1];
            dp_timer(dp, 1);
        } else {
            clock_ns += 10000;
        }
    }
    sent = uplink_frames;
    /* 10 MB/s for 100 ms = 1000 frames of 1000 B, + the 5 ms burst */
    CHECK(sent >= 950 && sent <= 1100);
    if (sent < 950 || sent > 1100) {
        fprintf(stderr, "shaped: %u frames in 100 ms\n", sent);
    }
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_TX_DESC_ERR) == 0);
    vfw_dp_destroy(dp);
}

/* Random register writes and descriptors: must neither crash nor loop. */
static void test_chaos(void)
{
    struct vfw_dp *dp = fresh();
    uint32_t s = 12345;

    for (unsigned n = 0; n < 200000; n++) {
        uint32_t fn, reg, val;

        s = s * 1103515245u + 12345u;
        fn = (s >> 8) % 7;
        s = s * 1103515245u + 12345u;
        reg = VFW_REGWIN_RING + ((s >> 4) & 0xfc);
        s = s * 1103515245u + 12345u;
        val = s;
        if ((val & 3) == 0) {
            val &= 0x1f;
        }
        if (n % 64 == 0) {
            for (unsigned k = 0; k < 64; k++) {
                s = s * 1103515245u + 12345u;
                mem[(s >> 3) % 0x60000] = (uint8_t)(s >> 24);
            }
        }
        vfw_dp_write(dp, fn, reg, val, 4);
        if (n % 1000 == 0) {
            uint8_t f[64];

            memset(f, (int)n, sizeof(f));
            vfw_dp_uplink_rx(dp, f, sizeof(f));
        }
    }
    CHECK(1);
    vfw_dp_reset(dp);
    CHECK(rd(dp, 1, VFW_REG_TXQ0 + VFW_RING_CTRL) == 0);
    vfw_dp_destroy(dp);
}

/* ---- 2.0: RDMA engine frames (vfw_dp_fn_inject, ops->rx_steer) ---------- */

static struct vfw_dp *steer_dp;
static unsigned steer_calls, steer_fn[16];
static size_t steer_len[16];
static bool steer_pingpong;

/* The engine's flow table, simplified: ethertype 0x88b6 is "offloaded". */
static bool t_steer(void *ctx, unsigned fn, const uint8_t *f, size_t len)
{
    (void)ctx;
    if (steer_calls < 16) {
        steer_fn[steer_calls] = fn;
        steer_len[steer_calls] = len;
    }
    steer_calls++;
    if (f[12] != 0x88 || f[13] != 0xb6) {
        return false;
    }
    if (steer_pingpong) {           /* answer at once, back to the sender */
        uint8_t r[64];

        memcpy(r, f + 6, 6);
        memcpy(r + 6, f, 6);
        memcpy(r + 12, f + 12, 52);
        vfw_dp_fn_inject(steer_dp, fn, r, sizeof(r));
    }
    return true;
}

static void test_inject_steer(void)
{
    struct vfw_dp_ops o = ops;
    struct vfw_dp *dp;
    struct vfw_dp_vf_cfg c;
    uint8_t a[6], b[6], f[1514];

    o.rx_steer = t_steer;
    dp = vfw_dp_create(&o, NULL, pf_mac, 4);
    CHECK(dp != NULL);
    if (!dp) {
        return;
    }
    steer_dp = dp;
    memset(mem, 0, sizeof(mem));
    memset(tx_tail, 0, sizeof(tx_tail));
    memset(timer_at, 0, sizeof(timer_at));
    uplink_frames = 0;
    steer_calls = 0;
    steer_pingpong = false;
    clock_ns = 1000;
    vfw_dp_set_uplink(dp, true);
    for (unsigned fn = 0; fn < 5; fn++) {
        rings_up(dp, fn);
    }
    vmac(dp, 0, a);
    vmac(dp, 1, b);

    /* VF0's engine -> VF1 (hairpin): VF1's engine takes it, the RX ring
     * stays untouched, both sides count it */
    frame_make(f, b, a, 1000, 0x11);
    f[13] = 0xb6;
    vfw_dp_fn_inject(dp, VFW_DP_FN_VF(0), f, 1000);
    CHECK(steer_calls == 1 && steer_fn[0] == VFW_DP_FN_VF(1) &&
          steer_len[0] == 1000);
    CHECK(rd(dp, 2, VFW_REG_RXQ0 + VFW_RING_HEAD) == 0);
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_TX_PKTS) == 1);
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_TX_BYTES) == 1000);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 1);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_BYTES) == 1000);
    CHECK(irqs[2][1] == 0);
    /* not the engine's: offered, declined, written to VF1's RX ring */
    f[13] = 0xb5;
    vfw_dp_fn_inject(dp, VFW_DP_FN_VF(0), f, 1000);
    CHECK(steer_calls == 2);
    CHECK(rd(dp, 2, VFW_REG_RXQ0 + VFW_RING_HEAD) == 1);
    CHECK(!memcmp(at(B(2) + 0x8000), f, 1000));
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 2);
    /* a TX-ring frame is offered to the receiver's engine as well */
    f[13] = 0xb6;
    tx_post(dp, 1, f, 200, 0, 0, true);
    CHECK(steer_calls == 3 && steer_fn[2] == VFW_DP_FN_VF(1));
    CHECK(rd(dp, 2, VFW_REG_RXQ0 + VFW_RING_HEAD) == 1);
    /* from the uplink to the PF's engine */
    frame_make(f, pf_mac, (const uint8_t[6]){ 2, 0, 0, 9, 9, 9 }, 100, 3);
    f[13] = 0xb6;
    vfw_dp_uplink_rx(dp, f, 100);
    CHECK(steer_calls == 4 && steer_fn[3] == VFW_DP_FN_PF);
    CHECK(vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == 1);
    CHECK(rd(dp, 0, VFW_REG_RXQ0 + VFW_RING_HEAD) == 0);
    /* the switch's checks apply: a spoofed source is dropped and counted */
    frame_make(f, b, (const uint8_t[6]){ 2, 0xaa, 0, 0, 0, 1 }, 100, 4);
    f[13] = 0xb6;
    vfw_dp_fn_inject(dp, VFW_DP_FN_VF(0), f, 100);
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_TX_DROP_SPOOF) == 1);
    CHECK(steer_calls == 4);
    /* ... and the port VLAN: VF0 in VLAN 10 no longer reaches VF1 */
    vfw_dp_get_vf(dp, 0, &c);
    c.vlan = 10;
    CHECK(vfw_dp_set_vf(dp, 0, &c) == 0);
    frame_make(f, b, a, 100, 5);
    f[13] = 0xb6;
    vfw_dp_fn_inject(dp, VFW_DP_FN_VF(0), f, 100);
    CHECK(steer_calls == 4);
    CHECK(uplink_frames == 1 && uplink_last[15] == 10);  /* tagged out */
    c.vlan = 0;
    CHECK(vfw_dp_set_vf(dp, 0, &c) == 0);
    /* bad lengths and functions */
    uint64_t other = vfw_dp_stat(dp, 1, VFW_STAT_TX_DROP_OTHER);
    vfw_dp_fn_inject(dp, VFW_DP_FN_VF(0), f, 13);
    vfw_dp_fn_inject(dp, VFW_DP_FN_VF(0), f, VFW_FRAME_MAX + 1);
    vfw_dp_fn_inject(dp, VFW_DP_FN_VF(0), NULL, 100);
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_TX_DROP_OTHER) == other + 3);
    vfw_dp_fn_inject(dp, VFW_DP_FN_VF(4), f, 100);      /* no such VF */
    vfw_dp_fn_inject(dp, 9999, f, 100);
    vfw_dp_fn_inject(NULL, 1, f, 100);
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_TX_PKTS) == 5);  /* drops count too */
    /* synchronous ping-pong through two engines: bounded nesting */
    steer_calls = 0;
    steer_pingpong = true;
    frame_make(f, b, a, 64, 6);
    f[13] = 0xb6;
    vfw_dp_fn_inject(dp, VFW_DP_FN_VF(0), f, 64);
    CHECK(steer_calls == 4);
    CHECK(steer_fn[0] == 2 && steer_fn[1] == 1 && steer_fn[2] == 2 &&
          steer_fn[3] == 1);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_TX_DROP_OTHER) +
          vfw_dp_stat(dp, 1, VFW_STAT_TX_DROP_OTHER) == other + 4);
    steer_pingpong = false;
    /* max_mbps shapes injected frames: what the tokens allow passes, the
     * next 16 wait in the function's hold queue for the shaper's timer,
     * the rest is dropped (TX_DROP_METER) */
    vfw_dp_get_vf(dp, 0, &c);
    c.max_mbps = 8;                      /* 1 MB/s: burst ~18 KB */
    CHECK(vfw_dp_set_vf(dp, 0, &c) == 0);
    f[13] = 0xb5;
    frame_make(f, (const uint8_t[6]){ 2, 0, 0, 9, 9, 9 }, a, 1000, 7);
    unsigned up0 = uplink_frames;
    vfw_dp_fn_inject(dp, VFW_DP_FN_VF(0), f, 1000);  /* starts the clock */
    clock_ns += 10000000;                /* 10 ms: ~10 KB of tokens */
    up0 = uplink_frames;
    uint64_t meter0 = vfw_dp_stat(dp, 1, VFW_STAT_TX_DROP_METER);
    for (int i = 0; i < 100; i++) {
        vfw_dp_fn_inject(dp, VFW_DP_FN_VF(0), f, 1000);
    }
    CHECK(uplink_frames - up0 < 40 && uplink_frames - up0 > 5);
    if (uplink_frames - up0 >= 40 || uplink_frames - up0 <= 5) {
        fprintf(stderr, "policed: %u of 100 passed\n", uplink_frames - up0);
    }
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_TX_DROP_METER) - meter0 ==
          100 + 1 - (uplink_frames - up0) - 16);
    CHECK(timer_at[1] != 0);             /* the held frames' timer */
    /* the timer, 1 s on: the 16 held frames leave, oldest first */
    up0 = uplink_frames;
    clock_ns += 1000000000;
    dp_timer(dp, 1);
    CHECK(uplink_frames - up0 == 16);
    vfw_dp_destroy(dp);
}

/* RX descriptor i of fn, as written back. */
static const uint8_t *rx_desc(unsigned fn, unsigned i) { return at(R(fn) + 0x1000 + 16 * i); }

static int a_none_rd(void *o, uint64_t a, void *b, size_t n) { (void)o; (void)a; (void)b; (void)n; return -1; }
static int a_none_wr(void *o, uint64_t a, const void *b, size_t n) { (void)o; (void)a; (void)b; (void)n; return -1; }

static uint16_t esw_cmd(struct vfw_admin *a, uint16_t op, uint8_t mode, struct vfw_aq_desc *d)
{
    memset(d, 0, sizeof(*d));
    d->opcode = op;
    d->u.esw.mode = mode;
    return vfw_admin_exec(a, (uint8_t *)d);
}

/*
 * 2.2 switchdev mode through its admin command: a VF's frames that nothing
 * forwards reach the PF tagged with the VF (its representor's RX), wire
 * frames reach the PF untagged, the PF's untagged frames go to the wire
 * only, a PF descriptor with TO_PORT reaches one VF; bad uses of TO_PORT
 * and bad commands fail alone; legacy mode forwards as before.
 */
static void test_switchdev(void)
{
    struct vfw_dp *dp = fresh();
    struct vfw_admin adm;
    struct vfw_admin_ops aops = { .dma_read = a_none_rd, .dma_write = a_none_wr, .qos_dp = dp };
    struct vfw_aq_desc d;
    uint8_t a[6], b[6], f[200];
    const uint8_t remote[6] = { 2, 0, 0, 9, 9, 9 };
    unsigned i;

    CHECK(vfw_admin_init(&adm, &aops, 4) == 0);
    vfw_admin_set_num_vfs(&adm, 4);
    CHECK(esw_cmd(&adm, VFW_AQ_OP_ESW_GET_MODE, 0, &d) == VFW_AQ_S_OK);
    CHECK(d.u.esw.mode == VFW_ESW_MODE_LEGACY && d.u.esw.num_vfs == 4);
    /* bad commands change nothing */
    CHECK(esw_cmd(&adm, VFW_AQ_OP_ESW_SET_MODE, 2, &d) == VFW_AQ_S_RANGE);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_AQ_OP_ESW_SET_MODE;
    d.u.esw.mode = VFW_ESW_MODE_SWITCHDEV;
    d.u.esw.rsvd[3] = 1;
    CHECK(vfw_admin_exec(&adm, (uint8_t *)&d) == VFW_AQ_S_INVAL);
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_AQ_OP_ESW_SET_MODE;
    d.vf = 1;
    d.u.esw.mode = VFW_ESW_MODE_SWITCHDEV;
    CHECK(vfw_admin_exec(&adm, (uint8_t *)&d) == VFW_AQ_S_INVAL);
    CHECK(!vfw_dp_switchdev(dp));

    vmac(dp, 0, a);
    vmac(dp, 1, b);
    CHECK(esw_cmd(&adm, VFW_AQ_OP_ESW_SET_MODE, VFW_ESW_MODE_SWITCHDEV, &d) == VFW_AQ_S_OK);
    CHECK(esw_cmd(&adm, VFW_AQ_OP_ESW_GET_MODE, 0, &d) == VFW_AQ_S_OK);
    CHECK(d.u.esw.mode == VFW_ESW_MODE_SWITCHDEV);
    /* VF0 -> VF1's MAC: to the PF, tagged "from VF 0", not to VF1 */
    frame_make(f, b, a, 100, 0x11);
    i = tx_post(dp, 1, f, 100, 0, 0, true);
    CHECK(tx_status(1, i) == VFW_TXD_STS_DD);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 0);
    CHECK(vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == 1);
    CHECK(rx_desc(0, 0)[10] == (VFW_RXD_STS_DD | VFW_RXD_STS_EOP | VFW_RXD_STS_SRC));
    CHECK((rx_desc(0, 0)[14] | rx_desc(0, 0)[15] << 8) == 0);
    CHECK(!memcmp(at(B(0) + 0x8000), f, 100));
    /* VF1's broadcast: one copy, to the PF as VF 1's; not flooded */
    memset(f, 0xff, 6);
    memcpy(f + 6, b, 6);
    tx_post(dp, 2, f, 60, 0, 0, true);
    CHECK(uplink_frames == 0);
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_RX_PKTS) == 0 && vfw_dp_stat(dp, 3, VFW_STAT_RX_PKTS) == 0);
    CHECK(rx_desc(0, 1)[10] & VFW_RXD_STS_SRC);
    CHECK((rx_desc(0, 1)[14] | rx_desc(0, 1)[15] << 8) == 1);
    /* from the wire to VF0's MAC: the PF, untagged (uplink representor) */
    frame_make(f, a, remote, 80, 0x22);
    vfw_dp_uplink_rx(dp, f, 80);
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_RX_PKTS) == 0);
    CHECK(rx_desc(0, 2)[10] == (VFW_RXD_STS_DD | VFW_RXD_STS_EOP));
    /* the PF's frame to VF0's MAC goes to the wire, not to VF0 */
    frame_make(f, a, pf_mac, 90, 0x33);
    tx_post(dp, 0, f, 90, 0, 0, true);
    CHECK(uplink_frames == 1 && uplink_last_len == 90);
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_RX_PKTS) == 0);
    /* representor xmit: PF, TO_PORT 0 -> VF0's RX, as is */
    frame_make(f, a, remote, 120, 0x44);
    {
        uint8_t *dd;

        i = tx_post(dp, 0, f, 120, VFW_TXD_TO_PORT, 0, false);
        dd = at(R(0) + 16 * i);
        put16(dd + 14, 0);
        wr(dp, 0, VFW_REG_TXQ0 + VFW_RING_TAIL, tx_tail[0]);
        CHECK(tx_status(0, i) == VFW_TXD_STS_DD);
        CHECK(vfw_dp_stat(dp, 1, VFW_STAT_RX_PKTS) == 1);
        CHECK(!memcmp(at(B(1) + 0x8000), f, 120));
        CHECK(uplink_frames == 1);
        /* a VF that does not exist: the descriptor fails alone */
        i = tx_post(dp, 0, f, 120, VFW_TXD_TO_PORT, 0, false);
        dd = at(R(0) + 16 * i);
        put16(dd + 14, 4);
        wr(dp, 0, VFW_REG_TXQ0 + VFW_RING_TAIL, tx_tail[0]);
        CHECK(tx_status(0, i) == (VFW_TXD_STS_DD | VFW_TXD_STS_ERR));
        /* TO_PORT from a VF's ring: refused */
        i = tx_post(dp, 2, f, 120, VFW_TXD_TO_PORT, 0, true);
        CHECK(tx_status(2, i) == (VFW_TXD_STS_DD | VFW_TXD_STS_ERR));
        CHECK(vfw_dp_stat(dp, 1, VFW_STAT_RX_PKTS) == 1);
    }
    /* back to legacy: VF0 -> VF1 is forwarded in the switch again, and
     * TO_PORT is refused on the PF too */
    CHECK(esw_cmd(&adm, VFW_AQ_OP_ESW_SET_MODE, VFW_ESW_MODE_LEGACY, &d) == VFW_AQ_S_OK);
    frame_make(f, b, a, 100, 0x55);
    tx_post(dp, 1, f, 100, 0, 0, true);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 1);
    CHECK(vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == 3);
    i = tx_post(dp, 0, f, 120, VFW_TXD_TO_PORT, 0, true);
    CHECK(tx_status(0, i) == (VFW_TXD_STS_DD | VFW_TXD_STS_ERR));
    /* a device reset leaves switchdev mode */
    CHECK(esw_cmd(&adm, VFW_AQ_OP_ESW_SET_MODE, VFW_ESW_MODE_SWITCHDEV, &d) == VFW_AQ_S_OK);
    vfw_dp_reset(dp);
    CHECK(!vfw_dp_switchdev(dp));
    /* no data path behind the queue: UNSUPPORTED */
    aops.qos_dp = NULL;
    CHECK(vfw_admin_init(&adm, &aops, 4) == 0);
    CHECK(esw_cmd(&adm, VFW_AQ_OP_ESW_GET_MODE, 0, &d) == VFW_AQ_S_UNSUPPORTED);
    vfw_dp_destroy(dp);
}

static int a_mem_rd(void *o, uint64_t a, void *b, size_t n) { return t_read(o, 0, a, b, n); }

#define RULE_AT (MEM_BASE + 0x300000ull)

/* Write rule `r` to PF memory and run a RULE_ADD / REPLACE of it. */
static uint16_t rule_cmd(struct vfw_admin *adm, uint16_t op, uint64_t cookie,
                         const struct vfw_esw_rule *r, struct vfw_aq_desc *d)
{
    memcpy(at(RULE_AT), r, sizeof(*r));
    memset(d, 0, sizeof(*d));
    d->opcode = op;
    d->u.rule.cookie = cookie;
    d->u.rule.addr = RULE_AT;
    d->u.rule.len = sizeof(*r);
    return vfw_admin_exec(adm, (uint8_t *)d);
}

static uint16_t cookie_cmd(struct vfw_admin *adm, uint16_t op, uint64_t cookie,
                           uint16_t scope, struct vfw_aq_desc *d)
{
    memset(d, 0, sizeof(*d));
    d->opcode = op;
    d->u.rule.cookie = cookie;
    d->u.rule.scope = scope;
    return vfw_admin_exec(adm, (uint8_t *)d);
}

/* An IPv4/UDP frame from VF `vf` to dport, DSCP 0. */
static size_t udp_frame(struct vfw_dp *dp, uint8_t *f, unsigned vf, const uint8_t dst[6],
                        uint16_t dport)
{
    uint8_t src[6];

    vmac(dp, vf, src);
    memset(f, 0, 60);
    memcpy(f, dst, 6);
    memcpy(f + 6, src, 6);
    f[12] = 0x08;
    f[14] = 0x45;
    f[17] = 46;                 /* total length */
    f[22] = 64;
    f[23] = 17;                 /* UDP */
    f[26] = 10; f[29] = (uint8_t)(1 + vf);      /* 10.0.0.x */
    f[30] = 10; f[31] = 1; f[33] = 9;            /* 10.1.0.9 */
    f[34] = 0x10;               /* sport 4096 */
    f[36] = (uint8_t)(dport >> 8);
    f[37] = (uint8_t)dport;
    f[39] = 26;
    return 60;
}

/*
 * 2.3 offloaded rules through the admin queue, against frames on the
 * rings: a drop rule on VF0's UDP port range (counted), a redirect of
 * VF0's other traffic to VF1 (it no longer reaches the representor), a
 * police action, and every refusal changing nothing; leaving switchdev
 * mode deletes them all.
 */
static void test_esw_rules(void)
{
    struct vfw_dp *dp = fresh();
    struct vfw_admin adm;
    struct vfw_admin_ops aops = { .dma_read = a_mem_rd, .dma_write = a_none_wr, .qos_dp = dp };
    struct vfw_aq_desc d;
    struct vfw_esw_rule r;
    uint8_t f[64];
    const uint8_t remote[6] = { 2, 0, 0, 9, 9, 9 };
    uint64_t pf_rx, vf1_rx;
    vsw_rule_table_stats rs;

    CHECK(vfw_admin_init(&adm, &aops, 4) == 0);
    vfw_admin_set_num_vfs(&adm, 3);
    memset(&r, 0, sizeof(r));
    r.scope = 0;
    r.prio = 10;
    r.match = VFW_ESW_M_IP_PROTO | VFW_ESW_M_DPORT | VFW_ESW_M_IP_VERSION;
    r.ip_version = 4;
    r.ip_proto = 17;
    r.dport_lo = 5000;
    r.dport_hi = 5999;
    r.actions = VFW_ESW_A_DROP;
    /* legacy mode: no offloads */
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_ADD, 1, &r, &d) == VFW_AQ_S_UNSUPPORTED);
    CHECK(esw_cmd(&adm, VFW_AQ_OP_ESW_SET_MODE, VFW_ESW_MODE_SWITCHDEV, &d) == VFW_AQ_S_OK);
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_ADD, 1, &r, &d) == VFW_AQ_S_OK);
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_ADD, 1, &r, &d) == VFW_AQ_S_EXIST);
    /* VF0's UDP to 5500 is dropped in the switch, to 7000 takes the slow path */
    pf_rx = vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS);
    tx_post(dp, 1, f, (uint16_t)udp_frame(dp, f, 0, remote, 5500), 0, 0, true);
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_TX_DROP_ACL) == 1);
    CHECK(vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == pf_rx);
    tx_post(dp, 1, f, (uint16_t)udp_frame(dp, f, 0, remote, 7000), 0, 0, true);
    CHECK(vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == pf_rx + 1);
    /* the rule sees VF0's frames only: VF1's 5500 passes to the PF */
    tx_post(dp, 2, f, (uint16_t)udp_frame(dp, f, 1, remote, 5500), 0, 0, true);
    CHECK(vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == pf_rx + 2);
    CHECK(cookie_cmd(&adm, VFW_AQ_OP_ESW_RULE_STATS, 1, 0, &d) == VFW_AQ_S_OK);
    CHECK(d.u.rule.packets == 1 && d.u.rule.bytes == 60);
    /* redirect the rest of VF0's traffic to VF1, under the drop rule */
    r.prio = 20;
    r.match = 0;
    r.actions = VFW_ESW_A_REDIRECT;
    r.redirect_port = 1;
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_ADD, 2, &r, &d) == VFW_AQ_S_OK);
    vf1_rx = vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS);
    tx_post(dp, 1, f, (uint16_t)udp_frame(dp, f, 0, remote, 7000), 0, 0, true);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == vf1_rx + 1);
    CHECK(vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == pf_rx + 2);
    tx_post(dp, 1, f, (uint16_t)udp_frame(dp, f, 0, remote, 5001), 0, 0, true);
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_TX_DROP_ACL) == 2);   /* prio 10 first */
    /* replace it by a police action at 8 kbit/s, burst 100 bytes: the
     * first frame passes (burst), the next one at the same instant not */
    r.actions = VFW_ESW_A_POLICE;
    r.police_rate = 8000;
    r.police_burst = 100;
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_REPLACE, 2, &r, &d) == VFW_AQ_S_OK);
    tx_post(dp, 1, f, (uint16_t)udp_frame(dp, f, 0, remote, 7000), 0, 0, true);
    CHECK(vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == pf_rx + 3);
    tx_post(dp, 1, f, (uint16_t)udp_frame(dp, f, 0, remote, 7000), 0, 0, true);
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_TX_DROP_METER) == 1);
    CHECK(vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == pf_rx + 3);
    /* refusals, each changing nothing */
    vsw_rule_table_get_stats(vfw_dp_switch(dp), &rs);
    CHECK(rs.rules == 2);
    r.actions = VFW_ESW_A_DROP | VFW_ESW_A_REDIRECT;
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_ADD, 3, &r, &d) == VFW_AQ_S_INVAL);
    r.actions = VFW_ESW_A_REDIRECT;
    r.redirect_port = 3;                    /* VF 3 exists but is not enabled */
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_ADD, 3, &r, &d) == VFW_AQ_S_BAD_VF);
    r.redirect_port = 9;                    /* no VF 9 at all */
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_ADD, 3, &r, &d) == VFW_AQ_S_RANGE);
    r.redirect_port = 1;
    r.chain = 1;
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_ADD, 3, &r, &d) == VFW_AQ_S_UNSUPPORTED);
    r.chain = 0;
    r.rsvd2[12] = 1;
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_ADD, 3, &r, &d) == VFW_AQ_S_INVAL);
    r.rsvd2[12] = 0;
    r.match = VFW_ESW_M_DST_IP;
    r.ip_version = 4;
    r.dst_plen = 24;
    r.dst_ip[0] = 10; r.dst_ip[3] = 5;      /* host bits past the prefix */
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_ADD, 3, &r, &d) == VFW_AQ_S_INVAL);
    r.dst_ip[3] = 0;
    r.match = VFW_ESW_M_DPORT;
    r.dport_lo = 9;
    r.dport_hi = 8;
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_ADD, 3, &r, &d) == VFW_AQ_S_INVAL);
    memcpy(at(RULE_AT), &r, sizeof(r));
    memset(&d, 0, sizeof(d));
    d.opcode = VFW_AQ_OP_ESW_RULE_ADD;
    d.u.rule.cookie = 3;
    d.u.rule.addr = 0x10;                   /* not memory: DMA fails */
    d.u.rule.len = sizeof(r);
    CHECK(vfw_admin_exec(&adm, (uint8_t *)&d) == VFW_AQ_S_DMA);
    d.u.rule.addr = RULE_AT;
    d.u.rule.len = 64;
    CHECK(vfw_admin_exec(&adm, (uint8_t *)&d) == VFW_AQ_S_INVAL);
    CHECK(cookie_cmd(&adm, VFW_AQ_OP_ESW_RULE_DEL, 77, 0, &d) == VFW_AQ_S_NOENT);
    r.dport_lo = 8;
    r.dport_hi = 9;
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_REPLACE, 77, &r, &d) == VFW_AQ_S_NOENT);
    vsw_rule_table_get_stats(vfw_dp_switch(dp), &rs);
    CHECK(rs.rules == 2);
    CHECK(cookie_cmd(&adm, VFW_AQ_OP_ESW_RULE_STATS, 1, 0, &d) == VFW_AQ_S_OK);
    CHECK(d.u.rule.packets == 2);
    /* delete the drop rule: VF0's 5500 now meets the police rule */
    CHECK(cookie_cmd(&adm, VFW_AQ_OP_ESW_RULE_DEL, 1, 0, &d) == VFW_AQ_S_OK);
    CHECK(cookie_cmd(&adm, VFW_AQ_OP_ESW_RULE_STATS, 1, 0, &d) == VFW_AQ_S_NOENT);
    /* flush VF0's scope: the police rule and its meter go */
    CHECK(cookie_cmd(&adm, VFW_AQ_OP_ESW_RULE_FLUSH, 0, 0, &d) == VFW_AQ_S_OK);
    CHECK(d.u.rule.packets == 1);
    {
        int id = vfw_dp_meter_alloc(dp, 99);    /* the police meter is free again */

        CHECK(id == 1);
        vfw_dp_meter_free(dp, (unsigned)id);
    }
    CHECK(cookie_cmd(&adm, VFW_AQ_OP_ESW_RULE_FLUSH, 0, 7, &d) == VFW_AQ_S_RANGE);
    pf_rx = vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS);
    tx_post(dp, 1, f, (uint16_t)udp_frame(dp, f, 0, remote, 5500), 0, 0, true);
    tx_post(dp, 1, f, (uint16_t)udp_frame(dp, f, 0, remote, 5500), 0, 0, true);
    CHECK(vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == pf_rx + 2);
    /* a rule on the uplink's frames; legacy again deletes it */
    r.scope = VFW_ESW_PORT_UPLINK;
    r.match = 0;
    r.actions = VFW_ESW_A_DROP;
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_ADD, 4, &r, &d) == VFW_AQ_S_OK);
    frame_make(f, pf_mac, remote, 60, 1);
    vfw_dp_uplink_rx(dp, f, 60);
    CHECK(vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == pf_rx + 2);
    CHECK(esw_cmd(&adm, VFW_AQ_OP_ESW_SET_MODE, VFW_ESW_MODE_LEGACY, &d) == VFW_AQ_S_OK);
    vsw_rule_table_get_stats(vfw_dp_switch(dp), &rs);
    CHECK(rs.rules == 0);
    vfw_dp_uplink_rx(dp, f, 60);
    CHECK(vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == pf_rx + 3);
    vfw_dp_destroy(dp);
}

static uint16_t fdb_cmd(struct vfw_admin *adm, uint16_t op, const uint8_t mac[6], uint16_t vid,
                        uint16_t port, struct vfw_aq_desc *d)
{
    memset(d, 0, sizeof(*d));
    d->opcode = op;
    memcpy(d->u.fdb.mac, mac, 6);
    d->u.fdb.vid = vid;
    d->u.fdb.port = port;
    return vfw_admin_exec(adm, (uint8_t *)d);
}

/* 2.3 bridge FDB offload: once VF1's MAC is offloaded, VF0's frames to it
 * go to VF1 in the switch (not to the PF's slow path); a remote MAC on the
 * uplink likewise; refusals change nothing; legacy mode removes them. */
static void test_esw_fdb(void)
{
    struct vfw_dp *dp = fresh();
    struct vfw_admin adm;
    struct vfw_admin_ops aops = { .dma_read = a_mem_rd, .dma_write = a_none_wr, .qos_dp = dp };
    struct vfw_aq_desc d;
    uint8_t a[6], b[6], f[100];
    const uint8_t remote[6] = { 2, 0, 0, 9, 9, 9 }, mcast[6] = { 1, 0, 0x5e, 0, 0, 1 };
    uint64_t pf_rx;

    CHECK(vfw_admin_init(&adm, &aops, 4) == 0);
    vfw_admin_set_num_vfs(&adm, 2);
    vmac(dp, 0, a);
    vmac(dp, 1, b);
    CHECK(fdb_cmd(&adm, VFW_AQ_OP_ESW_FDB_ADD, b, 0, 1, &d) == VFW_AQ_S_UNSUPPORTED);
    CHECK(esw_cmd(&adm, VFW_AQ_OP_ESW_SET_MODE, VFW_ESW_MODE_SWITCHDEV, &d) == VFW_AQ_S_OK);
    pf_rx = vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS);
    frame_make(f, b, a, 100, 1);
    tx_post(dp, 1, f, 100, 0, 0, true);
    CHECK(vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == pf_rx + 1);      /* slow path */
    CHECK(fdb_cmd(&adm, VFW_AQ_OP_ESW_FDB_ADD, b, 0, 1, &d) == VFW_AQ_S_OK);
    CHECK(fdb_cmd(&adm, VFW_AQ_OP_ESW_FDB_ADD, remote, 0, VFW_ESW_PORT_UPLINK, &d) == VFW_AQ_S_OK);
    tx_post(dp, 1, f, 100, 0, 0, true);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == 1);              /* in the switch */
    CHECK(vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == pf_rx + 1);
    frame_make(f, remote, a, 100, 2);
    tx_post(dp, 1, f, 100, 0, 0, true);
    CHECK(uplink_frames == 1);
    /* refusals */
    CHECK(fdb_cmd(&adm, VFW_AQ_OP_ESW_FDB_ADD, mcast, 0, 1, &d) == VFW_AQ_S_INVAL);
    CHECK(fdb_cmd(&adm, VFW_AQ_OP_ESW_FDB_ADD, a, 4096, 0, &d) == VFW_AQ_S_RANGE);
    CHECK(fdb_cmd(&adm, VFW_AQ_OP_ESW_FDB_ADD, a, 0, 2, &d) == VFW_AQ_S_BAD_VF);
    CHECK(fdb_cmd(&adm, VFW_AQ_OP_ESW_FDB_ADD, pf_mac, 0, 1, &d) == VFW_AQ_S_EXIST);
    CHECK(fdb_cmd(&adm, VFW_AQ_OP_ESW_FDB_DEL, a, 0, 0, &d) == VFW_AQ_S_NOENT);
    /* the remote MAC moved to VF0's port, then deleted: slow path again */
    CHECK(fdb_cmd(&adm, VFW_AQ_OP_ESW_FDB_ADD, remote, 0, 0, &d) == VFW_AQ_S_OK);
    frame_make(f, remote, b, 100, 3);
    tx_post(dp, 2, f, 100, 0, 0, true);          /* from VF1: to VF0 now */
    CHECK(vfw_dp_stat(dp, 1, VFW_STAT_RX_PKTS) == 1);
    CHECK(uplink_frames == 1);
    CHECK(fdb_cmd(&adm, VFW_AQ_OP_ESW_FDB_DEL, remote, 0, 0, &d) == VFW_AQ_S_OK);
    tx_post(dp, 2, f, 100, 0, 0, true);
    CHECK(vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == pf_rx + 2);
    /* legacy: offloaded entries go, the VFs' own come back */
    CHECK(esw_cmd(&adm, VFW_AQ_OP_ESW_SET_MODE, VFW_ESW_MODE_LEGACY, &d) == VFW_AQ_S_OK);
    CHECK(vsw_fdb_lookup_static(vfw_dp_switch(dp), remote, 0) < 0);
    CHECK(vsw_fdb_lookup_static(vfw_dp_switch(dp), b, 0) == (int)VSW_PORT_VF(1));
    vfw_dp_destroy(dp);
}

static uint16_t vlan_cmd(struct vfw_admin *adm, uint16_t port, uint16_t vid, uint8_t op,
                         uint8_t flags, struct vfw_aq_desc *d)
{
    memset(d, 0, sizeof(*d));
    d->opcode = VFW_AQ_OP_ESW_PORT_VLAN;
    d->u.vlan_obj.port = port;
    d->u.vlan_obj.vid = vid;
    d->u.vlan_obj.op = op;
    d->u.vlan_obj.flags = flags;
    return vfw_admin_exec(adm, (uint8_t *)d);
}

/* 2.3 a VLAN-aware bridge in switchdev mode: VF0's port has PVID 10
 * (untagged) and VLAN 20, the uplink PVID 20 and VLAN 10; an FDB entry
 * learned in VLAN 10 forwards VF0's untagged frames to the wire in the
 * switch, tagged 10. VLAN-unaware again (or without a PVID) the VF's
 * untagged frames are in no bridge VLAN and take the slow path. */
static void test_esw_vlan(void)
{
    struct vfw_dp *dp = fresh();
    struct vfw_admin adm;
    struct vfw_admin_ops aops = { .dma_read = a_mem_rd, .dma_write = a_none_wr, .qos_dp = dp };
    struct vfw_aq_desc d;
    const uint8_t remote[6] = { 2, 0, 0, 9, 9, 9 };
    const uint8_t both = VFW_ESW_VLAN_F_PVID | VFW_ESW_VLAN_F_UNTAGGED;
    uint8_t a[6], f[100];
    uint64_t pf_rx;

    CHECK(vfw_admin_init(&adm, &aops, 4) == 0);
    vfw_admin_set_num_vfs(&adm, 2);
    vmac(dp, 0, a);
    CHECK(vlan_cmd(&adm, 0, 10, VFW_ESW_VLAN_ADD, both, &d) == VFW_AQ_S_UNSUPPORTED);
    CHECK(esw_cmd(&adm, VFW_AQ_OP_ESW_SET_MODE, VFW_ESW_MODE_SWITCHDEV, &d) == VFW_AQ_S_OK);
    /* refusals */
    CHECK(vlan_cmd(&adm, 0, 10, VFW_ESW_VLAN_ADD, VFW_ESW_VLAN_F_PVID, &d) == VFW_AQ_S_UNSUPPORTED);
    CHECK(vlan_cmd(&adm, 0, 4095, VFW_ESW_VLAN_ADD, 0, &d) == VFW_AQ_S_RANGE);
    CHECK(vlan_cmd(&adm, 0, 10, 7, 0, &d) == VFW_AQ_S_INVAL);
    CHECK(vlan_cmd(&adm, 2, 10, VFW_ESW_VLAN_ADD, 0, &d) == VFW_AQ_S_BAD_VF);
    CHECK(vlan_cmd(&adm, 0, 10, VFW_ESW_VLAN_DEL, 0, &d) == VFW_AQ_S_NOENT);
    /* VF0 and the uplink in VLAN 10 untagged, 20 tagged; VLAN-aware */
    CHECK(vlan_cmd(&adm, 0, 10, VFW_ESW_VLAN_ADD, both, &d) == VFW_AQ_S_OK);
    CHECK(vlan_cmd(&adm, 0, 20, VFW_ESW_VLAN_ADD, 0, &d) == VFW_AQ_S_OK);
    CHECK(vlan_cmd(&adm, VFW_ESW_PORT_UPLINK, 20, VFW_ESW_VLAN_ADD, both, &d) == VFW_AQ_S_OK);
    CHECK(vlan_cmd(&adm, VFW_ESW_PORT_UPLINK, 10, VFW_ESW_VLAN_ADD, 0, &d) == VFW_AQ_S_OK);
    CHECK(vlan_cmd(&adm, 0, 0, VFW_ESW_VLAN_AWARE_ON, 0, &d) == VFW_AQ_S_OK);
    CHECK(vlan_cmd(&adm, VFW_ESW_PORT_UPLINK, 0, VFW_ESW_VLAN_AWARE_ON, 0, &d) == VFW_AQ_S_OK);
    /* the bridge learned the remote MAC in VLAN 10: VF0's untagged frame
     * (VLAN 10 by its PVID) goes to the wire in the switch, tagged 10
     * (the uplink's untagged VLAN is 20) */
    CHECK(fdb_cmd(&adm, VFW_AQ_OP_ESW_FDB_ADD, remote, 10, VFW_ESW_PORT_UPLINK, &d) == VFW_AQ_S_OK);
    frame_make(f, remote, a, 100, 1);
    tx_post(dp, 1, f, 100, 0, 0, true);
    CHECK(uplink_frames == 1 && uplink_last_len == 104);
    CHECK(uplink_last[12] == 0x81 && uplink_last[13] == 0 && uplink_last[15] == 10);
    /* the PF (the bridge's uplink port): its untagged frames are in the
     * uplink's PVID (20) and leave untagged */
    frame_make(f, remote, pf_mac, 100, 2);
    tx_post(dp, 0, f, 100, 0, 0, true);
    CHECK(uplink_frames == 2 && uplink_last_len == 100 && uplink_last[12] == 0x88);
    uplink_frames = 1;
    frame_make(f, remote, a, 100, 1);
    /* not aware: the VF's untagged frames are in no VLAN: the entry in
     * VLAN 10 no longer matches, the frame takes the slow path */
    pf_rx = vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS);
    CHECK(vlan_cmd(&adm, 0, 0, VFW_ESW_VLAN_AWARE_OFF, 0, &d) == VFW_AQ_S_OK);
    tx_post(dp, 1, f, 100, 0, 0, true);
    CHECK(uplink_frames == 1);
    CHECK(vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == pf_rx + 1);
    /* aware again; the PVID removed: untagged frames are in no VLAN */
    CHECK(vlan_cmd(&adm, 0, 0, VFW_ESW_VLAN_AWARE_ON, 0, &d) == VFW_AQ_S_OK);
    tx_post(dp, 1, f, 100, 0, 0, true);
    CHECK(uplink_frames == 2);
    CHECK(vlan_cmd(&adm, 0, 10, VFW_ESW_VLAN_ADD, 0, &d) == VFW_AQ_S_OK);   /* PVID flag off */
    tx_post(dp, 1, f, 100, 0, 0, true);
    CHECK(uplink_frames == 2);
    CHECK(vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == pf_rx + 2);
    CHECK(vlan_cmd(&adm, 0, 10, VFW_ESW_VLAN_ADD, both, &d) == VFW_AQ_S_OK);
    tx_post(dp, 1, f, 100, 0, 0, true);
    CHECK(uplink_frames == 3);
    CHECK(vlan_cmd(&adm, 0, 10, VFW_ESW_VLAN_DEL, 0, &d) == VFW_AQ_S_OK);
    tx_post(dp, 1, f, 100, 0, 0, true);
    CHECK(uplink_frames == 3);
    CHECK(vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == pf_rx + 3);
    vfw_dp_destroy(dp);
}

/* 2.4 VLAN push / pop rules: VF0's frames to a remote MAC known in VLAN
 * 10 leave the wire tagged 10 (priority 5) with a push rule on VF0, and
 * take the slow path untagged without it; the wire's frames of VLAN 10 to
 * VF1 reach it untagged with a pop rule on the uplink (and the PF's slow
 * path, still tagged, without). Counters; every bad field refused with
 * its status and nothing changed. */
static void test_esw_vlan_actions(void)
{
    struct vfw_dp *dp = fresh();
    struct vfw_admin adm;
    struct vfw_admin_ops aops = { .dma_read = a_mem_rd, .dma_write = a_none_wr, .qos_dp = dp };
    struct vfw_aq_desc d;
    struct vfw_esw_rule r, push, pop;
    const uint8_t remote[6] = { 2, 0, 0, 9, 9, 9 };
    uint8_t a[6], b[6], f[100];
    uint64_t pf_rx, vf1_rx;
    vsw_rule_table_stats rs;

    CHECK(vfw_admin_init(&adm, &aops, 4) == 0);
    vfw_admin_set_num_vfs(&adm, 2);
    vmac(dp, 0, a);
    vmac(dp, 1, b);
    CHECK(esw_cmd(&adm, VFW_AQ_OP_ESW_SET_MODE, VFW_ESW_MODE_SWITCHDEV, &d) == VFW_AQ_S_OK);
    CHECK(fdb_cmd(&adm, VFW_AQ_OP_ESW_FDB_ADD, remote, 10, VFW_ESW_PORT_UPLINK, &d) == VFW_AQ_S_OK);
    CHECK(fdb_cmd(&adm, VFW_AQ_OP_ESW_FDB_ADD, b, 0, 1, &d) == VFW_AQ_S_OK);
    /* without a rule VF0's untagged frame misses (remote is in VLAN 10) */
    pf_rx = vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS);
    frame_make(f, remote, a, 100, 1);
    tx_post(dp, 1, f, 100, 0, 0, true);
    CHECK(uplink_frames == 0 && vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == pf_rx + 1);
    memset(&push, 0, sizeof(push));
    push.scope = 0;
    push.actions = VFW_ESW_A_VLAN_PUSH;
    push.vlan_vid = 10;
    push.vlan_prio = 5;
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_ADD, 1, &push, &d) == VFW_AQ_S_OK);
    tx_post(dp, 1, f, 100, 0, 0, true);
    CHECK(uplink_frames == 1 && uplink_last_len == 104);
    CHECK(uplink_last[12] == 0x81 && uplink_last[13] == 0 &&
          uplink_last[14] == (5 << 5) && uplink_last[15] == 10);
    CHECK(!memcmp(uplink_last, f, 12) && !memcmp(uplink_last + 16, f + 12, 88));
    CHECK(vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == pf_rx + 1);
    CHECK(cookie_cmd(&adm, VFW_AQ_OP_ESW_RULE_STATS, 1, 0, &d) == VFW_AQ_S_OK);
    CHECK(d.u.rule.packets == 1 && d.u.rule.bytes == 100);

    /* pop on the uplink: VLAN 10 from the wire to VF1's MAC */
    memcpy(f, b, 6);
    memcpy(f + 6, remote, 6);
    f[12] = 0x81; f[13] = 0; f[14] = 0; f[15] = 10;
    f[16] = 0x88; f[17] = 0xb5;
    memset(f + 18, 7, 82);
    vf1_rx = vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS);
    vfw_dp_uplink_rx(dp, f, 100);           /* no rule: (VF1, 10) misses */
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == vf1_rx);
    CHECK(vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == pf_rx + 2);
    memset(&pop, 0, sizeof(pop));
    pop.scope = VFW_ESW_PORT_UPLINK;
    pop.actions = VFW_ESW_A_VLAN_POP;
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_ADD, 2, &pop, &d) == VFW_AQ_S_OK);
    vfw_dp_uplink_rx(dp, f, 100);
    CHECK(vfw_dp_stat(dp, 2, VFW_STAT_RX_PKTS) == vf1_rx + 1);
    CHECK((rx_desc(2, 0)[8] | rx_desc(2, 0)[9] << 8) == 96);
    CHECK(!memcmp(at(B(2) + 0x8000), f, 12) && !memcmp(at(B(2) + 0x8000 + 12), f + 16, 84));
    CHECK(cookie_cmd(&adm, VFW_AQ_OP_ESW_RULE_STATS, 2, 0, &d) == VFW_AQ_S_OK);
    CHECK(d.u.rule.packets == 1);

    /* refusals, each changing nothing */
    vsw_rule_table_get_stats(vfw_dp_switch(dp), &rs);
    CHECK(rs.rules == 2);
    r = push;
    r.actions = VFW_ESW_A_VLAN_PUSH | VFW_ESW_A_VLAN_POP;
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_ADD, 3, &r, &d) == VFW_AQ_S_INVAL);
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_REPLACE, 1, &r, &d) == VFW_AQ_S_INVAL);
    r.actions = VFW_ESW_A_VLAN_PUSH;
    r.vlan_vid = 0;
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_ADD, 3, &r, &d) == VFW_AQ_S_RANGE);
    r.vlan_vid = 4095;
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_REPLACE, 1, &r, &d) == VFW_AQ_S_RANGE);
    r.vlan_vid = 10;
    r.vlan_prio = 8;
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_REPLACE, 1, &r, &d) == VFW_AQ_S_RANGE);
    r = pop;                                /* the push's fields without a push */
    r.vlan_vid = 10;
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_REPLACE, 2, &r, &d) == VFW_AQ_S_INVAL);
    r.vlan_vid = 0;
    r.vlan_prio = 1;
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_ADD, 3, &r, &d) == VFW_AQ_S_INVAL);
    r.vlan_prio = 0;
    r.rsvd2[0] = 1;
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_ADD, 3, &r, &d) == VFW_AQ_S_INVAL);
    r.rsvd2[0] = 0;
    r.actions = 1u << 7;                    /* beyond the defined actions */
    CHECK(rule_cmd(&adm, VFW_AQ_OP_ESW_RULE_ADD, 3, &r, &d) == VFW_AQ_S_INVAL);
    vsw_rule_table_get_stats(vfw_dp_switch(dp), &rs);
    CHECK(rs.rules == 2);
    frame_make(f, remote, a, 100, 1);       /* both rules still act */
    tx_post(dp, 1, f, 100, 0, 0, true);
    CHECK(uplink_frames == 2 && uplink_last_len == 104 && uplink_last[14] == (5 << 5) &&
          uplink_last[15] == 10);
    /* the push deleted: the slow path again, untagged */
    CHECK(cookie_cmd(&adm, VFW_AQ_OP_ESW_RULE_DEL, 1, 0, &d) == VFW_AQ_S_OK);
    tx_post(dp, 1, f, 100, 0, 0, true);
    CHECK(uplink_frames == 2 && vfw_dp_stat(dp, 0, VFW_STAT_RX_PKTS) == pf_rx + 3);
    vfw_dp_destroy(dp);
}

/* Issue 33, class 6: the PF's broadcast reaches VF 0's RX ring, whose
 * buffer the guest aimed at VF 1's BAR0: the DMA writes VF 1's TX TAIL.
 * That write only records; VF 1's frame leaves in the next run, after the
 * PF's frame has reached every port intact. (With TX inside the TAIL
 * write, VF 1's TX ran in the middle of the PF's frame: dp->buf then held
 * VF 1's frame, and VF 1 received its own frame in place of the PF's.) */
static struct vfw_dp *tail_dp;
static bool tail_hooked;
static unsigned tail_frames_in_hook;

static int t_write_tail(void *ctx, unsigned fn, uint64_t a, const void *b,
                        size_t l)
{
    if (!tail_hooked && fn == VFW_DP_FN_VF(0) && a >= B(fn) + 0x8000) {
        tail_hooked = true;
        vfw_dp_write(tail_dp, VFW_DP_FN_VF(1), VFW_REG_TXQ0 + VFW_RING_TAIL,
                     tx_tail[VFW_DP_FN_VF(1)], 4);
        tail_frames_in_hook = uplink_frames;
    }
    return t_write(ctx, fn, a, b, l);
}

static void test_tail_in_callback(void)
{
    static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    static const uint8_t remote[6] = { 2, 0, 0, 9, 9, 9 };
    struct vfw_dp_ops o = ops;
    struct vfw_dp *dp;
    uint8_t fa[200], fb[200], m1[6];

    o.dma_write = t_write_tail;
    dp = vfw_dp_create(&o, NULL, pf_mac, 4);
    CHECK(dp != NULL);
    if (!dp) {
        return;
    }
    tail_dp = dp;
    tail_hooked = false;
    tail_frames_in_hook = 99;
    memset(mem, 0, sizeof(mem));
    memset(tx_tail, 0, sizeof(tx_tail));
    uplink_frames = 0;
    vfw_dp_set_uplink(dp, true);
    for (unsigned fn = 0; fn < 3; fn++) {
        rings_up(dp, fn);
    }
    vmac(dp, 1, m1);
    frame_make(fa, bcast, pf_mac, sizeof(fa), 0xa5);
    frame_make(fb, remote, m1, sizeof(fb), 0xb6);
    tx_post(dp, VFW_DP_FN_VF(1), fb, sizeof(fb), 0, 0, false);
    tx_post(dp, VFW_DP_FN_PF, fa, sizeof(fa), 0, 0, true);
    CHECK(tail_hooked);
    CHECK(tail_frames_in_hook == 1);    /* the PF's only, nothing nested */
    CHECK(memcmp(at(B(VFW_DP_FN_VF(1)) + 0x8000), fa, sizeof(fa)) == 0);
    CHECK(uplink_frames == 2);          /* VF 1's, from the next run */
    CHECK(uplink_last_len == sizeof(fb) &&
          memcmp(uplink_last, fb, sizeof(fb)) == 0);
    CHECK(rd(dp, VFW_DP_FN_VF(1), VFW_REG_TXQ0 + VFW_RING_HEAD) == 1);
    vfw_dp_destroy(dp);
}

int main(void)
{
    test_regs();
    test_tx_rings();
    test_vf_to_vf();
    test_bad_descriptors();
    test_policy();
    test_rx_filters();
    test_shaping();
    test_chaos();
    test_inject_steer();
    test_tail_in_callback();
    test_switchdev();
    test_esw_rules();
    test_esw_fdb();
    test_esw_vlan();
    test_esw_vlan_actions();
    printf("dataplane: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
