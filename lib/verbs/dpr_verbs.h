/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/**
 * @file
 * Verbs objects and their tables: protection domains, memory regions
 * (access flags, bounds, unpredictable keys, O(1) lookup), completion
 * queues, the verbs half of a queue pair, and resource limits.
 *
 * Enumerations carry the numeric values of rdma-core's <infiniband/verbs.h>
 * (checked by the unit tests), so that the shim can pass them through.
 * No DPDK here: this library is a leaf, usable by the daemon and clients.
 */

#ifndef DPR_VERBS_H
#define DPR_VERBS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/queue.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ enums */

/** Work request opcodes (ibv_wr_opcode). */
enum dpr_wr_opcode {
	DPR_WR_RDMA_WRITE = 0,
	DPR_WR_RDMA_WRITE_WITH_IMM = 1,
	DPR_WR_SEND = 2,
	DPR_WR_SEND_WITH_IMM = 3,
	DPR_WR_RDMA_READ = 4,
	DPR_WR_ATOMIC_CMP_AND_SWP = 5,
	DPR_WR_ATOMIC_FETCH_AND_ADD = 6,
	DPR_WR_LOCAL_INV = 7,         /**< rkey: the window to invalidate */
	DPR_WR_BIND_MW = 8,           /**< rkey: the window's new key; bind */
	DPR_WR_SEND_WITH_INV = 9,     /**< rkey: the peer's window to invalidate */
};

/** Send flags (ibv_send_flags). */
enum dpr_send_flags {
	DPR_SEND_FENCE = 1 << 0,
	DPR_SEND_SIGNALED = 1 << 1,
	DPR_SEND_SOLICITED = 1 << 2,
	DPR_SEND_INLINE = 1 << 3,
};

/** Completion opcodes (ibv_wc_opcode). */
enum dpr_wc_opcode {
	DPR_WC_SEND = 0,
	DPR_WC_RDMA_WRITE = 1,
	DPR_WC_RDMA_READ = 2,
	DPR_WC_COMP_SWAP = 3,
	DPR_WC_FETCH_ADD = 4,
	DPR_WC_BIND_MW = 5,
	DPR_WC_LOCAL_INV = 6,
	DPR_WC_RECV = 128,
	DPR_WC_RECV_RDMA_WITH_IMM = 129,
};

/** Completion status (ibv_wc_status). */
enum dpr_wc_status {
	DPR_WC_SUCCESS = 0,
	DPR_WC_LOC_LEN_ERR = 1,
	DPR_WC_LOC_QP_OP_ERR = 2,
	DPR_WC_LOC_PROT_ERR = 4,
	DPR_WC_WR_FLUSH_ERR = 5,
	DPR_WC_MW_BIND_ERR = 6,
	DPR_WC_BAD_RESP_ERR = 7,
	DPR_WC_LOC_ACCESS_ERR = 8,
	DPR_WC_REM_INV_REQ_ERR = 9,
	DPR_WC_REM_ACCESS_ERR = 10,
	DPR_WC_REM_OP_ERR = 11,
	DPR_WC_RETRY_EXC_ERR = 12,
	DPR_WC_RNR_RETRY_EXC_ERR = 13,
	DPR_WC_FATAL_ERR = 19,
	DPR_WC_GENERAL_ERR = 21,
};

/** Completion flags (ibv_wc_flags). */
enum dpr_wc_flags {
	DPR_WC_GRH = 1 << 0,      /**< the first 40 bytes hold the GRH (UD) */
	DPR_WC_WITH_IMM = 1 << 1,
	/** A SEND WITH INVALIDATE: imm_data holds the key invalidated (in
	 * host order, as ibv_wc.invalidated_rkey) */
	DPR_WC_WITH_INV = 1 << 3,
	/** Not ibv_wc_flags: the network header of a UD receive, which the
	 * verbs layer reports in ibv_wc.sl as ConnectX does (its PRM: for
	 * RoCE the SL of a UD completion is the L3 header type, 2 IPv4, 1
	 * IPv6; UCX reads it to find the destination GID in the GRH). The
	 * shim passes them on (DPR_SHM_WC_NET_*, the same bits). */
	DPR_WC_NET_IPV4 = 1 << 30,
	DPR_WC_NET_IPV6 = (int)(1u << 31),
};

/** Access flags (ibv_access_flags). */
enum dpr_access_flags {
	DPR_ACCESS_LOCAL_WRITE = 1 << 0,
	DPR_ACCESS_REMOTE_WRITE = 1 << 1,
	DPR_ACCESS_REMOTE_READ = 1 << 2,
	DPR_ACCESS_REMOTE_ATOMIC = 1 << 3,
	DPR_ACCESS_MW_BIND = 1 << 4,        /**< windows may be bound to it */
};
#define DPR_ACCESS_ALL (DPR_ACCESS_LOCAL_WRITE | DPR_ACCESS_REMOTE_WRITE | \
			DPR_ACCESS_REMOTE_READ | DPR_ACCESS_REMOTE_ATOMIC | \
			DPR_ACCESS_MW_BIND)
#define DPR_ACCESS_REMOTE (DPR_ACCESS_REMOTE_WRITE | DPR_ACCESS_REMOTE_READ | \
			   DPR_ACCESS_REMOTE_ATOMIC)

/** QP transport services, numbered as ibv_qp_type: the one name for them
 * in lib/verbs, lib/transport, the shim's messages and the drop-in. Only RC
 * is served today; UC and UD are named so that their refusal says what it
 * refuses (the transport-breadth work adds them). */
enum dpr_qp_type {
	DPR_QPT_RC = 2,
	DPR_QPT_UC = 3,
	DPR_QPT_UD = 4,
};

/** QP states (ibv_qp_state). */
enum dpr_qp_state {
	DPR_QPS_RESET = 0,
	DPR_QPS_INIT = 1,
	DPR_QPS_RTR = 2,
	DPR_QPS_RTS = 3,
	DPR_QPS_SQD = 4,
	DPR_QPS_SQE = 5,
	DPR_QPS_ERR = 6,
	DPR_QPS_NUM
};

/** QP attribute mask bits (ibv_qp_attr_mask). */
enum dpr_qp_attr_mask {
	DPR_QP_STATE = 1 << 0,
	DPR_QP_CUR_STATE = 1 << 1,
	DPR_QP_EN_SQD_ASYNC_NOTIFY = 1 << 2,
	DPR_QP_ACCESS_FLAGS = 1 << 3,
	DPR_QP_PKEY_INDEX = 1 << 4,
	DPR_QP_PORT = 1 << 5,
	DPR_QP_QKEY = 1 << 6,
	DPR_QP_AV = 1 << 7,
	DPR_QP_PATH_MTU = 1 << 8,
	DPR_QP_TIMEOUT = 1 << 9,
	DPR_QP_RETRY_CNT = 1 << 10,
	DPR_QP_RNR_RETRY = 1 << 11,
	DPR_QP_RQ_PSN = 1 << 12,
	DPR_QP_MAX_QP_RD_ATOMIC = 1 << 13,
	DPR_QP_ALT_PATH = 1 << 14,
	DPR_QP_MIN_RNR_TIMER = 1 << 15,
	DPR_QP_SQ_PSN = 1 << 16,
	DPR_QP_MAX_DEST_RD_ATOMIC = 1 << 17,
	DPR_QP_PATH_MIG_STATE = 1 << 18,
	DPR_QP_CAP = 1 << 19,
	DPR_QP_DEST_QPN = 1 << 20,
};

/** Path MTU (ibv_mtu): 1 = 256 .. 5 = 4096. */
enum dpr_mtu {
	DPR_MTU_256 = 1,
	DPR_MTU_512 = 2,
	DPR_MTU_1024 = 3,
	DPR_MTU_2048 = 4,
	DPR_MTU_4096 = 5,
};

static inline uint32_t
dpr_mtu_bytes(enum dpr_mtu m)
{
	return m >= DPR_MTU_256 && m <= DPR_MTU_4096 ? 128u << m : 0;
}

/** Asynchronous events (ibv_event_type). */
enum dpr_event_type {
	DPR_EVENT_CQ_ERR = 0,
	DPR_EVENT_QP_FATAL = 1,
	DPR_EVENT_QP_REQ_ERR = 2,
	DPR_EVENT_QP_ACCESS_ERR = 3,
	DPR_EVENT_COMM_EST = 4,
	DPR_EVENT_SQ_DRAINED = 5,
	DPR_EVENT_DEVICE_FATAL = 8,             /**< handle: 0 (the device) */
	DPR_EVENT_PORT_ACTIVE = 9,              /**< handle: the port (1) */
	DPR_EVENT_PORT_ERR = 10,
	DPR_EVENT_SRQ_LIMIT_REACHED = 15,       /**< handle: the SRQ's */
	DPR_EVENT_QP_LAST_WQE_REACHED = 16,
};

/* ---------------------------------------------------------- limits */

/** Resource limits of one verbs context (a device as clients see it). */
struct dpr_verbs_limits {
	uint32_t max_pd;
	uint32_t max_mr;
	uint32_t max_cq;
	uint32_t max_qp;
	uint32_t max_cqe;
	uint32_t max_qp_wr;
	uint32_t max_sge;
	uint32_t max_inline;
	uint32_t max_rd_atomic;     /**< outstanding READ/atomic per QP, both ways */
	uint64_t max_mr_size;
};

/** Defaults: rxe-like, sized for an appliance. */
void dpr_verbs_default_limits(struct dpr_verbs_limits *l);

/* --------------------------------------------------------- objects */

struct dpr_verbs_ctx;

struct dpr_pd {
	struct dpr_verbs_ctx *ctx;
	uint32_t handle;
	uint32_t owner;           /**< client that made it (0: the daemon) */
	uint32_t refs;            /**< MRs and QPs that use it */
};

/** How the memory under an MR goes back to its owner: @p release(@p arg)
 * runs once, when the MR is deregistered and the last frame that still
 * points into the memory has been sent (a client's mapping, unmapped). */
struct dpr_mr_owner {
	void (*release)(void *arg);
	void *arg;
};

/** A memory region: [addr, addr + length) of this process, known to
 * peers as [iova, iova + length); or a memory window (IBA 10.6.7): a key
 * of its own to a part of an MR, bound and invalidated through work
 * requests. A window's key is never a local key. */
struct dpr_mr {
	struct dpr_pd *pd;
	uint8_t *addr;
	uint64_t iova;
	uint64_t length;
	uint32_t access;          /**< enum dpr_access_flags */
	uint32_t lkey;
	uint32_t rkey;
	uint32_t index;
	bool valid;               /**< a window: bound (its key is good) */
	/** 0: a memory region; 1 or 2: a memory window of that type, which
	 * borrows [addr, addr + length) of the MR it is bound to */
	uint8_t mw_type;
	uint32_t mw_bound;        /**< an MR: windows bound to it now */
	struct dpr_mr *parent;    /**< a bound window: its MR */
	uint32_t mw_qpn;          /**< a bound type 2 window: its QP */
	/** Who gives the memory back, once the MR is deregistered and
	 * nothing uses the memory any more (NULL: the caller keeps it). */
	struct dpr_mr_owner owner;
	/** lib/transport's alone (the shared info of frames attached to the
	 * memory); nobody else reads or writes it. */
	void *priv;
};

/** A completion, field for field what ibv_wc carries. */
struct dpr_cqe {
	uint64_t wr_id;
	uint32_t status;          /**< enum dpr_wc_status */
	uint32_t opcode;          /**< enum dpr_wc_opcode */
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm_data;        /**< wire order, as ibv_wc has it */
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t wc_flags;
};

struct dpr_cq {
	struct dpr_verbs_ctx *ctx;
	uint32_t handle;
	uint32_t owner;
	uint32_t cqe;             /**< capacity asked for */
	uint32_t mask;            /**< ring size - 1 */
	uint32_t head;            /**< next to write */
	uint32_t tail;            /**< next to read */
	bool overflowed;          /**< an overflow happened: CQ in error */
	struct dpr_cqe *ring;
	uint32_t refs;
	/** When set, completions go here instead of the ring (a client's
	 * shared-memory CQ): it returns 0 or -ENOSPC as dpr_cq_push(). */
	int (*push)(struct dpr_cq *cq, const struct dpr_cqe *e);
	void *push_arg;
};

/** A scatter/gather element (ibv_sge). */
struct dpr_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/* ------------------------------------------------------ work requests */

#define DPR_WR_MAX_SGE 8          /**< SGEs of a send work request */
#define DPR_WR_MAX_INLINE 256     /**< inline bytes of one */
#define DPR_RECV_WR_MAX_SGE 7     /**< SGEs of a receive work request */

/**
 * A send work request: the one shape a request has from a client's send
 * ring (lib/shm's struct dpr_shm_swqe is this, field for field; the shim
 * asserts it) to the transport's dpr_post_send(), which checks it.
 * Values as ibv_send_wr has them.
 */
/** Where a UD send goes: the address handle's vector (ibv_ah_attr with
 * its GRH), the destination QP and Q_Key (ibv_send_wr.wr.ud). */
struct dpr_ud_dest {
	uint8_t dgid[16];
	uint32_t flow_label;
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t sgid_index;
	uint8_t pad;
	uint32_t remote_qpn;
	/** High bit set: the sending QP's own Q_Key goes out instead
	 * (IBA 10.2.5, the controlled Q_Key rule, as rxe applies it) */
	uint32_t remote_qkey;
};

/** What a bind asks (ibv_mw_bind_info with the window and its new key). */
struct dpr_mw_bind {
	uint32_t mw_key;          /**< the window's key (its key byte aside) */
	uint32_t new_key;         /**< its key from now on */
	uint32_t mr_lkey;         /**< the MR (0 with length 0: type 1 unbind) */
	uint32_t access;          /**< the window's (enum dpr_access_flags) */
	uint64_t addr;            /**< in the MR's iova space */
	uint64_t length;
};

struct dpr_send_wr {
	uint64_t wr_id;
	uint32_t opcode;          /**< enum dpr_wr_opcode */
	uint32_t send_flags;      /**< enum dpr_send_flags */
	uint32_t imm_data;        /**< wire order */
	uint32_t num_sge;         /**< SGEs, or inline bytes with DPR_SEND_INLINE */
	uint64_t remote_addr;     /**< RDMA and atomics */
	uint32_t rkey;
	uint32_t pad;
	union {
		struct dpr_sge sge[DPR_WR_MAX_SGE];
		uint8_t inline_data[DPR_WR_MAX_INLINE];
	};
	union {
		struct {
			uint64_t compare_add;     /**< atomics */
			uint64_t swap;            /**< CMP_AND_SWP */
		};
		struct dpr_ud_dest ud;    /**< UD QPs: SEND only */
		struct dpr_mw_bind bind;  /**< DPR_WR_BIND_MW */
	};
	uint8_t reserved[56];
};

/** A receive work request (struct dpr_shm_rwqe, field for field). */
struct dpr_recv_wr {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t pad;
	struct dpr_sge sge[DPR_RECV_WR_MAX_SGE];
};

/* -------------------------------------------------------- the context */

typedef void (*dpr_event_cb)(void *arg, enum dpr_event_type type,
		uint32_t obj_handle);

/** Create a context with these limits (NULL: defaults). NULL on ENOMEM. */
struct dpr_verbs_ctx *dpr_verbs_create(const struct dpr_verbs_limits *l);
void dpr_verbs_destroy(struct dpr_verbs_ctx *ctx);
const struct dpr_verbs_limits *dpr_verbs_limits(const struct dpr_verbs_ctx *ctx);

/** Called by dpr_mr_dereg() for an MR whose priv is set, before it goes:
 * the transport lets go of what it hung there, and takes on giving the
 * memory to its owner when its last frame has gone (the MR's owner is
 * then its to call). Without priv, dpr_mr_dereg() calls the owner. */
void dpr_verbs_set_mr_release(struct dpr_verbs_ctx *ctx,
		void (*fn)(struct dpr_mr *mr));

/** Where asynchronous events (CQ overflow, QP errors) go. */
void dpr_verbs_set_event_cb(struct dpr_verbs_ctx *ctx, dpr_event_cb cb, void *arg);
void dpr_verbs_event(struct dpr_verbs_ctx *ctx, enum dpr_event_type type,
		uint32_t obj_handle);

/** @return a PD, or NULL with errno (ENOMEM: limit reached). */
struct dpr_pd *dpr_pd_alloc(struct dpr_verbs_ctx *ctx, uint32_t owner);
/** @return 0, or -EBUSY while MRs or QPs use it. */
int dpr_pd_dealloc(struct dpr_pd *pd);

/**
 * Register [addr, addr + length) with the peers' view starting at @p iova.
 * @return the MR, or NULL with errno: EINVAL (bad access combination:
 *   remote write or atomic without local write, as IBA 10.6.3.1 requires;
 *   zero or too large a length; wrapping iova), ENOMEM (limit reached).
 */
struct dpr_mr *dpr_mr_reg(struct dpr_pd *pd, void *addr, uint64_t iova,
		uint64_t length, uint32_t access);
/** dpr_mr_reg() of memory that @p owner takes back (see dpr_mr_owner). */
struct dpr_mr *dpr_mr_reg_owned(struct dpr_pd *pd, void *addr, uint64_t iova,
		uint64_t length, uint32_t access, const struct dpr_mr_owner *owner);
/** ibv_rereg_mr: a new MR in @p old's place, with its keys (a new PD,
 * memory or access); @p old is invalid at once and freed, its memory
 * given back as a deregistration gives it. NULL + errno: @p old stays. */
struct dpr_mr *dpr_mr_rereg(struct dpr_mr *old, struct dpr_pd *pd, void *addr,
		uint64_t iova, uint64_t length, uint32_t access,
		const struct dpr_mr_owner *owner);
/** Invalidate at once (its keys are refused from now on) and free. */
int dpr_mr_dereg(struct dpr_mr *mr);

/** For tests that compare two runs: MR keys drawn from @p seed from now
 * on, the same in every run, instead of unpredictable ones (0: back to
 * arc4random). Never for a device peers can reach. */
void dpr_verbs_seed_keys(struct dpr_verbs_ctx *ctx, uint64_t seed);

/**
 * The device's MR generation: it changes whenever an MR is deregistered
 * and a window bound or invalidated.
 * An MR found by dpr_mr_check() may be kept and used without another
 * check while the generation read then is still the one read now (the
 * transport resolves a WQE's keys once, not per packet).
 */
const uint64_t *dpr_verbs_mr_gen(const struct dpr_verbs_ctx *ctx);

/** MR (or bound window) for a key, or NULL; O(1): the key's index bits
 * (above its low 8 bits, the key byte a window's binder chooses) pick
 * the slot. */
struct dpr_mr *dpr_mr_lookup(struct dpr_verbs_ctx *ctx, uint32_t key);

/**
 * Check an access of [iova, iova + len) through @p key: a local one
 * (@p qpn 0: an SGE's lkey) or a remote one by QP @p qpn (an rkey).
 * @return the MR, or NULL if the key is unknown or invalid, of another PD,
 *   lacks @p access, or the range is out of bounds (wrap included); a
 *   window only for a remote access, a type 2 window only through the QP
 *   it is bound to.
 */
struct dpr_mr *dpr_mr_check(struct dpr_verbs_ctx *ctx, uint32_t key,
		const struct dpr_pd *pd, uint32_t qpn, uint64_t iova,
		uint64_t len, uint32_t access);

/** A memory window of @p type (1 or 2), not bound. NULL + errno: EINVAL
 * (type), ENOMEM (its key slot: windows share the MRs' table). */
struct dpr_mr *dpr_mw_alloc(struct dpr_pd *pd, uint32_t type);
/** Unbind (if bound) and free. */
int dpr_mw_dealloc(struct dpr_mr *mw);


/**
 * Bind a window (IBA 10.6.7.2; as rxe checks it) by QP @p qpn of PD
 * @p pd: a type 1 window may be bound again (length 0 unbinds it), a type
 * 2 one only once invalidated, and it is then the QP's alone. The MR must
 * be of the same PD, allow MW_BIND and local write where the window
 * allows remote write or atomics, and hold the range; the new key differs
 * in its low 8 bits only. @return 0 or -EINVAL (a bind error).
 */
int dpr_mw_bind(struct dpr_verbs_ctx *ctx, const struct dpr_pd *pd,
		uint32_t qpn, const struct dpr_mw_bind *b);

/**
 * Invalidate the type 2 window of key @p key: locally (@p remote false:
 * IBV_WR_LOCAL_INV on a QP of its PD) or by a peer's SEND WITH
 * INVALIDATE arriving on QP @p qpn, the one it is bound to.
 * @return 0 or -EINVAL.
 */
int dpr_mw_invalidate(struct dpr_verbs_ctx *ctx, uint32_t key,
		const struct dpr_pd *pd, uint32_t qpn, bool remote);

/** Does @p mr hold [iova, iova + len), without wrapping? */
static inline __attribute__((always_inline)) bool
dpr_mr_covers(const struct dpr_mr *mr, uint64_t iova, uint64_t len)
{
	return iova >= mr->iova && len <= mr->length &&
	       iova - mr->iova <= mr->length - len;
}

/** The last key a user checked, with the MR generation it was found at. */
struct dpr_mr_cache {
	struct dpr_mr *mr;
	uint32_t key;
	uint64_t gen;
};

/**
 * dpr_mr_check() through @p c: while no MR has been deregistered since
 * (@p gen, read from dpr_verbs_mr_gen(), unchanged) the same key needs no
 * lookup, only the PD, access and bounds checks. Never a stale key.
 */
static inline __attribute__((always_inline)) struct dpr_mr *
dpr_mr_check_cached(struct dpr_verbs_ctx *ctx, struct dpr_mr_cache *c,
		    uint64_t gen, uint32_t key, const struct dpr_pd *pd,
		    uint32_t qpn, uint64_t iova, uint64_t len, uint32_t access)
{
	struct dpr_mr *mr = c->mr;

	if (mr != NULL && c->key == key && c->gen == gen && mr->pd == pd &&
	    (mr->access & access) == access)
		return dpr_mr_covers(mr, iova, len) ? mr : NULL;
	mr = dpr_mr_check(ctx, key, pd, qpn, iova, len, access);
	if (mr != NULL)
		*c = (struct dpr_mr_cache){ mr, key, gen };
	return mr;
}

/** Address of @p iova inside a checked MR. */
static inline uint8_t *
dpr_mr_ptr(const struct dpr_mr *mr, uint64_t iova)
{
	return mr->addr + (iova - mr->iova);
}

/** @return a CQ of at least @p cqe entries, or NULL with errno. */
struct dpr_cq *dpr_cq_create(struct dpr_verbs_ctx *ctx, uint32_t cqe,
		uint32_t owner);
/** @return 0, or -EBUSY while QPs use it. */
int dpr_cq_destroy(struct dpr_cq *cq);

/**
 * Add a completion. On overflow the completion is dropped, the CQ is
 * marked in error and a DPR_EVENT_CQ_ERR event raised (IBA 11.4.2.1).
 * @return 0, or -ENOSPC on overflow.
 */
int dpr_cq_push(struct dpr_cq *cq, const struct dpr_cqe *e);

/** Take up to @p n completions, oldest first. @return how many. */
int dpr_cq_poll(struct dpr_cq *cq, struct dpr_cqe *out, int n);

static inline uint32_t
dpr_cq_count(const struct dpr_cq *cq)
{
	return cq->head - cq->tail;
}

/** QP1, the General Services Interface (IBA 13.5.1): its Q_Key. */
#define DPR_QPN_GSI 1u
#define DPR_GSI_QKEY 0x80010000u

/** Reserve a QP number (24 bits, never 0 or 1) for @p obj; with *@p qpn
 * DPR_QPN_GSI on entry, QP1 itself (-EBUSY: it has one). */
int dpr_qpn_alloc(struct dpr_verbs_ctx *ctx, void *obj, uint32_t *qpn);
void dpr_qpn_free(struct dpr_verbs_ctx *ctx, uint32_t qpn);
/** The object a QP number was reserved for, or NULL; O(1). */
void *dpr_qpn_lookup(struct dpr_verbs_ctx *ctx, uint32_t qpn);

/** A QP's slot in the table of QPs: the QP, and the QPN the slot has (or
 * last had) -- side by side, one cache line read for both. */
struct dpr_qp_slot {
	void *qp;
	uint32_t qpn;
};

/** The table of QPs by slot, for a receive path that looks QPs up
 * itself (dpr_qp_table_get(); its prefetch of the QPs of frames ahead). */
struct dpr_qp_table {
	struct dpr_qp_slot *slot;
	uint32_t idx_mask;          /**< the QPN bits that are the slot */
	uint32_t max;               /**< slots */
};

/** @p ctx's QP table (stable for the context's life). */
const struct dpr_qp_table *dpr_verbs_qp_table(const struct dpr_verbs_ctx *ctx);

/** The QP of number @p qpn, or NULL (none; QP1 is not in the table:
 * dpr_qpn_lookup() has it). */
static inline __attribute__((always_inline)) void *
dpr_qp_table_get(const struct dpr_qp_table *t, uint32_t qpn)
{
	const uint32_t slot = qpn & t->idx_mask;

	if (__builtin_expect(slot >= t->max || t->slot[slot].qpn != qpn, 0))
		return NULL;
	return t->slot[slot].qp;
}

/** Start loading the slot of QP number @p qpn into the cache. */
static inline __attribute__((always_inline)) void
dpr_qp_table_prefetch(const struct dpr_qp_table *t, uint32_t qpn)
{
	const uint32_t slot = qpn & t->idx_mask;

	if (slot < t->max)
		__builtin_prefetch(&t->slot[slot]);
}
/** The table slot of QP number @p qpn (its bits below the random ones):
 * below max_qp for every QPN dpr_qpn_alloc() gives. */
uint32_t dpr_qpn_slot(const struct dpr_verbs_ctx *ctx, uint32_t qpn);

/** Counts of live objects, for limits and tests. */
struct dpr_verbs_usage {
	uint32_t pd, mr, cq, qp, mw;
};
void dpr_verbs_usage(const struct dpr_verbs_ctx *ctx, struct dpr_verbs_usage *u);

#ifdef __cplusplus
}
#endif

#endif /* DPR_VERBS_H */
