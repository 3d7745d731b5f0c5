/* The rule table under a concurrent reader: a data-path thread processes
 * one frame non-stop while the control thread adds, replaces and deletes
 * rules one at a time (through delta trees, struck entries, rank shifts
 * and full rebuilds).  Every decision must be the one the table's rules
 * gave at exactly one generation: before each change the control thread
 * writes what the frame must get under the generation it is about to
 * publish (the first match by (priority, order added), as a rule-specific
 * traffic class and mirror port), and the reader checks its decision
 * against the entry of the generation it reports.  An anchor rule that is
 * never changed must count exactly the frames it decided, across all the
 * sets the reader used.  Runs under ASan and under TSan. */
#include "testlib.h"
#include <pthread.h>
#include <stdatomic.h>

#define VF(n) VSW_PORT_VF(n)
#define OPS 2500
#define MAXR 400

static vsw_switch *sw;
static atomic_int done;
static const uint8_t M0[6] = {2, 0, 0, 0, 1, 0}, M1[6] = {2, 0, 0, 0, 1, 1};

/* What the frame gets under generation g: tc and mirror port of the
 * deciding rule (0xffff: none). */
typedef struct expect { uint8_t tc; uint16_t mirror; } expect;
static expect want[OPS + 16];

/* A rule's signature: its tc and mirror port, from its cookie. */
static uint8_t sig_tc(uint64_t c) { return (uint8_t)(c % 8); }
static uint16_t sig_mirror(uint64_t c, unsigned np) { return (uint16_t)(2 + (c / 8) % (np - 2)); }

typedef struct mrule { uint64_t cookie, seq; uint32_t prio; int hits; } mrule;
static mrule model[MAXR];
static size_t nmodel;

static expect model_expect(unsigned np)
{
    const mrule *best = NULL;
    for (size_t i = 0; i < nmodel; i++) {
        const mrule *m = &model[i];
        if (m->hits && (!best || m->prio < best->prio ||
                        (m->prio == best->prio && m->seq < best->seq)))
            best = m;
    }
    if (!best)
        return (expect){ 0, 0xffff };
    return (expect){ sig_tc(best->cookie), sig_mirror(best->cookie, np) };
}

static vsw_trule make_rule(uint64_t cookie, uint32_t prio, int hits)
{
    vsw_trule t;
    memset(&t, 0, sizeof(t));
    t.cookie = cookie;
    t.scope = rndn(2) ? VF(0) : VSW_RULE_GLOBAL;
    t.rule.priority = prio;
    t.rule.match = VSW_M_DST_IP | VSW_M_IP_PROTO | VSW_M_DPORT;
    t.rule.ip_version = 4;
    t.rule.ip_proto = 17;
    t.rule.dst_ip[0] = 10;
    t.rule.dst_ip[1] = hits ? 0 : (uint8_t)(1 + rndn(200));
    t.rule.dst_plen = 16;
    t.rule.dst_ip[2] = 0;
    t.rule.dport_lo = (uint16_t)(hits ? 1500 + rndn(400) : 3000 + rndn(1000));
    t.rule.dport_hi = (uint16_t)(t.rule.dport_lo + 100 + rndn(1000));
    if (hits && t.rule.dport_hi < 2000)
        t.rule.dport_hi = 2000;
    t.rule.flags = VSW_ACTF_SET_TC | VSW_ACTF_MIRROR | VSW_ACTF_COUNT;
    return t;
}

typedef struct rstats { _Atomic long iters; long bad, gens_seen, anchor_frames; } rstats;
static uint64_t anchor_cookie;

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
    unsigned np = vsw_num_ports(sw);
    uint16_t amirror = sig_mirror(anchor_cookie, np);
    uint8_t atc = sig_tc(anchor_cookie);
    uint32_t last = UINT32_MAX;
    uint64_t t = 0;
    while (!atomic_load(&done)) {
        vsw_decision d[4];
        const uint8_t *fr[4] = {b, b, b, b};
        size_t ln[4] = {n, n, n, n};
        int k = st->iters & 1 ? 1 : 4;
        if (k == 1)
            vsw_process(sw, VF(0), b, n, t++, &d[0]);
        else
            vsw_process_burst(sw, VF(0), fr, ln, 4, t++, d);
        for (int i = 0; i < k; i++) {
            uint32_t g = d[i].acl_gen;
            if (d[i].acl_gen != d[0].acl_gen)
                st->bad++;                      /* one burst = one set */
            if (g >= 1 && g < OPS + 16) {
                expect e = want[g];
                uint16_t mir = d[i].mirror_port == VSW_PORT_ANY ? 0xffff : d[i].mirror_port;
                if (mir != e.mirror || (e.mirror != 0xffff && d[i].tc != e.tc))
                    st->bad++;
            }
            if (d[i].mirror_port == amirror && d[i].tc == atc)
                st->anchor_frames++;
        }
        if (d[0].acl_gen != last) {
            st->gens_seen++;
            last = d[0].acl_gen;
        }
        st->iters++;
    }
    vsw_datapath_offline(sw);
    return NULL;
}

int main(void)
{
    vsw_config c = { .num_vfs = 64 };
    sw = vsw_create(&c);
    unsigned np = vsw_num_ports(sw);
    vsw_fdb_add(sw, M1, 0, VF(1), NULL);
    vsw_error err;
    /* the anchor: hits, lowest priority, never changed; no other cookie
     * has its signature */
    uint32_t gen = 0;
    uint64_t period = 8ull * (np - 2);
    anchor_cookie = period - 1;
    vsw_trule a = make_rule(anchor_cookie, 20, 1);
    a.rule.set_tc = sig_tc(anchor_cookie);
    a.rule.mirror_port = sig_mirror(anchor_cookie, np);
    model[nmodel++] = (mrule){ anchor_cookie, 0, 20, 1 };
    want[++gen] = model_expect(np);
    CHECK_EQ(vsw_rule_add(sw, &a, &err), 0);
    rstats st = {0};
    pthread_t th;
    pthread_create(&th, NULL, reader, &st);
    while (atomic_load_explicit(&st.iters, memory_order_relaxed) < 1000) {
        struct timespec ts = {0, 1000000};    /* the anchor alone, a while */
        nanosleep(&ts, NULL);
    }
    uint64_t seq = 1, next = 1;
    long ok = 0, tried = 0;
    for (unsigned op = 0; op < OPS; op++) {
        unsigned k = rndn(10);
        int add = nmodel < 2 || (nmodel < MAXR && k < 5);
        /* cookies: 512 signatures, never the anchor's */
        if (next % period == anchor_cookie % period)
            next++;
        uint64_t cookie = next++;
        size_t i = 1 + (nmodel > 1 ? rndn((unsigned)nmodel - 1) : 0);
        int hits = rndn(4) == 0;
        uint32_t prio = rndn(40);
        mrule saved = nmodel > i ? model[i] : (mrule){0};
        size_t saved_n = nmodel;
        vsw_trule t;
        int rc;
        if (add) {
            t = make_rule(cookie, prio, hits);
            model[nmodel++] = (mrule){ cookie, ++seq, prio, hits };
        } else if (k < 8) {
            t = make_rule(model[i].cookie, rndn(2) ? model[i].prio : prio, hits);
            model[i].prio = t.rule.priority;
            model[i].hits = hits;
        } else {
            t = make_rule(model[i].cookie, 0, 0);
            model[i] = model[--nmodel];
        }
        t.rule.set_tc = sig_tc(t.cookie);
        t.rule.mirror_port = sig_mirror(t.cookie, np);
        want[gen + 1] = model_expect(np);       /* before it can be seen */
        tried++;
        if (add)
            rc = vsw_rule_add(sw, &t, &err);
        else if (k < 8)
            rc = vsw_rule_replace(sw, &t, &err);
        else
            rc = vsw_rule_del(sw, t.cookie, &err);
        if (rc) {
            fprintf(stderr, "op %u: %s\n", op, err.msg);
            nmodel = saved_n;
            if (!add)
                model[i] = saved;
            continue;
        }
        ok++;
        gen++;
        if (op % 200 == 0) {                    /* let the reader catch up */
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
        }
    }
    struct timespec ts = {0, 20000000};
    nanosleep(&ts, NULL);
    atomic_store(&done, 1);
    pthread_join(th, NULL);
    uint64_t pk, by;
    CHECK_EQ(vsw_rule_stats(sw, anchor_cookie, &pk, &by), 0);
    size_t left = vsw_reclaim(sw);
    uint64_t pk2;
    CHECK_EQ(vsw_rule_stats(sw, anchor_cookie, &pk2, &by), 0);
    vsw_rule_table_stats ts2;
    vsw_rule_table_get_stats(sw, &ts2);
    printf("  %ld reader iterations, %ld generations seen, %ld inconsistent; anchor decided %ld "
           "frames, counted %llu (%llu after reclaim); %llu full builds, %llu shifts, %zu tables "
           "left retired\n", st.iters, st.gens_seen, st.bad, st.anchor_frames,
           (unsigned long long)pk, (unsigned long long)pk2,
           (unsigned long long)ts2.full_builds, (unsigned long long)ts2.shifts, left);
    CHECK_EQ(ok, tried);
    CHECK(st.iters > 1000);
    CHECK(st.gens_seen >= 3);
    CHECK_EQ(st.bad, 0);
    CHECK_EQ(pk, (uint64_t)st.anchor_frames);
    CHECK_EQ(pk2, (uint64_t)st.anchor_frames);
    CHECK(st.anchor_frames > 0);
    CHECK(ts2.full_builds >= 2);
    CHECK_EQ(left, 0);
    vsw_destroy(sw);
    return t_done();
}
