/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_tcp_input.c - frames from the wire into the offloaded TCP stack.
 *
 * Each input builds a stack listening on a port with one connection already
 * established by a scripted handshake, then interprets the input as a
 * sequence of operations: raw frames, well-formed segments with fuzzed
 * fields (valid checksums, sequence numbers near the live ones so the state
 * machine is reached), ARP frames, timer advances, and application calls
 * (send, close, abort, recv_resume, connect). A second listener (PORT + 1,
 * backlog 2, taken down and put up again with another backlog by the
 * input) reaches the half-open bounds: SYNs beyond its backlog or at the
 * table's max_conns drop the oldest half-open conn (issue 33). Must never
 * crash, leak, or trip ASan/UBSan.
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tcp/tcp_wire.h"
#include "../tests/tcp_frame.h"
#include "vfw_tcp.h"

#define IP_L 0x0a000002u
#define IP_P 0x0a000001u
#define PORT 4791
static const uint8_t MAC_L[6] = {0x02, 0, 0, 0, 0, 0x0b};
static const uint8_t MAC_P[6] = {0x02, 0, 0, 0, 0, 0x0a};

struct fz {
    uint64_t now;
    struct vfw_tcp_stack *s;
    struct vfw_tcp_conn *c;      /* the established conn, or NULL */
    bool c_closed_seen;
    uint32_t st_seq;             /* stack's highest seq+len seen */
    uint32_t st_ack;             /* stack's last ack = our next seq */
    uint16_t st_port;            /* our (peer) port of the conn */
    uint32_t isn_seen;
    size_t consume;              /* recv: bytes consumed per call, 0 = all */
    uint64_t frames_out;
};

static struct fz *G;

static void out(void *o, const uint8_t *f, size_t len)
{
    struct fz *z = o;
    z->frames_out++;
    if (len < 54 || vfw_ld_be16(f + 12) != 0x0800)
        return;
    const uint8_t *t = f + 14 + (f[14] & 0xf) * 4;
    if ((size_t)(t - f) + 20 > len)
        return;
    uint16_t tot = vfw_ld_be16(f + 16);
    size_t thl = (size_t)(t[12] >> 4) * 4;
    uint32_t seq = vfw_ld_be32(t + 4);
    uint32_t dl = (uint32_t)(tot - (f[14] & 0xf) * 4 - thl);
    if (t[13] & VFW_TH_SYN) {
        z->isn_seen = seq;
        dl++;
    }
    if (vfw_ld_be16(t + 2) == z->st_port) {
        if (VFW_SEQ_GT(seq + dl, z->st_seq))
            z->st_seq = seq + dl;
        if (t[13] & VFW_TH_ACK)
            z->st_ack = vfw_ld_be32(t + 8);
    }
}

static uint64_t clk(void *o)
{
    return ((struct fz *)o)->now;
}

static size_t cb_recv(struct vfw_tcp_conn *c, const uint8_t *d, size_t n,
                      void *u)
{
    (void)c;
    (void)u;
    volatile uint8_t sink = 0;
    for (size_t i = 0; i < n; i++)
        sink ^= d[i];                 /* touch every byte offered */
    (void)sink;
    if (G->consume && n > G->consume)
        return G->consume;
    return n;
}

static void cb_closed(struct vfw_tcp_conn *c, int err, void *u)
{
    (void)u;
    if (c != G->c)
        return;
    if (err) {
        G->c = NULL;                  /* invalid after a failure */
        return;
    }
    /* peer FIN: close (conn invalid when close returns) */
    G->c = NULL;
    vfw_tcp_close(c);
}

static void cb_connected(struct vfw_tcp_conn *c, int err, void *u)
{
    (void)c;
    (void)err;
    (void)u;
}

static void cb_writable(struct vfw_tcp_conn *c, void *u)
{
    (void)c;
    (void)u;
}

static const struct vfw_tcp_cb CB = {cb_connected, cb_recv, cb_writable,
                                     cb_closed};

/* Active conns are never closed by the harness; closed upcalls for them
 * only arrive on failure, after which they're gone. */
static void ac_closed(struct vfw_tcp_conn *c, int err, void *u)
{
    (void)err;
    (void)u;
    if (!err)
        vfw_tcp_close(c);
}

static const struct vfw_tcp_cb ACB = {cb_connected, cb_recv, cb_writable,
                                      ac_closed};

static const struct vfw_tcp_cb *acc(struct vfw_tcp_conn *c, void *lu,
                                    void **cu)
{
    (void)lu;
    *cu = NULL;
    if (!G->c && !G->c_closed_seen) {
        G->c = c;
        return &CB;
    }
    return &ACB;
}

static size_t mk_seg(uint8_t *f, uint16_t sport, uint16_t dport, uint32_t seq,
                     uint32_t ack, uint8_t flags, uint16_t wnd,
                     const uint8_t *opt, size_t optlen, const uint8_t *pl,
                     size_t plen)
{
    optlen &= ~(size_t)3;
    if (optlen > 40)
        optlen = 40;
    return tcp_frame(f, MAC_L, MAC_P, IP_P, IP_L, sport, dport, seq, ack,
                     flags, wnd, opt, optlen, pl, plen);
}

struct rd {
    const uint8_t *p;
    size_t n;
};

static uint8_t u8(struct rd *r)
{
    if (!r->n)
        return 0;
    r->n--;
    return *r->p++;
}

static uint16_t u16(struct rd *r)
{
    return (uint16_t)(u8(r) << 8 | u8(r));
}

static uint32_t u32(struct rd *r)
{
    return (uint32_t)u16(r) << 16 | u16(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static uint8_t f[10000];
    static uint8_t pay[9000];
    struct fz z;
    memset(&z, 0, sizeof(z));
    G = &z;
    z.now = 1000000000ull;
    z.st_port = 1234;
    struct vfw_tcp_env env = {&z, out, clk};
    struct vfw_tcp_config cfg = {.ip = IP_L, .mtu = 1500, .rcv_buf = 8192,
                                 .snd_buf = 8192, .max_conns = 6};
    memcpy(cfg.mac, MAC_L, 6);
    z.s = vfw_tcp_stack_new(&env, &cfg);
    if (!z.s)
        return 0;
    struct vfw_tcp_tunables tu;
    vfw_tcp_get_tunables(z.s, &tu);
    tu.ooo_max_ranges = 4;
    vfw_tcp_set_tunables(z.s, &tu);
    vfw_tcp_listen(z.s, PORT, acc, NULL);
    vfw_tcp_listen_backlog(z.s, PORT + 1, 2, acc, NULL);
    /* Scripted handshake: SYN, (SYN-ACK captured), ACK. */
    uint8_t mssopt[8] = {2, 4, 0x05, 0xb4, 1, 3, 3, 7};
    size_t n = mk_seg(f, 1234, PORT, 5000, 0, VFW_TH_SYN, 65535, mssopt, 8,
                      NULL, 0);
    vfw_tcp_input(z.s, f, n);
    n = mk_seg(f, 1234, PORT, 5001, z.isn_seen + 1, VFW_TH_ACK, 1024, NULL,
               0, NULL, 0);
    vfw_tcp_input(z.s, f, n);
    uint32_t pseq = 5001;

    struct rd r = {data, size};
    for (int ops = 0; r.n && ops < 256; ops++) {
        uint8_t op = u8(&r);
        switch (op % 8) {
        case 0: { /* raw frame */
            size_t len = u16(&r) % 1600;
            if (len > r.n)
                len = r.n;
            if (len) {   /* the steering check never reads past len */
                uint8_t *cp = malloc(len);
                if (!cp)
                    abort();
                memcpy(cp, r.p, len);
                (void)vfw_tcp_wants(z.s, cp, len);
                free(cp);
            }
            vfw_tcp_input(z.s, r.p, len);
            r.p += len;
            r.n -= len;
            break;
        }
        case 1:
        case 2: { /* segment on the established tuple, near live numbers */
            uint8_t flags = u8(&r);
            int16_t ds = (int16_t)u16(&r);
            int16_t da = (int16_t)u16(&r);
            uint16_t wnd = u16(&r);
            uint8_t ol = u8(&r) % 44;
            uint8_t opt[44];
            for (int i = 0; i < ol; i++)
                opt[i] = u8(&r);
            size_t pl = u16(&r) % 1500;
            for (size_t i = 0; i < pl; i++)
                pay[i] = (uint8_t)(i * 7);
            uint32_t seq = (op & 8) ? pseq + (uint32_t)(int32_t)ds
                                    : u32(&r);
            uint32_t ack = z.st_seq + (uint32_t)(int32_t)da;
            n = mk_seg(f, z.st_port, PORT, seq, ack, flags, wnd, opt, ol,
                       pay, pl);
            vfw_tcp_input(z.s, f, n);
            if (!(flags & VFW_TH_RST) && (op & 16))
                pseq += (uint32_t)pl + ((flags & VFW_TH_FIN) ? 1 : 0);
            break;
        }
        case 3: { /* segment from another port: listener / no-conn paths */
            uint16_t sp = u16(&r);
            uint16_t dp = (op & 8) ? ((op & 64) ? PORT + 1 : PORT) : u16(&r);
            uint8_t flags = u8(&r);
            uint32_t seq = u32(&r), ack = u32(&r);
            if ((op & 16) && (flags & VFW_TH_ACK))
                ack = z.isn_seen + 1;
            uint8_t opt[8] = {2, 4, u8(&r), u8(&r), 1, 3, 3, u8(&r)};
            n = mk_seg(f, sp, dp, seq, ack, flags, u16(&r), opt,
                       (op & 32) ? 8 : 0, NULL, 0);
            vfw_tcp_input(z.s, f, n);
            break;
        }
        case 4: { /* time passes */
            uint32_t ms = u16(&r);
            z.now += (uint64_t)ms * 1000000ull;
            vfw_tcp_poll(z.s);
            uint64_t nt = vfw_tcp_next_timer_ns(z.s);
            if ((op & 8) && nt != UINT64_MAX && nt > z.now) {
                z.now = nt;
                vfw_tcp_poll(z.s);
            }
            break;
        }
        case 5: { /* application on the established conn */
            uint8_t a = u8(&r);
            if (!z.c)
                break;
            switch (a % 6) {
            case 0:
            case 1: {
                size_t len = u16(&r) % 1600;
                int e = vfw_tcp_send_record(z.c, pay, len);
                (void)e;
                break;
            }
            case 2:
                z.consume = u8(&r) % 64;
                vfw_tcp_recv_resume(z.c);
                break;
            case 3:
                (void)vfw_tcp_send_space(z.c);
                (void)vfw_tcp_mss(z.c);
                break;
            case 4:
                z.c_closed_seen = true;
                vfw_tcp_close(z.c);
                /* after close the conn stays ours until the closed upcall;
                 * the harness stops using it (upcall clears G->c or not) */
                z.c = NULL;
                break;
            case 5:
                z.c_closed_seen = true;
                vfw_tcp_abort(z.c);
                z.c = NULL;
                break;
            }
            break;
        }
        case 6: { /* ARP */
            uint8_t a[60];
            memset(a, 0, sizeof(a));
            if (op & 8)
                memset(a, 0xff, 6);
            else
                memcpy(a, MAC_L, 6);
            memcpy(a + 6, MAC_P, 6);
            vfw_st_be16(a + 12, 0x0806);
            vfw_st_be16(a + 14, (op & 16) ? u16(&r) : 1);
            vfw_st_be16(a + 16, 0x0800);
            a[18] = 6;
            a[19] = 4;
            vfw_st_be16(a + 20, (uint16_t)(1 + (u8(&r) & 1)));
            memcpy(a + 22, MAC_P, 6);
            a[27] = u8(&r);
            vfw_st_be32(a + 28, (op & 32) ? u32(&r) : IP_P);
            vfw_st_be32(a + 38, (op & 64) ? u32(&r) : IP_L);
            vfw_tcp_input(z.s, a, (op & 128) ? 60 : (size_t)u8(&r) % 61);
            break;
        }
        case 7: { /* active open toward the fake peer */
            int e;
            if (op & 32) {      /* or the second listener down and up */
                vfw_tcp_unlisten(z.s, PORT + 1);
                vfw_tcp_listen_backlog(z.s, PORT + 1, 1 + u8(&r) % 4, acc,
                                       NULL);
                break;
            }
            vfw_tcp_connect(z.s, (op & 8) ? IP_P : u32(&r), u16(&r),
                            (op & 16) ? u16(&r) : 0, &ACB, NULL, &e);
            break;
        }
        }
    }
    vfw_tcp_stack_free(z.s);
    G = NULL;
    return 0;
}
