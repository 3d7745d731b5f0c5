/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * test_tcp.c - the offloaded TCP stack, two stacks over the simulated wire
 * (tests/simwire.h): handshake, bulk transfer with loss/reorder/dup, record
 * alignment, backpressure, close/abort/RST, refusal, timeouts, bounds and
 * malformed input. Simulated time only. Set VFW_TCP_PCAP=dir to capture.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "simwire.h"
#include "tcp/tcp_wire.h"
#include "tcp_frame.h"
#include "vfw_pcap.h"
#include "vfw_tcp.h"

#include "check.h"

#define IP_A 0x0a000001u
#define IP_B 0x0a000002u
#define PORT 4791

static const uint8_t MAC_A[6] = {0x02, 0, 0, 0, 0, 0x0a};
static const uint8_t MAC_B[6] = {0x02, 0, 0, 0, 0, 0x0b};

/* ------------------------------------------------------------ harness */

struct peer;

struct app {
    struct peer *p;
    struct vfw_tcp_conn *c;
    /* sending */
    uint64_t to_send, sent;
    uint32_t rec_sz;
    uint64_t tx_rng;
    int eagain, writable;
    bool close_after_send, closed_sent;
    /* receiving */
    uint64_t rx_rng, received, expect;
    bool rx_bad;
    size_t max_consume;          /* 0 = all */
    bool stall;                  /* consume nothing */
    /* events */
    int connected_err, connected_n;
    int closed_err, closed_n;
    bool close_on_eof, abort_on_eof;
    uint64_t reply_on_eof;       /* bytes to send after peer FIN */
};

struct peer {
    struct vfw_tcp_stack *s;
    struct app apps[64];
    int napps;
    bool refuse;
};

static struct simwire W;
static struct peer PA, PB;

static uint8_t pat(uint64_t *rng)
{
    *rng = *rng * 6364136223846793005ull + 1442695040888963407ull;
    return (uint8_t)(*rng >> 56);
}

static void app_pump(struct app *a);

static size_t cb_recv(struct vfw_tcp_conn *c, const uint8_t *d, size_t len,
                      void *user)
{
    struct app *a = user;
    (void)c;
    if (a->stall)
        return 0;
    size_t n = len;
    if (a->max_consume && n > a->max_consume)
        n = a->max_consume;
    for (size_t i = 0; i < n; i++)
        if (d[i] != pat(&a->rx_rng))
            a->rx_bad = true;
    a->received += n;
    return n;
}

static void cb_connected(struct vfw_tcp_conn *c, int err, void *user)
{
    struct app *a = user;
    a->connected_n++;
    a->connected_err = err;
    if (err) {
        a->c = NULL;
        return;
    }
    a->c = c;
    app_pump(a);
}

static void cb_writable(struct vfw_tcp_conn *c, void *user)
{
    struct app *a = user;
    (void)c;
    a->writable++;
    app_pump(a);
}

static void cb_closed(struct vfw_tcp_conn *c, int err, void *user)
{
    struct app *a = user;
    (void)c;
    a->closed_n++;
    a->closed_err = err;
    if (err) {
        a->c = NULL;
        return;
    }
    if (a->closed_sent) {
        a->c = NULL;              /* both FINs done: invalid now */
        return;
    }
    if (a->reply_on_eof) {
        a->to_send += a->reply_on_eof;
        a->reply_on_eof = 0;
        a->close_after_send = true;
        app_pump(a);
        return;
    }
    if (a->abort_on_eof) {
        vfw_tcp_abort(c);
        a->c = NULL;
    } else if (a->close_on_eof) {
        vfw_tcp_close(c);
        a->closed_sent = true;
        a->c = NULL;              /* passive close: invalid after close */
    }
}

static const struct vfw_tcp_cb CB = {
    .connected = cb_connected,
    .recv = cb_recv,
    .writable = cb_writable,
    .closed = cb_closed,
};

static void app_pump(struct app *a)
{
    if (!a->c)
        return;
    uint8_t buf[9000];
    while (a->sent < a->to_send) {
        uint64_t left = a->to_send - a->sent;
        uint32_t n = a->rec_sz;
        if (n > vfw_tcp_mss(a->c))
            n = vfw_tcp_mss(a->c);
        if (n > left)
            n = (uint32_t)left;
        uint64_t save = a->tx_rng;
        for (uint32_t i = 0; i < n; i++)
            buf[i] = pat(&a->tx_rng);
        int r = vfw_tcp_send_record(a->c, buf, n);
        if (r == -EAGAIN) {
            a->tx_rng = save;
            a->eagain++;
            return;
        }
        if (r != 0) {
            a->tx_rng = save;
            return;
        }
        a->sent += n;
    }
    if (a->close_after_send && !a->closed_sent) {
        bool passive = a->closed_n > 0;   /* peer FIN already reported */
        a->closed_sent = true;
        struct vfw_tcp_conn *c = a->c;
        if (passive)
            a->c = NULL;
        vfw_tcp_close(c);
    }
}

static const struct vfw_tcp_cb *cb_accept(struct vfw_tcp_conn *c,
                                          void *listen_user, void **cu)
{
    struct peer *p = listen_user;
    if (p->refuse || p->napps >= 64)
        return NULL;
    struct app *a = &p->apps[p->napps++];
    a->c = c;
    a->p = p;
    *cu = a;
    app_pump(a);
    return &CB;
}

static struct vfw_tcp_config cfg_for(int side)
{
    struct vfw_tcp_config c;
    memset(&c, 0, sizeof(c));
    memcpy(c.mac, side ? MAC_B : MAC_A, 6);
    c.ip = side ? IP_B : IP_A;
    c.mtu = 1500;
    c.rcv_buf = 256 * 1024;
    c.snd_buf = 256 * 1024;
    c.max_conns = 64;
    return c;
}

static struct vfw_tcp_env ENV[2];
static struct vfw_pcap *g_pcap;

static void setup_cfg(uint64_t seed, const struct vfw_tcp_config *ca,
                      const struct vfw_tcp_config *cb)
{
    simwire_init(&W, seed);
    memset(&PA, 0, sizeof(PA));
    memset(&PB, 0, sizeof(PB));
    ENV[0] = simwire_env(&W, 0);
    ENV[1] = simwire_env(&W, 1);
    PA.s = vfw_tcp_stack_new(&ENV[0], ca);
    PB.s = vfw_tcp_stack_new(&ENV[1], cb);
    simwire_attach_tcp(&W, 0, PA.s);
    simwire_attach_tcp(&W, 1, PB.s);
    const char *dir = getenv("VFW_TCP_PCAP");
    if (dir) {
        char path[512];
        snprintf(path, sizeof(path), "%s/%s.pcap", dir, g_test);
        g_pcap = vfw_pcap_open(path, 0);
        W.pcap = g_pcap;
    }
}

static void setup(uint64_t seed)
{
    struct vfw_tcp_config a = cfg_for(0), b = cfg_for(1);
    setup_cfg(seed, &a, &b);
}

static void teardown(void)
{
    vfw_tcp_stack_free(PA.s);
    vfw_tcp_stack_free(PB.s);
    PA.s = PB.s = NULL;
    simwire_destroy(&W);
    if (g_pcap)
        vfw_pcap_close(g_pcap);
    g_pcap = NULL;
}

/* Connect app 0 of A to B's listener. */
static struct app *client(uint16_t port)
{
    struct app *a = &PA.apps[PA.napps++];
    a->p = &PA;
    int err = 1;
    struct vfw_tcp_conn *c = vfw_tcp_connect(PA.s, IP_B, port, 0, &CB, a,
                                             &err);
    if (!c)
        a->connected_err = err;
    return a;
}

static int done_connected(void *x)
{
    struct app *a = x;
    return a->connected_n > 0;
}

static struct app *g_x, *g_y;

static int done_transfer(void *unused)
{
    (void)unused;
    return g_x->received >= g_x->expect && g_y->received >= g_y->expect &&
           g_x->sent >= g_x->to_send && g_y->sent >= g_y->to_send;
}

static int done_closed_both(void *unused)
{
    (void)unused;
    return g_x->closed_n > 0 && g_y->closed_n > 0;
}

/* ---------------------------------------------------------- sniffers */

struct segview {
    bool tcp;
    uint8_t flags;
    uint32_t seq, ack;
    uint32_t len;
    uint16_t sport, dport, wnd;
};

static struct segview parse(const uint8_t *f, size_t len)
{
    struct segview v;
    memset(&v, 0, sizeof(v));
    if (len < 54 || vfw_ld_be16(f + 12) != 0x0800 || f[23] != 6)
        return v;
    size_t ihl = (size_t)(f[14] & 0xf) * 4;
    const uint8_t *t = f + 14 + ihl;
    size_t tot = vfw_ld_be16(f + 16);
    size_t thl = (size_t)(t[12] >> 4) * 4;
    v.tcp = true;
    v.sport = vfw_ld_be16(t);
    v.dport = vfw_ld_be16(t + 2);
    v.seq = vfw_ld_be32(t + 4);
    v.ack = vfw_ld_be32(t + 8);
    v.flags = t[13];
    v.wnd = vfw_ld_be16(t + 14);
    v.len = (uint32_t)(tot - ihl - thl);
    return v;
}

/* Record-alignment sniffer: side 0's data segments must start on record
 * boundaries (multiples of rec_sz from ISN+1) and carry <= rec_sz bytes. */
struct recsniff {
    uint32_t rec_sz;
    uint32_t isn;
    bool have_isn;
    uint64_t segs, misaligned, full;
};

static void sniff_records(void *o, int from, uint64_t t, const uint8_t *f,
                          size_t len)
{
    struct recsniff *r = o;
    (void)t;
    if (from != 0)
        return;
    struct segview v = parse(f, len);
    if (!v.tcp)
        return;
    if ((v.flags & VFW_TH_SYN) && !(v.flags & VFW_TH_ACK)) {
        r->isn = v.seq;
        r->have_isn = true;
        return;
    }
    if (!v.len || !r->have_isn)
        return;
    r->segs++;
    uint32_t off = v.seq - (r->isn + 1);
    if (off % r->rec_sz || v.len > r->rec_sz)
        r->misaligned++;
    if (v.len == r->rec_sz)
        r->full++;
}

/* ------------------------------------------------------------- tests */

static int t_handshake(void)
{
    setup(1);
    CHECK(vfw_tcp_listen(PB.s, PORT, cb_accept, &PB) == 0);
    CHECK(vfw_tcp_listen(PB.s, PORT, cb_accept, &PB) == -EADDRINUSE);
    struct app *a = client(PORT);
    CHECK(a->connected_err == 0);
    CHECK(simwire_run(&W, done_connected, a, 10 * SIMWIRE_S));
    CHECK(a->connected_err == 0 && a->c);
    simwire_advance(&W, 10 * SIMWIRE_MS);
    CHECK(PB.napps == 1);
    CHECK(vfw_tcp_mss(a->c) == 1460);
    CHECK(vfw_tcp_mss(PB.apps[0].c) == 1460);
    uint32_t lip, rip;
    uint16_t lp, rp;
    vfw_tcp_conn_addr(a->c, &lip, &lp, &rip, &rp);
    CHECK(lip == IP_A && rip == IP_B && rp == PORT && lp >= 49152);
    vfw_tcp_conn_addr(PB.apps[0].c, &lip, &lp, &rip, &rp);
    CHECK(lip == IP_B && rip == IP_A && lp == PORT);
    /* one ARP request + reply, SYN, SYN-ACK, ACK */
    CHECK(W.ep[0].sent == 3 && W.ep[1].sent == 2);
    teardown();
    return 0;
}

/* Bulk transfer both directions at once, verified byte by byte. */
static int bulk(uint64_t seed, uint64_t n_ab, uint64_t n_ba, uint32_t rec,
                uint32_t loss, uint32_t dup, uint32_t reorder,
                struct recsniff *rs, uint64_t max_s)
{
    setup(seed);
    W.loss_ppm = loss;
    W.dup_ppm = dup;
    W.reorder_ppm = reorder;
    W.reorder_ns = 2 * SIMWIRE_MS;
    W.rate_bps = 1000000000ull;
    W.delay_ns = 100000;
    W.qlimit = (loss || dup || reorder) ? 256 : 4096;
    if (rs) {
        W.sniff = sniff_records;
        W.sniff_opaque = rs;
    }
    CHECK(vfw_tcp_listen(PB.s, PORT, cb_accept, &PB) == 0);
    struct app *a = client(PORT);
    a->rec_sz = rec;
    a->tx_rng = seed * 7 + 1;
    a->rx_rng = seed * 13 + 5;
    a->expect = n_ba;
    CHECK(simwire_run(&W, done_connected, a, 60 * SIMWIRE_S));
    CHECK(a->connected_err == 0);
    simwire_advance(&W, 1 * SIMWIRE_MS);
    CHECK(PB.napps == 1);
    struct app *b = &PB.apps[0];
    b->rx_rng = seed * 7 + 1;
    b->expect = n_ab;
    b->tx_rng = seed * 13 + 5;
    b->rec_sz = rec;
    b->to_send = n_ba;
    a->to_send = n_ab;
    app_pump(b);
    app_pump(a);
    g_x = a;
    g_y = b;
    CHECK(simwire_run(&W, done_transfer, NULL, max_s * SIMWIRE_S));
    CHECK(a->received == n_ba && b->received == n_ab);
    CHECK(!a->rx_bad && !b->rx_bad);
    /* orderly close both ways */
    a->close_after_send = true;
    b->close_on_eof = true;
    app_pump(a);
    CHECK(simwire_run(&W, done_closed_both, NULL, 120 * SIMWIRE_S));
    CHECK(a->closed_err == 0 && b->closed_err == 0);
    simwire_advance(&W, 5 * SIMWIRE_S);    /* TIME_WAIT ends */
    CHECK(vfw_tcp_next_timer_ns(PA.s) == UINT64_MAX);
    CHECK(vfw_tcp_next_timer_ns(PB.s) == UINT64_MAX);
    return 0;
}

static int t_bulk_sizes(void)
{
    static const uint64_t sizes[] = {1, 2, 1000, 1460, 1461, 65536,
                                     100000, 1048576, 4194304};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        struct recsniff rs = {.rec_sz = 1460};
        if (bulk(100 + i, sizes[i], sizes[sizes[i] > 1000 ? 0 : 2] + i,
                 1460, 0, 0, 0, &rs, 60)) {
            fprintf(stderr, "  size %llu\n", (unsigned long long)sizes[i]);
            teardown();
            return -1;
        }
        CHECK(rs.misaligned == 0);
        if (sizes[i] >= 1460)
            CHECK(rs.full == sizes[i] / 1460);
        struct vfw_tcp_stats st;
        vfw_tcp_stats(PA.s, &st);
        CHECK(st.retrans == 0 && st.bad_csum == 0);
        teardown();
    }
    /* 4 MB the other direction too */
    CHECK(bulk(200, 1000, 4194304, 1460, 0, 0, 0, NULL, 60) == 0);
    teardown();
    return 0;
}

static int t_bulk_small_records(void)
{
    /* 100-byte FPDUs: every segment is exactly one record. */
    struct recsniff rs = {.rec_sz = 100};
    int r = bulk(7, 300000, 300000, 100, 0, 0, 0, &rs, 60);
    CHECK(r == 0);
    CHECK(rs.misaligned == 0 && rs.full == 3000);
    teardown();
    return 0;
}

static int t_bulk_lossy(void)
{
    for (uint64_t seed = 1; seed <= 4; seed++) {
        struct recsniff rs = {.rec_sz = 1000};
        CHECK(bulk(seed * 31, 1048576, 524288, 1000, 20000, 10000, 20000,
                   &rs, 600) == 0);
        struct vfw_tcp_stats sa, sb;
        vfw_tcp_stats(PA.s, &sa);
        vfw_tcp_stats(PB.s, &sb);
        CHECK(sa.retrans > 0 && sb.retrans > 0);
        CHECK(sb.ooo_queued > 0);
        CHECK(sa.dup_acks > 0);
        CHECK(W.ep[0].lost > 0 && W.ep[0].duplicated > 0 &&
              W.ep[0].reordered > 0);
        /* segments are cut at record ends even when retransmitted */
        CHECK(rs.misaligned == 0);
        teardown();
    }
    return 0;
}

static int t_bulk_heavy_loss(void)
{
    CHECK(bulk(77, 262144, 262144, 1460, 100000, 20000, 50000, NULL,
               1200) == 0);
    teardown();
    return 0;
}

/* Drop exactly the 20th data segment: fast retransmit, no RTO. */
static int g_drop_nth, g_data_seen;
static int filter_nth(void *o, int from, const uint8_t *f, size_t len)
{
    (void)o;
    struct segview v = parse(f, len);
    if (from == 0 && v.tcp && v.len && ++g_data_seen == g_drop_nth)
        return 1;
    return 0;
}

static int t_fast_retransmit(void)
{
    setup(5);
    W.delay_ns = 1 * SIMWIRE_MS;
    W.rate_bps = 100000000ull;
    g_drop_nth = 20;
    g_data_seen = 0;
    W.filter = filter_nth;
    CHECK(vfw_tcp_listen(PB.s, PORT, cb_accept, &PB) == 0);
    struct app *a = client(PORT);
    CHECK(simwire_run(&W, done_connected, a, SIMWIRE_S));
    simwire_advance(&W, SIMWIRE_MS);
    struct app *b = &PB.apps[0];
    a->rec_sz = 1460;
    a->tx_rng = b->rx_rng = 9;
    a->to_send = b->expect = 200 * 1460;
    uint64_t t0 = W.now;
    app_pump(a);
    g_x = a;
    g_y = b;
    CHECK(simwire_run(&W, done_transfer, NULL, 10 * SIMWIRE_S));
    CHECK(!b->rx_bad);
    struct vfw_tcp_stats st;
    vfw_tcp_stats(PA.s, &st);
    CHECK(st.retrans == 1);
    CHECK(st.dup_acks >= 3);
    /* recovered well before the 200 ms minimum RTO would have fired */
    CHECK(W.now - t0 < 150 * SIMWIRE_MS);
    teardown();
    return 0;
}

/* Receiver consumes at most 100 bytes per upcall, small buffers. */
static int t_backpressure(void)
{
    struct vfw_tcp_config ca = cfg_for(0), cb = cfg_for(1);
    ca.snd_buf = cb.snd_buf = 8192;
    ca.rcv_buf = cb.rcv_buf = 4096;
    setup_cfg(9, &ca, &cb);
    W.loss_ppm = 10000;
    CHECK(vfw_tcp_listen(PB.s, PORT, cb_accept, &PB) == 0);
    struct app *a = client(PORT);
    CHECK(simwire_run(&W, done_connected, a, 10 * SIMWIRE_S));
    simwire_advance(&W, SIMWIRE_MS);
    struct app *b = &PB.apps[0];
    b->max_consume = 100;
    a->rec_sz = 1000;
    a->tx_rng = b->rx_rng = 3;
    a->to_send = b->expect = 200000;
    app_pump(a);
    CHECK(a->eagain > 0);
    g_x = a;
    g_y = b;
    /* The app resumes reception every 1 ms of simulated time. */
    for (int i = 0; i < 200000 && !done_transfer(NULL); i++) {
        simwire_advance(&W, SIMWIRE_MS);
        if (b->c)
            vfw_tcp_recv_resume(b->c);
    }
    CHECK(done_transfer(NULL));
    CHECK(!b->rx_bad);
    CHECK(a->writable > 0);
    teardown();
    return 0;
}

/* Receiver stalls for 5 s (zero window), then drains: persist probes keep
 * the connection alive and the transfer completes. */
static int t_zero_window(void)
{
    struct vfw_tcp_config ca = cfg_for(0), cb = cfg_for(1);
    cb.rcv_buf = 8192;
    setup_cfg(10, &ca, &cb);
    CHECK(vfw_tcp_listen(PB.s, PORT, cb_accept, &PB) == 0);
    struct app *a = client(PORT);
    CHECK(simwire_run(&W, done_connected, a, 10 * SIMWIRE_S));
    simwire_advance(&W, SIMWIRE_MS);
    struct app *b = &PB.apps[0];
    b->stall = true;
    a->rec_sz = 1460;
    a->tx_rng = b->rx_rng = 4;
    a->to_send = b->expect = 100000;
    app_pump(a);
    uint64_t before = W.ep[0].sent;
    simwire_advance(&W, 5 * SIMWIRE_S);
    CHECK(b->received == 0);
    CHECK(W.ep[0].sent > before);     /* probes went out */
    CHECK(a->closed_n == 0 && b->closed_n == 0);
    b->stall = false;
    vfw_tcp_recv_resume(b->c);
    g_x = a;
    g_y = b;
    CHECK(simwire_run(&W, done_transfer, NULL, 60 * SIMWIRE_S));
    CHECK(!b->rx_bad);
    teardown();
    return 0;
}

/* Half close: A sends and closes; B, on EOF, replies and closes. */
static int t_half_close(void)
{
    setup(11);
    W.loss_ppm = 20000;
    CHECK(vfw_tcp_listen(PB.s, PORT, cb_accept, &PB) == 0);
    struct app *a = client(PORT);
    CHECK(simwire_run(&W, done_connected, a, 10 * SIMWIRE_S));
    simwire_advance(&W, SIMWIRE_MS);
    struct app *b = &PB.apps[0];
    CHECK(vfw_tcp_active_conns(PA.s) == 1 && vfw_tcp_active_conns(PB.s) == 1);
    a->rec_sz = b->rec_sz = 1200;
    a->tx_rng = b->rx_rng = 21;
    b->tx_rng = a->rx_rng = 22;
    a->to_send = b->expect = 10000;
    a->expect = 20000;
    b->reply_on_eof = 20000;
    a->close_after_send = true;
    app_pump(a);
    g_x = a;
    g_y = b;
    CHECK(simwire_run(&W, done_closed_both, NULL, 120 * SIMWIRE_S));
    simwire_advance(&W, 10 * SIMWIRE_S);
    CHECK(b->received == 10000 && a->received == 20000);
    CHECK(!a->rx_bad && !b->rx_bad);
    CHECK(a->closed_n == 1 && a->closed_err == 0);
    CHECK(b->closed_n == 1 && b->closed_err == 0);
    /* B closed passively (no upcall after its close): only the active
     * count tells that its FIN, and the reply before it, were acked. */
    CHECK(vfw_tcp_active_conns(PA.s) == 0 && vfw_tcp_active_conns(PB.s) == 0);
    CHECK(vfw_tcp_next_timer_ns(PA.s) == UINT64_MAX);
    CHECK(vfw_tcp_next_timer_ns(PB.s) == UINT64_MAX);
    teardown();
    return 0;
}

static int t_abort_rst(void)
{
    setup(12);
    CHECK(vfw_tcp_listen(PB.s, PORT, cb_accept, &PB) == 0);
    struct app *a = client(PORT);
    CHECK(simwire_run(&W, done_connected, a, 10 * SIMWIRE_S));
    simwire_advance(&W, SIMWIRE_MS);
    struct app *b = &PB.apps[0];
    vfw_tcp_abort(a->c);
    a->c = NULL;
    simwire_advance(&W, 10 * SIMWIRE_MS);
    CHECK(b->closed_n == 1 && b->closed_err == -ECONNRESET);
    CHECK(a->closed_n == 0);
    struct vfw_tcp_stats st;
    vfw_tcp_stats(PA.s, &st);
    CHECK(st.rst_out == 1);
    CHECK(vfw_tcp_next_timer_ns(PB.s) == UINT64_MAX);
    teardown();
    return 0;
}

static int t_refused(void)
{
    setup(13);
    struct app *a = client(PORT);    /* nobody listens */
    CHECK(simwire_run(&W, done_connected, a, 10 * SIMWIRE_S));
    CHECK(a->connected_err == -ECONNREFUSED);
    struct vfw_tcp_stats st;
    vfw_tcp_stats(PB.s, &st);
    CHECK(st.drops_no_conn == 1 && st.rst_out == 1);
    /* accept upcall refusing → RST → client sees reset */
    CHECK(vfw_tcp_listen(PB.s, PORT + 1, cb_accept, &PB) == 0);
    PB.refuse = true;
    struct app *c = client(PORT + 1);
    simwire_advance(&W, SIMWIRE_S);
    CHECK(c->connected_n == 1 && c->connected_err == 0);
    CHECK(c->closed_n == 1 && c->closed_err == -ECONNRESET);
    /* unlisten: SYN → RST */
    vfw_tcp_unlisten(PB.s, PORT + 1);
    struct app *d = client(PORT + 1);
    simwire_advance(&W, SIMWIRE_S);
    CHECK(d->connected_err == -ECONNREFUSED);
    teardown();
    return 0;
}

static int filter_all_from_b(void *o, int from, const uint8_t *f,
                             size_t len)
{
    (void)o;
    (void)f;
    (void)len;
    return from == 1;
}

static int filter_tcp_from_b(void *o, int from, const uint8_t *f, size_t len)
{
    (void)o;
    return from == 1 && parse(f, len).tcp;
}

static int t_timeouts(void)
{
    /* No ARP reply: -EHOSTUNREACH after the SYN retries. */
    setup(14);
    W.filter = filter_all_from_b;
    struct app *a = client(PORT);
    CHECK(simwire_run(&W, done_connected, a, 600 * SIMWIRE_S));
    CHECK(a->connected_err == -EHOSTUNREACH);
    teardown();

    /* ARP works, SYN-ACKs lost: -ETIMEDOUT. */
    setup(15);
    CHECK(vfw_tcp_listen(PB.s, PORT, cb_accept, &PB) == 0);
    W.filter = filter_tcp_from_b;
    a = client(PORT);
    uint64_t t0 = W.now;
    CHECK(simwire_run(&W, done_connected, a, 600 * SIMWIRE_S));
    CHECK(a->connected_err == -ETIMEDOUT);
    /* 1+2+4+8+16+32 s of RFC 6298 backoff */
    CHECK(W.now - t0 >= 63 * SIMWIRE_S && W.now - t0 < 64 * SIMWIRE_S);
    teardown();

    /* Established, then the peer vanishes: data times out. Short RTO
     * bounds via tunables. */
    setup(16);
    struct vfw_tcp_tunables tu;
    vfw_tcp_get_tunables(PA.s, &tu);
    tu.rto_max_ns = 2 * SIMWIRE_S;
    tu.data_retries = 5;
    CHECK(vfw_tcp_set_tunables(PA.s, &tu) == 0);
    tu.rto_min_ns = 0;
    CHECK(vfw_tcp_set_tunables(PA.s, &tu) == -EINVAL);
    CHECK(vfw_tcp_listen(PB.s, PORT, cb_accept, &PB) == 0);
    a = client(PORT);
    CHECK(simwire_run(&W, done_connected, a, 10 * SIMWIRE_S));
    simwire_advance(&W, SIMWIRE_MS);
    W.filter = filter_all_from_b;
    a->rec_sz = 1000;
    a->to_send = 5000;
    app_pump(a);
    g_x = a;
    g_y = a;
    CHECK(simwire_run(&W, done_closed_both, NULL, 60 * SIMWIRE_S));
    CHECK(a->closed_err == -ETIMEDOUT);
    struct vfw_tcp_stats st;
    vfw_tcp_stats(PA.s, &st);
    CHECK(st.timeouts == 1);
    teardown();
    return 0;
}

static int t_max_conns(void)
{
    struct vfw_tcp_config ca = cfg_for(0), cb = cfg_for(1);
    ca.max_conns = 3;
    cb.max_conns = 2;
    setup_cfg(17, &ca, &cb);
    CHECK(vfw_tcp_listen(PB.s, PORT, cb_accept, &PB) == 0);
    struct app *x[4];
    /* one after the other: B's bound holds established conns; a half-open
     * one would yield its slot to a newer SYN (t_syn_backlog) */
    for (int i = 0; i < 3; i++) {
        x[i] = client(PORT);
        simwire_advance(&W, SIMWIRE_S);
    }
    int ok = 0, refused = 0;
    for (int i = 0; i < 3; i++) {
        ok += x[i]->connected_n == 1 && x[i]->connected_err == 0;
        refused += x[i]->connected_err == -ECONNREFUSED;
    }
    CHECK(ok == 2 && refused == 1);
    struct vfw_tcp_stats st;
    vfw_tcp_stats(PB.s, &st);
    CHECK(st.conn_limit == 1);
    CHECK(PB.napps == 2);
    /* A holds 2 live conns; third slot free again after refusal */
    x[3] = client(PORT);
    CHECK(x[3]->connected_n == 0);     /* in progress */
    struct app *y = client(PORT);      /* A is at its bound of 3 */
    CHECK(y->connected_err == -ENOBUFS);
    vfw_tcp_stats(PA.s, &st);
    CHECK(st.conn_limit == 1);
    teardown();
    return 0;
}

static int t_time_wait(void)
{
    setup(18);
    struct vfw_tcp_tunables tu;
    vfw_tcp_get_tunables(PA.s, &tu);
    tu.time_wait_ns = 300 * SIMWIRE_MS;
    CHECK(vfw_tcp_set_tunables(PA.s, &tu) == 0);
    CHECK(vfw_tcp_listen(PB.s, PORT, cb_accept, &PB) == 0);
    struct app *a = &PA.apps[PA.napps++];
    int err;
    struct vfw_tcp_conn *c = vfw_tcp_connect(PA.s, IP_B, PORT, 40000, &CB,
                                             a, &err);
    CHECK(c && err == 0);
    CHECK(simwire_run(&W, done_connected, a, 10 * SIMWIRE_S));
    simwire_advance(&W, SIMWIRE_MS);
    struct app *b = &PB.apps[0];
    b->close_on_eof = true;
    a->close_after_send = true;
    app_pump(a);
    g_x = a;
    g_y = b;
    CHECK(simwire_run(&W, done_closed_both, NULL, 10 * SIMWIRE_S));
    /* A is in TIME_WAIT: the same 4-tuple is busy */
    struct app *a2 = &PA.apps[PA.napps++];
    CHECK(vfw_tcp_connect(PA.s, IP_B, PORT, 40000, &CB, a2, &err) == NULL &&
          err == -EADDRINUSE);
    simwire_advance(&W, 310 * SIMWIRE_MS);
    CHECK(vfw_tcp_next_timer_ns(PA.s) == UINT64_MAX);
    CHECK(vfw_tcp_connect(PA.s, IP_B, PORT, 40000, &CB, a2, &err) != NULL);
    CHECK(simwire_run(&W, done_connected, a2, 10 * SIMWIRE_S));
    CHECK(a2->connected_err == 0);
    teardown();
    return 0;
}

/* Delayed ACK: one small record is acknowledged after ~40 ms. */
static uint64_t g_ack_t, g_data_t;
static void sniff_delack(void *o, int from, uint64_t t, const uint8_t *f,
                         size_t len)
{
    (void)o;
    struct segview v = parse(f, len);
    if (!v.tcp)
        return;
    if (from == 0 && v.len)
        g_data_t = t;
    if (from == 1 && !v.len && g_data_t && !g_ack_t)
        g_ack_t = t;
}

static int t_delayed_ack(void)
{
    setup(19);
    CHECK(vfw_tcp_listen(PB.s, PORT, cb_accept, &PB) == 0);
    struct app *a = client(PORT);
    CHECK(simwire_run(&W, done_connected, a, 10 * SIMWIRE_S));
    simwire_advance(&W, SIMWIRE_MS);
    a->rec_sz = 100;
    a->to_send = 100;
    app_pump(a);
    simwire_advance(&W, SIMWIRE_S);   /* first one opens the big window */
    g_ack_t = g_data_t = 0;
    W.sniff = sniff_delack;
    a->to_send = 200;
    app_pump(a);
    simwire_advance(&W, SIMWIRE_S);
    CHECK(g_data_t && g_ack_t);
    CHECK(g_ack_t - g_data_t >= 40 * SIMWIRE_MS);
    CHECK(g_ack_t - g_data_t < 41 * SIMWIRE_MS);
    CHECK(vfw_tcp_send_record(a->c, (const uint8_t *)"x", 1461) ==
          -EMSGSIZE);
    teardown();
    return 0;
}

/* Many concurrent connections over a lossy wire. */
static int t_many_conns(void)
{
    setup(20);
    W.loss_ppm = 10000;
    W.reorder_ppm = 10000;
    W.reorder_ns = SIMWIRE_MS;
    CHECK(vfw_tcp_listen(PB.s, PORT, cb_accept, &PB) == 0);
    for (int i = 0; i < 32; i++)
        client(PORT);
    simwire_advance(&W, 5 * SIMWIRE_S);
    CHECK(PB.napps == 32);
    for (int i = 0; i < 32; i++) {
        struct app *a = &PA.apps[i];
        CHECK(a->connected_err == 0 && a->c);
        uint16_t lp;
        vfw_tcp_conn_addr(a->c, NULL, &lp, NULL, NULL);
        /* find B's peer by port */
        struct app *b = NULL;
        for (int j = 0; j < 32; j++) {
            uint16_t rp;
            vfw_tcp_conn_addr(PB.apps[j].c, NULL, NULL, NULL, &rp);
            if (rp == lp)
                b = &PB.apps[j];
        }
        CHECK(b);
        a->rec_sz = 1460;
        a->tx_rng = b->rx_rng = 1000 + (uint64_t)i;
        a->to_send = b->expect = 50000 + (uint64_t)i * 1000;
        app_pump(a);
    }
    simwire_advance(&W, 60 * SIMWIRE_S);
    for (int j = 0; j < 32; j++) {
        CHECK(PB.apps[j].received == PB.apps[j].expect);
        CHECK(!PB.apps[j].rx_bad);
    }
    teardown();
    return 0;
}

/* ------------------------------------------------------ malformed input */

static uint64_t g_out;
static void count_out(void *o, const uint8_t *f, size_t len)
{
    (void)o;
    (void)f;
    (void)len;
    g_out++;
}

static uint64_t fixed_now(void *o)
{
    (void)o;
    return 5 * SIMWIRE_S;
}

static size_t mk_tcp(uint8_t *f, uint32_t sip, uint16_t sport, uint16_t dport,
                     uint32_t seq, uint32_t ack, uint8_t flags,
                     const uint8_t *payload, size_t plen)
{
    return tcp_frame(f, MAC_B, MAC_A, sip, IP_B, sport, dport, seq, ack,
                     flags, 65535, NULL, 0, payload, plen);
}

static const struct vfw_tcp_cb *accept_none(struct vfw_tcp_conn *c, void *u,
                                            void **cu)
{
    (void)c;
    (void)u;
    (void)cu;
    return &CB;
}

static int t_malformed(void)
{
    struct vfw_tcp_env env = {.opaque = NULL, .frame_out = count_out,
                              .now_ns = fixed_now};
    struct vfw_tcp_config cb = cfg_for(1);
    struct vfw_tcp_stack *s = vfw_tcp_stack_new(&env, &cb);
    CHECK(s);
    CHECK(vfw_tcp_listen(s, PORT, accept_none, NULL) == 0);
    uint8_t f[2048], g[2048];
    struct vfw_tcp_stats st;
    g_out = 0;
    size_t n = mk_tcp(f, IP_A, 1234, PORT, 1000, 0, VFW_TH_SYN, NULL, 0);

    /* short frames at every length below a full header */
    for (size_t l = 0; l < n; l++) {
        memcpy(g, f, l);
        vfw_tcp_input(s, g, l);
    }
    vfw_tcp_stats(s, &st);
    CHECK(st.malformed == n);
    CHECK(g_out == 0);
    /* bad IP checksum */
    memcpy(g, f, n);
    g[14 + 10] ^= 0x55;
    vfw_tcp_input(s, g, n);
    /* bad TCP checksum */
    memcpy(g, f, n);
    g[34 + 16] ^= 0x55;
    vfw_tcp_input(s, g, n);
    vfw_tcp_stats(s, &st);
    CHECK(st.bad_csum == 2 && g_out == 0);
    /* IP total length larger than the frame; ihl < 5; version 6 */
    uint64_t m0 = st.malformed;
    memcpy(g, f, n);
    vfw_st_be16(g + 16, 1400);
    vfw_tcp_input(s, g, n);
    memcpy(g, f, n);
    g[14] = 0x44;
    vfw_tcp_input(s, g, n);
    memcpy(g, f, n);
    g[14] = 0x65;
    vfw_tcp_input(s, g, n);
    /* TCP data offset beyond the segment (checksum fixed up) */
    memcpy(g, f, n);
    g[34 + 12] = 0xf0;
    memset(g + 34 + 16, 0, 2);
    vfw_csum_store(g + 34 + 16, vfw_csum_partial(g + 34, 20,
                   vfw_csum_pseudo(IP_A, IP_B, 6, 20)));
    vfw_tcp_input(s, g, n);
    /* data offset < 5 */
    memcpy(g, f, n);
    g[34 + 12] = 0x40;
    memset(g + 34 + 16, 0, 2);
    vfw_csum_store(g + 34 + 16, vfw_csum_partial(g + 34, 20,
                   vfw_csum_pseudo(IP_A, IP_B, 6, 20)));
    vfw_tcp_input(s, g, n);
    vfw_tcp_stats(s, &st);
    CHECK(st.malformed == m0 + 5);
    CHECK(g_out == 0);
    /* fragment (MF set), with a valid checksum */
    memcpy(g, f, n);
    vfw_st_be16(g + 20, 0x2000);
    memset(g + 24, 0, 2);
    vfw_csum_store(g + 24, vfw_csum_partial(g + 14, 20, 0));
    vfw_tcp_input(s, g, n);
    vfw_tcp_stats(s, &st);
    CHECK(st.ip_frags == 1 && g_out == 0);
    /* not for us: other MAC, other IP → silently ignored */
    memcpy(g, f, n);
    g[0] ^= 0x10;
    vfw_tcp_input(s, g, n);
    CHECK(g_out == 0);
    /* SYN+FIN is refused */
    n = mk_tcp(g, IP_A, 1234, PORT, 1000, 0, VFW_TH_SYN | VFW_TH_FIN,
               NULL, 0);
    vfw_tcp_input(s, g, n);
    CHECK(g_out == 0);
    /* Ethernet padding after the IP datagram is fine: valid SYN padded */
    n = mk_tcp(f, IP_A, 1234, PORT, 1000, 0, VFW_TH_SYN, NULL, 0);
    memset(f + n, 0xee, 6);
    vfw_tcp_input(s, f, n + 6);
    CHECK(g_out == 1);                 /* SYN-ACK */
    /* ACK to a closed port → RST; RST to a closed port → nothing */
    n = mk_tcp(g, IP_A, 999, 81, 5, 6, VFW_TH_ACK, NULL, 0);
    vfw_tcp_input(s, g, n);
    CHECK(g_out == 2);
    n = mk_tcp(g, IP_A, 999, 81, 5, 6, VFW_TH_RST, NULL, 0);
    vfw_tcp_input(s, g, n);
    CHECK(g_out == 2);
    vfw_tcp_stats(s, &st);
    CHECK(st.rst_out == 1 && st.segs_in == 4);
    /* ARP: short, wrong hardware type, request for another IP */
    uint8_t arp[60];
    memset(arp, 0xff, 6);
    memcpy(arp + 6, MAC_A, 6);
    vfw_st_be16(arp + 12, 0x0806);
    vfw_st_be16(arp + 14, 1);
    vfw_st_be16(arp + 16, 0x0800);
    arp[18] = 6;
    arp[19] = 4;
    vfw_st_be16(arp + 20, 1);
    memcpy(arp + 22, MAC_A, 6);
    vfw_st_be32(arp + 28, IP_A);
    memset(arp + 32, 0, 6);
    vfw_st_be32(arp + 38, IP_B + 7);
    vfw_tcp_input(s, arp, 42);
    CHECK(g_out == 2);
    vfw_tcp_input(s, arp, 30);
    vfw_st_be32(arp + 38, IP_B);
    vfw_tcp_input(s, arp, 42);
    CHECK(g_out == 3);                 /* ARP reply */
    vfw_tcp_stack_free(s);
    return 0;
}

/* Bad stack configs are refused. */
static int t_config(void)
{
    struct vfw_tcp_env env = {.opaque = NULL, .frame_out = count_out,
                              .now_ns = fixed_now};
    struct vfw_tcp_config c = cfg_for(0);
    c.mtu = 100;
    CHECK(vfw_tcp_stack_new(&env, &c) == NULL);
    c = cfg_for(0);
    c.max_conns = 0;
    CHECK(vfw_tcp_stack_new(&env, &c) == NULL);
    c = cfg_for(0);
    c.mac[0] = 1;
    CHECK(vfw_tcp_stack_new(&env, &c) == NULL);
    c = cfg_for(0);
    c.mtu = 9000;
    struct vfw_tcp_stack *s = vfw_tcp_stack_new(&env, &c);
    CHECK(s);
    CHECK(vfw_tcp_listen(s, 0, accept_none, NULL) == -EINVAL);
    vfw_tcp_stack_free(s);
    return 0;
}

/* pcap writer produces the classic format. */
static int t_pcap(void)
{
    char path[] = "/tmp/vfw-tcp-test-XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    close(fd);
    struct vfw_pcap *p = vfw_pcap_open(path, 64);
    CHECK(p);
    uint8_t fr[100];
    memset(fr, 0xab, sizeof(fr));
    CHECK(vfw_pcap_write(p, 1500000123456ull, fr, 60) == 0);
    CHECK(vfw_pcap_write(p, 1500000999999ull, fr, 100) == 0);
    CHECK(vfw_pcap_count(p) == 2);
    CHECK(vfw_pcap_close(p) == 0);
    FILE *f = fopen(path, "rb");
    CHECK(f);
    uint8_t b[256];
    size_t n = fread(b, 1, sizeof(b), f);
    fclose(f);
    unlink(path);
    CHECK(n == 24 + 16 + 60 + 16 + 64);
    CHECK(b[0] == 0xd4 && b[1] == 0xc3 && b[2] == 0xb2 && b[3] == 0xa1);
    CHECK(b[20] == 1);                        /* LINKTYPE_ETHERNET */
    CHECK(b[24] == (1500 & 0xff) && b[28] == 123);   /* 1500 s, 123 us */
    CHECK(b[24 + 16 + 60 + 8] == 64 && b[24 + 16 + 60 + 12] == 100);
    return 0;
}

/* ------------------------------------------ sharing with a netdev (2.0) */

static const uint8_t MAC_C[6] = {0x02, 0, 0, 0, 0, 0x0c};
#define IP_C 0x0a000003u

static uint64_t arp_out(struct vfw_tcp_stack *s)
{
    struct vfw_tcp_stats st;
    vfw_tcp_stats(s, &st);
    return st.arp_out;
}

/* An ARP request from (sha, spa) for tpa, as the netdev's peer sends it. */
static size_t arp_frame(uint8_t *f, const uint8_t sha[6], uint32_t spa,
                        uint32_t tpa)
{
    memset(f, 0, 60);
    memset(f, 0xff, 6);
    memcpy(f + 6, sha, 6);
    vfw_st_be16(f + 12, 0x0806);
    uint8_t *a = f + 14;
    vfw_st_be16(a, 1);
    vfw_st_be16(a + 2, 0x0800);
    a[4] = 6;
    a[5] = 4;
    vfw_st_be16(a + 6, 1);
    memcpy(a + 8, sha, 6);
    vfw_st_be32(a + 14, spa);
    vfw_st_be32(a + 24, tpa);
    return 60;
}

/* arp_passive: no ARP out ever; next hops from neigh_set, from ARP frames
 * seen and from a SYN to a listener; unknown next hop = -EHOSTUNREACH */
static int t_arp_passive(void)
{
    setup(40);
    /* a resolution under way when passive mode starts: no more requests;
     * neigh_set completes it (the SYN leaves at once) */
    int err = 0;
    struct app *p = &PA.apps[PA.napps++];
    p->p = &PA;
    struct vfw_tcp_conn *pc = vfw_tcp_connect(PA.s, IP_C, 9, 0, &CB, p, &err);
    CHECK(pc != NULL && arp_out(PA.s) == 1);
    vfw_tcp_set_arp_passive(PA.s, 1);
    simwire_advance(&W, 5 * SIMWIRE_S);
    CHECK(arp_out(PA.s) == 1 && p->connected_n == 0);
    uint64_t sent0 = W.ep[0].sent;
    CHECK(vfw_tcp_neigh_set(PA.s, IP_C, MAC_C) == 0);
    CHECK(W.ep[0].sent == sent0 + 1);
    vfw_tcp_abort(pc);
    teardown();
    setup(40);
    vfw_tcp_set_arp_passive(PA.s, 1);
    vfw_tcp_set_arp_passive(PB.s, 1);
    CHECK(vfw_tcp_listen(PB.s, PORT, cb_accept, &PB) == 0);
    CHECK(vfw_tcp_listen(PA.s, PORT + 1, cb_accept, &PA) == 0);
    struct app *a = &PA.apps[PA.napps++];
    a->p = &PA;
    CHECK(vfw_tcp_connect(PA.s, IP_B, PORT, 0, &CB, a, &err) == NULL);
    CHECK(err == -EHOSTUNREACH);
    CHECK(vfw_tcp_active_conns(PA.s) == 0);
    /* bad neighbours */
    CHECK(vfw_tcp_neigh_set(PA.s, IP_B, (const uint8_t[6]){1, 0, 0, 0, 0, 1})
          == -EINVAL);
    CHECK(vfw_tcp_neigh_set(PA.s, IP_B, (const uint8_t[6]){0}) == -EINVAL);
    CHECK(vfw_tcp_neigh_set(PA.s, IP_A, MAC_B) == -EINVAL);
    CHECK(vfw_tcp_neigh_set(PA.s, 0, MAC_B) == -EINVAL);
    CHECK(vfw_tcp_neigh_set(PA.s, 0xe0000001u, MAC_B) == -EINVAL);
    /* A learns B from the driver; B learns A from A's SYN */
    CHECK(vfw_tcp_neigh_set(PA.s, IP_B, MAC_B) == 0);
    CHECK(vfw_tcp_connect(PA.s, IP_B, PORT, 0, &CB, a, &err) != NULL);
    CHECK(simwire_run(&W, done_connected, a, 10 * SIMWIRE_S));
    CHECK(a->connected_err == 0);
    simwire_advance(&W, 10 * SIMWIRE_MS);
    CHECK(PB.napps == 1);
    struct app *b = &PB.apps[PB.napps++];
    b->p = &PB;
    CHECK(vfw_tcp_connect(PB.s, IP_A, PORT + 1, 0, &CB, b, &err) != NULL);
    CHECK(simwire_run(&W, done_connected, b, 10 * SIMWIRE_S));
    CHECK(b->connected_err == 0);
    /* an ARP request for A teaches A the asker; A stays silent */
    uint8_t f[64];
    size_t n = arp_frame(f, MAC_C, IP_C, IP_A);
    sent0 = W.ep[0].sent;
    vfw_tcp_input(PA.s, f, n);
    CHECK(W.ep[0].sent == sent0);
    struct app *c = &PA.apps[PA.napps++];
    c->p = &PA;
    struct vfw_tcp_conn *cc = vfw_tcp_connect(PA.s, IP_C, 9, 0, &CB, c, &err);
    CHECK(cc != NULL && err == 0);
    CHECK(W.ep[0].sent == sent0 + 1);      /* the SYN, straight away */
    vfw_tcp_abort(cc);
    CHECK(arp_out(PA.s) == 0 && arp_out(PB.s) == 0);
    teardown();
    return 0;
}

/* set_addr: live conns keep MAC/IP/MSS they started with; new ones use the
 * new address; bad values refused */
static int t_set_addr(void)
{
    setup(41);
    CHECK(vfw_tcp_listen(PA.s, PORT, cb_accept, &PA) == 0);
    CHECK(vfw_tcp_listen(PB.s, PORT, cb_accept, &PB) == 0);
    struct app *a = client(PORT);
    CHECK(simwire_run(&W, done_connected, a, 10 * SIMWIRE_S));
    CHECK(a->connected_err == 0);
    simwire_advance(&W, 10 * SIMWIRE_MS);
    struct app *b = &PB.apps[0];
    const uint8_t mac2[6] = {0x02, 0, 0, 0, 0, 0x2a};
    const uint32_t ip2 = 0x0a000009u;
    CHECK(vfw_tcp_set_addr(PA.s, mac2, ip2, 575) == -EINVAL);
    CHECK(vfw_tcp_set_addr(PA.s, mac2, ip2, 9217) == -EINVAL);
    CHECK(vfw_tcp_set_addr(PA.s, (const uint8_t[6]){3, 0, 0, 0, 0, 1}, ip2,
                           1500) == -EINVAL);
    CHECK(vfw_tcp_set_addr(PA.s, mac2, 0xffffffffu, 1500) == -EINVAL);
    CHECK(vfw_tcp_set_addr(PA.s, mac2, ip2, 9000) == 0);
    /* the old conn still moves data both ways at the old address */
    a->to_send = 200000;
    a->rec_sz = 1460;
    a->tx_rng = 5;
    b->rx_rng = 5;
    b->expect = 200000;
    b->to_send = 100000;
    b->rec_sz = 1000;
    b->tx_rng = 6;
    a->rx_rng = 6;
    a->expect = 100000;
    app_pump(a);
    app_pump(b);
    g_x = a;
    g_y = b;
    CHECK(simwire_run(&W, done_transfer, NULL, 30 * SIMWIRE_S));
    CHECK(!a->rx_bad && !b->rx_bad);
    CHECK(vfw_tcp_mss(a->c) == 1460);
    uint32_t lip;
    vfw_tcp_conn_addr(a->c, &lip, NULL, NULL, NULL);
    CHECK(lip == IP_A);
    /* a new conn from B reaches A's new address (ARP answered with the new
     * MAC) and gets the new MSS */
    struct app *b2 = &PB.apps[PB.napps++];
    b2->p = &PB;
    int err;
    CHECK(vfw_tcp_connect(PB.s, ip2, PORT, 0, &CB, b2, &err) != NULL);
    CHECK(simwire_run(&W, done_connected, b2, 10 * SIMWIRE_S));
    CHECK(b2->connected_err == 0);
    simwire_advance(&W, 10 * SIMWIRE_MS);
    CHECK(PA.napps == 2);
    struct app *a2 = &PA.apps[1];
    vfw_tcp_conn_addr(a2->c, &lip, NULL, NULL, NULL);
    CHECK(lip == ip2);
    CHECK(vfw_tcp_mss(a2->c) == 1460);    /* B's MSS bounds it */
    /* frames to the old address for an unknown tuple are not A's */
    uint8_t f[128];
    size_t n = tcp_frame(f, MAC_A, MAC_B, IP_B, IP_A, 1234, PORT, 1, 0,
                         VFW_TH_SYN, 1000, NULL, 0, NULL, 0);
    CHECK(vfw_tcp_wants(PA.s, f, n) == 0);
    uint16_t lp, rp;
    vfw_tcp_conn_addr(a->c, NULL, &lp, NULL, &rp);
    n = tcp_frame(f, MAC_A, MAC_B, IP_B, IP_A, rp, lp, 1, 0, VFW_TH_ACK,
                  1000, NULL, 0, NULL, 0);
    CHECK(vfw_tcp_wants(PA.s, f, n) == 1);          /* old conn */
    n = tcp_frame(f, mac2, MAC_B, IP_B, ip2, 1234, PORT, 1, 0, VFW_TH_SYN,
                  1000, NULL, 0, NULL, 0);
    CHECK(vfw_tcp_wants(PA.s, f, n) == 1);          /* listener, new addr */
    teardown();
    return 0;
}

/* vfw_tcp_wants: listeners and conns (TIME_WAIT too) only; never reads past
 * len (every prefix is tested in an exact-size heap copy under ASan).
 * vfw_tcp_wants_kind: SETUP for a listener's or a handshake's frame, CONN
 * for a synchronized conn's (the device's queue admission, issue 33). */
static int t_wants(void)
{
    setup(42);
    CHECK(vfw_tcp_listen(PB.s, PORT, cb_accept, &PB) == 0);
    uint8_t f[128];
    size_t n = tcp_frame(f, MAC_B, MAC_A, IP_A, IP_B, 40000, PORT, 1, 0,
                         VFW_TH_SYN, 1000, NULL, 0, NULL, 0);
    CHECK(vfw_tcp_wants(PB.s, f, n) == 1);
    CHECK(vfw_tcp_wants_kind(PB.s, f, n) == VFW_TCP_WANT_SETUP);
    for (size_t k = 0; k <= n; k++) {
        uint8_t *cp = malloc(k ? k : 1);
        memcpy(cp, f, k);
        int w = vfw_tcp_wants(PB.s, cp, k);
        free(cp);
        CHECK(w == (k >= 14 + 20 + 4));
    }
    CHECK(vfw_tcp_wants(PB.s, NULL, 0) == 0);
    CHECK(vfw_tcp_wants_kind(PB.s, NULL, 0) == VFW_TCP_WANT_NO);
    uint8_t g[128];
    memcpy(g, f, n);
    g[0] = 0x04;                                   /* another MAC */
    CHECK(vfw_tcp_wants(PB.s, g, n) == 0);
    memcpy(g, f, n);
    vfw_st_be32(g + 30, IP_C);                       /* another IP */
    CHECK(vfw_tcp_wants(PB.s, g, n) == 0);
    memcpy(g, f, n);
    vfw_st_be16(g + 36, PORT + 1);                   /* no listener */
    CHECK(vfw_tcp_wants(PB.s, g, n) == 0);
    memcpy(g, f, n);
    g[23] = 17;                                    /* UDP */
    CHECK(vfw_tcp_wants(PB.s, g, n) == 0);
    memcpy(g, f, n);
    vfw_st_be16(g + 20, 0x0010);                     /* a later fragment */
    CHECK(vfw_tcp_wants(PB.s, g, n) == 0);
    vfw_st_be16(g + 20, 0x2000);                     /* first fragment, MF */
    CHECK(vfw_tcp_wants(PB.s, g, n) == 1);
    memcpy(g, f, n);
    g[14] = 0x44;                                  /* IHL 4 */
    CHECK(vfw_tcp_wants(PB.s, g, n) == 0);
    g[14] = 0x4f;                                  /* IHL 15 > frame */
    CHECK(vfw_tcp_wants(PB.s, g, n) == 0);
    /* 802.1Q tagged: the netdev's (the device strips port VLANs first) */
    memcpy(g, f, 12);
    vfw_st_be16(g + 12, 0x8100);
    vfw_st_be16(g + 14, 5);
    memcpy(g + 16, f + 12, n - 12);
    CHECK(vfw_tcp_wants(PB.s, g, n + 4) == 0);
    n = arp_frame(g, MAC_A, IP_A, IP_B);
    CHECK(vfw_tcp_wants(PB.s, g, n) == 0);
    /* a connection, then its TIME_WAIT (the active closer, A) */
    struct app *a = &PA.apps[PA.napps++];
    a->p = &PA;
    int err;
    CHECK(vfw_tcp_connect(PA.s, IP_B, PORT, 40001, &CB, a, &err) != NULL);
    n = tcp_frame(f, MAC_A, MAC_B, IP_B, IP_A, PORT, 40001, 1, 0, VFW_TH_ACK,
                  1000, NULL, 0, NULL, 0);
    CHECK(vfw_tcp_wants_kind(PA.s, f, n) == VFW_TCP_WANT_SETUP); /* SYN_SENT */
    CHECK(simwire_run(&W, done_connected, a, 10 * SIMWIRE_S));
    simwire_advance(&W, SIMWIRE_MS);
    CHECK(vfw_tcp_wants(PA.s, f, n) == 1);
    CHECK(vfw_tcp_wants_kind(PA.s, f, n) == VFW_TCP_WANT_CONN);
    n = tcp_frame(g, MAC_A, MAC_B, IP_B, IP_A, PORT, 40002, 1, 0, VFW_TH_ACK,
                  1000, NULL, 0, NULL, 0);
    CHECK(vfw_tcp_wants(PA.s, g, n) == 0);
    CHECK(vfw_tcp_wants_kind(PA.s, g, n) == VFW_TCP_WANT_NO);
    struct app *b = &PB.apps[0];
    b->close_on_eof = true;
    a->close_after_send = true;
    app_pump(a);
    g_x = a;
    g_y = b;
    CHECK(simwire_run(&W, done_closed_both, NULL, 10 * SIMWIRE_S));
    CHECK(vfw_tcp_active_conns(PA.s) == 0);
    n = tcp_frame(f, MAC_A, MAC_B, IP_B, IP_A, PORT, 40001, 1, 0, VFW_TH_ACK,
                  1000, NULL, 0, NULL, 0);
    CHECK(vfw_tcp_wants(PA.s, f, n) == 1);         /* TIME_WAIT */
    CHECK(vfw_tcp_wants_kind(PA.s, f, n) == VFW_TCP_WANT_CONN);
    teardown();
    return 0;
}

/* --------------------------------------------------- SYN flood (issue 33) */

static const uint8_t MAC_F[6] = {0x02, 0, 0, 0, 0, 0x0f};   /* the flooder */

/* SYN number i of a flood at B's port: a different source address every
 * SYN (65000 of them), a different source port every 7. */
static void flood_syn(struct vfw_tcp_stack *s, uint16_t port, unsigned i)
{
    uint8_t f[128];
    uint32_t sip = 0x0a090000u + 1 + (i * 40503u) % 65000u;
    uint16_t sport = (uint16_t)(1024 + (i / 7) % 60000);
    size_t n = tcp_frame(f, MAC_B, MAC_F, sip, IP_B, sport, port,
                         i * 2654435761u, 0, VFW_TH_SYN, 65535, NULL, 0,
                         NULL, 0);
    vfw_tcp_input(s, f, n);
}

/* B, sized like a function's stack (1024 conns of 256 KiB + 256 KiB),
 * receives a bulk transfer from A on a connection its listener accepted
 * while 5000 SYNs from 5000 addresses reach that listener. (a) B holds
 * the buffers of the one connection only and at most the default backlog
 * of half-open ones; (b) the transfer goes on during the flood and
 * completes intact; (c) 2 s after it, less than the 63 s a half-open
 * connection lives, a new connection is accepted. */
static int t_syn_flood(void)
{
    struct vfw_tcp_config ca = cfg_for(0), cb = cfg_for(1);
    cb.max_conns = 1024;
    setup_cfg(33, &ca, &cb);
    W.rate_bps = 1000000000ull;
    W.delay_ns = 100000;
    CHECK(vfw_tcp_listen(PB.s, PORT, cb_accept, &PB) == 0);
    struct app *a = client(PORT);
    CHECK(simwire_run(&W, done_connected, a, 10 * SIMWIRE_S));
    CHECK(a->connected_err == 0);
    simwire_advance(&W, SIMWIRE_MS);
    CHECK(PB.napps == 1);
    struct app *b = &PB.apps[0];
    struct vfw_tcp_stats st0, st;
    vfw_tcp_stats(PB.s, &st0);
    CHECK(st0.half_open == 0 && st0.buf_bytes > 0);
    a->tx_rng = b->rx_rng = 33;
    a->rec_sz = 1460;
    a->to_send = b->expect = 32u << 20;
    app_pump(a);
    uint64_t rx_before = b->received;
    for (unsigned i = 0; i < 5000; i++) {
        flood_syn(PB.s, PORT, i);
        if ((i + 1) % 16)
            continue;
        simwire_advance(&W, 100000);
        vfw_tcp_stats(PB.s, &st);
        CHECK(st.half_open <= VFW_TCP_DEF_BACKLOG);           /* (a) */
        CHECK(st.buf_bytes == st0.buf_bytes);                 /* (a) */
    }
    CHECK(b->received > rx_before + (1u << 20));              /* (b) */
    g_x = a;
    g_y = b;
    CHECK(simwire_run(&W, done_transfer, NULL, 30 * SIMWIRE_S));
    CHECK(b->received == b->expect && !b->rx_bad);           /* (b) */
    simwire_advance(&W, 2 * SIMWIRE_S);
    struct app *n = client(PORT);                             /* (c) */
    CHECK(simwire_run(&W, done_connected, n, 10 * SIMWIRE_S));
    CHECK(n->connected_err == 0);
    simwire_advance(&W, SIMWIRE_MS);
    CHECK(PB.napps == 2 && n->closed_n == 0);
    teardown();
    return 0;
}

/* A stack driven by hand: frames out are parsed for the SYN-ACKs (our ISS
 * per peer port) and RSTs; the clock is g_hand_now. */
static uint64_t g_hand_now = 5 * SIMWIRE_S;
static uint32_t g_synack_iss[64];   /* by peer port - 2000 */
static unsigned g_synacks, g_rsts;
static uint64_t hand_now(void *o)
{
    (void)o;
    return g_hand_now;
}
static void hand_out(void *o, const uint8_t *f, size_t len)
{
    (void)o;
    if (len < 54 || vfw_ld_be16(f + 12) != 0x0800 || f[23] != 6)
        return;
    const uint8_t *th = f + 34;
    uint16_t dport = vfw_ld_be16(th + 2);
    if ((th[13] & (VFW_TH_SYN | VFW_TH_ACK)) == (VFW_TH_SYN | VFW_TH_ACK)) {
        g_synacks++;
        if (dport >= 2000 && dport < 2064)
            g_synack_iss[dport - 2000] = vfw_ld_be32(th + 4);
    }
    if (th[13] & VFW_TH_RST)
        g_rsts++;
}

static int g_accepts;
static const struct vfw_tcp_cb *accept_count(struct vfw_tcp_conn *c,
                                             void *u, void **cu)
{
    (void)c;
    (void)u;
    *cu = NULL;
    g_accepts++;
    return &CB;
}

/* Peer k (port 2000 + k, its own address) sends its SYN / completes the
 * handshake with the ACK of our SYN-ACK. */
static void hand_syn(struct vfw_tcp_stack *s, uint16_t port, unsigned k)
{
    uint8_t f[128];
    size_t n = tcp_frame(f, MAC_B, MAC_A, IP_A + 16 + k,
                         IP_B, (uint16_t)(2000 + k), port, 1000 * k, 0,
                         VFW_TH_SYN, 65535, NULL, 0, NULL, 0);
    vfw_tcp_input(s, f, n);
}
static void hand_ack(struct vfw_tcp_stack *s, uint16_t port, unsigned k)
{
    uint8_t f[128];
    size_t n = tcp_frame(f, MAC_B, MAC_A, IP_A + 16 + k,
                         IP_B, (uint16_t)(2000 + k), port, 1000 * k + 1,
                         g_synack_iss[k] + 1, VFW_TH_ACK, 65535, NULL, 0,
                         NULL, 0);
    vfw_tcp_input(s, f, n);
}

static struct vfw_tcp_stack *hand_stack(uint32_t max_conns)
{
    struct vfw_tcp_env env = {.opaque = NULL, .frame_out = hand_out,
                              .now_ns = hand_now};
    struct vfw_tcp_config c = cfg_for(1);
    c.max_conns = max_conns;
    memset(g_synack_iss, 0, sizeof(g_synack_iss));
    g_synacks = g_rsts = 0;
    g_accepts = 0;
    return vfw_tcp_stack_new(&env, &c);
}

/* The backlog bounds a listener's half-open conns; a SYN beyond it drops
 * the oldest one (silently), whose late ACK then gets a RST; the newest
 * ones complete. Half-open conns hold no buffers; a completed one does. */
static int t_syn_backlog(void)
{
    struct vfw_tcp_stack *s = hand_stack(64);
    CHECK(s);
    CHECK(vfw_tcp_listen_backlog(s, PORT, 0, accept_count, NULL) ==
          -EINVAL);
    CHECK(vfw_tcp_listen_backlog(s, PORT, 4, accept_count, NULL) == 0);
    struct vfw_tcp_stats st;
    for (unsigned k = 0; k < 10; k++)
        hand_syn(s, PORT, k);
    vfw_tcp_stats(s, &st);
    CHECK(g_synacks == 10 && g_rsts == 0);
    CHECK(st.half_open == 4 && st.syn_dropped == 6 && st.buf_bytes == 0);
    /* a half-open conn's frames are SETUP for the device's queue */
    {
        uint8_t f[128];
        size_t n = tcp_frame(f, MAC_B, MAC_A, IP_A + 16 + 9, IP_B, 2009,
                             PORT, 9001, g_synack_iss[9] + 1, VFW_TH_ACK,
                             65535, NULL, 0, NULL, 0);
        CHECK(vfw_tcp_wants_kind(s, f, n) == VFW_TCP_WANT_SETUP);
    }
    /* peers 0..5 were dropped: their ACK meets the listener → RST */
    hand_ack(s, PORT, 0);
    CHECK(g_rsts == 1 && g_accepts == 0);
    /* peers 6..9 complete; each one gets its buffers then */
    for (unsigned k = 6; k < 10; k++)
        hand_ack(s, PORT, k);
    vfw_tcp_stats(s, &st);
    CHECK(g_accepts == 4 && g_rsts == 1);
    CHECK(st.half_open == 0 && st.buf_bytes == 4ull * (256 + 256 + 64) * 1024);
    /* a retransmitted SYN of a half-open conn makes no second one */
    hand_syn(s, PORT, 20);
    hand_syn(s, PORT, 20);
    vfw_tcp_stats(s, &st);
    CHECK(st.half_open == 1 && g_synacks == 12);
    vfw_tcp_stack_free(s);
    return 0;
}

/* At max_conns a half-open conn yields its slot to a newer SYN (of any
 * listener) and to an active open; established conns never do: with the
 * table full of them a SYN is refused (RST) and counted. */
static int t_syn_table_full(void)
{
    struct vfw_tcp_stack *s = hand_stack(3);
    CHECK(s);
    CHECK(vfw_tcp_listen(s, PORT, accept_count, NULL) == 0);
    CHECK(vfw_tcp_listen(s, PORT + 1, accept_count, NULL) == 0);
    struct vfw_tcp_stats st;
    hand_syn(s, PORT, 0);
    hand_syn(s, PORT, 1);
    hand_syn(s, PORT + 1, 2);
    hand_syn(s, PORT + 1, 3);          /* table full: drops peer 0's */
    vfw_tcp_stats(s, &st);
    CHECK(st.half_open == 3 && st.syn_dropped == 1 && st.conn_limit == 0);
    /* the function's own connect takes the next oldest slot (peer 1's) */
    CHECK(vfw_tcp_neigh_set(s, IP_A, MAC_A) == 0);
    struct app a = {0};
    int err = 1;
    struct vfw_tcp_conn *c = vfw_tcp_connect(s, IP_A, 9, 0, &CB, &a, &err);
    CHECK(c && err == 0);
    vfw_tcp_stats(s, &st);
    CHECK(st.half_open == 2 && st.syn_dropped == 2);
    /* peers 2 and 3 complete: three conns, none half-open */
    hand_ack(s, PORT + 1, 2);
    hand_ack(s, PORT + 1, 3);
    CHECK(g_accepts == 2);
    vfw_tcp_stats(s, &st);
    CHECK(st.half_open == 0);
    /* now a SYN finds no half-open conn to displace: refused */
    unsigned rsts = g_rsts;
    hand_syn(s, PORT, 4);
    vfw_tcp_stats(s, &st);
    CHECK(st.conn_limit == 1 && g_rsts == rsts + 1 && st.syn_dropped == 2);
    vfw_tcp_abort(c);
    vfw_tcp_stack_free(s);
    return 0;
}

/* A half-open conn lives through tun.syn_retries SYN-ACK retransmissions
 * (1 + 2 + 4 + 8 + 16 + 32 s by default), then its state is freed;
 * unlisten drops the listener's half-open conns at once and a listener
 * on the port again starts from an empty backlog. */
static int t_syn_timeout_unlisten(void)
{
    struct vfw_tcp_stack *s = hand_stack(64);
    CHECK(s);
    CHECK(vfw_tcp_listen_backlog(s, PORT, 2, accept_count, NULL) == 0);
    struct vfw_tcp_stats st;
    hand_syn(s, PORT, 0);
    hand_syn(s, PORT, 1);
    uint64_t t0 = g_hand_now;
    for (int i = 0; i < 200 && vfw_tcp_next_timer_ns(s) != UINT64_MAX; i++) {
        g_hand_now = vfw_tcp_next_timer_ns(s);
        vfw_tcp_poll(s);
    }
    vfw_tcp_stats(s, &st);
    CHECK(st.half_open == 0 && st.timeouts == 2);
    CHECK(g_synacks == 2 + 2 * 5);         /* 5 retransmissions each */
    CHECK(g_hand_now - t0 == 63 * SIMWIRE_S);
    /* a new SYN is answered as ever */
    hand_syn(s, PORT, 2);
    hand_syn(s, PORT, 3);
    vfw_tcp_stats(s, &st);
    CHECK(st.half_open == 2 && st.syn_dropped == 0);
    vfw_tcp_unlisten(s, PORT);
    vfw_tcp_stats(s, &st);
    CHECK(st.half_open == 0 && vfw_tcp_next_timer_ns(s) == UINT64_MAX);
    /* the late ACK finds neither conn nor listener: RST */
    unsigned rsts = g_rsts;
    hand_ack(s, PORT, 2);
    CHECK(g_rsts == rsts + 1 && g_accepts == 0);
    CHECK(vfw_tcp_listen_backlog(s, PORT, 1, accept_count, NULL) == 0);
    hand_syn(s, PORT, 4);
    hand_syn(s, PORT, 5);
    vfw_tcp_stats(s, &st);
    CHECK(st.half_open == 1 && st.syn_dropped == 1);
    hand_ack(s, PORT, 5);
    CHECK(g_accepts == 1);
    vfw_tcp_stack_free(s);
    return 0;
}

static const struct unit_test TESTS[] = {
    {"handshake", t_handshake},
    {"bulk_sizes", t_bulk_sizes},
    {"bulk_small_records", t_bulk_small_records},
    {"bulk_lossy", t_bulk_lossy},
    {"bulk_heavy_loss", t_bulk_heavy_loss},
    {"fast_retransmit", t_fast_retransmit},
    {"backpressure", t_backpressure},
    {"zero_window", t_zero_window},
    {"half_close", t_half_close},
    {"abort_rst", t_abort_rst},
    {"refused", t_refused},
    {"timeouts", t_timeouts},
    {"max_conns", t_max_conns},
    {"time_wait", t_time_wait},
    {"delayed_ack", t_delayed_ack},
    {"many_conns", t_many_conns},
    {"malformed", t_malformed},
    {"config", t_config},
    {"pcap", t_pcap},
    {"arp_passive", t_arp_passive},
    {"set_addr", t_set_addr},
    {"wants", t_wants},
    {"syn_flood", t_syn_flood},
    {"syn_backlog", t_syn_backlog},
    {"syn_table_full", t_syn_table_full},
    {"syn_timeout_unlisten", t_syn_timeout_unlisten},
};

static void cleanup_after_fail(void)
{
    if (PA.s || PB.s)
        teardown();
}

int main(int argc, char **argv)
{
    return run_tests("tcp", TESTS, sizeof(TESTS) / sizeof(TESTS[0]), argc,
                     argv, cleanup_after_fail);
}
