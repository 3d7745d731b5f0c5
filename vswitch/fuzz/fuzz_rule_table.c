/* libFuzzer target: the incremental rule table.  The input is a sequence
 * of operations (add, replace, delete, add several at once, flush a
 * scope, check) on rules decoded into small value domains (so they
 * overlap and tie on priority).  Refused operations must change nothing;
 * at every check, frames decoded from the input must get the decision of
 * a linear first-match scan of the model's rules in (priority, order
 * added) order (a second switch with the same list installed by
 * vsw_acl_set, linear classifier), with the tree classifier (per frame and
 * in a burst) and with the linear one on the table's switch.  Bounded: at
 * most 96 operations and 64 rules an input. */
#include "vswitch.h"
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <errno.h>

#define MAXR 64
#define NP   6          /* ports of a switch with 4 VFs */

typedef struct rd { const uint8_t *p; size_t n; } rd;
static unsigned take(rd *r)
{
    if (!r->n)
        return 0;
    r->n--;
    return *r->p++;
}

typedef struct mrule { vsw_trule t; uint64_t seq; } mrule;
static mrule model[MAXR];
static size_t nmodel;
static uint64_t mseq;

static void decode_rule(rd *in, vsw_trule *t)
{
    memset(t, 0, sizeof(*t));
    vsw_rule *r = &t->rule;
    t->cookie = take(in) % 80;
    unsigned sc = take(in) % (NP + 2);
    t->scope = sc >= NP ? VSW_RULE_GLOBAL : (uint16_t)sc;
    t->chain = take(in) == 0xff;            /* refused */
    unsigned m = take(in) | (take(in) << 8);
    r->match = m & (VSW_M_IN_PORT | VSW_M_IP_PROTO | VSW_M_DPORT | VSW_M_SPORT |
                    VSW_M_DST_IP | VSW_M_SRC_IP | VSW_M_DSCP | VSW_M_VLAN | VSW_M_DST_MAC);
    r->priority = take(in) % 8;
    r->in_port = (uint16_t)(take(in) % (NP + 1));   /* NP: invalid */
    r->ip_proto = take(in) & 1 ? 6 : 17;
    r->dport_lo = (uint16_t)(take(in) % 16);
    r->dport_hi = (uint16_t)(r->dport_lo + take(in) % 20 - 2);    /* may invert */
    r->sport_lo = (uint16_t)(take(in) % 8);
    r->sport_hi = (uint16_t)(r->sport_lo + take(in) % 8);
    r->ip_version = 4;
    r->dst_plen = (uint8_t)(take(in) % 33);
    r->src_plen = (uint8_t)(take(in) % 33);
    r->dst_ip[0] = r->src_ip[0] = 10;
    r->dst_ip[3] = (uint8_t)(take(in) % 4);
    r->src_ip[3] = (uint8_t)(take(in) % 4);
    for (int s = 0; s < 2; s++) {
        uint8_t *ip = s ? r->dst_ip : r->src_ip;
        unsigned pl = s ? r->dst_plen : r->src_plen;
        for (unsigned b = pl; b < 32; b++)
            ip[b / 8] &= (uint8_t)~(0x80 >> (b % 8));
    }
    r->dscp_mask = 0x3c;
    r->dscp = (uint8_t)(take(in) & 0x3c);
    r->vid = (uint16_t)(take(in) % 3);
    r->dst_mac[0] = 2;
    r->dst_mac[5] = (uint8_t)(take(in) % 3);
    memset(r->dst_mac_mask, 0xff, 6);
    r->verdict = take(in) & 1;
    r->flags = take(in) & (VSW_ACTF_COUNT | VSW_ACTF_SET_TC | VSW_ACTF_MIRROR);
    r->set_tc = (uint8_t)(take(in) % 9);    /* 8: invalid */
    r->mirror_port = (uint16_t)(take(in) % (NP + 1));
}

static int find(uint64_t cookie)
{
    for (size_t i = 0; i < nmodel; i++)
        if (model[i].t.cookie == cookie)
            return (int)i;
    return -1;
}

static int mcmp(const void *a, const void *b)
{
    const mrule *x = a, *y = b;
    if (x->t.rule.priority != y->t.rule.priority)
        return x->t.rule.priority < y->t.rule.priority ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static size_t build_frame(rd *in, uint8_t *b, unsigned *port)
{
    memset(b, 0, 64);
    *port = take(in) % NP;
    b[0] = 2; b[5] = (uint8_t)(take(in) % 3);
    b[6] = 2; b[11] = 9;
    size_t o = 12;
    unsigned vid = take(in) % 3;
    if (vid) {
        b[12] = 0x81; b[13] = 0; b[15] = (uint8_t)vid;
        o = 16;
    }
    b[o] = 0x08; b[o + 1] = 0;
    uint8_t *ip = b + o + 2;
    ip[0] = 0x45; ip[1] = (uint8_t)(take(in) & 0xfc); ip[3] = 46; ip[8] = 64;
    ip[9] = take(in) & 1 ? 6 : 17;
    ip[12] = 10; ip[15] = (uint8_t)(take(in) % 4);
    ip[16] = 10; ip[19] = (uint8_t)(take(in) % 4);
    uint8_t *l4 = ip + 20;
    l4[1] = (uint8_t)(take(in) % 10);
    l4[3] = (uint8_t)(take(in) % 20);
    l4[12] = 0x50;
    return o + 2 + 46;
}

static int check(vsw_switch *sw, vsw_switch *ref, rd *in)
{
    qsort(model, nmodel, sizeof(model[0]), mcmp);
    vsw_rule rs[MAXR];
    for (size_t i = 0; i < nmodel; i++) {
        rs[i] = model[i].t.rule;        /* as installed: scope applied */
        rs[i].priority = (uint32_t)i;
    }
    vsw_error err;
    if (vsw_acl_set(ref, rs, nmodel, &err)) {
        fprintf(stderr, "reference refused the model: %s\n", err.msg);
        return -1;
    }
    unsigned nfr = 1 + take(in) % 8, port0 = 0;
    uint8_t buf[8][64];
    const uint8_t *fr[8];
    size_t len[8];
    unsigned port[8];
    for (unsigned i = 0; i < nfr; i++) {
        len[i] = build_frame(in, buf[i], &port[i]);
        fr[i] = buf[i];
        if (i == 0)
            port0 = port[i];
    }
    vsw_decision db[8];
    vsw_set_classifier(sw, VSW_CLASSIFIER_TREE);
    vsw_process_burst(sw, port0, fr, len, nfr, 0, db);
    for (unsigned i = 0; i < nfr; i++)
        for (int c = 0; c < 3; c++) {
            vsw_decision d, dl;
            unsigned p = c == 2 ? port0 : port[i];
            if (c < 2) {
                vsw_set_classifier(sw, c ? VSW_CLASSIFIER_LINEAR : VSW_CLASSIFIER_TREE);
                vsw_process(sw, p, fr[i], len[i], 0, &d);
            } else {
                d = db[i];
            }
            vsw_process(ref, p, fr[i], len[i], 0, &dl);
            uint64_t got = 0, want = dl.rule >= 0 ? model[dl.rule].t.cookie : 0;
            if (d.rule >= 0 && vsw_rule_id_cookie(sw, d.rule, &got))
                return -1;
            if ((d.rule >= 0) != (dl.rule >= 0) || got != want || d.drop != dl.drop ||
                d.tc != dl.tc || memcmp(&d.egress, &dl.egress, sizeof(d.egress))) {
                fprintf(stderr, "mismatch (%d): rule %lld vs %lld\n", c,
                        (long long)got, (long long)want);
                return -1;
            }
        }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rd in = { data, size };
    static vsw_switch *sw, *ref;    /* made once; emptied per input */
    if (!sw) {
        vsw_config c = { .num_vfs = NP - 2 };
        sw = vsw_create(&c);
        ref = vsw_create(&c);
        if (!sw || !ref)
            abort();
        for (unsigned p = 0; p < 3; p++) {
            uint8_t mac[6] = {2, 0, 0, 0, 0, (uint8_t)p};
            vsw_fdb_add(sw, mac, 0, 2 + p, NULL);
            vsw_fdb_add(ref, mac, 0, 2 + p, NULL);
        }
        vsw_set_classifier(ref, VSW_CLASSIFIER_LINEAR);
    }
    vsw_acl_set(sw, NULL, 0, NULL);     /* also empties the rule table */
    vsw_rule_limits_set(sw, 16384, VSW_ACL_MAX_RULES, NULL);
    nmodel = 0;
    int bad = 0;
    for (unsigned op = 0; op < 96 && in.n && !bad; op++) {
        unsigned k = take(&in) % 8;
        vsw_error err;
        vsw_trule t, got;
        if (k <= 2) {                               /* add */
            decode_rule(&in, &t);
            int rc = vsw_rule_add(sw, &t, &err);
            if (!rc) {
                if (find(t.cookie) >= 0 || nmodel >= MAXR || vsw_rule_get(sw, t.cookie, &got))
                    abort();
                model[nmodel++] = (mrule){ got, ++mseq };
            }
        } else if (k == 3) {                        /* replace */
            decode_rule(&in, &t);
            int i = find(t.cookie);
            int rc = vsw_rule_replace(sw, &t, &err);
            if (!rc) {
                if (i < 0 || vsw_rule_get(sw, t.cookie, &got))
                    abort();
                model[i].t = got;
            } else if (rc == -ENOENT && i >= 0) {
                abort();
            }
        } else if (k == 4) {                        /* delete */
            uint64_t cookie = take(&in) % 80;
            int i = find(cookie);
            int rc = vsw_rule_del(sw, cookie, &err);
            if ((rc == 0) != (i >= 0))
                abort();
            if (!rc)
                model[i] = model[--nmodel];
        } else if (k == 5) {                        /* several at once */
            vsw_trule b[4];
            unsigned nb = take(&in) % 4;
            for (unsigned j = 0; j < nb; j++)
                decode_rule(&in, &b[j]);
            if (!vsw_rule_add_many(sw, b, nb, &err))
                for (unsigned j = 0; j < nb; j++) {
                    if (nmodel >= MAXR || vsw_rule_get(sw, b[j].cookie, &got))
                        abort();
                    model[nmodel++] = (mrule){ got, ++mseq };
                }
        } else if (k == 6) {                        /* flush a scope */
            unsigned sc = take(&in) % (NP + 1);
            uint16_t scope = sc == NP ? VSW_RULE_GLOBAL : (uint16_t)sc;
            int rc = vsw_rule_flush_scope(sw, scope, &err);
            int want = 0;
            for (size_t i = 0; i < nmodel;)
                if (model[i].t.scope == scope) {
                    model[i] = model[--nmodel];
                    want++;
                } else {
                    i++;
                }
            if (rc != want)
                abort();
        } else {
            bad = check(sw, ref, &in);
        }
        if (op == 0)
            vsw_rule_limits_set(sw, 24, MAXR, NULL);
    }
    if (!bad)
        bad = check(sw, ref, &in);
    if (bad)
        abort();
    return 0;
}
