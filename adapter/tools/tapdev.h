/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tapdev.h - attach a frame-level engine (the TCP stack, or an upper layer
 * wrapping it) to a Linux TAP device, for interop runs against Linux's own
 * stack inside a network namespace. Single-threaded poll(2) loop; real time
 * (CLOCK_MONOTONIC) drives the engine, wall-clock stamps the pcap.
 *
 *   struct vfw_tapdev t;
 *   vfw_tapdev_open(&t, "vfwt0");            // IFF_TAP | IFF_NO_PI
 *   t.pcap = vfw_pcap_open("run.pcap", 0);   // optional
 *   struct vfw_tcp_env env = vfw_tapdev_env(&t);
 *   stack = vfw_tcp_stack_new(&env, &cfg);
 *   vfw_tapdev_attach_tcp(&t, stack);        // or vfw_tapdev_attach(...)
 *   vfw_tapdev_run(&t, done_fn, ctx, 30 * 1000000000ull);
 *   vfw_tapdev_close(&t);
 */
#ifndef VFW_TAPDEV_H
#define VFW_TAPDEV_H

#include <stddef.h>
#include <stdint.h>

#include "vfw_pcap.h"
#include "vfw_tcp.h"

struct vfw_tapdev {
    int fd;
    char name[16];
    struct vfw_pcap *pcap;      /* every frame in and out, if set */
    /* The engine: frames in, timers. Set by vfw_tapdev_attach*(). */
    void *opaque;
    void (*rx)(void *opaque, const uint8_t *frame, size_t len);
    uint64_t (*next_timer)(void *opaque);
    void (*poll)(void *opaque);
    uint64_t rx_frames, tx_frames, tx_errors;
    /* Optional fault injection on both directions (parts per million),
     * seeded; exercises retransmission against Linux without netem. */
    uint32_t drop_ppm;
    uint64_t rng;
    uint64_t dropped;
};

/* Open (or attach to a persistent) TAP named `name`; 0 or -errno. */
int vfw_tapdev_open(struct vfw_tapdev *t, const char *name);
void vfw_tapdev_close(struct vfw_tapdev *t);
/* An env whose frames go out of the TAP and whose clock is monotonic. */
struct vfw_tcp_env vfw_tapdev_env(struct vfw_tapdev *t);
void vfw_tapdev_attach(struct vfw_tapdev *t, void *opaque,
                       void (*rx)(void *, const uint8_t *, size_t),
                       uint64_t (*next_timer)(void *), void (*poll)(void *));
void vfw_tapdev_attach_tcp(struct vfw_tapdev *t, struct vfw_tcp_stack *s);
/* Monotonic clock in ns (the env's now_ns). */
uint64_t vfw_tapdev_now(void);
/* Run until done(ctx) != 0 (returns 0) or timeout_ns elapse (-ETIMEDOUT).
 * done may be NULL (run for timeout_ns, return 0). */
int vfw_tapdev_run(struct vfw_tapdev *t, int (*done)(void *), void *ctx,
                   uint64_t timeout_ns);

#endif /* VFW_TAPDEV_H */
