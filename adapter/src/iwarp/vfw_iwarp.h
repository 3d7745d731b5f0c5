/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vfw_iwarp.h - internal state of the iWARP engine (not for device models).
 */
#ifndef VFW_IWARP_H
#define VFW_IWARP_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include "vfw_bytes.h"
#include "vfw_engine.h"

/* ---- wire formats --------------------------------------------------------*/
#define MPA_KEY_REQ "MPA ID Req Frame"
#define MPA_KEY_REP "MPA ID Rep Frame"
#define MPA_HDR_LEN 20
#define MPA_FLAG_M 0x80
#define MPA_FLAG_C 0x40
#define MPA_FLAG_R 0x20
#define MPA_FLAG_H 0x10          /* RFC 6581 enhanced connection setup: the
                                     IRD/ORD words lead the private data */
#define MPA_V2_HDR 4
#define MPA_V2_P2P       0x8000   /* in the IRD word */
#define MPA_V2_SEND0_RTR 0x4000   /* in the IRD word */
#define MPA_V2_WRITE_RTR 0x8000   /* in the ORD word */
#define MPA_V2_READ_RTR  0x4000   /* in the ORD word */
#define MPA_V2_MASK      0x3fff
#define MPA_FPDU_OVERHEAD 6       /* ULPDU_Length + CRC (no pad) */
#define MPA_MAX_FPDU (2 + 65535 + 3 + 4)

#define DDP_F_TAGGED 0x80
#define DDP_F_LAST   0x40
#define DDP_VERSION  1
#define RDMAP_VERSION 1
#define DDP_TAGGED_HDR   14
#define DDP_UNTAGGED_HDR 18
#define RDMAP_READ_REQ_LEN 28
#define DDP_QN_SEND 0
#define DDP_QN_READ 1
#define DDP_QN_TERM 2
#define TERM_HDR_LEN 4
#define TERM_F_M 0x80   /* DDP segment length valid */
#define TERM_F_D 0x40   /* DDP header included */
#define TERM_F_R 0x20   /* RDMAP header included */

/* Terminate error types and codes (RFC 5040 sec. 7.2 / RFC 5041 sec. 7 /
 * RFC 5044 sec. 8). */
enum {
    RDMAP_ET_LOCAL_CATA = 0, RDMAP_ET_REMOTE_PROT = 1, RDMAP_ET_REMOTE_OP = 2,
};
enum {
    RDMAP_EC_INV_STAG = 0x00, RDMAP_EC_BOUNDS = 0x01, RDMAP_EC_ACCESS = 0x02,
    RDMAP_EC_STAG_NOT_ASSOC = 0x03, RDMAP_EC_TO_WRAP = 0x04,
    RDMAP_EC_VERSION = 0x05, RDMAP_EC_OPCODE = 0x06,
    RDMAP_EC_CATA_STREAM = 0x07, RDMAP_EC_CATA_GLOBAL = 0x08,
    RDMAP_EC_CANT_INVALIDATE = 0x09, RDMAP_EC_UNSPEC = 0xff,
};
enum { DDP_ET_CATA = 0, DDP_ET_TAGGED = 1, DDP_ET_UNTAGGED = 2 };
enum {
    DDP_EC_T_INV_STAG = 0x00, DDP_EC_T_BOUNDS = 0x01,
    DDP_EC_T_STAG_NOT_ASSOC = 0x02, DDP_EC_T_TO_WRAP = 0x03,
    DDP_EC_T_VERSION = 0x04,
    DDP_EC_U_INV_QN = 0x01, DDP_EC_U_NO_BUF = 0x02, DDP_EC_U_MSN_RANGE = 0x03,
    DDP_EC_U_INV_MO = 0x04, DDP_EC_U_TOO_LONG = 0x05, DDP_EC_U_VERSION = 0x06,
};
enum { MPA_EC_CLOSED = 0x01, MPA_EC_CRC = 0x02, MPA_EC_MARKER = 0x03,
       MPA_EC_REQ_REP = 0x04 };


/* ---- objects -------------------------------------------------------------*/
struct vfw_pd { bool used; uint32_t refs; };

struct vfw_mr {
    bool used, valid;
    uint8_t key;
    uint32_t pd;
    uint64_t iova, len;
    uint32_t access;
    /* page-list MR (vfw_mr_reg_pages): tagged offset iova + k maps to
     * pages[(fbo + k) >> page_shift] + ((fbo + k) & mask), fbo = iova's
     * offset in its page. pages == NULL: linear, DMA address == TO. */
    uint64_t *pages;
    uint32_t npages;
    uint8_t page_shift;
};

struct vfw_cq {
    bool used;
    uint8_t armed;            /* 0 no, 1 any, 2 solicited */
    uint32_t depth, head, count, refs;
    uint64_t overflows;
    struct vfw_cqe *ring;
};

enum { SWQE_QUEUED = 0, SWQE_ACTIVE, SWQE_DONE };
struct vfw_swqe {
    struct vfw_send_wr wr;
    uint8_t state, status;
    uint32_t byte_len;
};

struct vfw_ord_ent {        /* one outstanding RDMA Read we issued */
    uint32_t sq_idx, sink_stag, len, placed;
    uint64_t sink_to;
};
struct vfw_ird_ent {        /* one inbound RDMA Read we must answer */
    uint32_t sink_stag, src_stag, len;
    uint64_t sink_to, src_to;
};

enum { TX_NONE = 0, TX_SQ, TX_READ_REQ, TX_READ_RESP, TX_TERM, TX_RTR };
struct vfw_txmsg {          /* the outgoing DDP message being segmented */
    uint8_t kind, opcode;
    bool tagged;
    uint32_t stag;          /* tagged: sink STag */
    uint64_t to;            /* tagged: sink TO of the next segment */
    uint32_t qn, msn, rsvd; /* untagged */
    uint32_t total, off;
    uint32_t sq_idx;
    uint32_t sge_i, sge_off;  /* gather cursor (TX_SQ) */
    uint32_t src_stag;        /* TX_READ_RESP source */
    uint64_t src_to;
    bool last_sent;
    uint32_t small_len;       /* TX_READ_REQ / TX_TERM inline payload */
    uint8_t small[64];
};

struct vfw_qp {
    bool used;
    enum vfw_qp_state state;
    struct vfw_qp_attr attr;
    uint32_t cep;             /* 0: not connected */
    bool initiator;
    /* send queue: head <= next <= tail, counters modulo 2^32 */
    struct vfw_swqe *sq;
    uint32_t sq_ring, rq_ring;  /* slots: powers of two >= the depths */
    uint32_t sq_head, sq_next, sq_tail;
    /* receive queue */
    struct vfw_recv_wr *rq;
    uint32_t rq_head, rq_tail;
    /* ORD / IRD */
    struct vfw_ord_ent ord_q[VFW_MAX_ORD_IRD];
    uint32_t ord_head, ord_cnt;
    struct vfw_ird_ent ird_q[VFW_MAX_ORD_IRD];
    uint32_t ird_head, ird_cnt;
    uint32_t ord, ird;        /* negotiated */
    /* DDP queues: next MSN to send / expected */
    uint32_t tx_msn[3], rx_msn[3];
    /* outgoing */
    struct vfw_txmsg cur;
    bool cur_active;
    uint8_t *txbuf;
    uint32_t tx_len;          /* built FPDU not yet accepted by the LLP */
    bool tx_last;             /* the built FPDU ends cur */
    bool in_tx, tx_again;
    uint16_t mss, mulpdu;
    bool crc;
    /* untagged receive in progress (QN 0) */
    bool rx_active;
    struct vfw_recv_wr rx_wqe;
    uint32_t rx_cap, rx_len;
    /* handshake-derived */
    bool tx_gate;             /* responder: no FPDU before the first in */
    bool rtr_expect;          /* responder: swallow the first FPDU (RTR) */
    uint8_t rtr_send;         /* initiator: RTR type to send, 0 none */
    uint64_t tx_hold_until;   /* initiator: no FPDU before (settle), 0 none */
    bool rtr_read_pending;    /* initiator: swallow a zero-length response */
    /* terminate */
    bool term_pending;
    uint8_t term_msg[TERM_HDR_LEN + 2 + DDP_UNTAGGED_HDR + RDMAP_READ_REQ_LEN];
    uint32_t term_len;
    struct vfw_term_info term_sent, term_rcvd;
    bool close_after_tx;      /* CLOSING: close the LLP once the SQ drains */
    /* a flush the owner's budget stopped (ops->work_left): vfw_engine_poll
     * resumes it; then IDLE if a graceful close asked for it */
    bool flush_owed;
    bool idle_when_flushed;
};

/* A connection endpoint, one per LLP connection (cm.c). */
enum { CEP_FREE = 0, CEP_INIT, CEP_REQ_WAIT, CEP_REQ_RCVD, CEP_REP_WAIT,
       CEP_ESTABLISHED, CEP_CLOSING, CEP_DEAD };
struct vfw_cep {
    uint8_t state;
    bool active;
    bool close_called;        /* we called llp->close */
    bool in_rx, rx_again;     /* re-entrancy guard for LLP delivery */
    const struct vfw_llp_ops *llp;
    void *conn;
    uint32_t qp;
    uint64_t deadline;
    /* handshake receive */
    uint8_t hbuf[MPA_HDR_LEN + VFW_MAX_PDATA];
    uint32_t hlen;
    uint8_t peer_rev, peer_flags;
    uint16_t peer_ird, peer_ord;   /* raw v2 words */
    bool peer_v2hdr;
    /* our request (active) */
    struct vfw_conn_param param;
    /* FPDU reassembly */
    uint8_t *rxbuf;
    uint32_t rxlen;
};

#define VFW_MPA_TIMEOUT_NS (10ull * 1000 * 1000 * 1000)

struct vfw_engine {
    struct vfw_engine_ops ops;
    uint16_t func_id;
    uint32_t max_pd, max_mr, max_cq, max_qp, max_cep;
    /* Highest slot ever taken per table (they only grow; a slot is taken
     * lowest-free-first, so every used one is at or below). Scans and the
     * teardown stop there instead of at the table size: a VF's tables are
     * sized to its quota (64 QPs of 7.7 KB, 128 CEPs of 1.1 KB), and
     * walking them whole touched ~650 KB per function on every teardown
     * and 145 KB of CEPs on every poll (perf of fuzz_rnic_cmd: 23% of an
     * execution in vfw_engine_free). */
    uint32_t pd_hi, mr_hi, cq_hi, qp_hi, cep_hi;
    uint32_t max_mr_pages, mr_pages;   /* page-list entries: bound, in use */
    uint64_t initiator_settle_ns;
    uint32_t held;          /* QPs with tx_hold_until set (an upper bound:
                               vfw_engine_poll recounts) */
    bool flush_owed;        /* some QP has flush_owed (vfw_engine_poll
                               recounts) */
    struct vfw_pd *pd;      /* index 0 unused */
    struct vfw_mr *mr;
    struct vfw_cq *cq;
    /* QPs and CEPs by id: pointers, each allocated when its slot is first
     * taken and kept for reuse. A QP is 7.7 KB and a CEP 1.1 KB; as flat
     * tables a PF (1024 of each) cost 9 MB and a VF 650 KB as soon as the
     * function was touched, used or not. */
    struct vfw_qp **qp;
    struct vfw_cep **cep;
    struct vfw_engine_stats st;
    int in_callback;
};

/* engine.c */
struct vfw_qp *vfw_qp_get(struct vfw_engine *e, uint32_t id);

/* cm.c */
struct vfw_cep *vfw_cep_get(struct vfw_engine *e, uint32_t id);
void vfw_cm_emit(struct vfw_engine *e, enum vfw_cm_event_type t, uint32_t cep,
                 uint32_t qp, int err, const uint8_t *pdata, uint16_t plen);
void vfw_cep_release(struct vfw_engine *e, uint32_t cep_id);
void vfw_cep_free_all(struct vfw_engine *e);      /* vfw_engine_free */
void vfw_cm_poll(struct vfw_engine *e, uint64_t now);  /* handshake timer */
/* A vfw_tcp_conn (vfw_tcp.h) as a CEP's LLP: the head of a link object that
 * lives as long as its TCP connection, the `conn` of vfw_cm_tcp_llp and the
 * `user` of the TCP callbacks (vfw_cm_tcp_recv/_writable take it as such).
 * The owner sets e, c, aborted, and cep once vfw_cep_create gave one;
 * llp->abort sends the RST and calls aborted (no TCP upcall follows: free
 * the link there). From the owner's closed upcall call vfw_cm_tcp_closed:
 * the engine gets the end of the connection, a peer's FIN while open
 * included (the stack reports a connection's end once). */
struct vfw_tcp_conn;
struct vfw_cm_tcp {
    struct vfw_engine *e;
    struct vfw_tcp_conn *c;
    uint32_t cep;                 /* 0 until the CEP exists */
    bool close_called;            /* llp->close was called */
    void (*aborted)(struct vfw_cm_tcp *t);
};
extern const struct vfw_llp_ops vfw_cm_tcp_llp;
size_t vfw_cm_tcp_recv(struct vfw_tcp_conn *c, const uint8_t *d, size_t n,
                       void *user);
void vfw_cm_tcp_writable(struct vfw_tcp_conn *c, void *user);
void vfw_cm_tcp_closed(struct vfw_cm_tcp *t, int err);

/* mr.c */
enum vfw_mr_err { MR_OK = 0, MR_INV_STAG, MR_PD, MR_BOUNDS, MR_ACCESS,
                  MR_WRAP };
enum vfw_mr_err vfw_mr_check(struct vfw_engine *e, uint32_t pd, uint32_t stag,
                             uint64_t to, uint64_t len, uint32_t need);
bool vfw_pd_valid(const struct vfw_engine *e, uint32_t pd);
/* The one place a tagged offset becomes DMA: copy len bytes at tagged
 * offset `to` of the MR named by stag, as the engine's function. Call
 * vfw_mr_check() first for the PD/rights verdict; this re-checks that the
 * STag is live and [to, to+len) lies inside it (defence in depth), then
 * splits the access at page boundaries for page-list MRs.
 * 0, -EACCES (check failed: nothing moved) or -EIO (a DMA failed; a write
 * may have placed a prefix). Counts dma_errors itself. */
int vfw_mr_dma_read(struct vfw_engine *e, uint32_t stag, uint64_t to,
                    void *buf, uint64_t len);
int vfw_mr_dma_write(struct vfw_engine *e, uint32_t stag, uint64_t to,
                     const void *buf, uint64_t len);
void vfw_mr_free_all(struct vfw_engine *e);

/* cq.c */
void vfw_cq_push(struct vfw_engine *e, uint32_t cq_id, const struct vfw_cqe *c);

/* qp.c */
void vfw_qp_retire(struct vfw_engine *e, struct vfw_qp *qp, uint32_t qp_id);
void vfw_qp_error(struct vfw_engine *e, struct vfw_qp *qp, uint32_t qp_id,
                  bool abort_llp);
void vfw_qp_flush(struct vfw_engine *e, struct vfw_qp *qp, uint32_t qp_id);
bool vfw_qp_flush_resume(struct vfw_engine *e, struct vfw_qp *qp,
                         uint32_t qp_id);
void vfw_qp_close_idle(struct vfw_engine *e, struct vfw_qp *qp,
                       uint32_t qp_id);
int vfw_qp_bind(struct vfw_engine *e, struct vfw_qp *qp, uint32_t cep_id,
                uint16_t mss);

/* mpa.c */
size_t vfw_mpa_rx_step(struct vfw_engine *e, uint32_t cep_id,
                       struct vfw_cep *c, const uint8_t *d, size_t rem);
uint32_t vfw_mpa_frame(struct vfw_qp *qp, uint8_t *fpdu, uint32_t ulpdu_len);
uint16_t vfw_mpa_mulpdu(uint16_t mss);

/* ddp.c */
uint32_t vfw_ddp_hdr(const struct vfw_txmsg *m, uint8_t *p, bool last);
int vfw_ddp_build(struct vfw_engine *e, struct vfw_qp *qp, uint32_t qp_id,
                  uint8_t *fpdu);
uint32_t vfw_ddp_next_fpdu_len(const struct vfw_qp *qp);
void vfw_ddp_rx(struct vfw_engine *e, struct vfw_qp *qp, uint32_t qp_id,
                const uint8_t *u, uint32_t len);

/* rdmap.c */
void vfw_rdmap_tx(struct vfw_engine *e, uint32_t qp_id);
void vfw_rdmap_terminate(struct vfw_engine *e, struct vfw_qp *qp,
                         uint32_t qp_id, uint8_t layer, uint8_t etype,
                         uint8_t ecode, const uint8_t *ddp_hdr,
                         uint32_t hdr_len, uint32_t seg_len);
void vfw_rdmap_rx_tagged(struct vfw_engine *e, struct vfw_qp *qp,
                         uint32_t qp_id, const uint8_t *u, uint32_t len);
void vfw_rdmap_rx_untagged(struct vfw_engine *e, struct vfw_qp *qp,
                           uint32_t qp_id, const uint8_t *u, uint32_t len);

#endif /* VFW_IWARP_H */
