/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * A client's life in the shim: its connection (adopted from the socket,
 * with the peer's credentials), opening a device (the worker
 * that will serve it, its control page, its event descriptor), the device
 * and port it is told of, and when it goes, for whatever reason, every
 * object it made destroyed in the order that frees it. Quotas: at most
 * [control] max_clients connections; each request handler checks its own
 * per-client quota ([limits] client_*, SHIM_MAX_*).
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include "dpr_cm.h"
#include "dpr_ratelimit.h"
#include "shim_private.h"

static void
fill_port(struct shim_client *c, struct dpr_shm_port *p)
{
	struct dpr_port_info pi;
	unsigned int mtu;

	memset(p, 0, sizeof(*p));
	if (dpr_engine_port_info(c->port, &pi) != 0)
		return;
	p->state = pi.up ? 4 /* IBV_PORT_ACTIVE */ : 1 /* IBV_PORT_DOWN */;
	p->max_mtu = DPR_MTU_4096;
	mtu = dpr_active_mtu(pi.mtu);
	p->active_mtu = mtu >= 4096 ? DPR_MTU_4096 : mtu >= 2048 ? DPR_MTU_2048 :
		mtu >= 1024 ? DPR_MTU_1024 : mtu >= 512 ? DPR_MTU_512 : DPR_MTU_256;
	p->speed_mbps = pi.speed_mbps;
	memcpy(p->mac, pi.mac.addr_bytes, 6);
	/* the port's table (rxe's) */
	for (unsigned int i = 0; i < pi.n_gids; i++)
		memcpy(p->gid[i].raw, pi.gid[i], 16);
	p->gid_tbl_len = pi.n_gids;
}

int
shim_req_open(struct shim_client *c, struct dpr_shm_msg *m, int *in_fd,
	      int *out_fd)
{
	struct dpr_shm_device *d = &m->open_resp.dev;
	const struct dpr_verbs_limits *lim;
	struct dpr_port_info pi;
	unsigned int wi, best = 0;
	struct job j = { .kind = JOB_ATTACH, .c = c };
	void *ctrl;
	int fd, rc;

	if (c->opened)
		return -EBUSY;
	if (m->open.port >= dpr_engine_n_ports())
		return -ENODEV;
	c->port = (uint16_t)m->open.port;
	c->ctx = dpr_engine_verbs(c->port);
	for (wi = 1; wi < dpr_engine_n_workers(); wi++)
		if (shim.load[wi] < shim.load[best])
			best = wi;
	c->worker = best;
	fd = shim_make_shared("dprdma-ctrl", shim_page_round(sizeof(struct dpr_shm_ctrl)), &ctrl);
	if (fd < 0)
		return fd;
	c->ctrl = ctrl;
	rc = shim_job(&j);
	if (rc != 0) {
		close(fd);
		return rc;
	}
	shim.load[best]++;
	c->opened = true;
	if (*in_fd >= 0) {
		/* only an eventfd: writing one never blocks the worker (a
		 * pipe could), and it must stay as the client made it (its
		 * flags are the client's too: no O_NONBLOCK from here) */
		char path[32], target[64];
		ssize_t n;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", *in_fd);
		n = readlink(path, target, sizeof(target) - 1);
		if (n > 0) {
			target[n] = '\0';
			if (strcmp(target, "anon_inode:[eventfd]") == 0) {
				c->async_fd = *in_fd;
				*in_fd = -1;
			}
		}
		if (c->async_fd < 0)
			SHIM_LOG(NOTICE, "client %u: the descriptor sent with open "
				 "is not an eventfd: no async event wake-ups",
				 c->id);
	}
	lim = dpr_verbs_limits(c->ctx);
	dpr_engine_port_info(c->port, &pi);
	memset(&m->open_resp, 0, sizeof(m->open_resp));
	snprintf(d->name, sizeof(d->name), "dprdma%u", c->port);
	d->node_guid = pi.node_guid;
	d->sys_image_guid = d->node_guid;
	d->vendor_id = 0xffffff;        /* rxe's: no vendor-specific paths */
	d->max_qp = RTE_MIN(lim->max_qp, shim.lim.qps);
	d->max_qp_wr = RTE_MIN(lim->max_qp_wr, (uint32_t)DPR_SHM_MAX_WR);
	d->max_sge = DPR_SHM_MAX_SEND_SGE;
	d->max_cq = RTE_MIN(lim->max_cq, shim.lim.cqs);
	d->max_cqe = RTE_MIN(lim->max_cqe, (uint32_t)DPR_SHM_MAX_CQE);
	d->max_mr = RTE_MIN(lim->max_mr, shim.lim.mrs);
	d->max_pd = RTE_MIN(lim->max_pd, shim.lim.pds);
	d->max_qp_rd_atom = lim->max_rd_atomic;
	d->max_inline = RTE_MIN(lim->max_inline, (uint32_t)DPR_SHM_MAX_INLINE);
	d->max_mr_size = lim->max_mr_size;
	d->client_id = c->id;
	d->worker = c->worker;
	snprintf(d->fw_ver, sizeof(d->fw_ver), "dprdma %s", DPR_VERSION);
	fill_port(c, &m->open_resp.port);
	m->open_resp.ctrl_bytes = (uint32_t)shim_page_round(sizeof(struct dpr_shm_ctrl));
	*out_fd = fd;
	SHIM_LOG(INFO, "client %u (pid %d) opened dprdma%u, served by worker %u",
		 c->id, (int)c->pid, c->port, c->worker);
	return 0;
}

/* The devices there are: one per port, by node GUID. */
int
shim_req_list_devices(struct shim_client *c __rte_unused, struct dpr_shm_msg *m,
		      int *in_fd __rte_unused, int *out_fd __rte_unused)
{
	uint16_t pi;

	memset(&m->list_resp, 0, sizeof(m->list_resp));
	for (pi = 0; pi < dpr_engine_n_ports() && pi < DPR_SHM_MAX_DEVICES; pi++) {
		struct dpr_port_info info;

		dpr_engine_port_info(pi, &info);
		m->list_resp.guid[pi] = info.node_guid;
		m->list_resp.n++;
	}
	return 0;
}

int
shim_req_query_port(struct shim_client *c, struct dpr_shm_msg *m,
		    int *in_fd __rte_unused, int *out_fd __rte_unused)
{
	fill_port(c, &m->port_resp);
	return 0;
}

/* The eventfd that wakes the client's worker from a nap (a copy: the
 * socket closes what it sends). */
int
shim_req_get_wake(struct shim_client *c, struct dpr_shm_msg *m __rte_unused,
		  int *in_fd __rte_unused, int *out_fd)
{
	const int fd = dpr_engine_wake_fd(c->worker);

	if (fd < 0)
		return -EOPNOTSUPP;
	*out_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	return *out_fd < 0 ? -errno : 0;
}

/* Everything a client made goes, in the order that frees it: QPs (to ERR
 * first, so that nothing more is placed), windows (they hold their MRs),
 * MRs (invalid before their memory is unmapped), CQs, channels, PDs. */
static void
client_cleanup(struct shim_client *c)
{
	static const uint8_t order[] = { OBJ_QP, OBJ_SRQ, OBJ_MW, OBJ_MR, OBJ_CQ,
					 OBJ_CHANNEL, OBJ_PD };
	unsigned int k;
	uint32_t h;

	for (k = 0; k < RTE_DIM(order); k++)
		for (h = 1; h <= c->obj_hi; h++) {
			if (c->obj[h - 1].type != order[k])
				continue;
			switch (order[k]) {
			case OBJ_QP:
				shim_destroy_qp(c, h);
				break;
			case OBJ_MW:
				shim_dealloc_mw(c, h);
				break;
			case OBJ_MR:
				shim_dereg_mr(c, h);
				break;
			case OBJ_CQ:
				shim_destroy_cq(c, h);
				break;
			case OBJ_SRQ:
				shim_destroy_srq(c, h);
				break;
			case OBJ_CHANNEL:
				shim_destroy_channel(c, h);
				break;
			case OBJ_PD:
				shim_dealloc_pd(c, h);
				break;
			}
		}
	if (c->opened) {
		struct job j = { .kind = JOB_DETACH, .c = c };

		shim_job(&j);
		shim.load[c->worker]--;
	}
	if (c->ctrl != NULL)
		munmap(c->ctrl, shim_page_round(sizeof(*c->ctrl)));
	if (c->async_fd >= 0)
		close(c->async_fd);
}

void
shim_client_close(unsigned int slot, const char *why)
{
	struct shim_client *c = shim.clients[slot];

	if (c->qps_destroyed > SHIM_QP_LOGS)
		SHIM_LOG(INFO, "client %u (pid %d) destroyed %u more QPs: %" PRIu64
			 " send WQEs, %" PRIu64 " receive WQEs", c->id, (int)c->pid,
			 c->qps_destroyed - SHIM_QP_LOGS, c->quiet_send_wqes,
			 c->quiet_recv_wqes);
	SHIM_LOG(INFO, "client %u (pid %d) %s: %u QPs, %u MRs, %u CQs, %u PDs "
		 "released", c->id, (int)c->pid, why, c->n_qp, c->n_mr, c->n_cq,
		 c->n_pd);
	dpr_cm_owner_gone(c);
	client_cleanup(c);
	close(c->fd);
	free(c->obj);
	free(c->qps);
	free(c);
	shim.clients[slot] = NULL;
	shim.st.clients_closed++;
}

int
dpr_shim_adopt(int fd)
{
	struct shim_client *c;
	struct ucred cred;
	socklen_t len = sizeof(cred);
	unsigned int slot;

	for (slot = 0; slot < shim.max_clients && shim.clients[slot] != NULL; slot++)
		;
	if (slot == shim.max_clients) {
		/* tell it why (its first call fails with EUSERS), then hang
		 * up; what it sent already is read first, so that closing
		 * does not reset the connection before it reads the answer */
		struct dpr_shm_msg m = { .magic = DPR_SHM_MAGIC,
					 .version = DPR_SHM_VERSION,
					 .status = -EUSERS };
		char junk[sizeof(m)];
		int rfd;

		static struct dpr_ratelimit rl;
		uint32_t missed;

		if (dpr_ratelimit(&rl, &missed))
			SHIM_LOG(WARNING, "a client refused: %u connections "
				 "already ([control] max_clients)%s",
				 shim.max_clients, missed ? "; more refused, lines "
				 "suppressed (shim/stats quota_refused)" : "");
		shim.st.quota_refused++;        /* counted before it is told */
		while (dpr_shm_recv(fd, junk, sizeof(junk), MSG_DONTWAIT, &rfd,
				    NULL) > 0)
			if (rfd >= 0)
				close(rfd);
		dpr_shm_send(fd, &m, sizeof(m), -1);
		return -EUSERS;
	}
	/* (the QP slot table, which the worker reads, is as large as the
	 * quota: calloc maps it, and only the pages a client uses are ever
	 * touched; the handle table grows, shim_obj_add()) */
	c = calloc(1, sizeof(*c));
	if (c != NULL)
		c->qps = calloc(shim.lim.qps, sizeof(*c->qps));
	if (c == NULL || c->qps == NULL || fcntl(fd, F_SETFL, O_NONBLOCK) != 0) {
		int e = c == NULL || c->qps == NULL ? ENOMEM : errno;

		if (c != NULL)
			free(c->qps);
		free(c);
		return -e;
	}
	c->fd = fd;
	c->async_fd = -1;
	c->id = ++shim.next_id;
	c->uid = (uid_t)-1;
	c->gid = (gid_t)-1;
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
		c->pid = cred.pid;
		c->uid = cred.uid;
		c->gid = cred.gid;
	}
	snprintf(c->comm, sizeof(c->comm), "?");
	{
		char path[40];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", (int)c->pid);
		f = c->pid > 0 ? fopen(path, "re") : NULL;
		if (f != NULL) {
			if (fgets(c->comm, sizeof(c->comm), f) != NULL)
				c->comm[strcspn(c->comm, "\n")] = '\0';
			fclose(f);
		}
	}
	shim.clients[slot] = c;
	shim.st.clients_connected++;
	return 0;
}

unsigned int
dpr_shim_clients(void)
{
	unsigned int i, n = 0;

	for (i = 0; shim.started && i < shim.max_clients; i++)
		n += shim.clients[i] != NULL;
	return n;
}
