/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The drop-in libibverbs.so.1: rdma-core 44's libibverbs ABI on top of
 * libdprdma, so that unmodified verbs programs (ibv_devinfo,
 * ibv_rc_pingpong, perftest, ...) run against dprdmad with
 * LD_LIBRARY_PATH=<builddir>/drop-in.
 *
 * The context is a full struct verbs_context (abi_compat set to
 * __VERBS_ABI_IS_EXTENDED), so the inline parts of <infiniband/verbs.h>
 * (ibv_post_send, ibv_poll_cq, ibv_query_port, ibv_create_qp_ex,
 * ibv_query_device_ex, ...) reach these functions; QPs made with send_ops
 * are struct ibv_qp_ex with the ibv_wr_* builder.
 *
 * Every symbol and version node of the real library exists (programs and
 * providers are linked with BIND_NOW); those that need a kernel device
 * (ibv_cmd_*, ibv_import_*, ...) refuse with EOPNOTSUPP; the provider
 * registration entry points are no-ops, so that libmlx5 and libefa, which
 * perftest links, load harmlessly. No constructor: loading this library by
 * accident changes nothing.
 */

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dropin_private.h"

/* ---------------------------------------------------------- devices */

/*
 * The devices outlive their lists, as rdma-core's do: a program frees the
 * list and keeps using a device it opened (UCX asks ibv_get_device_name()
 * of context->device long after ibv_free_device_list(); freeing with the
 * list made that name garbage, and UCX then found no "dprdma0:1"). One
 * struct per (index, GUID) for the life of the process: a daemon restarted
 * with another GUID gets a new one, the old stays valid for contexts that
 * hold it. A handful of small structs at most, never freed.
 */
static pthread_mutex_t devices_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dv_device *devices;       /* a list through ->next */

static struct dv_device *
device_get(unsigned int index, uint64_t guid)
{
	struct dv_device *d;

	for (d = devices; d != NULL; d = d->next)
		if (d->index == index && d->guid == guid)
			return d;
	d = calloc(1, sizeof(*d));
	if (d == NULL)
		return NULL;
	d->index = index;
	d->guid = guid;
	d->dev.node_type = IBV_NODE_CA;
	d->dev.transport_type = IBV_TRANSPORT_IB;
	snprintf(d->dev.name, sizeof(d->dev.name), "dprdma%u", index);
	/* no kernel uverbs device: UCX stats /dev/infiniband/<dev_name>
	 * (dprdmad makes it, [control] dev_nodes) */
	snprintf(d->dev.dev_name, sizeof(d->dev.dev_name), "dprdma%u", index);
	snprintf(d->dev.dev_path, sizeof(d->dev.dev_path),
		 "/sys/class/infiniband_verbs/dprdma%u", index);
	snprintf(d->dev.ibdev_path, sizeof(d->dev.ibdev_path),
		 "/sys/class/infiniband/dprdma%u", index);
	d->next = devices;
	devices = d;
	return d;
}

EXPORT struct ibv_device **
ibv_get_device_list(int *num)
{
	uint64_t guids[DPR_SHM_MAX_DEVICES];
	struct ibv_device **list;
	int n = dprdma_list_devices(guids, DPR_SHM_MAX_DEVICES), i;

	if (n < 0) {
		/* no daemon: no devices, as with no RDMA hardware */
		n = 0;
	}
	list = calloc((size_t)n + 1, sizeof(*list));
	if (list == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&devices_lock);
	for (i = 0; i < n; i++) {
		struct dv_device *d = device_get((unsigned int)i, guids[i]);

		if (d == NULL)
			break;
		list[i] = &d->dev;
	}
	pthread_mutex_unlock(&devices_lock);
	if (num != NULL)
		*num = i;
	return list;
}

EXPORT void
ibv_free_device_list(struct ibv_device **list)
{
	/* the list only: its devices stay (device_get()) */
	free(list);
}

EXPORT const char *
ibv_get_device_name(struct ibv_device *device)
{
	return device->name;
}

EXPORT __be64
ibv_get_device_guid(struct ibv_device *device)
{
	return DV(dv_device, device)->guid;
}

EXPORT int
ibv_get_device_index(struct ibv_device *device)
{
	return (int)DV(dv_device, device)->index;
}

/* ------------------------------------------------------ context */

EXPORT int
ibv_query_device(struct ibv_context *ctx, struct ibv_device_attr *a)
{
	const struct dpr_shm_device *dev = dprdma_device(dv_ctx(ctx)->c);

	memset(a, 0, sizeof(*a));
	snprintf(a->fw_ver, sizeof(a->fw_ver), "%s", dev->fw_ver);
	a->node_guid = dev->node_guid;
	a->sys_image_guid = dev->sys_image_guid;
	a->max_mr_size = dev->max_mr_size;
	a->page_size_cap = 0xfffff000;
	a->vendor_id = dev->vendor_id;
	a->vendor_part_id = dev->vendor_part_id;
	a->hw_ver = dev->hw_ver;
	a->max_qp = (int)dev->max_qp;
	a->max_qp_wr = (int)dev->max_qp_wr;
	/* windows of type 1 and 2B (bound to a QP), as rxe offers them */
	a->device_cap_flags = IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT |
		IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_MEM_WINDOW |
		IBV_DEVICE_MEM_WINDOW_TYPE_2B;
	a->max_sge = (int)dev->max_sge;
	a->max_sge_rd = (int)dev->max_sge;
	a->max_cq = (int)dev->max_cq;
	a->max_cqe = (int)dev->max_cqe;
	a->max_mr = (int)dev->max_mr;
	a->max_mw = (int)dev->max_mr;     /* (windows take MR slots) */
	a->max_pd = (int)dev->max_pd;
	a->max_qp_rd_atom = (int)dev->max_qp_rd_atom;
	a->max_res_rd_atom = (int)(dev->max_qp_rd_atom * dev->max_qp);
	a->max_qp_init_rd_atom = (int)dev->max_qp_rd_atom;
	/* SRQs: the shim's quota per client, its ring and SGE limits */
	a->max_srq = 16;
	a->max_srq_wr = DPR_SHM_MAX_WR;
	a->max_srq_sge = DPR_SHM_MAX_RECV_SGE;
	/* address handles live in the client alone: no table to fill */
	a->max_ah = 1 << 16;
	a->atomic_cap = IBV_ATOMIC_HCA;
	a->max_pkeys = 1;
	a->local_ca_ack_delay = 15;
	a->phys_port_cnt = 1;
	return 0;
}

int
dv_query_device_ex(struct ibv_context *ctx,
		   const struct ibv_query_device_ex_input *in __attribute__((unused)),
		   struct ibv_device_attr_ex *attr, size_t len)
{
	struct ibv_device_attr_ex a;

	memset(&a, 0, sizeof(a));
	ibv_query_device(ctx, &a.orig_attr);
	a.phys_port_cnt_ex = a.orig_attr.phys_port_cnt;
	memcpy(attr, &a, len < sizeof(a) ? len : sizeof(a));
	return 0;
}

int
dv_query_port(struct ibv_context *ctx, uint8_t port, struct ibv_port_attr *attr,
	      size_t len)
{
	struct dpr_shm_port p;
	struct ibv_port_attr a;

	if (port != 1)
		return EINVAL;
	if (dprdma_query_port(dv_ctx(ctx)->c, &p) != 0)
		return EIO;
	memset(&a, 0, sizeof(a));
	a.state = (enum ibv_port_state)p.state;
	a.max_mtu = (enum ibv_mtu)p.max_mtu;
	a.active_mtu = (enum ibv_mtu)p.active_mtu;
	a.gid_tbl_len = (int)p.gid_tbl_len;
	a.port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	a.max_msg_sz = 1u << 31;
	a.pkey_tbl_len = 1;
	a.active_width = 2;             /* 4X */
	a.active_speed = 32;            /* EDR (25 Gb/s lanes): a rate for tools */
	a.phys_state = p.state == IBV_PORT_ACTIVE ? 5 /* LinkUp */ : 3 /* Disabled */;
	a.link_layer = IBV_LINK_LAYER_ETHERNET;
	memcpy(attr, &a, len < sizeof(a) ? len : sizeof(a));
	return 0;
}

#undef ibv_query_port
EXPORT int
ibv_query_port(struct ibv_context *ctx, uint8_t port,
	       struct _compat_ibv_port_attr *attr)
{
	/* the old entry point: callers of it pass the 1.1 layout, which
	 * is the start of today's */
	return dv_query_port(ctx, port, (struct ibv_port_attr *)attr,
			     offsetof(struct ibv_port_attr, link_layer) + 1);
}

int
dv_gid_of(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	struct dpr_shm_port p;

	if (port != 1 || index < 0 || dprdma_query_port(dv_ctx(ctx)->c, &p) != 0 ||
	    (uint32_t)index >= p.gid_tbl_len || (uint32_t)index >= DV_GID_MAX) {
		errno = EINVAL;
		return -1;
	}
	memcpy(gid->raw, p.gid[index].raw, 16);
	return 0;
}

EXPORT int
ibv_query_gid(struct ibv_context *ctx, uint8_t port, int index, union ibv_gid *gid)
{
	return dv_gid_of(ctx, port, index, gid);
}

EXPORT int
_ibv_query_gid_ex(struct ibv_context *ctx, uint32_t port, uint32_t index,
		  struct ibv_gid_entry *e, uint32_t flags __attribute__((unused)),
		  size_t len __attribute__((unused)))
{
	if (port > 255 || dv_gid_of(ctx, (uint8_t)port, (int)index, &e->gid) != 0)
		return EINVAL;
	e->gid_index = index;
	e->port_num = port;
	e->gid_type = IBV_GID_TYPE_ROCE_V2;
	e->ndev_ifindex = 0;
	return 0;
}

EXPORT ssize_t
_ibv_query_gid_table(struct ibv_context *ctx, struct ibv_gid_entry *e,
		     size_t max, uint32_t flags, size_t len)
{
	struct ibv_gid_entry tmp;
	size_t n = 0;

	/* every valid entry, or -EINVAL if they do not all fit (as
	 * libibverbs over the kernel's table) */
	for (uint32_t i = 0; i < DV_GID_MAX; i++) {
		if (_ibv_query_gid_ex(ctx, 1, i, n < max ? &e[n] : &tmp, flags,
				      len) != 0)
			continue;
		if (n == max)
			return -EINVAL;
		n++;
	}
	return (ssize_t)n;
}

EXPORT int ibv_query_gid_type(struct ibv_context *ctx, uint8_t port,
		unsigned int index, enum dv_gid_type_sysfs *type);
int
ibv_query_gid_type(struct ibv_context *ctx, uint8_t port, unsigned int index,
		   enum dv_gid_type_sysfs *type)
{
	union ibv_gid g;

	if (dv_gid_of(ctx, port, (int)index, &g) != 0)
		return -1;
	*type = DV_GID_SYSFS_ROCE_V2;
	return 0;
}

EXPORT int
ibv_query_pkey(struct ibv_context *ctx __attribute__((unused)), uint8_t port,
	       int index, __be16 *pkey)
{
	if (port != 1 || index != 0)
		return -1;
	*pkey = htobe16(0xffff);
	return 0;
}

EXPORT int
ibv_get_pkey_index(struct ibv_context *ctx __attribute__((unused)),
		   uint8_t port, __be16 pkey)
{
	return port == 1 && (be16toh(pkey) & 0x7fff) == 0x7fff ? 0 : -1;
}

/* ------------------------------------------------------ async events */

EXPORT int
ibv_get_async_event(struct ibv_context *ctx, struct ibv_async_event *event)
{
	uint32_t type;
	void *obj;
	int rc;

	memset(event, 0, sizeof(*event));
	rc = dprdma_get_async_event(dv_ctx(ctx)->c, &type, &obj);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	event->event_type = (enum ibv_event_type)type;
	if ((type >= IBV_EVENT_DEVICE_FATAL && type <= IBV_EVENT_SM_CHANGE) ||
	    type == IBV_EVENT_CLIENT_REREGISTER || type == IBV_EVENT_GID_CHANGE)
		event->element.port_num = (int)(uintptr_t)obj;
	else if (type == IBV_EVENT_CQ_ERR)
		event->element.cq = obj;
	else if (type == IBV_EVENT_SRQ_ERR || type == IBV_EVENT_SRQ_LIMIT_REACHED)
		event->element.srq = obj;
	else
		event->element.qp = obj;
	return 0;
}

EXPORT void
ibv_ack_async_event(struct ibv_async_event *event __attribute__((unused)))
{
}

/* ------------------------------------------------------------ strings */

EXPORT const char *
ibv_wc_status_str(enum ibv_wc_status status)
{
	static const char *const s[] = {
		[IBV_WC_SUCCESS] = "success",
		[IBV_WC_LOC_LEN_ERR] = "local length error",
		[IBV_WC_LOC_QP_OP_ERR] = "local QP operation error",
		[IBV_WC_LOC_EEC_OP_ERR] = "local EE context operation error",
		[IBV_WC_LOC_PROT_ERR] = "local protection error",
		[IBV_WC_WR_FLUSH_ERR] = "Work Request Flushed Error",
		[IBV_WC_MW_BIND_ERR] = "memory management operation error",
		[IBV_WC_BAD_RESP_ERR] = "bad response error",
		[IBV_WC_LOC_ACCESS_ERR] = "local access error",
		[IBV_WC_REM_INV_REQ_ERR] = "remote invalid request error",
		[IBV_WC_REM_ACCESS_ERR] = "remote access error",
		[IBV_WC_REM_OP_ERR] = "remote operation error",
		[IBV_WC_RETRY_EXC_ERR] = "transport retry counter exceeded",
		[IBV_WC_RNR_RETRY_EXC_ERR] = "RNR retry counter exceeded",
		[IBV_WC_LOC_RDD_VIOL_ERR] = "local RDD violation error",
		[IBV_WC_REM_INV_RD_REQ_ERR] = "remote invalid RD request",
		[IBV_WC_REM_ABORT_ERR] = "aborted error",
		[IBV_WC_INV_EECN_ERR] = "invalid EE context number",
		[IBV_WC_INV_EEC_STATE_ERR] = "invalid EE context state",
		[IBV_WC_FATAL_ERR] = "fatal error",
		[IBV_WC_RESP_TIMEOUT_ERR] = "response timeout error",
		[IBV_WC_GENERAL_ERR] = "general error",
		[IBV_WC_TM_ERR] = "TM error",
		[IBV_WC_TM_RNDV_INCOMPLETE] = "TM software rendezvous",
	};

	return (unsigned int)status < sizeof(s) / sizeof(s[0]) && s[status] ?
		s[status] : "unknown";
}

EXPORT const char *
ibv_node_type_str(enum ibv_node_type t)
{
	static const char *const s[] = {
		[IBV_NODE_CA] = "InfiniBand channel adapter",
		[IBV_NODE_SWITCH] = "InfiniBand switch",
		[IBV_NODE_ROUTER] = "InfiniBand router",
		[IBV_NODE_RNIC] = "iWARP NIC",
		[IBV_NODE_USNIC] = "usNIC",
		[IBV_NODE_USNIC_UDP] = "usNIC UDP",
		[IBV_NODE_UNSPECIFIED] = "unspecified",
	};

	return (int)t >= 0 && (size_t)t < sizeof(s) / sizeof(s[0]) && s[t] ?
		s[t] : "unknown";
}

EXPORT const char *
ibv_port_state_str(enum ibv_port_state st)
{
	static const char *const s[] = {
		[IBV_PORT_NOP] = "no state change (NOP)",
		[IBV_PORT_DOWN] = "down",
		[IBV_PORT_INIT] = "init",
		[IBV_PORT_ARMED] = "armed",
		[IBV_PORT_ACTIVE] = "active",
		[IBV_PORT_ACTIVE_DEFER] = "active defer",
	};

	return (unsigned int)st < sizeof(s) / sizeof(s[0]) ? s[st] : "unknown";
}

EXPORT const char *
ibv_event_type_str(enum ibv_event_type ev)
{
	static const char *const s[] = {
		[IBV_EVENT_CQ_ERR] = "CQ error",
		[IBV_EVENT_QP_FATAL] = "local work queue catastrophic error",
		[IBV_EVENT_QP_REQ_ERR] = "invalid request local work queue error",
		[IBV_EVENT_QP_ACCESS_ERR] = "local access violation work queue error",
		[IBV_EVENT_COMM_EST] = "communication established",
		[IBV_EVENT_SQ_DRAINED] = "send queue drained",
		[IBV_EVENT_PATH_MIG] = "path migrated",
		[IBV_EVENT_PATH_MIG_ERR] = "path migration request error",
		[IBV_EVENT_DEVICE_FATAL] = "local catastrophic error",
		[IBV_EVENT_PORT_ACTIVE] = "port active",
		[IBV_EVENT_PORT_ERR] = "port error",
		[IBV_EVENT_LID_CHANGE] = "LID change",
		[IBV_EVENT_PKEY_CHANGE] = "P_Key change",
		[IBV_EVENT_SM_CHANGE] = "SM change",
		[IBV_EVENT_SRQ_ERR] = "SRQ catastrophic error",
		[IBV_EVENT_SRQ_LIMIT_REACHED] = "SRQ limit reached",
		[IBV_EVENT_QP_LAST_WQE_REACHED] = "last WQE reached",
		[IBV_EVENT_CLIENT_REREGISTER] = "client reregistration",
		[IBV_EVENT_GID_CHANGE] = "GID table change",
		[IBV_EVENT_WQ_FATAL] = "WQ fatal",
	};

	return (unsigned int)ev < sizeof(s) / sizeof(s[0]) && s[ev] ? s[ev] : "unknown";
}

/* ------------------------------------------------------------- rates */

static const struct {
	enum ibv_rate rate;
	int mult, mbps;
} rates[] = {
	{ IBV_RATE_2_5_GBPS, 1, 2500 }, { IBV_RATE_5_GBPS, 2, 5000 },
	{ IBV_RATE_10_GBPS, 4, 10000 }, { IBV_RATE_20_GBPS, 8, 20000 },
	{ IBV_RATE_30_GBPS, 12, 30000 }, { IBV_RATE_40_GBPS, 16, 40000 },
	{ IBV_RATE_60_GBPS, 24, 60000 }, { IBV_RATE_80_GBPS, 32, 80000 },
	{ IBV_RATE_120_GBPS, 48, 120000 }, { IBV_RATE_14_GBPS, 5, 14062 },
	{ IBV_RATE_56_GBPS, 22, 56250 }, { IBV_RATE_112_GBPS, 45, 112500 },
	{ IBV_RATE_168_GBPS, 67, 168750 }, { IBV_RATE_25_GBPS, 10, 25781 },
	{ IBV_RATE_100_GBPS, 40, 103125 }, { IBV_RATE_200_GBPS, 80, 206250 },
	{ IBV_RATE_300_GBPS, 120, 309375 }, { IBV_RATE_28_GBPS, 11, 28125 },
	{ IBV_RATE_50_GBPS, 20, 53125 }, { IBV_RATE_400_GBPS, 160, 425000 },
	{ IBV_RATE_600_GBPS, 240, 637500 },
};

EXPORT int
ibv_rate_to_mult(enum ibv_rate rate)
{
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].rate == rate)
			return rates[i].mult;
	return -1;
}

EXPORT enum ibv_rate
mult_to_ibv_rate(int mult)
{
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].mult == mult)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

EXPORT int
ibv_rate_to_mbps(enum ibv_rate rate)
{
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].rate == rate)
			return rates[i].mbps;
	return -1;
}

EXPORT enum ibv_rate
mbps_to_ibv_rate(int mbps)
{
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++)
		if (rates[i].mbps == mbps)
			return rates[i].rate;
	return IBV_RATE_MAX;
}

/* --------------------------------------------------------------- fork */

EXPORT int
ibv_fork_init(void)
{
	/* nothing is pinned: there is nothing for fork() to break */
	return 0;
}

EXPORT enum ibv_fork_status
ibv_is_fork_initialized(void)
{
	return IBV_FORK_UNNEEDED;
}

/* libibverbs exports these without declaring them in verbs.h */
EXPORT int ibv_dontfork_range(void *base, size_t size);
EXPORT int ibv_dofork_range(void *base, size_t size);

int
ibv_dontfork_range(void *base __attribute__((unused)), size_t size __attribute__((unused)))
{
	return 0;
}

int
ibv_dofork_range(void *base __attribute__((unused)), size_t size __attribute__((unused)))
{
	return 0;
}
