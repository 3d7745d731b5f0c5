/* acl_profile.c - where the tree classifier's time goes on the benchmark's
 * workload (same rule sets and trace as bench_vswitch.c, see trace.h).
 *
 * For each rule-set size it prints:
 *   - the shape the trace sees: internal levels walked, leaf groups (and
 *     the share of frames whose leaf is one group) and leaf entries reached
 *     per frame (mean and max), and how many frames match a rule;
 *   - the classifier alone (vsw_acl_lookup_tree_burst on the frames' keys,
 *     no parsing, forwarding or actions), in ns per frame, three ways:
 *       trace order     - as the throughput benchmark feeds it;
 *       shuffled        - bursts and the frames inside each burst in a new
 *                         random order on every pass over the trace, so
 *                         the branch predictor cannot learn the (repeating)
 *                         trace; burst composition (one VF) is unchanged;
 *       2 VFs           - a trace drawn from 2 VFs only, so the part of the
 *                         compiled set it touches fits in L2.
 * The keys are built as the data path builds them, and every frame's
 * classification is checked against vsw_process on the same switch: the
 * tool exits 1 if any differs.
 *
 * Usage: build/opt/acl_profile [--only RULES] [--secs S]   (make -C vswitch profile)
 */
#define _GNU_SOURCE
#include "trace.h"
#include "vsw_internal.h"

/* The key the data path builds for trace frame i (vsw_parse_key plus the
 * w0 fields process.c fills in: in_port, FDB destination, VID). */
static void frame_key(vsw_switch *sw, const trace *t, size_t i, vsw_key *k,
                      vsw_decision *d)
{
    vsw_l2 l2;
    unsigned in = t->port[i / BURSTSZ];
    vsw_parse_key(t->fr[i], t->len[i], k, &l2);
    vsw_process(sw, in, t->fr[i], t->len[i], 0, d);
    const uint8_t *dst = t->fr[i];
    /* the bench's FDB (bench_switch): 02:00:00:00:01:xx is port xx;
     * anything else floods */
    int known = dst[0] == 2 && !dst[1] && !dst[2] && !dst[3] && dst[4] == 1 &&
                dst[5] >= 2 && dst[5] < 2 + NVF;
    uint64_t op = known ? dst[5] : 0xfe;
    k->w[0] |= (uint64_t)(in & 0xff) << 56 | op << 48 | (uint64_t)d->vid << 32;
}

typedef struct keyset { vsw_key *k; size_t n; } keyset;

static int build_keys(vsw_switch *sw, const vsw_acl *a, const trace *t, keyset *ks,
                      int print_shape)
{
    ks->n = t->n;
    ks->k = aligned_alloc(64, sizeof(vsw_key) * t->n);
    if (!ks->k) {
        fprintf(stderr, "out of memory\n");
        return -1;
    }
    double lv = 0, gr = 0, one = 0, en = 0, matched = 0;
    unsigned lmax = 0, emax = 0;
    for (size_t i = 0; i < t->n; i++) {
        vsw_decision d;
        frame_key(sw, t, i, &ks->k[i], &d);
        uint32_t rk = vsw_acl_lookup_tree(a, &ks->k[i], VSW_LEAF_BEST);
        int32_t rule = rk == UINT32_MAX ? -1 : (int32_t)a->act[rk].index;
        if (rule != d.rule) {
            fprintf(stderr, "frame %zu: key gives rule %d, vsw_process gave %d\n",
                    i, rule, d.rule);
            return -1;
        }
        unsigned l, g, e;
        vsw_acl_path_stats(a, &ks->k[i], &l, &g, &e);
        lv += l;
        gr += g;
        one += g == 1;
        en += e;
        lmax = l > lmax ? l : lmax;
        emax = e > emax ? e : emax;
        matched += rule >= 0;
    }
    if (print_shape)
        printf("  per frame: %.2f levels (max %u), %.2f leaf groups (%.0f%% of frames one), "
               "%.2f leaf entries (max %u), %.0f%% match a rule\n",
               lv / (double)t->n, lmax, gr / (double)t->n, 100.0 * one / (double)t->n,
               en / (double)t->n, emax, 100.0 * matched / (double)t->n);
    return 0;
}

/* ns per frame of the burst classifier over ks, best of 3; shuffle: new
 * random order of bursts and of frames within bursts on every pass. */
static double time_classify(const vsw_acl *a, const keyset *ks, int shuffle, double secs)
{
    size_t nb = ks->n / BURSTSZ;
    uint32_t *order = malloc(sizeof(uint32_t) * ks->n);
    vsw_key *buf = aligned_alloc(64, sizeof(vsw_key) * BURSTSZ);
    if (!order || !buf) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    uint32_t rank[BURSTSZ];
    uint64_t sink = 0;
    double best = 1e30;
    for (size_t i = 0; i < ks->n; i++)
        order[i] = (uint32_t)i;
    for (int rep = 0; rep < 3; rep++) {
        double spent = 0;
        size_t frames = 0;
        while (spent < secs) {
            if (shuffle) {          /* not timed */
                for (size_t b = nb - 1; b > 0; b--) {
                    size_t j = rndn((unsigned)b + 1);
                    for (size_t f = 0; f < BURSTSZ; f++) {
                        uint32_t x = order[b * BURSTSZ + f];
                        order[b * BURSTSZ + f] = order[j * BURSTSZ + f];
                        order[j * BURSTSZ + f] = x;
                    }
                }
                for (size_t b = 0; b < nb; b++)
                    for (size_t f = BURSTSZ - 1; f > 0; f--) {
                        size_t j = rndn((unsigned)f + 1);
                        uint32_t x = order[b * BURSTSZ + f];
                        order[b * BURSTSZ + f] = order[b * BURSTSZ + j];
                        order[b * BURSTSZ + j] = x;
                    }
            }
            double t0 = now_s();
            for (size_t b = 0; b < nb; b++) {
                /* gather the burst's keys as the data path has them: in a
                 * contiguous array (the same copy is made in trace order) */
                for (size_t f = 0; f < BURSTSZ; f++)
                    buf[f] = ks->k[order[b * BURSTSZ + f]];
                vsw_acl_lookup_tree_burst(a, buf, BURSTSZ, rank, VSW_LEAF_BEST);
                sink += rank[b % BURSTSZ];
            }
            spent += now_s() - t0;
            frames += ks->n;
        }
        double ns = spent * 1e9 / (double)frames;
        if (ns < best)
            best = ns;
    }
    free(order);
    free(buf);
    if (sink == 42)
        fputc(' ', stderr);
    return best;
}

int main(int argc, char **argv)
{
    size_t only = 0;
    double secs = 0.3;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--only") && i + 1 < argc) only = (size_t)atol(argv[++i]);
        else if (!strcmp(argv[i], "--secs") && i + 1 < argc) secs = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--only RULES] [--secs S]\n", argv[0]);
            return 2;
        }
    }
    static const size_t sizes[] = {16, 256, 4096, 65536};
    for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++) {
        size_t n = sizes[si];
        if (only && n != only)
            continue;
        vsw_switch *sw = bench_switch();
        vsw_rule *rules = bench_rules(n);
        vsw_error err;
        if (!sw || !rules || vsw_acl_set(sw, rules, n, &err)) {
            fprintf(stderr, "acl_set failed\n");
            return 1;
        }
        const vsw_acl *a = vsw_cur(sw)->acl;
        size_t refs = 0;
        for (size_t i = 0; i < a->ntrees; i++)
            refs += a->trees[i].nleafrefs;
        printf("%zu rules: %zu tree(s), %.2f leaf references per rule, %.1f MB compiled\n",
               n, a->ntrees, (double)refs / (double)n, (double)a->bytes / 1e6);
        trace t, t2;
        make_trace(&t, rules, n, TRACE, NVF);
        make_trace(&t2, rules, n, TRACE, 2);
        keyset ks, ks2;
        if (build_keys(sw, a, &t, &ks, 1) || build_keys(sw, a, &t2, &ks2, 0))
            return 1;
        double in_order = time_classify(a, &ks, 0, secs);
        double shuffled = time_classify(a, &ks, 1, secs);
        double two_vf = time_classify(a, &ks2, 0, secs);
        printf("  classifier alone, ns/frame: trace order %.1f, shuffled %.1f, 2 VFs %.1f\n",
               in_order, shuffled, two_vf);
        free(ks.k);
        free(ks2.k);
        free_trace(&t);
        free_trace(&t2);
        free(rules);
        vsw_destroy(sw);
    }
    return 0;
}
