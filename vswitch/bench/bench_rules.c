/* bench_rules.c - cost of incremental rule changes (vsw_rule_add / _del /
 * _replace) against a full recompile (vsw_acl_set), at 1, 4096 and ~65536
 * rules of the vswitch bench's tenant rule set (each rule scoped to its
 * VF's in-port), and what the incrementally built set costs the data path.
 *
 * Per size: the table is filled with one vsw_rule_add_many; then `ops`
 * rounds of (add a new rule, delete a random one, replace a random one in
 * place, replace one with a new priority), each call timed alone with
 * CLOCK_MONOTONIC (wall time: an admin command's latency, page faults of
 * the new set's arrays included); the rule count stays where it was.
 * Reported: median, 99th percentile, max and mean (the mean includes the
 * full rebuilds the table does every so often).  At the largest size the
 * rank space is nearly full, so inserts move neighbours (shifts).
 *
 *   bench_rules [--out FILE] [--ops N] [--secs S]
 */
#include "trace.h"
#include "bench_machine.h"
#include <unistd.h>

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

typedef struct fig { char name[96]; double value; const char *unit; } fig;
static fig figs[128];
static int nf;
#define FIG(v, u, ...) do { snprintf(figs[nf].name, sizeof(figs[nf].name), __VA_ARGS__); \
    figs[nf].value = (v); figs[nf].unit = (u); nf++; } while (0)

static void summary(const char *what, size_t n, double *lat, size_t k)
{
    qsort(lat, k, sizeof(double), cmpd);
    double sum = 0;
    for (size_t i = 0; i < k; i++)
        sum += lat[i];
    double med = lat[k / 2], p99 = lat[k * 99 / 100], mx = lat[k - 1], mean = sum / (double)k;
    fprintf(stderr, "  %-16s median %8.1f us  p99 %8.1f us  max %9.1f us  mean %8.1f us\n",
            what, med * 1e6, p99 * 1e6, mx * 1e6, mean * 1e6);
    FIG(med * 1e6, "us", "rule_%s_median_%zu_rules", what, n);
    FIG(p99 * 1e6, "us", "rule_%s_p99_%zu_rules", what, n);
    FIG(mx * 1e6, "us", "rule_%s_max_%zu_rules", what, n);
    FIG(mean * 1e6, "us", "rule_%s_mean_%zu_rules", what, n);
}

static vsw_trule as_trule(const vsw_rule *r, uint64_t cookie)
{
    vsw_trule t;
    memset(&t, 0, sizeof(t));
    t.cookie = cookie;
    t.rule = *r;
    t.scope = r->in_port;           /* tenant rules: the VF's block */
    return t;
}

/* ns per frame of the bench trace through the switch (burst API, thread
 * CPU time, best of 3) */
static double ns_per_frame(vsw_switch *sw, trace *t, double secs)
{
    vsw_decision d[BURSTSZ];
    double best = 1e30;
    for (int rep = 0; rep < 3; rep++) {
        size_t frames = 0;
        double t0 = now_s(), el;
        do {
            for (size_t b = 0; b < t->n / BURSTSZ; b++)
                vsw_process_burst(sw, t->port[b], t->fr + b * BURSTSZ, t->len + b * BURSTSZ,
                                  BURSTSZ, 0, d);
            frames += t->n;
            el = now_s() - t0;
        } while (el < secs);
        if (el / (double)frames < best)
            best = el / (double)frames;
    }
    return best * 1e9;
}

int main(int argc, char **argv)
{
    const char *out = NULL;
    unsigned ops = 1000;
    double secs = 0.3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--out") && i + 1 < argc) out = argv[++i];
        else if (!strcmp(argv[i], "--ops") && i + 1 < argc) ops = (unsigned)atoi(argv[++i]);
        else if (!strcmp(argv[i], "--secs") && i + 1 < argc) secs = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--out FILE] [--ops N] [--secs S]\n", argv[0]);
            return 2;
        }
    }
    /* 65536 - 64: the table's limit is 65536 rules, and the rounds add one
     * before they delete one */
    static const size_t sizes[] = {1, 4096, 65536 - 64};
    for (int si = 0; si < 3; si++) {
        size_t n = sizes[si];
        /* bounded: ~20 ms an operation at the largest size */
        unsigned k = n > 10000 ? (ops < 100 ? ops : 100) : ops;
        vsw_rule *pool = bench_rules(n + 4 * k);    /* extra rules to add */
        vsw_switch *sw = bench_switch(), *ref = bench_switch();
        vsw_error err;
        double t0 = wall();
        if (vsw_acl_set(ref, pool, n, &err)) {
            fprintf(stderr, "acl_set: %s\n", err.msg);
            return 1;
        }
        double full_set = wall() - t0;
        vsw_trule *tr = malloc(n * sizeof(*tr));
        for (size_t i = 0; i < n; i++)
            tr[i] = as_trule(&pool[i], i + 1);
        t0 = wall();
        if (vsw_rule_add_many(sw, tr, n, &err)) {
            fprintf(stderr, "add_many: %s\n", err.msg);
            return 1;
        }
        double bulk = wall() - t0;
        fprintf(stderr, "%zu rules: full recompile (vsw_acl_set) %.2f ms, table bulk add %.2f ms\n",
                n, full_set * 1e3, bulk * 1e3);
        FIG(full_set * 1e3, "ms", "acl_set_full_recompile_%zu_rules", n);
        FIG(bulk * 1e3, "ms", "rule_add_many_%zu_rules", n);
        uint64_t *live = malloc((n + 1) * sizeof(uint64_t));
        size_t nlive = n;
        for (size_t i = 0; i < n; i++)
            live[i] = i + 1;
        double *la = malloc(k * sizeof(double)), *ld = malloc(k * sizeof(double));
        double *lr = malloc(k * sizeof(double)), *lp = malloc(k * sizeof(double));
        uint64_t next = n + 1;
        size_t extra = n;
        int fails = 0;
        for (unsigned i = 0; i < k; i++) {
            vsw_trule t = as_trule(&pool[extra++], next);
            t0 = wall();
            fails += vsw_rule_add(sw, &t, &err) != 0;
            la[i] = wall() - t0;
            live[nlive++] = next++;
            size_t j = rndn((unsigned)nlive);
            t0 = wall();
            fails += vsw_rule_del(sw, live[j], &err) != 0;
            ld[i] = wall() - t0;
            live[j] = live[--nlive];
            j = rndn((unsigned)nlive);
            vsw_trule cur;
            vsw_rule_get(sw, live[j], &cur);
            t = as_trule(&pool[extra++], live[j]);
            t.rule.priority = cur.rule.priority;        /* in place */
            t0 = wall();
            fails += vsw_rule_replace(sw, &t, &err) != 0;
            lr[i] = wall() - t0;
            j = rndn((unsigned)nlive);
            t = as_trule(&pool[extra++], live[j]);      /* new priority */
            t0 = wall();
            fails += vsw_rule_replace(sw, &t, &err) != 0;
            lp[i] = wall() - t0;
        }
        if (fails) {
            fprintf(stderr, "%d operations failed: %s\n", fails, err.msg);
            return 1;
        }
        vsw_rule_table_stats st;
        vsw_rule_table_get_stats(sw, &st);
        fprintf(stderr, "  %u rounds: %llu full builds, %llu shifts; now %zu delta, %zu struck, "
                "rank space %zu\n", k, (unsigned long long)st.full_builds,
                (unsigned long long)st.shifts, st.delta_rules, st.struck, st.rank_space);
        summary("add", n, la, k);
        summary("del", n, ld, k);
        summary("replace", n, lr, k);
        summary("replace_prio", n, lp, k);
        FIG((double)st.full_builds, "count", "rule_full_builds_in_%u_rounds_%zu_rules", k, n);
        FIG((double)st.shifts, "count", "rule_shifts_in_%u_rounds_%zu_rules", k, n);
        if (n >= 4096) {
            /* the data path on the incrementally built set (base trees with
             * hidden rules kept, struck entries, a delta tree) against the
             * same rules compiled whole */
            size_t m = 0;
            vsw_rule *now = malloc(st.rules * sizeof(*now));
            for (size_t i = 0; i < nlive; i++) {
                vsw_trule x;
                if (!vsw_rule_get(sw, live[i], &x))
                    now[m++] = x.rule;
            }
            vsw_acl_set(ref, now, m, &err);
            trace tt;
            make_trace(&tt, now, m, TRACE, NVF);
            double inc = ns_per_frame(sw, &tt, secs), whole = ns_per_frame(ref, &tt, secs);
            fprintf(stderr, "  data path: %.1f ns/frame on the table's set (%zu delta, %zu struck), "
                    "%.1f on the same rules compiled whole\n", inc, st.delta_rules, st.struck, whole);
            FIG(inc, "ns", "ns_per_frame_table_set_%zu_rules", n);
            FIG(whole, "ns", "ns_per_frame_whole_set_same_rules_%zu_rules", n);
            free_trace(&tt);
            free(now);
        }
        free(la); free(ld); free(lr); free(lp);
        free(live);
        free(tr);
        free(pool);
        vsw_destroy(sw);
        vsw_destroy(ref);
    }
    if (out) {
        FILE *f = fopen(out, "w");
        if (!f) { perror(out); return 1; }
        const char *cmd = "make -C vswitch bench-rules";
        fprintf(f, "{\n  \"component\": \"vswitch rule table\",\n  \"command\": \"%s\",\n", cmd);
        bench_write_machine(f);
        fprintf(f, "  \"setup\": \"the vswitch bench's tenant rules (%d VFs), each scoped to its "
                "VF's in-port; table filled with vsw_rule_add_many, then rounds of add, delete, "
                "replace in place, replace with a new priority (%u rounds, 100 at the largest "
                "size), each call timed alone in wall time (CLOCK_MONOTONIC; shared machine); "
                "mean includes the periodic full rebuilds; ns_per_frame: the bench trace, burst "
                "API, thread CPU time, best of 3 x %.2f s\",\n", NVF, ops, secs);
        fprintf(f, "  \"figures\": [\n");
        for (int i = 0; i < nf; i++)
            fprintf(f, "    {\"name\": \"%s\", \"value\": %.4g, \"unit\": \"%s\", \"command\": \"%s\"}%s\n",
                    figs[i].name, figs[i].value, figs[i].unit, cmd, i + 1 < nf ? "," : "");
        fprintf(f, "  ]\n}\n");
        fclose(f);
    }
    return 0;
}
