/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tcp_conn.c - the offloaded TCP stack's connection table (vfw_tcp.h):
 * allocation, 4-tuple lookup, listeners, free, and the upcalls that end a
 * connection's life (failure, the peer's FIN, final release).
 *
 * Bounds: at most cfg.max_conns live connections (a TIME_WAIT one is
 * reaped to make room, else the oldest half-open one is dropped, else the
 * attempt is refused and counted); each conn's buffers (snd_buf + rcv_buf
 * + a ring of 64..16384 record ends) are allocated once, here: at open for
 * an active conn, when the handshake completes for a passive one (a SYN
 * costs only the struct: issue 33). Half-open conns: see the SYN FIFO in
 * tcp_internal.h. The 4-tuple hash and the ISNs (RFC 6528)
 * are keyed with tun.isn_secret (a splitmix mix, not SipHash yet: see
 * docs/adapter-tcp.md).
 *
 * Re-entrancy: upcalls may call send/close/abort/recv_resume. A connection
 * freed while the stack is inside a call is parked on a zombie list and
 * released when the outermost call returns (toe_stack_leave).
 */
#include <errno.h>
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
    if (c->in_synq)
        toe_synq_unlink(c);
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

void toe_synq_add(struct vfw_tcp_conn *c, struct listener *l)
{
    struct vfw_tcp_stack *s = c->s;
    c->in_synq = true;
    c->snext = NULL;
    c->sprev = s->syn_tail;
    if (s->syn_tail)
        s->syn_tail->snext = c;
    else
        s->syn_head = c;
    s->syn_tail = c;
    s->nsyn++;
    l->nsyn++;
}

void toe_synq_unlink(struct vfw_tcp_conn *c)
{
    struct vfw_tcp_stack *s = c->s;
    if (!c->in_synq)
        return;
    c->in_synq = false;
    if (c->sprev)
        c->sprev->snext = c->snext;
    else
        s->syn_head = c->snext;
    if (c->snext)
        c->snext->sprev = c->sprev;
    else
        s->syn_tail = c->sprev;
    c->snext = c->sprev = NULL;
    s->nsyn--;
    /* vfw_tcp_unlisten drops a listener's half-open conns with it, so the
     * listener of a conn in the FIFO is the one that counted it */
    struct listener *l = toe_find_listener(s, c->lport);
    if (l && l->nsyn)
        l->nsyn--;
}

bool toe_synq_drop_oldest(struct vfw_tcp_stack *s, uint16_t lport)
{
    /* oldest first; the walk is bounded by the FIFO's length (nsyn <=
     * max_conns) and is one step when one listener is flooded */
    struct vfw_tcp_conn *c = s->syn_head;
    while (c && lport && c->lport != lport)
        c = c->snext;
    if (!c)
        return false;
    /* silently: a RST would go to an address the flood may have forged,
     * and a real peer learns of it from the RST its ACK gets */
    s->st.syn_dropped++;
    toe_conn_free(c);
    return true;
}

/* The buffer sizes of a conn of this stack (allocated by toe_conn_bufs). */
static void conn_buf_sizes(struct vfw_tcp_conn *c)
{
    struct vfw_tcp_stack *s = c->s;
    c->sbuf_size = s->cfg.snd_buf;
    c->rbuf_size = s->cfg.rcv_buf;
    c->rec_cap = s->cfg.snd_buf / 16;
    if (c->rec_cap < 64)
        c->rec_cap = 64;
    if (c->rec_cap > 16384)
        c->rec_cap = 16384;
}

int toe_conn_bufs(struct vfw_tcp_conn *c)
{
    if (c->sbuf)
        return 0;
    uint8_t *sb = malloc(c->sbuf_size);
    uint8_t *rb = malloc(c->rbuf_size);
    uint32_t *rec = malloc(c->rec_cap * sizeof(uint32_t));
    if (!sb || !rb || !rec) {
        free(sb);
        free(rb);
        free(rec);
        return -ENOMEM;
    }
    c->sbuf = sb;
    c->rbuf = rb;
    c->rec = rec;
    c->s->st.buf_bytes += conn_buf_bytes(c);
    return 0;
}

struct vfw_tcp_conn *toe_conn_new(struct vfw_tcp_stack *s, uint32_t rip,
                                  uint16_t rport, uint16_t lport, bool bufs)
{
    /* a half-open conn yields its slot to anything newer: to the
     * function's own connect, and to a SYN (the flood's oldest go first) */
    if (s->nconns >= s->cfg.max_conns && !reap_time_wait(s) &&
        !toe_synq_drop_oldest(s, 0)) {
        s->st.conn_limit++;
        return NULL;
    }
    struct vfw_tcp_conn *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->s = s;
    conn_buf_sizes(c);
    if (bufs && toe_conn_bufs(c)) {
        free(c);
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
