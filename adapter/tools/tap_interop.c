/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tap_interop - run the adapter's TCP stack on a TAP device against Linux.
 * Run inside a network namespace (see tap_interop_test.sh).
 *
 *   tap_interop --tap vfwt0 --ip 192.0.2.2 --mode echo-server --port 17000 \
 *               --conns 3 [--pcap run.pcap] [--timeout 60]
 *   tap_interop --tap vfwt0 --ip 192.0.2.2 --mode client --peer 192.0.2.1 \
 *               --port 17001 --bytes 2000000 [--record 1000]
 *
 * Modes are a table (struct mode): an upper layer (MPA/DDP) adds its own
 * entry with setup/done/report functions and reuses tapdev.c unchanged.
 * Exit status 0 means the mode verified its exchange.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tapdev.h"
#include "vfw_pcap.h"
#include "vfw_tcp.h"

struct opts {
    const char *tap, *mode, *pcap;
    uint32_t ip, peer;
    uint16_t port;
    uint64_t bytes;
    uint32_t record, conns, timeout_s, mtu, loss_ppm;
};

/* ------------------------------------------------------------ modes */

/* Pattern shared with the Python peer: byte i = (i * 131 + (i >> 11)) & 255 */
static uint8_t pattern(uint64_t i)
{
    return (uint8_t)((i * 131u + (i >> 11)) & 0xff);
}

struct echo_conn {
    struct vfw_tcp_conn *c;
    uint64_t bytes;
    bool eof, done;
};

struct ctx {
    const struct opts *o;
    struct vfw_tcp_stack *s;
    /* echo-server */
    struct echo_conn ec[64];
    uint32_t nconns, nclosed;
    /* client */
    struct vfw_tcp_conn *cc;
    uint64_t sent, rcvd;
    bool bad, connected, closed, failed;
    int err;
};

static size_t echo_recv(struct vfw_tcp_conn *c, const uint8_t *d, size_t len,
                        void *user)
{
    struct echo_conn *e = user;
    size_t off = 0;
    uint16_t mss = vfw_tcp_mss(c);
    while (off < len) {
        size_t n = len - off < mss ? len - off : mss;
        if (vfw_tcp_send_record(c, d + off, n) != 0)
            break;                /* -EAGAIN: writable → recv_resume */
        off += n;
    }
    e->bytes += off;
    return off;
}

static void echo_writable(struct vfw_tcp_conn *c, void *user)
{
    (void)user;
    vfw_tcp_recv_resume(c);
}

static struct ctx *g_ctx;

static void echo_closed(struct vfw_tcp_conn *c, int err, void *user)
{
    struct echo_conn *e = user;
    if (err == 0 && !e->eof) {
        e->eof = true;           /* peer FIN, all data consumed: close */
        vfw_tcp_close(c);
    }
    if (!e->done) {
        e->done = true;
        g_ctx->nclosed++;
        fprintf(stderr, "tap_interop: conn closed err=%d echoed=%llu\n", err,
                (unsigned long long)e->bytes);
    }
}

static const struct vfw_tcp_cb ECHO_CB = {
    .recv = echo_recv,
    .writable = echo_writable,
    .closed = echo_closed,
};

static const struct vfw_tcp_cb *echo_accept(struct vfw_tcp_conn *c,
                                            void *lu, void **cu)
{
    struct ctx *x = lu;
    if (x->nconns >= 64)
        return NULL;
    struct echo_conn *e = &x->ec[x->nconns++];
    e->c = c;
    *cu = e;
    return &ECHO_CB;
}

static int echo_setup(struct ctx *x)
{
    return vfw_tcp_listen(x->s, x->o->port, echo_accept, x);
}

static int echo_done(void *p)
{
    struct ctx *x = p;
    /* The peer's FIN ends a connection for us, but our echo may still be in
     * flight (and need retransmission): stop only when it is all acked. */
    return x->nclosed >= x->o->conns && vfw_tcp_active_conns(x->s) == 0;
}

static int echo_report(struct ctx *x)
{
    uint64_t total = 0;
    for (uint32_t i = 0; i < x->nconns; i++)
        total += x->ec[i].bytes;
    printf("tap_interop: mode=echo-server conns=%u closed=%u echoed=%llu\n",
           x->nconns, x->nclosed, (unsigned long long)total);
    return x->nclosed >= x->o->conns ? 0 : 1;
}

/* client: send --bytes of the pattern, expect them echoed back, close. */
static void cl_pump(struct ctx *x)
{
    uint8_t buf[9000];
    if (!x->cc || !x->connected)
        return;
    while (x->sent < x->o->bytes) {
        uint64_t n = x->o->bytes - x->sent;
        uint32_t rec = x->o->record ? x->o->record : vfw_tcp_mss(x->cc);
        if (rec > vfw_tcp_mss(x->cc))
            rec = vfw_tcp_mss(x->cc);
        if (n > rec)
            n = rec;
        for (uint64_t i = 0; i < n; i++)
            buf[i] = pattern(x->sent + i);
        if (vfw_tcp_send_record(x->cc, buf, n) != 0)
            return;
        x->sent += n;
    }
}

static void cl_connected(struct vfw_tcp_conn *c, int err, void *user)
{
    struct ctx *x = user;
    (void)c;
    if (err) {
        x->failed = true;
        x->err = err;
        x->cc = NULL;
        return;
    }
    x->connected = true;
    fprintf(stderr, "tap_interop: connected mss=%u\n", vfw_tcp_mss(c));
    cl_pump(x);
}

static size_t cl_recv(struct vfw_tcp_conn *c, const uint8_t *d, size_t len,
                      void *user)
{
    struct ctx *x = user;
    for (size_t i = 0; i < len; i++)
        if (d[i] != pattern(x->rcvd + i))
            x->bad = true;
    x->rcvd += len;
    if (x->rcvd >= x->o->bytes && x->sent >= x->o->bytes)
        vfw_tcp_close(c);
    return len;
}

static void cl_writable(struct vfw_tcp_conn *c, void *user)
{
    (void)c;
    cl_pump(user);
}

static void cl_closed(struct vfw_tcp_conn *c, int err, void *user)
{
    struct ctx *x = user;
    x->err = err;
    if (err == 0 && x->rcvd < x->o->bytes)
        x->bad = true;            /* EOF before the echo was complete */
    if (err == 0 && x->cc && x->rcvd >= x->o->bytes) {
        /* peer closed after the echo; if we did not close yet, do now */
    }
    (void)c;
    x->closed = true;
}

static const struct vfw_tcp_cb CL_CB = {
    .connected = cl_connected,
    .recv = cl_recv,
    .writable = cl_writable,
    .closed = cl_closed,
};

static int cl_setup(struct ctx *x)
{
    int err = 0;
    x->cc = vfw_tcp_connect(x->s, x->o->peer, x->o->port, 0, &CL_CB, x, &err);
    return x->cc ? 0 : err;
}

static int cl_done(void *p)
{
    struct ctx *x = p;
    return x->failed || (x->closed && vfw_tcp_active_conns(x->s) == 0);
}

static int cl_report(struct ctx *x)
{
    printf("tap_interop: mode=client sent=%llu echoed=%llu verified=%s "
           "err=%d\n", (unsigned long long)x->sent,
           (unsigned long long)x->rcvd, x->bad ? "no" : "yes", x->err);
    return (!x->failed && x->closed && !x->bad && x->err == 0 &&
            x->rcvd == x->o->bytes) ? 0 : 1;
}

struct mode {
    const char *name;
    int (*setup)(struct ctx *x);
    int (*done)(void *x);
    int (*report)(struct ctx *x);
};

static const struct mode MODES[] = {
    {"echo-server", echo_setup, echo_done, echo_report},
    {"client", cl_setup, cl_done, cl_report},
};

/* ------------------------------------------------------------- main */

static void usage(void)
{
    fprintf(stderr,
            "usage: tap_interop --tap NAME --ip A.B.C.D --mode MODE "
            "[--peer A.B.C.D] [--port N]\n"
            "       [--bytes N] [--record N] [--conns N] [--pcap FILE] "
            "[--timeout S] [--mtu N]\n"
            "       [--loss-ppm N]  (drop frames both ways, seeded)\n"
            "modes: echo-server client\n");
}

static int parse_ip(const char *s, uint32_t *ip)
{
    struct in_addr a;
    if (inet_pton(AF_INET, s, &a) != 1)
        return -1;
    *ip = ntohl(a.s_addr);
    return 0;
}

int main(int argc, char **argv)
{
    struct opts o = {.tap = "vfwt0", .mode = "echo-server", .port = 17000,
                     .bytes = 1000000, .conns = 1, .timeout_s = 60,
                     .mtu = 1500};
    static const struct option lo[] = {
        {"tap", 1, 0, 't'}, {"ip", 1, 0, 'i'}, {"peer", 1, 0, 'P'},
        {"mode", 1, 0, 'm'}, {"port", 1, 0, 'p'}, {"bytes", 1, 0, 'b'},
        {"record", 1, 0, 'r'}, {"conns", 1, 0, 'c'}, {"pcap", 1, 0, 'w'},
        {"timeout", 1, 0, 'T'}, {"mtu", 1, 0, 'M'}, {"loss-ppm", 1, 0, 'L'},
        {0, 0, 0, 0}};
    int ch;
    bool have_ip = false;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        switch (ch) {
        case 't': o.tap = optarg; break;
        case 'i': if (parse_ip(optarg, &o.ip)) { usage(); return 2; }
                  have_ip = true; break;
        case 'P': if (parse_ip(optarg, &o.peer)) { usage(); return 2; }
                  break;
        case 'm': o.mode = optarg; break;
        case 'p': o.port = (uint16_t)strtoul(optarg, NULL, 0); break;
        case 'b': o.bytes = strtoull(optarg, NULL, 0); break;
        case 'r': o.record = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'c': o.conns = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'w': o.pcap = optarg; break;
        case 'T': o.timeout_s = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'M': o.mtu = (uint32_t)strtoul(optarg, NULL, 0); break;
        case 'L': o.loss_ppm = (uint32_t)strtoul(optarg, NULL, 0); break;
        default: usage(); return 2;
        }
    }
    const struct mode *m = NULL;
    for (size_t i = 0; i < sizeof(MODES) / sizeof(MODES[0]); i++)
        if (!strcmp(MODES[i].name, o.mode))
            m = &MODES[i];
    if (!m || !have_ip || o.conns > 64 || o.timeout_s > 3600) {
        usage();
        return 2;
    }
    struct vfw_tapdev t;
    int r = vfw_tapdev_open(&t, o.tap);
    if (r) {
        fprintf(stderr, "tap_interop: open tap %s: %s\n", o.tap, strerror(-r));
        return 2;
    }
    t.drop_ppm = o.loss_ppm > 500000 ? 500000 : o.loss_ppm;
    t.rng = o.ip ^ 0x5eed;
    if (o.pcap && !(t.pcap = vfw_pcap_open(o.pcap, 0))) {
        fprintf(stderr, "tap_interop: pcap %s: %s\n", o.pcap, strerror(errno));
        return 2;
    }
    /* Locally administered MAC derived from the IP. */
    struct vfw_tcp_config cfg = {
        .mac = {0x02, 0x76, (uint8_t)(o.ip >> 24), (uint8_t)(o.ip >> 16),
                (uint8_t)(o.ip >> 8), (uint8_t)o.ip},
        .ip = o.ip, .mtu = (uint16_t)o.mtu, .rcv_buf = 256 * 1024,
        .snd_buf = 256 * 1024, .max_conns = 64};
    struct vfw_tcp_env env = vfw_tapdev_env(&t);
    struct ctx x;
    memset(&x, 0, sizeof(x));
    x.o = &o;
    x.s = vfw_tcp_stack_new(&env, &cfg);
    g_ctx = &x;
    if (!x.s) {
        fprintf(stderr, "tap_interop: bad stack config\n");
        return 2;
    }
    vfw_tapdev_attach_tcp(&t, x.s);
    r = m->setup(&x);
    if (r) {
        fprintf(stderr, "tap_interop: setup: %s\n", strerror(-r));
        return 1;
    }
    r = vfw_tapdev_run(&t, m->done, &x, (uint64_t)o.timeout_s * 1000000000ull);
    if (r == 0) /* let the last ACKs / TIME_WAIT frames out */
        vfw_tapdev_run(&t, NULL, NULL, 200000000ull);
    else
        fprintf(stderr, "tap_interop: timed out after %u s\n", o.timeout_s);
    int rc = m->report(&x);
    struct vfw_tcp_stats st;
    vfw_tcp_stats(x.s, &st);
    printf("tap_interop: stats segs_in=%llu segs_out=%llu retrans=%llu "
           "dup_acks=%llu bad_csum=%llu rst_out=%llu ooo=%llu frames_in=%llu "
           "frames_out=%llu pcap_frames=%llu injected_drops=%llu\n",
           (unsigned long long)st.segs_in, (unsigned long long)st.segs_out,
           (unsigned long long)st.retrans, (unsigned long long)st.dup_acks,
           (unsigned long long)st.bad_csum, (unsigned long long)st.rst_out,
           (unsigned long long)st.ooo_queued,
           (unsigned long long)t.rx_frames, (unsigned long long)t.tx_frames,
           (unsigned long long)vfw_pcap_count(t.pcap),
           (unsigned long long)t.dropped);
    vfw_tcp_stack_free(x.s);
    vfw_pcap_close(t.pcap);
    vfw_tapdev_close(&t);
    return r ? 1 : rc;
}
