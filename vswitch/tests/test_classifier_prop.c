/* Property test: the decision-tree classifier (single and burst lookups,
 * with the leaf check this CPU gets and with the portable one) must pick
 * exactly the rule the linear-scan reference picks, for random rule sets
 * and frames, through the whole vsw_process pipeline. */
#include "testlib.h"
#include "rulegen.h"
#include "vsw_internal.h"      /* VSW_ACL_SMALL / VSW_ACL_BIG */

#define NVF 8

static void program_fdb(vsw_switch *sw)
{
    for (int i = 0; i < 3; i++)
        for (int v = 0; v < 3; v++)
            vsw_fdb_add(sw, rg_macs[i], rg_vids[v], 2 + (unsigned)i, NULL);
}

static int run_set(vsw_switch *sw, enum rg_mode mode, size_t nrules, size_t npkts)
{
    unsigned np = vsw_num_ports(sw);
    vsw_rule *rules = calloc(nrules ? nrules : 1, sizeof(*rules));
    for (size_t i = 0; i < nrules; i++)
        rg_rule(&rules[i], mode, np);
    vsw_error err;
    int rc = vsw_acl_set(sw, rules, nrules, &err);
    if (rc) {
        fprintf(stderr, "acl_set: %s\n", err.msg);
        free(rules);
        return -1;
    }
    int mism = 0, matched = 0;
    unsigned char *hit = calloc(nrules + 1, 1);
    size_t distinct = 0;
    enum { B = 16 };
    uint8_t buf[B][512];
    const uint8_t *fr[B];
    size_t len[B];
    unsigned inp[B];
    for (size_t p = 0; p < npkts; p += B) {
        unsigned in0 = 0;
        for (int j = 0; j < B; j++) {
            tframe f;
            const vsw_rule *r = nrules && rndn(10) ? &rules[rndn((unsigned)nrules)] : NULL;
            rg_frame(r, &f, &inp[j], np);
            if (j == 0)
                in0 = inp[j];
            inp[j] = in0;               /* a burst shares one ingress port */
            len[j] = tf_build(&f, buf[j]);
            fr[j] = buf[j];
        }
        /* per frame and burst, with the default, the portable and the
         * AVX2 leaf check */
        vsw_decision d[6][B], dl;
        static const enum vsw_classifier cls[3] = {VSW_CLASSIFIER_TREE,
                                                   VSW_CLASSIFIER_TREE_SCALAR,
                                                   VSW_CLASSIFIER_TREE_AVX2};
        for (int c = 0; c < 3; c++) {
            vsw_set_classifier(sw, cls[c]);
            for (int j = 0; j < B; j++)
                vsw_process(sw, inp[j], fr[j], len[j], 0, &d[2 * c][j]);
            vsw_process_burst(sw, in0, fr, len, B, 0, d[2 * c + 1]);
        }
        vsw_set_classifier(sw, VSW_CLASSIFIER_LINEAR);
        for (int j = 0; j < B; j++) {
            vsw_process(sw, inp[j], fr[j], len[j], 0, &dl);
            int bad = 0;
            for (int v = 0; v < 6; v++)
                bad |= dl.rule != d[v][j].rule || dl.drop != d[v][j].drop ||
                       dl.tc != d[v][j].tc || memcmp(&dl.egress, &d[v][j].egress, sizeof(dl.egress));
            if (bad && mism++ < 3)
                fprintf(stderr, "mismatch mode %d n %zu: linear %d tree %d burst %d, "
                        "scalar leaf check: tree %d burst %d, AVX2: tree %d burst %d\n",
                        mode, nrules, dl.rule, d[0][j].rule, d[1][j].rule, d[2][j].rule,
                        d[3][j].rule, d[4][j].rule, d[5][j].rule);
            matched += dl.rule >= 0;
            if (dl.rule >= 0 && !hit[dl.rule]) {
                hit[dl.rule] = 1;
                distinct++;
            }
        }
    }
    vsw_set_classifier(sw, VSW_CLASSIFIER_TREE);
    vsw_acl_stats st;
    vsw_acl_get_stats(sw, &st);
    printf("  mode %d rules %5zu: trees %zu nodes %6zu depth %2u refs/rule %.2f, "
           "%d/%zu frames matched, %zu distinct rules hit\n",
           mode, nrules, st.trees, st.nodes, st.max_depth,
           nrules ? (double)st.leaf_refs / (double)nrules : 0.0, matched, npkts, distinct);
    free(rules);
    free(hit);
    if (nrules >= 50 && distinct < 10)
        return -3;
    /* a vacuous comparison would not be a test: most frames must hit a rule */
    if (nrules >= 16 && matched < (int)npkts / 4)
        return -2;
    return mism;
}

/* The MACs and IPv6 addresses the wide-rule and long-leaf tests match on,
 * in a rule and in a frame. */
static void wide_fields(vsw_rule *r)
{
    memcpy(r->src_mac, rg_macs[1], 6);
    memcpy(r->dst_mac, rg_macs[0], 6);
    memset(r->src_mac_mask, 0xff, 6);
    memset(r->dst_mac_mask, 0xff, 6);
    r->ip_version = 6;
    for (int i = 0; i < 16; i++) {
        r->src_ip[i] = (uint8_t)(0x20 + i);
        r->dst_ip[i] = (uint8_t)(0x40 + i);
    }
    r->src_plen = r->dst_plen = 128;
}
static void wide_frame(tframe *f)
{
    tf_default(f);
    memcpy(f->src, rg_macs[1], 6);
    memcpy(f->dst, rg_macs[0], 6);
    f->ethertype = 0x86dd;
    for (int i = 0; i < 16; i++) {
        f->src_ip[i] = (uint8_t)(0x20 + i);
        f->dst_ip[i] = (uint8_t)(0x40 + i);
    }
    f->proto = 6;
}

/* Install rules r[0..n); on error say why. */
static int set_rules(vsw_switch *sw, const vsw_rule *r, size_t n)
{
    vsw_error err;
    if (vsw_acl_set(sw, r, n, &err)) {
        fprintf(stderr, "acl_set: %s\n", err.msg);
        return -1;
    }
    return 0;
}

/* Frames f[0..n) from port 3 must match rule want[i] (-1: none) with every
 * classifier, one frame per call and in one burst.  Returns the misses. */
static int expect_rules(vsw_switch *sw, const char *what, const tframe *f, int n,
                        const int *want)
{
    static const enum vsw_classifier cls[4] = {VSW_CLASSIFIER_TREE, VSW_CLASSIFIER_TREE_SCALAR,
                                               VSW_CLASSIFIER_TREE_AVX2, VSW_CLASSIFIER_LINEAR};
    enum { MAXF = 16 };
    uint8_t buf[MAXF][512];
    const uint8_t *fr[MAXF];
    size_t len[MAXF];
    vsw_decision d, db[MAXF];
    if (n > MAXF)
        return -1;
    for (int i = 0; i < n; i++) {
        len[i] = tf_build(&f[i], buf[i]);
        fr[i] = buf[i];
    }
    int bad = 0;
    for (int c = 0; c < 4; c++) {
        vsw_set_classifier(sw, cls[c]);
        vsw_process_burst(sw, 3, fr, len, (size_t)n, 0, db);
        for (int i = 0; i < n; i++) {
            vsw_process(sw, 3, fr[i], len[i], 0, &d);
            if (d.rule != want[i] || db[i].rule != want[i]) {
                fprintf(stderr, "%s, classifier %d, frame %d: rule %d / burst %d, want %d\n",
                        what, cls[c], i, d.rule, db[i].rule, want[i]);
                bad++;
            }
        }
    }
    vsw_set_classifier(sw, VSW_CLASSIFIER_TREE);
    return bad;
}

/* A rule that specifies nearly every field needs more lanes than a leaf
 * group has (15 key halves and two port ranges: 17 > VSW_LG_LANES); the
 * group checks its first 16 and confirms the rest against the full rule.
 * Frames that fail only a lane past the 16th (the dport range), or only an
 * earlier one, must fall through to the next rule, on every classifier. */
static int wide_rule(vsw_switch *sw)
{
    vsw_rule r[2];
    memset(r, 0, sizeof(r));
    r[0].match = VSW_M_IN_PORT | VSW_M_SRC_MAC | VSW_M_DST_MAC | VSW_M_SRC_IP | VSW_M_DST_IP |
                 VSW_M_IP_PROTO | VSW_M_SPORT | VSW_M_DPORT | VSW_M_DSCP | VSW_M_TCP_FLAGS;
    r[0].in_port = 3;
    wide_fields(&r[0]);
    r[0].ip_proto = 6;
    r[0].sport_lo = 1000; r[0].sport_hi = 1500;    /* not prefixes: range lanes */
    r[0].dport_lo = 2000; r[0].dport_hi = 2100;
    r[0].dscp = 10; r[0].dscp_mask = 63;
    r[0].tcp_flags = 0x02; r[0].tcp_flags_mask = 0x12;
    r[0].verdict = VSW_ACT_DROP;
    r[1].priority = 1;                              /* everything else */
    r[1].verdict = VSW_ACT_PERMIT;
    if (set_rules(sw, r, 2))
        return -1;
    enum { NF = 5 };
    static const int want[NF] = {0, 1, 1, 1, 1};
    tframe f[NF];
    for (int i = 0; i < NF; i++) {
        wide_frame(&f[i]);
        f[i].sport = 1200;
        f[i].dport = 2050;
        f[i].dscp = 10;
        f[i].tcp_flags = 0x02;
    }
    f[1].dport = 2101;                  /* fails the lane past the 16th */
    f[2].dport = 1999;
    f[3].sport = 1501;
    f[4].dst_ip[15] ^= 1;
    return expect_rules(sw, "wide rule", f, NF, want);
}

/* Entries share a lane only if it compares the same way: an exact lane
 * for dport 0-255 (the prefix's mask 0xff00, value 0) and a range lane for
 * dport 0-0xff00 (value 0, width 0xff00) hold the same numbers, and the
 * second rule must keep its own range lane. */
static int lane_kinds(vsw_switch *sw)
{
    vsw_rule r[2];
    memset(r, 0, sizeof(r));
    for (int i = 0; i < 2; i++) {
        r[i].match = VSW_M_IP_PROTO | VSW_M_DPORT;
        r[i].ip_version = 4;
        r[i].ip_proto = 6;
        r[i].priority = (uint16_t)i;
        r[i].verdict = VSW_ACT_PERMIT;
    }
    r[0].dport_lo = 0; r[0].dport_hi = 0xff;        /* a prefix: exact lane */
    r[1].dport_lo = 0; r[1].dport_hi = 0xff00;      /* not one: range lane */
    if (set_rules(sw, r, 2))
        return -1;
    enum { NF = 3 };
    static const uint16_t dport[NF] = {100, 1000, 0xff01};
    static const int want[NF] = {0, 1, -1};
    tframe f[NF];
    for (int i = 0; i < NF; i++) {
        tf_default(&f[i]);
        memcpy(f[i].src, rg_macs[1], 6);
        memcpy(f[i].dst, rg_macs[0], 6);
        f[i].proto = 6;
        f[i].dport = dport[i];
    }
    return expect_rules(sw, "lane kinds", f, NF, want);
}

/* One leaf of many groups: 32768 rules that differ only in nested port
 * ranges that are not prefixes ([32767 - i, 32768 + i], so no tree bit
 * separates them) all land in one leaf of 10923 groups (three entries
 * each: they share 13 lanes, for the MACs, the addresses and the IP
 * version, and each range takes one more).  With VSW_TN_LONG
 * lowered (the Makefile's test_classifier_long build), the leaf has more
 * groups than its descriptor can count, which then comes from the word
 * before its first group.  Frames must match the first rule whose range
 * holds, down to the last one. */
static int long_leaf(vsw_switch *sw)
{
    enum { NR = 32768, NF = 7 };
    vsw_rule *r = calloc(NR, sizeof(*r));
    for (unsigned i = 0; i < NR; i++) {
        r[i].match = VSW_M_SRC_MAC | VSW_M_DST_MAC | VSW_M_SRC_IP | VSW_M_DST_IP | VSW_M_DPORT;
        wide_fields(&r[i]);
        r[i].dport_lo = (uint16_t)(32767 - i);
        r[i].dport_hi = (uint16_t)(32768 + i);
        r[i].verdict = VSW_ACT_DROP;
    }
    int rc = set_rules(sw, r, NR);
    free(r);
    if (rc)
        return -1;
    const vsw_acl *a = vsw_cur(sw)->acl;
    const vsw_tree *t = &a->trees[0];
    int bad = 0;
    unsigned ng = vsw_tn_ngroups(t, t->root), ne = 0;
    for (unsigned j = 0; j < ng; j++)
        ne += vsw_tn_groups(t, t->root)[j].nent;
    if (a->ntrees != 1 || !(t->root & VSW_TN_LEAF) || ne != NR ||
        (ng >= VSW_TN_LONG) != (vsw_tn_count_field(t->root) == VSW_TN_LONG)) {
        fprintf(stderr, "long leaf: %zu trees, root %#llx: %u groups of %u entries\n",
                a->ntrees, (unsigned long long)t->root, ng, ne);
        bad++;
    }
#if VSW_TN_LONG < 0x7fff
    if (ng < VSW_TN_LONG) {
        fprintf(stderr, "long leaf: %u groups, not a long leaf\n", ng);
        bad++;
    }
#endif
    /* the last frame's address matches no rule */
    static const uint16_t dport[NF] = {0, 65535, 32767, 32768, 100, 40000, 0};
    static const int want[NF] = {32767, 32767, 0, 0, 32667, 7232, -1};
    tframe f[NF];
    for (int i = 0; i < NF; i++) {
        wide_frame(&f[i]);
        f[i].dport = dport[i];
    }
    f[NF - 1].dst_ip[15] ^= 1;
    return bad + expect_rules(sw, "long leaf", f, NF, want);
}

int main(void)
{
    setvbuf(stdout, NULL, _IOLBF, 0);
    vsw_config cfg = { .num_vfs = NVF };
    vsw_switch *sw = vsw_create(&cfg);
    CHECK(sw != NULL);
    vsw_port_cfg pc;
    vsw_port_cfg_default(&pc);
    pc.learn = false;                  /* keep the FDB fixed between runs */
    vsw_port_set(sw, VSW_PORT_UPLINK, &pc, NULL);
    program_fdb(sw);
    CHECK_EQ(wide_rule(sw), 0);
    CHECK_EQ(lane_kinds(sw), 0);
    CHECK_EQ(long_leaf(sw), 0);
    static const size_t sizes[] = {0, 1, 2, 5, 16, 50, 200, 1000, 3000};
    for (int round = 0; round < 3; round++)
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
            CHECK_EQ(run_set(sw, RG_RANDOM, sizes[i], 1024), 0);
    /* bursts walk small, middle-sized and big rule sets three different
     * ways (acl_tree.c); make sure each way was compared above */
    vsw_acl_stats st;
    CHECK_EQ(run_set(sw, RG_RANDOM, 200, 1024), 0);
    vsw_acl_get_stats(sw, &st);
    CHECK(st.bytes < VSW_ACL_SMALL);
    CHECK_EQ(run_set(sw, RG_TENANT, 4096, 4096), 0);
    vsw_acl_get_stats(sw, &st);
    CHECK(st.bytes >= VSW_ACL_SMALL && st.bytes < VSW_ACL_BIG);
    CHECK_EQ(run_set(sw, RG_TENANT, 20000, 4096), 0);
    vsw_acl_get_stats(sw, &st);
    CHECK(st.bytes >= VSW_ACL_BIG);
    CHECK_EQ(run_set(sw, RG_CROSS, 8000, 4096), 0);
    vsw_destroy(sw);
    return t_done();
}
