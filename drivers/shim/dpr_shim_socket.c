/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The shim's client socket, served by the main lcore: a SOCK_SEQPACKET
 * Unix socket; one datagram one request (lib/shm/dpr_shm.h), checked,
 * dispatched through shim_ops (the table at the bottom) and answered with
 * exactly one datagram; a client that does not speak the protocol is
 * answered EPROTO once per message and kept.
 */

#include <alloca.h>
#include <limits.h>
#include <errno.h>
#include <poll.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

#include "dpr_cm.h"
#include "shim_private.h"

RTE_LOG_REGISTER(shim_logtype, dprdma.drv.shim, INFO);

struct shim_state shim = { .lfd = -1, .lock = PTHREAD_MUTEX_INITIALIZER };

/*
 * What each request op runs: a handler of the whole message (which may
 * take the descriptor sent with it, *in_fd set to -1, and give one back in
 * *out_fd), or the destruction of the object the message's handle names.
 * Every op but OPEN and LIST_DEVICES needs an opened device.
 */
struct shim_op {
	int (*req)(struct shim_client *c, struct dpr_shm_msg *m, int *in_fd,
		   int *out_fd);
	int (*destroy)(struct shim_client *c, uint32_t handle);
	bool before_open;
	bool makes;             /* makes something: refused while draining */
};

static const struct shim_op shim_ops[DPR_SHM_OP_MAX];

/* RDMA CM requests: drivers/cm answers them for this client */
static int
shim_req_cm(struct shim_client *c, struct dpr_shm_msg *m, int *in_fd,
	    int *out_fd __rte_unused)
{
	return dpr_cm_request(c, m, in_fd);
}

static int
send_msg(int fd, const struct dpr_shm_msg *m, int pass_fd)
{
	return dpr_shm_send(fd, m, sizeof(*m), pass_fd) == (ssize_t)sizeof(*m) ? 0 : -1;
}

/* what serve() did */
enum serve_rc {
	SERVE_DONE,     /* a request answered (or refused) */
	SERVE_EMPTY,    /* nothing waiting: the socket said EAGAIN */
	SERVE_GONE,     /* the client is dropped */
};

/* One request of client @p slot, if one waits. */
static enum serve_rc
serve(unsigned int slot)
{
	struct shim_client *c = shim.clients[slot];
	const struct shim_op *op;
	struct dpr_shm_msg m;
	int in_fd = -1, out_fd = -1, rc, mflags = 0;
	ssize_t n;

	n = dpr_shm_recv(c->fd, &m, sizeof(m), MSG_DONTWAIT, &in_fd, &mflags);
	if (n == 0) {
		shim_client_close(slot, "closed its connection");
		return SERVE_GONE;
	}
	if (n < 0) {
		if (errno == EAGAIN)
			return SERVE_EMPTY;
		shim_client_close(slot, strerror(errno));
		return SERVE_GONE;
	}
	shim.st.requests++;
	c->requests++;
	op = n == (ssize_t)sizeof(m) && m.op < DPR_SHM_OP_MAX ? &shim_ops[m.op] : NULL;
	if (op == NULL || (op->req == NULL && op->destroy == NULL) ||
	    (mflags & (MSG_TRUNC | MSG_CTRUNC)) ||
	    m.magic != DPR_SHM_MAGIC || m.version != DPR_SHM_VERSION ||
	    (!c->opened && !op->before_open)) {
		/* not speaking this protocol: answer once, and go on */
		shim.st.bad_messages++;
		if (in_fd >= 0)
			close(in_fd);
		if (n >= (ssize_t)offsetof(struct dpr_shm_msg, status) &&
		    m.magic == DPR_SHM_MAGIC && m.version != DPR_SHM_VERSION)
			SHIM_LOG(NOTICE, "client %u speaks version %u, this "
				 "dprdmad %u: use the matching library",
				 c->id, m.version, DPR_SHM_VERSION);
		memset(&m, 0, sizeof(m));
		m.magic = DPR_SHM_MAGIC;
		m.version = DPR_SHM_VERSION;
		m.status = -EPROTO;
		send_msg(c->fd, &m, -1);
		return SERVE_DONE;
	}
	if (shim.draining && op->makes)
		rc = -EIO;      /* the device is going: as after DEVICE_FATAL */
	else
		rc = op->req != NULL ? op->req(c, &m, &in_fd, &out_fd) :
		     op->destroy(c, m.obj.handle);
	if (in_fd >= 0)
		close(in_fd);
	if (rc != 0) {
		shim.st.refused++;
		c->refused++;
	}
	m.status = rc;
	if (send_msg(c->fd, &m, rc == 0 ? out_fd : -1) != 0) {
		if (out_fd >= 0)
			close(out_fd);
		shim_client_close(slot, "does not take its answers");
		return SERVE_GONE;
	}
	if (out_fd >= 0)
		close(out_fd);
	return SERVE_DONE;
}

static void
accept_one(void)
{
	int fd = accept4(shim.lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);

	if (fd >= 0 && dpr_shim_adopt(fd) != 0)
		close(fd);
}

/*
 * UCX opens only the verbs devices that have a character device at
 * /dev/infiniband/<dev_name> it may read and write (uct_ib's
 * uct_ib_device_is_accessible), as the kernel's uverbs devices do; the
 * drop-in names its devices dprdmaN. So each port gets one: an alias of
 * /dev/null (1:3, mode 0666 as /dev/null), through which nothing is ever
 * done. Made where missing and left in place (other daemons on the box
 * number their ports the same); without root, or where /dev is not
 * writable, a warning says what UCX will not see.
 */
static void
make_dev_nodes(void)
{
	char path[64];

	if (mkdir("/dev/infiniband", 0755) != 0 && errno != EEXIST) {
		SHIM_LOG(WARNING, "cannot make /dev/infiniband (%s): UCX will not "
			 "see dprdma's devices; set [control] dev_nodes = no to "
			 "silence this", strerror(errno));
		return;
	}
	for (uint16_t pi = 0; pi < dpr_engine_n_ports(); pi++) {
		struct stat st;

		snprintf(path, sizeof(path), "/dev/infiniband/dprdma%u", pi);
		if (stat(path, &st) == 0 && S_ISCHR(st.st_mode))
			continue;
		if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) != 0 ||
		    chmod(path, 0666) != 0)
			SHIM_LOG(WARNING, "cannot make %s (%s): UCX will not see "
				 "dprdma%u", path, strerror(errno), pi);
	}
}

int
dpr_shim_start(const struct dpr_config *conf, char *err, size_t errlen)
{
	const struct dpr_shim_conf *sc = dpr_shim_conf(conf);
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	unsigned int wi;
	char dir[108], *slash;
	int fd;

	const struct dpr_limits_conf *lc = dpr_limits_conf(conf);

	shim.lim.qps = lc->client_qps;
	shim.lim.cqs = lc->client_cqs;
	shim.lim.pds = lc->client_pds;
	shim.lim.mrs = lc->client_mrs;
	shim.max_clients = sc->max_clients;
	shim.clients = calloc(shim.max_clients, sizeof(*shim.clients));
	if (shim.clients == NULL)
		return -ENOMEM;
	for (wi = 0; wi < dpr_engine_n_workers(); wi++) {
		shim.wl[wi] = calloc(shim.max_clients, sizeof(*shim.wl[wi]));
		if (shim.wl[wi] == NULL)
			return -ENOMEM;
	}
	snprintf(shim.path, sizeof(shim.path), "%s", sc->socket);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", shim.path);
	/* its folder (/run/dprdma by default) */
	snprintf(dir, sizeof(dir), "%s", shim.path);
	slash = strrchr(dir, '/');
	if (slash != NULL && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
			snprintf(err, errlen, "cannot make the folder %s of the client "
				 "socket: %s; set [control] socket or --socket",
				 dir, strerror(errno));
			return -errno;
		}
	}
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	/* a socket file left by a daemon that died is taken over; one that
	 * answers belongs to a running daemon */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ||
	    errno == EAGAIN) {
		close(fd);
		snprintf(err, errlen, "another dprdmad serves clients on %s: give "
			 "this one its own ([control] socket or --socket)", shim.path);
		return -EADDRINUSE;
	}
	unlink(shim.path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    chmod(shim.path, sc->socket_mode) != 0 ||
	    listen(fd, 64) != 0) {
		int e = errno;

		snprintf(err, errlen, "cannot listen on %s: %s; set [control] "
			 "socket or --socket", shim.path, strerror(e));
		close(fd);
		return -e;
	}
	for (uint16_t pi = 0; pi < dpr_engine_n_ports(); pi++) {
		if (shim_qp_table_init(pi, dpr_verbs_limits(dpr_engine_verbs(pi))->max_qp) != 0) {
			close(fd);
			return -ENOMEM;
		}
		dpr_verbs_set_event_cb(dpr_engine_verbs(pi), shim_verbs_event,
				       (void *)(uintptr_t)pi);
	}
	if (sc->dev_nodes)
		make_dev_nodes();
	shim.lfd = fd;
	shim.started = true;
	return 0;
}

unsigned int
dpr_shim_poll(int timeout_ms)
{
	struct pollfd *pf;
	unsigned int *slots, n = 1, i, served = 0;

	if (!shim.started) {
		poll(NULL, 0, timeout_ms);
		return 0;
	}
	shim_link_watch();
	/* the listening socket, the CM's wake fd, every client */
	pf = alloca((shim.max_clients + 2) * sizeof(*pf));
	slots = alloca((shim.max_clients + 2) * sizeof(*slots));
	pf[0].fd = shim.lfd;
	pf[0].events = POLLIN;
	/* MADs for the CM wake the loop; its timers shorten the wait */
	if (dpr_cm_wake_fd() >= 0) {
		int t = dpr_cm_next_timeout_ms();

		pf[n].fd = dpr_cm_wake_fd();
		pf[n].events = POLLIN;
		slots[n++] = UINT_MAX;
		if (t >= 0 && t < timeout_ms)
			timeout_ms = t;
	}
	for (i = 0; i < shim.max_clients; i++)
		if (shim.clients[i] != NULL) {
			pf[n].fd = shim.clients[i]->fd;
			pf[n].events = POLLIN;
			slots[n++] = i;
		}
	if (poll(pf, n, timeout_ms) <= 0)
		return 0;
	pthread_mutex_lock(&shim.lock);
	for (i = 1; i < n; i++) {
		if (slots[i] == UINT_MAX) {
			/* the CM's: its MADs are dpr_cm_poll()'s */
			if (pf[i].revents & POLLIN)
				dpr_cm_wake_clear();
			continue;
		}
		if (pf[i].revents & POLLIN) {
			served++;
			/* a few requests each, so that no client starves
			 * others; the first EAGAIN ends the client's turn
			 * (it used to take all 16 looks, each a recvmsg():
			 * 9 in 10 of the main loop's system calls while
			 * 10,000 RDMA CM connections were made) */
			for (int k = 0; k < 16 && shim.clients[slots[i]] != NULL; k++)
				if (serve(slots[i]) != SERVE_DONE)
					break;
		} else if (pf[i].revents & (POLLHUP | POLLERR | POLLNVAL)) {
			shim_client_close(slots[i], "went away");
		}
	}
	if (shim.lfd >= 0 && (pf[0].revents & POLLIN))
		accept_one();
	pthread_mutex_unlock(&shim.lock);
	return served;
}

unsigned int
dpr_shim_drain(void)
{
	unsigned int i, n = 0;

	if (!shim.started)
		return 0;
	pthread_mutex_lock(&shim.lock);
	if (!shim.draining) {
		/* no new client; those connected keep their socket, to
		 * destroy what they made and leave */
		close(shim.lfd);
		unlink(shim.path);
		shim.lfd = -1;
		shim.draining = true;
		for (i = 0; i < shim.max_clients; i++)
			n += shim.clients[i] != NULL && shim.clients[i]->opened;
		shim_drain_clients();
		SHIM_LOG(NOTICE, "stopping: %u clients told (DEVICE_FATAL, "
			 "their QPs in ERR, work flushed)", n);
	}
	pthread_mutex_unlock(&shim.lock);
	return dpr_shim_clients();
}

void
dpr_shim_stop(void)
{
	unsigned int i;

	if (!shim.started)
		return;
	pthread_mutex_lock(&shim.lock);
	for (i = 0; i < shim.max_clients; i++)
		if (shim.clients[i] != NULL)
			shim_client_close(i, "dropped: dprdmad stops");
	if (shim.lfd >= 0) {
		close(shim.lfd);
		unlink(shim.path);
	}
	shim.lfd = -1;
	shim.started = false;
	pthread_mutex_unlock(&shim.lock);
}

/* ------------------------------------------------- its configuration */

#define C_OFF(f) offsetof(struct dpr_shim_conf, f)
#define C_SZ(f) sizeof(((struct dpr_shim_conf *)0)->f)

static int
parse_socket(void *area, const char *value, char *why, size_t len)
{
	struct dpr_shim_conf *c = area;

	if (value[0] != '/' || strlen(value) >= sizeof(c->socket)) {
		snprintf(why, len, ": expected an absolute path shorter than %zu "
			 "characters", sizeof(c->socket));
		return -1;
	}
	snprintf(c->socket, sizeof(c->socket), "%s", value);
	return 0;
}

static void
format_socket(const void *area, char *buf, size_t len)
{
	snprintf(buf, len, "%s", ((const struct dpr_shim_conf *)area)->socket);
}

static const char *const no_yes[] = { "no", "yes", NULL };

static const struct dpr_conf_key shim_keys[] = {
	{ "socket", DPR_CONF_CUSTOM, .parse = parse_socket, .format = format_socket,
	  .help = "Unix socket local clients connect to (they read "
		  DPR_SOCKET_ENV ")" },
	{ "socket_mode", DPR_CONF_UINT, C_OFF(socket_mode), C_SZ(socket_mode), 0,
	  0777, .octal = true,
	  .help = "permissions of the client socket (octal with a leading "
		  "0, e.g. 0660: owner and group may connect)" },
	{ "max_clients", DPR_CONF_UINT, C_OFF(max_clients), C_SZ(max_clients), 1,
	  1024, .help = "client connections (device contexts) served at once" },
	{ "dev_nodes", DPR_CONF_ENUM, C_OFF(dev_nodes), C_SZ(dev_nodes),
	  .names = no_yes,
	  .help = "yes: make /dev/infiniband/dprdmaN for each port where "
		  "missing (an alias of /dev/null: UCX uses only devices that "
		  "have one)" },
	{ "shutdown_timeout", DPR_CONF_UINT, C_OFF(shutdown_timeout),
	  C_SZ(shutdown_timeout), 0, 600,
	  .help = "seconds clients get to leave after SIGTERM (their QPs in "
		  "ERR, DEVICE_FATAL raised) before dprdmad drops them and "
		  "exits; a second SIGTERM exits at once" },
};

static void
shim_defaults(void *area, int port __rte_unused)
{
	struct dpr_shim_conf *c = area;

	snprintf(c->socket, sizeof(c->socket), "%s", DPR_DEFAULT_SOCKET);
	c->socket_mode = 0660;
	c->max_clients = 256;
	c->dev_nodes = 1;
	c->shutdown_timeout = 5;
}

static struct dpr_conf_room shim_room = {
	.section = "control",
	.size = sizeof(struct dpr_shim_conf),
	.keys = shim_keys,
	.n_keys = RTE_DIM(shim_keys),
	.defaults = shim_defaults,
};

void
dpr_shim_config_register(void)
{
	dpr_config_register(&shim_room);
}

const struct dpr_shim_conf *
dpr_shim_conf(const struct dpr_config *conf)
{
	return dpr_config_room(conf, &shim_room, 0);
}

/* --------------------------------------------------------- the ops */

static const struct shim_op shim_ops[DPR_SHM_OP_MAX] = {
	[DPR_SHM_OPEN] = { .req = shim_req_open, .before_open = true, .makes = true },
	[DPR_SHM_LIST_DEVICES] = { .req = shim_req_list_devices, .before_open = true },
	[DPR_SHM_QUERY_PORT] = { .req = shim_req_query_port },
	[DPR_SHM_GET_WAKE] = { .req = shim_req_get_wake },
	[DPR_SHM_ALLOC_PD] = { .req = shim_req_alloc_pd, .makes = true },
	[DPR_SHM_DEALLOC_PD] = { .destroy = shim_dealloc_pd },
	[DPR_SHM_REG_MR] = { .req = shim_req_reg_mr, .makes = true },
	[DPR_SHM_DEREG_MR] = { .destroy = shim_dereg_mr },
	[DPR_SHM_ALLOC_MW] = { .req = shim_req_alloc_mw, .makes = true },
	[DPR_SHM_DEALLOC_MW] = { .destroy = shim_dealloc_mw },
	[DPR_SHM_CREATE_CHANNEL] = { .req = shim_req_create_channel, .makes = true },
	[DPR_SHM_DESTROY_CHANNEL] = { .destroy = shim_destroy_channel },
	[DPR_SHM_CREATE_CQ] = { .req = shim_req_create_cq, .makes = true },
	[DPR_SHM_DESTROY_CQ] = { .destroy = shim_destroy_cq },
	[DPR_SHM_CREATE_QP] = { .req = shim_req_create_qp, .makes = true },
	[DPR_SHM_MODIFY_QP] = { .req = shim_req_modify_qp },
	[DPR_SHM_QUERY_QP] = { .req = shim_req_query_qp },
	[DPR_SHM_DESTROY_QP] = { .destroy = shim_destroy_qp },
	[DPR_SHM_CREATE_SRQ] = { .req = shim_req_create_srq, .makes = true },
	[DPR_SHM_MODIFY_SRQ] = { .req = shim_req_modify_srq },
	[DPR_SHM_QUERY_SRQ] = { .req = shim_req_query_srq },
	[DPR_SHM_DESTROY_SRQ] = { .destroy = shim_destroy_srq },
	/* RDMA CM: what starts something is refused while dprdmad drains,
	 * what undoes or ends it still runs */
#define CM_MAKES { .req = shim_req_cm, .before_open = true, .makes = true }
#define CM_ENDS { .req = shim_req_cm, .before_open = true }
	[DPR_SHM_CM_CREATE_CHANNEL] = CM_MAKES,
	[DPR_SHM_CM_DESTROY_CHANNEL] = CM_ENDS,
	[DPR_SHM_CM_CREATE_ID] = CM_MAKES,
	[DPR_SHM_CM_DESTROY_ID] = CM_ENDS,
	[DPR_SHM_CM_MIGRATE_ID ... DPR_SHM_CM_ACCEPT] = CM_MAKES,
	[DPR_SHM_CM_REJECT] = CM_ENDS,
	[DPR_SHM_CM_ESTABLISH] = CM_MAKES,
	[DPR_SHM_CM_DISCONNECT] = CM_ENDS,
#undef CM_MAKES
#undef CM_ENDS
};
