/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * libdprdma's memory: dprdma_alloc() (memfd chunks the daemon maps too)
 * and registration of any memory the process has: a chunk, a file or
 * memfd mapping (its file is sent), a System V segment (named), private
 * memory (moved into the shadow memfd below, so that the daemon maps the
 * same pages the program uses).
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

#include "libdprdma_private.h"

#define SHADOW_NAME "dprdma-mem"
#define DPR_ACCESS_LOCAL_WRITE_ 1u      /* IBV_ACCESS_LOCAL_WRITE */
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
 * snapshot (make_shadow() changes the file while it works). The file is
 * in address order: reading stops at the first mapping past @p end, and
 * those before @p start are passed over on their addresses alone (a
 * program of thousands of QPs has thousands of mappings, and the kernel
 * writes the file as it is read: registering heap memory, low in the
 * address space, no longer costs a walk of them all). @return how many
 * (*@p out malloc'd, the caller frees it) or -errno. */
static int
maps_touching(uintptr_t start, uintptr_t end, struct map_ent **out)
{
	struct map_ent *v = NULL, e;
	char line[512], dev[16];
	int n = 0, cap = 0;
	bool whole = true;      /* line starts a line of the file */
	FILE *f = fopen("/proc/self/maps", "re");

	if (f == NULL)
		return -errno;
	while (fgets(line, sizeof(line), f) != NULL) {
		const bool first = whole;
		unsigned long lo, hi;
		const char *p;
		char *q;

		whole = strchr(line, '\n') != NULL;
		if (!first)
			continue;       /* the rest of a long path */
		lo = strtoul(line, &q, 16);
		if (*q != '-')
			continue;
		hi = strtoul(q + 1, NULL, 16);
		if (hi <= start)
			continue;
		if (lo >= end)
			break;
		e.path[0] = '\0';
		if (sscanf(line, "%lx-%lx %7s %lx %15s %lu %399[^\n]", &lo, &hi,
			   e.perms, &e.off, dev, &e.inode, e.path) < 6)
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

/* Is @p e a mapping of this process's shadow file? */
static bool
is_shadow(const struct map_ent *e)
{
	return strncmp(e->path, "/memfd:" SHADOW_NAME, 7 + strlen(SHADOW_NAME)) == 0 &&
	       e->perms[3] == 's' && e->inode == shadow.ino;
}

/* Is [start, end) inside the one shared mapping @p maps holds? */
static bool
in_one_shared(const struct map_ent *maps, int n, uintptr_t start, uintptr_t end)
{
	return n == 1 && maps[0].lo <= start && end <= maps[0].hi &&
	       maps[0].perms[3] == 's';
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
make_shadow(const struct map_ent *maps, int n, uintptr_t start, uintptr_t end,
	    unsigned int access)
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

		if (is_shadow(e) && e->off == e->lo)
			continue;       /* ours already */
		if (strncmp(e->path, "/memfd:dprdma-buf", 17) == 0)
			return -EFAULT; /* a freed dprdma_alloc() chunk? */
		if (e->perms[3] != 'p' || e->perms[0] != 'r')
			/* a shared mapping among others (one alone is sent
			 * as it is): remapping it would part the program from
			 * whoever shares it */
			return -EOPNOTSUPP;
		/* private memory, anonymous or of a file (.data, a file
		 * mapped MAP_PRIVATE): its pages are the program's alone;
		 * read-only ones only for an MR the daemon never writes,
		 * as ibv_reg_mr pins them (EFAULT otherwise) */
		if (e->perms[1] != 'w' && (access & DPR_ACCESS_LOCAL_WRITE_))
			return -EFAULT;
		if (pwrite(fd, (void *)a, b - a, (off_t)a) != (ssize_t)(b - a) ||
		    mmap((void *)a, b - a, PROT_READ |
			 (e->perms[1] == 'w' ? PROT_WRITE : 0) |
			 (e->perms[2] == 'x' ? PROT_EXEC : 0),
			 MAP_SHARED | MAP_FIXED, fd, (off_t)a) == MAP_FAILED)
			return -errno;
	}
	return 0;
}

/* Is [start, end) inside one shared mapping that is not ours (our
 * shadow is sent as the shadow) nor System V? Then the daemon opens that
 * mapping's object itself (/proc/PID/map_files), at @p off in it: the
 * same pages, no copy. */
static bool
shared_mapping(const struct map_ent *maps, int n, uintptr_t start, uintptr_t end,
	       uint64_t *lo, uint64_t *hi, uint64_t *off)
{
	if (!in_one_shared(maps, n, start, end) ||
	    strncmp(maps[0].path, "/SYSV", 5) == 0 || is_shadow(&maps[0]))
		return false;
	*lo = maps[0].lo;
	*hi = maps[0].hi;
	*off = maps[0].off + (start - maps[0].lo);
	return true;
}

/* Is [start, end) inside one System V shared memory mapping? Then its id
 * (+1) and the offset of start in the segment. */
static bool
sysv_segment(const struct map_ent *maps, int n, uintptr_t start, uintptr_t end,
	     uint32_t *sysv, uint64_t *off)
{
	if (!in_one_shared(maps, n, start, end) ||
	    strncmp(maps[0].path, "/SYSV", 5) != 0 || maps[0].inode >= INT32_MAX)
		return false;
	*sysv = (uint32_t)maps[0].inode + 1;    /* the shmid */
	*off = maps[0].off + (start - maps[0].lo);
	return true;
}

/* Register [addr, addr + len) in @p pd (@p rereg: the handle of an MR
 * whose place and keys it takes, else 0). @return 0 with @p mr's handle
 * and keys filled, or a negative errno. */
static int
reg(struct dprdma_pd *pd, void *addr, size_t len, uint64_t iova,
    unsigned int access, uint32_t rereg, struct dprdma_mr *mr)
{
	struct dprdma_context *ctx = pd->ctx;
	const uintptr_t pg = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)addr, start, end;
	struct dpr_shm_msg m = { .op = DPR_SHM_REG_MR };
	struct map_ent *maps = NULL;
	struct chunk *ch;
	int fd = -1, rc;

	if (addr == NULL || len == 0 || a + len < a)
		return -EINVAL;
	m.reg_mr.rereg = rereg;
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

		pthread_mutex_lock(&shadow.lock);
		if (sysv_segment(maps, n, start, end, &m.reg_mr.sysv,
				 &m.reg_mr.offset)) {
			/* a System V segment: the daemon attaches it too */
			pthread_mutex_unlock(&shadow.lock);
			fd = -1;
			rc = 0;
		} else if (shared_mapping(maps, n, start, end, &m.reg_mr.vma_lo,
					  &m.reg_mr.vma_hi, &m.reg_mr.offset)) {
			/* shared memory (MAP_SHARED | MAP_ANONYMOUS, a
			 * memfd): the daemon maps the same object */
			pthread_mutex_unlock(&shadow.lock);
			fd = -1;
			rc = 0;
		} else {
			rc = make_shadow(maps, n, start, end, access);
			fd = shadow.fd;
			pthread_mutex_unlock(&shadow.lock);
			m.reg_mr.offset = start;
		}
		free(maps);
	}
	if (rc == 0)
		rc = dpr_call_fd(ctx->fd, &ctx->seq, &m, fd, NULL);
	pthread_mutex_unlock(&ctx->lock);
	if (rc != 0)
		return rc;
	mr->ctx = ctx;
	mr->handle = m.reg_mr_resp.handle;
	mr->lkey = m.reg_mr_resp.lkey;
	mr->rkey = m.reg_mr_resp.rkey;
	return 0;
}

struct dprdma_mr *
dprdma_reg_mr(struct dprdma_pd *pd, void *addr, size_t len, uint64_t iova,
	      unsigned int access)
{
	struct dprdma_mr *mr = calloc(1, sizeof(*mr));
	int rc;

	if (mr == NULL)
		return NULL;
	rc = reg(pd, addr, len, iova, access, 0, mr);
	if (rc != 0) {
		free(mr);
		errno = -rc;
		return NULL;
	}
	return mr;
}

int
dprdma_rereg_mr(struct dprdma_mr *mr, struct dprdma_pd *pd, void *addr,
		size_t len, uint64_t iova, unsigned int access)
{
	struct dprdma_mr n = *mr;
	int rc;

	if (pd->ctx != mr->ctx)
		return EINVAL;
	rc = reg(pd, addr, len, iova, access, mr->handle, &n);
	if (rc != 0)
		return -rc;
	*mr = n;
	return 0;
}

int
dprdma_dereg_mr(struct dprdma_mr *mr)
{
	int rc = dpr_destroy_obj(mr->ctx, DPR_SHM_DEREG_MR, mr->handle);

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
