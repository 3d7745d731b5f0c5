/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * simwire.h - header-only in-memory Ethernet wire for tests, fuzzers and
 * benchmarks: two endpoints (side 0 and 1), a frame queue ordered by
 * delivery time, injected loss, duplication, reordering, fixed delay and an
 * optional bottleneck rate with a tail-drop queue limit, all driven by a
 * seeded PRNG and simulated time (no sleeping, no threads).
 *
 * Use with the TCP stack (or any layer that emits/consumes frames):
 *
 *   struct simwire w;
 *   simwire_init(&w, seed);
 *   w.loss_ppm = 20000;                      // 2 % loss, etc.
 *   struct vfw_tcp_env ea = simwire_env(&w, 0), eb = simwire_env(&w, 1);
 *   A = vfw_tcp_stack_new(&ea, &cfga); B = vfw_tcp_stack_new(&eb, &cfgb);
 *   simwire_attach_tcp(&w, 0, A); simwire_attach_tcp(&w, 1, B);
 *   simwire_run(&w, done_fn, ctx, 10 * SIMWIRE_S);  // until done or timeout
 *
 * An upper layer with its own timers attaches with simwire_attach() and
 * its own rx/next_timer/poll callbacks (wrap vfw_tcp_* inside them).
 * Optional hooks: `filter` drops chosen frames deterministically, `sniff`
 * sees every frame sent, `pcap` records every delivered frame.
 */
#ifndef VFW_SIMWIRE_H
#define VFW_SIMWIRE_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "vfw_pcap.h"
#include "vfw_tcp.h"

#define SIMWIRE_MS 1000000ull
#define SIMWIRE_S  1000000000ull
#define SIMWIRE_MAX_QUEUE 65536
/* Frame buffers up to this size are recycled through a small LIFO pool
 * (no malloc/free per frame; the recently freed buffer is cache-hot). */
#define SIMWIRE_POOL_BUF  9216u
#define SIMWIRE_POOL_MAX  512

struct simwire;

struct simwire_ep {
    struct simwire *w;
    int side;
    void *opaque;
    void (*rx)(void *opaque, const uint8_t *frame, size_t len);
    uint64_t (*next_timer)(void *opaque);   /* UINT64_MAX if none */
    void (*poll)(void *opaque);
    uint64_t link_free;                     /* bottleneck serialization */
    uint32_t inflight;                      /* frames queued toward peer */
    /* counters, per direction (frames sent by this side) */
    uint64_t sent, delivered, lost, duplicated, reordered, qdrops, filtered;
};

struct simwire_frame {
    uint64_t t, order;
    int to;
    size_t len;
    uint8_t *data;
};

struct simwire {
    uint64_t now;
    uint64_t rng;
    uint64_t order;
    struct simwire_ep ep[2];
    /* Faults (parts per million of frames) and timing. */
    uint32_t loss_ppm, dup_ppm, reorder_ppm;
    uint64_t delay_ns;        /* one-way propagation delay */
    uint64_t reorder_ns;      /* extra delay (uniform 0..reorder_ns) */
    uint64_t rate_bps;        /* 0 = infinite */
    uint32_t qlimit;          /* per-direction frames queued, 0 = 4096 */
    /* Hooks. filter returns non-zero to drop the frame. */
    int (*filter)(void *opaque, int from, const uint8_t *f, size_t len);
    void *filter_opaque;
    void (*sniff)(void *opaque, int from, uint64_t t, const uint8_t *f,
                  size_t len);
    void *sniff_opaque;
    struct vfw_pcap *pcap;
    /* Delivery queue: binary min-heap on (t, order). */
    struct simwire_frame *heap;
    size_t n, cap;
    uint64_t steps;
    uint8_t *pool[SIMWIRE_POOL_MAX];
    int npool;
};

static inline uint8_t *simwire_buf_get(struct simwire *w, size_t len)
{
    if (len <= SIMWIRE_POOL_BUF) {
        if (w->npool)
            return w->pool[--w->npool];
        return malloc(SIMWIRE_POOL_BUF);
    }
    return malloc(len);
}

static inline void simwire_buf_put(struct simwire *w, uint8_t *b, size_t len)
{
    if (b && len <= SIMWIRE_POOL_BUF && w->npool < SIMWIRE_POOL_MAX)
        w->pool[w->npool++] = b;
    else
        free(b);
}

static inline uint64_t simwire_rand(struct simwire *w)
{
    /* splitmix64: deterministic for a seed */
    uint64_t z = (w->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline int simwire_chance(struct simwire *w, uint32_t ppm)
{
    return ppm && simwire_rand(w) % 1000000u < ppm;
}

static inline void simwire_init(struct simwire *w, uint64_t seed)
{
    memset(w, 0, sizeof(*w));
    w->rng = seed;
    w->now = 1 * SIMWIRE_S;   /* non-zero epoch */
    w->delay_ns = 50000;      /* 50 us */
    for (int i = 0; i < 2; i++) {
        w->ep[i].w = w;
        w->ep[i].side = i;
    }
}

static inline int simwire_less(const struct simwire_frame *a,
                               const struct simwire_frame *b)
{
    return a->t < b->t || (a->t == b->t && a->order < b->order);
}

static inline void simwire_push(struct simwire *w, struct simwire_frame f)
{
    if (w->n == w->cap) {
        size_t nc = w->cap ? w->cap * 2 : 256;
        struct simwire_frame *h = realloc(w->heap, nc * sizeof(*h));
        if (!h) {
            free(f.data);
            return;
        }
        w->heap = h;
        w->cap = nc;
    }
    size_t i = w->n++;
    while (i) {
        size_t p = (i - 1) / 2;
        if (!simwire_less(&f, &w->heap[p]))
            break;
        w->heap[i] = w->heap[p];
        i = p;
    }
    w->heap[i] = f;
}

static inline struct simwire_frame simwire_pop(struct simwire *w)
{
    struct simwire_frame top = w->heap[0];
    struct simwire_frame last = w->heap[--w->n];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        const struct simwire_frame *mv = &last;
        if (l < w->n && simwire_less(&w->heap[l], mv)) {
            m = l;
            mv = &w->heap[l];
        }
        if (r < w->n && simwire_less(&w->heap[r], mv))
            m = r;
        if (m == i)
            break;
        w->heap[i] = w->heap[m];
        i = m;
    }
    if (w->n)
        w->heap[i] = last;
    return top;
}

static inline void simwire_enqueue(struct simwire *w, int from,
                                   const uint8_t *f, size_t len,
                                   uint64_t extra)
{
    struct simwire_ep *e = &w->ep[from];
    uint32_t lim = w->qlimit ? w->qlimit : 4096;
    if (e->inflight >= lim || w->n >= SIMWIRE_MAX_QUEUE) {
        e->qdrops++;
        return;
    }
    uint64_t t = w->now;
    if (w->rate_bps) {
        if (e->link_free > t)
            t = e->link_free;
        t += (uint64_t)len * 8u * SIMWIRE_S / w->rate_bps;
        e->link_free = t;
    }
    t += w->delay_ns + extra;
    struct simwire_frame fr;
    fr.t = t;
    fr.order = w->order++;
    fr.to = !from;
    fr.len = len;
    fr.data = simwire_buf_get(w, len ? len : 1);
    if (!fr.data)
        return;
    memcpy(fr.data, f, len);
    e->inflight++;
    simwire_push(w, fr);
}

/* Send a frame from `from` toward the other side, applying faults. */
static inline void simwire_send(struct simwire *w, int from, const uint8_t *f,
                                size_t len)
{
    struct simwire_ep *e = &w->ep[from];
    e->sent++;
    if (w->sniff)
        w->sniff(w->sniff_opaque, from, w->now, f, len);
    if (w->filter && w->filter(w->filter_opaque, from, f, len)) {
        e->filtered++;
        return;
    }
    if (simwire_chance(w, w->loss_ppm)) {
        e->lost++;
        return;
    }
    uint64_t extra = 0;
    if (w->reorder_ns && simwire_chance(w, w->reorder_ppm)) {
        extra = simwire_rand(w) % w->reorder_ns;
        e->reordered++;
    }
    simwire_enqueue(w, from, f, len, extra);
    if (simwire_chance(w, w->dup_ppm)) {
        e->duplicated++;
        simwire_enqueue(w, from, f, len,
                        w->reorder_ns ? simwire_rand(w) % w->reorder_ns : 0);
    }
}

static inline void simwire_frame_out_cb(void *opaque, const uint8_t *f,
                                        size_t len)
{
    struct simwire_ep *e = (struct simwire_ep *)opaque;
    simwire_send(e->w, e->side, f, len);
}

static inline uint64_t simwire_now_cb(void *opaque)
{
    return ((struct simwire_ep *)opaque)->w->now;
}

/* A vfw_tcp_env whose frames go onto the wire from `side`. */
static inline struct vfw_tcp_env simwire_env(struct simwire *w, int side)
{
    struct vfw_tcp_env env;
    env.opaque = &w->ep[side];
    env.frame_out = simwire_frame_out_cb;
    env.now_ns = simwire_now_cb;
    return env;
}

static inline void simwire_attach(struct simwire *w, int side, void *opaque,
                                  void (*rx)(void *, const uint8_t *, size_t),
                                  uint64_t (*next_timer)(void *),
                                  void (*poll)(void *))
{
    w->ep[side].opaque = opaque;
    w->ep[side].rx = rx;
    w->ep[side].next_timer = next_timer;
    w->ep[side].poll = poll;
}

static inline void simwire_tcp_rx(void *o, const uint8_t *f, size_t len)
{
    vfw_tcp_input((struct vfw_tcp_stack *)o, f, len);
}

static inline uint64_t simwire_tcp_next(void *o)
{
    return vfw_tcp_next_timer_ns((struct vfw_tcp_stack *)o);
}

static inline void simwire_tcp_poll(void *o)
{
    vfw_tcp_poll((struct vfw_tcp_stack *)o);
}

/* Attach a bare TCP stack to a side. */
static inline void simwire_attach_tcp(struct simwire *w, int side,
                                      struct vfw_tcp_stack *s)
{
    simwire_attach(w, side, s, simwire_tcp_rx, simwire_tcp_next,
                   simwire_tcp_poll);
}

/*
 * Run until done(ctx) is true (returns 1), nothing is left to do (0), or
 * `max_ns` of simulated time passed (0). done may be NULL.
 */
static inline int simwire_run(struct simwire *w, int (*done)(void *),
                              void *ctx, uint64_t max_ns)
{
    uint64_t deadline = w->now + max_ns;
    for (uint64_t guard = 0; guard < 200000000ull; guard++) {
        w->steps++;
        if (done && done(ctx))
            return 1;
        if (w->n && w->heap[0].t <= w->now) {
            struct simwire_frame f = simwire_pop(w);
            struct simwire_ep *to = &w->ep[f.to];
            w->ep[!f.to].inflight--;
            to->delivered++;
            if (w->pcap)
                vfw_pcap_write(w->pcap, w->now, f.data, f.len);
            if (to->rx)
                to->rx(to->opaque, f.data, f.len);
            simwire_buf_put(w, f.data, f.len);
            continue;
        }
        uint64_t next = w->n ? w->heap[0].t : UINT64_MAX;
        int polled = 0;
        for (int i = 0; i < 2; i++) {
            struct simwire_ep *e = &w->ep[i];
            if (!e->next_timer)
                continue;
            uint64_t t = e->next_timer(e->opaque);
            if (t <= w->now) {
                e->poll(e->opaque);
                polled = 1;
            } else if (t < next) {
                next = t;
            }
        }
        if (polled)
            continue;
        if (next == UINT64_MAX)
            return done ? done(ctx) : 0;
        if (next > deadline) {
            w->now = deadline;
            return done ? done(ctx) : 0;
        }
        w->now = next;
    }
    return 0;
}

/* Advance simulated time by ns, processing everything on the way. */
static inline void simwire_advance(struct simwire *w, uint64_t ns)
{
    simwire_run(w, NULL, NULL, ns);
}

static inline void simwire_destroy(struct simwire *w)
{
    while (w->n) {
        struct simwire_frame f = simwire_pop(w);
        free(f.data);
    }
    while (w->npool)
        free(w->pool[--w->npool]);
    free(w->heap);
    w->heap = NULL;
    w->cap = 0;
}

#endif /* VFW_SIMWIRE_H */
