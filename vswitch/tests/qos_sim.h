/* qos_sim.h - a traffic simulator for the link QoS scheduler (vswitch.h
 * "Link QoS") in simulated time, shared by tests/test_qos.c and
 * bench/bench_qos.c.
 *
 * Sources are either saturating (they refill their queue whenever the
 * scheduler has not paused them: back-pressure, as a VF's TX ring) or paced
 * (frames at a fixed rate whatever happens; drops counted).  The clock
 * jumps from event to event: the wire getting free, a paced arrival. */
#ifndef QOS_SIM_H
#define QOS_SIM_H
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "vswitch.h"

#define G 1000000000.0
#define MAXSRC 160

typedef struct src {
    unsigned leaf, tc;
    uint32_t len;
    double   rate;          /* bit/s offered; 0 = saturating               */
    double   next;          /* next paced arrival, ns                      */
    uint64_t bytes;         /* sent in the measurement window              */
    uint64_t drops;
} src;

typedef struct sim {
    vsw_qos *q;
    src      s[MAXSRC];
    unsigned n;
    uint64_t max_delay[VSW_NUM_TC], cnt[VSW_NUM_TC];
    uint64_t steps;
} sim;

static inline src *add_src(sim *m, unsigned leaf, unsigned tc, uint32_t len, double rate)
{
    src *s = &m->s[m->n++];
    memset(s, 0, sizeof(*s));
    s->leaf = leaf;
    s->tc = tc;
    s->len = len;
    s->rate = rate;
    return s;
}

/* Run from t0 to t_end; count what is sent from t_meas on. */
static inline void run(sim *m, uint64_t t0, uint64_t t_meas, uint64_t t_end)
{
    uint64_t t = t0;
    for (unsigned i = 0; i < m->n; i++)
        m->s[i].next = (double)t0;
    uint64_t cap = 50000000;              /* bound on simulation steps */
    while (t < t_end && m->steps++ < cap) {
        double next_arr = 1e300;
        for (unsigned i = 0; i < m->n; i++) {
            src *s = &m->s[i];
            if (s->rate == 0) {
                for (int k = 0; k < 8 && !vsw_qos_paused(m->q, s->leaf); k++) {
                    if (vsw_qos_enqueue(m->q, s->leaf, s->tc, i, s->len, t) < 0) {
                        s->drops++;
                        break;
                    }
                }
            } else {
                for (int k = 0; k < 1000 && s->next <= (double)t; k++) {
                    if (vsw_qos_enqueue(m->q, s->leaf, s->tc, i, s->len, (uint64_t)s->next) < 0)
                        s->drops++;
                    s->next += s->len * 8.0 / s->rate * G;
                }
                if (s->next < next_arr)
                    next_arr = s->next;
            }
        }
        uint16_t res[VSW_QOS_MAX_LEAVES];
        vsw_qos_resumed(m->q, res, VSW_QOS_MAX_LEAVES);
        vsw_qos_frame f;
        uint64_t nx;
        if (vsw_qos_dequeue(m->q, t, &f, &nx) && t >= t_meas) {
            m->s[f.handle].bytes += f.len;
            uint64_t d = t - f.queued_ns;
            if (d > m->max_delay[f.tc])
                m->max_delay[f.tc] = d;
            m->cnt[f.tc]++;
        }
        uint64_t na = next_arr >= 1.8e19 ? UINT64_MAX : (uint64_t)ceil(next_arr);
        uint64_t nt = nx < na ? nx : na;
        t = nt > t ? nt : t + 1;
    }
}

static inline double rate_of(const sim *m, const src *s, uint64_t t_meas, uint64_t t_end)
{
    (void)m;
    return (double)s->bytes * 8 / ((double)(t_end - t_meas) / G);
}

#endif /* QOS_SIM_H */
