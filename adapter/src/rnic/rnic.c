/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rnic.c - the RNIC device model's top: per-function state (created when a
 * function first touches its RDMA window), quotas and usage, the input
 * frame queue, the bounded run loop, and function / adapter reset.
 */
#include <errno.h>
#include <stdlib.h>
#include "rnic_internal.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "rnic: guest structures are overlaid on little-endian hosts only"
#endif

static const struct vfw_aq_rdma_quota def_quota = {
    .qp = VFW_RDMA_DEF_QP, .cq = VFW_RDMA_DEF_CQ, .mr = VFW_RDMA_DEF_MR,
    .pd = VFW_RDMA_DEF_PD, .mr_pages = VFW_RDMA_DEF_MR_PAGES,
    .conn = VFW_RDMA_DEF_CONN,
};
/* The PF is the adapter owner: its share is the device limit. */
static const struct vfw_aq_rdma_quota hw_quota = {
    .qp = VFW_RDMA_HW_QP, .cq = VFW_RDMA_HW_CQ, .mr = VFW_RDMA_HW_MR,
    .pd = VFW_RDMA_HW_PD, .mr_pages = VFW_RDMA_HW_MR_PAGES,
    .conn = VFW_RDMA_HW_CONN,
};

uint64_t rnic_now(const struct rnic_fn *fs)
{
    return fs->r->ops.now_ns(fs->r->ctx);
}

void rnic_stat(struct rnic_fn *fs, unsigned k)
{
    if (k < VFW_RSTAT_COUNT)
        fs->stat[k]++;
}

void rnic_kick(struct rnic_fn *fs)
{
    if (fs->r->in_run)
        fs->r->rekick = true;    /* one kick at the end of the run */
    else
        fs->r->ops.kick(fs->r->ctx);
}

void rnic_work_charge(struct rnic_fn *fs, uint64_t units)
{
    fs->work_left -= (int64_t)units;
}

/* ---- engine / TCP callbacks -------------------------------------------- */
static int e_dma_read(void *o, uint16_t func, uint64_t a, void *b, size_t n)
{
    /* the engine's func_id is ours; DMA is always as fs->fn. The engine
     * counts its own DMA errors (rnic_stat_get adds them). */
    struct rnic_fn *fs = o;
    (void)func;
    return fs->r->ops.dma_read(fs->r->ctx, fs->fn, a, b, n) ? -EIO : 0;
}
static int e_dma_write(void *o, uint16_t func, uint64_t a, const void *b,
                       size_t n)
{
    struct rnic_fn *fs = o;
    (void)func;
    return fs->r->ops.dma_write(fs->r->ctx, fs->fn, a, b, n) ? -EIO : 0;
}
static uint64_t e_now(void *o) { return rnic_now(o); }
static void e_cq_notify(void *o, uint32_t cq) { (void)o; (void)cq; }
/* the engine's flushes go on while the run's budget lasts (rnic_internal.h) */
static bool e_work_left(void *o)
{
    return ((struct rnic_fn *)o)->work_left > 0;
}

static void t_frame_out(void *o, const uint8_t *f, size_t n)
{
    struct rnic_fn *fs = o;
    rnic_stat(fs, VFW_RSTAT_TX_FRAMES);
    fs->r->ops.frame_out(fs->r->ctx, fs->fn, f, n);
}
static uint64_t t_now(void *o) { return rnic_now(o); }

int rnic_tcp_attach(struct rnic_fn *fs, uint32_t ip, uint16_t mtu)
{
    const uint8_t *mac = fs->r->mac[fs->fn];
    if (fs->tcp)
        return vfw_tcp_set_addr(fs->tcp, mac, ip, mtu);
    struct vfw_tcp_env te = { .opaque = fs, .frame_out = t_frame_out,
                              .now_ns = t_now };
    struct vfw_tcp_config tc = { .ip = ip, .mtu = mtu,
                                 .rcv_buf = 256 * 1024, .snd_buf = 256 * 1024,
                                 .max_conns = VFW_RDMA_HW_CONN };
    memcpy(tc.mac, mac, 6);
    fs->tcp = vfw_tcp_stack_new(&te, &tc);
    if (!fs->tcp)
        return -EINVAL;
    /* ARP belongs to the function's netdev. */
    vfw_tcp_set_arp_passive(fs->tcp, 1);
    return 0;
}

void rnic_tcp_detach(struct rnic_fn *fs)
{
    /* the stack's counters that RSTAT shows carry on in the function's */
    if (fs->tcp) {
        struct vfw_tcp_stats st;
        vfw_tcp_stats(fs->tcp, &st);
        fs->stat[VFW_RSTAT_SYN_DROPS] += st.syn_dropped;
    }
    vfw_tcp_stack_free(fs->tcp);
    fs->tcp = NULL;
}

static void fn_free(struct rnic_fn *fs)
{
    if (!fs)
        return;
    fs->resetting = true;
    /* Connections first (RST to peers), then the engine (it aborts the
     * CEPs it still holds; our LLP glue frees its links silently), then
     * the TCP stack. */
    rnic_cm_teardown(fs);
    vfw_engine_free(fs->e);
    fs->e = NULL;
    for (uint32_t i = 0; fs->qp && i <= fs->qp_hi; i++)
        rnic_qp_free(fs, i);
    for (uint32_t i = 0; fs->cq && i <= fs->cq_hi; i++)
        rnic_cq_free(fs, i);
    vfw_tcp_stack_free(fs->tcp);
    for (uint32_t i = 0; i < RNIC_RXQ_LEN; i++)
        free(fs->rxq[i].data);
    free(fs->mr_pages);
    free(fs->cq);
    free(fs->qp);
    free(fs->conn);
    free(fs->ecep_map);
    free(fs);
}

/* Engine table sizes for quota q (0 would mean "engine default"). */
static void engine_size(struct vfw_engine_config *ec,
                        const struct vfw_aq_rdma_quota *q)
{
    ec->max_pd = q->pd ? q->pd : 1;
    ec->max_mr = q->mr ? q->mr : 1;
    ec->max_cq = q->cq ? q->cq : 1;
    ec->max_qp = q->qp ? q->qp : 1;
    ec->max_cep = q->conn ? q->conn : 1;
}

static struct rnic_fn *fn_new(struct vfw_rnic *r, unsigned fn)
{
    struct rnic_fn *fs = calloc(1, sizeof(*fs));
    if (!fs)
        return NULL;
    fs->r = r;
    fs->fn = fn;
    fs->mtu = 1500;
    fs->mr_pages = calloc(VFW_RDMA_HW_MR + 1, sizeof(*fs->mr_pages));
    fs->cq = calloc(VFW_RDMA_HW_CQ + 1, sizeof(*fs->cq));
    fs->qp = calloc(VFW_RDMA_HW_QP + 1, sizeof(*fs->qp));
    fs->conn = calloc(VFW_RDMA_HW_CONN + 1, sizeof(*fs->conn));
    fs->ecep_max = VFW_RDMA_HW_CONN;
    fs->ecep_map = calloc(fs->ecep_max + 1, sizeof(*fs->ecep_map));
    if (!fs->mr_pages || !fs->cq || !fs->qp || !fs->conn || !fs->ecep_map)
        goto fail;
    struct vfw_engine_ops eo = {
        .opaque = fs, .dma_read = e_dma_read, .dma_write = e_dma_write,
        .cq_notify = e_cq_notify, .cm_event = rnic_cm_event, .now_ns = e_now,
        .cqe = rnic_cqe_hook, .work_left = e_work_left,
    };
    /* The quota is enforced here, not by the engine. The engine's object
     * tables are sized to the function's quota and grow with it
     * (vfw_rnic_set_quota): at the device limits a VF would cost ~10 MB
     * of tables it may never use. The engine hands out the lowest free
     * slot, so with at most quota objects every id fits. CEPs too: one
     * exists only while its connection holds a conn slot (made after the
     * slot, released before it in every path of rnic_cm.c). */
    struct vfw_engine_config ec = {
        .func_id = (uint16_t)fn, .max_mr_pages = VFW_RDMA_HW_MR_PAGES,
        .initiator_settle_ns = RNIC_INITIATOR_SETTLE_NS };
    engine_size(&ec, &r->quota[fn]);
    fs->e = vfw_engine_new(&eo, &ec);
    /* The TCP stack needs the function's IPv4 address: SET_ADDR makes it
     * (rnic_tcp_attach). */
    if (!fs->e)
        goto fail;
    return fs;
fail:
    fn_free(fs);
    return NULL;
}

struct rnic_fn *rnic_fn_get(struct vfw_rnic *r, unsigned fn, bool create)
{
    if (!r || fn >= r->nfn)
        return NULL;
    if (!r->fn[fn] && create)
        r->fn[fn] = fn_new(r, fn);
    return r->fn[fn];
}

/* ---- public API -------------------------------------------------------- */
struct vfw_rnic *vfw_rnic_create(const struct vfw_rnic_ops *ops, void *ctx,
                                 unsigned total_vfs)
{
    if (!ops || !ops->dma_read || !ops->dma_write || !ops->irq ||
        !ops->frame_out || !ops->now_ns || !ops->kick || !ops->timer ||
        total_vfs + 1 > RNIC_MAX_FN)
        return NULL;
    struct vfw_rnic *r = calloc(1, sizeof(*r));
    if (!r)
        return NULL;
    r->ops = *ops;
    r->ctx = ctx;
    r->nfn = total_vfs + 1;
    r->fn = calloc(r->nfn, sizeof(*r->fn));
    r->quota = calloc(r->nfn, sizeof(*r->quota));
    r->mac = calloc(r->nfn, sizeof(*r->mac));
    if (!r->fn || !r->quota || !r->mac) {
        vfw_rnic_destroy(r);
        return NULL;
    }
    for (unsigned i = 0; i < r->nfn; i++)
        r->quota[i] = i ? def_quota : hw_quota;
    return r;
}

void vfw_rnic_destroy(struct vfw_rnic *r)
{
    if (!r)
        return;
    if (r->fn)
        for (unsigned i = 0; i < r->nfn; i++)
            vfw_rnic_reset_fn(r, i);
    free(r->fn);
    free(r->quota);
    free(r->mac);
    free(r);
}

void vfw_rnic_set_mac(struct vfw_rnic *r, unsigned fn, const uint8_t mac[6])
{
    if (!r || fn >= r->nfn || !mac || (mac[0] & 1))
        return;
    memcpy(r->mac[fn], mac, 6);
    struct rnic_fn *fs = r->fn[fn];
    if (fs && fs->tcp)
        rnic_tcp_attach(fs, fs->ip, fs->mtu);
}

bool vfw_rnic_rx_frame(struct vfw_rnic *r, unsigned fn, const uint8_t *frame,
                       size_t len)
{
    struct rnic_fn *fs = rnic_fn_get(r, fn, false);
    if (!fs || !fs->tcp || !frame || len < 14 || len > RNIC_MAX_FRAME)
        return false;
    /* ARP: the stack learns next hops from it (arp_passive: it never
     * answers) and the frame still goes to the netdev. It is queued like
     * our own frames: learning may release a waiting SYN, and nothing may
     * be sent from inside the switch's delivery. */
    bool arp = frame[12] == 0x08 && frame[13] == 0x06;
    int kind = arp ? VFW_TCP_WANT_NO : vfw_tcp_wants_kind(fs->tcp, frame, len);
    if (!arp && kind == VFW_TCP_WANT_NO)
        return false;
    /* ARP, and TCP frames of no synchronized connection (SYNs to a
     * listener, handshakes: all of a SYN flood, issue 33), may fill half
     * the queue only: a flood of either must not crowd out the
     * established connections' segments, which may use all of it */
    bool minor = arp || kind != VFW_TCP_WANT_CONN;
    if (fs->rxq_count >= (minor ? RNIC_RXQ_LEN / 2 : RNIC_RXQ_LEN)) {
        rnic_stat(fs, VFW_RSTAT_RX_DROPS);
        return !arp;     /* ours, but no room: dropped (TCP retransmits) */
    }
    struct rnic_frame *q = &fs->rxq[(fs->rxq_head + fs->rxq_count) %
                                    RNIC_RXQ_LEN];
    if (!q->data) {
        q->data = malloc(RNIC_MAX_FRAME);
        if (!q->data) {
            rnic_stat(fs, VFW_RSTAT_RX_DROPS);
            return !arp;
        }
    }
    memcpy(q->data, frame, len);
    q->len = (uint32_t)len;
    fs->rxq_count++;
    if (!arp)
        rnic_stat(fs, VFW_RSTAT_RX_FRAMES);
    rnic_kick(fs);
    return !arp;
}

static bool run_fn(struct rnic_fn *fs, uint64_t *next)
{
    bool more = false;
    /* This run's budget; a debt the last run left (an item it started
     * cost more than it had) is paid first. */
    fs->work_left = (fs->work_left < 0 ? fs->work_left : 0) +
                    RNIC_BUDGET_WORK;
    rnic_cmd_run(fs, RNIC_BUDGET_CMDS, &more);
    /* Doorbells before input: a receive the driver posted before a Send
     * arrives must be in the engine when the Send is placed. */
    rnic_cq_errors(fs);
    rnic_wq_run(fs, &more);
    for (unsigned n = 0; n < RNIC_BUDGET_FRAMES && fs->rxq_count; n++) {
        struct rnic_frame *q = &fs->rxq[fs->rxq_head];
        fs->rxq_head = (fs->rxq_head + 1) % RNIC_RXQ_LEN;
        fs->rxq_count--;
        if (fs->tcp)      /* gone after SET_ADDR 0.0.0.0: drop */
            vfw_tcp_input(fs->tcp, q->data, q->len);
    }
    if (fs->rxq_count)
        more = true;
    if (fs->tcp)
        vfw_tcp_poll(fs->tcp);
    vfw_engine_poll(fs->e);
    if (vfw_engine_busy(fs->e))
        more = true;               /* a flush the budget stopped */
    rnic_cq_errors(fs);
    rnic_wq_run(fs, &more);        /* work unblocked above, same budget */
    rnic_eq_flush_irq(fs);
    uint64_t t = fs->tcp ? vfw_tcp_next_timer_ns(fs->tcp) : UINT64_MAX;
    uint64_t held = vfw_engine_next_ns(fs->e);
    if (held < t)
        t = held;
    if (rnic_cm_handshaking(fs)) {
        uint64_t h = rnic_now(fs) + RNIC_HS_POLL_NS;
        if (h < t)
            t = h;
    }
    if (t < *next)
        *next = t;
    return more;
}

void vfw_rnic_run(struct vfw_rnic *r)
{
    if (!r || r->in_run)
        return;
    r->in_run = true;
    r->rekick = false;
    bool more = false;
    uint64_t next = UINT64_MAX;
    for (unsigned i = 0; i < r->nfn; i++)
        if (r->fn[i] && run_fn(r->fn[i], &next))
            more = true;
    r->in_run = false;
    /* work that arrived for a function already visited in this pass (a
     * frame from another function, an event) needs another pass */
    if (r->rekick)
        more = true;
    if (next != UINT64_MAX)
        r->ops.timer(r->ctx, next);
    if (more)
        r->ops.kick(r->ctx);
}

void vfw_rnic_reset_fn(struct vfw_rnic *r, unsigned fn)
{
    if (!r || fn >= r->nfn)
        return;
    /* Everything of the function lives in its state: dropping it returns
     * every register to its reset value. Quota and MAC are outside. The
     * function is detached first: the RSTs its teardown sends may come
     * back through the switch (to itself or another function) and must
     * find it gone, not half-freed. */
    struct rnic_fn *fs = r->fn[fn];
    r->fn[fn] = NULL;
    fn_free(fs);
}

void vfw_rnic_reset(struct vfw_rnic *r)
{
    if (!r)
        return;
    for (unsigned i = 0; i < r->nfn; i++) {
        vfw_rnic_reset_fn(r, i);
        r->quota[i] = i ? def_quota : hw_quota;
    }
}

static bool quota_ok(const struct vfw_aq_rdma_quota *q)
{
    return q->qp <= VFW_RDMA_HW_QP && q->cq <= VFW_RDMA_HW_CQ &&
           q->mr <= VFW_RDMA_HW_MR && q->pd <= VFW_RDMA_HW_PD &&
           q->mr_pages <= VFW_RDMA_HW_MR_PAGES && q->conn <= VFW_RDMA_HW_CONN;
}

int vfw_rnic_set_quota(struct vfw_rnic *r, unsigned vf,
                       const struct vfw_aq_rdma_quota *q)
{
    if (!r || !q)
        return VFW_AQ_S_INVAL;
    if (vf >= r->nfn - 1)
        return VFW_AQ_S_BAD_VF;
    if (!quota_ok(q))
        return VFW_AQ_S_RANGE;
    const struct rnic_fn *fs = r->fn[vf + 1];
    if (fs) {
        const struct vfw_aq_rdma_quota *u = &fs->used;
        if (q->qp < u->qp || q->cq < u->cq || q->mr < u->mr ||
            q->pd < u->pd || q->mr_pages < u->mr_pages || q->conn < u->conn)
            return VFW_AQ_S_RANGE;
        /* a larger share needs larger engine tables (never smaller: ids
         * in use stay); the host out of memory cannot give that share */
        struct vfw_engine_config ec = { 0 };
        engine_size(&ec, q);
        if (vfw_engine_grow(fs->e, &ec))
            return VFW_AQ_S_RANGE;
    }
    r->quota[vf + 1] = *q;
    return VFW_AQ_S_OK;
}

int vfw_rnic_get_quota(const struct vfw_rnic *r, unsigned vf,
                       struct vfw_aq_rdma_quota *q,
                       struct vfw_aq_rdma_quota *used)
{
    if (!r || !q || !used)
        return VFW_AQ_S_INVAL;
    if (vf >= r->nfn - 1)
        return VFW_AQ_S_BAD_VF;
    *q = r->quota[vf + 1];
    const struct rnic_fn *fs = r->fn[vf + 1];
    if (fs)
        *used = fs->used;
    else
        memset(used, 0, sizeof(*used));
    return VFW_AQ_S_OK;
}

uint64_t rnic_stat_get(const struct rnic_fn *fs, unsigned stat)
{
    if (stat >= VFW_RSTAT_COUNT)
        return 0;
    uint64_t v = fs->stat[stat];
    /* the engine counts what it checks and moves itself */
    if (stat == VFW_RSTAT_PROT_ERR || stat == VFW_RSTAT_DMA_ERR) {
        struct vfw_engine_stats st;
        vfw_engine_stats(fs->e, &st);
        v += stat == VFW_RSTAT_PROT_ERR ? st.prot_errors : st.dma_errors;
    }
    /* the TCP counts the half-open connections it drops (issue 33) */
    if (stat == VFW_RSTAT_SYN_DROPS && fs->tcp) {
        struct vfw_tcp_stats st;
        vfw_tcp_stats(fs->tcp, &st);
        v += st.syn_dropped;
    }
    return v;
}

uint64_t vfw_rnic_stat(const struct vfw_rnic *r, unsigned fn, unsigned stat)
{
    if (!r || fn >= r->nfn || stat >= VFW_RSTAT_COUNT || !r->fn[fn])
        return 0;
    return rnic_stat_get(r->fn[fn], stat);
}

int vfw_rnic_tcp_stats(const struct vfw_rnic *r, unsigned fn,
                       struct vfw_tcp_stats *st)
{
    if (!r || fn >= r->nfn || !st || !r->fn[fn] || !r->fn[fn]->tcp)
        return -ENOENT;
    vfw_tcp_stats(r->fn[fn]->tcp, st);
    return 0;
}
