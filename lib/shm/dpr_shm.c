/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "dpr_shm.h"

const char *
dpr_shm_op_name(unsigned int op)
{
	static const char *const names[DPR_SHM_OP_MAX] = {
		[DPR_SHM_OPEN] = "open",
		[DPR_SHM_QUERY_PORT] = "query_port",
		[DPR_SHM_ALLOC_PD] = "alloc_pd",
		[DPR_SHM_DEALLOC_PD] = "dealloc_pd",
		[DPR_SHM_REG_MR] = "reg_mr",
		[DPR_SHM_DEREG_MR] = "dereg_mr",
		[DPR_SHM_ALLOC_MW] = "alloc_mw",
		[DPR_SHM_DEALLOC_MW] = "dealloc_mw",
		[DPR_SHM_CREATE_CHANNEL] = "create_comp_channel",
		[DPR_SHM_DESTROY_CHANNEL] = "destroy_comp_channel",
		[DPR_SHM_CREATE_CQ] = "create_cq",
		[DPR_SHM_DESTROY_CQ] = "destroy_cq",
		[DPR_SHM_CREATE_QP] = "create_qp",
		[DPR_SHM_MODIFY_QP] = "modify_qp",
		[DPR_SHM_QUERY_QP] = "query_qp",
		[DPR_SHM_DESTROY_QP] = "destroy_qp",
		[DPR_SHM_CREATE_SRQ] = "create_srq",
		[DPR_SHM_MODIFY_SRQ] = "modify_srq",
		[DPR_SHM_QUERY_SRQ] = "query_srq",
		[DPR_SHM_DESTROY_SRQ] = "destroy_srq",
		[DPR_SHM_LIST_DEVICES] = "list_devices",
		[DPR_SHM_CM_CREATE_CHANNEL] = "cm_create_event_channel",
		[DPR_SHM_CM_DESTROY_CHANNEL] = "cm_destroy_event_channel",
		[DPR_SHM_CM_CREATE_ID] = "cm_create_id",
		[DPR_SHM_CM_DESTROY_ID] = "cm_destroy_id",
		[DPR_SHM_CM_MIGRATE_ID] = "cm_migrate_id",
		[DPR_SHM_CM_BIND] = "cm_bind_addr",
		[DPR_SHM_CM_RESOLVE_ADDR] = "cm_resolve_addr",
		[DPR_SHM_CM_RESOLVE_ROUTE] = "cm_resolve_route",
		[DPR_SHM_CM_LISTEN] = "cm_listen",
		[DPR_SHM_CM_CONNECT] = "cm_connect",
		[DPR_SHM_CM_ACCEPT] = "cm_accept",
		[DPR_SHM_CM_REJECT] = "cm_reject",
		[DPR_SHM_CM_ESTABLISH] = "cm_establish",
		[DPR_SHM_CM_DISCONNECT] = "cm_disconnect",
	};

	return op < DPR_SHM_OP_MAX && names[op] != NULL ? names[op] : "unknown";
}

ssize_t
dpr_shm_send(int sock, const void *buf, size_t len, int fd)
{
	struct iovec iov = { .iov_base = (void *)(uintptr_t)buf, .iov_len = len };
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	ssize_t n;

	if (fd >= 0) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	do
		n = sendmsg(sock, &mh, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n;
}

ssize_t
dpr_shm_recv(int sock, void *buf, size_t len, int flags, int *fd, int *msg_flags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	union {
		char buf[CMSG_SPACE(4 * sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr mh = {
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
	};
	struct cmsghdr *cm;
	ssize_t n;

	*fd = -1;
	do
		n = recvmsg(sock, &mh, flags | MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return n;
	/* the first descriptor is kept, any others closed */
	for (cm = CMSG_FIRSTHDR(&mh); cm != NULL; cm = CMSG_NXTHDR(&mh, cm)) {
		size_t k, nfd;

		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (k = 0; k < nfd; k++) {
			int f;

			memcpy(&f, CMSG_DATA(cm) + k * sizeof(int), sizeof(int));
			if (*fd < 0)
				*fd = f;
			else
				close(f);
		}
	}
	if (msg_flags != NULL)
		*msg_flags = mh.msg_flags;
	return n;
}
