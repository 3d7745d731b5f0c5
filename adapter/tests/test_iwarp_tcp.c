/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_iwarp_tcp.c - two iWARP engines, each on the adapter's own TCP/IPv4
 * stack, over the simulated wire (tests/simwire.h) with loss, reordering
 * and duplication: MPA v2 setup through the TCP glue, every opcode at
 * sizes 1 B .. 4 MB with checksums, a protection violation across the
 * wire, and an orderly close.
 * IWARP_CAPTURE_LOSS_PPM=N with --pcap injects faults into the capture too.
 *
 *   test_iwarp_tcp                 the test (simulated time)
 *   test_iwarp_tcp --pcap FILE     a clean run (no faults) captured to FILE
 *                                  for the tshark dissection check
 */
#include "iwarp_harness.h"
#include "simwire.h"
#include "vfw_iwarp_tcp.h"

#define MEMSZ (10u << 20)
#define SRC   (MEM_BASE)
#define DST   (MEM_BASE + (5u << 20))
#define IP_A  0xC0000201u   /* 192.0.2.1 */
#define IP_B  0xC0000202u   /* 192.0.2.2 */
#define PORT  7174

static struct simwire W;
static struct host A, B;
static struct vfw_tcp_stack *SA, *SB;
static uint32_t pd_a, pd_b, cq_a, cq_b, qp_a, qp_b, mr_a, mr_b;
static const uint32_t ALL = VFW_ACC_LOCAL_WRITE | VFW_ACC_REMOTE_WRITE |
                            VFW_ACC_REMOTE_READ;

static struct vfw_cqe got_a[16], got_b[16];
static int ngot_a, ngot_b, want_a, want_b;

static int done_cqes(void *ctx)
{
    (void)ctx;
    while (ngot_a < 16 && vfw_cq_poll(A.e, cq_a, &got_a[ngot_a], 1) == 1)
        ngot_a++;
    while (ngot_b < 16 && vfw_cq_poll(B.e, cq_b, &got_b[ngot_b], 1) == 1)
        ngot_b++;
    return ngot_a >= want_a && ngot_b >= want_b;
}
static void expect(int a, int b)
{
    ngot_a = ngot_b = 0;
    want_a = a;
    want_b = b;
}

static int done_established(void *ctx)
{
    (void)ctx;
    return h_find_ev(&A, VFW_CM_ESTABLISHED) >= 0 &&
           h_find_ev(&B, VFW_CM_ESTABLISHED) >= 0;
}

static struct vfw_tcp_config cfg(int side)
{
    struct vfw_tcp_config c;
    memset(&c, 0, sizeof(c));
    uint8_t mac[6] = { 0x02, 0, 0, 0, 0, (uint8_t)(side + 1) };
    memcpy(c.mac, mac, 6);
    c.ip = side ? IP_B : IP_A;
    c.mtu = 1500;
    c.rcv_buf = 512 * 1024;
    c.snd_buf = 512 * 1024;
    c.max_conns = 8;
    return c;
}

static void setup(uint64_t seed, struct vfw_pcap *pcap)
{
    simwire_init(&W, seed);
    W.delay_ns = 20000;                   /* 20 us one way */
    W.pcap = pcap;
    host_init(&A, &W.now, MEMSZ, 1);
    host_init(&B, &W.now, MEMSZ, 2);
    struct vfw_tcp_env ea = simwire_env(&W, 0), eb = simwire_env(&W, 1);
    struct vfw_tcp_config ca = cfg(0), cb = cfg(1);
    SA = vfw_tcp_stack_new(&ea, &ca);
    SB = vfw_tcp_stack_new(&eb, &cb);
    simwire_attach_tcp(&W, 0, SA);
    simwire_attach_tcp(&W, 1, SB);
    struct host *hs[2] = { &A, &B };
    uint32_t *pd[2] = { &pd_a, &pd_b }, *cq[2] = { &cq_a, &cq_b },
             *qp[2] = { &qp_a, &qp_b }, *mr[2] = { &mr_a, &mr_b };
    for (int i = 0; i < 2; i++) {
        CHECK_EQ(vfw_pd_alloc(hs[i]->e, pd[i]), 0);
        CHECK_EQ(vfw_cq_create(hs[i]->e, 1024, cq[i]), 0);
        struct vfw_qp_attr a = { .pd_id = *pd[i], .send_cq = *cq[i],
            .recv_cq = *cq[i], .sq_depth = 64, .rq_depth = 64, .ord = 8,
            .ird = 8, .max_sge = 4 };
        CHECK_EQ(vfw_qp_create(hs[i]->e, &a, qp[i]), 0);
        CHECK_EQ(vfw_mr_reg(hs[i]->e, *pd[i], MEM_BASE, MEMSZ, ALL, mr[i]), 0);
    }
    B.accept_qp = qp_b;
    B.accept_param = (struct vfw_conn_param){ .mpa_rev = 2, .p2p = 1,
        .crc = 1, .pdata_len = 3 };
    memcpy(B.accept_param.pdata, "srv", 3);
    CHECK_EQ(vfw_iwarp_tcp_listen(B.e, SB, PORT), 0);
    struct vfw_conn_param p = { .mpa_rev = 2, .p2p = 1, .crc = 1,
                                .pdata_len = 3 };
    memcpy(p.pdata, "cli", 3);
    CHECK_EQ(vfw_iwarp_tcp_connect(A.e, SA, IP_B, PORT, qp_a, &p), 0);
    CHECK_EQ(simwire_run(&W, done_established, NULL, 30 * SIMWIRE_S), 1);
    int rq = h_find_ev(&B, VFW_CM_CONNECT_REQUEST);
    CHECK(rq >= 0 && B.ev[rq].pdata_len == 3 &&
          memcmp(B.ev[rq].pdata, "cli", 3) == 0);
}

static void teardown(void)
{
    vfw_engine_free(A.e);
    vfw_engine_free(B.e);
    A.e = B.e = NULL;
    vfw_tcp_stack_free(SA);
    vfw_tcp_stack_free(SB);
    simwire_destroy(&W);
    free(A.mem);
    free(B.mem);
}

static void xfer(uint8_t op, uint32_t size, uint32_t seed)
{
    uint8_t *src = A.mem, *dst = B.mem + (DST - MEM_BASE);
    uint32_t inv = 0;
    if (op == VFW_WR_RDMA_READ) {
        src = B.mem;
        dst = A.mem + (DST - MEM_BASE);
    }
    fill(src, size, seed);
    memset(dst, 0xEE, size + 16);
    struct vfw_send_wr s = { .wr_id = seed, .opcode = op,
        .flags = VFW_WR_F_SIGNALED, .num_sge = 1,
        .sge = { { mr_a, size, op == VFW_WR_RDMA_READ ? DST : SRC } },
        .remote_stag = mr_b, .remote_addr = op == VFW_WR_RDMA_READ ? SRC : DST };
    bool two_sided = op <= VFW_WR_SEND_SE_INV;
    if (two_sided) {
        struct vfw_recv_wr r = { .wr_id = 1000 + seed, .num_sge = 1,
                                 .sge = { { mr_b, size, DST } } };
        CHECK_EQ(vfw_post_recv(B.e, qp_b, &r), 0);
    }
    if (op == VFW_WR_SEND_INV || op == VFW_WR_SEND_SE_INV) {
        CHECK_EQ(vfw_mr_reg(B.e, pd_b, DST, 64, 3, &inv), 0);
        s.invalidate_stag = inv;
    }
    CHECK_EQ(vfw_post_send(A.e, qp_a, &s), 0);
    expect(1, two_sided ? 1 : 0);
    /* a Write completes at the sender once handed to TCP: wait for the
     * bytes to land too (the wire drains) */
    int ok = simwire_run(&W, done_cqes, NULL, 600 * SIMWIRE_S);
    CHECK_EQ(ok, 1);
    if (!two_sided)
        simwire_run(&W, NULL, NULL, 5 * SIMWIRE_S);
    CHECK_EQ(ngot_a, 1);
    CHECK_EQ(got_a[0].status, VFW_WC_SUCCESS);
    CHECK_EQ(got_a[0].byte_len, size);
    if (two_sided) {
        CHECK_EQ(ngot_b, 1);
        CHECK_EQ(got_b[0].status, VFW_WC_SUCCESS);
        CHECK_EQ(got_b[0].byte_len, size);
        if (inv) {
            CHECK_EQ(got_b[0].invalidated_stag, inv);
            vfw_mr_dereg(B.e, inv);
        }
    }
    CHECK_EQ(fnv(dst, size), fnv(src, size));
    uint8_t sent[16];
    memset(sent, 0xEE, sizeof(sent));
    CHECK(memcmp(dst + size, sent, 16) == 0);
}

static void test_lossy(void)
{
    setup(0x1234, NULL);
    W.loss_ppm = 10000;         /* 1 % loss */
    W.dup_ppm = 5000;           /* 0.5 % duplicated */
    W.reorder_ppm = 20000;      /* 2 % reordered by up to 200 us */
    W.reorder_ns = 200000;
    static const uint32_t sizes[] = { 1, 1441, 65539, 1u << 20, 4u << 20 };
    static const uint8_t ops[] = { VFW_WR_SEND, VFW_WR_SEND_SE,
        VFW_WR_SEND_INV, VFW_WR_SEND_SE_INV, VFW_WR_RDMA_WRITE,
        VFW_WR_RDMA_READ };
    for (size_t o = 0; o < sizeof(ops); o++)
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
            xfer(ops[o], sizes[i], (uint32_t)(o * 16 + i + 1));
    struct vfw_engine_stats st;
    vfw_engine_stats(B.e, &st);
    CHECK_EQ(st.crc_errors, 0);
    struct vfw_tcp_stats ts;
    vfw_tcp_stats(SA, &ts);
    printf("lossy wire: A sent %llu frames, %llu lost, %llu dup, %llu "
           "reordered; TCP retrans %llu\n",
           (unsigned long long)W.ep[0].sent, (unsigned long long)W.ep[0].lost,
           (unsigned long long)W.ep[0].duplicated,
           (unsigned long long)W.ep[0].reordered,
           (unsigned long long)ts.retrans);
    CHECK(W.ep[0].lost > 0 && W.ep[0].duplicated > 0);

    /* protection across the wire: Write to a read-only region */
    uint32_t ro;
    CHECK_EQ(vfw_mr_reg(B.e, pd_b, DST, 4096, VFW_ACC_LOCAL_WRITE |
                        VFW_ACC_REMOTE_READ, &ro), 0);
    memset(B.mem + (DST - MEM_BASE), 0x11, 4096);
    uint32_t before = fnv(B.mem, MEMSZ);
    struct vfw_send_wr s = { .wr_id = 5, .opcode = VFW_WR_RDMA_WRITE,
        .num_sge = 1, .sge = { { mr_a, 100, SRC } }, .remote_stag = ro,
        .remote_addr = DST };
    CHECK_EQ(vfw_post_send(A.e, qp_a, &s), 0);
    simwire_run(&W, NULL, NULL, 10 * SIMWIRE_S);
    struct vfw_qp_info ia, ib;
    vfw_qp_query(A.e, qp_a, &ia);
    vfw_qp_query(B.e, qp_b, &ib);
    CHECK_EQ(ib.term_sent.valid, 1);
    CHECK_EQ(ib.term_sent.layer, VFW_TERM_LAYER_RDMAP);
    CHECK_EQ(ib.term_sent.etype, 1);
    CHECK_EQ(ib.term_sent.ecode, 2);
    CHECK_EQ(ia.term_rcvd.valid, 1);
    CHECK_EQ(ia.term_rcvd.ecode, 2);
    CHECK_EQ(ia.state, VFW_QPS_ERROR);
    CHECK_EQ(ib.state, VFW_QPS_ERROR);
    CHECK_EQ(fnv(B.mem, MEMSZ), before);
    CHECK(h_find_ev(&A, VFW_CM_CLOSED) >= 0);
    CHECK(h_find_ev(&B, VFW_CM_CLOSED) >= 0);
    teardown();
}

static void test_close(void)
{
    setup(77, NULL);
    W.loss_ppm = 20000;
    xfer(VFW_WR_SEND, 3000, 1);
    struct vfw_recv_wr r = { .wr_id = 9, .num_sge = 1,
                             .sge = { { mr_b, 10, DST } } };
    CHECK_EQ(vfw_post_recv(B.e, qp_b, &r), 0);
    CHECK_EQ(vfw_qp_modify(A.e, qp_a, VFW_QPS_CLOSING), 0);
    simwire_run(&W, NULL, NULL, 60 * SIMWIRE_S);
    struct vfw_qp_info ia, ib;
    vfw_qp_query(A.e, qp_a, &ia);
    vfw_qp_query(B.e, qp_b, &ib);
    CHECK_EQ(ia.state, VFW_QPS_IDLE);
    CHECK(ib.state == VFW_QPS_IDLE || ib.state == VFW_QPS_ERROR);
    CHECK(h_find_ev(&A, VFW_CM_CLOSED) >= 0);
    CHECK(h_find_ev(&B, VFW_CM_CLOSED) >= 0);
    struct vfw_cqe c;
    CHECK_EQ(vfw_cq_poll(B.e, cq_b, &c, 1), 1);
    CHECK_EQ(c.status, VFW_WC_WR_FLUSH_ERR);
    teardown();
}

/* A clean run captured for dissection: handshake, every opcode, a
 * Terminate, close. */
static int capture(const char *path)
{
    struct vfw_pcap *pc = vfw_pcap_open(path, 0);
    if (!pc) {
        perror(path);
        return 1;
    }
    setup(5, pc);
    const char *lossy = getenv("IWARP_CAPTURE_LOSS_PPM");
    if (lossy) {                       /* optional: faults in the capture */
        W.loss_ppm = (uint32_t)strtoul(lossy, NULL, 0);
        W.dup_ppm = W.loss_ppm / 2;
        W.reorder_ppm = W.loss_ppm;
        W.reorder_ns = 200000;
    }
    static const uint8_t ops[] = { VFW_WR_SEND, VFW_WR_SEND_SE,
        VFW_WR_SEND_INV, VFW_WR_SEND_SE_INV, VFW_WR_RDMA_WRITE,
        VFW_WR_RDMA_READ };
    for (size_t o = 0; o < sizeof(ops); o++) {
        xfer(ops[o], 1, (uint32_t)o + 1);
        xfer(ops[o], 5000, (uint32_t)o + 20);
    }
    /* a Terminate on the wire: Write to a bad STag */
    struct vfw_send_wr s = { .wr_id = 5, .opcode = VFW_WR_RDMA_WRITE,
        .num_sge = 1, .sge = { { mr_a, 100, SRC } }, .remote_stag = 0x777700,
        .remote_addr = DST };
    CHECK_EQ(vfw_post_send(A.e, qp_a, &s), 0);
    simwire_run(&W, NULL, NULL, 10 * SIMWIRE_S);
    teardown();
    vfw_pcap_close(pc);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--pcap") == 0) {
        int rc = capture(argv[2]);
        printf("iwarp-capture: %d passed, %d failed\n", h_pass, h_fail);
        return rc || h_fail ? 1 : 0;
    }
    test_lossy();
    test_close();
    printf("iwarp: %d passed, %d failed\n", h_pass, h_fail);
    return h_fail ? 1 : 0;
}
