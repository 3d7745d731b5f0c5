/* SPDX-License-Identifier: GPL-2.0-or-later */
/* tapdev.c - see tapdev.h. */
#include <errno.h>
#include <fcntl.h>
#include <linux/if.h>
#include <linux/if_tun.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "tapdev.h"

uint64_t vfw_tapdev_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int vfw_tapdev_open(struct vfw_tapdev *t, const char *name)
{
    memset(t, 0, sizeof(*t));
    t->fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (t->fd < 0)
        return -errno;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof(ifr));
    ifr.ifr_flags = IFF_TAP | IFF_NO_PI;
    snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
    if (ioctl(t->fd, TUNSETIFF, &ifr) < 0) {
        int e = errno;
        close(t->fd);
        t->fd = -1;
        return -e;
    }
    snprintf(t->name, sizeof(t->name), "%s", ifr.ifr_name);
    return 0;
}

void vfw_tapdev_close(struct vfw_tapdev *t)
{
    if (t->fd >= 0)
        close(t->fd);
    t->fd = -1;
}

/* Seeded drop decision (splitmix64). */
static int tap_drop(struct vfw_tapdev *t)
{
    if (!t->drop_ppm)
        return 0;
    uint64_t z = (t->rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    if (z % 1000000u < t->drop_ppm) {
        t->dropped++;
        return 1;
    }
    return 0;
}

static void tap_frame_out(void *opaque, const uint8_t *f, size_t len)
{
    struct vfw_tapdev *t = opaque;
    if (tap_drop(t))
        return;
    if (t->pcap)
        vfw_pcap_write(t->pcap, wall_ns(), f, len);
    if (write(t->fd, f, len) != (ssize_t)len)
        t->tx_errors++;   /* queue full: the wire dropped it, TCP recovers */
    else
        t->tx_frames++;
}

static uint64_t tap_now(void *opaque)
{
    (void)opaque;
    return vfw_tapdev_now();
}

struct vfw_tcp_env vfw_tapdev_env(struct vfw_tapdev *t)
{
    struct vfw_tcp_env env;
    env.opaque = t;
    env.frame_out = tap_frame_out;
    env.now_ns = tap_now;
    return env;
}

void vfw_tapdev_attach(struct vfw_tapdev *t, void *opaque,
                       void (*rx)(void *, const uint8_t *, size_t),
                       uint64_t (*next_timer)(void *), void (*poll)(void *))
{
    t->opaque = opaque;
    t->rx = rx;
    t->next_timer = next_timer;
    t->poll = poll;
}

static void tcp_rx(void *o, const uint8_t *f, size_t len)
{
    vfw_tcp_input(o, f, len);
}

static uint64_t tcp_next(void *o)
{
    return vfw_tcp_next_timer_ns(o);
}

static void tcp_poll(void *o)
{
    vfw_tcp_poll(o);
}

void vfw_tapdev_attach_tcp(struct vfw_tapdev *t, struct vfw_tcp_stack *s)
{
    vfw_tapdev_attach(t, s, tcp_rx, tcp_next, tcp_poll);
}

int vfw_tapdev_run(struct vfw_tapdev *t, int (*done)(void *), void *ctx,
                   uint64_t timeout_ns)
{
    uint64_t end = vfw_tapdev_now() + timeout_ns;
    uint8_t buf[65536];
    for (;;) {
        if (done && done(ctx))
            return 0;
        uint64_t now = vfw_tapdev_now();
        if (now >= end)
            return done ? -ETIMEDOUT : 0;
        uint64_t next = t->next_timer ? t->next_timer(t->opaque) : UINT64_MAX;
        if (next <= now) {
            t->poll(t->opaque);
            continue;
        }
        uint64_t wait = next < end ? next - now : end - now;
        if (wait > 10000000ull)
            wait = 10000000ull;   /* re-check done() every 10 ms */
        struct pollfd p = {.fd = t->fd, .events = POLLIN};
        int r = poll(&p, 1, (int)((wait + 999999) / 1000000));
        if (r < 0 && errno != EINTR)
            return -errno;
        /* Drain a bounded batch of frames. */
        for (int i = 0; i < 256; i++) {
            ssize_t n = read(t->fd, buf, sizeof(buf));
            if (n <= 0)
                break;
            if (tap_drop(t))
                continue;
            t->rx_frames++;
            if (t->pcap)
                vfw_pcap_write(t->pcap, wall_ns(), buf, (size_t)n);
            if (t->rx)
                t->rx(t->opaque, buf, (size_t)n);
        }
    }
}
