/* Property test: the decision-tree classifier (single and burst lookups)
 * must pick exactly the rule the linear-scan reference picks, for random
 * rule sets and frames, through the whole vsw_process pipeline. */
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
        vsw_decision dt[B], dl, db[B];
        vsw_set_classifier(sw, VSW_CLASSIFIER_TREE);
        for (int j = 0; j < B; j++)
            vsw_process(sw, inp[j], fr[j], len[j], 0, &dt[j]);
        vsw_process_burst(sw, in0, fr, len, B, 0, db);
        vsw_set_classifier(sw, VSW_CLASSIFIER_LINEAR);
        for (int j = 0; j < B; j++) {
            vsw_process(sw, inp[j], fr[j], len[j], 0, &dl);
            if (dl.rule != dt[j].rule || dl.rule != db[j].rule || dl.drop != dt[j].drop ||
                dl.tc != dt[j].tc || dl.drop != db[j].drop || dl.tc != db[j].tc ||
                memcmp(&dl.egress, &dt[j].egress, sizeof(dl.egress)) ||
                memcmp(&dl.egress, &db[j].egress, sizeof(dl.egress))) {
                if (mism++ < 3)
                    fprintf(stderr, "mismatch mode %d n %zu: linear %d tree %d burst %d\n",
                            mode, nrules, dl.rule, dt[j].rule, db[j].rule);
            }
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
