/* Atomic updates under a concurrent reader: a data-path thread processes
 * frames non-stop while the control thread replaces the rule set, port
 * configuration, FDB and meters.  Every decision must be consistent with
 * exactly one rule-set generation (the matching rule index and the traffic
 * class it sets are functions of the generation), a static FDB entry that
 * is never touched must always forward, and ASan/TSan must stay quiet
 * (old tables are freed only after the reader's quiescent point). */
#include "testlib.h"
#include <pthread.h>
#include <stdatomic.h>

#define VF(n) VSW_PORT_VF(n)
#define GENS 300

static vsw_switch *sw;
static atomic_int done;
static const uint8_t M0[6] = {2, 0, 0, 0, 1, 0}, M1[6] = {2, 0, 0, 0, 1, 1};

static size_t set_size(unsigned g) { return 20 + (g % 7) * 150; }
static size_t hit_index(unsigned g) { return (g * 37) % set_size(g); }

static void make_set(unsigned g, vsw_rule *r)
{
    size_t n = set_size(g);
    for (size_t i = 0; i < n; i++) {
        memset(&r[i], 0, sizeof(r[i]));
        r[i].priority = (uint32_t)i;
        r[i].match = VSW_M_DPORT | VSW_M_IP_PROTO | VSW_M_DST_IP;
        r[i].ip_version = 4;
        r[i].dst_ip[0] = 10; r[i].dst_ip[1] = (uint8_t)(i >> 8); r[i].dst_ip[2] = (uint8_t)i;
        r[i].dst_plen = 24;
        r[i].ip_proto = 17;
        r[i].dport_lo = r[i].dport_hi = (uint16_t)(3000 + i);
        r[i].flags = VSW_ACTF_SET_TC;
        r[i].set_tc = (uint8_t)(g % 8);
    }
    size_t h = hit_index(g);             /* the one rule our frame hits */
    r[h].dst_ip[1] = 0; r[h].dst_ip[2] = 0;
    r[h].dport_lo = 0; r[h].dport_hi = 2500;
}

typedef struct rstats { long iters, bad, gens_seen, fwd_bad; } rstats;

static void *reader(void *arg)
{
    rstats *st = arg;
    tframe f;
    tf_default(&f);
    memcpy(f.src, M0, 6);
    memcpy(f.dst, M1, 6);
    f.dst_ip[0] = 10; f.dst_ip[1] = 0; f.dst_ip[2] = 0; f.dst_ip[3] = 9;
    f.dport = 2000;
    uint8_t b[256];
    size_t n = tf_build(&f, b);
    uint32_t last = UINT32_MAX;
    uint64_t t = 0;
    while (!atomic_load(&done)) {
        vsw_decision d[4];
        const uint8_t *fr[4] = {b, b, b, b};
        size_t ln[4] = {n, n, n, n};
        if (st->iters & 1) {
            vsw_process(sw, VF(0), b, n, t++, &d[0]);
        } else {
            vsw_process_burst(sw, VF(0), fr, ln, 4, t++, d);
            for (int i = 1; i < 4; i++)
                if (d[i].acl_gen != d[0].acl_gen || d[i].rule != d[0].rule)
                    st->bad++;                 /* one burst = one snapshot */
        }
        uint32_t gen = d[0].acl_gen;
        if (gen >= 1) {
            unsigned g = gen - 1;
            if (d[0].rule != (int32_t)hit_index(g) || d[0].tc != g % 8)
                st->bad++;
        }
        if (!vsw_portset_has(&d[0].egress, VF(1)))
            st->fwd_bad++;
        if (gen != last) {
            st->gens_seen++;
            last = gen;
        }
        st->iters++;
    }
    vsw_datapath_offline(sw);
    return NULL;
}

int main(void)
{
    vsw_config c = { .num_vfs = 4 };
    sw = vsw_create(&c);
    vsw_fdb_add(sw, M1, 0, VF(1), NULL);
    vsw_rule *r = calloc(set_size(6) + 1, sizeof(*r));
    make_set(0, r);
    CHECK_EQ(vsw_acl_set(sw, r, set_size(0), NULL), 0);
    rstats st = {0};
    pthread_t th;
    pthread_create(&th, NULL, reader, &st);
    long ok = 0;
    for (unsigned g = 1; g < GENS; g++) {
        make_set(g, r);
        ok += vsw_acl_set(sw, r, set_size(g), NULL) == 0;
        /* churn the other tables too */
        vsw_port_cfg pc;
        vsw_port_get(sw, VF(2), &pc);
        pc.default_tc = (uint8_t)(g % 8);
        vsw_port_set(sw, VF(2), &pc, NULL);
        uint8_t m[6] = {2, 0, 0, 9, (uint8_t)(g >> 8), (uint8_t)g};
        vsw_fdb_add(sw, m, 0, VF(3), NULL);
        if (g > 10) {
            m[5] = (uint8_t)(g - 10);
            m[4] = (uint8_t)((g - 10) >> 8);
            vsw_fdb_del(sw, m, 0, NULL);
        }
        vsw_meter_cfg mc = { .mode = VSW_METER_BPS, .rate = 1000000000ull + g, .burst = 100000 };
        vsw_meter_set(sw, 1 + g % 5, &mc, NULL);
        if (g % 50 == 0) {                      /* let the reader catch up */
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        }
    }
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
    atomic_store(&done, 1);
    pthread_join(th, NULL);
    size_t left = vsw_reclaim(sw);
    printf("  %ld reader iterations, %ld generations seen, %ld inconsistent, %ld misforwarded, "
           "%zu tables left retired\n", st.iters, st.gens_seen, st.bad, st.fwd_bad, left);
    CHECK_EQ(ok, GENS - 1);
    CHECK(st.iters > 1000);
    CHECK(st.gens_seen >= 3);
    CHECK_EQ(st.bad, 0);
    CHECK_EQ(st.fwd_bad, 0);
    CHECK_EQ(left, 0);                          /* reader offline: all freed */
    vsw_destroy(sw);
    free(r);
    return t_done();
}
