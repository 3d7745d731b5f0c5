/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rnic_internal.h - private state of the RNIC device model (vfw_rnic.h),
 * shared by rnic*.c only. One struct rnic_fn per function that touched its
 * RDMA window, created lazily (the engine, the TCP stack and the object
 * tables cost memory; 129 idle functions cost one pointer each).
 *
 * Guest-visible ids: PD, STag, CQ and QP ids are the engine's ids (the
 * engine validates them, and its tables are sized to the device limits
 * VFW_RDMA_HW_*); listener and connection ids ("cep") are slots of the
 * function's conn table (1..VFW_RDMA_HW_CONN), one namespace for both
 * because the quota counts both.
 */
#ifndef RNIC_INTERNAL_H
#define RNIC_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* vfw_engine.h first: its enum vfw_qp_state names the same constants
 * (same values) that vfwarp_rdma.h defines as VFW_QPS_* macros; the other
 * order breaks the enum declaration. */
#include "vfw_engine.h"
#include "vfw_tcp.h"
#include "vfw_rnic.h"
#include "vfw_bytes.h"

#define RNIC_MAX_FN          (1u + 128u)   /* PF + 128 VFs (hard bound) */
#define RNIC_RXQ_LEN         256           /* per-function input frames */
#define RNIC_MAX_FRAME       (14u + 4u + 9216u)
/*
 * The run's budget (issue 33 class 2). A run does a bounded amount of work
 * per function, whatever the guest asked for: every loop whose length a
 * guest chooses takes its items while the function's work_left is
 * positive, charges one unit per item, and leaves the rest to a later run
 * (the run asks for one with `more`). An item once started is finished,
 * so work_left may end below zero; that debt is paid first by the next
 * runs (run_fn), and a run never does more than RNIC_BUDGET_WORK plus one
 * item's bounded cost.
 *
 * Units: a WQE fetched from a ring, a CQE written, an EQE written, a
 * command executed, RNIC_PGL_ENTRIES_PER_UNIT entries of a page list
 * copied (each a few DMA accesses, 128 bytes or less of guest memory).
 *
 * The loops audited (adapter/src/rnic/, adapter/src/iwarp/), and how each
 * is bounded:
 *   guest-lengthened, charged here, carried over:
 *   - WQE fetch, rnic_wq_run -> qp_queue: one unit per WQE; the QPs are
 *     served round robin from where the budget last ran out (wq_next).
 *   - the ERROR drain, rnic_qp_drain (QP_MODIFY ERROR): the same fetch
 *     with the same budget, no longer one of its own per command; the rest
 *     is fetched by later runs, and a QP_DESTROY of that QP waits at the
 *     head of the command queue until every WR rung in has completed
 *     (rnic_qp_drain_step), the engine's flush included.
 *   - the engine's flush of a QP's WRs, vfw_qp_flush (iwarp/qp.c: ERROR,
 *     Terminate, graceful close): one CQE per unit through ops->work_left
 *     and rnic_cqe_hook; the rest resumes in vfw_engine_poll each run.
 *   - the command batch, rnic_cmd_run: RNIC_BUDGET_CMDS commands, each a
 *     unit, none started without budget.
 *   - page-list walks, rnic_pgl_fetch (MR_REG, CQ_CREATE, QP_CREATE) and
 *     the engine's check of the same list (vfw_mr_reg_pages): charged by
 *     length; the longest (VFW_RDMA_MAX_MR_PGL entries) is one command's
 *     bounded overdraft, paid over the next runs.
 *   charged, not deferrable (a completion or an event cannot wait), and
 *   bounded by work charged above or by the frames of the run:
 *   - CQE writes, cqe_write: every completion (SQ retire in
 *     vfw_qp_retire, receives, flushes); EQE writes, rnic_eq_post.
 *   bounded by a constant or by the wire, not by the guest's counts:
 *   - input frames, run_fn: RNIC_BUDGET_FRAMES; per frame, the TCP input,
 *     the MPA receive loop (cep_rx: guard len + 16) and DDP/RDMAP
 *     placement (per FPDU: SGEs <= VFW_RDMA_MAX_SGE, MR pages per FPDU).
 *   - transmit, vfw_rdmap_tx -> tx_run: until the TCP send buffer is full
 *     (256 KiB a connection); pick(): at most sq_depth WQEs.
 *   - CQ errors, rnic_cq_errors: one pass over qp_hi and cq_hi (it was
 *     cq_hi x qp_hi); each QP's ERROR flush is budgeted as above.
 *   - table scans: vfw_rnic_run over nfn (<= 129), QPs to qp_hi, CQs to
 *     cq_hi, conn slots to conn_hi (rnic_cm_*: <= VFW_RDMA_HW_CONN),
 *     CEPs to cep_hi (vfw_cm_poll), release_held, resume_flushes.
 *   - ring accesses, ring_rw: one entry splits at most at one page edge.
 */
#define RNIC_BUDGET_CMDS     32            /* per function per run */
#define RNIC_BUDGET_FRAMES   64
#define RNIC_BUDGET_WORK     256           /* units per function per run */
#define RNIC_PGL_ENTRIES_PER_UNIT 16       /* 128 bytes of page list */
#define RNIC_HS_POLL_NS      (100ull * 1000 * 1000) /* MPA timeout poll */
/* As MPA initiator, the first FPDU waits this long after the MPA Reply
 * (vfw_engine_config.initiator_settle_ns): a Linux siw responder under an
 * emulated CPU took longer than the device to start reading its socket, and
 * lost 2 of 5 rping connections without it, 0 of 15 with 20 ms. */
#define RNIC_INITIATOR_SETTLE_NS (20ull * 1000 * 1000)

/* A guest ring (SQ, RQ, CQ) named by a copied page list. */
struct rnic_ring {
    uint64_t *pages;
    uint32_t npages;
    uint8_t shift;
    uint32_t offset;          /* byte offset in the first page */
    uint64_t bytes;           /* usable bytes from offset */
};

struct rnic_cq {
    struct rnic_ring ring;
    uint32_t depth;
    uint16_t db_page;
    uint32_t prod;            /* CQEs written (wrapping) */
    uint32_t cons_seen;       /* last consumer count read from the ring */
    uint8_t arm;              /* 0, 1 next, 2 solicited */
    bool error;               /* overflow / DMA error: no more CQEs */
    bool error_pending;       /* QPs must go to ERROR (done in run) */
    bool error_now;           /* rnic_cq_errors: this pass moves its QPs */
};

struct rnic_qp {
    struct rnic_ring sq, rq;
    uint32_t sq_depth, rq_depth;
    uint16_t db_page;
    uint32_t pd, send_cq, recv_cq;
    uint16_t sq_ci, rq_ci;    /* WQEs taken from the ring (mod 65536) */
    uint16_t sq_pi, rq_pi;    /* producer index from the last doorbell */
    uint64_t *sq_wrid, *rq_wrid;   /* guest wr_id by ring slot */
    uint32_t conn;            /* conn slot bound to it, 0 none */
    /* QP_MODIFY(ERROR) owes the driver a completion of every WR it rang
     * in, and the run's budget may leave some for later runs */
    bool drain_owed;
};

enum { CONN_FREE = 0, CONN_LISTEN, CONN_ACTIVE, CONN_PASSIVE };
/* conn slot states for ACTIVE/PASSIVE */
enum { CS_TCP = 0,            /* active: TCP open in progress */
       CS_MPA,                /* MPA handshake in the engine */
       CS_REQ,                /* passive: CONNECT_REQUEST delivered */
       CS_ACCEPTING,          /* passive: ACCEPT given, waiting for RTS */
       CS_UP,                 /* established (event delivered) */
       CS_SILENT };           /* guest told it is over; waiting for TCP */

struct rnic_link;
struct rnic_fn;
struct rnic_conn {
    uint8_t kind;             /* CONN_* */
    uint8_t st;               /* CS_* */
    uint32_t ecep;            /* engine CEP id, 0 none */
    uint32_t qp;
    uint32_t listener;        /* passive: its listener slot */
    uint16_t backlog, pending;   /* listener: max / unaccepted requests */
    uint32_t lip, rip;        /* host order */
    uint16_t lport, rport;
    struct rnic_link *link;   /* the TCP connection, NULL none */
    struct rnic_fn *fs;       /* back pointer for listener upcalls */
    uint32_t id;
};

struct rnic_eq {
    uint64_t base, pdata;
    uint32_t len, ctrl, status, prod, cons;
    bool irq_pending;         /* entries written since the last IRQ */
};

struct rnic_rcq {
    uint64_t base;
    uint32_t len, head, tail, ctrl, status;
};

struct rnic_frame { uint32_t len; uint8_t *data; };

struct rnic_fn {
    struct vfw_rnic *r;
    unsigned fn;
    struct vfw_engine *e;
    struct vfw_tcp_stack *tcp;
    uint32_t ip;              /* host order, 0 none */
    uint16_t mtu;
    struct rnic_rcq rcq;
    struct rnic_eq eq;
    uint64_t stat[VFW_RSTAT_COUNT];
    struct vfw_aq_rdma_quota used;
    uint32_t *mr_pages;       /* by STag index: pages counted */
    struct rnic_cq **cq;      /* by engine id, VFW_RDMA_HW_CQ + 1 */
    struct rnic_qp **qp;      /* by engine id, VFW_RDMA_HW_QP + 1 */
    struct rnic_conn *conn;   /* slots 1..VFW_RDMA_HW_CONN */
    uint32_t *ecep_map;       /* engine CEP id -> conn slot */
    uint32_t ecep_max;
    /* highest CQ / QP id and conn slot ever used by this function (they
     * only grow): the scans stop there instead of at the device limits */
    uint32_t cq_hi, qp_hi, conn_hi;
    bool db_pending;          /* some QP has doorbell work */
    uint32_t wq_next;         /* rnic_wq_run starts at QP wq_next + 1 */
    /* the run's budget left (RNIC_BUDGET_WORK above): below zero, a debt
     * the next runs pay first */
    int64_t work_left;
    bool cq_err_pending;      /* some CQ has error_pending */
    bool resetting;           /* tearing down: no events */
    /* input queue */
    struct rnic_frame rxq[RNIC_RXQ_LEN];
    uint32_t rxq_head, rxq_count;
};

struct vfw_rnic {
    struct vfw_rnic_ops ops;
    void *ctx;
    unsigned nfn;             /* 1 + total_vfs */
    struct rnic_fn **fn;      /* lazily allocated */
    struct vfw_aq_rdma_quota *quota;
    uint8_t (*mac)[6];
    bool in_run;
    bool rekick;              /* kick requested during the run */
};

/* rnic.c */
struct rnic_fn *rnic_fn_get(struct vfw_rnic *r, unsigned fn, bool create);
void rnic_stat(struct rnic_fn *fs, unsigned k);
uint64_t rnic_stat_get(const struct rnic_fn *fs, unsigned k);
uint64_t rnic_now(const struct rnic_fn *fs);
void rnic_kick(struct rnic_fn *fs);
void rnic_work_charge(struct rnic_fn *fs, uint64_t units);
/* The TCP stack exists while the function has an IPv4 address. */
int rnic_tcp_attach(struct rnic_fn *fs, uint32_t ip, uint16_t mtu);
void rnic_tcp_detach(struct rnic_fn *fs);
bool rnic_cm_any(const struct rnic_fn *fs);

/* rnic_regs.c: nothing exported beyond vfw_rnic.h */

/* rnic_pgl.c - the one place where page lists and ring DMA happen */
int rnic_dma_read(struct rnic_fn *fs, uint64_t addr, void *buf, size_t len);
int rnic_dma_write(struct rnic_fn *fs, uint64_t addr, const void *buf,
                   size_t len);
/* Copy and validate a page list (VFW_RCMD_S_* result). need_bytes: the
 * memory the list must cover from start_off (exact: exactly that many
 * pages, else at least; only those are copied). */
int rnic_pgl_fetch(struct rnic_fn *fs, const struct vfw_pgl_ref *ref,
                   uint64_t start_off, uint64_t need_bytes,
                   uint32_t max_pages, bool exact, uint64_t **pages);
int rnic_ring_init(struct rnic_fn *fs, struct rnic_ring *ring,
                   const struct vfw_pgl_ref *ref, uint64_t bytes,
                   uint32_t align);
void rnic_ring_free(struct rnic_ring *ring);
int rnic_ring_read(struct rnic_fn *fs, const struct rnic_ring *ring,
                   uint64_t off, void *buf, size_t len);
int rnic_ring_write(struct rnic_fn *fs, const struct rnic_ring *ring,
                    uint64_t off, const void *buf, size_t len);

/* rnic_cmd.c */
void rnic_cmd_run(struct rnic_fn *fs, unsigned budget, bool *more);
void rnic_cmd_reset(struct rnic_fn *fs);

/* rnic_eq.c */
void rnic_eq_post(struct rnic_fn *fs, const struct vfw_eqe *ev,
                  const uint8_t *pdata, uint16_t plen);
void rnic_eq_flush_irq(struct rnic_fn *fs);
bool rnic_eq_write_reg(struct rnic_fn *fs, uint64_t addr, uint32_t v);
bool rnic_eq_read_reg(const struct rnic_fn *fs, uint64_t addr, uint32_t *v);

/* rnic_wq.c */
void rnic_cqe_hook(void *opaque, uint32_t cq_id, const struct vfw_cqe *c);
void rnic_wq_run(struct rnic_fn *fs, bool *more);
void rnic_qp_drain(struct rnic_fn *fs, uint32_t id);
bool rnic_qp_drain_step(struct rnic_fn *fs, uint32_t id);
void rnic_cq_errors(struct rnic_fn *fs);
void rnic_qp_free(struct rnic_fn *fs, uint32_t id);
void rnic_cq_free(struct rnic_fn *fs, uint32_t id);

/* rnic_cm.c */
void rnic_cm_event(void *opaque, const struct vfw_cm_event *ev);
int rnic_cm_listen(struct rnic_fn *fs, uint32_t ip, uint16_t port,
                   uint16_t backlog, uint32_t *id);
int rnic_cm_unlisten(struct rnic_fn *fs, uint32_t id);
int rnic_cm_connect(struct rnic_fn *fs, const struct vfw_rcmd_connect *c,
                    const struct vfw_conn_param *p, uint32_t *cep,
                    uint16_t *lport_used);
int rnic_cm_accept(struct rnic_fn *fs, uint32_t cep, uint32_t qp, uint8_t tos,
                   const struct vfw_conn_param *p);
int rnic_cm_reject(struct rnic_fn *fs, uint32_t cep, const uint8_t *pdata,
                   uint16_t len);
/* Reset: abort every TCP connection and listener of the function without
 * events (peers see RST). */
void rnic_cm_teardown(struct rnic_fn *fs);
bool rnic_cm_handshaking(const struct rnic_fn *fs);


#endif /* RNIC_INTERNAL_H */
