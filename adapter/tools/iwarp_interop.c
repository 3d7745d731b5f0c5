/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * iwarp_interop.c - the iWARP engine on the adapter's TCP, attached to a
 * TAP device, as an MPA responder for a Linux-socket peer
 * (tools/iwarp_interop_peer.py). The engine advertises an MR (STag and
 * address in the MPA Reply private data); the peer RDMA-Writes a pattern
 * into it, RDMA-Reads part of it back, and Sends "done <fnv32>"; the engine
 * checks the MR against the checksum and Sends back "ok <fnv32>" plus a
 * 5000-byte message the peer verifies. Exit 0 on success.
 *   iwarp_interop --tap NAME --ip A.B.C.D [--port N] [--pcap F] [--timeout S]
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tapdev.h"
#include "vfw_engine.h"
#include "vfw_iwarp_tcp.h"

#define MEM_BASE 0x200000ull
#define MEMSZ    (1u << 20)
#define WIN      (MEM_BASE + 4096)     /* the advertised window */
#define WINSZ    (256u * 1024)

struct ctx {
    struct vfw_engine *e;
    uint8_t mem[MEMSZ];
    uint32_t pd, cq, qp, mr, win;
    int established, closed, verified, sent_reply, failed;
    char msg[256];
};
static struct ctx X;

static int dma_rd(void *o, uint16_t f, uint64_t a, void *b, size_t n)
{
    struct ctx *x = o;
    (void)f;
    if (a < MEM_BASE || a - MEM_BASE > MEMSZ || n > MEMSZ - (a - MEM_BASE))
        return -EFAULT;
    memcpy(b, x->mem + (a - MEM_BASE), n);
    return 0;
}
static int dma_wr(void *o, uint16_t f, uint64_t a, const void *b, size_t n)
{
    struct ctx *x = o;
    (void)f;
    if (a < MEM_BASE || a - MEM_BASE > MEMSZ || n > MEMSZ - (a - MEM_BASE))
        return -EFAULT;
    memcpy(x->mem + (a - MEM_BASE), b, n);
    return 0;
}
static uint64_t now(void *o) { (void)o; return vfw_tapdev_now(); }
static uint32_t fnv(const uint8_t *d, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ d[i]) * 16777619u;
    return h;
}

static void post_recv(struct ctx *x, uint64_t id)
{
    struct vfw_recv_wr r = { .wr_id = id, .num_sge = 1,
        .sge = { { x->mr, 4096, MEM_BASE + 512 * 1024 + id * 4096 } } };
    vfw_post_recv(x->e, x->qp, &r);
}

static void cm(void *o, const struct vfw_cm_event *ev)
{
    struct ctx *x = o;
    printf("iwarp_interop: cm event %d cep %u qp %u err %d pdata %u B\n",
           ev->type, ev->cep_id, ev->qp_id, ev->err, ev->pdata_len);
    if (ev->type == VFW_CM_CONNECT_REQUEST) {
        printf("iwarp_interop: MPA rev %u request, peer IRD %u ORD %u, "
               "pdata \"%.*s\"\n", ev->mpa_rev, ev->ird, ev->ord,
               (int)ev->pdata_len, (const char *)ev->pdata);
        struct vfw_conn_param p = { .mpa_rev = 2, .p2p = 1, .crc = 1,
                                    .ord = 4, .ird = 4 };
        p.pdata_len = (uint16_t)snprintf((char *)p.pdata, 200,
            "vfw stag=%08x addr=%016llx len=%u", x->win,
            (unsigned long long)WIN, WINSZ);
        if (vfw_accept(x->e, ev->cep_id, x->qp, &p))
            x->failed = 1;
    } else if (ev->type == VFW_CM_ESTABLISHED) {
        x->established = 1;
    } else if (ev->type == VFW_CM_CLOSED || ev->type == VFW_CM_TERMINATE ||
               ev->type == VFW_CM_CONNECT_ERROR) {
        x->closed = 1;
        if (ev->type != VFW_CM_CLOSED)
            x->failed = 1;
    }
}

static int done(void *o)
{
    struct ctx *x = o;
    struct vfw_cqe c[16];
    int n = vfw_cq_poll(x->e, x->cq, c, 16);
    for (int i = 0; i < n; i++) {
        if (c[i].status != VFW_WC_SUCCESS) {
            printf("iwarp_interop: CQE wr %llu status %u\n",
                   (unsigned long long)c[i].wr_id, c[i].status);
            if (c[i].status != VFW_WC_WR_FLUSH_ERR)
                x->failed = 1;
            continue;
        }
        if (c[i].opcode != VFW_WC_RECV)
            continue;
        const char *m = (const char *)x->mem + 512 * 1024 + c[i].wr_id * 4096;
        int len = (int)(c[i].byte_len < 200 ? c[i].byte_len : 200);
        printf("iwarp_interop: received Send %u B: \"%.*s\"\n", c[i].byte_len,
               len < 60 ? len : 60, m);
        unsigned want;
        if (sscanf(m, "done %x", &want) == 1) {
            uint32_t have = fnv(x->mem + (WIN - MEM_BASE), WINSZ);
            x->verified = have == want;
            printf("iwarp_interop: RDMA WRITE window fnv32 %08x, peer says "
                   "%08x: %s\n", have, want, x->verified ? "MATCH" : "MISMATCH");
            if (!x->verified)
                x->failed = 1;
            /* reply: "ok <fnv>" then a 5000-byte patterned message */
            char *r = (char *)x->mem + 768 * 1024;
            int rl = snprintf(r, 64, "ok %08x", have);
            uint8_t *big = x->mem + 800 * 1024;
            for (int k = 0; k < 5000; k++)
                big[k] = (uint8_t)(k * 7 + 3);
            struct vfw_send_wr s = { .wr_id = 1, .opcode = VFW_WR_SEND,
                .flags = VFW_WR_F_SIGNALED, .num_sge = 1,
                .sge = { { x->mr, (uint32_t)rl, MEM_BASE + 768 * 1024 } } };
            vfw_post_send(x->e, x->qp, &s);
            s.wr_id = 2;
            s.sge[0] = (struct vfw_sge){ x->mr, 5000, MEM_BASE + 800 * 1024 };
            vfw_post_send(x->e, x->qp, &s);
            x->sent_reply = 1;
        }
    }
    return x->closed;
}

int main(int argc, char **argv)
{
    const char *tap = "vfwt0", *pcap = NULL;
    uint32_t ip = 0, timeout = 30;
    uint16_t port = 7174;
    static const struct option lo[] = { {"tap", 1, 0, 't'}, {"ip", 1, 0, 'i'},
        {"port", 1, 0, 'p'}, {"pcap", 1, 0, 'w'}, {"timeout", 1, 0, 'T'},
        {0, 0, 0, 0} };
    int ch;
    while ((ch = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        struct in_addr a;
        switch (ch) {
        case 't': tap = optarg; break;
        case 'i': if (inet_pton(AF_INET, optarg, &a) != 1) return 2;
                  ip = ntohl(a.s_addr); break;
        case 'p': port = (uint16_t)strtoul(optarg, NULL, 0); break;
        case 'w': pcap = optarg; break;
        case 'T': timeout = (uint32_t)strtoul(optarg, NULL, 0); break;
        default: return 2;
        }
    }
    if (!ip || timeout > 600)
        return 2;
    struct vfw_tapdev t;
    int r = vfw_tapdev_open(&t, tap);
    if (r) {
        fprintf(stderr, "iwarp_interop: tap %s: %s\n", tap, strerror(-r));
        return 2;
    }
    if (pcap)
        t.pcap = vfw_pcap_open(pcap, 0);
    struct vfw_tcp_config cfg = { .mac = { 0x02, 0x77, (uint8_t)(ip >> 24),
        (uint8_t)(ip >> 16), (uint8_t)(ip >> 8), (uint8_t)ip }, .ip = ip,
        .mtu = 1500, .rcv_buf = 256 * 1024, .snd_buf = 256 * 1024,
        .max_conns = 4 };
    struct vfw_tcp_env env = vfw_tapdev_env(&t);
    struct vfw_tcp_stack *s = vfw_tcp_stack_new(&env, &cfg);
    vfw_tapdev_attach_tcp(&t, s);
    struct vfw_engine_ops ops = { .opaque = &X, .dma_read = dma_rd,
        .dma_write = dma_wr, .cm_event = cm, .now_ns = now };
    struct vfw_engine_config ec = { .func_id = 1 };
    X.e = vfw_engine_new(&ops, &ec);
    vfw_pd_alloc(X.e, &X.pd);
    vfw_cq_create(X.e, 256, &X.cq);
    struct vfw_qp_attr qa = { .pd_id = X.pd, .send_cq = X.cq,
        .recv_cq = X.cq, .sq_depth = 32, .rq_depth = 32, .ord = 4, .ird = 4,
        .max_sge = 2 };
    vfw_qp_create(X.e, &qa, &X.qp);
    vfw_mr_reg(X.e, X.pd, MEM_BASE, MEMSZ, VFW_ACC_LOCAL_WRITE, &X.mr);
    vfw_mr_reg(X.e, X.pd, WIN, WINSZ, VFW_ACC_LOCAL_WRITE |
               VFW_ACC_REMOTE_WRITE | VFW_ACC_REMOTE_READ, &X.win);
    for (uint64_t i = 0; i < 8; i++)
        post_recv(&X, i);
    r = vfw_iwarp_tcp_listen(X.e, s, port);
    printf("iwarp_interop: engine %s:%u listening (MR stag %08x)\n",
           inet_ntoa((struct in_addr){ htonl(ip) }), port, X.win);
    fflush(stdout);
    r = vfw_tapdev_run(&t, done, &X, (uint64_t)timeout * 1000000000ull);
    vfw_tapdev_run(&t, NULL, NULL, 200000000ull);
    struct vfw_engine_stats st;
    vfw_engine_stats(X.e, &st);
    printf("iwarp_interop: rx_fpdus=%llu tx_fpdus=%llu crc_errors=%llu "
           "terms_sent=%llu terms_rcvd=%llu rx_bytes=%llu\n",
           (unsigned long long)st.rx_fpdus, (unsigned long long)st.tx_fpdus,
           (unsigned long long)st.crc_errors, (unsigned long long)st.terms_sent,
           (unsigned long long)st.terms_rcvd, (unsigned long long)st.rx_bytes);
    int ok = r == 0 && X.established && X.verified && X.sent_reply &&
             !X.failed && st.crc_errors == 0;
    printf("iwarp_interop: %s\n", ok ? "PASS" : "FAIL");
    vfw_engine_free(X.e);
    vfw_tcp_stack_free(s);
    vfw_pcap_close(t.pcap);
    vfw_tapdev_close(&t);
    return ok ? 0 : 1;
}
