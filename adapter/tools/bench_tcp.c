/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * bench_tcp - goodput of the adapter's TCP pair over the in-memory wire
 * (tests/simwire.h, no loss, MSS 1460, 256 KiB buffers) vs Linux TCP over
 * loopback (fork: writer -> reader, same bytes, same run). Both sides verify
 * nothing (pure movement); both copy the bytes once in and once out.
 * Writes JSON; compare the ratio, not the absolute figures.
 *
 *   bench_tcp OUT.json [MB] [reps]
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "simwire.h"
#include "vfw_tcp.h"

static uint64_t wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ------------------------------------------------------------ vfw pair */
static uint64_t total, sent, rcvd;
static uint8_t src[1460];

static void pump(struct vfw_tcp_conn *c)
{
    while (sent < total) {
        uint32_t n = vfw_tcp_mss(c);
        if (n > total - sent)
            n = (uint32_t)(total - sent);
        if (vfw_tcp_send_record(c, src, n))
            return;
        sent += n;
    }
}

static size_t b_recv(struct vfw_tcp_conn *c, const uint8_t *d, size_t n,
                     void *u)
{
    static uint8_t sink[262144];
    (void)c;
    (void)u;
    memcpy(sink, d, n < sizeof(sink) ? n : sizeof(sink));  /* app copy */
    rcvd += n;
    return n;
}

static void b_connected(struct vfw_tcp_conn *c, int e, void *u)
{
    (void)u;
    if (!e)
        pump(c);
}

static void b_writable(struct vfw_tcp_conn *c, void *u)
{
    (void)u;
    pump(c);
}

static void b_closed(struct vfw_tcp_conn *c, int e, void *u)
{
    (void)c;
    (void)e;
    (void)u;
}

static const struct vfw_tcp_cb CB = {b_connected, b_recv, b_writable,
                                     b_closed};

static const struct vfw_tcp_cb *b_accept(struct vfw_tcp_conn *c, void *lu,
                                         void **cu)
{
    (void)c;
    (void)lu;
    *cu = NULL;
    return &CB;
}

static int b_done(void *x)
{
    (void)x;
    return rcvd >= total;
}

static double vfw_pair(uint64_t bytes, double *cpu_s, uint64_t *frames)
{
    static struct simwire w;
    simwire_init(&w, 42);
    w.delay_ns = 10000;
    struct vfw_tcp_env ea = simwire_env(&w, 0), eb = simwire_env(&w, 1);
    struct vfw_tcp_config ca = {.mac = {2, 0, 0, 0, 0, 1}, .ip = 0x0a000001,
                                .mtu = 1500, .rcv_buf = 262144,
                                .snd_buf = 262144, .max_conns = 4};
    struct vfw_tcp_config cb = ca;
    cb.mac[5] = 2;
    cb.ip = 0x0a000002;
    struct vfw_tcp_stack *a = vfw_tcp_stack_new(&ea, &ca);
    struct vfw_tcp_stack *b = vfw_tcp_stack_new(&eb, &cb);
    simwire_attach_tcp(&w, 0, a);
    simwire_attach_tcp(&w, 1, b);
    vfw_tcp_listen(b, 5000, b_accept, NULL);
    total = bytes;
    sent = rcvd = 0;
    uint64_t t0 = wall_ns(), c0 = cpu_ns();
    int err;
    vfw_tcp_connect(a, 0x0a000002, 5000, 0, &CB, NULL, &err);
    simwire_run(&w, b_done, NULL, 3600 * SIMWIRE_S);
    uint64_t t1 = wall_ns(), c1 = cpu_ns();
    *frames = w.ep[0].sent + w.ep[1].sent;
    vfw_tcp_stack_free(a);
    vfw_tcp_stack_free(b);
    simwire_destroy(&w);
    *cpu_s = (double)(c1 - c0) / 1e9;
    if (rcvd != bytes)
        return -1;
    return (double)bytes / ((double)(t1 - t0) / 1e9);
}

/* ------------------------------------------------------ Linux loopback */
static double linux_loopback(uint64_t bytes)
{
    int ls = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t sl = sizeof(sa);
    if (ls < 0 || bind(ls, (struct sockaddr *)&sa, sizeof(sa)) ||
        listen(ls, 1) || getsockname(ls, (struct sockaddr *)&sa, &sl))
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(s, (struct sockaddr *)&sa, sizeof(sa)))
            _exit(1);
        static uint8_t buf[1460 * 64];
        uint64_t left = bytes;
        while (left) {
            size_t n = left < sizeof(buf) ? left : sizeof(buf);
            ssize_t r = write(s, buf, n);
            if (r <= 0)
                _exit(1);
            left -= (uint64_t)r;
        }
        close(s);
        _exit(0);
    }
    int c = accept(ls, NULL, NULL);
    uint64_t t0 = wall_ns(), got = 0;
    static uint8_t rb[262144];
    for (;;) {
        ssize_t r = read(c, rb, sizeof(rb));
        if (r <= 0)
            break;
        got += (uint64_t)r;
    }
    uint64_t t1 = wall_ns();
    close(c);
    close(ls);
    int st;
    waitpid(pid, &st, 0);
    if (got != bytes)
        return -1;
    return (double)bytes / ((double)(t1 - t0) / 1e9);
}

static void cpu_model(char *out, size_t n)
{
    snprintf(out, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[512];
    while (fgets(line, sizeof(line), f)) {
        if (!strncmp(line, "model name", 10)) {
            char *p = strchr(line, ':');
            if (p) {
                p += 2;
                p[strcspn(p, "\n")] = 0;
                snprintf(out, n, "%s", p);
            }
            break;
        }
    }
    fclose(f);
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_tcp OUT.json [MB] [reps]\n");
        return 2;
    }
    uint64_t mb = argc > 2 ? strtoull(argv[2], NULL, 0) : 256;
    int reps = argc > 3 ? atoi(argv[3]) : 5;
    if (reps < 1 || reps > 50 || mb < 1 || mb > 4096)
        return 2;
    uint64_t bytes = mb * 1000000ull;
    double v[50], l[50], vcpu = 0, cpu;
    uint64_t frames = 0;
    for (int i = 0; i < reps; i++) {   /* interleaved: same noise for both */
        v[i] = vfw_pair(bytes, &cpu, &frames);
        vcpu += cpu;
        l[i] = linux_loopback(bytes);
        if (v[i] < 0 || l[i] < 0) {
            fprintf(stderr, "bench_tcp: transfer failed\n");
            return 1;
        }
    }
    qsort(v, (size_t)reps, sizeof(double), cmp_d);
    qsort(l, (size_t)reps, sizeof(double), cmp_d);
    double vm = v[reps / 2], lm = l[reps / 2];
    char cpu_m[256], commit[64] = "unknown", date[64];
    cpu_model(cpu_m, sizeof(cpu_m));
    FILE *g = popen("git rev-parse HEAD 2>/dev/null", "r");
    if (g) {
        if (fgets(commit, sizeof(commit), g))
            commit[strcspn(commit, "\n")] = 0;
        pclose(g);
    }
    time_t now = time(NULL);
    strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    FILE *o = fopen(argv[1], "w");
    if (!o)
        return 1;
    fprintf(o,
        "{\n"
        "  \"benchmark\": \"adapter-tcp goodput: vfw_tcp pair over in-memory "
        "wire vs Linux TCP over loopback\",\n"
        "  \"command\": \"make -C adapter bench-tcp (%s %s %llu %d)\",\n"
        "  \"bytes_per_run\": %llu,\n  \"reps\": %d,\n"
        "  \"vfw_pair_goodput_MBps_median\": %.1f,\n"
        "  \"linux_loopback_goodput_MBps_median\": %.1f,\n"
        "  \"ratio_vfw_over_linux\": %.3f,\n"
        "  \"vfw_pair_cpu_ns_per_byte_both_stacks\": %.3f,\n"
        "  \"vfw_frames_per_run\": %llu,\n"
        "  \"notes\": \"vfw: both stacks, the wire (one copy per frame into reused buffers) "
        "and both apps on ONE thread; Linux: writer and reader processes on "
        "up to 2 cores, kernel loopback with 64 KiB GSO. MSS 1460, 256 KiB "
        "buffers, no loss. Compare ratios within one run only.\",\n"
        "  \"machine\": {\"cpu\": \"%s\", \"nproc\": %ld, \"date\": \"%s\", "
        "\"git_commit\": \"%s\"}\n"
        "}\n",
        argv[0], argv[1], (unsigned long long)mb, reps,
        (unsigned long long)bytes, reps, vm / 1e6, lm / 1e6, vm / lm,
        vcpu * 1e9 / ((double)bytes * reps), (unsigned long long)frames,
        cpu_m, sysconf(_SC_NPROCESSORS_ONLN), date, commit);
    fclose(o);
    printf("bench_tcp: vfw pair %.1f MB/s, Linux loopback %.1f MB/s, "
           "ratio %.3f -> %s\n", vm / 1e6, lm / 1e6, vm / lm, argv[1]);
    return 0;
}
