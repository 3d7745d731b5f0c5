/* The incremental rule table (vsw_rule_add / _replace / _del):
 *   - errors and limits, each leaving the installed rules as they were;
 *   - counters by cookie that survive changes of other rules, full
 *     rebuilds and a replace of the rule itself;
 *   - the property: after random add / replace / delete sequences (with
 *     many equal priorities, so order of addition matters, and enough
 *     churn to go through delta trees, struck base entries, rank shifts
 *     and full rebuilds), every frame gets exactly the decision a linear
 *     first-match scan of the same rules in (priority, order added) order
 *     gives: a second switch with that list installed by vsw_acl_set and
 *     the linear classifier.  The table's switch is checked with every
 *     classifier, per frame and in bursts. */
#include "testlib.h"
#include "rulegen.h"

#define NVF 8
#define VF(n) VSW_PORT_VF(n)

static void program_fdb(vsw_switch *sw)
{
    for (int i = 0; i < 3; i++)
        for (int v = 0; v < 3; v++)
            vsw_fdb_add(sw, rg_macs[i], rg_vids[v], 2 + (unsigned)i, NULL);
}

/* ---- the model: rules in (priority, seq) order ---- */
typedef struct mrule { vsw_trule t; uint64_t seq; } mrule;
static mrule model[4096];
static size_t nmodel;
static uint64_t mseq;

static int mcmp(const void *a, const void *b)
{
    const mrule *x = a, *y = b;
    if (x->t.rule.priority != y->t.rule.priority)
        return x->t.rule.priority < y->t.rule.priority ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Install the model on the reference switch as a whole set, in order. */
static void ref_install(vsw_switch *ref)
{
    qsort(model, nmodel, sizeof(model[0]), mcmp);
    static vsw_rule rs[4096];
    for (size_t i = 0; i < nmodel; i++) {
        rs[i] = model[i].t.rule;
        if (model[i].t.scope != VSW_RULE_GLOBAL) {
            rs[i].match |= VSW_M_IN_PORT;
            rs[i].in_port = model[i].t.scope;
        }
        rs[i].priority = (uint32_t)i;
    }
    vsw_error err;
    if (vsw_acl_set(ref, rs, nmodel, &err))
        fprintf(stderr, "reference acl_set: %s\n", err.msg);
}

static void random_trule(vsw_trule *t, uint64_t cookie, unsigned np)
{
    memset(t, 0, sizeof(*t));
    t->cookie = cookie;
    enum rg_mode m = rndn(3) == 0 ? RG_RANDOM : rndn(2) ? RG_TENANT : RG_CROSS;
    rg_rule(&t->rule, m, np);
    t->rule.priority = rndn(12);        /* many ties: order of addition */
    if (m == RG_RANDOM && rndn(4) == 0)
        t->rule.priority = 11;
    t->scope = VSW_RULE_GLOBAL;
    if (t->rule.match & VSW_M_IN_PORT)
        t->scope = t->rule.in_port;     /* a representor's block */
    else if (rndn(3) == 0)
        t->scope = (uint16_t)rndn(np < 10 ? np : 10);
    if (t->rule.flags & VSW_ACTF_MIRROR && t->rule.mirror_port >= np)
        t->rule.flags &= ~(uint32_t)VSW_ACTF_MIRROR;
}

/* Compare both switches on npkts frames; returns mismatches. */
static int compare(vsw_switch *sw, vsw_switch *ref, unsigned np, size_t npkts, size_t *hits)
{
    int mism = 0;
    enum { B = 8 };
    uint8_t buf[B][512];
    const uint8_t *fr[B];
    size_t len[B];
    unsigned inp[B];
    static const enum vsw_classifier cls[4] = {VSW_CLASSIFIER_TREE, VSW_CLASSIFIER_TREE_SCALAR,
                                               VSW_CLASSIFIER_TREE_AVX2, VSW_CLASSIFIER_LINEAR};
    for (size_t p = 0; p < npkts; p += B) {
        unsigned in0 = 0;
        for (int j = 0; j < B; j++) {
            tframe f;
            vsw_rule r0;
            const vsw_rule *r = NULL;
            if (nmodel && rndn(10)) {
                const mrule *m = &model[rndn((unsigned)nmodel)];
                r0 = m->t.rule;
                if (m->t.scope != VSW_RULE_GLOBAL) {
                    r0.match |= VSW_M_IN_PORT;
                    r0.in_port = m->t.scope;
                }
                r = &r0;
            }
            rg_frame(r, &f, &inp[j], np);
            if (j == 0)
                in0 = inp[j];
            len[j] = tf_build(&f, buf[j]);
            fr[j] = buf[j];
        }
        vsw_decision d[8][B];
        for (int c = 0; c < 4; c++) {
            vsw_set_classifier(sw, cls[c]);
            for (int j = 0; j < B; j++)
                vsw_process(sw, inp[j], fr[j], len[j], 0, &d[2 * c][j]);
            vsw_process_burst(sw, in0, fr, len, B, 0, d[2 * c + 1]);
        }
        for (int j = 0; j < B; j++) {
            vsw_decision dl;
            vsw_process(ref, inp[j], fr[j], len[j], 0, &dl);
            uint64_t want = dl.rule >= 0 ? model[dl.rule].t.cookie : 0;
            for (int v = 0; v < 8; v++) {
                const vsw_decision *x = &d[v][j];
                if (v & 1) {    /* burst: all frames came in on in0 */
                    if (inp[j] != in0)
                        continue;
                }
                uint64_t got = 0;
                int known = x->rule < 0 || vsw_rule_id_cookie(sw, x->rule, &got) == 0;
                int bad = !known || (x->rule >= 0) != (dl.rule >= 0) || got != want ||
                          x->drop != dl.drop || x->tc != dl.tc ||
                          memcmp(&x->egress, &dl.egress, sizeof(dl.egress));
                if (bad && mism++ < 5)
                    fprintf(stderr, "mismatch (classifier %d, %s): got rule %d cookie %llu drop %u, "
                            "reference cookie %llu drop %u\n", v / 2, v & 1 ? "burst" : "frame",
                            x->rule, (unsigned long long)got, x->drop,
                            (unsigned long long)want, dl.drop);
            }
            *hits += dl.rule >= 0;
        }
        /* burst comparison needs the reference on the burst's port */
        for (int j = 0; j < B; j++)
            if (inp[j] != in0) {
                vsw_decision dl;
                vsw_process(ref, in0, fr[j], len[j], 0, &dl);
                uint64_t want = dl.rule >= 0 ? model[dl.rule].t.cookie : 0;
                for (int c = 0; c < 4; c++) {
                    const vsw_decision *x = &d[2 * c + 1][j];
                    uint64_t got = 0;
                    if (x->rule >= 0)
                        vsw_rule_id_cookie(sw, x->rule, &got);
                    if ((x->rule >= 0) != (dl.rule >= 0) || got != want || x->drop != dl.drop ||
                        x->tc != dl.tc) {
                        if (mism++ < 5)
                            fprintf(stderr, "burst mismatch (classifier %d) on port %u\n", c, in0);
                    }
                }
            }
    }
    return mism;
}

/* One random run: `ops` changes on a table of about `target` rules,
 * checking `pkts` frames after every `every` changes. */
static void property_run(unsigned target, unsigned ops, unsigned every, size_t pkts,
                         vsw_rule_table_stats *agg)
{
    vsw_config c = { .num_vfs = NVF };
    vsw_switch *sw = vsw_create(&c), *ref = vsw_create(&c);
    program_fdb(sw);
    program_fdb(ref);
    vsw_set_classifier(ref, VSW_CLASSIFIER_LINEAR);
    unsigned np = vsw_num_ports(sw);
    nmodel = 0;
    uint64_t next_cookie = 1;
    int mism = 0, failed = 0;
    size_t hits = 0;
    for (unsigned op = 0; op < ops; op++) {
        unsigned k = rndn(10);
        vsw_error err;
        int grow = nmodel < target;
        if (nmodel == 0 || (grow ? k < 7 : k < 3)) {
            vsw_trule t;
            random_trule(&t, next_cookie++ * 0x9e3779b97f4a7c15ull, np);
            int rc = vsw_rule_add(sw, &t, &err);
            if (rc) {
                if (failed++ < 3)
                    fprintf(stderr, "add: %s\n", err.msg);
                continue;
            }
            vsw_rule_get(sw, t.cookie, &t);     /* as installed */
            model[nmodel++] = (mrule){ t, ++mseq };
        } else if (k < 6) {
            size_t i = rndn((unsigned)nmodel);
            vsw_trule t;
            random_trule(&t, model[i].t.cookie, np);
            if (rndn(2))
                t.rule.priority = model[i].t.rule.priority;    /* in place */
            int rc = vsw_rule_replace(sw, &t, &err);
            if (rc) {
                if (failed++ < 3)
                    fprintf(stderr, "replace: %s\n", err.msg);
                continue;
            }
            vsw_rule_get(sw, t.cookie, &model[i].t);
        } else {
            size_t i = rndn((unsigned)nmodel);
            if (vsw_rule_del(sw, model[i].t.cookie, &err)) {
                if (failed++ < 3)
                    fprintf(stderr, "del: %s\n", err.msg);
                continue;
            }
            model[i] = model[--nmodel];
        }
        if (op % every == every - 1 || op == ops - 1) {
            ref_install(ref);
            mism += compare(sw, ref, np, pkts, &hits);
        }
    }
    vsw_rule_table_stats st;
    vsw_rule_table_get_stats(sw, &st);
    printf("  %u ops, ~%u rules: %zu in table, %llu full builds, %llu shifts, "
           "%zu delta, %zu struck; %zu frames matched a rule, %d mismatches\n",
           ops, target, st.rules, (unsigned long long)st.full_builds,
           (unsigned long long)st.shifts, st.delta_rules, st.struck, hits, mism);
    CHECK_EQ(failed, 0);
    CHECK_EQ(mism, 0);
    CHECK_EQ(st.rules, nmodel);
    CHECK(hits > 0);
    agg->full_builds += st.full_builds;
    agg->shifts += st.shifts;
    vsw_destroy(sw);
    vsw_destroy(ref);
}

/* ---- errors, limits, scope, chains ---- */

static vsw_trule udp_rule(uint64_t cookie, uint32_t prio, uint16_t dport, uint8_t tc)
{
    vsw_trule t;
    memset(&t, 0, sizeof(t));
    t.cookie = cookie;
    t.scope = VSW_RULE_GLOBAL;
    t.rule.priority = prio;
    t.rule.match = VSW_M_IP_PROTO | VSW_M_DPORT;
    t.rule.ip_proto = 17;
    t.rule.dport_lo = t.rule.dport_hi = dport;
    t.rule.flags = VSW_ACTF_COUNT | VSW_ACTF_SET_TC;
    t.rule.set_tc = tc;
    return t;
}

static size_t udp_frame(uint16_t dport, uint8_t *b)
{
    tframe f;
    tf_default(&f);
    f.dport = dport;
    memcpy(f.dst, rg_macs[1], 6);
    return tf_build(&f, b);
}

/* The cookie of the rule that decides a UDP frame to dport on port `in`. */
static uint64_t decides(vsw_switch *sw, unsigned in, uint16_t dport)
{
    uint8_t b[256];
    size_t n = udp_frame(dport, b);
    vsw_decision d;
    vsw_process(sw, in, b, n, 0, &d);
    uint64_t c = 0;
    if (d.rule >= 0 && vsw_rule_id_cookie(sw, d.rule, &c))
        return UINT64_MAX;
    return c;
}

static void test_errors(void)
{
    vsw_config c = { .num_vfs = NVF };
    vsw_switch *sw = vsw_create(&c);
    program_fdb(sw);
    vsw_error err;
    vsw_trule a = udp_rule(100, 5, 53, 3);
    CHECK_EQ(vsw_rule_add(sw, &a, &err), 0);
    CHECK_EQ(decides(sw, VF(0), 53), 100);
    CHECK_EQ(vsw_rule_add(sw, &a, &err), -EEXIST);
    vsw_trule b = udp_rule(101, 1, 53, 4);
    b.chain = 2;
    CHECK_EQ(vsw_rule_add(sw, &b, &err), -EOPNOTSUPP);
    CHECK(strstr(err.msg, "chain 2") != NULL);
    b.chain = 0;
    b.scope = 99;                           /* no such port */
    CHECK_EQ(vsw_rule_add(sw, &b, &err), -EINVAL);
    b.scope = VF(1);
    b.rule.match |= VSW_M_IN_PORT;
    b.rule.in_port = VF(2);                 /* disagrees with its scope */
    CHECK_EQ(vsw_rule_add(sw, &b, &err), -EINVAL);
    b.rule.match &= ~(uint32_t)VSW_M_IN_PORT;
    b.rule.dport_lo = 60;                   /* inverted range */
    CHECK_EQ(vsw_rule_add(sw, &b, &err), -EINVAL);
    CHECK_EQ(vsw_rule_replace(sw, &b, &err), -EINVAL);  /* invalid before missing */
    b.rule.dport_lo = 53;
    CHECK_EQ(vsw_rule_replace(sw, &b, &err), -ENOENT);
    CHECK_EQ(vsw_rule_del(sw, 101, &err), -ENOENT);
    CHECK_EQ(decides(sw, VF(0), 53), 100);  /* nothing changed */
    /* scope: a VF1-scoped rule before the global one, only on VF1 */
    CHECK_EQ(vsw_rule_add(sw, &b, &err), 0);
    CHECK_EQ(decides(sw, VF(1), 53), 101);
    CHECK_EQ(decides(sw, VF(0), 53), 100);
    vsw_trule got;
    CHECK_EQ(vsw_rule_get(sw, 101, &got), 0);
    CHECK(got.rule.match & VSW_M_IN_PORT);
    CHECK_EQ(got.rule.in_port, VF(1));
    /* equal priorities: the one added first wins; a replace keeps its place */
    vsw_trule e1 = udp_rule(200, 7, 80, 1), e2 = udp_rule(201, 7, 80, 2);
    CHECK_EQ(vsw_rule_add(sw, &e1, &err), 0);
    CHECK_EQ(vsw_rule_add(sw, &e2, &err), 0);
    CHECK_EQ(decides(sw, VF(0), 80), 200);
    e1.rule.set_tc = 6;
    CHECK_EQ(vsw_rule_replace(sw, &e1, &err), 0);
    CHECK_EQ(decides(sw, VF(0), 80), 200);
    e1.rule.priority = 8;                   /* now after 201 */
    CHECK_EQ(vsw_rule_replace(sw, &e1, &err), 0);
    CHECK_EQ(decides(sw, VF(0), 80), 201);
    CHECK_EQ(vsw_rule_del(sw, 201, &err), 0);
    CHECK_EQ(decides(sw, VF(0), 80), 200);
    /* limits: per scope and in total, nothing changes on refusal */
    CHECK_EQ(vsw_rule_limits_set(sw, 1, 10, &err), -EINVAL);  /* 2 global now */
    CHECK_EQ(vsw_rule_limits_set(sw, 2, 2, &err), -EINVAL);   /* 3 in all */
    CHECK_EQ(vsw_rule_limits_set(sw, 2, 5, &err), 0);
    vsw_trule g = udp_rule(300, 1, 81, 0);
    CHECK_EQ(vsw_rule_add(sw, &g, &err), -ENOSPC);
    CHECK(strstr(err.msg, "global") != NULL);
    g.scope = VF(3);
    CHECK_EQ(vsw_rule_add(sw, &g, &err), 0);
    g.cookie = 301; g.rule.dport_lo = g.rule.dport_hi = 82;
    CHECK_EQ(vsw_rule_add(sw, &g, &err), 0);
    g.cookie = 302; g.rule.dport_lo = g.rule.dport_hi = 83;
    CHECK_EQ(vsw_rule_add(sw, &g, &err), -ENOSPC);       /* total 5 */
    CHECK(strstr(err.msg, "full") != NULL);
    CHECK_EQ(decides(sw, VF(3), 83), 0);
    /* flush a port's rules (the VF goes away) */
    CHECK_EQ(vsw_rule_flush_scope(sw, VF(3), &err), 2);
    CHECK_EQ(decides(sw, VF(3), 81), 0);
    CHECK_EQ(vsw_rule_get(sw, 300, &got), -ENOENT);
    CHECK_EQ(decides(sw, VF(1), 53), 101);
    /* a whole set from vsw_acl_set empties the table; the table then
     * refuses changes until that set is cleared */
    vsw_rule whole = udp_rule(0, 0, 53, 7).rule;
    CHECK_EQ(vsw_acl_set(sw, &whole, 1, &err), 0);
    CHECK_EQ(vsw_rule_get(sw, 100, &got), -ENOENT);
    CHECK_EQ(vsw_rule_add(sw, &a, &err), -EBUSY);
    uint64_t pk, by;
    CHECK_EQ(vsw_rule_counters_get(sw, 0, &pk, &by), 0);
    CHECK_EQ(vsw_acl_set(sw, NULL, 0, &err), 0);
    CHECK_EQ(vsw_rule_add(sw, &a, &err), 0);
    CHECK_EQ(decides(sw, VF(0), 53), 100);
    CHECK_EQ(vsw_rule_counters_get(sw, 0, &pk, &by), -EOPNOTSUPP);
    vsw_destroy(sw);
}

/* ---- counters by cookie ---- */

static void test_counters(void)
{
    vsw_config c = { .num_vfs = NVF };
    vsw_switch *sw = vsw_create(&c);
    program_fdb(sw);
    vsw_error err;
    vsw_trule a = udp_rule(1, 50, 53, 3);
    CHECK_EQ(vsw_rule_add(sw, &a, &err), 0);
    uint8_t b[256];
    size_t n = udp_frame(53, b);
    uint64_t want_p = 0, want_b = 0, p, by;
    /* 600 changes of other rules (full builds, shifts, struck entries
     * along the way), frames through rule 1 between them; the data path
     * goes quiescent only now and then, so retired sets pile up and are
     * counted before they are freed */
    for (unsigned i = 0; i < 600; i++) {
        vsw_trule o = udp_rule(1000 + rndn(400), rndn(100), (uint16_t)(1000 + rndn(100)), 1);
        if (vsw_rule_add(sw, &o, NULL))
            vsw_rule_del(sw, o.cookie, NULL);
        if (i % 7 == 0) {
            vsw_decision d;
            vsw_process(sw, VF(0), b, n, 0, &d);
            want_p++;
            want_b += n;
        }
        if (i % 50 == 0) {
            a.rule.set_tc = (uint8_t)(i / 50 % 8);  /* replace keeps counting */
            CHECK_EQ(vsw_rule_replace(sw, &a, &err), 0);
        }
    }
    CHECK_EQ(vsw_rule_stats(sw, 1, &p, &by), 0);
    CHECK_EQ(p, want_p);
    CHECK_EQ(by, want_b);
    vsw_reclaim(sw);
    CHECK_EQ(vsw_rule_stats(sw, 1, &p, &by), 0);
    CHECK_EQ(p, want_p);
    vsw_rule_table_stats st;
    vsw_rule_table_get_stats(sw, &st);
    CHECK(st.full_builds >= 2);
    /* deleted and added again: a new rule, counted from zero */
    CHECK_EQ(vsw_rule_del(sw, 1, &err), 0);
    CHECK_EQ(vsw_rule_stats(sw, 1, &p, &by), -ENOENT);
    CHECK_EQ(vsw_rule_add(sw, &a, &err), 0);
    CHECK_EQ(vsw_rule_stats(sw, 1, &p, &by), 0);
    CHECK_EQ(p, 0);
    vsw_decision d;
    vsw_process(sw, VF(0), b, n, 0, &d);
    CHECK_EQ(vsw_rule_stats(sw, 1, &p, &by), 0);
    CHECK_EQ(p, 1);
    vsw_destroy(sw);
}

/* Many rules in one scope, added at one priority in order, then removed
 * in random order: exercises tail appends and the rank space's growth. */
static void test_one_port_bulk(void)
{
    vsw_config c = { .num_vfs = NVF };
    vsw_switch *sw = vsw_create(&c);
    program_fdb(sw);
    vsw_error err;
    enum { N = 3000, BULK = 1500 };
    int bad = 0;
    /* the first half in one call; a batch with a duplicate changes nothing */
    static vsw_trule batch[BULK];
    for (unsigned i = 0; i < BULK; i++) {
        batch[i] = udp_rule(i + 1, 10, (uint16_t)(2000 + i), (uint8_t)(i % 8));
        batch[i].scope = VF(2);
    }
    batch[BULK - 1].cookie = 7;
    CHECK_EQ(vsw_rule_add_many(sw, batch, BULK, &err), -EEXIST);
    CHECK_EQ(err.rule, BULK - 1);
    vsw_rule_table_stats st;
    vsw_rule_table_get_stats(sw, &st);
    CHECK_EQ(st.rules, 0);
    CHECK_EQ(decides(sw, VF(2), 2000), 0);
    batch[BULK - 1].cookie = BULK;
    CHECK_EQ(vsw_rule_add_many(sw, batch, BULK, &err), 0);
    CHECK_EQ(decides(sw, VF(2), 2000 + BULK - 1), BULK);
    for (unsigned i = BULK; i < N; i++) {
        vsw_trule t = udp_rule(i + 1, 10, (uint16_t)(2000 + i), (uint8_t)(i % 8));
        t.scope = VF(2);
        bad += vsw_rule_add(sw, &t, &err) != 0;
    }
    CHECK_EQ(bad, 0);
    for (unsigned i = 0; i < N; i += 97)
        bad += decides(sw, VF(2), (uint16_t)(2000 + i)) != i + 1;
    bad += decides(sw, VF(1), 2000) != 0;
    CHECK_EQ(bad, 0);
    vsw_rule_table_get_stats(sw, &st);
    printf("  %u rules on one port: %llu full builds, %llu shifts\n", N,
           (unsigned long long)st.full_builds, (unsigned long long)st.shifts);
    CHECK(st.full_builds < N / 20);
    for (unsigned i = N; i > 0; i--)
        bad += vsw_rule_del(sw, ((uint64_t)i * 7919) % N + 1, &err) != 0;
    CHECK_EQ(bad, 0);
    vsw_rule_table_get_stats(sw, &st);
    CHECK_EQ(st.rules, 0);
    CHECK_EQ(decides(sw, VF(2), 2000), 0);
    vsw_destroy(sw);
}

int main(void)
{
    test_errors();
    test_counters();
    test_one_port_bulk();
    vsw_rule_table_stats agg = {0};
    property_run(40, 1500, 25, 64, &agg);
    property_run(300, 2500, 100, 256, &agg);
    property_run(1200, 2000, 500, 512, &agg);
    CHECK(agg.full_builds > 10);
    CHECK(agg.shifts > 0);
    return t_done();
}
