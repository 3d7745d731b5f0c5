/* libFuzzer target: ACL rule compilation.  The input is decoded into a
 * rule set (either raw vsw_rule bytes, which mostly exercise validation,
 * or a structured decoding into small value domains, which mostly compiles)
 * followed by frames.  Invalid sets must be rejected with a message and
 * leave the installed set in place; valid ones must classify every frame
 * exactly as the linear-scan reference does, with either leaf check. */
#include "vswitch.h"
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

static vsw_switch *sw;

typedef struct rd { const uint8_t *p; size_t n; } rd;
static unsigned take(rd *r)
{
    if (!r->n)
        return 0;
    r->n--;
    return *r->p++;
}

static void decode_rule(rd *in, vsw_rule *r)
{
    memset(r, 0, sizeof(*r));
    unsigned m = take(in) | (take(in) << 8);
    r->match = m & 0x3fff;
    r->priority = take(in) % 16;
    r->in_port = (uint16_t)(take(in) % 7);
    unsigned op = take(in) % 7;
    r->out_port = (uint16_t)(op == 6 ? VSW_PORT_FLOOD : op);
    for (int i = 0; i < 6; i++) {
        r->src_mac_mask[i] = (uint8_t)(take(in) & 0x81 ? 0xff : 0);
        r->src_mac[i] = (uint8_t)((i == 5 ? take(in) % 4 : 2 * (i == 0)) & r->src_mac_mask[i]);
        r->dst_mac_mask[i] = r->src_mac_mask[i];
        r->dst_mac[i] = (uint8_t)((i == 5 ? take(in) % 4 : 2 * (i == 0)) & r->dst_mac_mask[i]);
    }
    r->vid = (uint16_t)(take(in) % 3);
    static const uint16_t ets[4] = {0x0800, 0x86dd, 0x0806, 0x8100};
    r->ethertype = ets[take(in) % 4];
    r->ip_version = take(in) & 1 ? 6 : 4;
    unsigned bits = r->ip_version == 4 ? 32 : 128;
    r->src_plen = (uint8_t)(take(in) % (bits + 1));
    r->dst_plen = (uint8_t)(take(in) % (bits + 1));
    for (int s = 0; s < 2; s++) {
        uint8_t *ip = s ? r->dst_ip : r->src_ip;
        unsigned pl = s ? r->dst_plen : r->src_plen;
        ip[0] = 10;
        ip[1] = (uint8_t)(take(in) % 4);
        ip[3] = (uint8_t)take(in);
        ip[15] = (uint8_t)take(in);
        for (unsigned b = pl; b < 128; b++)
            ip[b / 8] &= (uint8_t)~(0x80 >> (b % 8));
    }
    static const uint8_t pr[3] = {6, 17, 1};
    r->ip_proto = pr[take(in) % 3];
    r->sport_lo = (uint16_t)(take(in) * 4);
    r->sport_hi = (uint16_t)(r->sport_lo + take(in) * 8);
    r->dport_lo = (uint16_t)(take(in) * 4);
    r->dport_hi = (uint16_t)(r->dport_lo + take(in) * 8);
    r->dscp_mask = (uint8_t)(take(in) & 63);
    r->dscp = (uint8_t)(take(in) & r->dscp_mask);
    r->tcp_flags_mask = (uint8_t)take(in);
    r->tcp_flags = (uint8_t)(take(in) & r->tcp_flags_mask);
    if ((r->match & VSW_M_TCP_FLAGS) && (r->match & VSW_M_IP_PROTO))
        r->ip_proto = 6;
    r->verdict = (uint8_t)(take(in) & 1);
    r->flags = VSW_ACTF_COUNT | (take(in) & 1 ? VSW_ACTF_SET_TC : 0);
    r->set_tc = (uint8_t)(take(in) % 8);
}

static size_t build_frame(rd *in, uint8_t *b)
{
    memset(b, 0, 128);
    b[0] = 2; b[5] = (uint8_t)(take(in) % 4);
    b[6] = 2; b[11] = (uint8_t)(take(in) % 4);
    size_t o = 12;
    unsigned vid = take(in) % 3;
    if (vid) {
        b[o++] = 0x81; b[o++] = 0; b[o++] = 0; b[o++] = (uint8_t)vid;
    }
    int v6 = take(in) & 1;
    b[o++] = v6 ? 0x86 : 0x08; b[o++] = v6 ? 0xdd : 0x00;
    static const uint8_t pr[3] = {6, 17, 1};
    uint8_t proto = pr[take(in) % 3];
    uint8_t dscp = (uint8_t)(take(in) & 63);
    if (v6) {
        b[o] = (uint8_t)(0x60 | (dscp >> 2)); b[o + 1] = (uint8_t)((dscp & 3) << 6);
        b[o + 6] = proto;
        for (int s = 0; s < 2; s++) {
            b[o + 8 + 16 * s] = 10; b[o + 9 + 16 * s] = (uint8_t)(take(in) % 4);
            b[o + 11 + 16 * s] = (uint8_t)take(in); b[o + 23 + 16 * s] = (uint8_t)take(in);
        }
        o += 40;
    } else {
        b[o] = 0x45; b[o + 1] = (uint8_t)(dscp << 2); b[o + 9] = proto;
        for (int s = 0; s < 2; s++) {
            b[o + 12 + 4 * s] = 10; b[o + 13 + 4 * s] = (uint8_t)(take(in) % 4);
            b[o + 15 + 4 * s] = (uint8_t)take(in);
        }
        o += 20;
    }
    unsigned sp = take(in) * 4 + take(in) % 4, dp = take(in) * 4 + take(in) % 4;
    b[o] = (uint8_t)(sp >> 8); b[o + 1] = (uint8_t)sp;
    b[o + 2] = (uint8_t)(dp >> 8); b[o + 3] = (uint8_t)dp;
    b[o + 13] = (uint8_t)take(in);
    return o + 20;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!sw) {
        vsw_config c = { .num_vfs = 4 };
        sw = vsw_create(&c);
        static const uint8_t m[6] = {2, 0, 0, 0, 0, 2};
        vsw_fdb_add(sw, m, 0, VSW_PORT_VF(0), NULL);
    }
    if (size < 2)
        return 0;
    rd in = {data + 2, size - 2};
    unsigned n = data[1] % 64;
    vsw_rule *rules = calloc(n ? n : 1, sizeof(vsw_rule));
    if (data[0] & 1) {                     /* raw: validation paths */
        size_t have = in.n / sizeof(vsw_rule);
        if (n > have)
            n = (unsigned)have;
        memcpy(rules, in.p, n * sizeof(vsw_rule));
        in.p += n * sizeof(vsw_rule);
        in.n -= n * sizeof(vsw_rule);
    } else {
        for (unsigned i = 0; i < n; i++)
            decode_rule(&in, &rules[i]);
    }
    vsw_error e;
    memset(&e, 0, sizeof(e));
    vsw_decision before;
    uint8_t fb[128];
    size_t fl = build_frame(&(rd){data, size}, fb);
    vsw_process(sw, VSW_PORT_VF(1), fb, fl, 0, &before);
    int rc = vsw_acl_set(sw, rules, n, &e);
    if (rc) {
        vsw_decision after;
        if (e.code != rc || !e.msg[0] || memchr(e.msg, 0, sizeof(e.msg)) == NULL)
            abort();
        vsw_process(sw, VSW_PORT_VF(1), fb, fl, 0, &after);
        if (after.acl_gen != before.acl_gen || after.rule != before.rule)
            abort();                       /* failed update changed tables */
    } else {
        while (in.n) {
            unsigned port = take(&in) % 6;
            fl = build_frame(&in, fb);
            vsw_decision dt, ds, da, dl;   /* tree; portable / AVX2 leaf check; linear */
            vsw_set_classifier(sw, VSW_CLASSIFIER_TREE);
            vsw_process(sw, port, fb, fl, 0, &dt);
            vsw_set_classifier(sw, VSW_CLASSIFIER_TREE_SCALAR);
            vsw_process(sw, port, fb, fl, 0, &ds);
            vsw_set_classifier(sw, VSW_CLASSIFIER_TREE_AVX2);
            vsw_process(sw, port, fb, fl, 0, &da);
            vsw_set_classifier(sw, VSW_CLASSIFIER_LINEAR);
            vsw_process(sw, port, fb, fl, 0, &dl);
            vsw_set_classifier(sw, VSW_CLASSIFIER_TREE);
            if (dt.rule != dl.rule || dt.drop != dl.drop || ds.rule != dl.rule ||
                ds.drop != dl.drop || da.rule != dl.rule || da.drop != dl.drop) {
                fprintf(stderr, "tree %d (portable leaf check %d, AVX2 %d) linear %d\n", dt.rule,
                        ds.rule, da.rule, dl.rule);
                abort();
            }
        }
    }
    free(rules);
    return 0;
}
