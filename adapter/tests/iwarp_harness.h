/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * iwarp_harness.h - test scaffolding for the iWARP engine: a host (function
 * memory behind DMA ops, simulated clock, CM event log) and an in-memory
 * reliable byte stream ("pipe") with the shape of vfw_tcp.h: whole-record
 * send up to the MSS with -EAGAIN when full, receive upcalls in random-sized
 * chunks with partial consume, FIN/RST semantics of the contract.
 */
#ifndef IWARP_HARNESS_H
#define IWARP_HARNESS_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "vfw_engine.h"

static int h_pass, h_fail;
static inline void h_unused(void) { (void)h_pass; (void)h_fail; }
#define CHECK(cond) do { if (cond) h_pass++; else { h_fail++; \
    fprintf(stderr, "FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond); } } while (0)
#define CHECK_EQ(a, b) do { long long _a = (long long)(a), _b = (long long)(b); \
    if (_a == _b) h_pass++; else { h_fail++; fprintf(stderr, \
    "FAIL %s:%d: %s == %s (%lld vs %lld)\n", __FILE__, __LINE__, #a, #b, _a, _b); } } while (0)

#define MEM_BASE 0x100000ull

struct host {
    struct vfw_engine *e;
    uint8_t *mem;
    size_t mem_len;
    uint64_t *clock;
    uint64_t dma_faults, notifies;
    struct vfw_cm_event ev[32];
    uint8_t ev_pdata[32][VFW_MAX_PDATA];
    int nev;
    /* auto-accept on CONNECT_REQUEST */
    uint32_t accept_qp;
    struct vfw_conn_param accept_param;
    bool reject;
};

static inline int h_dma_read(void *o, uint16_t f, uint64_t iova, void *buf, size_t len)
{
    struct host *h = o;
    (void)f;
    if (iova < MEM_BASE || iova - MEM_BASE > h->mem_len ||
        len > h->mem_len - (iova - MEM_BASE)) {
        h->dma_faults++;
        return -EFAULT;
    }
    memcpy(buf, h->mem + (iova - MEM_BASE), len);
    return 0;
}
static inline int h_dma_write(void *o, uint16_t f, uint64_t iova, const void *buf,
                       size_t len)
{
    struct host *h = o;
    (void)f;
    if (iova < MEM_BASE || iova - MEM_BASE > h->mem_len ||
        len > h->mem_len - (iova - MEM_BASE)) {
        h->dma_faults++;
        return -EFAULT;
    }
    memcpy(h->mem + (iova - MEM_BASE), buf, len);
    return 0;
}
static inline void h_notify(void *o, uint32_t cq) { (void)cq; ((struct host *)o)->notifies++; }
static inline uint64_t h_now(void *o) { return *((struct host *)o)->clock; }
static inline void h_cm(void *o, const struct vfw_cm_event *ev)
{
    struct host *h = o;
    if (h->nev < 32) {
        h->ev[h->nev] = *ev;
        if (ev->pdata_len)
            memcpy(h->ev_pdata[h->nev], ev->pdata, ev->pdata_len);
        h->ev[h->nev].pdata = h->ev_pdata[h->nev];
        h->nev++;
    }
    if (ev->type == VFW_CM_CONNECT_REQUEST) {
        if (h->reject)
            vfw_reject(h->e, ev->cep_id, (const uint8_t *)"nope", 4);
        else if (h->accept_qp)
            vfw_accept(h->e, ev->cep_id, h->accept_qp, &h->accept_param);
    }
}
static inline int h_find_ev(const struct host *h, enum vfw_cm_event_type t)
{
    for (int i = 0; i < h->nev; i++)
        if (h->ev[i].type == t)
            return i;
    return -1;
}

/* initiator_settle_ns of the engines host_init makes (default 0: none) */
static uint64_t h_settle_ns;

static inline void host_init(struct host *h, uint64_t *clock, size_t mem_len,
                      uint16_t func)
{
    memset(h, 0, sizeof(*h));
    h->clock = clock;
    h->mem_len = mem_len;
    h->mem = calloc(1, mem_len);
    struct vfw_engine_ops ops = { .opaque = h, .dma_read = h_dma_read,
        .dma_write = h_dma_write, .cq_notify = h_notify, .cm_event = h_cm,
        .now_ns = h_now };
    struct vfw_engine_config cfg = { .func_id = func,
                                     .initiator_settle_ns = h_settle_ns };
    h->e = vfw_engine_new(&ops, &cfg);
}
static inline void host_fini(struct host *h)
{
    vfw_engine_free(h->e);
    free(h->mem);
}

/* ---- the pipe ------------------------------------------------------------*/
struct pipe_q { uint8_t *buf; size_t cap, head, len; bool fin, fin_seen; };
struct pipe;
struct pipe_end { struct pipe *p; int side; };
struct pipe {
    struct pipe_q q[2];            /* q[i]: sent by side i */
    struct pipe_end end[2];
    struct host *h[2];
    uint32_t cep[2];
    bool closed[2];                /* side i called close */
    bool final[2];                 /* side i got its last upcall / aborted */
    bool want_wr[2], resume[2];
    bool aborted;
    uint16_t mss;
    uint64_t rng;
    size_t max_chunk;
    /* fault injection: flip one byte of side 0's stream at this offset */
    uint64_t corrupt_at, sent0;
    bool corrupt;
};

static inline uint64_t p_rand(struct pipe *p)
{
    p->rng ^= p->rng << 13; p->rng ^= p->rng >> 7; p->rng ^= p->rng << 17;
    return p->rng;
}

/* Where `len` more bytes go in q, contiguous (the queue has room). */
static inline uint8_t *pq_tail(struct pipe_q *q, size_t len)
{
    if (q->head + q->len + len > q->cap) {
        memmove(q->buf, q->buf + q->head, q->len);
        q->head = 0;
    }
    return q->buf + q->head + q->len;
}
static inline int p_commit(void *conn, size_t len)
{
    struct pipe_end *pe = conn;
    struct pipe *p = pe->p;
    struct pipe_q *q = &p->q[pe->side];
    if (pe->side == 0 && p->corrupt && p->corrupt_at >= p->sent0 &&
        p->corrupt_at < p->sent0 + len) {
        q->buf[q->head + q->len + (p->corrupt_at - p->sent0)] ^= 0x5a;
        p->corrupt = false;
    }
    if (pe->side == 0)
        p->sent0 += len;
    q->len += len;
    return 0;
}
static inline int p_send(void *conn, const uint8_t *d, size_t len)
{
    struct pipe_end *pe = conn;
    struct pipe *p = pe->p;
    struct pipe_q *q = &p->q[pe->side];
    if (p->aborted || p->closed[pe->side])
        return -ENOTCONN;
    if (len > p->mss)
        return -EMSGSIZE;
    if (q->cap - q->len < len) {
        p->want_wr[pe->side] = true;
        return -EAGAIN;
    }
    memcpy(pq_tail(q, len), d, len);
    return p_commit(conn, len);
}
/* zero-copy variant: reserve a contiguous span at the tail, commit it */
static inline uint8_t *p_reserve(void *conn, size_t len)
{
    struct pipe_end *pe = conn;
    struct pipe *p = pe->p;
    struct pipe_q *q = &p->q[pe->side];
    if (p->aborted || p->closed[pe->side] || len > p->mss ||
        q->cap - q->len < len)
        return NULL;
    return pq_tail(q, len);
}
static inline size_t p_space(void *conn)
{
    struct pipe_end *pe = conn;
    struct pipe_q *q = &pe->p->q[pe->side];
    return q->cap - q->len;
}
static inline uint16_t p_mss(void *conn) { return ((struct pipe_end *)conn)->p->mss; }
static inline void p_resume(void *conn)
{
    struct pipe_end *pe = conn;
    pe->p->resume[1 - pe->side] = true;
}
static inline void p_close(void *conn)
{
    struct pipe_end *pe = conn;
    pe->p->closed[pe->side] = true;
    pe->p->q[pe->side].fin = true;
}
static inline void p_abort(void *conn)
{
    struct pipe_end *pe = conn;
    pe->p->aborted = true;
    pe->p->final[pe->side] = true;
}
static const struct vfw_llp_ops pipe_llp = { p_send, p_space, p_mss, p_resume,
                                             p_close, p_abort, p_reserve,
                                             p_commit };
/* pipes made while this is set offer no zero-copy pair (tests run both) */
static bool h_pipe_copy;
/* the same pipe without the zero-copy pair (the engine's copy fallback) */
static const struct vfw_llp_ops pipe_llp_copy = { p_send, p_space, p_mss,
                                                  p_resume, p_close, p_abort,
                                                  NULL, NULL };

static inline void pipe_init(struct pipe *p, struct host *a, struct host *b,
                      uint16_t mss, size_t cap, size_t max_chunk, uint64_t seed)
{
    memset(p, 0, sizeof(*p));
    for (int i = 0; i < 2; i++) {
        p->q[i].buf = malloc(cap);
        p->q[i].cap = cap;
        p->end[i].p = p;
        p->end[i].side = i;
    }
    p->h[0] = a;
    p->h[1] = b;
    p->mss = mss;
    p->max_chunk = max_chunk;
    p->rng = seed | 1;
    const struct vfw_llp_ops *ops = h_pipe_copy ? &pipe_llp_copy : &pipe_llp;
    vfw_cep_create(a->e, ops, &p->end[0], 1, &p->cep[0]);
    vfw_cep_create(b->e, ops, &p->end[1], 0, &p->cep[1]);
}
static inline void pipe_fini(struct pipe *p)
{
    free(p->q[0].buf);
    free(p->q[1].buf);
}

/* Deliver bytes and events until nothing moves. Returns rounds used. */
static inline int pipe_pump(struct pipe *p)
{
    int rounds = 0;
    for (bool moved = true; moved && rounds < 10000000; rounds++) {
        moved = false;
        if (p->aborted) {
            for (int d = 0; d < 2; d++)
                if (!p->final[d]) {
                    p->final[d] = true;
                    vfw_llp_closed(p->h[d]->e, p->cep[d], -ECONNRESET);
                    moved = true;
                }
            return rounds;
        }
        for (int s = 0; s < 2; s++) {
            int d = 1 - s;
            struct pipe_q *q = &p->q[s];
            if (q->len && !p->final[d]) {
                size_t n = 1 + p_rand(p) % p->max_chunk;
                if (n > q->len)
                    n = q->len;
                size_t c = vfw_llp_recv(p->h[d]->e, p->cep[d],
                                        q->buf + q->head, n);
                if (c > n)
                    c = n;
                q->head += c;
                q->len -= c;
                if (q->len == 0)
                    q->head = 0;
                if (c)
                    moved = true;
                if (p->aborted)
                    break;
            }
            if (p->want_wr[s] && q->cap - q->len >= p->mss && !p->final[s]) {
                p->want_wr[s] = false;
                vfw_llp_writable(p->h[s]->e, p->cep[s]);
                moved = true;
            }
            if (q->fin && q->len == 0 && !q->fin_seen && !p->final[d]) {
                q->fin_seen = true;
                moved = true;
                if (!p->closed[d])   /* peer FIN while open */
                    vfw_llp_closed(p->h[d]->e, p->cep[d], 0);
            }
        }
        for (int d = 0; d < 2; d++)
            if (p->resume[d]) {
                p->resume[d] = false;
                moved = true;
            }
        /* both FINs exchanged: the final upcall, once per side */
        for (int d = 0; d < 2 && !p->aborted; d++)
            if (!p->final[d] && p->closed[d] && p->q[d].fin_seen &&
                p->q[1 - d].fin_seen) {
                p->final[d] = true;
                vfw_llp_closed(p->h[d]->e, p->cep[d], 0);
                moved = true;
            }
    }
    return rounds;
}

/* ---- helpers ---------------------------------------------------------------*/
static inline uint32_t fnv(const uint8_t *d, size_t n)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < n; i++)
        h = (h ^ d[i]) * 16777619u;
    return h;
}
static inline void fill(uint8_t *d, size_t n, uint32_t seed)
{
    uint32_t x = seed * 2654435761u + 1;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13; x ^= x >> 17; x ^= x << 5;
        d[i] = (uint8_t)x;
    }
}

#endif /* IWARP_HARNESS_H */
