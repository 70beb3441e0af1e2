/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * libdprdma: the client side of the shim (see dprdma.h for what it
 * promises, lib/shm/dpr_shm.h for the ABI). No DPDK here: a client is an
 * ordinary process.
 */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/socket.h>
#include <sys/un.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "dprdma.h"

#define SHADOW_NAME "dprdma-mem"
#define SHADOW_BYTES (1ull << 47)       /* the whole user address space */

/*
 * The shadow: one memfd for the whole process (file offset = address),
 * made at the first registration of private memory and kept until the
 * process ends. Private pages a registration shares are mapped from it
 * for good, whatever context registered them: a later context that finds
 * them shared must send this same file, or the daemon would map other
 * pages than the program uses (completions for data that landed where the
 * program never looks). Its inode tells it from any other memfd.
 */
static struct {
	pthread_mutex_t lock;
	int fd;                         /* -1 until the first */
	ino_t ino;
} shadow = { PTHREAD_MUTEX_INITIALIZER, -1, 0 };

struct chunk {                          /* dprdma_alloc() memory */
	struct chunk *next;
	uint8_t *addr;
	size_t len;
	int fd;
};

struct dprdma_context {
	int fd;
	uint32_t seq;
	pthread_mutex_t lock;           /* control calls, chunks */
	struct dpr_shm_device dev;
	struct dpr_shm_port port;
	struct dpr_shm_ctrl *ctrl;
	size_t ctrl_bytes;
	struct chunk *chunks;
	int async_fd;                   /* eventfd the daemon counts events on */
	uint32_t ev_cons;
};

struct dprdma_pd {
	struct dprdma_context *ctx;
	uint32_t handle;
};

struct dprdma_mr {
	struct dprdma_context *ctx;
	uint32_t handle, lkey, rkey;
};

struct dprdma_channel {
	struct dprdma_context *ctx;
	uint32_t handle;
	int rfd;
};

struct dprdma_cq {
	struct dprdma_context *ctx;
	struct dprdma_channel *ch;
	uint32_t handle, cqe, size;
	struct dpr_shm_ring *ring;
	size_t map_bytes;
	uint32_t cons;
	pthread_spinlock_t lock;
	struct dprdma_cq *next_in_list;
	void *user;
};

struct dprdma_qp {
	struct dprdma_context *ctx;
	uint32_t handle, qpn, slot;
	uint32_t sq_size, rq_size, sq_prod, rq_prod, sq_pub, rq_pub;
	/* the daemon's consumer indices as last read: read again only when
	 * the ring looks full (the line the daemon writes is not pulled over
	 * on every post) */
	uint32_t sq_cons, rq_cons;
	struct dpr_shm_ring *sq, *rq;
	size_t map_bytes;
	struct dpr_shm_qp_caps cap;
	unsigned int state;
	uint32_t qp_type;               /* ibv_qp_type */
	pthread_spinlock_t lock;
	struct dprdma_qp *next_in_list;
	void *user;
};

struct dprdma_srq {
	struct dprdma_context *ctx;
	uint32_t handle, size, max_sge, prod, pub;
	struct dpr_shm_ring *ring;
	size_t map_bytes;
	pthread_spinlock_t lock;
	struct dprdma_srq *next_in_list;
	void *user;
};

/* CQ, QP and SRQ handles -> objects, for completion channels and events */
static pthread_mutex_t cq_list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dprdma_cq *cq_list;
static struct dprdma_qp *qp_list;
static struct dprdma_srq *srq_list;

/* ------------------------------------------------------- the socket */

static const char *
socket_path(void)
{
	const char *p = getenv(DPR_SHM_SOCKET_ENV);

	return p != NULL && *p != '\0' ? p : DPR_SHM_SOCKET_DEFAULT;
}

static int
connect_daemon(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (path == NULL)
		path = socket_path();
	if (strlen(path) >= sizeof(sa.sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		int e = errno;

		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

/* A daemon that cannot take another client ([control] max_clients) sends
 * one message with the errno and hangs up: the send or the receive of the
 * first call fails, and the refusal waits behind the error. */
static int
refusal(int sfd, struct dpr_shm_msg *m, int rc)
{
	int fd, i;

	for (i = 0; i < 2; i++) {
		ssize_t n = dpr_shm_recv(sfd, m, sizeof(*m), MSG_DONTWAIT, &fd, NULL);

		if (fd >= 0)
			close(fd);
		if (n == (ssize_t)sizeof(*m) && m->magic == DPR_SHM_MAGIC &&
		    m->status < 0)
			return m->status;
		if (n >= 0 || errno != ECONNRESET)
			break;
	}
	return rc;
}

/* One request, one answer. @return the answer's status (0 or -errno). */
static int
call_fd(int sfd, uint32_t *seq, struct dpr_shm_msg *m, int send_fd, int *recv_fd)
{
	uint16_t op = m->op;
	uint32_t s = ++*seq;
	int fd = -1;
	ssize_t n;

	m->magic = DPR_SHM_MAGIC;
	m->version = DPR_SHM_VERSION;
	m->seq = s;
	m->status = 0;
	if (dpr_shm_send(sfd, m, sizeof(*m), send_fd) != (ssize_t)sizeof(*m))
		return refusal(sfd, m, -EPIPE);
	n = dpr_shm_recv(sfd, m, sizeof(*m), 0, &fd, NULL);
	if (n < 0 && errno == ECONNRESET)
		return refusal(sfd, m, -ECONNRESET);
	if (recv_fd != NULL)
		*recv_fd = fd;
	else if (fd >= 0)
		close(fd);
	if (n != (ssize_t)sizeof(*m) || m->magic != DPR_SHM_MAGIC ||
	    m->op != op || m->seq != s)
		return m->status < 0 && n == (ssize_t)sizeof(*m) ? m->status : -EPROTO;
	return m->status;
}

static int
call(struct dprdma_context *ctx, struct dpr_shm_msg *m, int send_fd, int *recv_fd)
{
	int rc;

	pthread_mutex_lock(&ctx->lock);
	rc = call_fd(ctx->fd, &ctx->seq, m, send_fd, recv_fd);
	pthread_mutex_unlock(&ctx->lock);
	return rc;
}

static void *
map_fd(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);

	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* ---------------------------------------------------------- devices */

int
dprdma_list_devices(uint64_t *guids, int max)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_LIST_DEVICES };
	uint32_t seq = 0, i;
	int fd = connect_daemon(NULL), rc;

	if (fd < 0)
		return -errno;
	rc = call_fd(fd, &seq, &m, -1, NULL);
	close(fd);
	if (rc != 0)
		return rc;
	for (i = 0; i < m.list_resp.n && (int)i < max && i < DPR_SHM_MAX_DEVICES; i++)
		guids[i] = m.list_resp.guid[i];
	return (int)i;
}

int
dprdma_connect(void)
{
	return connect_daemon(NULL);
}

int
dprdma_call(int fd, uint32_t *seq, struct dpr_shm_msg *m, int send_fd)
{
	return call_fd(fd, seq, m, send_fd, NULL);
}

struct dprdma_context *
dprdma_open(unsigned int index)
{
	return dprdma_open_at(NULL, index);
}

struct dprdma_context *
dprdma_open_at(const char *socket, unsigned int index)
{
	struct dprdma_context *ctx = calloc(1, sizeof(*ctx));
	struct dpr_shm_msg m = { .op = DPR_SHM_OPEN };
	int cfd = -1, rc;

	if (ctx == NULL)
		return NULL;
	pthread_mutex_init(&ctx->lock, NULL);
	ctx->async_fd = eventfd(0, EFD_CLOEXEC);
	ctx->fd = connect_daemon(socket);
	if (ctx->fd < 0 || ctx->async_fd < 0) {
		rc = -errno;
		goto fail;
	}
	m.open.port = index;
	rc = call(ctx, &m, ctx->async_fd, &cfd);
	if (rc == 0 && cfd < 0)
		rc = -EPROTO;
	if (rc != 0)
		goto fail;
	ctx->dev = m.open_resp.dev;
	ctx->port = m.open_resp.port;
	ctx->ctrl_bytes = m.open_resp.ctrl_bytes;
	ctx->ctrl = map_fd(cfd, ctx->ctrl_bytes);
	if (ctx->ctrl == NULL) {
		rc = -ENOMEM;
		goto fail;
	}
	return ctx;
fail:
	if (ctx->fd >= 0)
		close(ctx->fd);
	if (ctx->async_fd >= 0)
		close(ctx->async_fd);
	free(ctx);
	errno = -rc;
	return NULL;
}

int
dprdma_async_fd(const struct dprdma_context *ctx)
{
	return ctx->async_fd;
}

int
dprdma_get_async_event(struct dprdma_context *ctx, uint32_t *type, void **obj)
{
	for (;;) {
		uint32_t prod = __atomic_load_n(&ctx->ctrl->ev_prod, __ATOMIC_ACQUIRE);
		uint64_t v;

		if (ctx->ev_cons != prod) {
			struct dpr_shm_event e;

			if (prod - ctx->ev_cons > DPR_SHM_EVENTS)
				ctx->ev_cons = prod - DPR_SHM_EVENTS;   /* lost */
			e = ctx->ctrl->ev[ctx->ev_cons % DPR_SHM_EVENTS];
			ctx->ev_cons++;
			*type = e.type;
			*obj = NULL;
			if ((e.type >= 8 && e.type <= 13) || e.type == 17 ||
			    e.type == 18) {
				/* DEVICE_FATAL, PORT_*, LID/PKEY/SM change,
				 * CLIENT_REREGISTER, GID_CHANGE: of the port */
				*obj = (void *)(uintptr_t)e.handle;
				return 0;
			}
			pthread_mutex_lock(&cq_list_lock);
			if (e.type == 0 /* CQ_ERR */) {
				for (struct dprdma_cq *c = cq_list; c; c = c->next_in_list)
					if (c->ctx == ctx && c->handle == e.handle)
						*obj = c->user != NULL ? c->user : c;
			} else if (e.type == 14 || e.type == 15 /* SRQ_ERR, _LIMIT */) {
				for (struct dprdma_srq *s = srq_list; s; s = s->next_in_list)
					if (s->ctx == ctx && s->handle == e.handle)
						*obj = s->user != NULL ? s->user : s;
			} else {
				for (struct dprdma_qp *q = qp_list; q; q = q->next_in_list)
					if (q->ctx == ctx && q->handle == e.handle)
						*obj = q->user != NULL ? q->user : q;
			}
			pthread_mutex_unlock(&cq_list_lock);
			if (*obj != NULL)
				return 0;
			continue;       /* an object already destroyed */
		}
		/* wait (or EAGAIN on a non-blocking fd); a signal ends it with
		 * EINTR, as the kernel's ibv_get_async_event does */
		if (read(ctx->async_fd, &v, sizeof(v)) < 0)
			return errno;
	}
}

int
dprdma_close(struct dprdma_context *ctx)
{
	struct chunk *ch, *next;

	/* the daemon releases whatever is left when the connection goes */
	close(ctx->fd);
	munmap(ctx->ctrl, ctx->ctrl_bytes);
	close(ctx->async_fd);
	for (ch = ctx->chunks; ch != NULL; ch = next) {
		next = ch->next;
		munmap(ch->addr, ch->len);
		close(ch->fd);
		free(ch);
	}
	pthread_mutex_destroy(&ctx->lock);
	free(ctx);
	return 0;
}

const struct dpr_shm_device *
dprdma_device(const struct dprdma_context *ctx)
{
	return &ctx->dev;
}

int
dprdma_query_port(struct dprdma_context *ctx, struct dpr_shm_port *out)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_QUERY_PORT };
	int rc = -call(ctx, &m, -1, NULL);

	if (rc == 0)
		ctx->port = m.port_resp;
	*out = ctx->port;
	return rc;
}

/* --------------------------------------------------------------- PD */

struct dprdma_pd *
dprdma_alloc_pd(struct dprdma_context *ctx)
{
	struct dprdma_pd *pd = calloc(1, sizeof(*pd));
	struct dpr_shm_msg m = { .op = DPR_SHM_ALLOC_PD };
	int rc;

	if (pd == NULL)
		return NULL;
	rc = call(ctx, &m, -1, NULL);
	if (rc != 0) {
		free(pd);
		errno = -rc;
		return NULL;
	}
	pd->ctx = ctx;
	pd->handle = m.obj.handle;
	return pd;
}

static int
destroy_obj(struct dprdma_context *ctx, uint16_t op, uint32_t handle)
{
	struct dpr_shm_msg m = { .op = op };

	m.obj.handle = handle;
	return -call(ctx, &m, -1, NULL);
}

int
dprdma_dealloc_pd(struct dprdma_pd *pd)
{
	int rc = destroy_obj(pd->ctx, DPR_SHM_DEALLOC_PD, pd->handle);

	if (rc == 0)
		free(pd);
	return rc;
}

/* ----------------------------------------------------------- memory */

void *
dprdma_alloc(struct dprdma_context *ctx, size_t len)
{
	const size_t huge = 2u << 20;
	struct chunk *ch = calloc(1, sizeof(*ch));
	int fd;

	if (ch == NULL || len == 0) {
		free(ch);
		errno = EINVAL;
		return NULL;
	}
	/* hugepages when the machine has free ones, else ordinary pages */
	ch->len = (len + huge - 1) & ~(huge - 1);
	fd = memfd_create("dprdma-buf", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_HUGETLB);
	if (fd < 0 || ftruncate(fd, (off_t)ch->len) != 0 ||
	    (ch->addr = mmap(NULL, ch->len, PROT_READ | PROT_WRITE,
			     MAP_SHARED | MAP_POPULATE, fd, 0)) == MAP_FAILED) {
		if (fd >= 0)
			close(fd);
		fd = memfd_create("dprdma-buf", MFD_CLOEXEC | MFD_ALLOW_SEALING);
		if (fd < 0 || ftruncate(fd, (off_t)ch->len) != 0 ||
		    (ch->addr = mmap(NULL, ch->len, PROT_READ | PROT_WRITE,
				     MAP_SHARED, fd, 0)) == MAP_FAILED) {
			if (fd >= 0)
				close(fd);
			free(ch);
			errno = ENOMEM;
			return NULL;
		}
	}
	fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
	ch->fd = fd;
	pthread_mutex_lock(&ctx->lock);
	ch->next = ctx->chunks;
	ctx->chunks = ch;
	pthread_mutex_unlock(&ctx->lock);
	return ch->addr;
}

void
dprdma_free(struct dprdma_context *ctx, void *p)
{
	struct chunk **pp, *ch;

	pthread_mutex_lock(&ctx->lock);
	for (pp = &ctx->chunks; (ch = *pp) != NULL; pp = &ch->next)
		if (ch->addr == p) {
			*pp = ch->next;
			break;
		}
	pthread_mutex_unlock(&ctx->lock);
	if (ch != NULL) {
		/* the daemon keeps its own mapping while MRs use it */
		munmap(ch->addr, ch->len);
		close(ch->fd);
		free(ch);
	}
}

/* A mapping of this process, as /proc/self/maps shows it. */
struct map_ent {
	uintptr_t lo, hi;
	unsigned long off, inode;
	char perms[8];
	char path[400];         /**< leading blanks skipped */
};

/* The mappings [start, end) touches, in address order: read once, a
 * snapshot (make_shadow() changes the file while it works). @return how
 * many (*@p out malloc'd, the caller frees it) or -errno. */
static int
maps_touching(uintptr_t start, uintptr_t end, struct map_ent **out)
{
	struct map_ent *v = NULL, e;
	char line[512], dev[16];
	int n = 0, cap = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (f == NULL)
		return -errno;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long lo, hi;
		const char *p;

		e.path[0] = '\0';
		if (sscanf(line, "%lx-%lx %7s %lx %15s %lu %399[^\n]", &lo, &hi,
			   e.perms, &e.off, dev, &e.inode, e.path) < 6 ||
		    hi <= start || lo >= end)
			continue;
		for (p = e.path; *p == ' '; p++)
			;
		memmove(e.path, p, strlen(p) + 1);
		e.lo = lo;
		e.hi = hi;
		if (n == cap) {
			struct map_ent *w = realloc(v, (size_t)(cap = cap ? 2 * cap : 4) *
						    sizeof(*v));

			if (w == NULL) {
				free(v);
				fclose(f);
				return -ENOMEM;
			}
			v = w;
		}
		v[n++] = e;
	}
	fclose(f);
	*out = v;
	return n;
}

/* The process's shadow file, made at the first call. @return its fd or
 * -errno. Called with shadow.lock held. */
static int
shadow_file(void)
{
	struct stat st;
	int fd;

	if (shadow.fd >= 0)
		return shadow.fd;
	fd = memfd_create(SHADOW_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)SHADOW_BYTES) != 0 ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0 ||
	    fstat(fd, &st) != 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	shadow.ino = st.st_ino;
	shadow.fd = fd;
	return fd;
}

/*
 * Make [start, end) (whole pages) shared with the daemon, at the same
 * addresses: pages of the shadow file are mapped over private anonymous
 * memory after a copy of what it holds (file offset = address, so that
 * every page has one place and overlapping registrations agree). @p maps:
 * the @p n mappings the range touches. Called with shadow.lock held.
 * @return 0 or -errno.
 */
static int
make_shadow(const struct map_ent *maps, int n, uintptr_t start, uintptr_t end)
{
	uintptr_t at = start;
	int i, fd;

	/* every page mapped: ibv_reg_mr fails with EFAULT otherwise */
	for (i = 0; i < n && maps[i].lo <= at; i++)
		at = maps[i].hi;
	if (at < end)
		return -EFAULT;
	fd = shadow_file();
	if (fd < 0)
		return fd;
	for (i = 0; i < n; i++) {
		const struct map_ent *e = &maps[i];
		uintptr_t a = e->lo > start ? e->lo : start;
		uintptr_t b = e->hi < end ? e->hi : end;

		if (strncmp(e->path, "/memfd:" SHADOW_NAME, 7 + strlen(SHADOW_NAME)) == 0 &&
		    e->perms[3] == 's' && e->off == e->lo && e->inode == shadow.ino)
			continue;       /* ours already */
		if (strncmp(e->path, "/memfd:dprdma-buf", 17) == 0)
			return -EFAULT; /* a freed dprdma_alloc() chunk? */
		if (e->perms[3] != 'p' || (e->inode != 0 && e->path[0] == '/') ||
		    e->perms[0] != 'r')
			/* a file or shared mapping: remapping it would change
			 * what the program sees */
			return -EOPNOTSUPP;
		if (e->perms[1] != 'w')
			return -EACCES;
		if (pwrite(fd, (void *)a, b - a, (off_t)a) != (ssize_t)(b - a) ||
		    mmap((void *)a, b - a, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, (off_t)a) == MAP_FAILED)
			return -errno;
	}
	return 0;
}

/* Is [start, end) inside one System V shared memory mapping? Then its id
 * (+1) and the offset of start in the segment. */
static bool
sysv_segment(const struct map_ent *maps, int n, uintptr_t start, uintptr_t end,
	     uint32_t *sysv, uint64_t *off)
{
	if (n != 1 || maps[0].lo > start || end > maps[0].hi ||
	    maps[0].perms[3] != 's' || strncmp(maps[0].path, "/SYSV", 5) != 0 ||
	    maps[0].inode >= INT32_MAX)
		return false;
	*sysv = (uint32_t)maps[0].inode + 1;    /* the shmid */
	*off = maps[0].off + (start - maps[0].lo);
	return true;
}

struct dprdma_mr *
dprdma_reg_mr(struct dprdma_pd *pd, void *addr, size_t len, uint64_t iova,
	      unsigned int access)
{
	struct dprdma_context *ctx = pd->ctx;
	const uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)addr, start, end;
	struct dpr_shm_msg m = { .op = DPR_SHM_REG_MR };
	struct map_ent *maps = NULL;
	struct dprdma_mr *mr;
	struct chunk *ch;
	int fd = -1, rc;

	if (addr == NULL || len == 0 || a + len < a) {
		errno = EINVAL;
		return NULL;
	}
	mr = calloc(1, sizeof(*mr));
	if (mr == NULL)
		return NULL;
	start = a & ~(pg - 1);
	end = (a + len + pg - 1) & ~(pg - 1);
	m.reg_mr.pd = pd->handle;
	m.reg_mr.access = access;
	m.reg_mr.iova = iova;
	m.reg_mr.length = len;
	m.reg_mr.map_bytes = end - start;
	m.reg_mr.addr_off = a - start;
	pthread_mutex_lock(&ctx->lock);
	for (ch = ctx->chunks; ch != NULL; ch = ch->next)
		if (a >= (uintptr_t)ch->addr && a + len <= (uintptr_t)ch->addr + ch->len)
			break;
	if (ch != NULL) {
		/* already shared: no copy, no remap */
		fd = ch->fd;
		m.reg_mr.offset = start - (uintptr_t)ch->addr;
		if (end > (uintptr_t)ch->addr + ch->len)
			m.reg_mr.map_bytes = (uintptr_t)ch->addr + ch->len - start;
		rc = 0;
	} else if ((rc = maps_touching(start, end, &maps)) >= 0) {
		int n = rc;

		if (sysv_segment(maps, n, start, end, &m.reg_mr.sysv,
				 &m.reg_mr.offset)) {
			/* a System V segment: the daemon attaches it too */
			fd = -1;
			rc = 0;
		} else {
			pthread_mutex_lock(&shadow.lock);
			rc = make_shadow(maps, n, start, end);
			fd = shadow.fd;
			pthread_mutex_unlock(&shadow.lock);
			m.reg_mr.offset = start;
		}
		free(maps);
	}
	if (rc == 0)
		rc = call_fd(ctx->fd, &ctx->seq, &m, fd, NULL);
	pthread_mutex_unlock(&ctx->lock);
	if (rc != 0) {
		free(mr);
		errno = -rc;
		return NULL;
	}
	mr->ctx = ctx;
	mr->handle = m.reg_mr_resp.handle;
	mr->lkey = m.reg_mr_resp.lkey;
	mr->rkey = m.reg_mr_resp.rkey;
	return mr;
}

int
dprdma_dereg_mr(struct dprdma_mr *mr)
{
	int rc = destroy_obj(mr->ctx, DPR_SHM_DEREG_MR, mr->handle);

	if (rc == 0)
		free(mr);
	return rc;
}

uint32_t
dprdma_mr_lkey(const struct dprdma_mr *mr)
{
	return mr->lkey;
}

uint32_t
dprdma_mr_rkey(const struct dprdma_mr *mr)
{
	return mr->rkey;
}

/* ---------------------------------------------------------- channels */

struct dprdma_channel *
dprdma_create_channel(struct dprdma_context *ctx)
{
	struct dprdma_channel *ch = calloc(1, sizeof(*ch));
	struct dpr_shm_msg m = { .op = DPR_SHM_CREATE_CHANNEL };
	int p[2], rc;

	if (ch == NULL)
		return NULL;
	if (pipe2(p, O_CLOEXEC) != 0) {
		free(ch);
		return NULL;
	}
	rc = call(ctx, &m, p[1], NULL);
	close(p[1]);
	if (rc != 0) {
		close(p[0]);
		free(ch);
		errno = -rc;
		return NULL;
	}
	ch->ctx = ctx;
	ch->handle = m.obj.handle;
	ch->rfd = p[0];
	return ch;
}

int
dprdma_destroy_channel(struct dprdma_channel *ch)
{
	int rc = destroy_obj(ch->ctx, DPR_SHM_DESTROY_CHANNEL, ch->handle);

	if (rc == 0) {
		close(ch->rfd);
		free(ch);
	}
	return rc;
}

int
dprdma_channel_fd(const struct dprdma_channel *ch)
{
	return ch->rfd;
}

struct dprdma_cq *
dprdma_get_cq_event(struct dprdma_channel *ch)
{
	struct dprdma_cq *cq;
	uint32_t h;
	ssize_t n;

	/* No retry on EINTR: as with the kernel's uverbs, a signal ends the
	 * wait (-1, EINTR). Programs such as qperf stop their latency loops
	 * from a SIGALRM handler and rely on it; resuming the read hung the
	 * side whose peer had stopped sending first. */
	n = read(ch->rfd, &h, sizeof(h));
	if (n != sizeof(h)) {
		if (n >= 0)
			errno = EIO;
		return NULL;
	}
	pthread_mutex_lock(&cq_list_lock);
	for (cq = cq_list; cq != NULL; cq = cq->next_in_list)
		if (cq->ch == ch && cq->handle == h)
			break;
	pthread_mutex_unlock(&cq_list_lock);
	if (cq == NULL)
		errno = ENOENT;
	return cq;
}

/* --------------------------------------------------------------- CQ */

struct dprdma_cq *
dprdma_create_cq(struct dprdma_context *ctx, int cqe, struct dprdma_channel *ch)
{
	struct dprdma_cq *cq = calloc(1, sizeof(*cq));
	struct dpr_shm_msg m = { .op = DPR_SHM_CREATE_CQ };
	int fd = -1, rc;

	if (cq == NULL)
		return NULL;
	if (cqe <= 0) {
		free(cq);
		errno = EINVAL;
		return NULL;
	}
	m.create_cq.cqe = (uint32_t)cqe;
	m.create_cq.channel = ch != NULL ? (int32_t)ch->handle : -1;
	rc = call(ctx, &m, -1, &fd);
	if (rc == 0 && fd < 0)
		rc = -EPROTO;
	if (rc != 0) {
		free(cq);
		errno = -rc;
		return NULL;
	}
	cq->ctx = ctx;
	cq->ch = ch;
	cq->handle = m.create_cq_resp.handle;
	cq->cqe = m.create_cq_resp.cqe;
	cq->size = m.create_cq_resp.size;
	cq->map_bytes = m.create_cq_resp.map_bytes;
	cq->ring = map_fd(fd, cq->map_bytes);
	if (cq->ring == NULL) {
		destroy_obj(ctx, DPR_SHM_DESTROY_CQ, cq->handle);
		free(cq);
		errno = ENOMEM;
		return NULL;
	}
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	pthread_mutex_lock(&cq_list_lock);
	cq->next_in_list = cq_list;
	cq_list = cq;
	pthread_mutex_unlock(&cq_list_lock);
	return cq;
}

int
dprdma_destroy_cq(struct dprdma_cq *cq)
{
	struct dprdma_cq **pp;
	int rc = destroy_obj(cq->ctx, DPR_SHM_DESTROY_CQ, cq->handle);

	if (rc != 0)
		return rc;
	pthread_mutex_lock(&cq_list_lock);
	for (pp = &cq_list; *pp != NULL; pp = &(*pp)->next_in_list)
		if (*pp == cq) {
			*pp = cq->next_in_list;
			break;
		}
	pthread_mutex_unlock(&cq_list_lock);
	munmap(cq->ring, cq->map_bytes);
	pthread_spin_destroy(&cq->lock);
	free(cq);
	return 0;
}

void
dprdma_cq_set_user(struct dprdma_cq *cq, void *user)
{
	cq->user = user;
}

void *
dprdma_cq_user(const struct dprdma_cq *cq)
{
	return cq->user;
}

int
dprdma_cq_size(const struct dprdma_cq *cq)
{
	return (int)cq->cqe;
}

int
dprdma_poll_cq(struct dprdma_cq *cq, int n, dprdma_wc *wc)
{
	uint32_t prod;
	int i = 0;

	pthread_spin_lock(&cq->lock);
	prod = __atomic_load_n(&cq->ring->prod, __ATOMIC_ACQUIRE);
	while (i < n && cq->cons != prod) {
		wc[i++] = *(const dprdma_wc *)dpr_shm_ring_entry(cq->ring,
				sizeof(*wc), cq->size - 1, cq->cons);
		cq->cons++;
	}
	if (i != 0)
		__atomic_store_n(&cq->ring->cons, cq->cons, __ATOMIC_RELEASE);
	pthread_spin_unlock(&cq->lock);
	if (i == 0 && __atomic_load_n(&cq->ring->overflow, __ATOMIC_ACQUIRE))
		return -EIO;
	return i;
}

int
dprdma_req_notify_cq(struct dprdma_cq *cq, int solicited_only)
{
	if (cq->ch == NULL)
		return EINVAL;
	/* the fence orders this store before the loads of prod in the
	 * ibv_poll_cq that follows (the daemon fences the other way) */
	__atomic_store_n(&cq->ring->armed, solicited_only ? 2 : 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 0;
}

/* --------------------------------------------------------------- QP */

struct dprdma_qp *
dprdma_create_qp(struct dprdma_pd *pd, struct dprdma_qp_init *init)
{
	struct dprdma_context *ctx = pd->ctx;
	struct dprdma_qp *qp = calloc(1, sizeof(*qp));
	struct dpr_shm_msg m = { .op = DPR_SHM_CREATE_QP };
	uint8_t *base;
	int fd = -1, rc;

	if (qp == NULL)
		return NULL;
	if (init->send_cq == NULL || init->recv_cq == NULL) {
		free(qp);
		errno = EINVAL;
		return NULL;
	}
	m.create_qp.pd = pd->handle;
	m.create_qp.send_cq = init->send_cq->handle;
	m.create_qp.recv_cq = init->recv_cq->handle;
	m.create_qp.qp_type = init->qp_type;
	m.create_qp.srq = init->srq != NULL ? init->srq->handle : 0;
	m.create_qp.sq_sig_all = init->sq_sig_all != 0;
	m.create_qp.cap = init->cap;
	rc = call(ctx, &m, -1, &fd);
	if (rc == 0 && fd < 0)
		rc = -EPROTO;
	if (rc != 0) {
		free(qp);
		errno = -rc;
		return NULL;
	}
	qp->ctx = ctx;
	qp->handle = m.create_qp_resp.handle;
	qp->qpn = m.create_qp_resp.qpn;
	qp->slot = m.create_qp_resp.slot;
	qp->sq_size = m.create_qp_resp.sq_size;
	qp->rq_size = m.create_qp_resp.rq_size;
	qp->cap = m.create_qp_resp.cap;
	qp->qp_type = init->qp_type;
	qp->map_bytes = m.create_qp_resp.map_bytes;
	base = map_fd(fd, qp->map_bytes);
	if (base == NULL || qp->slot >= DPR_SHM_MAX_QPS ||
	    m.create_qp_resp.rq_offset >= qp->map_bytes) {
		if (base != NULL)
			munmap(base, qp->map_bytes);
		destroy_obj(ctx, DPR_SHM_DESTROY_QP, qp->handle);
		free(qp);
		errno = ENOMEM;
		return NULL;
	}
	qp->sq = (struct dpr_shm_ring *)base;
	qp->rq = (struct dpr_shm_ring *)(base + m.create_qp_resp.rq_offset);
	qp->state = 0;  /* RESET */
	pthread_spin_init(&qp->lock, PTHREAD_PROCESS_PRIVATE);
	pthread_mutex_lock(&cq_list_lock);
	qp->next_in_list = qp_list;
	qp_list = qp;
	pthread_mutex_unlock(&cq_list_lock);
	return qp;
}

int
dprdma_destroy_qp(struct dprdma_qp *qp)
{
	int rc = destroy_obj(qp->ctx, DPR_SHM_DESTROY_QP, qp->handle);
	struct dprdma_qp **pp;

	if (rc != 0)
		return rc;
	pthread_mutex_lock(&cq_list_lock);
	for (pp = &qp_list; *pp != NULL; pp = &(*pp)->next_in_list)
		if (*pp == qp) {
			*pp = qp->next_in_list;
			break;
		}
	pthread_mutex_unlock(&cq_list_lock);
	munmap(qp->sq, qp->map_bytes);
	pthread_spin_destroy(&qp->lock);
	free(qp);
	return 0;
}

void
dprdma_qp_set_user(struct dprdma_qp *qp, void *user)
{
	qp->user = user;
}

uint32_t
dprdma_qp_num(const struct dprdma_qp *qp)
{
	return qp->qpn;
}

const struct dpr_shm_qp_caps *
dprdma_qp_caps(const struct dprdma_qp *qp)
{
	return &qp->cap;
}

unsigned int
dprdma_qp_state(const struct dprdma_qp *qp)
{
	return __atomic_load_n(&qp->state, __ATOMIC_ACQUIRE);
}

int
dprdma_modify_qp(struct dprdma_qp *qp, const struct dpr_shm_qp_attr *attr,
		 unsigned int mask)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_MODIFY_QP };
	int rc;

	m.modify_qp.handle = qp->handle;
	m.modify_qp.mask = mask;
	m.modify_qp.attr = *attr;
	rc = call(qp->ctx, &m, -1, NULL);
	if (rc == 0 && (mask & 1 /* IBV_QP_STATE */))
		__atomic_store_n(&qp->state, attr->qp_state, __ATOMIC_RELEASE);
	return -rc;
}

int
dprdma_query_qp(struct dprdma_qp *qp, struct dpr_shm_qp_attr *attr,
		struct dpr_shm_qp_caps *cap)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_QUERY_QP };
	int rc;

	m.obj.handle = qp->handle;
	rc = call(qp->ctx, &m, -1, NULL);
	if (rc != 0)
		return -rc;
	*attr = m.query_qp_resp.attr;
	if (cap != NULL)
		*cap = m.query_qp_resp.cap;
	/* the transport may have moved it (to ERR) */
	__atomic_store_n(&qp->state, attr->qp_state, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Ring lines this core is about to write, asked for with intent to write
 * (PREFETCHW) so that their transfer from the worker's core, which read
 * them a lap ago, overlaps the posts before them. A post's stores to a
 * line the worker's core holds each wait for that line (a transfer
 * between the cores), and the next post's lock waits for them: perf put
 * 85% of a client posting 64 B WRITEs in pthread_spin_lock, the shim at
 * 0.5-0.6 of the built-in client. Whether the CPU has the instruction is
 * asked at run time (CPUID PRFCHW): the library is built for the
 * baseline ISA, and older CPUs lack it.
 */
#if defined(__x86_64__) || defined(__i386__)
static bool have_prefetchw;

__attribute__((constructor)) static void
probe_prefetchw(void)
{
	unsigned int a, b, c, d;

	have_prefetchw = __get_cpuid(0x80000001u, &a, &b, &c, &d) && (c & bit_PRFCHW);
}

static inline void
prefetch_for_write(const void *p)
{
	if (have_prefetchw)
		__asm__ volatile("prefetchw %0" : : "m"(*(const char *)p));
}
#else
static inline void
prefetch_for_write(const void *p)
{
	__builtin_prefetch(p, 1, 3);
}
#endif

/* Entries asked for ahead of the producer (PREFETCHW) */
#define RING_WRITE_AHEAD 8

void
dprdma_post_begin(struct dprdma_qp *qp)
{
	pthread_spin_lock(&qp->lock);
}

struct dpr_shm_swqe *
dprdma_sq_next(struct dprdma_qp *qp)
{
	struct dpr_shm_swqe *w;

	if (qp->sq_prod - qp->sq_cons >= qp->sq_size) {
		qp->sq_cons = __atomic_load_n(&qp->sq->cons, __ATOMIC_ACQUIRE);
		if (qp->sq_prod - qp->sq_cons >= qp->sq_size)
			return NULL;
	}
	/* the producer's line, on a post's first send entry: the worker
	 * takes it each round */
	if (qp->sq_prod == qp->sq_pub)
		prefetch_for_write(&qp->sq->prod);
	w = dpr_shm_ring_entry(qp->sq, sizeof(*w), qp->sq_size - 1, qp->sq_prod);
	qp->sq_prod++;
	/* (a one-SGE request is its entry's first line) */
	prefetch_for_write(dpr_shm_ring_entry(qp->sq, sizeof(*w), qp->sq_size - 1,
					      qp->sq_prod + RING_WRITE_AHEAD));
	return w;
}

struct dpr_shm_rwqe *
dprdma_rq_next(struct dprdma_qp *qp)
{
	struct dpr_shm_rwqe *w;

	if (qp->rq_prod - qp->rq_cons >= qp->rq_size) {
		qp->rq_cons = __atomic_load_n(&qp->rq->cons, __ATOMIC_ACQUIRE);
		if (qp->rq_prod - qp->rq_cons >= qp->rq_size)
			return NULL;
	}
	w = dpr_shm_ring_entry(qp->rq, sizeof(*w), qp->rq_size - 1, qp->rq_prod);
	qp->rq_prod++;
	prefetch_for_write(dpr_shm_ring_entry(qp->rq, sizeof(*w), qp->rq_size - 1,
					      qp->rq_prod + RING_WRITE_AHEAD));
	return w;
}

void
dprdma_post_end(struct dprdma_qp *qp)
{
	bool rang = false;

	if (qp->sq_prod != qp->sq_pub) {
		__atomic_store_n(&qp->sq->prod, qp->sq_prod, __ATOMIC_RELEASE);
		qp->sq_pub = qp->sq_prod;
		rang = true;
	}
	if (qp->rq_prod != qp->rq_pub) {
		__atomic_store_n(&qp->rq->prod, qp->rq_prod, __ATOMIC_RELEASE);
		qp->rq_pub = qp->rq_prod;
		rang = true;
	}
	/* the doorbell only while the worker does not look at the rings
	 * every round (lib/shm/dpr_shm.h, Doorbells; no fence before the
	 * read of idle: the worker's grace and sweep cover its reordering
	 * before the producers' stores) */
	if (rang && __atomic_load_n(&qp->sq->idle, __ATOMIC_ACQUIRE) != 0)
		__atomic_fetch_or(&qp->ctx->ctrl->doorbell[qp->slot / 64],
				  1ull << (qp->slot % 64), __ATOMIC_RELEASE);
	pthread_spin_unlock(&qp->lock);
}

void
dprdma_post_abort(struct dprdma_qp *qp)
{
	qp->sq_prod = qp->sq_pub;
	qp->rq_prod = qp->rq_pub;
	pthread_spin_unlock(&qp->lock);
}

/* ibv values, as the ABI carries them */
enum { WR_SEND = 2, WR_SEND_WITH_IMM = 3, WR_RDMA_READ = 4,
       WR_ATOMIC_CMP_AND_SWP = 5, WR_ATOMIC_FETCH_AND_ADD = 6 };
enum { QPT_UC = 3, QPT_UD = 4 };
#define SEND_INLINE 8u

uint32_t
dprdma_qp_type(const struct dprdma_qp *qp)
{
	return qp->qp_type;
}

int
dprdma_check_send(const struct dprdma_qp *qp, uint32_t opcode, uint32_t flags,
		  uint64_t count)
{
	if (opcode > WR_ATOMIC_FETCH_AND_ADD)
		return EINVAL;
	/* a datagram service carries SENDs only (IBA 9.8.1) */
	if (qp->qp_type == QPT_UD && opcode != WR_SEND && opcode != WR_SEND_WITH_IMM)
		return EINVAL;
	/* UC: SENDs and WRITEs (IBA 9.8.2) */
	if (qp->qp_type == QPT_UC && opcode >= WR_RDMA_READ)
		return EINVAL;
	if (flags & SEND_INLINE)
		return count > qp->cap.max_inline_data || opcode == WR_RDMA_READ ||
		       opcode == WR_ATOMIC_CMP_AND_SWP ||
		       opcode == WR_ATOMIC_FETCH_AND_ADD ? EINVAL : 0;
	return count > qp->cap.max_send_sge ? EINVAL : 0;
}

int
dprdma_check_swqe(const struct dprdma_qp *qp, const struct dpr_shm_swqe *w)
{
	return dprdma_check_send(qp, w->opcode, w->send_flags, w->num_sge);
}

/* --------------------------------------------------------------- SRQ */

struct dprdma_srq *
dprdma_create_srq(struct dprdma_pd *pd, uint32_t max_wr, uint32_t max_sge,
		  uint32_t limit)
{
	struct dprdma_context *ctx = pd->ctx;
	struct dprdma_srq *srq = calloc(1, sizeof(*srq));
	struct dpr_shm_msg m = { .op = DPR_SHM_CREATE_SRQ };
	int fd = -1, rc;

	if (srq == NULL)
		return NULL;
	m.create_srq.pd = pd->handle;
	m.create_srq.max_wr = max_wr;
	m.create_srq.max_sge = max_sge;
	m.create_srq.limit = limit;
	rc = call(ctx, &m, -1, &fd);
	if (rc == 0 && fd < 0)
		rc = -EPROTO;
	if (rc != 0) {
		free(srq);
		errno = -rc;
		return NULL;
	}
	srq->ctx = ctx;
	srq->handle = m.create_srq_resp.handle;
	srq->size = m.create_srq_resp.size;
	srq->max_sge = m.create_srq_resp.max_sge;
	srq->map_bytes = m.create_srq_resp.map_bytes;
	srq->ring = map_fd(fd, srq->map_bytes);
	if (srq->ring == NULL || srq->size == 0 || (srq->size & (srq->size - 1))) {
		if (srq->ring != NULL)
			munmap(srq->ring, srq->map_bytes);
		destroy_obj(ctx, DPR_SHM_DESTROY_SRQ, srq->handle);
		free(srq);
		errno = ENOMEM;
		return NULL;
	}
	pthread_spin_init(&srq->lock, PTHREAD_PROCESS_PRIVATE);
	pthread_mutex_lock(&cq_list_lock);
	srq->next_in_list = srq_list;
	srq_list = srq;
	pthread_mutex_unlock(&cq_list_lock);
	return srq;
}

int
dprdma_destroy_srq(struct dprdma_srq *srq)
{
	struct dprdma_srq **pp;
	int rc = destroy_obj(srq->ctx, DPR_SHM_DESTROY_SRQ, srq->handle);

	if (rc != 0)
		return rc;
	pthread_mutex_lock(&cq_list_lock);
	for (pp = &srq_list; *pp != NULL; pp = &(*pp)->next_in_list)
		if (*pp == srq) {
			*pp = srq->next_in_list;
			break;
		}
	pthread_mutex_unlock(&cq_list_lock);
	munmap(srq->ring, srq->map_bytes);
	pthread_spin_destroy(&srq->lock);
	free(srq);
	return 0;
}

int
dprdma_modify_srq(struct dprdma_srq *srq, unsigned int mask, uint32_t max_wr,
		  uint32_t limit)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_MODIFY_SRQ };

	m.modify_srq.handle = srq->handle;
	m.modify_srq.mask = mask;
	m.modify_srq.max_wr = max_wr;
	m.modify_srq.limit = limit;
	return -call(srq->ctx, &m, -1, NULL);
}

int
dprdma_query_srq(struct dprdma_srq *srq, uint32_t *max_wr, uint32_t *max_sge,
		 uint32_t *limit)
{
	struct dpr_shm_msg m = { .op = DPR_SHM_QUERY_SRQ };
	int rc;

	m.obj.handle = srq->handle;
	rc = call(srq->ctx, &m, -1, NULL);
	if (rc != 0)
		return -rc;
	*max_wr = m.query_srq_resp.max_wr;
	*max_sge = m.query_srq_resp.max_sge;
	*limit = m.query_srq_resp.limit;
	return 0;
}

void
dprdma_srq_set_user(struct dprdma_srq *srq, void *user)
{
	srq->user = user;
}

uint32_t
dprdma_srq_max_sge(const struct dprdma_srq *srq)
{
	return srq->max_sge;
}

void
dprdma_srq_post_begin(struct dprdma_srq *srq)
{
	pthread_spin_lock(&srq->lock);
}

struct dpr_shm_rwqe *
dprdma_srq_next(struct dprdma_srq *srq)
{
	uint32_t cons = __atomic_load_n(&srq->ring->cons, __ATOMIC_ACQUIRE);
	struct dpr_shm_rwqe *w;

	if (srq->prod - cons >= srq->size)
		return NULL;
	w = dpr_shm_ring_entry(srq->ring, sizeof(*w), srq->size - 1, srq->prod);
	srq->prod++;
	return w;
}

void
dprdma_srq_post_end(struct dprdma_srq *srq)
{
	/* no doorbell: the daemon looks at SRQ rings every round */
	if (srq->prod != srq->pub) {
		__atomic_store_n(&srq->ring->prod, srq->prod, __ATOMIC_RELEASE);
		srq->pub = srq->prod;
	}
	pthread_spin_unlock(&srq->lock);
}
