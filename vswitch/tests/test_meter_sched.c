/* Meters (accuracy within 2% of the configured rate over simulated time,
 * bits/s and packets/s, hierarchy, per (VF, TC)) and the egress scheduler
 * (DWRR shares within 5%, strict priority, tx_share, tx_max, tail drop). */
#include "testlib.h"
#include <math.h>

#define VF(n) VSW_PORT_VF(n)
static const uint8_t MACS[3][6] = {{2, 0, 0, 0, 1, 0}, {2, 0, 0, 0, 1, 1}, {2, 0, 0, 0, 1, 2}};

static int within(double got, double want, double tol)
{
    int ok = fabs(got - want) <= tol * want;
    if (!ok)
        fprintf(stderr, "  got %.6g want %.6g (+-%.0f%%)\n", got, want, tol * 100);
    return ok;
}

static vsw_switch *mk(void)
{
    vsw_config c = { .num_vfs = 3 };
    vsw_switch *sw = vsw_create(&c);
    for (int i = 0; i < 3; i++)
        vsw_fdb_add(sw, MACS[i], 0, VF(i), NULL);
    return sw;
}

/* Offer `len`-byte frames from port p to VF2 at offered_bps for secs of
 * simulated time starting at t0; returns bytes passed. */
static uint64_t offer(vsw_switch *sw, unsigned p, unsigned src, size_t len, double offered_bps,
                      double secs, uint64_t t0, uint8_t dscp)
{
    tframe f;
    tf_default(&f);
    memcpy(f.src, MACS[src], 6);
    memcpy(f.dst, MACS[2], 6);
    f.payload = len - 42;
    f.dscp = dscp;
    uint8_t b[2048];
    size_t n = tf_build(&f, b);
    double gap = (double)len * 8 / offered_bps * 1e9;
    uint64_t passed = 0;
    size_t count = (size_t)(secs * 1e9 / gap);
    for (size_t i = 0; i < count; i++) {
        vsw_decision d;
        if (vsw_process(sw, p, b, n, t0 + (uint64_t)((double)i * gap), &d))
            passed += n;
    }
    return passed;
}

static void test_meter_rates(void)
{
    static const struct { uint64_t rate, burst; size_t len; double offered; } cases[] = {
        {1000000000ull, 15000, 1500, 2.0},
        {10000000ull, 3000, 64, 3.0},
        {100000000000ull, 64000, 1500, 1.5},
        {777000000ull, 9000, 512, 1.2},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        vsw_switch *sw = mk();
        vsw_meter_cfg mc = { .mode = VSW_METER_BPS, .rate = cases[i].rate, .burst = cases[i].burst };
        CHECK_EQ(vsw_meter_set(sw, 1, &mc, NULL), 0);
        vsw_port_cfg pc;
        vsw_port_get(sw, VF(0), &pc);
        pc.meter = 1;
        vsw_port_set(sw, VF(0), &pc, NULL);
        double secs = 20000.0 * (double)cases[i].len * 8 / (double)cases[i].rate; /* ~20k frames passed */
        uint64_t got = offer(sw, VF(0), 0, cases[i].len, (double)cases[i].rate * cases[i].offered,
                             secs, 1000, 0);
        double bps = (double)(got - cases[i].burst) * 8 / secs;
        printf("  meter %llu bit/s, %zu B frames at %.1fx: measured %.6g bit/s\n",
               (unsigned long long)cases[i].rate, cases[i].len, cases[i].offered, bps);
        CHECK(within(bps, (double)cases[i].rate, 0.02));
        vsw_port_counters c;
        vsw_port_counters_get(sw, VF(0), &c);
        CHECK(c.drops[VSW_DROP_METER] > 0);
        vsw_destroy(sw);
    }
    /* packets per second */
    vsw_switch *sw = mk();
    vsw_meter_cfg mc = { .mode = VSW_METER_PPS, .rate = 1000, .burst = 10 };
    vsw_meter_set(sw, 1, &mc, NULL);
    vsw_port_cfg pc;
    vsw_port_get(sw, VF(0), &pc);
    pc.meter = 1;
    vsw_port_set(sw, VF(0), &pc, NULL);
    uint64_t got = offer(sw, VF(0), 0, 100, 3000.0 * 800, 10.0, 0, 0);
    double pps = (double)(got / 100 - 10) / 10.0;
    printf("  meter 1000 pkt/s offered 3000: measured %.6g pkt/s\n", pps);
    CHECK(within(pps, 1000, 0.02));
    /* burst: an idle meter passes exactly `burst` back-to-back frames */
    mc.burst = 7;
    vsw_meter_set(sw, 1, &mc, NULL);             /* replacing refills */
    got = offer(sw, VF(0), 0, 100, 1e12, 7.0 * 800 / 1e12 * 3, 100000000000ull, 0);
    CHECK_EQ(got / 100, 7);
    vsw_destroy(sw);
}

static void test_meter_hierarchy(void)
{
    vsw_switch *sw = mk();
    vsw_meter_cfg tenant = { .mode = VSW_METER_BPS, .rate = 4000000000ull, .burst = 30000 };
    vsw_meter_cfg vf = { .mode = VSW_METER_BPS, .rate = 3000000000ull, .burst = 30000, .parent = 10 };
    CHECK_EQ(vsw_meter_set(sw, 10, &tenant, NULL), 0);
    CHECK_EQ(vsw_meter_set(sw, 11, &vf, NULL), 0);
    CHECK_EQ(vsw_meter_set(sw, 12, &vf, NULL), 0);
    for (int i = 0; i < 2; i++) {
        vsw_port_cfg pc;
        vsw_port_get(sw, VF(i), &pc);
        pc.meter = (uint16_t)(11 + i);
        vsw_port_set(sw, VF(i), &pc, NULL);
    }
    /* one VF alone at 5 Gbit/s: its own 3 Gbit/s limit applies */
    double secs = 0.002;
    uint64_t a = offer(sw, VF(0), 0, 1500, 5e9, secs, 0, 0);
    CHECK(within((double)(a - 30000) * 8 / secs, 3e9, 0.02));
    /* both VFs at 4 Gbit/s each, interleaved: tenant limit 4 Gbit/s in total */
    tframe f[2];
    uint8_t b[2][2048];
    size_t n[2];
    for (int i = 0; i < 2; i++) {
        tf_default(&f[i]);
        memcpy(f[i].src, MACS[i], 6);
        memcpy(f[i].dst, MACS[2], 6);
        f[i].payload = 1500 - 42;
        n[i] = tf_build(&f[i], b[i]);
    }
    uint64_t t0 = 10000000, pass[2] = {0, 0};
    double gap = 1500.0 * 8 / 4e9 * 1e9;
    size_t count = (size_t)(secs * 1e9 / gap);
    for (size_t k = 0; k < count; k++)
        for (int i = 0; i < 2; i++) {
            vsw_decision d;
            if (vsw_process(sw, VF(i), b[i], n[i], t0 + (uint64_t)((double)k * gap) + (uint64_t)i, &d))
                pass[i] += n[i];
        }
    double total = (double)(pass[0] + pass[1] - 30000) * 8 / secs;
    printf("  tenant 4G, VFs 3G each, both offering 4G: VF0 %.3g VF1 %.3g total %.4g bit/s\n",
           (double)pass[0] * 8 / secs, (double)pass[1] * 8 / secs, total);
    CHECK(within(total, 4e9, 0.02));
    CHECK((double)(pass[0] - 30000) * 8 / secs < 3.06e9 && (double)(pass[1] - 30000) * 8 / secs < 3.06e9);
    CHECK((double)pass[1] * 8 / secs > 0.5e9);   /* policing is first come, first served */
    vsw_meter_counters mc;
    vsw_meter_counters_get(sw, 10, &mc);
    CHECK(mc.drop_packets > 0 && mc.pass_packets > 0);
    vsw_destroy(sw);

    /* per (VF, TC) meter: DSCP-trusted EF traffic limited, the rest free */
    sw = mk();
    vsw_meter_cfg ef = { .mode = VSW_METER_BPS, .rate = 1000000000ull, .burst = 15000 };
    vsw_meter_set(sw, 5, &ef, NULL);
    vsw_port_cfg pc;
    vsw_port_get(sw, VF(0), &pc);
    pc.qos_trust = VSW_TRUST_DSCP;
    pc.tc_meter[5] = 5;                          /* DSCP 46 >> 3 = TC 5 */
    vsw_port_set(sw, VF(0), &pc, NULL);
    uint64_t e = offer(sw, VF(0), 0, 1500, 2e9, 0.01, 0, 46);
    uint64_t be = offer(sw, VF(0), 0, 1500, 2e9, 0.01, 20000000, 0);
    CHECK(within((double)(e - 15000) * 8 / 0.01, 1e9, 0.02));
    CHECK(within((double)be * 8 / 0.01, 2e9, 0.01));
    vsw_destroy(sw);
}

/* Keep every listed TC backlogged with frames of random size; return the
 * bytes each TC sent over `secs` of simulated time. */
static void sched_run(vsw_switch *sw, unsigned port, const int *tcs, int ntc, double secs,
                      int mixed, uint64_t *bytes)
{
    static uint64_t base;                        /* simulated time keeps going */
    memset(bytes, 0, sizeof(uint64_t) * VSW_NUM_TC);
    for (int i = 0; i < ntc; i++)
        for (int k = 0; k < 64; k++)
            vsw_sched_enqueue(sw, port, (unsigned)tcs[i], 0, mixed ? 64 + rndn(1437) : 1500, base);
    uint64_t t = base, end = base + (uint64_t)(secs * 1e9);
    base = end;
    while (t < end) {
        uint64_t h, next;
        uint32_t len;
        unsigned tc;
        if (vsw_sched_dequeue(sw, port, t, &h, &len, &tc, &next)) {
            bytes[tc] += len;
            vsw_sched_enqueue(sw, port, tc, h, mixed ? 64 + rndn(1437) : 1500, t);
        } else {
            if (next == UINT64_MAX) {
                fprintf(stderr, "sched_run: idle at %llu of %llu\n", (unsigned long long)t, (unsigned long long)end);
                break;
            }
            t = next > t ? next : t + 1;
        }
    }
}

static void test_sched(void)
{
    vsw_switch *sw = mk();
    vsw_sched_cfg sc;
    vsw_error e;
    uint64_t by[VSW_NUM_TC];
    /* DWRR 1:2:5 */
    vsw_sched_cfg_default(&sc);
    sc.link_rate = 10000000000ull;
    sc.tc[0].weight = 1; sc.tc[1].weight = 2; sc.tc[2].weight = 5;
    CHECK_EQ(vsw_sched_set(sw, VF(1), &sc, &e), 0);
    for (int mixed = 0; mixed < 2; mixed++) {
        int tcs[3] = {0, 1, 2};
        sched_run(sw, VF(1), tcs, 3, 0.05, mixed, by);
        double tot = (double)(by[0] + by[1] + by[2]);
        printf("  DWRR 1:2:5 (%s sizes): %.4f %.4f %.4f of %.4g bit/s\n", mixed ? "mixed" : "1500 B",
               by[0] / tot, by[1] / tot, by[2] / tot, tot * 8 / 0.05);
        CHECK(within(by[0] / tot, 1.0 / 8, 0.05));
        CHECK(within(by[1] / tot, 2.0 / 8, 0.05));
        CHECK(within(by[2] / tot, 5.0 / 8, 0.05));
        CHECK(within(tot * 8 / 0.05, 1e10, 0.01));           /* work-conserving */
    }
    /* strict priority: TC6 strict starves the weighted ones (another port:
     * sched_run keeps refilling whatever it dequeues) */
    sc.tc[6].strict = true;
    vsw_sched_set(sw, VF(2), &sc, NULL);
    {
        int tcs[3] = {0, 2, 6};
        sched_run(sw, VF(2), tcs, 3, 0.01, 1, by);
        CHECK(by[6] > 0 && by[0] == 0 && by[2] == 0);
    }
    /* strict with tx_max 4G: the weighted TCs share the remaining 6G 1:5 */
    sc.tc[6].tx_max = 4000000000ull;
    vsw_sched_set(sw, VF(2), &sc, NULL);
    {
        int tcs[3] = {0, 2, 6};
        sched_run(sw, VF(2), tcs, 3, 0.05, 1, by);
        printf("  strict TC6 tx_max 4G: TC6 %.4g, TC0 %.4g, TC2 %.4g bit/s\n",
               by[6] * 8 / 0.05, by[0] * 8 / 0.05, by[2] * 8 / 0.05);
        CHECK(within(by[6] * 8 / 0.05, 4e9, 0.02));
        CHECK(within(by[0] * 8 / 0.05, 1e9, 0.05));
        CHECK(within(by[2] * 8 / 0.05, 5e9, 0.05));
    }
    /* tx_share: TC0 weight 1 vs TC1 weight 9, but TC0 guaranteed 3G */
    vsw_sched_cfg_default(&sc);
    sc.link_rate = 10000000000ull;
    sc.tc[0].weight = 1; sc.tc[0].tx_share = 3000000000ull;
    sc.tc[1].weight = 9;
    vsw_sched_set(sw, VF(0), &sc, NULL);
    {
        int tcs[2] = {0, 1};
        sched_run(sw, VF(0), tcs, 2, 0.05, 0, by);
        printf("  tx_share 3G on weight 1 vs weight 9: TC0 %.4g TC1 %.4g bit/s\n",
               by[0] * 8 / 0.05, by[1] * 8 / 0.05);
        CHECK(by[0] * 8 / 0.05 >= 3e9 * 0.98);
        CHECK(within((double)(by[0] + by[1]) * 8 / 0.05, 1e10, 0.01));
    }
    /* only a shaped TC backlogged: the scheduler idles the wire and says
     * when to come back; the long-run rate is tx_max */
    vsw_sched_cfg_default(&sc);
    sc.link_rate = 10000000000ull;
    sc.tc[4].tx_max = 1000000000ull;
    vsw_sched_set(sw, VSW_PORT_PF, &sc, NULL);
    {
        int tcs[1] = {4};
        sched_run(sw, VSW_PORT_PF, tcs, 1, 0.02, 0, by);
        CHECK(within(by[4] * 8 / 0.02, 1e9, 0.02));
        uint64_t h, next = 0;
        uint32_t len;
        unsigned tc;
        uint64_t t0 = 1000000000000ull;          /* far later: bucket refilled */
        int sent = 0;
        while (vsw_sched_dequeue(sw, VSW_PORT_PF, t0, &h, &len, &tc, &next))
            sent++;
        CHECK(sent >= 1 && sent <= 12);           /* 16 KB burst of 1500 B frames */
        CHECK(next > t0 && next != UINT64_MAX);
    }
    /* port tx_max */
    sc.tx_max = 2000000000ull;
    vsw_sched_set(sw, VF(0), &sc, NULL);
    {
        int tcs[2] = {0, 1};
        sched_run(sw, VF(0), tcs, 2, 0.05, 1, by);
        CHECK(within((double)(by[0] + by[1]) * 8 / 0.05, 2e9, 0.02));
    }
    /* tail drop */
    vsw_config c = { .num_vfs = 1, .sched_qlen = 4 };
    vsw_switch *s2 = vsw_create(&c);
    for (int i = 0; i < 4; i++)
        CHECK_EQ(vsw_sched_enqueue(s2, VF(0), 3, (uint64_t)i, 100, 0), 0);
    CHECK_EQ(vsw_sched_enqueue(s2, VF(0), 3, 9, 100, 0), -ENOSPC);
    CHECK_EQ(vsw_sched_backlog(s2, VF(0), 3), 4);
    vsw_port_counters pc;
    vsw_port_counters_get(s2, VF(0), &pc);
    CHECK(pc.tc_drops[3] == 1 && pc.drops[VSW_DROP_QUEUE_FULL] == 1);
    uint64_t h, next;
    uint32_t len;
    unsigned tc;
    CHECK_EQ(vsw_sched_dequeue(s2, VF(0), 0, &h, &len, &tc, &next), 1);
    CHECK(h == 0 && len == 100 && tc == 3);
    CHECK_EQ(vsw_sched_dequeue(s2, VF(0), 0, &h, &len, &tc, &next), 0);  /* wire busy */
    CHECK_EQ(next, 8);                                     /* 800 bits at 100G */
    CHECK_EQ(vsw_sched_dequeue(s2, VF(0), next, &h, &len, &tc, &next), 1);
    CHECK_EQ(h, 1);
    vsw_port_counters_get(s2, VF(0), &pc);
    CHECK(pc.tc_tx_packets[3] == 2 && pc.tc_tx_bytes[3] == 200);
    vsw_destroy(s2);
    vsw_destroy(sw);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    test_meter_rates();
    test_meter_hierarchy();
    test_sched();
    return t_done();
}
