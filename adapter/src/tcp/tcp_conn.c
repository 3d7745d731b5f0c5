/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tcp_conn.c - the offloaded TCP stack's connection table (vfw_tcp.h):
 * allocation, 4-tuple lookup, listeners, free, and the upcalls that end a
 * connection's life (failure, the peer's FIN, final release).
 *
 * Bounds: at most cfg.max_conns live connections (a TIME_WAIT one is
 * reaped to make room, else the attempt is refused and counted); each
 * conn's memory (snd_buf + rcv_buf + a ring of 64..16384 record ends) is
 * allocated once, here, at open. The 4-tuple hash and the ISNs (RFC 6528)
 * are keyed with tun.isn_secret (a splitmix mix, not SipHash yet: see
 * docs/adapter-tcp.md).
 *
 * Re-entrancy: upcalls may call send/close/abort/recv_resume. A connection
 * freed while the stack is inside a call is parked on a zombie list and
 * released when the outermost call returns (toe_stack_leave).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "tcp_internal.h"

/* Bytes of buffers a conn holds (the stats' buf_bytes gauge). */
static uint64_t conn_buf_bytes(const struct vfw_tcp_conn *c)
{
    return (c->sbuf ? c->sbuf_size : 0) + (c->rbuf ? c->rbuf_size : 0) +
           (c->rec ? (uint64_t)c->rec_cap * sizeof(uint32_t) : 0);
}

void toe_conn_release(struct vfw_tcp_conn *c)
{
    c->s->st.buf_bytes -= conn_buf_bytes(c);
    free(c->sbuf);
    free(c->rbuf);
    free(c->rec);
    free(c);
}

void toe_stack_leave(struct vfw_tcp_stack *s)
{
    if (--s->depth)
        return;
    while (s->zombies) {
        struct vfw_tcp_conn *z = s->zombies;
        s->zombies = z->lnext;
        toe_conn_release(z);
    }
}

/* Unlink from the hash and list; release now or when the stack unwinds. */
void toe_conn_free(struct vfw_tcp_conn *c)
{
    struct vfw_tcp_stack *s = c->s;
    if (c->dead)
        return;
    c->dead = true;
    c->state = ST_CLOSED;
    c->t_rtx = c->t_delack = c->t_misc = 0;
    struct vfw_tcp_conn **pp = &s->hash[toe_tuple_hash(s, c->rip, c->rport,
                                                       c->lport)];
    while (*pp && *pp != c)
        pp = &(*pp)->hnext;
    if (*pp)
        *pp = c->hnext;
    if (c->lprev)
        c->lprev->lnext = c->lnext;
    else
        s->conns = c->lnext;
    if (c->lnext)
        c->lnext->lprev = c->lprev;
    s->nconns--;
    if (s->depth) {
        c->lnext = s->zombies;
        s->zombies = c;
    } else {
        toe_conn_release(c);
    }
}

struct vfw_tcp_conn *toe_conn_lookup(struct vfw_tcp_stack *s, uint32_t rip,
                                     uint16_t rport, uint16_t lport)
{
    struct vfw_tcp_conn *c = s->hash[toe_tuple_hash(s, rip, rport, lport)];
    for (; c; c = c->hnext)
        if (c->rip == rip && c->rport == rport && c->lport == lport)
            return c;
    return NULL;
}

struct listener *toe_find_listener(struct vfw_tcp_stack *s, uint16_t port)
{
    for (unsigned i = 0; i < s->nlis; i++)
        if (s->lis[i].port == port)
            return &s->lis[i];
    return NULL;
}

/* Make room by reaping the TIME_WAIT conn closest to expiry, if any. */
static bool reap_time_wait(struct vfw_tcp_stack *s)
{
    struct vfw_tcp_conn *best = NULL;
    for (struct vfw_tcp_conn *c = s->conns; c; c = c->lnext)
        if (c->state == ST_TIME_WAIT && !c->user_owned &&
            (!best || c->t_misc < best->t_misc))
            best = c;
    if (!best)
        return false;
    toe_conn_free(best);
    return true;
}

struct vfw_tcp_conn *toe_conn_new(struct vfw_tcp_stack *s, uint32_t rip,
                                  uint16_t rport, uint16_t lport)
{
    if (s->nconns >= s->cfg.max_conns && !reap_time_wait(s)) {
        s->st.conn_limit++;
        return NULL;
    }
    struct vfw_tcp_conn *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->s = s;
    c->sbuf_size = s->cfg.snd_buf;
    c->rbuf_size = s->cfg.rcv_buf;
    c->rec_cap = s->cfg.snd_buf / 16;
    if (c->rec_cap < 64)
        c->rec_cap = 64;
    if (c->rec_cap > 16384)
        c->rec_cap = 16384;
    c->sbuf = malloc(c->sbuf_size);
    c->rbuf = malloc(c->rbuf_size);
    c->rec = malloc(c->rec_cap * sizeof(uint32_t));
    s->st.buf_bytes += conn_buf_bytes(c);
    if (!c->sbuf || !c->rbuf || !c->rec) {
        toe_conn_release(c);
        return NULL;
    }
    c->lip = s->cfg.ip;
    memcpy(c->lmac, s->cfg.mac, 6);
    c->lmss = s->mss_local;
    c->rip = rip;
    c->rport = rport;
    c->lport = lport;
    c->rto = s->tun.rto_init_ns;
    c->mss = 536;
    c->ssthresh = 0x7fffffff;
    c->rcv_wscale = 0;
    if (s->tun.wscale)
        while (c->rcv_wscale < 14 && (c->rbuf_size >> c->rcv_wscale) > 65535)
            c->rcv_wscale++;
    uint64_t h = toe_mix64(s->tun.isn_secret ^ ((uint64_t)rip << 32) ^
                           ((uint64_t)rport << 16) ^ lport ^
                           ((uint64_t)s->cfg.ip << 20));
    c->iss = (uint32_t)h + (uint32_t)(toe_now(s) >> 12); /* RFC 6528 */
    uint32_t b = toe_tuple_hash(s, rip, rport, lport);
    c->hnext = s->hash[b];
    s->hash[b] = c;
    c->lnext = s->conns;
    if (s->conns)
        s->conns->lprev = c;
    s->conns = c;
    s->nconns++;
    return c;
}

void toe_try_free(struct vfw_tcp_conn *c)
{
    if (!c->user_owned && (c->state == ST_CLOSED))
        toe_conn_free(c);
}

/* The connection failed (RST, timeout). */
void toe_conn_fail(struct vfw_tcp_conn *c, int err)
{
    enum tstate was = c->state;
    c->state = ST_CLOSED;
    c->t_rtx = c->t_delack = c->t_misc = 0;
    if (c->user_owned) {
        if (was == ST_SYN_SENT || (was == ST_SYN_RCVD && !c->passive)) {
            c->user_owned = false;
            if (c->cb->connected)
                c->cb->connected(c, err, c->user);
        } else if (!c->closed_delivered) {
            c->closed_delivered = true;
            c->user_owned = false;
            if (c->cb->closed)
                c->cb->closed(c, err, c->user);
        }
        /* else: passive close already reported; the user still holds the
         * conn and releases it with close/abort. */
    }
    toe_try_free(c);
}

/* Report the peer's FIN (closed, err 0) once all data was consumed. */
void toe_maybe_eof(struct vfw_tcp_conn *c)
{
    if (c->dead || !c->eof_pending || c->avail || c->closed_delivered ||
        !c->user_owned)
        return;
    c->closed_delivered = true;
    c->eof_pending = false;
    if (c->user_closed || c->state == ST_TIME_WAIT || c->state == ST_CLOSED)
        c->user_owned = false;
    if (c->cb->closed)
        c->cb->closed(c, 0, c->user);
    if (!c->dead)
        toe_try_free(c);
}
