/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/**
 * @file
 * The shared-memory ABI between dprdmad and its local clients: the control
 * messages on the Unix socket, the ring layout, and the WQE and CQE
 * formats. The daemon and the client library (libdprdma, the drop-in
 * libibverbs) both include this header and nothing else of each other.
 *
 * Control channel: a SOCK_SEQPACKET Unix socket. One connection is one
 * device context (ibv_open_device): every object it creates belongs to
 * it, and closing it (or the process dying) destroys them all. Each
 * request is one datagram of a struct dpr_shm_msg and gets exactly one
 * answer with the same op and seq; status is 0 or a negative errno. File
 * descriptors travel with SCM_RIGHTS: the client sends the memory it
 * registers and the pipe of a completion channel; the daemon sends the
 * memory of the rings it makes.
 *
 * Rings: a producer and a consumer index, each a free-running uint32_t on
 * its own cache line, written by one side only (release) and read by the
 * other (acquire); entries at index & (size - 1). Sizes are powers of two
 * and are told in the control answers: the daemon never trusts a size it
 * reads from shared memory, and copies every entry before it checks it.
 *
 * Doorbells: the client's control page holds a bitmap with one bit per QP
 * slot, and above it a summary with one bit per word of the bitmap. After
 * posting, the client sets its QP's bit, then the word's summary bit (two
 * atomic ORs); the worker that owns the client takes a summary word (an
 * atomic exchange), then each word it names, and drains those QPs' rings:
 * no scan of every QP, nor of every word (65,536 slots are 1,024 words).
 * A bit set after the worker took its summary bit has its summary bit set
 * after that, so it is taken next round: nothing is missed. A rung QP then stays
 * on the worker's own list, its rings looked at every round, until they
 * have been empty for a while: meanwhile the QP's SQ ring says idle = 0,
 * and the client rings no doorbell (an atomic OR on a line the worker
 * keeps taking: each one a transfer between the cores, which bounded
 * 64 B WRITEs through the shim at 3-6 M/s where the built-in client made
 * 16). The client stores a producer, then reads idle and rings if it is
 * set -- no fence between the two: one would make every post wait for
 * the producer's line to leave the worker's core, the cost the doorbell
 * had. So the worker, letting a QP go, stores idle = 1 and keeps looking
 * at its rings for a grace of rounds before it drops it (a producer
 * stored before idle was seen is visible by then: a store leaves the
 * store buffer within nanoseconds); and every millisecond it looks at the
 * producers of 1,024 QPs it does not poll, so that no post waits longer
 * than that (a millisecond for each 1,024 QPs the client has) whatever
 * the timing.
 *
 * Naps: a worker that yields the CPU (--idle yield) and found nothing to
 * do for a few rounds sleeps up to idle_sleep_us. Before it does, it sets
 * napping in the control page of each of its clients (then a full fence)
 * and looks at their doorbells and polled QPs once more; after, it clears
 * them. A client that published a producer and reads napping set writes
 * to the eventfd GET_WAKE gave it: the worker wakes at once, not at the
 * end of its nap. A doorbell is rung with atomics (full fences): a client
 * ringing one either sees napping or its bit is seen before the nap. A
 * QP polled every round rings none and reads napping without a fence (the
 * cost the doorbell's rules avoid): the rare read that misses a nap just
 * begun waits for its end, as every post did before.
 */

#ifndef DPR_SHM_H
#define DPR_SHM_H

#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DPR_SHM_MAGIC 0x31525044u     /**< "DPR1" */
#define DPR_SHM_VERSION 12           /**< 2: UD (the WQE's AV, Q_Key); 3: SRQ;
                                          4: IPv6 GIDs (4 in the port's table);
                                          5: RDMA CM; 6: a send WQE's first
                                          line holds a one-SGE request; 7: a
                                          QP's doorbell only while its SQ
                                          ring says idle; 8: MRs of a shared
                                          mapping (reg_mr.vma_lo/hi),
                                          ibv_rereg_mr (reg_mr.rereg); 9:
                                          65,536 QP slots, the doorbell's
                                          summary; 10: the worker's nap
                                          (ctrl.napping, GET_WAKE); 11:
                                          memory windows (ALLOC_MW,
                                          DEALLOC_MW, the WQE's bind); 12:
                                          a QP's two moves in one request
                                          (modify_qp.mask2, attr2) */

/** Environment variable naming the daemon's socket, and its default. */
#define DPR_SHM_SOCKET_ENV "DPRDMA_SOCKET"
#define DPR_SHM_SOCKET_DEFAULT "/run/dprdma/dprdmad.sock"

#define DPR_SHM_CACHE_LINE 64

/* Per-client limits (quotas; the daemon may lower them in its answer). */
#define DPR_SHM_MAX_QPS 65536         /**< QP slots (doorbell bits) */
#define DPR_SHM_MAX_SEND_SGE 8
#define DPR_SHM_MAX_RECV_SGE 7
#define DPR_SHM_MAX_INLINE 256
#define DPR_SHM_MAX_WR 4096           /**< ring entries per SQ or RQ */
#define DPR_SHM_MAX_CQE (1u << 20)
#define DPR_SHM_MAX_DEVICES 8

/* ------------------------------------------------------------ rings */

/** The head of every ring: producer and consumer on separate lines, then
 * a line of flags. Entries follow at DPR_SHM_RING_HDR. */
struct dpr_shm_ring {
	uint32_t prod;                  /**< written by the producer only */
	uint8_t pad0[DPR_SHM_CACHE_LINE - 4];
	uint32_t cons;                  /**< written by the consumer only */
	uint8_t pad1[DPR_SHM_CACHE_LINE - 4];
	/** CQ only: armed for the next completion (1) or the next
	 * solicited one (2); the client sets it, the daemon clears it when
	 * it signals the completion channel. */
	uint32_t armed;
	/** CQ only: set by the daemon when the CQ overflowed (it is then
	 * in error, IBA 11.4.2.1: no more completions). */
	uint32_t overflow;
	/** A QP's SQ ring only (for both its rings): 1 while the worker
	 * does not look at them every round, so that a client that
	 * published a producer must ring the QP's doorbell; 0 while it
	 * does (the daemon writes it; see Doorbells above). */
	uint32_t idle;
	uint8_t pad2[DPR_SHM_CACHE_LINE - 12];
};
#define DPR_SHM_RING_HDR ((uint32_t)sizeof(struct dpr_shm_ring))

struct dpr_shm_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

/**
 * A send work request as the client writes it. Values as ibv_send_wr.
 * Laid out so that a SEND, WRITE or READ of one SGE lies in the entry's
 * first 64 bytes: the daemon's worker reads the entries the client's core
 * wrote, and each cache line it reads is a transfer between the cores.
 * The atomics' operands and a UD request's destination come after the
 * SGEs (or inline bytes).
 */
struct dpr_shm_swqe {
	uint64_t wr_id;
	uint32_t opcode;                /**< enum ibv_wr_opcode */
	uint32_t send_flags;            /**< enum ibv_send_flags */
	uint32_t imm_data;              /**< wire order */
	uint32_t num_sge;               /**< or inline bytes with IBV_SEND_INLINE */
	uint64_t remote_addr;           /**< RDMA and atomics */
	uint32_t rkey;
	uint32_t pad;
	union {
		struct dpr_shm_sge sge[DPR_SHM_MAX_SEND_SGE];
		uint8_t inline_data[DPR_SHM_MAX_INLINE];
	};
	union {
		struct {                /**< atomics */
			uint64_t compare_add;
			uint64_t swap;
		};
		struct {                /**< UD: ibv_send_wr.wr.ud and its AH */
			uint8_t dgid[16];
			uint32_t flow_label;
			uint8_t traffic_class, hop_limit, sgid_index, pad;
			uint32_t remote_qpn;
			uint32_t remote_qkey;
		} ud;
		struct {                /**< IBV_WR_BIND_MW: ibv_send_wr.bind_mw */
			uint32_t mw_key;        /**< the window's key now */
			uint32_t new_key;       /**< its key once bound */
			uint32_t mr_lkey;
			uint32_t access;        /**< mw_access_flags */
			uint64_t addr, length;
		} bind;
	};
	uint8_t reserved[56];           /**< (whole cache lines an entry) */
};

/** A receive work request. */
struct dpr_shm_rwqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint32_t pad;
	struct dpr_shm_sge sge[DPR_SHM_MAX_RECV_SGE];
};

/* Two bits of a completion's wc_flags that are not ibv_wc_flags: a UD
 * receive's network header, which ibv_wc.sl reports as ConnectX does
 * (2: IPv4, 1: IPv6). The verbs layer takes them out of wc_flags. */
#define DPR_SHM_WC_NET_IPV4 (1u << 30)
#define DPR_SHM_WC_NET_IPV6 (1u << 31)
#define DPR_SHM_WC_NET_MASK (DPR_SHM_WC_NET_IPV4 | DPR_SHM_WC_NET_IPV6)

static inline uint8_t
dpr_shm_wc_sl(uint32_t wc_flags)
{
	return (wc_flags & DPR_SHM_WC_NET_IPV4) ? 2 :
		(wc_flags & DPR_SHM_WC_NET_IPV6) ? 1 : 0;
}

/** A completion as the daemon writes it. Values as ibv_wc. */
struct dpr_shm_cqe {
	uint64_t wr_id;
	uint32_t status;
	uint32_t opcode;
	uint32_t vendor_err;
	uint32_t byte_len;
	uint32_t imm_data;              /**< wire order */
	uint32_t qp_num;
	uint32_t src_qp;
	uint32_t wc_flags;
	uint64_t pad;
};

/** An asynchronous event (ibv_event_type) on one of the client's objects. */
struct dpr_shm_event {
	uint32_t type;                  /**< ibv_event_type */
	uint32_t handle;                /**< the client's QP or CQ handle */
};

#define DPR_SHM_EVENTS 64               /**< ring of async events */

/**
 * The client's control page (one per connection, made by the daemon):
 * doorbells, then the ring of asynchronous events. The daemon writes an
 * event, then ev_prod (release), then one count to the eventfd the client
 * gave at open; a client that falls more than DPR_SHM_EVENTS behind has
 * lost the oldest.
 */
struct dpr_shm_ctrl {
	uint32_t ev_prod;               /**< daemon only */
	/** 1 while the client's worker naps (it found nothing to do): a
	 * client that published a producer then writes 1 to the eventfd
	 * GET_WAKE gave it (see Naps above) */
	uint32_t napping;
	uint8_t pad0[DPR_SHM_CACHE_LINE - 8];
	struct dpr_shm_event ev[DPR_SHM_EVENTS];
	/** bit w % 64 of word w / 64: doorbell[w] may have a bit set */
	uint64_t db_summary[DPR_SHM_MAX_QPS / 64 / 64];
	uint64_t doorbell[DPR_SHM_MAX_QPS / 64];   /**< client ORs, worker takes */
};

/* The layout is the ABI: both compilers must agree with these. */
_Static_assert(sizeof(struct dpr_shm_ring) == 3 * DPR_SHM_CACHE_LINE, "ring head");
_Static_assert(__builtin_offsetof(struct dpr_shm_ring, cons) == DPR_SHM_CACHE_LINE,
	       "consumer on its own line");
_Static_assert(sizeof(struct dpr_shm_sge) == 16, "sge");
_Static_assert(sizeof(struct dpr_shm_swqe) == 384, "send wqe");
_Static_assert(__builtin_offsetof(struct dpr_shm_swqe, sge) + 16 <= DPR_SHM_CACHE_LINE,
	       "a one-SGE request in the first line");
_Static_assert(sizeof(struct dpr_shm_rwqe) == 128, "recv wqe");
_Static_assert(sizeof(struct dpr_shm_cqe) == 48, "cqe");
_Static_assert(sizeof(struct dpr_shm_ctrl) ==
	       9 * DPR_SHM_CACHE_LINE + DPR_SHM_MAX_QPS / 8 + DPR_SHM_MAX_QPS / 512,
	       "control page");
_Static_assert(__builtin_offsetof(struct dpr_shm_ctrl, db_summary) % DPR_SHM_CACHE_LINE == 0,
	       "the summary on lines of its own");

/** Bytes of a ring of @p n entries of @p esize bytes. */
static inline uint64_t
dpr_shm_ring_bytes(uint32_t n, uint32_t esize)
{
	return DPR_SHM_RING_HDR + (uint64_t)n * esize;
}

static inline void *
dpr_shm_ring_entry(struct dpr_shm_ring *r, uint32_t esize, uint32_t mask,
		   uint32_t idx)
{
	return (uint8_t *)r + DPR_SHM_RING_HDR + (uint64_t)(idx & mask) * esize;
}

/* ---------------------------------------------------- control messages */

enum dpr_shm_op {
	DPR_SHM_OPEN = 1,        /**< fd: an eventfd for async events (optional);
	                              answer: attributes, fd: control page */
	DPR_SHM_QUERY_PORT,
	DPR_SHM_ALLOC_PD,
	DPR_SHM_DEALLOC_PD,
	DPR_SHM_REG_MR,          /**< fd: the memory */
	DPR_SHM_DEREG_MR,
	DPR_SHM_CREATE_CHANNEL,  /**< fd: write end of the channel's pipe */
	DPR_SHM_DESTROY_CHANNEL,
	DPR_SHM_CREATE_CQ,       /**< answer fd: the CQ ring */
	DPR_SHM_DESTROY_CQ,
	DPR_SHM_CREATE_QP,       /**< answer fd: SQ ring then RQ ring */
	DPR_SHM_MODIFY_QP,
	DPR_SHM_QUERY_QP,
	DPR_SHM_DESTROY_QP,
	DPR_SHM_LIST_DEVICES,    /**< allowed before OPEN: the ports served */
	DPR_SHM_CREATE_SRQ,      /**< answer fd: the SRQ's receive ring */
	DPR_SHM_MODIFY_SRQ,
	DPR_SHM_QUERY_SRQ,
	DPR_SHM_DESTROY_SRQ,
	/* RDMA CM (drivers/cm; the drop-in librdmacm): allowed before OPEN,
	 * each on a connection of its own; its IDs and channels die with it */
	DPR_SHM_CM_CREATE_CHANNEL, /**< fd: the daemon's end of a SOCK_SEQPACKET
	                                pair; events (dpr_shm_cm_event) come there */
	DPR_SHM_CM_DESTROY_CHANNEL,
	DPR_SHM_CM_CREATE_ID,    /**< cm: channel, ps, qp_type; answer cm.id */
	DPR_SHM_CM_DESTROY_ID,
	DPR_SHM_CM_MIGRATE_ID,   /**< cm: id, channel */
	DPR_SHM_CM_BIND,         /**< cm: id, src; answer cm_resp */
	DPR_SHM_CM_RESOLVE_ADDR, /**< cm: id, src (family 0: none), dst */
	DPR_SHM_CM_RESOLVE_ROUTE,
	DPR_SHM_CM_LISTEN,       /**< cm: id, backlog */
	DPR_SHM_CM_CONNECT,      /**< cm_conn: REQ */
	DPR_SHM_CM_ACCEPT,       /**< cm_conn: REP */
	DPR_SHM_CM_REJECT,       /**< cm_conn: REJ (its private data) */
	DPR_SHM_CM_ESTABLISH,    /**< cm_conn: RTU (after the REP, QP in RTS) */
	DPR_SHM_CM_DISCONNECT,   /**< cm_conn: DREQ */
	DPR_SHM_GET_WAKE,        /**< after OPEN; answer fd: an eventfd that
	                              wakes the client's worker from a nap */
	DPR_SHM_ALLOC_MW,        /**< alloc_mw; answer alloc_mw_resp */
	DPR_SHM_DEALLOC_MW,      /**< obj */
	DPR_SHM_OP_MAX
};

struct dpr_shm_gid {
	uint8_t raw[16];
};

struct dpr_shm_device {
	char name[32];                  /**< dprdma0, ... */
	uint64_t node_guid;             /**< network order, from the MAC as rxe */
	uint64_t sys_image_guid;
	uint32_t vendor_id;             /**< no Mellanox/EFA id (perftest paths) */
	uint32_t vendor_part_id;
	uint32_t hw_ver;
	uint32_t max_qp, max_qp_wr, max_sge, max_cq, max_cqe, max_mr, max_pd;
	uint32_t max_qp_rd_atom, max_inline;
	uint64_t max_mr_size;
	uint32_t client_id;
	uint32_t worker;                /**< lcore worker index serving this client */
	char fw_ver[32];
};

struct dpr_shm_port {
	uint32_t state;                 /**< ibv_port_state */
	uint32_t max_mtu, active_mtu;   /**< ibv_mtu */
	uint32_t gid_tbl_len;
	uint32_t speed_mbps;
	uint8_t mac[6];
	uint8_t pad[2];
	/** rxe's table: link-local, IPv4-mapped, the configured IPv6 (when
	 * there is one: gid_tbl_len says) */
	struct dpr_shm_gid gid[4];
};

/** QP attributes, as ibv_qp_attr (the RC and UD fields). */
struct dpr_shm_qp_attr {
	uint32_t qp_state, cur_qp_state, path_mtu;
	uint32_t rq_psn, sq_psn, dest_qp_num, qp_access_flags;
	struct dpr_shm_gid dgid;
	uint32_t flow_label;
	uint8_t sgid_index, hop_limit, traffic_class, is_global;
	uint16_t pkey_index, dlid;
	uint8_t max_rd_atomic, max_dest_rd_atomic, min_rnr_timer, port_num;
	uint8_t timeout, retry_cnt, rnr_retry, sl;
	uint32_t qkey;                  /**< UD */
};

struct dpr_shm_qp_caps {
	uint32_t max_send_wr, max_recv_wr, max_send_sge, max_recv_sge;
	uint32_t max_inline_data;
};

/** A socket address of RDMA CM: IPv4 ones IPv4-mapped. */
struct dpr_shm_cm_addr {
	uint16_t family;                /**< AF_INET, AF_INET6; 0: none */
	uint16_t port;                  /**< network order */
	uint32_t scope_id;
	uint8_t addr[16];
};

/** What a connection's REQ, REP or event carries (rdma_conn_param and
 * the QP attributes it implies). */
struct dpr_shm_cm_conn {
	uint32_t qpn, psn, qkey;
	uint8_t qp_type;                /**< ibv_qp_type */
	uint8_t resp_res, init_depth, flow_ctrl;
	uint8_t retry_cnt, rnr_retry, srq;
	uint8_t mtu;                    /**< ibv_mtu of the path */
	uint8_t ack_timeout;            /**< the QP's local ACK timeout */
	uint8_t pad[3];
	uint32_t pdata_len;
	uint8_t pdata[196];
};

/** RDMA CM events, as enum rdma_cm_event_type numbers them. */
enum dpr_shm_cm_ev {
	DPR_SHM_CM_EV_ADDR_RESOLVED = 0,
	DPR_SHM_CM_EV_ADDR_ERROR = 1,
	DPR_SHM_CM_EV_ROUTE_RESOLVED = 2,
	DPR_SHM_CM_EV_ROUTE_ERROR = 3,
	DPR_SHM_CM_EV_CONNECT_REQUEST = 4,
	DPR_SHM_CM_EV_CONNECT_RESPONSE = 5,
	DPR_SHM_CM_EV_CONNECT_ERROR = 6,
	DPR_SHM_CM_EV_UNREACHABLE = 7,
	DPR_SHM_CM_EV_REJECTED = 8,
	DPR_SHM_CM_EV_ESTABLISHED = 9,
	DPR_SHM_CM_EV_DISCONNECTED = 10,
	DPR_SHM_CM_EV_DEVICE_REMOVAL = 11,
	DPR_SHM_CM_EV_TIMEWAIT_EXIT = 15,
};

/** One RDMA CM event, one datagram on the channel's socket. */
struct dpr_shm_cm_event {
	uint32_t magic;
	uint32_t event;                 /**< enum dpr_shm_cm_ev */
	int32_t status;                 /**< -errno, or the REJ reason */
	uint32_t id;                    /**< CONNECT_REQUEST: the new ID */
	uint32_t listen_id;             /**< CONNECT_REQUEST: the listener */
	uint32_t port;                  /**< device index */
	uint32_t sgid_index;
	uint32_t pad;
	struct dpr_shm_cm_addr src, dst;
	struct dpr_shm_gid sgid, dgid;
	struct dpr_shm_cm_conn conn;
};

struct dpr_shm_msg {
	uint32_t magic;
	uint16_t version;
	uint16_t op;
	uint32_t seq;
	int32_t status;                 /**< answers: 0 or -errno */
	union {
		struct {
			uint32_t port;          /**< device index */
		} open;
		struct {
			struct dpr_shm_device dev;
			struct dpr_shm_port port;
			uint32_t ctrl_bytes;
		} open_resp;
		struct dpr_shm_port port_resp;
		struct {
			uint32_t handle;        /**< PD, MR, CQ, QP, channel */
		} obj;
		struct {
			uint32_t pd;
			uint32_t access;
			uint64_t iova;          /**< what peers and lkeys use */
			uint64_t length;
			uint64_t offset;        /**< in the memory sent along (page multiple) */
			uint64_t map_bytes;     /**< what the daemon maps from there */
			uint64_t addr_off;      /**< the MR's first byte in that mapping */
			/** 0: the memory is the descriptor sent along; else no
			 * descriptor: the memory is System V segment sysv - 1
			 * (shmget; perftest's --use_hugepages), offset into it */
			uint32_t sysv;
			/** Nonzero: ibv_rereg_mr of this MR (a handle): the
			 * new registration takes its place and its keys */
			uint32_t rereg;
			/** Nonzero: no descriptor; the memory is the client's
			 * shared mapping [vma_lo, vma_hi) (MAP_SHARED |
			 * MAP_ANONYMOUS, a memfd sealed against shrinking),
			 * which dprdmad opens as /proc/PID/map_files/LO-HI;
			 * offset into its object */
			uint64_t vma_lo, vma_hi;
		} reg_mr;
		struct {
			uint32_t handle, lkey, rkey;
		} reg_mr_resp;
		struct {
			uint32_t pd, type;      /**< IBV_MW_TYPE_1 or _2 */
		} alloc_mw;
		struct {
			uint32_t handle, rkey;
		} alloc_mw_resp;
		struct {
			uint32_t cqe;
			int32_t channel;        /**< -1: none */
		} create_cq;
		struct {
			uint32_t handle, cqe, size;
			uint64_t map_bytes;
		} create_cq_resp;
		struct {
			uint32_t pd, send_cq, recv_cq, qp_type, sq_sig_all;
			struct dpr_shm_qp_caps cap;
			uint32_t srq;           /**< 0: a receive queue of its own */
		} create_qp;
		struct {
			uint32_t pd, max_wr, max_sge, limit;
		} create_srq;
		struct {
			uint32_t handle, max_wr, max_sge, size;
			uint64_t map_bytes;     /**< the receive ring */
		} create_srq_resp;
		struct {
			uint32_t handle;
			uint32_t mask;          /**< ibv_srq_attr_mask */
			uint32_t max_wr, limit;
		} modify_srq;
		struct {
			uint32_t max_wr, max_sge, limit;
		} query_srq_resp;
		struct {
			uint32_t handle, qpn, slot, sq_size, rq_size;
			struct dpr_shm_qp_caps cap;
			uint64_t map_bytes;     /**< SQ ring, then the RQ ring */
			uint64_t rq_offset;
		} create_qp_resp;
		struct {
			uint32_t handle;
			uint32_t mask;          /**< ibv_qp_attr_mask */
			struct dpr_shm_qp_attr attr;
			/** a second move (0: none), made once the first
			 * has: RTR then RTS in one request */
			uint32_t mask2;
			struct dpr_shm_qp_attr attr2;
		} modify_qp;
		struct {
			struct dpr_shm_qp_attr attr;
			struct dpr_shm_qp_caps cap;
		} query_qp_resp;
		struct {
			uint32_t n;
			uint32_t pad;
			uint64_t guid[8];       /**< node GUID of each (network order) */
		} list_resp;
		struct {
			uint32_t id, channel, ps, qp_type, backlog, timeout_ms;
			struct dpr_shm_cm_addr src, dst;
		} cm;
		struct {
			uint32_t id;
			uint32_t port;          /**< device index; UINT32_MAX: none yet */
			uint32_t sgid_index, mtu;
			struct dpr_shm_cm_addr src, dst;
			struct dpr_shm_gid sgid, dgid;
		} cm_resp;
		struct {
			uint32_t id;
			struct dpr_shm_cm_conn conn;
		} cm_conn;
		uint8_t raw[240];
	};
};

_Static_assert(sizeof(struct dpr_shm_msg) == 256, "message size");

/** The name of a control operation, for messages. */
const char *dpr_shm_op_name(unsigned int op);

/** Send one message on the control socket with at most one descriptor
 * (@p fd -1: none). @return bytes sent, or -1 with errno. */
ssize_t dpr_shm_send(int sock, const void *buf, size_t len, int fd);

/** Receive one message; the first descriptor that came with it is kept in
 * *@p fd (-1: none), any others are closed. @p msg_flags (may be NULL)
 * gets MSG_TRUNC and friends. @return bytes, or -1 with errno. */
ssize_t dpr_shm_recv(int sock, void *buf, size_t len, int flags, int *fd,
		int *msg_flags);

#ifdef __cplusplus
}
#endif

#endif /* DPR_SHM_H */
