/* trace.h - the benchmark's rule sets and frame trace, shared by
 * bench_vswitch.c (throughput) and acl_profile.c (where the classifier's
 * time goes), so both measure the same workload. */
#ifndef VSW_BENCH_TRACE_H
#define VSW_BENCH_TRACE_H
#include "../tests/testlib.h"
#include "../tests/rulegen.h"
#include <time.h>

#define NVF     128
#define TRACE   16384         /* frames in the trace (cycled), --trace N    */
#define BURSTSZ 32
#define FRAME   64

static inline double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct trace {
    size_t   n;               /* frames, a multiple of BURSTSZ              */
    uint8_t  (*buf)[FRAME];
    const uint8_t **fr;
    size_t   *len;
    unsigned *port;           /* in_port per burst                          */
} trace;

/* `frames` frames in bursts of one VF each, the VF drawn from the first
 * `nvf` VFs; 90% built to hit one of that VF's rules, 10% random. */
static inline void make_trace(trace *t, const vsw_rule *rules, size_t n, size_t frames,
                       unsigned nvf)
{
    t->n = frames / BURSTSZ * BURSTSZ;
    t->buf = malloc(sizeof(*t->buf) * t->n);
    t->fr = malloc(sizeof(*t->fr) * t->n);
    t->len = malloc(sizeof(*t->len) * t->n);
    t->port = malloc(sizeof(*t->port) * (t->n / BURSTSZ));
    size_t *byport[2 + NVF];
    size_t cnt[2 + NVF] = {0};
    for (unsigned p = 0; p < 2 + NVF; p++)
        byport[p] = malloc(sizeof(size_t) * (n + 1));
    for (size_t i = 0; i < n; i++)
        byport[rules[i].in_port][cnt[rules[i].in_port]++] = i;
    for (size_t b = 0; b < t->n / BURSTSZ; b++) {
        unsigned p = 2 + rndn(nvf);
        t->port[b] = p;
        for (size_t j = 0; j < BURSTSZ; j++) {
            size_t i = b * BURSTSZ + j;
            tframe f;
            unsigned inp;
            const vsw_rule *r = cnt[p] && rndn(10) ? &rules[byport[p][rndn((unsigned)cnt[p])]] : NULL;
            rg_frame(r, &f, &inp, 2 + NVF);
            f.vid = -1;
            memcpy(f.src, (uint8_t[6]){0x02, 0, 0, 0, 1, (uint8_t)p}, 6);
            memcpy(f.dst, (uint8_t[6]){0x02, 0, 0, 0, 1, (uint8_t)(2 + rndn(NVF))}, 6);
            if (!rndn(8))
                f.dst[4] = 2;                       /* unknown: to uplink */
            size_t hdr = f.ethertype == 0x86dd ? 54 : 34;
            hdr += f.proto == 6 ? 20 : 8;
            f.payload = hdr < FRAME ? FRAME - hdr : 0;
            uint8_t tmp[256];
            size_t l = tf_build(&f, tmp);
            memcpy(t->buf[i], tmp, FRAME);
            t->len[i] = l < FRAME ? l : FRAME;
            t->fr[i] = t->buf[i];
        }
    }
    for (unsigned p = 0; p < 2 + NVF; p++)
        free(byport[p]);
}

static inline void free_trace(trace *t)
{
    free(t->buf); free(t->fr); free(t->len); free(t->port);
}

/* The benchmark's switch: NVF VFs, one static FDB entry per VF
 * (02:00:00:00:01:xx is port xx). */
static inline vsw_switch *bench_switch(void)
{
    vsw_config cfg = { .num_vfs = NVF };
    vsw_switch *sw = vsw_create(&cfg);
    for (unsigned v = 0; sw && v < NVF; v++)
        vsw_fdb_add(sw, (uint8_t[6]){0x02, 0, 0, 0, 1, (uint8_t)(2 + v)}, 0, 2 + v, NULL);
    return sw;
}

/* The benchmark's rule set of n tenant rules (deterministic per n). */
static inline vsw_rule *bench_rules(size_t n)
{
    t_rng = 0x1234567 + n;
    vsw_rule *rules = calloc(n ? n : 1, sizeof(*rules));
    for (size_t i = 0; rules && i < n; i++)
        rg_rule(&rules[i], RG_TENANT, 2 + NVF);
    return rules;
}

#endif
