/* bench_qos.c - accuracy of the link QoS scheduler (vswitch.h "Link QoS")
 * at 1, 8 and 128 VFs, in simulated time (tests/qos_sim.h):
 *   rate limiter: every VF saturates with its own tx_max (together 90% of
 *     the link): the largest and the mean |error| of a VF's rate against
 *     its tx_max;
 *   weighted share: every VF saturates, tx_weight 1..4, no caps: the
 *     largest and the mean |error| of a VF's rate against
 *     link x weight / sum of weights;
 *   tenants (128 VFs): 8 tenant nodes of 16 VFs, node weights 1..8;
 *   and the CPU time the simulation takes per frame sent (enqueue, pick,
 *   charge and the simulator itself).
 * VF i sends frames of 64 + (i * 97) % 1437 bytes, so shares are measured
 * in bytes with mixed sizes.  10 Gbit/s line, no wire overhead (so the link
 * carries exactly its rate in frame bytes); 20 ms warm-up, 200 ms measured.
 * Writes JSON (figure, value, unit, command, machine). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include "qos_sim.h"
#include "bench_machine.h"

#define LINE 10e9
#define MSEC 1000000ull
/* long enough that a tx_max bucket's 16 KiB burst (4.7 ms at the smallest
 * rate here, 28 Mbit/s) is noise: 50 ms measured showed 4% at 128 VFs */
#define WARM (20 * MSEC)
#define MEAS (200 * MSEC)

typedef struct fig { char name[96]; double value; const char *unit; } fig;
static fig figs[64];
static int nf;

static void add(const char *name, double v, const char *unit)
{
    snprintf(figs[nf].name, sizeof(figs[nf].name), "%s", name);
    figs[nf].value = v;
    figs[nf].unit = unit;
    nf++;
    fprintf(stderr, "%-48s %10.4f %s\n", name, v, unit);
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static uint32_t frame_len(unsigned i) { return 64 + (i * 97) % 1437; }

/* Run and report max/mean relative error of each VF against want[]. */
static void measure(sim *m, const double *want, const char *what, unsigned nvf)
{
    double t0 = cpu_now();
    run(m, 0, WARM, WARM + MEAS);
    double cpu = cpu_now() - t0;
    double maxe = 0, sum = 0;
    uint64_t frames = 0;
    for (unsigned i = 0; i < m->n; i++) {
        double e = fabs(rate_of(m, &m->s[i], WARM, WARM + MEAS) - want[i]) / want[i];
        maxe = e > maxe ? e : maxe;
        sum += e;
        frames += m->s[i].bytes;    /* bytes here; frames below */
    }
    vsw_qos_tc_stats st;
    vsw_qos_tc_stats_get(m->q, 0, &st);
    char name[96];
    snprintf(name, sizeof(name), "%s_max_error_%uvf", what, nvf);
    add(name, 100 * maxe, "%");
    snprintf(name, sizeof(name), "%s_mean_error_%uvf", what, nvf);
    add(name, 100 * sum / m->n, "%");
    snprintf(name, sizeof(name), "%s_sim_cpu_per_frame_%uvf", what, nvf);
    add(name, cpu / (double)st.sent_pkts, "ns");
    (void)frames;
}

static void rate_limiter(unsigned nvf)
{
    static sim m;
    memset(&m, 0, sizeof(m));
    m.q = vsw_qos_create(nvf, NULL);
    vsw_qos_set_line(m.q, (uint64_t)LINE, 0, NULL);
    double want[MAXSRC], wsum = 0;
    for (unsigned i = 0; i < nvf; i++)
        wsum += 1 + i % 4;
    for (unsigned i = 0; i < nvf; i++) {
        want[i] = 0.9 * LINE * (1 + i % 4) / wsum;
        vsw_qos_rate r;
        vsw_qos_rate_default(&r);
        r.tx_max = (uint64_t)want[i];
        vsw_qos_leaf_set(m.q, i, &r, NULL);
        add_src(&m, i, 0, frame_len(i), 0);
    }
    measure(&m, want, "rate_limiter", nvf);
    vsw_qos_destroy(m.q);
}

static void shares(unsigned nvf, int tenants)
{
    static sim m;
    memset(&m, 0, sizeof(m));
    m.q = vsw_qos_create(nvf, NULL);
    vsw_qos_set_line(m.q, (uint64_t)LINE, 0, NULL);
    double want[MAXSRC], wsum = 0;
    if (tenants) {          /* 8 nodes, weights 1..8, VFs equal inside */
        for (unsigned n = 1; n <= 8; n++) {
            vsw_qos_rate r;
            vsw_qos_rate_default(&r);
            r.tx_weight = n;
            vsw_qos_node_add(m.q, n, &r, NULL);
        }
        for (unsigned i = 0; i < nvf; i++) {
            vsw_qos_rate r;
            vsw_qos_rate_default(&r);
            r.parent = (uint16_t)(1 + i % 8);
            vsw_qos_leaf_set(m.q, i, &r, NULL);
            want[i] = LINE * (1 + i % 8) / 36.0 / (nvf / 8);
            add_src(&m, i, 0, frame_len(i), 0);
        }
        measure(&m, want, "tenant_share", nvf);
    } else {
        for (unsigned i = 0; i < nvf; i++)
            wsum += 1 + i % 4;
        for (unsigned i = 0; i < nvf; i++) {
            vsw_qos_rate r;
            vsw_qos_rate_default(&r);
            r.tx_weight = 1 + i % 4;
            vsw_qos_leaf_set(m.q, i, &r, NULL);
            want[i] = LINE * (1 + i % 4) / wsum;
            add_src(&m, i, 0, frame_len(i), 0);
        }
        measure(&m, want, "weighted_share", nvf);
    }
    vsw_qos_destroy(m.q);
}

int main(int argc, char **argv)
{
    const char *out = argc > 2 && !strcmp(argv[1], "--out") ? argv[2] : NULL;
    static const unsigned nvfs[] = {1, 8, 128};
    for (unsigned k = 0; k < 3; k++) {
        rate_limiter(nvfs[k]);
        shares(nvfs[k], 0);
    }
    shares(128, 1);
    if (!out)
        return 0;
    FILE *f = fopen(out, "w");
    if (!f) {
        perror(out);
        return 1;
    }
    const char *cmd = "make -C vswitch bench-qos";
    fprintf(f, "{\n  \"component\": \"vswitch-qos\",\n  \"command\": \"%s\",\n", cmd);
    bench_write_machine(f);
    fprintf(f, "  \"setup\": \"link QoS scheduler in simulated time (vswitch/tests/qos_sim.h): "
               "10 Gbit/s line, no wire overhead, every VF saturating with back-pressure, VF i "
               "sends frames of 64 + (i * 97) %% 1437 bytes; 20 ms warm-up, 200 ms measured. "
               "rate_limiter: VF i has tx_max = 90%% of the line x (1 + i %% 4) / sum; "
               "weighted_share: tx_weight 1 + i %% 4, want line x weight / sum; tenant_share: "
               "8 tenant nodes of weights 1..8, 16 VFs each; errors are |rate - want| / want; "
               "sim_cpu_per_frame: thread CPU time of the whole simulation per frame sent\",\n");
    fprintf(f, "  \"figures\": [\n");
    for (int i = 0; i < nf; i++)
        fprintf(f, "    {\"name\": \"%s\", \"value\": %.4g, \"unit\": \"%s\", \"command\": \"%s\"}%s\n",
                figs[i].name, figs[i].value, figs[i].unit, cmd, i + 1 < nf ? "," : "");
    fprintf(f, "  ]\n}\n");
    fclose(f);
    return 0;
}
