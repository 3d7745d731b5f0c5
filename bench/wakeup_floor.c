/*
 * The floor under the lab's 8-byte RDMA latency: how long the wake-ups an
 * ib_write_lat round trip needs take on this machine, with nothing of
 * vfwarp in them (issue 14's latency target; docs/verbs-bench.md).
 *
 * Each lab host is one QEMU process: a vCPU thread that, under TCG, runs
 * the guest (perftest busy-polls its buffer, so that thread never sleeps)
 * and a main-loop thread that sleeps in ppoll until the wire's socket or a
 * device's event notifier wakes it. A round trip of ib_write_lat through
 * the device is, per direction: the guest rings the doorbell (the vCPU
 * thread writes an eventfd: the bottom half is scheduled), the main loop
 * wakes and sends the frame (sendto on a Unix datagram socket), the peer's
 * main loop wakes, places the data in guest memory, and the peer's vCPU,
 * polling, sees it. This program builds exactly that out of two processes
 * of two threads each, with an empty "device", and times round trips:
 *
 *   bottom_half  doorbell by eventfd, the main loop sends (today's design)
 *   direct       the vCPU thread sends itself (a doorbell that runs the
 *                device in the MMIO exit, as e1000 transmits on a TDT write)
 *
 *   wakeup_floor [round_trips]      prints one JSON object
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct side {
    int sock;                   /* this side's end of the wire */
    int doorbell;               /* eventfd: vCPU -> main loop */
    _Atomic uint64_t *mem;      /* "guest memory" the vCPU polls */
    int direct;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The main loop: frames from the wire land in memory; doorbells send. */
static void *main_loop(void *arg)
{
    struct side *s = arg;
    struct pollfd p[2] = { { s->sock, POLLIN, 0 }, { s->doorbell, POLLIN, 0 } };
    for (;;) {
        if (poll(p, 2, 1000) < 0 && errno != EINTR)
            return NULL;
        if (p[0].revents & POLLIN) {
            uint64_t v;
            if (recv(s->sock, &v, sizeof v, 0) == sizeof v) {
                if (v == UINT64_MAX)
                    return NULL;
                atomic_store(s->mem, v);          /* the "DMA write" */
            }
        }
        if (p[1].revents & POLLIN) {
            uint64_t n, v = atomic_load(&s->mem[1]);
            if (read(s->doorbell, &n, sizeof n) == sizeof n)
                send(s->sock, &v, sizeof v, 0);   /* the bottom half's frame */
        }
    }
}

static void ring(struct side *s, uint64_t v)
{
    if (s->direct) {
        send(s->sock, &v, sizeof v, 0);
    } else {
        uint64_t one = 1;
        atomic_store(&s->mem[1], v);
        if (write(s->doorbell, &one, sizeof one) != sizeof one)
            abort();
    }
}

/* The vCPU: busy-polls memory like perftest, answers or starts the next. */
static uint64_t vcpu(struct side *s, int initiator, int n, uint64_t deadline)
{
    uint64_t t0 = now_ns();
    for (uint64_t i = 1; i <= (uint64_t)n; i++) {
        if (initiator)
            ring(s, i);
        while (atomic_load(s->mem) != i)
            if (now_ns() > deadline)
                return 0;
        if (!initiator)
            ring(s, i);
    }
    return now_ns() - t0;
}

static double run(int direct, int n)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv))
        return -1;
    _Atomic uint64_t *shm = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
                                 MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    int pipefd[2];
    if (shm == MAP_FAILED || pipe(pipefd))
        return -1;
    uint64_t deadline = now_ns() + 60ull * 1000000000u;   /* bounded */
    pid_t pid = fork();
    if (pid == 0) {
        struct side s = { sv[1], eventfd(0, 0), shm + 8, direct };
        pthread_t t;
        pthread_create(&t, NULL, main_loop, &s);
        vcpu(&s, 0, n, deadline);
        _exit(0);
    }
    struct side s = { sv[0], eventfd(0, 0), shm, direct };
    pthread_t t;
    pthread_create(&t, NULL, main_loop, &s);
    uint64_t ns = vcpu(&s, 1, n, deadline);
    uint64_t stop = UINT64_MAX;
    send(sv[0], &stop, sizeof stop, 0);   /* ends the peer's main loop */
    send(sv[1], &stop, sizeof stop, 0);   /* and ours */
    waitpid(pid, NULL, 0);
    pthread_join(t, NULL);
    return ns ? ns / 1000.0 / n : -1;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 20000;
    if (n < 1 || n > 10000000) {
        fprintf(stderr, "usage: wakeup_floor [round_trips 1..10000000]\n");
        return 2;
    }
    double bh = run(0, n), direct = run(1, n);
    printf("{\"round_trips\": %d, \"bottom_half_usec\": %.2f, \"direct_usec\": %.2f}\n",
           n, bh, direct);
    return bh < 0 || direct < 0;
}
