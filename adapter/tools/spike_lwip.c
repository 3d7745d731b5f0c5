/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * spike_lwip.c - the measured spike behind docs/adapter-tcp.md: Debian's
 * lwIP (liblwip-dev, raw API, single thread, no tcpip thread) against the
 * purpose-built vfw_tcp, moving the same bytes over the same in-memory wire
 * (tests/simwire.h, no loss). lwIP cannot be instantiated twice in one
 * process (global state), and two netifs of one lwIP short-circuit to its
 * loopback, so the pair is lwIP <-> vfw_tcp, each direction, and each
 * stack's CPU time is measured around its own calls (input, timers, app).
 * A vfw_tcp <-> vfw_tcp pair over the same wire is printed for reference.
 *
 *   spike_lwip [MB]     (default 64 MB per direction)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lwip/init.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/tcp.h"
#include "lwip/timeouts.h"
#include "netif/etharp.h"
#include "netif/ethernet.h"

#include "simwire.h"
#include "vfw_tcp.h"

#define VFW_IP 0x0a000002u
static uint64_t g_total;

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint8_t pat(uint64_t i)
{
    return (uint8_t)(i * 131u + (i >> 11));
}

/* CPU accounting: which stack is running. */
static uint64_t cpu_acc[2], cpu_t0;
static int cpu_who = -1;
static void cpu_enter(int who)
{
    cpu_who = who;
    cpu_t0 = cpu_ns();
}
static void cpu_leave(void)
{
    cpu_acc[cpu_who] += cpu_ns() - cpu_t0;
    cpu_who = -1;
}

static struct simwire W;

/* ------------------------------------------------------------- lwIP side */
static struct netif nif;
static uint64_t l_sent, l_rcvd;
static int l_bad;
static struct tcp_pcb *l_pcb;
static uint8_t l_buf[65536];

static err_t l_linkout(struct netif *n, struct pbuf *p)
{
    (void)n;
    static uint8_t f[2048];
    u16_t len = pbuf_copy_partial(p, f, sizeof(f), 0);
    simwire_send(&W, 0, f, len);
    return ERR_OK;
}

static err_t l_nif_init(struct netif *n)
{
    n->name[0] = 'v';
    n->name[1] = 'w';
    n->output = etharp_output;
    n->linkoutput = l_linkout;
    n->mtu = 1500;
    n->hwaddr_len = 6;
    static const uint8_t mac[6] = {0x02, 0, 0, 0, 0, 0x0a};
    memcpy(n->hwaddr, mac, 6);
    n->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP |
               NETIF_FLAG_ETHERNET | NETIF_FLAG_LINK_UP;
    return ERR_OK;
}

static void l_rx(void *o, const uint8_t *f, size_t len)
{
    (void)o;
    cpu_enter(0);
    struct pbuf *p = pbuf_alloc(PBUF_RAW, (u16_t)len, PBUF_RAM);
    if (p) {
        pbuf_take(p, f, (u16_t)len);
        if (nif.input(p, &nif) != ERR_OK)
            pbuf_free(p);
    }
    cpu_leave();
}

static uint64_t l_next(void *o)
{
    (void)o;
    return W.now + 100 * SIMWIRE_MS;  /* lwIP timers are on its own clock */
}

static void l_poll(void *o)
{
    (void)o;
    cpu_enter(0);
    sys_check_timeouts();
    cpu_leave();
}

static void l_pump(struct tcp_pcb *pcb)
{
    while (l_sent < g_total) {
        u16_t room = tcp_sndbuf(pcb);
        if (room < 1460 && g_total - l_sent > room)
            break;
        uint32_t n = 1460;
        if (n > g_total - l_sent)
            n = (uint32_t)(g_total - l_sent);
        for (uint32_t i = 0; i < n; i++)
            l_buf[i] = pat(l_sent + i);
        if (tcp_write(pcb, l_buf, (u16_t)n, TCP_WRITE_FLAG_COPY) != ERR_OK)
            break;
        l_sent += n;
    }
    tcp_output(pcb);
}

static err_t l_sent_cb(void *arg, struct tcp_pcb *pcb, u16_t len)
{
    (void)arg;
    (void)len;
    l_pump(pcb);
    return ERR_OK;
}

static err_t l_connected(void *arg, struct tcp_pcb *pcb, err_t err)
{
    (void)arg;
    if (err != ERR_OK)
        return err;
    tcp_sent(pcb, l_sent_cb);
    l_pump(pcb);
    return ERR_OK;
}

static err_t l_recv(void *arg, struct tcp_pcb *pcb, struct pbuf *p, err_t e)
{
    (void)arg;
    (void)e;
    if (!p)
        return ERR_OK;
    for (struct pbuf *q = p; q; q = q->next) {
        const uint8_t *d = q->payload;
        for (u16_t i = 0; i < q->len; i++)
            if (d[i] != pat(l_rcvd + i))
                l_bad = 1;
        l_rcvd += q->len;
    }
    tcp_recved(pcb, p->tot_len);
    pbuf_free(p);
    return ERR_OK;
}

static err_t l_accept(void *arg, struct tcp_pcb *pcb, err_t err)
{
    (void)arg;
    (void)err;
    l_pcb = pcb;
    tcp_recv(pcb, l_recv);
    return ERR_OK;
}

/* ------------------------------------------------------------ vfw side */
static struct vfw_tcp_stack *V;
static uint64_t v_sent, v_rcvd;
static int v_bad;
static struct vfw_tcp_conn *v_conn;

static void v_pump(struct vfw_tcp_conn *c)
{
    uint8_t b[1460];
    while (v_sent < g_total) {
        uint32_t n = vfw_tcp_mss(c);
        if (n > g_total - v_sent)
            n = (uint32_t)(g_total - v_sent);
        for (uint32_t i = 0; i < n; i++)
            b[i] = pat(v_sent + i);
        if (vfw_tcp_send_record(c, b, n))
            break;
        v_sent += n;
    }
}

static size_t v_recv(struct vfw_tcp_conn *c, const uint8_t *d, size_t n,
                     void *u)
{
    (void)c;
    (void)u;
    for (size_t i = 0; i < n; i++)
        if (d[i] != pat(v_rcvd + i))
            v_bad = 1;
    v_rcvd += n;
    return n;
}

static void v_connected(struct vfw_tcp_conn *c, int err, void *u)
{
    (void)u;
    if (!err) {
        v_conn = c;
        v_pump(c);
    }
}

static void v_writable(struct vfw_tcp_conn *c, void *u)
{
    (void)u;
    v_pump(c);
}

static void v_closed(struct vfw_tcp_conn *c, int e, void *u)
{
    (void)c;
    (void)e;
    (void)u;
}

static const struct vfw_tcp_cb VCB = {v_connected, v_recv, v_writable,
                                      v_closed};

static const struct vfw_tcp_cb *v_accept(struct vfw_tcp_conn *c, void *lu,
                                         void **cu)
{
    (void)lu;
    *cu = NULL;
    v_conn = c;
    return &VCB;
}

static void v_rx(void *o, const uint8_t *f, size_t len)
{
    cpu_enter(1);
    vfw_tcp_input(o, f, len);
    cpu_leave();
}

static uint64_t v_next(void *o)
{
    return vfw_tcp_next_timer_ns(o);
}

static void v_poll(void *o)
{
    cpu_enter(1);
    vfw_tcp_poll(o);
    cpu_leave();
}

static int done_l2v(void *x)
{
    (void)x;
    return v_rcvd >= g_total;
}

static int done_v2l(void *x)
{
    (void)x;
    return l_rcvd >= g_total;
}

static void report(const char *dir, uint64_t wall, uint64_t frames)
{
    double mb = (double)g_total / 1e6;
    printf("%-16s bytes=%llu wall=%.3fs frames=%llu  lwip_cpu=%.3fs "
           "(%.2f ns/B)  vfw_cpu=%.3fs (%.2f ns/B)  lwip/vfw=%.2f\n", dir,
           (unsigned long long)g_total, wall / 1e9,
           (unsigned long long)frames, cpu_acc[0] / 1e9,
           cpu_acc[0] / (mb * 1e6), cpu_acc[1] / 1e9,
           cpu_acc[1] / (mb * 1e6),
           cpu_acc[1] ? (double)cpu_acc[0] / (double)cpu_acc[1] : 0.0);
}

int main(int argc, char **argv)
{
    g_total = (uint64_t)(argc > 1 ? atoi(argv[1]) : 64) * 1000000ull;
    lwip_init();
    ip4_addr_t ip, mask, gw;
    IP4_ADDR(&ip, 10, 0, 0, 1);
    IP4_ADDR(&mask, 255, 255, 255, 0);
    IP4_ADDR(&gw, 0, 0, 0, 0);
    netif_add(&nif, &ip, &mask, &gw, NULL, l_nif_init, ethernet_input);
    netif_set_default(&nif);
    netif_set_up(&nif);
    netif_set_link_up(&nif);

    simwire_init(&W, 1);
    W.delay_ns = 20000;
    if (getenv("SPIKE_PCAP"))
        W.pcap = vfw_pcap_open(getenv("SPIKE_PCAP"), 0);
    struct vfw_tcp_env env = simwire_env(&W, 1);
    struct vfw_tcp_config cfg = {.mac = {0x02, 0, 0, 0, 0, 0x0b},
                                 .ip = VFW_IP, .mtu = 1500,
                                 .rcv_buf = 65535, .snd_buf = 65535,
                                 .max_conns = 4};
    V = vfw_tcp_stack_new(&env, &cfg);
    simwire_attach(&W, 0, NULL, l_rx, l_next, l_poll);
    simwire_attach(&W, 1, V, v_rx, v_next, v_poll);
    printf("spike: lwIP %s (Debian liblwip, raw API) vs vfw_tcp, 64 KiB "
           "windows/buffers, MSS 1460, no loss\n", LWIP_VERSION_STRING);

    /* lwIP -> vfw */
    vfw_tcp_listen(V, 5000, v_accept, NULL);
    struct tcp_pcb *pcb = tcp_new();
    ip_addr_t dst;
    IP_ADDR4(&dst, 10, 0, 0, 2);
    cpu_enter(0);
    tcp_connect(pcb, &dst, 5000, l_connected);
    cpu_leave();
    uint64_t t0 = wall_ns(), f0 = W.ep[0].sent + W.ep[1].sent;
    simwire_run(&W, done_l2v, NULL, 3600 * SIMWIRE_S);
    report("lwip->vfw", wall_ns() - t0, W.ep[0].sent + W.ep[1].sent - f0);
    if (v_bad || v_rcvd != g_total)
        printf("  DATA MISMATCH\n");
    uint64_t l2v_l = cpu_acc[0], l2v_v = cpu_acc[1];

    /* vfw -> lwIP */
    cpu_acc[0] = cpu_acc[1] = 0;
    struct tcp_pcb *lp = tcp_new();
    tcp_bind(lp, IP_ADDR_ANY, 6000);
    lp = tcp_listen(lp);
    tcp_accept(lp, l_accept);
    int err;
    cpu_enter(1);
    vfw_tcp_connect(V, 0x0a000001u, 6000, 0, &VCB, NULL, &err);
    cpu_leave();
    t0 = wall_ns();
    f0 = W.ep[0].sent + W.ep[1].sent;
    simwire_run(&W, done_v2l, NULL, 3600 * SIMWIRE_S);
    report("vfw->lwip", wall_ns() - t0, W.ep[0].sent + W.ep[1].sent - f0);
    if (l_bad || l_rcvd != g_total)
        printf("  DATA MISMATCH\n");
    printf("sender cpu ns/B: lwip %.2f vfw %.2f; receiver cpu ns/B: lwip "
           "%.2f vfw %.2f\n", l2v_l / (double)g_total,
           cpu_acc[1] / (double)g_total, cpu_acc[0] / (double)g_total,
           l2v_v / (double)g_total);
    vfw_tcp_stack_free(V);
    simwire_destroy(&W);
    return 0;
}
