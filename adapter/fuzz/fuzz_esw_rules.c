/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_esw_rules.c - the 2.3 offloaded-rule and FDB commands and the 2.2
 * eswitch mode (src/dev/admin_esw.c) under PF driver control, against the real data
 * path and its switch. The input is a script of steps of 192 bytes: a
 * 64-byte descriptor (the opcode picked from the eswitch commands, or
 * taken raw) and the 128 bytes the device reads when it DMAs the rule (at
 * any address the descriptor names inside a small PF memory window); or an
 * event (NumVFs change, a frame injected as a function's or the wire's
 * traffic, untagged or 802.1Q-tagged so VLAN push and pop rules meet both,
 * time passing). fuzz_esw_rules.dict has the rule fields' telling values.
 *
 * Invariants checked (abort on violation):
 *   - the descriptor comes back DONE, with ERR exactly when status != OK;
 *   - a failing command changes nothing: the rule table's size and every
 *     meter in use are the same before and after;
 *   - every meter in use belongs to an installed rule that names it (no
 *     leak: a rule names one meter) after every step;
 *   - legacy mode has no rule.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vfw_admin.h"
#include "vfw_dataplane.h"
#include "fuzz_dp_null.h"
#include "vswitch.h"

#define NVF 3
#define STEP (64 + 128)
#define MAX_STEPS 48
#define WIN_BASE 0x10000ull       /* the rule buffer the PF exposes */

static uint8_t win[128];          /* the PF memory the rules are read from */

static const struct vfw_dp_ops *dp_ops(void)
{
    static struct vfw_dp_ops o;

    o = fz_dp_ops(0);
    return &o;
}

/* The admin queue's DMA: only [WIN_BASE, WIN_BASE + 128) is memory. */
static int a_rd(void *o, uint64_t a, void *b, size_t n)
{
    (void)o;
    if (a < WIN_BASE || a - WIN_BASE > sizeof(win) || n > sizeof(win) - (a - WIN_BASE)) {
        return -1;
    }
    memcpy(b, win + (a - WIN_BASE), n);
    return 0;
}


static const uint16_t OPS[] = {
    VFW_AQ_OP_ESW_SET_MODE, VFW_AQ_OP_ESW_GET_MODE, VFW_AQ_OP_ESW_RULE_ADD,
    VFW_AQ_OP_ESW_RULE_REPLACE, VFW_AQ_OP_ESW_RULE_DEL, VFW_AQ_OP_ESW_RULE_FLUSH,
    VFW_AQ_OP_ESW_RULE_STATS, VFW_AQ_OP_ESW_FDB_ADD, VFW_AQ_OP_ESW_FDB_DEL,
    VFW_AQ_OP_ESW_PORT_VLAN,
};
#define NOPS (sizeof(OPS) / sizeof(OPS[0]))

static const uint8_t PF_MAC[6] = { 0x52, 0x54, 0, 0x12, 0x34, 0x56 };
static struct vfw_dp *dp;
static struct vfw_admin adm;

/* The meters in use below `upto`, each checked to be named by the live
 * rule that owns it: a meter no rule uses (a leak) or two for one rule
 * aborts. Meters are taken lowest id first and at most two per step are
 * in use at once, so after every step ids below ID_SCAN are enough; the
 * whole range is checked at the start of each input. */
#define ID_SCAN (2 * MAX_STEPS + 2)
static unsigned meters_checked(unsigned upto)
{
    vsw_switch *sw = vfw_dp_switch(dp);
    unsigned n = 0;

    for (unsigned id = 1; id < upto; id++) {
        uint64_t owner;
        vsw_trule t;

        if (!vfw_dp_meter_owner(dp, id, &owner)) {
            continue;
        }
        if (vsw_rule_get(sw, owner, &t) || !(t.rule.flags & VSW_ACTF_METER) ||
            t.rule.meter != id) {
            abort();
        }
        n++;
    }
    return n;
}

static size_t rules(void)
{
    vsw_rule_table_stats st;

    vsw_rule_table_get_stats(vfw_dp_switch(dp), &st);
    return st.rules;
}

static void inject(const uint8_t *in)
{
    uint8_t f[132];
    unsigned fn = in[1] % (2 + NVF);     /* NVF + 1: the wire */
    size_t o = 12;

    memset(f, 0, sizeof(f));
    memcpy(f, in + 8, 6);
    if (in[3] & 2) {                    /* tagged: TCI from bytes 4-5 */
        f[o++] = 0x81;
        f[o++] = 0;
        f[o++] = in[4];
        f[o++] = in[5];
    }
    if (fn == 0) {
        memcpy(f + 6, PF_MAC, 6);
    } else if (fn <= NVF) {
        vfw_dp_vf_mac(dp, fn - 1, f + 6);
    } else {
        memcpy(f + 6, in + 14, 6);
        f[6] &= 0xfe;
    }
    f[o++] = 0x08;
    f[o++] = 0;
    f[o] = 0x45;
    f[o + 1] = in[2];
    f[o + 3] = 80;
    f[o + 8] = 64;
    f[o + 9] = in[3] & 1 ? 6 : 17;
    memcpy(f + o + 12, in + 20, 8);      /* addresses */
    memcpy(f + o + 20, in + 28, 4);      /* ports */
    if (fn <= NVF) {
        vfw_dp_fn_inject(dp, fn, f, o + 80);
    } else {
        vfw_dp_uplink_rx(dp, f, o + 80);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int trace = -1;

    if (trace < 0) {
        trace = getenv("FZ_TRACE") != NULL;
    }
    if (!dp) {
        dp = vfw_dp_create(dp_ops(), NULL, PF_MAC, NVF);
        if (!dp || vfw_admin_init(&adm, &(struct vfw_admin_ops){
                                      .dma_read = a_rd, .dma_write = fz_a_wr,
                                      .qos_dp = dp }, NVF)) {
            abort();
        }
        vfw_dp_set_uplink(dp, true);
    }
    /* back to the start: legacy (every rule and meter gone), VFs on */
    if (vfw_dp_set_switchdev(dp, false) || rules() != 0 || meters_checked(VSW_MAX_METERS) != 0) {
        abort();
    }
    vfw_admin_reset(&adm);
    vfw_admin_set_num_vfs(&adm, 2);
    fz_clock = 1000;
    for (size_t k = 0; k < MAX_STEPS && (k + 1) * STEP <= size; k++) {
        const uint8_t *in = data + k * STEP;
        uint8_t d[VFW_AQ_DESC_SIZE];
        uint16_t op, st;
        size_t before_rules;
        unsigned before_meter;

        if (in[0] >= 0xf0) {            /* events */
            switch (in[0] % 3) {
            case 0:
                vfw_admin_set_num_vfs(&adm, in[1] % (NVF + 1));
                break;
            case 1:
                inject(in);
                break;
            default:
                fz_clock += (uint64_t)in[1] << (in[2] % 24);
                break;
            }
            continue;
        }
        memcpy(d, in, sizeof(d));
        memcpy(win, in + 64, sizeof(win));
        if (in[0] < 0xe0) {
            op = OPS[in[0] % NOPS];
            d[0] = (uint8_t)op;
            d[1] = (uint8_t)(op >> 8);
            if (in[2] & 1) {            /* usually a well-formed reference */
                uint64_t a = WIN_BASE;

                memcpy(d + 24, &a, 8);   /* u.rule.addr, LE host */
                d[32] = sizeof(win);
                d[33] = 0;
            }
        }
        op = (uint16_t)(d[0] | d[1] << 8);
        before_rules = rules();
        before_meter = meters_checked(ID_SCAN);
        st = fz_aq_exec_checked(&adm, d);
        if (trace) {        /* FZ_TRACE=1: what a seed does, step by step */
            fprintf(stderr, "step %zu op 0x%04x status %u rules %zu\n", k, op, st, rules());
        }
        if (st != VFW_AQ_S_OK &&
            (rules() != before_rules || meters_checked(ID_SCAN) != before_meter)) {
            abort();                    /* a failing command changed state */
        }
        if (!vfw_dp_switchdev(dp) && rules() != 0) {
            abort();
        }
        meters_checked(ID_SCAN);        /* no leak after any command */
        (void)op;
    }
    return 0;
}
