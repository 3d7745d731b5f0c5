/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_iwarp.c - the iWARP engine over an in-memory reliable stream: MPA
 * setup (v1/v2, RTR types, IRD/ORD, private data, reject), every RDMAP
 * opcode at sizes 1 B .. 4 MB with checksums, ORD limits, protection
 * violations (each with its RFC error and untouched memory), flush, close.
 */
#include "iwarp_harness.h"
#include "simwire.h"
#include "iwarp/vfw_iwarp.h"   /* white-box: index wrap test */
#include "vfw_iwarp_tcp.h"

#define MEMSZ (12u << 20)
#define SRC   (MEM_BASE)
#define DST   (MEM_BASE + (5u << 20))

struct pair {
    uint64_t clock;
    struct host a, b;
    struct pipe p;
    uint32_t pd_a, pd_b, cq_a, cq_b, qp_a, qp_b, mr_a, mr_b;
};

static const uint32_t ALL = VFW_ACC_LOCAL_WRITE | VFW_ACC_REMOTE_WRITE |
                            VFW_ACC_REMOTE_READ;

static void pair_create(struct pair *x, uint64_t seed)
{
    memset(x, 0, sizeof(*x));
    host_init(&x->a, &x->clock, MEMSZ, 1);
    host_init(&x->b, &x->clock, MEMSZ, 2);
    struct host *hs[2] = { &x->a, &x->b };
    uint32_t *pd[2] = { &x->pd_a, &x->pd_b }, *cq[2] = { &x->cq_a, &x->cq_b },
             *qp[2] = { &x->qp_a, &x->qp_b }, *mr[2] = { &x->mr_a, &x->mr_b };
    for (int i = 0; i < 2; i++) {
        CHECK_EQ(vfw_pd_alloc(hs[i]->e, pd[i]), 0);
        CHECK_EQ(vfw_cq_create(hs[i]->e, 8192, cq[i]), 0);
        struct vfw_qp_attr a = { .pd_id = *pd[i], .send_cq = *cq[i],
            .recv_cq = *cq[i], .sq_depth = 256, .rq_depth = 256, .ord = 4,
            .ird = 4, .max_sge = 4 };
        CHECK_EQ(vfw_qp_create(hs[i]->e, &a, qp[i]), 0);
        CHECK_EQ(vfw_mr_reg(hs[i]->e, *pd[i], MEM_BASE, MEMSZ, ALL, mr[i]), 0);
    }
    pipe_init(&x->p, &x->a, &x->b, 1460, 256 * 1024, 4000, seed);
}

static void pair_connect(struct pair *x, uint8_t rev, uint8_t p2p,
                         uint8_t rtr_a, uint8_t rtr_b)
{
    x->b.accept_qp = x->qp_b;
    x->b.accept_param = (struct vfw_conn_param){ .mpa_rev = rev, .p2p = p2p,
        .rtr_mask = rtr_b, .crc = 1, .ird = 2, .pdata_len = 4 };
    memcpy(x->b.accept_param.pdata, "resp", 4);
    struct vfw_conn_param cp = { .mpa_rev = rev, .p2p = p2p, .rtr_mask = rtr_a,
                                 .crc = 1, .ord = 4, .pdata_len = 5 };
    memcpy(cp.pdata, "hello", 5);
    CHECK_EQ(vfw_connect(x->a.e, x->p.cep[0], x->qp_a, &cp), 0);
    pipe_pump(&x->p);
}

static void pair_destroy(struct pair *x)
{
    host_fini(&x->a);
    host_fini(&x->b);
    pipe_fini(&x->p);
}

static int poll1(struct host *h, uint32_t cq, struct vfw_cqe *c)
{
    return vfw_cq_poll(h->e, cq, c, 1);
}

static int qp_state(struct host *h, uint32_t qp)
{
    struct vfw_qp_info i;
    if (vfw_qp_query(h->e, qp, &i))
        return -1;
    return i.state;
}

/* ---- tests -----------------------------------------------------------------*/

static void test_crc32c(void)
{
    CHECK_EQ(vfw_crc32c(0, "123456789", 9), 0xE3069283u);
    uint8_t buf[1000];
    fill(buf, sizeof(buf), 7);
    /* reference: bitwise CRC32c */
    uint32_t c = ~0u;
    for (size_t i = 0; i < sizeof(buf); i++) {
        c ^= buf[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1)));
    }
    for (size_t off = 0; off < 9; off++) {
        uint32_t a = vfw_crc32c(0, buf, off);
        a = vfw_crc32c(a, buf + off, sizeof(buf) - off);
        CHECK_EQ(a, ~c);
    }
    /* every length/alignment class across the 3-lane block sizes */
    enum { BIG = 3 * 2048 * 2 + 3 * 160 * 2 + 50 };
    uint8_t *big = malloc(BIG + 8);
    fill(big, BIG + 8, 11);
    /* ... and the AVX-512 folding path's edges (256-byte blocks, 64-byte
     * tail blocks, 16-byte residues, < 16 B CRC32 tail) */
    static const size_t lens[] = { 0, 1, 7, 8, 255, 256, 257, 271, 272,
                                   319, 320, 335, 336, 479, 480, 481, 511,
                                   512, 513, 575, 576, 961, 1454,
                                   1460, 6143, 6144, 6145, 8946, 8996, BIG };
    int bad = 0;
    for (size_t li = 0; li < sizeof(lens) / sizeof(lens[0]); li++)
        for (size_t al = 0; al < 8; al++) {
            uint32_t r = ~0u;
            for (size_t i = 0; i < lens[li]; i++) {
                r ^= big[al + i];
                for (int k = 0; k < 8; k++)
                    r = (r >> 1) ^ (0x82F63B78u & (0u - (r & 1)));
            }
            if (vfw_crc32c(0, big + al, lens[li]) != ~r)
                bad++;
        }
    CHECK_EQ(bad, 0);
    free(big);
    printf("crc32c: %s\n", vfw_crc32c_is_hw() ? "sse4.2" : "bitwise");
}

static void test_setup_variants(void)
{
    static const struct { uint8_t rev, p2p, ra, rb, want; } v[] = {
        { 2, 1, 7, 7, VFW_RTR_WRITE }, { 2, 1, VFW_RTR_SEND, 7, VFW_RTR_SEND },
        { 2, 1, VFW_RTR_READ, 7, VFW_RTR_READ }, { 2, 0, 0, 0, 0 },
        { 1, 0, 0, 0, 0 },
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        struct pair x;
        pair_create(&x, 11 + i);
        pair_connect(&x, v[i].rev, v[i].p2p, v[i].ra, v[i].rb);
        int ea = h_find_ev(&x.a, VFW_CM_ESTABLISHED);
        int eb = h_find_ev(&x.b, VFW_CM_ESTABLISHED);
        int rq = h_find_ev(&x.b, VFW_CM_CONNECT_REQUEST);
        CHECK(ea >= 0 && eb >= 0 && rq >= 0);
        if (ea < 0 || eb < 0 || rq < 0) {
            pair_destroy(&x);
            continue;
        }
        CHECK_EQ(x.b.ev[rq].pdata_len, 5);
        CHECK(memcmp(x.b.ev[rq].pdata, "hello", 5) == 0);
        CHECK_EQ(x.a.ev[ea].pdata_len, 4);
        CHECK(memcmp(x.a.ev[ea].pdata, "resp", 4) == 0);
        CHECK_EQ(qp_state(&x.a, x.qp_a), VFW_QPS_RTS);
        CHECK_EQ(qp_state(&x.b, x.qp_b), VFW_QPS_RTS);
        struct vfw_qp_info ia;
        vfw_qp_query(x.a.e, x.qp_a, &ia);
        if (v[i].rev == 2) {
            CHECK_EQ(x.b.ev[rq].ord, 4);
            CHECK_EQ(ia.ord, 2);           /* min(ORD 4, peer IRD 2) */
        }
        CHECK_EQ(ia.mulpdu, 1454);
        /* data flows both ways: B sends first (works only after the RTR
         * in p2p mode; client-server needs A first) */
        struct vfw_recv_wr r = { .wr_id = 5, .num_sge = 1,
            .sge = { { x.mr_a, 64, DST } } };
        CHECK_EQ(vfw_post_recv(x.a.e, x.qp_a, &r), 0);
        r.sge[0].stag = x.mr_b;
        CHECK_EQ(vfw_post_recv(x.b.e, x.qp_b, &r), 0);
        fill(x.a.mem, 64, 1);
        fill(x.b.mem, 64, 2);
        struct vfw_send_wr s = { .wr_id = 9, .opcode = VFW_WR_SEND,
            .flags = VFW_WR_F_SIGNALED, .num_sge = 1,
            .sge = { { x.mr_b, 64, SRC } } };
        CHECK_EQ(vfw_post_send(x.b.e, x.qp_b, &s), 0);
        pipe_pump(&x.p);
        if (!v[i].p2p) {
            struct vfw_cqe c;
            CHECK_EQ(poll1(&x.a, x.cq_a, &c), 0);   /* B is gated */
            s.sge[0].stag = x.mr_a;
            CHECK_EQ(vfw_post_send(x.a.e, x.qp_a, &s), 0);
            pipe_pump(&x.p);
        }
        CHECK(memcmp(x.a.mem + (DST - MEM_BASE), x.b.mem, 64) == 0);
        if (!v[i].p2p)
            CHECK(memcmp(x.b.mem + (DST - MEM_BASE), x.a.mem, 64) == 0);
        pair_destroy(&x);
    }
}

/* Work posted before the connection is up goes out right after the RTR;
 * with a Read RTR the zero-length answer precedes the real Read's. */
static void test_rtr_then_work(void)
{
    static const uint8_t rtrs[] = { VFW_RTR_READ, VFW_RTR_SEND,
                                    VFW_RTR_WRITE };
    for (size_t i = 0; i < sizeof(rtrs); i++) {
        struct pair x;
        pair_create(&x, 50 + i);
        x.b.accept_qp = x.qp_b;
        x.b.accept_param = (struct vfw_conn_param){ .mpa_rev = 2, .p2p = 1,
            .crc = 1 };
        struct vfw_conn_param cp = { .mpa_rev = 2, .p2p = 1, .crc = 1,
                                     .rtr_mask = rtrs[i] };
        fill(x.b.mem, 3000, 5);
        CHECK_EQ(vfw_connect(x.a.e, x.p.cep[0], x.qp_a, &cp), 0);
        struct vfw_send_wr s = { .wr_id = 1, .opcode = VFW_WR_RDMA_READ,
            .flags = VFW_WR_F_SIGNALED, .num_sge = 1,
            .sge = { { x.mr_a, 3000, DST } }, .remote_stag = x.mr_b,
            .remote_addr = SRC };
        CHECK_EQ(vfw_post_send(x.a.e, x.qp_a, &s), 0);
        struct vfw_recv_wr r = { .wr_id = 2, .num_sge = 1,
            .sge = { { x.mr_b, 100, DST } } };
        CHECK_EQ(vfw_post_recv(x.b.e, x.qp_b, &r), 0);
        s = (struct vfw_send_wr){ .wr_id = 3, .opcode = VFW_WR_SEND,
            .flags = VFW_WR_F_SIGNALED, .num_sge = 1,
            .sge = { { x.mr_a, 100, SRC } } };
        CHECK_EQ(vfw_post_send(x.a.e, x.qp_a, &s), 0);
        pipe_pump(&x.p);
        struct vfw_cqe c[2];
        CHECK_EQ(vfw_cq_poll(x.a.e, x.cq_a, c, 2), 2);
        CHECK_EQ(c[0].wr_id, 1);
        CHECK_EQ(c[0].status, VFW_WC_SUCCESS);
        CHECK_EQ(c[1].wr_id, 3);
        CHECK_EQ(c[1].status, VFW_WC_SUCCESS);
        CHECK_EQ(poll1(&x.b, x.cq_b, c), 1);
        CHECK_EQ(c[0].wr_id, 2);
        CHECK_EQ(c[0].status, VFW_WC_SUCCESS);
        CHECK(memcmp(x.a.mem + (DST - MEM_BASE), x.b.mem, 3000) == 0);
        CHECK_EQ(qp_state(&x.a, x.qp_a), VFW_QPS_RTS);
        pair_destroy(&x);
    }
}

/* CQ arming: solicited-only fires for Send-with-SE, not for plain Send */
static void test_solicited_notify(void)
{
    struct pair x;
    pair_create(&x, 60);
    pair_connect(&x, 2, 1, 7, 7);
    for (int i = 0; i < 2; i++) {
        struct vfw_recv_wr r = { .wr_id = (uint64_t)i, .num_sge = 1,
                                 .sge = { { x.mr_b, 64, DST } } };
        CHECK_EQ(vfw_post_recv(x.b.e, x.qp_b, &r), 0);
    }
    CHECK_EQ(vfw_cq_arm(x.b.e, x.cq_b, 1), 0);
    uint64_t n0 = x.b.notifies;
    struct vfw_send_wr s = { .wr_id = 1, .opcode = VFW_WR_SEND, .num_sge = 1,
                             .sge = { { x.mr_a, 8, SRC } } };
    CHECK_EQ(vfw_post_send(x.a.e, x.qp_a, &s), 0);
    pipe_pump(&x.p);
    CHECK_EQ(x.b.notifies, n0);
    s.opcode = VFW_WR_SEND_SE;
    CHECK_EQ(vfw_post_send(x.a.e, x.qp_a, &s), 0);
    pipe_pump(&x.p);
    CHECK_EQ(x.b.notifies, n0 + 1);
    struct vfw_cqe c[2];
    CHECK_EQ(vfw_cq_poll(x.b.e, x.cq_b, c, 2), 2);
    CHECK_EQ(c[0].flags & VFW_WC_F_SOLICITED, 0);
    CHECK(c[1].flags & VFW_WC_F_SOLICITED);
    pair_destroy(&x);
}

/* Free-running 32-bit queue indices wrap without aliasing (depth 3: not
 * a power of two) */
static void test_index_wrap(void)
{
    struct pair x;
    pair_create(&x, 70);
    uint32_t qa, qb;
    struct vfw_qp_attr at = { .pd_id = x.pd_a, .send_cq = x.cq_a,
        .recv_cq = x.cq_a, .sq_depth = 3, .rq_depth = 3, .ord = 1, .ird = 1,
        .max_sge = 1 };
    CHECK_EQ(vfw_qp_create(x.a.e, &at, &qa), 0);
    at.pd_id = x.pd_b; at.send_cq = at.recv_cq = x.cq_b;
    CHECK_EQ(vfw_qp_create(x.b.e, &at, &qb), 0);
    x.qp_a = qa;
    x.qp_b = qb;
    pair_connect(&x, 2, 1, 7, 7);
    struct vfw_qp *pa = vfw_qp_get(x.a.e, qa), *pb = vfw_qp_get(x.b.e, qb);
    pa->sq_head = pa->sq_next = pa->sq_tail = 0xFFFFFFFEu;
    pb->rq_head = pb->rq_tail = 0xFFFFFFFDu;
    int ok = 0;
    for (uint32_t i = 0; i < 12; i++) {
        struct vfw_recv_wr r = { .wr_id = i, .num_sge = 1,
                                 .sge = { { x.mr_b, 8, DST + 8 * i } } };
        CHECK_EQ(vfw_post_recv(x.b.e, qb, &r), 0);
        x.a.mem[i] = (uint8_t)(0xA0 + i);
        struct vfw_send_wr s = { .wr_id = i, .opcode = VFW_WR_SEND,
            .flags = VFW_WR_F_SIGNALED, .num_sge = 1,
            .sge = { { x.mr_a, 1, SRC + i } } };
        CHECK_EQ(vfw_post_send(x.a.e, qa, &s), 0);
        pipe_pump(&x.p);
        struct vfw_cqe c;
        if (poll1(&x.a, x.cq_a, &c) == 1 && c.wr_id == i &&
            poll1(&x.b, x.cq_b, &c) == 1 && c.wr_id == i &&
            x.b.mem[DST - MEM_BASE + 8 * i] == 0xA0 + i)
            ok++;
    }
    CHECK_EQ(ok, 12);
    pair_destroy(&x);
}

/* 129 engines (PF + 128 VFs) in one process: no shared state; pairs talk
 * while the others hold their own objects. */
static void test_many_engines(void)
{
    enum { N = 129, MEM = 65536 };
    static struct host h[N];
    static struct pipe p[N / 2];
    uint64_t clk = 0;
    uint32_t pd[N], cq[N], qp[N], mr[N];
    int ok = 0;
    for (int i = 0; i < N; i++) {
        host_init(&h[i], &clk, MEM, (uint16_t)i);
        vfw_pd_alloc(h[i].e, &pd[i]);
        vfw_cq_create(h[i].e, 16, &cq[i]);
        struct vfw_qp_attr a = { .pd_id = pd[i], .send_cq = cq[i],
            .recv_cq = cq[i], .sq_depth = 4, .rq_depth = 4, .ord = 1,
            .ird = 1, .max_sge = 1 };
        vfw_qp_create(h[i].e, &a, &qp[i]);
        vfw_mr_reg(h[i].e, pd[i], MEM_BASE, MEM, 7, &mr[i]);
    }
    for (int k = 0; k < N / 2; k++) {
        struct host *a = &h[2 * k], *b = &h[2 * k + 1];
        pipe_init(&p[k], a, b, 1460, 65536, 700, (uint64_t)k + 1);
        b->accept_qp = qp[2 * k + 1];
        b->accept_param = (struct vfw_conn_param){ .mpa_rev = 2, .p2p = 1,
                                                   .crc = 1 };
        struct vfw_conn_param cp = { .mpa_rev = 2, .p2p = 1, .crc = 1 };
        vfw_connect(a->e, p[k].cep[0], qp[2 * k], &cp);
        struct vfw_recv_wr r = { .wr_id = 1, .num_sge = 1,
                                 .sge = { { mr[2 * k + 1], 64, MEM_BASE } } };
        vfw_post_recv(b->e, qp[2 * k + 1], &r);
        snprintf((char *)a->mem, 64, "engine %d says hi", 2 * k);
        struct vfw_send_wr s = { .wr_id = 2, .opcode = VFW_WR_SEND,
            .num_sge = 1, .sge = { { mr[2 * k], 32, MEM_BASE } } };
        vfw_post_send(a->e, qp[2 * k], &s);
    }
    for (int k = 0; k < N / 2; k++) {
        pipe_pump(&p[k]);
        struct vfw_cqe c;
        if (vfw_cq_poll(h[2 * k + 1].e, cq[2 * k + 1], &c, 1) == 1 &&
            c.status == VFW_WC_SUCCESS &&
            memcmp(h[2 * k + 1].mem, h[2 * k].mem, 32) == 0)
            ok++;
    }
    CHECK_EQ(ok, N / 2);
    for (int k = 0; k < N / 2; k++)
        pipe_fini(&p[k]);
    for (int i = 0; i < N; i++)
        host_fini(&h[i]);
}

/* ---- raw FPDUs from a misbehaving peer: each gets its Terminate code -- */
static size_t mk_fpdu(uint8_t *f, const uint8_t *u, size_t ul)
{
    f[0] = (uint8_t)(ul >> 8);
    f[1] = (uint8_t)ul;
    memcpy(f + 2, u, ul);
    size_t n = 2 + ul;
    while (n & 3)
        f[n++] = 0;
    uint32_t c = vfw_crc32c(0, f, n);
    f[n] = (uint8_t)c; f[n + 1] = (uint8_t)(c >> 8);
    f[n + 2] = (uint8_t)(c >> 16); f[n + 3] = (uint8_t)(c >> 24);
    return n + 4;
}
static size_t mk_untagged(uint8_t *u, uint8_t ctl, uint8_t op, uint32_t qn,
                          uint32_t msn, uint32_t mo)
{
    memset(u, 0, 18);
    u[0] = ctl;
    u[1] = (uint8_t)(0x40 | op);
    u[9] = (uint8_t)qn;
    u[10] = (uint8_t)(msn >> 24); u[11] = (uint8_t)(msn >> 16);
    u[12] = (uint8_t)(msn >> 8); u[13] = (uint8_t)msn;
    u[14] = (uint8_t)(mo >> 24); u[15] = (uint8_t)(mo >> 16);
    u[16] = (uint8_t)(mo >> 8); u[17] = (uint8_t)mo;
    return 18;
}

static void test_raw_violations(void)
{
    enum { BAD_DDP_VER, BAD_RDMAP_VER, BAD_QN, BAD_MSN, RESP_NONE,
           WRITE_ON_QN, READ_MO, IRD_OVER, SHORT, N };
    static const uint8_t want[N][3] = {
        [BAD_DDP_VER] = { 1, 2, 0x06 }, [BAD_RDMAP_VER] = { 0, 2, 0x05 },
        [BAD_QN] = { 1, 2, 0x01 },      [BAD_MSN] = { 1, 2, 0x03 },
        [RESP_NONE] = { 0, 2, 0x06 },   [WRITE_ON_QN] = { 0, 2, 0x06 },
        [READ_MO] = { 1, 2, 0x04 },     [IRD_OVER] = { 0, 2, 0x07 },
        [SHORT] = { 1, 0, 0x00 },
    };
    for (int k = 0; k < N; k++) {
        struct pair x;
        pair_create(&x, 300 + (uint64_t)k);
        pair_connect(&x, 2, 1, 7, 7);       /* B's IRD is 2 */
        uint8_t u[64], f[4096];
        size_t fl = 0, ul;
        switch (k) {
        case BAD_DDP_VER:
            ul = mk_untagged(u, 0x42, 3, 0, 1, 0);
            fl = mk_fpdu(f, u, ul);
            break;
        case BAD_RDMAP_VER:
            ul = mk_untagged(u, 0x41, 3, 0, 1, 0);
            u[1] = 0x83;
            fl = mk_fpdu(f, u, ul);
            break;
        case BAD_QN:
            ul = mk_untagged(u, 0x41, 3, 3, 1, 0);
            fl = mk_fpdu(f, u, ul);
            break;
        case BAD_MSN:
            ul = mk_untagged(u, 0x41, 3, 0, 7, 0);
            fl = mk_fpdu(f, u, ul);
            break;
        case RESP_NONE:
            memset(u, 0, 14);
            u[0] = 0xC1; u[1] = 0x42;
            fl = mk_fpdu(f, u, 14);
            break;
        case WRITE_ON_QN:
            ul = mk_untagged(u, 0x41, 0, 0, 1, 0);   /* Write, untagged */
            fl = mk_fpdu(f, u, ul);
            break;
        case READ_MO:
            ul = mk_untagged(u, 0x41, 1, 1, 1, 8);
            memset(u + 18, 0, 28);
            fl = mk_fpdu(f, u, ul + 28);
            break;
        case IRD_OVER:
            for (uint32_t i = 0; i < 3; i++) {     /* 3 reads, IRD 2 */
                ul = mk_untagged(u, 0x41, 1, 1, i + 1, 0);
                memset(u + 18, 0, 28);
                u[18 + 15] = 16;                     /* size 16 */
                uint32_t st = x.mr_b;
                u[18 + 16] = (uint8_t)(st >> 24); u[18 + 17] = (uint8_t)(st >> 16);
                u[18 + 18] = (uint8_t)(st >> 8); u[18 + 19] = (uint8_t)st;
                uint64_t to = SRC;
                for (int b = 0; b < 8; b++)
                    u[18 + 20 + b] = (uint8_t)(to >> (56 - 8 * b));
                fl += mk_fpdu(f + fl, u, ul + 28);
            }
            break;
        case SHORT:
            u[0] = 0x41; u[1] = 0x43;
            fl = mk_fpdu(f, u, 6);
            break;
        }
        /* deliver straight into B as if it came from the peer, before
         * B could answer any of it */
        if (k == IRD_OVER)     /* B's send side is full: responses wait */
            x.p.q[1].len = x.p.q[1].cap;
        vfw_llp_recv(x.b.e, x.p.cep[1], f, fl);
        if (k == IRD_OVER)
            x.p.q[1].len = 0;
        struct vfw_qp_info ib;
        vfw_qp_query(x.b.e, x.qp_b, &ib);
        CHECK_EQ(ib.term_sent.valid, 1);
        CHECK_EQ(ib.term_sent.layer, want[k][0]);
        CHECK_EQ(ib.term_sent.etype, want[k][1]);
        CHECK_EQ(ib.term_sent.ecode, want[k][2]);
        pipe_pump(&x.p);
        struct vfw_qp_info ia;
        vfw_qp_query(x.a.e, x.qp_a, &ia);
        CHECK_EQ(ia.term_rcvd.ecode, want[k][2]);
        CHECK_EQ(ia.state, VFW_QPS_ERROR);
        pair_destroy(&x);
    }
}

static void test_reject(void)
{
    struct pair x;
    pair_create(&x, 3);
    x.b.reject = true;
    struct vfw_conn_param cp = { .mpa_rev = 2, .p2p = 1, .crc = 1 };
    CHECK_EQ(vfw_connect(x.a.e, x.p.cep[0], x.qp_a, &cp), 0);
    pipe_pump(&x.p);
    int r = h_find_ev(&x.a, VFW_CM_REJECTED);
    CHECK(r >= 0);
    if (r >= 0) {
        CHECK_EQ(x.a.ev[r].pdata_len, 4);
        CHECK(memcmp(x.a.ev[r].pdata, "nope", 4) == 0);
    }
    CHECK_EQ(qp_state(&x.a, x.qp_a), VFW_QPS_IDLE);
    CHECK(x.p.final[0] && x.p.final[1]);
    pair_destroy(&x);
}

static void test_handshake_timeout_and_garbage(void)
{
    struct pair x;
    pair_create(&x, 4);
    struct vfw_conn_param cp = { .mpa_rev = 2, .crc = 1 };
    CHECK_EQ(vfw_connect(x.a.e, x.p.cep[0], x.qp_a, &cp), 0);
    /* nobody answers: the MPA timer fires */
    x.clock += 11ull * 1000 * 1000 * 1000;
    vfw_engine_poll(x.a.e);
    CHECK(h_find_ev(&x.a, VFW_CM_CONNECT_ERROR) >= 0);
    CHECK(x.p.aborted);
    pair_destroy(&x);

    pair_create(&x, 5);
    static const uint8_t junk[24] = "MPA ID Req FrameXXXXXXXX";
    uint8_t bad[24];
    memcpy(bad, junk, 24);
    bad[18] = 0xff;                 /* PD length 65280 > 512 */
    vfw_llp_recv(x.b.e, x.p.cep[1], bad, sizeof(bad));
    CHECK(h_find_ev(&x.b, VFW_CM_CONNECT_REQUEST) < 0);
    CHECK(x.p.aborted);
    pair_destroy(&x);
}

/* Move `size` bytes A->B with opcode op; verify checksums and sentinels. */
static void xfer(struct pair *x, uint8_t op, uint32_t size, uint32_t seed)
{
    uint8_t *src = x->a.mem, *dst = x->b.mem + (DST - MEM_BASE);
    fill(src, size, seed);
    memset(dst, 0xEE, size + 16);
    uint32_t inv_stag = 0;
    struct vfw_cqe c;
    if (op == VFW_WR_RDMA_READ) {
        /* A reads B's SRC into A's DST */
        src = x->b.mem;
        dst = x->a.mem + (DST - MEM_BASE);
        fill(src, size, seed);
        memset(dst, 0xEE, size + 16);
        struct vfw_send_wr s = { .wr_id = 77, .opcode = op,
            .flags = VFW_WR_F_SIGNALED, .num_sge = 1,
            .sge = { { x->mr_a, size, DST } }, .remote_stag = x->mr_b,
            .remote_addr = SRC };
        CHECK_EQ(vfw_post_send(x->a.e, x->qp_a, &s), 0);
    } else {
        if (op != VFW_WR_RDMA_WRITE) {
            struct vfw_recv_wr r = { .wr_id = 55, .num_sge = 2,
                .sge = { { x->mr_b, size / 2, DST },
                         { x->mr_b, size - size / 2 + 100, DST + size / 2 } } };
            CHECK_EQ(vfw_post_recv(x->b.e, x->qp_b, &r), 0);
        }
        if (op == VFW_WR_SEND_INV || op == VFW_WR_SEND_SE_INV)
            CHECK_EQ(vfw_mr_reg(x->b.e, x->pd_b, DST, 4096,
                                VFW_ACC_LOCAL_WRITE | VFW_ACC_REMOTE_WRITE,
                                &inv_stag), 0);
        struct vfw_send_wr s = { .wr_id = 66, .opcode = op,
            .flags = VFW_WR_F_SIGNALED, .num_sge = 3,
            .sge = { { x->mr_a, size / 3, SRC },
                     { x->mr_a, size / 3, SRC + size / 3 },
                     { x->mr_a, size - 2 * (size / 3), SRC + 2 * (size / 3) } },
            .invalidate_stag = inv_stag, .remote_stag = x->mr_b,
            .remote_addr = DST };
        CHECK_EQ(vfw_post_send(x->a.e, x->qp_a, &s), 0);
    }
    pipe_pump(&x->p);
    CHECK_EQ(poll1(&x->a, x->cq_a, &c), 1);
    CHECK_EQ(c.status, VFW_WC_SUCCESS);
    CHECK_EQ(c.byte_len, size);
    CHECK_EQ(c.wr_id, op == VFW_WR_RDMA_READ ? 77 : 66);
    if (op <= VFW_WR_SEND_SE_INV) {
        CHECK_EQ(poll1(&x->b, x->cq_b, &c), 1);
        CHECK_EQ(c.status, VFW_WC_SUCCESS);
        CHECK_EQ(c.opcode, VFW_WC_RECV);
        CHECK_EQ(c.byte_len, size);
        bool se = op == VFW_WR_SEND_SE || op == VFW_WR_SEND_SE_INV;
        CHECK_EQ(!!(c.flags & VFW_WC_F_SOLICITED), se);
        if (inv_stag) {
            CHECK(c.flags & VFW_WC_F_WITH_INV);
            CHECK_EQ(c.invalidated_stag, inv_stag);
            CHECK(!vfw_mr_is_valid(x->b.e, inv_stag));
            vfw_mr_dereg(x->b.e, inv_stag);
        }
    }
    CHECK_EQ(fnv(dst, size), fnv(src, size));
    uint8_t sent[16];
    memset(sent, 0xEE, 16);
    CHECK(memcmp(dst + size, sent, 16) == 0);
    CHECK_EQ(qp_state(&x->a, x->qp_a), VFW_QPS_RTS);
    CHECK_EQ(qp_state(&x->b, x->qp_b), VFW_QPS_RTS);
}

static void test_all_opcodes_sizes(void)
{
    static const uint32_t sizes[] = { 1, 3, 1439, 1440, 1441, 4096, 65539,
                                      1u << 20, 4u << 20 };
    static const uint8_t ops[] = { VFW_WR_SEND, VFW_WR_SEND_SE,
        VFW_WR_SEND_INV, VFW_WR_SEND_SE_INV, VFW_WR_RDMA_WRITE,
        VFW_WR_RDMA_READ };
    struct pair x;
    pair_create(&x, 42);
    pair_connect(&x, 2, 1, 7, 7);
    for (size_t o = 0; o < sizeof(ops); o++)
        for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++)
            xfer(&x, ops[o], sizes[s], (uint32_t)(o * 31 + s));
    /* zero-length operations */
    struct vfw_send_wr z = { .wr_id = 1, .opcode = VFW_WR_RDMA_WRITE,
        .flags = VFW_WR_F_SIGNALED, .remote_stag = 0x1234 };
    CHECK_EQ(vfw_post_send(x.a.e, x.qp_a, &z), 0);
    pipe_pump(&x.p);
    struct vfw_cqe c;
    CHECK_EQ(poll1(&x.a, x.cq_a, &c), 1);
    CHECK_EQ(c.status, VFW_WC_SUCCESS);
    struct vfw_engine_stats st;
    vfw_engine_stats(x.b.e, &st);
    CHECK_EQ(st.crc_errors, 0);
    CHECK(st.rx_fpdus > 1000);
    pair_destroy(&x);
}

static void test_ord_limit_and_unsignaled(void)
{
    struct pair x;
    pair_create(&x, 8);
    pair_connect(&x, 2, 1, 7, 7);     /* ORD negotiated to 2 */
    fill(x.b.mem, 8 * 4096, 99);
    for (int i = 0; i < 8; i++) {
        struct vfw_send_wr s = { .wr_id = (uint64_t)i,
            .opcode = VFW_WR_RDMA_READ, .flags = VFW_WR_F_SIGNALED,
            .num_sge = 1, .sge = { { x.mr_a, 4096, DST + i * 4096u } },
            .remote_stag = x.mr_b, .remote_addr = SRC + i * 4096u };
        CHECK_EQ(vfw_post_send(x.a.e, x.qp_a, &s), 0);
        /* an unsignaled write between reads: completes in order, no CQE */
        struct vfw_send_wr w = { .wr_id = 100 + (uint64_t)i,
            .opcode = VFW_WR_RDMA_WRITE, .num_sge = 1,
            .sge = { { x.mr_a, 16, SRC } }, .remote_stag = x.mr_b,
            .remote_addr = DST + 16u * i };
        CHECK_EQ(vfw_post_send(x.a.e, x.qp_a, &w), 0);
    }
    /* before any delivery at most ORD (2) reads are on the wire */
    struct vfw_engine_stats st;
    vfw_engine_stats(x.a.e, &st);
    CHECK(st.tx_fpdus <= 2 + 1 + 2);    /* RTR + 2 reads + 2 writes */
    pipe_pump(&x.p);
    for (int i = 0; i < 8; i++) {
        struct vfw_cqe c;
        CHECK_EQ(poll1(&x.a, x.cq_a, &c), 1);
        CHECK_EQ(c.wr_id, i);
        CHECK_EQ(c.opcode, VFW_WC_RDMA_READ);
        CHECK_EQ(c.status, VFW_WC_SUCCESS);
    }
    struct vfw_cqe c;
    CHECK_EQ(poll1(&x.a, x.cq_a, &c), 0);
    CHECK(memcmp(x.a.mem + (DST - MEM_BASE), x.b.mem, 8 * 4096) == 0);
    pair_destroy(&x);
}

/* ---- protection ------------------------------------------------------------*/

struct prot_case {
    const char *name;
    int kind;
    uint8_t layer, etype, ecode;     /* Terminate B sends (or A for local) */
    uint8_t a_status;                /* first error CQE at A, 0xff none */
};

static void expect_term(struct host *h, uint32_t qp, bool sent, uint8_t layer,
                        uint8_t etype, uint8_t ecode)
{
    struct vfw_qp_info i;
    CHECK_EQ(vfw_qp_query(h->e, qp, &i), 0);
    struct vfw_term_info *t = sent ? &i.term_sent : &i.term_rcvd;
    CHECK_EQ(t->valid, 1);
    CHECK_EQ(t->layer, layer);
    CHECK_EQ(t->etype, etype);
    CHECK_EQ(t->ecode, ecode);
    CHECK_EQ(i.state, VFW_QPS_ERROR);
}

static void test_protection(void)
{
    enum { W_BAD_STAG, W_BOUNDS, W_NO_RIGHTS, W_OTHER_PD, W_DEREG,
           R_NO_RIGHTS, R_BOUNDS, R_BAD_STAG, S_TOO_LONG, S_NO_RQ,
           S_INV_OTHER_PD, L_BAD_LKEY, L_RECV_NO_LW, L_READ_SINK_NO_RW,
           CRC_CORRUPT, W_WRAP, N_CASES };
    static const struct prot_case cs[N_CASES] = {
        [W_BAD_STAG]  = { "write invalid stag", W_BAD_STAG, 1, 1, 0x00, 0xff },
        [W_BOUNDS]    = { "write out of bounds", W_BOUNDS, 1, 1, 0x01, 0xff },
        [W_NO_RIGHTS] = { "write no remote-write", W_NO_RIGHTS, 0, 1, 0x02, 0xff },
        [W_OTHER_PD]  = { "write other PD", W_OTHER_PD, 1, 1, 0x02, 0xff },
        [W_DEREG]     = { "write deregistered", W_DEREG, 1, 1, 0x00, 0xff },
        [R_NO_RIGHTS] = { "read no remote-read", R_NO_RIGHTS, 0, 1, 0x02,
                          VFW_WC_REM_ACCESS_ERR },
        [R_BOUNDS]    = { "read out of bounds", R_BOUNDS, 0, 1, 0x01,
                          VFW_WC_REM_ACCESS_ERR },
        [R_BAD_STAG]  = { "read invalid stag", R_BAD_STAG, 0, 1, 0x00,
                          VFW_WC_REM_ACCESS_ERR },
        [S_TOO_LONG]  = { "send too long", S_TOO_LONG, 1, 2, 0x05, 0xff },
        [S_NO_RQ]     = { "send no recv", S_NO_RQ, 1, 2, 0x02, 0xff },
        [S_INV_OTHER_PD] = { "send-inv other PD", S_INV_OTHER_PD, 0, 1, 0x09,
                             0xff },
        [L_BAD_LKEY]  = { "local bad lkey", L_BAD_LKEY, 0, 0, 0x00,
                          VFW_WC_LOC_PROT_ERR },
        [L_RECV_NO_LW] = { "recv sge without local write", L_RECV_NO_LW, 0, 0,
                           0x00, 0xff },
        [L_READ_SINK_NO_RW] = { "read sink without remote write",
                                L_READ_SINK_NO_RW, 0, 0, 0x00,
                                VFW_WC_LOC_PROT_ERR },
        [CRC_CORRUPT] = { "corrupted FPDU", CRC_CORRUPT, 2, 0, 0x02, 0xff },
        [W_WRAP]      = { "write TO wrap", W_WRAP, 1, 1, 0x03, 0xff },
    };
    for (int k = 0; k < N_CASES; k++) {
        const struct prot_case *pc = &cs[k];
        int fails0 = h_fail;
        struct pair x;
        pair_create(&x, 100 + (uint64_t)k);
        pair_connect(&x, 2, 1, 7, 7);
        uint32_t pd2, mr_ro, mr_pd2, mr_small, mr_dead, mr_nolw;
        vfw_pd_alloc(x.b.e, &pd2);
        CHECK_EQ(vfw_mr_reg(x.b.e, x.pd_b, DST, 4096, VFW_ACC_LOCAL_WRITE,
                            &mr_ro), 0);
        CHECK_EQ(vfw_mr_reg(x.b.e, pd2, DST, 4096, ALL, &mr_pd2), 0);
        CHECK_EQ(vfw_mr_reg(x.b.e, x.pd_b, DST, 4096, ALL, &mr_small), 0);
        CHECK_EQ(vfw_mr_reg(x.b.e, x.pd_b, DST, 4096, ALL, &mr_dead), 0);
        CHECK_EQ(vfw_mr_dereg(x.b.e, mr_dead), 0);
        CHECK_EQ(vfw_mr_reg(x.b.e, x.pd_b, DST, 4096, VFW_ACC_REMOTE_READ,
                            &mr_nolw), 0);
        uint32_t a_ro;
        CHECK_EQ(vfw_mr_reg(x.a.e, x.pd_a, DST, 4096, VFW_ACC_LOCAL_WRITE,
                            &a_ro), 0);
        fill(x.a.mem, MEMSZ, 1000 + (uint32_t)k);
        fill(x.b.mem, MEMSZ, 2000 + (uint32_t)k);
        uint32_t before_b = fnv(x.b.mem, MEMSZ);
        uint32_t before_a_dst = fnv(x.a.mem + (DST - MEM_BASE), 8192);
        struct vfw_send_wr s = { .wr_id = 1, .flags = VFW_WR_F_SIGNALED,
            .num_sge = 1, .sge = { { x.mr_a, 4096, SRC } },
            .remote_stag = mr_small, .remote_addr = DST };
        struct vfw_recv_wr r = { .wr_id = 2, .num_sge = 1,
            .sge = { { x.mr_b, 100, DST } } };
        bool recv = false, b_local = false;
        switch (pc->kind) {
        case W_BAD_STAG:  s.opcode = VFW_WR_RDMA_WRITE; s.remote_stag = 0xdead00; break;
        case W_BOUNDS:    s.opcode = VFW_WR_RDMA_WRITE; s.remote_addr = DST + 4000; break;
        case W_NO_RIGHTS: s.opcode = VFW_WR_RDMA_WRITE; s.remote_stag = mr_ro; break;
        case W_OTHER_PD:  s.opcode = VFW_WR_RDMA_WRITE; s.remote_stag = mr_pd2; break;
        case W_DEREG:     s.opcode = VFW_WR_RDMA_WRITE; s.remote_stag = mr_dead; break;
        case W_WRAP:      s.opcode = VFW_WR_RDMA_WRITE;
                          s.remote_addr = UINT64_MAX - 100; break;
        case R_NO_RIGHTS: s.opcode = VFW_WR_RDMA_READ; s.remote_stag = mr_ro;
                          s.sge[0].addr = DST; break;
        case R_BOUNDS:    s.opcode = VFW_WR_RDMA_READ; s.remote_addr = DST + 8;
                          s.sge[0].addr = DST; break;
        case R_BAD_STAG:  s.opcode = VFW_WR_RDMA_READ; s.remote_stag = 7;
                          s.sge[0].addr = DST; break;
        case S_TOO_LONG:  s.opcode = VFW_WR_SEND; recv = true; break;
        case S_NO_RQ:     s.opcode = VFW_WR_SEND; break;
        case S_INV_OTHER_PD: s.opcode = VFW_WR_SEND_INV; s.sge[0].len = 10;
                          s.invalidate_stag = mr_pd2; recv = true; break;
        case L_BAD_LKEY:  s.opcode = VFW_WR_SEND; s.sge[0].stag = 0x4242;
                          recv = true; break;
        case L_RECV_NO_LW: s.opcode = VFW_WR_SEND; s.sge[0].len = 50;
                          r.sge[0].stag = mr_nolw; recv = true;
                          b_local = true; break;
        case L_READ_SINK_NO_RW: s.opcode = VFW_WR_RDMA_READ;
                          s.sge[0].stag = a_ro; s.sge[0].addr = DST;
                          s.remote_stag = mr_small; break;
        case CRC_CORRUPT: s.opcode = VFW_WR_RDMA_WRITE;
                          x.p.corrupt = true; x.p.corrupt_at = x.p.sent0 + 30;
                          break;
        }
        if (recv)
            CHECK_EQ(vfw_post_recv(x.b.e, x.qp_b, &r), 0);
        /* a WR posted after the error must be flushed */
        struct vfw_send_wr f = { .wr_id = 3, .opcode = VFW_WR_SEND,
            .flags = 0, .num_sge = 0 };
        CHECK_EQ(vfw_post_send(x.a.e, x.qp_a, &s), 0);
        pipe_pump(&x.p);
        CHECK_EQ(vfw_post_send(x.a.e, x.qp_a, &f), 0);
        bool a_local = pc->kind == L_BAD_LKEY || pc->kind == L_READ_SINK_NO_RW;
        if (a_local) {
            expect_term(&x.a, x.qp_a, true, pc->layer, pc->etype, pc->ecode);
            expect_term(&x.b, x.qp_b, false, pc->layer, pc->etype, pc->ecode);
        } else {
            expect_term(&x.b, x.qp_b, true, pc->layer, pc->etype, pc->ecode);
            expect_term(&x.a, x.qp_a, false, pc->layer, pc->etype, pc->ecode);
        }
        /* A's CQEs: the failing WR's status (if it reports one), then the
         * follow-up flushed */
        struct vfw_cqe c[4];
        int n = vfw_cq_poll(x.a.e, x.cq_a, c, 4);
        CHECK(n >= 1);
        if (n >= 1 && pc->a_status != 0xff) {
            CHECK_EQ(c[0].wr_id, 1);
            CHECK_EQ(c[0].status, pc->a_status);
        }
        if (n >= 1) {
            CHECK_EQ(c[n - 1].wr_id, 3);
            CHECK_EQ(c[n - 1].status, VFW_WC_WR_FLUSH_ERR);
        }
        /* B: a receive CQE carries the error or the flush */
        if (recv) {
            CHECK_EQ(poll1(&x.b, x.cq_b, c), 1);
            CHECK_EQ(c[0].wr_id, 2);
            CHECK(c[0].status != VFW_WC_SUCCESS);
            if (pc->kind == S_TOO_LONG)
                CHECK_EQ(c[0].status, VFW_WC_LOC_LEN_ERR);
            if (b_local)
                CHECK_EQ(c[0].status, VFW_WC_LOC_PROT_ERR);
        }
        /* no byte of B's memory moved; A's read sink untouched */
        CHECK_EQ(fnv(x.b.mem, MEMSZ), before_b);
        CHECK_EQ(fnv(x.a.mem + (DST - MEM_BASE), 8192), before_a_dst);
        CHECK_EQ(x.a.dma_faults + x.b.dma_faults, 0);
        if (h_fail != fails0)
            fprintf(stderr, "  (case %s)\n", pc->name);
        pair_destroy(&x);
    }
}

static void test_flush_and_close(void)
{
    struct pair x;
    pair_create(&x, 9);
    pair_connect(&x, 2, 1, 7, 7);
    for (int i = 0; i < 5; i++) {
        struct vfw_recv_wr r = { .wr_id = 10 + (uint64_t)i, .num_sge = 1,
            .sge = { { x.mr_b, 100, DST } } };
        CHECK_EQ(vfw_post_recv(x.b.e, x.qp_b, &r), 0);
    }
    CHECK_EQ(vfw_cq_arm(x.b.e, x.cq_b, 0), 0);
    /* graceful close from A */
    CHECK_EQ(vfw_qp_modify(x.a.e, x.qp_a, VFW_QPS_CLOSING), 0);
    pipe_pump(&x.p);
    CHECK_EQ(qp_state(&x.a, x.qp_a), VFW_QPS_IDLE);
    CHECK(h_find_ev(&x.a, VFW_CM_CLOSED) >= 0);
    CHECK(h_find_ev(&x.b, VFW_CM_CLOSED) >= 0);
    struct vfw_cqe c[8];
    int n = vfw_cq_poll(x.b.e, x.cq_b, c, 8);
    CHECK_EQ(n, 5);
    for (int i = 0; i < n; i++)
        CHECK_EQ(c[i].status, VFW_WC_WR_FLUSH_ERR);
    CHECK(x.b.notifies >= 1);
    /* posting into a dead QP flushes at once */
    struct vfw_send_wr s = { .wr_id = 99, .opcode = VFW_WR_SEND };
    vfw_qp_modify(x.b.e, x.qp_b, VFW_QPS_ERROR);
    CHECK_EQ(vfw_post_send(x.b.e, x.qp_b, &s), 0);
    CHECK_EQ(poll1(&x.b, x.cq_b, c), 1);
    CHECK_EQ(c[0].status, VFW_WC_WR_FLUSH_ERR);
    pair_destroy(&x);

    /* abort (modify to ERROR) from A: B sees a reset */
    pair_create(&x, 10);
    pair_connect(&x, 2, 1, 7, 7);
    struct vfw_recv_wr r = { .wr_id = 1, .num_sge = 1,
                             .sge = { { x.mr_a, 100, DST } } };
    vfw_post_recv(x.a.e, x.qp_a, &r);
    CHECK_EQ(vfw_qp_modify(x.a.e, x.qp_a, VFW_QPS_ERROR), 0);
    pipe_pump(&x.p);
    CHECK_EQ(qp_state(&x.b, x.qp_b), VFW_QPS_ERROR);
    CHECK_EQ(poll1(&x.a, x.cq_a, c), 1);
    CHECK_EQ(c[0].status, VFW_WC_WR_FLUSH_ERR);
    pair_destroy(&x);
}

static void test_api_validation(void)
{
    uint64_t clk = 0;
    struct host h;
    host_init(&h, &clk, 4096, 1);
    uint32_t pd, cq, qp, mr;
    CHECK_EQ(vfw_pd_alloc(h.e, &pd), 0);
    CHECK_EQ(vfw_mr_reg(h.e, pd, MEM_BASE, 0, 0, &mr), -EINVAL);
    CHECK_EQ(vfw_mr_reg(h.e, pd, UINT64_MAX - 5, 100, 0, &mr), -EINVAL);
    CHECK_EQ(vfw_mr_reg(h.e, pd, MEM_BASE, 100, VFW_ACC_REMOTE_WRITE, &mr),
             -EINVAL);
    CHECK_EQ(vfw_mr_reg(h.e, 77, MEM_BASE, 100, 0, &mr), -ENOENT);
    CHECK_EQ(vfw_cq_create(h.e, 0, &cq), -EINVAL);
    CHECK_EQ(vfw_cq_create(h.e, 16, &cq), 0);
    struct vfw_qp_attr a = { .pd_id = pd, .send_cq = cq, .recv_cq = cq,
        .sq_depth = 4, .rq_depth = 4, .ord = 1, .ird = 1, .max_sge = 2 };
    a.sq_depth = 100000;
    CHECK_EQ(vfw_qp_create(h.e, &a, &qp), -EINVAL);
    a.sq_depth = 4;
    a.recv_cq = 99;
    CHECK_EQ(vfw_qp_create(h.e, &a, &qp), -ENOENT);
    a.recv_cq = cq;
    CHECK_EQ(vfw_qp_create(h.e, &a, &qp), 0);
    CHECK_EQ(vfw_pd_free(h.e, pd), -EBUSY);
    CHECK_EQ(vfw_cq_destroy(h.e, cq), -EBUSY);
    struct vfw_send_wr s = { .opcode = 17 };
    CHECK_EQ(vfw_post_send(h.e, qp, &s), -EINVAL);
    s.opcode = VFW_WR_SEND;
    s.num_sge = 3;
    CHECK_EQ(vfw_post_send(h.e, qp, &s), -EINVAL);
    s.num_sge = 2;
    s.sge[0].len = s.sge[1].len = 0x80000000u;
    CHECK_EQ(vfw_post_send(h.e, qp, &s), -EINVAL);
    s.sge[0].len = s.sge[1].len = 1;
    s.opcode = VFW_WR_RDMA_READ;
    CHECK_EQ(vfw_post_send(h.e, qp, &s), -EINVAL);
    s.opcode = VFW_WR_SEND;
    for (int i = 0; i < 4; i++)
        CHECK_EQ(vfw_post_send(h.e, qp, &s), 0);
    CHECK_EQ(vfw_post_send(h.e, qp, &s), -ENOMEM);
    CHECK_EQ(vfw_post_send(h.e, 55, &s), -ENOENT);
    struct vfw_cqe c;
    CHECK_EQ(vfw_cq_poll(h.e, cq, &c, -1), -EINVAL);
    CHECK_EQ(vfw_qp_destroy(h.e, qp), 0);
    CHECK_EQ(vfw_cq_destroy(h.e, cq), 0);
    CHECK_EQ(vfw_pd_free(h.e, pd), 0);
    host_fini(&h);
}

/* ---- issue 14 extensions ----------------------------------------------- */

/* Page-list MR on B: tagged offsets [PG_IOVA, PG_IOVA + PG_LEN) map to four
 * 4 KiB pages of B's memory in scrambled order. PG_IOVA is far outside the
 * harness memory, so an access that used the TO as a DMA address faults. */
#define PG_IOVA 0x7f0000001800ull
#define PG_LEN  (3u * 4096 + 0x100)
#define PG_PHYS (MEM_BASE + (8u << 20))
static const unsigned pg_order[4] = { 3, 0, 2, 1 };

static uint64_t pg_phys(uint64_t to)
{
    uint64_t k = 0x800 + (to - PG_IOVA);
    return PG_PHYS + (uint64_t)pg_order[k >> 12] * 4096 + (k & 0xfff);
}

/* compare `n` bytes at tagged offset `to` of B's page MR with `want` */
static int pg_cmp(struct host *b, uint64_t to, const uint8_t *want, size_t n)
{
    int bad = 0;
    for (size_t i = 0; i < n; i++)
        if (b->mem[pg_phys(to + i) - MEM_BASE] != want[i])
            bad++;
    return bad;
}

static void test_mr_pages_validation(void)
{
    uint64_t clock = 0;
    struct host h;
    host_init(&h, &clock, 1 << 20, 1);
    /* an engine bounded to 8 page-list entries */
    struct vfw_engine_ops ops = { .opaque = &h, .dma_read = h_dma_read,
        .dma_write = h_dma_write, .now_ns = h_now };
    struct vfw_engine_config cfg = { .func_id = 1, .max_mr_pages = 8 };
    vfw_engine_free(h.e);
    h.e = vfw_engine_new(&ops, &cfg);
    uint32_t pd, st, st2;
    CHECK_EQ(vfw_pd_alloc(h.e, &pd), 0);
    uint64_t pg[6] = { 0x10000, 0x20000, 0x5000, 0x3000, 0x9000, 0xa000 };
    const uint32_t A = VFW_ACC_LOCAL_WRITE;
    /* page size out of 12..30 */
    CHECK_EQ(vfw_mr_reg_pages(h.e, pd, 0x1000, 4096, A, 11, pg, 1, &st),
             -EINVAL);
    CHECK_EQ(vfw_mr_reg_pages(h.e, pd, 0x1000, 4096, A, 31, pg, 1, &st),
             -EINVAL);
    /* npages 0, above the per-MR bound (rejected before pages[] is read) */
    CHECK_EQ(vfw_mr_reg_pages(h.e, pd, 0x1000, 4096, A, 12, pg, 0, &st),
             -EINVAL);
    CHECK_EQ(vfw_mr_reg_pages(h.e, pd, 0, 4096, A, 12, pg,
                              VFW_MAX_MR_PGL + 1, &st), -EINVAL);
    /* npages must be exactly what the range touches: 0x800 + 8192 bytes
     * from offset 0x800 touch 3 pages */
    CHECK_EQ(vfw_mr_reg_pages(h.e, pd, 0x800, 8192, A, 12, pg, 2, &st),
             -EINVAL);
    CHECK_EQ(vfw_mr_reg_pages(h.e, pd, 0x800, 8192, A, 12, pg, 4, &st),
             -EINVAL);
    /* a page not aligned to the page size */
    uint64_t bad[3] = { 0x10000, 0x20800, 0x5000 };
    CHECK_EQ(vfw_mr_reg_pages(h.e, pd, 0x800, 8192, A, 12, bad, 3, &st),
             -EINVAL);
    bad[1] = 0x21000;   /* 4 KiB aligned but not 64 KiB */
    CHECK_EQ(vfw_mr_reg_pages(h.e, pd, 0x800, 8192, A, 16, bad + 1, 1, &st),
             -EINVAL);
    /* zero length, wrapping range, bad PD, bad rights */
    CHECK_EQ(vfw_mr_reg_pages(h.e, pd, 0x800, 0, A, 12, pg, 1, &st), -EINVAL);
    CHECK_EQ(vfw_mr_reg_pages(h.e, pd, UINT64_MAX - 10, 4096, A, 12, pg, 2,
                              &st), -EINVAL);
    CHECK_EQ(vfw_mr_reg_pages(h.e, 9, 0x800, 8192, A, 12, pg, 3, &st),
             -ENOENT);
    CHECK_EQ(vfw_mr_reg_pages(h.e, pd, 0x800, 8192, VFW_ACC_REMOTE_WRITE, 12,
                              pg, 3, &st), -EINVAL);
    CHECK_EQ(vfw_mr_reg_pages(h.e, pd, 0x800, 8192, A, 12, NULL, 3, &st),
             -EINVAL);
    /* the engine-wide bound: 5 + 4 > 8; dereg gives the pages back */
    CHECK_EQ(vfw_mr_reg_pages(h.e, pd, 0x800, 4 * 4096, A, 12, pg, 5, &st), 0);
    CHECK_EQ(vfw_mr_reg_pages(h.e, pd, 0, 4 * 4096, A, 12, pg, 4, &st2),
             -ENOSPC);
    CHECK_EQ(vfw_mr_reg_pages(h.e, pd, 0, 3 * 4096, A, 12, pg, 3, &st2), 0);
    CHECK_EQ(vfw_pd_free(h.e, pd), -EBUSY);
    CHECK_EQ(vfw_mr_dereg(h.e, st), 0);
    CHECK_EQ(vfw_mr_dereg(h.e, st), -ENOENT);
    CHECK_EQ(vfw_mr_reg_pages(h.e, pd, 0, 4 * 4096, A, 12, pg, 4, &st), 0);
    /* a 1 GiB page list entry and a region that fits in one page */
    CHECK_EQ(vfw_mr_dereg(h.e, st), 0);
    uint64_t huge = 1ull << 30;
    CHECK_EQ(vfw_mr_reg_pages(h.e, pd, 0x12345, 100, A, 30, &huge, 1, &st), 0);
    CHECK(vfw_mr_is_valid(h.e, st));
    /* st2 and st stay registered: vfw_engine_free releases their copies
     * (ASan's leak check would see them otherwise) */
    host_fini(&h);
}

static void test_mr_pages_data(void)
{
    struct pair x;
    pair_create(&x, 140);
    pair_connect(&x, 2, 1, 7, 7);
    uint64_t pages[4];
    for (int k = 0; k < 4; k++)
        pages[k] = PG_PHYS + (uint64_t)pg_order[k] * 4096;
    uint32_t pmr;
    CHECK_EQ(vfw_mr_reg_pages(x.b.e, x.pd_b, PG_IOVA, PG_LEN, ALL, 12, pages,
                              4, &pmr), 0);
    uint64_t faults0 = x.b.dma_faults;
    struct vfw_cqe c;

    /* 1. RDMA Write from A lands in B's scattered pages (place_tagged) */
    uint32_t wlen = PG_LEN - 0x10;
    fill(x.a.mem, wlen, 141);
    struct vfw_send_wr s = { .wr_id = 1, .opcode = VFW_WR_RDMA_WRITE,
        .flags = VFW_WR_F_SIGNALED, .num_sge = 1,
        .sge = { { x.mr_a, wlen, SRC } }, .remote_stag = pmr,
        .remote_addr = PG_IOVA + 0x10 };
    CHECK_EQ(vfw_post_send(x.a.e, x.qp_a, &s), 0);
    pipe_pump(&x.p);
    CHECK_EQ(poll1(&x.a, x.cq_a, &c), 1);
    CHECK_EQ(c.status, VFW_WC_SUCCESS);
    CHECK_EQ(pg_cmp(&x.b, PG_IOVA + 0x10, x.a.mem, wlen), 0);

    /* 2. RDMA Read by A from B's page MR (Read Response source) */
    s = (struct vfw_send_wr){ .wr_id = 2, .opcode = VFW_WR_RDMA_READ,
        .flags = VFW_WR_F_SIGNALED, .num_sge = 1,
        .sge = { { x.mr_a, 9000, DST } }, .remote_stag = pmr,
        .remote_addr = PG_IOVA + 0x15 };
    CHECK_EQ(vfw_post_send(x.a.e, x.qp_a, &s), 0);
    pipe_pump(&x.p);
    CHECK_EQ(poll1(&x.a, x.cq_a, &c), 1);
    CHECK_EQ(c.status, VFW_WC_SUCCESS);
    CHECK_EQ(pg_cmp(&x.b, PG_IOVA + 0x15, x.a.mem + (DST - MEM_BASE), 9000),
             0);

    /* 3. Send from A into a receive buffer in the page MR */
    fill(x.a.mem, 5000, 142);
    struct vfw_recv_wr r = { .wr_id = 3, .num_sge = 1,
        .sge = { { pmr, 5000, PG_IOVA + 0x20 } } };
    CHECK_EQ(vfw_post_recv(x.b.e, x.qp_b, &r), 0);
    s = (struct vfw_send_wr){ .wr_id = 4, .opcode = VFW_WR_SEND,
        .num_sge = 1, .sge = { { x.mr_a, 5000, SRC } } };
    CHECK_EQ(vfw_post_send(x.a.e, x.qp_a, &s), 0);
    pipe_pump(&x.p);
    CHECK_EQ(poll1(&x.b, x.cq_b, &c), 1);
    CHECK_EQ(c.status, VFW_WC_SUCCESS);
    CHECK_EQ(c.byte_len, 5000);
    CHECK_EQ(pg_cmp(&x.b, PG_IOVA + 0x20, x.a.mem, 5000), 0);

    /* 4. Send by B gathered from the page MR (two SGEs across pages) */
    r = (struct vfw_recv_wr){ .wr_id = 5, .num_sge = 1,
        .sge = { { x.mr_a, 8000, DST } } };
    CHECK_EQ(vfw_post_recv(x.a.e, x.qp_a, &r), 0);
    s = (struct vfw_send_wr){ .wr_id = 6, .opcode = VFW_WR_SEND,
        .flags = VFW_WR_F_SIGNALED, .num_sge = 2,
        .sge = { { pmr, 4000, PG_IOVA + 1 }, { pmr, 4000, PG_IOVA + 6000 } } };
    CHECK_EQ(vfw_post_send(x.b.e, x.qp_b, &s), 0);
    pipe_pump(&x.p);
    CHECK_EQ(poll1(&x.a, x.cq_a, &c), 1);
    CHECK_EQ(c.status, VFW_WC_SUCCESS);
    CHECK_EQ(c.byte_len, 8000);
    CHECK_EQ(pg_cmp(&x.b, PG_IOVA + 1, x.a.mem + (DST - MEM_BASE), 4000), 0);
    CHECK_EQ(pg_cmp(&x.b, PG_IOVA + 6000, x.a.mem + (DST - MEM_BASE) + 4000,
                    4000), 0);
    CHECK_EQ(x.b.dma_faults, faults0);   /* no TO went out as an address */

    /* 5. one byte past the MR: Terminate, nothing placed */
    s = (struct vfw_send_wr){ .wr_id = 7, .opcode = VFW_WR_RDMA_WRITE,
        .num_sge = 1, .sge = { { x.mr_a, 2, SRC } }, .remote_stag = pmr,
        .remote_addr = PG_IOVA + PG_LEN - 1 };
    uint8_t last = x.b.mem[pg_phys(PG_IOVA + PG_LEN - 1) - MEM_BASE];
    CHECK_EQ(vfw_post_send(x.a.e, x.qp_a, &s), 0);
    pipe_pump(&x.p);
    struct vfw_qp_info ib;
    vfw_qp_query(x.b.e, x.qp_b, &ib);
    CHECK(ib.term_sent.valid);
    CHECK_EQ(ib.term_sent.ecode, DDP_EC_T_BOUNDS);
    CHECK_EQ(x.b.mem[pg_phys(PG_IOVA + PG_LEN - 1) - MEM_BASE], last);
    CHECK_EQ(vfw_mr_dereg(x.b.e, pmr), 0);
    pair_destroy(&x);
}

/* ops->cqe: every CQE goes to the hook, none to the engine's ring, and
 * arming is not the engine's business any more */
static struct { uint32_t cq; struct vfw_cqe c; int n; } hook_got[8];
static int hook_n;
static void cqe_hook(void *o, uint32_t cq, const struct vfw_cqe *c)
{
    (void)o;
    if (hook_n < 8) {
        hook_got[hook_n].cq = cq;
        hook_got[hook_n].c = *c;
    }
    hook_n++;
}

static void test_cqe_hook(void)
{
    struct pair x;
    pair_create(&x, 150);
    /* B's engine again, with the hook */
    vfw_engine_free(x.b.e);
    struct vfw_engine_ops ops = { .opaque = &x.b, .dma_read = h_dma_read,
        .dma_write = h_dma_write, .cq_notify = h_notify, .cm_event = h_cm,
        .now_ns = h_now, .cqe = cqe_hook };
    struct vfw_engine_config cfg = { .func_id = 2 };
    x.b.e = vfw_engine_new(&ops, &cfg);
    CHECK_EQ(vfw_pd_alloc(x.b.e, &x.pd_b), 0);
    uint32_t cq_s, cq_r;
    CHECK_EQ(vfw_cq_create(x.b.e, 4, &cq_s), 0);
    CHECK_EQ(vfw_cq_create(x.b.e, 4, &cq_r), 0);
    struct vfw_qp_attr a = { .pd_id = x.pd_b, .send_cq = cq_s,
        .recv_cq = cq_r, .sq_depth = 8, .rq_depth = 8, .ord = 4, .ird = 4,
        .max_sge = 2 };
    CHECK_EQ(vfw_qp_create(x.b.e, &a, &x.qp_b), 0);
    CHECK_EQ(vfw_mr_reg(x.b.e, x.pd_b, MEM_BASE, MEMSZ, ALL, &x.mr_b), 0);
    /* a fresh pipe: freeing the old engine aborted the old one */
    pipe_fini(&x.p);
    pipe_init(&x.p, &x.a, &x.b, 1460, 256 * 1024, 4000, 151);
    pair_connect(&x, 2, 1, 7, 7);
    CHECK_EQ(qp_state(&x.b, x.qp_b), VFW_QPS_RTS);
    CHECK_EQ(vfw_cq_arm(x.b.e, cq_r, 0), 0);
    hook_n = 0;
    uint64_t n0 = x.b.notifies;
    /* more receives than the depth-4 CQ holds: the device's ring, not the
     * engine's, decides overrun */
    for (int i = 0; i < 6; i++) {
        struct vfw_recv_wr r = { .wr_id = 100 + (uint64_t)i, .num_sge = 1,
            .sge = { { x.mr_b, 64, DST } } };
        CHECK_EQ(vfw_post_recv(x.b.e, x.qp_b, &r), 0);
        struct vfw_send_wr s = { .wr_id = 1, .opcode = VFW_WR_SEND,
            .num_sge = 1, .sge = { { x.mr_a, 16, SRC } } };
        CHECK_EQ(vfw_post_send(x.a.e, x.qp_a, &s), 0);
    }
    struct vfw_send_wr s = { .wr_id = 77, .opcode = VFW_WR_RDMA_WRITE,
        .flags = VFW_WR_F_SIGNALED, .num_sge = 1,
        .sge = { { x.mr_b, 16, SRC } }, .remote_stag = x.mr_a,
        .remote_addr = DST };
    CHECK_EQ(vfw_post_send(x.b.e, x.qp_b, &s), 0);
    pipe_pump(&x.p);
    CHECK_EQ(hook_n, 7);
    int recvs = 0, sends = 0;
    for (int i = 0; i < 7 && i < 8; i++) {
        if (hook_got[i].cq == cq_r && hook_got[i].c.opcode == VFW_WC_RECV &&
            hook_got[i].c.wr_id == 100 + (uint64_t)recvs &&
            hook_got[i].c.status == VFW_WC_SUCCESS &&
            hook_got[i].c.byte_len == 16 && hook_got[i].c.qp_id == x.qp_b)
            recvs++;
        if (hook_got[i].cq == cq_s && hook_got[i].c.wr_id == 77 &&
            hook_got[i].c.opcode == VFW_WC_RDMA_WRITE)
            sends++;
    }
    CHECK_EQ(recvs, 6);
    CHECK_EQ(sends, 1);
    struct vfw_cqe c[8];
    CHECK_EQ(vfw_cq_poll(x.b.e, cq_r, c, 8), 0);
    CHECK_EQ(vfw_cq_poll(x.b.e, cq_s, c, 8), 0);
    CHECK_EQ(x.b.notifies, n0);
    pair_destroy(&x);
}

/* Inline Send and Write: payload from the WR copy, no lkey */
static void test_inline(void)
{
    struct pair x;
    pair_create(&x, 160);
    pair_connect(&x, 2, 1, 7, 7);
    struct vfw_send_wr s = { .wr_id = 1, .opcode = VFW_WR_SEND,
        .flags = VFW_WR_F_SIGNALED | VFW_WR_F_INLINE,
        .num_sge = 200,                       /* ignored */
        .sge = { { 0xdead00u, 1u << 30, 0 } }, /* no lkey check */
        .inline_len = VFW_MAX_INLINE };
    for (unsigned i = 0; i < VFW_MAX_INLINE; i++)
        s.inline_data[i] = (uint8_t)(0x30 + i);
    uint8_t want[VFW_MAX_INLINE];
    memcpy(want, s.inline_data, sizeof(want));
    /* malformed */
    struct vfw_send_wr b = s;
    b.inline_len = VFW_MAX_INLINE + 1;
    CHECK_EQ(vfw_post_send(x.a.e, x.qp_a, &b), -EINVAL);
    b.inline_len = 4;
    b.opcode = VFW_WR_RDMA_READ;
    CHECK_EQ(vfw_post_send(x.a.e, x.qp_a, &b), -EINVAL);

    struct vfw_recv_wr r = { .wr_id = 2, .num_sge = 1,
        .sge = { { x.mr_b, 256, DST } } };
    CHECK_EQ(vfw_post_recv(x.b.e, x.qp_b, &r), 0);
    CHECK_EQ(vfw_post_send(x.a.e, x.qp_a, &s), 0);
    memset(s.inline_data, 0xee, sizeof(s.inline_data)); /* copied at post */
    pipe_pump(&x.p);
    struct vfw_cqe c;
    CHECK_EQ(poll1(&x.a, x.cq_a, &c), 1);
    CHECK_EQ(c.status, VFW_WC_SUCCESS);
    CHECK_EQ(c.byte_len, VFW_MAX_INLINE);
    CHECK_EQ(poll1(&x.b, x.cq_b, &c), 1);
    CHECK_EQ(c.status, VFW_WC_SUCCESS);
    CHECK_EQ(c.byte_len, VFW_MAX_INLINE);
    CHECK(memcmp(x.b.mem + (DST - MEM_BASE), want, VFW_MAX_INLINE) == 0);

    /* inline RDMA Write (and a zero-length inline Send-with-SE) */
    s = (struct vfw_send_wr){ .wr_id = 3, .opcode = VFW_WR_RDMA_WRITE,
        .flags = VFW_WR_F_SIGNALED | VFW_WR_F_INLINE, .inline_len = 5,
        .remote_stag = x.mr_b, .remote_addr = DST + 1000 };
    memcpy(s.inline_data, "abcde", 5);
    CHECK_EQ(vfw_post_send(x.a.e, x.qp_a, &s), 0);
    CHECK_EQ(vfw_post_recv(x.b.e, x.qp_b, &r), 0);
    s = (struct vfw_send_wr){ .wr_id = 4, .opcode = VFW_WR_SEND_SE,
        .flags = VFW_WR_F_SIGNALED | VFW_WR_F_INLINE, .inline_len = 0 };
    CHECK_EQ(vfw_post_send(x.a.e, x.qp_a, &s), 0);
    pipe_pump(&x.p);
    struct vfw_cqe cc[2];
    CHECK_EQ(vfw_cq_poll(x.a.e, x.cq_a, cc, 2), 2);
    CHECK_EQ(cc[0].wr_id, 3);
    CHECK_EQ(cc[0].status, VFW_WC_SUCCESS);
    CHECK_EQ(cc[0].byte_len, 5);
    CHECK_EQ(cc[1].wr_id, 4);
    CHECK_EQ(cc[1].status, VFW_WC_SUCCESS);
    CHECK(memcmp(x.b.mem + (DST - MEM_BASE) + 1000, "abcde", 5) == 0);
    CHECK_EQ(poll1(&x.b, x.cq_b, &c), 1);
    CHECK_EQ(c.byte_len, 0);
    CHECK(c.flags & VFW_WC_F_SOLICITED);
    CHECK_EQ(qp_state(&x.a, x.qp_a), VFW_QPS_RTS);
    pair_destroy(&x);
}

/* vfw_iwarp_tcp_connect_from: the SYN leaves from the asked (or reported)
 * local port, and the MPA connection comes up over it */
static uint16_t syn_sport[4];
static int nsyn;
static void sniff_syn(void *o, int from, uint64_t t, const uint8_t *f,
                      size_t len)
{
    (void)o; (void)t;
    if (from == 0 && len >= 54 && f[12] == 8 && f[13] == 0 && f[23] == 6 &&
        (f[47] & 0x12) == 0x02 && nsyn < 4)
        syn_sport[nsyn++] = (uint16_t)(f[34] << 8 | f[35]);
}

static struct host *cf_a, *cf_b;
static int cf_established(void *ctx)
{
    int want = *(int *)ctx, na = 0;
    for (int i = 0; i < cf_a->nev; i++)
        na += cf_a->ev[i].type == VFW_CM_ESTABLISHED;
    return na >= want;
}

static void test_connect_from(void)
{
    static struct simwire w;
    struct host a, b;
    simwire_init(&w, 170);
    w.sniff = sniff_syn;
    nsyn = 0;
    host_init(&a, &w.now, 1 << 20, 1);
    host_init(&b, &w.now, 1 << 20, 2);
    cf_a = &a;
    cf_b = &b;
    struct vfw_tcp_env ea = simwire_env(&w, 0), eb = simwire_env(&w, 1);
    struct vfw_tcp_config ca = { .mac = { 2, 0, 0, 0, 0, 1 },
        .ip = 0xC0000201u, .mtu = 1500, .rcv_buf = 65536, .snd_buf = 65536,
        .max_conns = 8 };
    struct vfw_tcp_config cb = ca;
    cb.mac[5] = 2;
    cb.ip = 0xC0000202u;
    struct vfw_tcp_stack *sa = vfw_tcp_stack_new(&ea, &ca);
    struct vfw_tcp_stack *sb = vfw_tcp_stack_new(&eb, &cb);
    simwire_attach_tcp(&w, 0, sa);
    simwire_attach_tcp(&w, 1, sb);
    uint32_t pd, cq, qp[3], pdb, cqb, qpb[3];
    CHECK_EQ(vfw_pd_alloc(a.e, &pd), 0);
    CHECK_EQ(vfw_cq_create(a.e, 64, &cq), 0);
    CHECK_EQ(vfw_pd_alloc(b.e, &pdb), 0);
    CHECK_EQ(vfw_cq_create(b.e, 64, &cqb), 0);
    for (int i = 0; i < 3; i++) {
        struct vfw_qp_attr at = { .pd_id = pd, .send_cq = cq, .recv_cq = cq,
            .sq_depth = 8, .rq_depth = 8, .ord = 1, .ird = 1, .max_sge = 1 };
        CHECK_EQ(vfw_qp_create(a.e, &at, &qp[i]), 0);
        at.pd_id = pdb;
        at.send_cq = at.recv_cq = cqb;
        CHECK_EQ(vfw_qp_create(b.e, &at, &qpb[i]), 0);
    }
    b.accept_qp = qpb[0];
    b.accept_param = (struct vfw_conn_param){ .mpa_rev = 2, .p2p = 1,
                                              .crc = 1 };
    CHECK_EQ(vfw_iwarp_tcp_listen(b.e, sb, 7174), 0);
    CHECK_EQ(vfw_iwarp_tcp_listen(a.e, sa, 7175), 0);
    struct vfw_conn_param p = { .mpa_rev = 2, .p2p = 1, .crc = 1 };
    uint16_t used = 0;
    CHECK_EQ(vfw_iwarp_tcp_connect_from(a.e, sa, cb.ip, 7174, 45000, qp[0],
                                        &p, &used), 0);
    CHECK_EQ(used, 45000);
    int want = 1;
    CHECK_EQ(simwire_run(&w, cf_established, &want, 10 * SIMWIRE_S), 1);
    CHECK(nsyn >= 1 && syn_sport[0] == 45000);
    /* the same 4-tuple again, or a port A listens on: refused */
    CHECK_EQ(vfw_iwarp_tcp_connect_from(a.e, sa, cb.ip, 7174, 45000, qp[1],
                                        &p, &used), -EADDRINUSE);
    CHECK_EQ(vfw_iwarp_tcp_connect_from(a.e, sa, cb.ip, 7174, 7175, qp[1],
                                        &p, &used), -EADDRINUSE);
    CHECK_EQ(vfw_iwarp_tcp_connect_from(a.e, sa, cb.ip, 7174, 45001, 99,
                                        &p, &used), -EINVAL);
    /* port 0: the stack picks an ephemeral port and says which */
    b.accept_qp = qpb[1];
    used = 0;
    CHECK_EQ(vfw_iwarp_tcp_connect_from(a.e, sa, cb.ip, 7174, 0, qp[1], &p,
                                        &used), 0);
    CHECK(used >= 49152);
    want = 2;
    CHECK_EQ(simwire_run(&w, cf_established, &want, 10 * SIMWIRE_S), 1);
    CHECK(nsyn >= 2 && syn_sport[nsyn - 1] == used);
    /* the old entry point still works (a wrapper: lport 0) */
    b.accept_qp = qpb[2];
    CHECK_EQ(vfw_iwarp_tcp_connect(a.e, sa, cb.ip, 7174, qp[2], &p), 0);
    want = 3;
    CHECK_EQ(simwire_run(&w, cf_established, &want, 10 * SIMWIRE_S), 1);
    vfw_engine_free(a.e);
    vfw_engine_free(b.e);
    a.e = b.e = NULL;
    vfw_tcp_stack_free(sa);
    vfw_tcp_stack_free(sb);
    simwire_destroy(&w);
    free(a.mem);
    free(b.mem);
}

/* MPA initiator settle: the initiator sends no FPDU (RTR or data) until
 * initiator_settle_ns after the MPA Reply; vfw_engine_poll releases the
 * QP and its queued Send lands. The responder is not held. */
static void test_initiator_settle(void)
{
    const uint64_t settle = 20ull * 1000 * 1000;
    for (uint8_t p2p = 0; p2p <= 1; p2p++) {
        struct pair x;
        h_settle_ns = settle;
        pair_create(&x, 90 + p2p);
        h_settle_ns = 0;
        struct vfw_recv_wr r = { .wr_id = 7, .num_sge = 1,
            .sge = { { x.mr_b, 100, DST } } };
        CHECK_EQ(vfw_post_recv(x.b.e, x.qp_b, &r), 0);
        uint64_t t0 = x.clock;
        pair_connect(&x, 2, p2p, p2p ? VFW_RTR_WRITE : 0, p2p ? 7 : 0);
        CHECK(h_find_ev(&x.a, VFW_CM_ESTABLISHED) >= 0);
        uint64_t until = vfw_engine_next_ns(x.a.e);
        CHECK(until >= t0 + settle && until != UINT64_MAX);
        CHECK_EQ(vfw_engine_next_ns(x.b.e), UINT64_MAX);
        fill(x.a.mem + (SRC - MEM_BASE), 100, 9);
        struct vfw_send_wr s = { .wr_id = 8, .opcode = VFW_WR_SEND,
            .flags = VFW_WR_F_SIGNALED, .num_sge = 1,
            .sge = { { x.mr_a, 100, SRC } } };
        CHECK_EQ(vfw_post_send(x.a.e, x.qp_a, &s), 0);
        struct vfw_cqe c;
        struct vfw_engine_stats st0, st;
        vfw_engine_stats(x.b.e, &st0);
        x.clock = until - 1;
        vfw_engine_poll(x.a.e);
        pipe_pump(&x.p);
        CHECK_EQ(poll1(&x.b, x.cq_b, &c), 0);
        vfw_engine_stats(x.b.e, &st);
        CHECK_EQ(st.rx_fpdus, st0.rx_fpdus);   /* not even an RTR */
        x.clock = until;
        vfw_engine_poll(x.a.e);
        pipe_pump(&x.p);
        CHECK_EQ(poll1(&x.b, x.cq_b, &c), 1);
        CHECK_EQ(c.wr_id, 7);
        CHECK_EQ(c.status, VFW_WC_SUCCESS);
        CHECK_EQ(poll1(&x.a, x.cq_a, &c), 1);
        CHECK_EQ(c.wr_id, 8);
        CHECK(memcmp(x.a.mem + (SRC - MEM_BASE), x.b.mem + (DST - MEM_BASE), 100) == 0);
        CHECK_EQ(vfw_engine_next_ns(x.a.e), UINT64_MAX);
        pair_destroy(&x);
    }
}

int main(void)
{
    test_crc32c();
    test_api_validation();
    test_setup_variants();
    test_rtr_then_work();
    test_index_wrap();
    test_many_engines();
    test_raw_violations();
    test_solicited_notify();
    test_reject();
    test_handshake_timeout_and_garbage();
    test_all_opcodes_sizes();
    test_ord_limit_and_unsignaled();
    test_protection();
    test_flush_and_close();
    test_mr_pages_validation();
    test_mr_pages_data();
    test_cqe_hook();
    test_inline();
    test_connect_from();
    test_initiator_settle();
    /* again on an LLP without the zero-copy record pair (the engine's
     * copy path): every opcode and size, protection, raw violations */
    h_pipe_copy = true;
    test_all_opcodes_sizes();
    test_protection();
    test_raw_violations();
    test_flush_and_close();
    test_mr_pages_data();
    test_inline();
    h_pipe_copy = false;
    printf("iwarp: %d passed, %d failed\n", h_pass, h_fail);
    return h_fail ? 1 : 0;
}
