/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * iwarp_bench.c - engine-to-engine RDMA WRITE goodput (4 KB .. 4 MB), small
 * message rate and latency, next to a single-thread memcpy of the same
 * bytes and Linux TCP over loopback moving the same bytes, in one run.
 * Writes JSON (argv[1]) with figures, units, command and machine.
 *
 * Engine paths measured:
 *   pipe:    two engines over the in-memory record stream (no TCP): the
 *            iWARP layers alone (DMA gather, DDP/MPA framing, CRC32c both
 *            ways, parse, checks, DMA placement).
 *   tcp:     two engines on the adapter's own TCP over simwire (no faults).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "iwarp_harness.h"
#include "simwire.h"
#include "vfw_iwarp_tcp.h"

#define MEMSZ (10u << 20)
#define DST   (MEM_BASE + (5u << 20))

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t total_for(uint32_t size)
{
    uint64_t t = 256ull << 20;      /* bytes moved per measurement */
    if (t / size > 200000)
        t = (uint64_t)size * 200000;
    return t;
}

/* ---- memcpy ------------------------------------------------------------ */
static volatile uint8_t sink_byte;
static double bench_memcpy(uint32_t size)
{
    uint8_t *a = malloc(size), *b = malloc(size);
    fill(a, size, 1);
    memset(b, 0, size);
    uint64_t total = total_for(size), n = total / size;
    double t0 = now_s();
    for (uint64_t i = 0; i < n; i++) {
        a[i % size] = (uint8_t)i;    /* defeat hoisting */
        memcpy(b, a, size);
        sink_byte = b[(i * 7) % size];
    }
    double dt = now_s() - t0;
    free(a);
    free(b);
    return (double)(n * size) / dt / 1e9;
}

/* The same copy laid out like the engine's buffers: source at offset 0 and
 * destination at +5 MiB of one MEMSZ function memory (the engine's MR),
 * instead of two separately malloc'ed size-byte buffers. Kept next to the
 * original baseline (which stays the reference for the target ratio). */
static double bench_memcpy_layout(uint32_t size)
{
    uint8_t *m = calloc(1, MEMSZ);
    uint8_t *a = m, *b = m + (DST - MEM_BASE);
    fill(a, size, 1);
    uint64_t total = total_for(size), n = total / size;
    double t0 = now_s();
    for (uint64_t i = 0; i < n; i++) {
        a[i % size] = (uint8_t)i;
        memcpy(b, a, size);
        sink_byte = b[(i * 7) % size];
    }
    double dt = now_s() - t0;
    free(m);
    return (double)(n * size) / dt / 1e9;
}

/* ---- engine over the in-memory stream ------------------------------------ */
struct epair {
    uint64_t clock;
    struct host a, b;
    struct pipe p;
    uint32_t pd_a, pd_b, cq_a, cq_b, qp_a, qp_b, mr_a, mr_b;
};

static void epair_setup_objs(struct host *h, uint32_t *pd, uint32_t *cq,
                             uint32_t *qp, uint32_t *mr)
{
    vfw_pd_alloc(h->e, pd);
    vfw_cq_create(h->e, 65536, cq);
    struct vfw_qp_attr a = { .pd_id = *pd, .send_cq = *cq, .recv_cq = *cq,
        .sq_depth = 1024, .rq_depth = 1024, .ord = 16, .ird = 16,
        .max_sge = 4 };
    vfw_qp_create(h->e, &a, qp);
    vfw_mr_reg(h->e, *pd, MEM_BASE, MEMSZ, 7, mr);
}

static void epair_init(struct epair *x, uint8_t crc)
{
    memset(x, 0, sizeof(*x));
    host_init(&x->a, &x->clock, MEMSZ, 1);
    host_init(&x->b, &x->clock, MEMSZ, 2);
    epair_setup_objs(&x->a, &x->pd_a, &x->cq_a, &x->qp_a, &x->mr_a);
    epair_setup_objs(&x->b, &x->pd_b, &x->cq_b, &x->qp_b, &x->mr_b);
    pipe_init(&x->p, &x->a, &x->b, 9000, 4u << 20, 1u << 20, 1);
    x->b.accept_qp = x->qp_b;
    x->b.accept_param = (struct vfw_conn_param){ .mpa_rev = 2, .p2p = 1,
                                                 .crc = crc };
    struct vfw_conn_param cp = { .mpa_rev = 2, .p2p = 1, .crc = crc };
    vfw_connect(x->a.e, x->p.cep[0], x->qp_a, &cp);
    pipe_pump(&x->p);
}

static void epair_fini(struct epair *x)
{
    host_fini(&x->a);
    host_fini(&x->b);
    pipe_fini(&x->p);
}

static double bench_pipe_write(struct epair *x, uint32_t size)
{
    uint64_t total = total_for(size), n = total / size;
    fill(x->a.mem, size, 3);
    struct vfw_cqe c[64];
    double t0 = now_s();
    for (uint64_t i = 0; i < n; i++) {
        struct vfw_send_wr s = { .wr_id = i, .opcode = VFW_WR_RDMA_WRITE,
            .flags = (i % 32 == 31) ? VFW_WR_F_SIGNALED : 0, .num_sge = 1,
            .sge = { { x->mr_a, size, MEM_BASE } }, .remote_stag = x->mr_b,
            .remote_addr = DST };
        while (vfw_post_send(x->a.e, x->qp_a, &s) == -ENOMEM) {
            pipe_pump(&x->p);
            vfw_cq_poll(x->a.e, x->cq_a, c, 64);
        }
        if (i % 8 == 7 || size >= 65536)
            pipe_pump(&x->p);
        vfw_cq_poll(x->a.e, x->cq_a, c, 64);
    }
    pipe_pump(&x->p);
    double dt = now_s() - t0;
    while (vfw_cq_poll(x->a.e, x->cq_a, c, 64) > 0)
        ;
    if (fnv(x->b.mem + (DST - MEM_BASE), size) != fnv(x->a.mem, size))
        fprintf(stderr, "pipe write %u: data mismatch\n", size);
    return (double)(n * size) / dt / 1e9;
}

/* 64-byte Sends: message rate (batched) and one-way latency (ping-pong/2) */
static void bench_pipe_small(struct epair *x, double *rate, double *lat_us)
{
    struct vfw_cqe c[64];
    const uint32_t msz = 64, n = 200000;
    double t0 = now_s();
    for (uint32_t i = 0; i < n; i += 32) {
        for (int k = 0; k < 32; k++) {
            struct vfw_recv_wr r = { .wr_id = i + k, .num_sge = 1,
                                     .sge = { { x->mr_b, msz, DST } } };
            vfw_post_recv(x->b.e, x->qp_b, &r);
            struct vfw_send_wr s = { .wr_id = i + k, .opcode = VFW_WR_SEND,
                .flags = VFW_WR_F_SIGNALED, .num_sge = 1,
                .sge = { { x->mr_a, msz, MEM_BASE } } };
            vfw_post_send(x->a.e, x->qp_a, &s);
        }
        pipe_pump(&x->p);
        while (vfw_cq_poll(x->a.e, x->cq_a, c, 64) > 0)
            ;
        while (vfw_cq_poll(x->b.e, x->cq_b, c, 64) > 0)
            ;
    }
    *rate = n / (now_s() - t0);
    const uint32_t rounds = 50000;
    t0 = now_s();
    for (uint32_t i = 0; i < rounds; i++) {
        struct host *hs[2] = { &x->a, &x->b };
        uint32_t qps[2] = { x->qp_a, x->qp_b }, cqs[2] = { x->cq_a, x->cq_b };
        uint32_t mrs[2] = { x->mr_a, x->mr_b };
        for (int d = 0; d < 2; d++) {
            struct vfw_recv_wr r = { .wr_id = i, .num_sge = 1,
                                     .sge = { { mrs[!d], msz, DST } } };
            vfw_post_recv(hs[!d]->e, qps[!d], &r);
            struct vfw_send_wr s = { .wr_id = i, .opcode = VFW_WR_SEND,
                .num_sge = 1, .sge = { { mrs[d], msz, MEM_BASE } } };
            vfw_post_send(hs[d]->e, qps[d], &s);
            pipe_pump(&x->p);
            while (vfw_cq_poll(hs[!d]->e, cqs[!d], c, 1) == 0)
                pipe_pump(&x->p);
        }
    }
    *lat_us = (now_s() - t0) / rounds / 2 * 1e6;
}

/* ---- engine over the adapter's TCP on simwire ------------------------------*/
static struct simwire TW;
static struct host TA, TB;
static int tcp_est(void *c) { (void)c; return h_find_ev(&TA, VFW_CM_ESTABLISHED) >= 0 && h_find_ev(&TB, VFW_CM_ESTABLISHED) >= 0; }
static uint32_t t_cq_a, t_qp_a, t_mr_a, t_mr_b;
static uint64_t t_done, t_want;
static int tcp_done(void *c)
{
    (void)c;
    struct vfw_cqe q[64];
    int k;
    while ((k = vfw_cq_poll(TA.e, t_cq_a, q, 64)) > 0)
        t_done += (uint64_t)k;
    return t_done >= t_want && TW.n == 0;
}

static double bench_tcp_write(uint32_t size, struct vfw_tcp_stack **sa,
                              struct vfw_tcp_stack **sb, bool init)
{
    if (init) {
        simwire_init(&TW, 9);
        host_init(&TA, &TW.now, MEMSZ, 1);
        host_init(&TB, &TW.now, MEMSZ, 2);
        struct vfw_tcp_env ea = simwire_env(&TW, 0), eb = simwire_env(&TW, 1);
        struct vfw_tcp_config ca = { .mac = { 2, 0, 0, 0, 0, 1 },
            .ip = 0xC0000201u, .mtu = 9000, .rcv_buf = 4u << 20,
            .snd_buf = 4u << 20, .max_conns = 4 };
        struct vfw_tcp_config cb = ca;
        cb.mac[5] = 2;
        cb.ip = 0xC0000202u;
        *sa = vfw_tcp_stack_new(&ea, &ca);
        *sb = vfw_tcp_stack_new(&eb, &cb);
        simwire_attach_tcp(&TW, 0, *sa);
        simwire_attach_tcp(&TW, 1, *sb);
        uint32_t pd, cq, qp;
        epair_setup_objs(&TA, &pd, &t_cq_a, &t_qp_a, &t_mr_a);
        epair_setup_objs(&TB, &pd, &cq, &qp, &t_mr_b);
        TB.accept_qp = qp;
        TB.accept_param = (struct vfw_conn_param){ .mpa_rev = 2, .p2p = 1,
                                                   .crc = 1 };
        vfw_iwarp_tcp_listen(TB.e, *sb, 7174);
        struct vfw_conn_param cp = { .mpa_rev = 2, .p2p = 1, .crc = 1 };
        vfw_iwarp_tcp_connect(TA.e, *sa, 0xC0000202u, 7174, t_qp_a, &cp);
        simwire_run(&TW, tcp_est, NULL, 10 * SIMWIRE_S);
    }
    uint64_t total = total_for(size) / 4, n = total / size;
    if (n < 4)
        n = 4;
    fill(TA.mem, size, 5);
    t_done = 0;
    t_want = 0;
    double t0 = now_s();
    for (uint64_t i = 0; i < n; i++) {
        struct vfw_send_wr s = { .wr_id = i, .opcode = VFW_WR_RDMA_WRITE,
            .flags = VFW_WR_F_SIGNALED, .num_sge = 1,
            .sge = { { t_mr_a, size, MEM_BASE } }, .remote_stag = t_mr_b,
            .remote_addr = DST };
        while (vfw_post_send(TA.e, t_qp_a, &s) == -ENOMEM)
            simwire_run(&TW, tcp_done, NULL, SIMWIRE_S / 1000);
        t_want++;
        if (i % 16 == 15)
            simwire_run(&TW, tcp_done, NULL, SIMWIRE_S);
    }
    simwire_run(&TW, tcp_done, NULL, 60 * SIMWIRE_S);
    double dt = now_s() - t0;
    if (fnv(TB.mem + (DST - MEM_BASE), size) != fnv(TA.mem, size))
        fprintf(stderr, "tcp write %u: data mismatch\n", size);
    return (double)(n * size) / dt / 1e9;
}

/* ---- Linux TCP over loopback -------------------------------------------------*/
static int lo_pair(int *cfd, pid_t *child, int echo, uint32_t size,
                   uint64_t total)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = { .sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t al = sizeof(a);
    if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) ||
        listen(ls, 1) || getsockname(ls, (struct sockaddr *)&a, &al))
        return -1;
    pid_t p = fork();
    if (p == 0) {
        alarm(120);
        int s = accept(ls, NULL, NULL);
        int one = 1;
        setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        uint8_t *buf = malloc(size > 65536 ? size : 65536);
        if (echo) {
            for (;;) {
                size_t got = 0;
                while (got < size) {
                    ssize_t r = read(s, buf + got, size - got);
                    if (r <= 0)
                        _exit(0);
                    got += (size_t)r;
                }
                if (write(s, buf, size) != (ssize_t)size)
                    _exit(1);
            }
        }
        uint64_t got = 0;
        while (got < total) {
            ssize_t r = read(s, buf, size > 65536 ? size : 65536);
            if (r <= 0)
                _exit(1);
            got += (uint64_t)r;
        }
        if (write(s, "k", 1) != 1)
            _exit(1);
        _exit(0);
    }
    close(ls);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(fd, (struct sockaddr *)&a, sizeof(a)))
        return -1;
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    *cfd = fd;
    *child = p;
    return 0;
}

static double bench_lo_tcp(uint32_t size)
{
    uint64_t total = total_for(size), n = total / size;
    int fd;
    pid_t ch;
    if (lo_pair(&fd, &ch, 0, size, n * size))
        return 0;
    uint8_t *buf = malloc(size);
    fill(buf, size, 9);
    double t0 = now_s();
    for (uint64_t i = 0; i < n; i++) {
        size_t off = 0;
        while (off < size) {
            ssize_t w = write(fd, buf + off, size - off);
            if (w <= 0)
                return 0;
            off += (size_t)w;
        }
    }
    char k;
    if (read(fd, &k, 1) != 1)
        return 0;
    double dt = now_s() - t0;
    close(fd);
    waitpid(ch, NULL, 0);
    free(buf);
    return (double)(n * size) / dt / 1e9;
}

static double bench_lo_latency(void)
{
    int fd;
    pid_t ch;
    if (lo_pair(&fd, &ch, 1, 64, 0))
        return 0;
    uint8_t b[64] = { 0 };
    const int rounds = 20000;
    double t0 = now_s();
    for (int i = 0; i < rounds; i++) {
        if (write(fd, b, 64) != 64)
            return 0;
        size_t got = 0;
        while (got < 64) {
            ssize_t r = read(fd, b + got, 64 - got);
            if (r <= 0)
                return 0;
            got += (size_t)r;
        }
    }
    double dt = now_s() - t0;
    close(fd);
    waitpid(ch, NULL, 0);
    return dt / rounds / 2 * 1e6;
}

static double crc_gbps(void)
{
    uint32_t size = 1u << 20;
    uint8_t *a = malloc(size);
    fill(a, size, 2);
    double t0 = now_s();
    uint32_t c = 0;
    for (int i = 0; i < 256; i++)
        c = vfw_crc32c(c, a, size);
    double dt = now_s() - t0;
    sink_byte = (uint8_t)c;
    free(a);
    return 256.0 * size / dt / 1e9;
}

int main(int argc, char **argv)
{
    const char *out = argc > 1 ? argv[1] : "adapter-iwarp.json";
    const char *cmd = argc > 2 ? argv[2] : "iwarp_bench";
    const char *commit = argc > 3 ? argv[3] : "unknown";
    signal(SIGPIPE, SIG_IGN);
    char cpu[256] = "unknown";
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof(line), f))
            if (!strncmp(line, "model name", 10)) {
                char *p = strchr(line, ':');
                if (p) {
                    snprintf(cpu, sizeof(cpu), "%s", p + 2);
                    cpu[strcspn(cpu, "\n")] = 0;
                }
                break;
            }
        fclose(f);
    }
    char date[64];
    time_t t = time(NULL);
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&t));

    static const uint32_t sizes[] = { 4096, 16384, 65536, 262144, 1u << 20,
                                      4u << 20 };
    enum { NS = sizeof(sizes) / sizeof(sizes[0]) };
    double mc[NS], ml[NS], pw[NS], pn[NS], tw[NS], lo[NS];
    static struct epair x, xn;
    epair_init(&x, 1);
    epair_init(&xn, 0);
    struct vfw_tcp_stack *sa = NULL, *sb = NULL;
    for (int i = 0; i < NS; i++) {
        /* best of 3 of each (a shared, noisy machine), interleaved */
        mc[i] = ml[i] = pw[i] = pn[i] = tw[i] = lo[i] = 0;
        for (int rep = 0; rep < 3; rep++) {
            double v;
            if ((v = bench_memcpy(sizes[i])) > mc[i]) mc[i] = v;
            if ((v = bench_memcpy_layout(sizes[i])) > ml[i]) ml[i] = v;
            if ((v = bench_pipe_write(&x, sizes[i])) > pw[i]) pw[i] = v;
            if ((v = bench_pipe_write(&xn, sizes[i])) > pn[i]) pn[i] = v;
            if ((v = bench_tcp_write(sizes[i], &sa, &sb, i == 0 && rep == 0)) > tw[i])
                tw[i] = v;
            if ((v = bench_lo_tcp(sizes[i])) > lo[i]) lo[i] = v;
        }
        fprintf(stderr, "%8u B: memcpy %.2f GB/s (engine layout %.2f)  "
                "engine(pipe) %.2f (%.3fx)  "
                "no-CRC %.2f (%.3fx)  engine(own TCP) %.2f (%.3fx)  "
                "linux-lo-tcp %.2f GB/s\n", sizes[i], mc[i], ml[i], pw[i],
                pw[i] / mc[i], pn[i], pn[i] / mc[i], tw[i], tw[i] / mc[i],
                lo[i]);
    }
    double rate, lat;
    bench_pipe_small(&x, &rate, &lat);
    double lo_lat = bench_lo_latency();
    double crc = crc_gbps();
    fprintf(stderr, "64 B sends: %.0f msg/s, latency %.2f us (linux lo tcp "
            "%.2f us); crc32c %.2f GB/s (%s)\n", rate, lat, lo_lat, crc,
            vfw_crc32c_is_hw() ? "sse4.2" : "bitwise");
    epair_fini(&x);
    epair_fini(&xn);

    FILE *o = fopen(out, "w");
    if (!o) {
        perror(out);
        return 1;
    }
    fprintf(o, "{\n  \"benchmark\": \"adapter-iwarp\",\n");
    fprintf(o, "  \"command\": \"%s\",\n  \"git_commit\": \"%s\",\n", cmd,
            commit);
    fprintf(o, "  \"machine\": {\"cpu\": \"%s\", \"nproc\": %ld, \"date\": "
            "\"%s\"},\n", cpu, sysconf(_SC_NPROCESSORS_ONLN), date);
    fprintf(o, "  \"notes\": \"RDMA WRITE goodput engine-to-engine, MPA CRC32c on (nocrc: CRC negotiated off, RFC 5044 allows); "
            "pipe = iWARP layers over an in-memory record stream (MSS 9000); "
            "own_tcp = the adapter's TCP over simwire (MTU 9000, no faults); "
            "ratios (*_vs_memcpy, the target's reference) are to a single-thread memcpy of the same message size "
            "between two separately allocated buffers of that size, in the same run; "
            "memcpy_engine_layout_GBps = the same memcpy between the engine's source and destination "
            "offsets (0 and +5 MiB) of one 10 MiB function memory, with *_vs_memcpy_layout ratios; "
            "the pipe LLP offers the zero-copy reserve/commit record pair (FPDUs built in the stream buffer); "
            "each figure is the best of 3 interleaved repetitions\",\n");
    fprintf(o, "  \"rdma_write_goodput\": [\n");
    for (int i = 0; i < NS; i++)
        fprintf(o, "    {\"size_bytes\": %u, \"memcpy_GBps\": %.3f, "
                "\"memcpy_engine_layout_GBps\": %.3f, "
                "\"engine_pipe_GBps\": %.3f, \"engine_pipe_vs_memcpy\": %.3f, "
                "\"engine_pipe_vs_memcpy_layout\": %.3f, "
                "\"engine_pipe_nocrc_GBps\": %.3f, \"engine_pipe_nocrc_vs_memcpy\": %.3f, "
                "\"engine_pipe_nocrc_vs_memcpy_layout\": %.3f, "
                "\"engine_own_tcp_GBps\": %.3f, \"engine_own_tcp_vs_memcpy\": %.3f, "
                "\"linux_loopback_tcp_GBps\": %.3f}%s\n",
                sizes[i], mc[i], ml[i], pw[i], pw[i] / mc[i], pw[i] / ml[i],
                pn[i], pn[i] / mc[i], pn[i] / ml[i],
                tw[i], tw[i] / mc[i], lo[i], i + 1 < NS ? "," : "");
    fprintf(o, "  ],\n");
    fprintf(o, "  \"small_send_64B\": {\"engine_pipe_msgs_per_s\": %.0f, "
            "\"engine_pipe_latency_us\": %.3f, "
            "\"linux_loopback_tcp_latency_us\": %.3f},\n", rate, lat, lo_lat);
    fprintf(o, "  \"crc32c_GBps\": %.3f, \"crc32c_impl\": \"%s\"\n}\n", crc,
            vfw_crc32c_is_hw() ? "sse4.2" : "bitwise");
    fclose(o);
    return 0;
}
