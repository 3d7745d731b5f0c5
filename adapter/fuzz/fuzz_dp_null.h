/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * fuzz_dp_null.h - a data path with no guest memory behind it, for the
 * admin-command fuzzers (fuzz_admin_qos, fuzz_esw_rules): every ring DMA
 * fails (no ring is ever enabled), frames to the wire are dropped, and the
 * clock is the fuzzer's own fz_clock, which the including file advances.
 */
#ifndef FUZZ_DP_NULL_H
#define FUZZ_DP_NULL_H

#include <stddef.h>
#include <stdint.h>

#include <stdlib.h>

#include "vfw_admin.h"
#include "vfw_dataplane.h"

static uint64_t fz_clock;

static int fz_dp_rd(void *c, unsigned fn, uint64_t a, void *b, size_t l)
{
    (void)c; (void)fn; (void)a; (void)b; (void)l;
    return -1;
}

static int fz_dp_wr(void *c, unsigned fn, uint64_t a, const void *b, size_t l)
{
    (void)c; (void)fn; (void)a; (void)b; (void)l;
    return -1;
}

static void fz_dp_tx(void *c, const uint8_t *f, size_t l) { (void)c; (void)f; (void)l; }
static uint64_t fz_dp_now(void *c) { (void)c; return fz_clock; }
static void fz_dp_utimer(void *c, uint64_t w) { (void)c; (void)w; }

/* with_timer: an uplink scheduler (QoS) behind the data path */
static inline struct vfw_dp_ops fz_dp_ops(int with_timer)
{
    struct vfw_dp_ops o = {
        .dma_read = fz_dp_rd, .dma_write = fz_dp_wr, .uplink_tx = fz_dp_tx,
        .now_ns = fz_dp_now, .uplink_timer = with_timer ? fz_dp_utimer : NULL,
    };
    return o;
}

/* The admin queue's DMA when the commands carry no buffer. */
static int fz_a_wr(void *o, uint64_t a, const void *b, size_t n) { (void)o; (void)a; (void)b; (void)n; return -1; }

/* Run descriptor d; the device must write it back DONE, with its status
 * and ERR exactly when the status is not OK (abort otherwise). */
static inline uint16_t fz_aq_exec_checked(struct vfw_admin *adm, uint8_t *d)
{
    uint16_t st = vfw_admin_exec(adm, d);
    uint16_t flags = (uint16_t)(d[2] | d[3] << 8);

    if ((uint16_t)(d[4] | d[5] << 8) != st ||
        flags != (VFW_AQ_F_DONE | (st ? VFW_AQ_F_ERR : 0))) {
        abort();
    }
    return st;
}

#endif
