/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Shared memory of the shim. Memory registration: a client registers
 * memory by sending a memfd (sealed against shrinking, so that it cannot
 * pull pages from under the daemon: that would be a SIGBUS here) or naming
 * a System V segment it may attach, with the offset of the pages; the
 * daemon maps them and places payload straight into them. The mapping goes
 * when the MR is gone and no frame in flight still points into it: the
 * MR's owner (struct dpr_mr_owner), called by lib/verbs or, when frames
 * were attached to the memory, by lib/transport after the last one. A
 * client's shared mapping (MAP_SHARED | MAP_ANONYMOUS, librpma's; a
 * sealed memfd) is opened here through /proc/PID/map_files: the same
 * pages, no descriptor sent.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/stat.h>

#include "dpr_ratelimit.h"
#include "shim_private.h"

/* The MR's owner (struct dpr_mr_owner): the mapping goes when the MR is
 * gone and no frame points into it any more. */
static void
mem_release(void *arg)
{
	struct shim_mem *m = arg;

	if (m->sysv)
		shmdt(m->addr);
	else
		munmap(m->addr, m->len);
	free(m);
}

/*
 * The client's shared mapping [lo, hi) opened here (dprdmad is root) as
 * /proc/PID/map_files/LO-HI: the same object, so the same pages. Only
 * objects nobody can shrink under us (that would be a SIGBUS here):
 * anonymous shared memory (no one holds a descriptor to truncate it) and
 * memfds sealed against shrinking. @return the descriptor or -errno.
 */
static int
open_mapping(struct shim_client *c, uint64_t lo, uint64_t hi)
{
	static struct dpr_ratelimit rl;
	char path[96], target[256];
	uint32_t missed;
	ssize_t n;
	int fd, seals;

	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64,
		 (int)c->pid, lo, hi);
	n = readlink(path, target, sizeof(target) - 1);
	fd = n < 0 ? -1 : open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		if (dpr_ratelimit(&rl, &missed))
			SHIM_LOG(NOTICE, "client %u: MR of its shared mapping 0x%" PRIx64
				 "-0x%" PRIx64 " refused: cannot open %s: %s",
				 c->id, lo, hi, path, strerror(errno));
		return -EOPNOTSUPP;
	}
	target[n] = '\0';
	seals = fcntl(fd, F_GET_SEALS);
	if ((seals >= 0 && (seals & F_SEAL_SHRINK)) ||
	    strcmp(target, "/dev/zero (deleted)") == 0 ||
	    strcmp(target, "/anon_hugepage (deleted)") == 0)
		return fd;
	close(fd);
	if (dpr_ratelimit(&rl, &missed))
		SHIM_LOG(NOTICE, "client %u: MR of its shared mapping of %s "
			 "refused: whoever holds that file can shrink it under "
			 "dprdmad; register MAP_SHARED | MAP_ANONYMOUS memory, a "
			 "memfd sealed with F_SEAL_SHRINK, System V memory or "
			 "private memory instead", c->id, target);
	return -EOPNOTSUPP;
}

static int reg_mr(struct shim_client *c, struct dpr_shm_msg *m, int fd);

int
shim_req_reg_mr(struct shim_client *c, struct dpr_shm_msg *m, int *in_fd,
		int *out_fd __rte_unused)
{
	int fd, rc;

	if (m->reg_mr.vma_hi == 0)
		return reg_mr(c, m, *in_fd);   /* (the socket closes it) */
	if (*in_fd >= 0 || m->reg_mr.sysv != 0 ||
	    m->reg_mr.vma_lo >= m->reg_mr.vma_hi)
		return -EINVAL;
	fd = open_mapping(c, m->reg_mr.vma_lo, m->reg_mr.vma_hi);
	if (fd < 0)
		return fd;
	rc = reg_mr(c, m, fd);
	close(fd);
	return rc;
}

/* Register what @p m names in @p fd (-1: a System V segment). */
static int
reg_mr(struct shim_client *c, struct dpr_shm_msg *m, int fd)
{
	const uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
	struct job j = { .kind = JOB_REG_MR, .c = c };
	struct shim_mr *smr, *old = NULL;
	struct stat sb;
	uint64_t widen;
	int seals, rc;
	void *map;
	uint32_t h;

	j.p = shim_obj_get(c, m->reg_mr.pd, OBJ_PD);
	if ((fd < 0 && m->reg_mr.sysv == 0) || j.p == NULL)
		return -EINVAL;
	if (m->reg_mr.rereg != 0) {
		/* ibv_rereg_mr: the new registration in the old one's place */
		old = shim_obj_get(c, m->reg_mr.rereg, OBJ_MR);
		if (old == NULL)
			return -EINVAL;
		j.kind = JOB_REREG_MR;
		j.old = old->mr;
	}
	if ((old == NULL && c->n_mr >= shim.lim.mrs) ||
	    c->mr_bytes - (old != NULL ? old->length : 0) + m->reg_mr.length >
	    SHIM_MAX_MR_BYTES) {
		shim.st.quota_refused++;
		SHIM_LOG(NOTICE, "client %u: MR refused: over its quota "
			 "(%u MRs, %llu GiB registered)", c->id, shim.lim.mrs,
			 SHIM_MAX_MR_BYTES >> 30);
		return -ENOMEM;
	}
	if (fd < 0) {
		/* a System V segment: it cannot shrink; the client must be
		 * allowed to attach it itself (owner, group or other rw) */
		struct shmid_ds ds;
		unsigned int mode;

		if (m->reg_mr.sysv > INT32_MAX ||
		    shmctl((int)m->reg_mr.sysv - 1, IPC_STAT, &ds) != 0)
			return -EINVAL;
		mode = ds.shm_perm.mode;
		if (c->uid != 0 &&
		    !((c->uid == ds.shm_perm.uid || c->uid == ds.shm_perm.cuid) ?
		      (mode & 0600) == 0600 :
		      (c->gid == ds.shm_perm.gid || c->gid == ds.shm_perm.cgid) ?
		      (mode & 0060) == 0060 : (mode & 0006) == 0006))
			return -EACCES;
		sb.st_size = (off_t)ds.shm_segsz;
	} else if (m->reg_mr.vma_hi != 0) {
		if (fstat(fd, &sb) != 0)        /* (open_mapping() checked it) */
			return -EBADF;
	} else {
		/* the memory must not shrink under us (SIGBUS) */
		seals = fcntl(fd, F_GET_SEALS);
		if (seals < 0 || !(seals & F_SEAL_SHRINK) || fstat(fd, &sb) != 0)
			return -EBADF;
	}
	if (m->reg_mr.offset % pg != 0 || m->reg_mr.map_bytes == 0 ||
	    m->reg_mr.map_bytes % pg != 0 || m->reg_mr.length == 0 ||
	    m->reg_mr.offset + m->reg_mr.map_bytes < m->reg_mr.offset ||
	    m->reg_mr.offset + m->reg_mr.map_bytes > (uint64_t)sb.st_size ||
	    m->reg_mr.addr_off >= m->reg_mr.map_bytes ||
	    m->reg_mr.length > m->reg_mr.map_bytes - m->reg_mr.addr_off)
		return -EINVAL;
	if (fd < 0) {
		void *base = shmat((int)m->reg_mr.sysv - 1, NULL, 0);

		if (base == (void *)-1)
			return -errno;
		map = (uint8_t *)base + m->reg_mr.offset;
	} else {
		/* a hugetlb file maps only in whole huge pages (st_blksize
		 * is its page size): widen the mapping to them, so a client
		 * can register any page-aligned part of dprdma_alloc()
		 * memory; the file's size is a multiple of its page size */
		uint64_t hp = sb.st_blksize > (blksize_t)pg ? (uint64_t)sb.st_blksize : pg;

		widen = m->reg_mr.offset & (hp - 1);
		m->reg_mr.offset -= widen;
		m->reg_mr.addr_off += widen;
		m->reg_mr.map_bytes = RTE_ALIGN_CEIL(m->reg_mr.map_bytes + widen, hp);
		if (m->reg_mr.offset + m->reg_mr.map_bytes > (uint64_t)sb.st_size)
			return -EINVAL;
		map = mmap(NULL, m->reg_mr.map_bytes, PROT_READ | PROT_WRITE,
			   MAP_SHARED, fd, (off_t)m->reg_mr.offset);
		if (map == MAP_FAILED)
			return -errno;
	}
	smr = calloc(1, sizeof(*smr));
	j.mem = calloc(1, sizeof(*j.mem));
	if (smr == NULL || j.mem == NULL) {
		free(smr);
		free(j.mem);
		if (fd < 0)
			shmdt((uint8_t *)map - m->reg_mr.offset);
		else
			munmap(map, m->reg_mr.map_bytes);
		return -ENOMEM;
	}
	j.mem->sysv = fd < 0;
	j.mem->addr = fd < 0 ? (uint8_t *)map - m->reg_mr.offset : map;
	j.mem->len = m->reg_mr.map_bytes;
	j.owner.release = mem_release;
	j.owner.arg = j.mem;
	j.addr = (uint8_t *)map + m->reg_mr.addr_off;
	j.iova = m->reg_mr.iova;
	j.length = m->reg_mr.length;
	j.access = m->reg_mr.access;
	rc = shim_job(&j);
	if (rc != 0) {
		free(smr);
		mem_release(j.mem);
		return rc;
	}
	if (old != NULL) {
		/* (smr is not needed: the old record takes the new MR) */
		free(smr);
		c->mr_bytes += j.length - old->length;
		old->mr = j.out;
		old->length = j.length;
		m->reg_mr_resp.handle = m->reg_mr.rereg;
		m->reg_mr_resp.lkey = old->mr->lkey;
		m->reg_mr_resp.rkey = old->mr->rkey;
		return 0;
	}
	smr->mr = j.out;
	smr->length = j.length;
	h = shim_obj_add(c, OBJ_MR, smr);
	if (h == 0) {
		j.kind = JOB_DEREG_MR;
		j.p = smr->mr;
		shim_job(&j);
		free(smr);
		return -ENOMEM;
	}
	c->n_mr++;
	c->mr_bytes += j.length;
	m->reg_mr_resp.handle = h;
	m->reg_mr_resp.lkey = smr->mr->lkey;
	m->reg_mr_resp.rkey = smr->mr->rkey;
	return 0;
}

int
shim_dereg_mr(struct shim_client *c, uint32_t h)
{
	struct shim_mr *smr = shim_obj_get(c, h, OBJ_MR);
	struct job j = { .kind = JOB_DEREG_MR, .c = c };
	int rc;

	if (smr == NULL)
		return -EINVAL;
	j.p = smr->mr;
	rc = shim_job(&j);
	if (rc != 0)
		return rc;
	c->n_mr--;
	c->mr_bytes -= smr->length;
	shim_obj_del(c, h);
	free(smr);
	return 0;
}

/* ---------------------------------------------------- memory windows */

/* ibv_alloc_mw: a window of the client's PD; it takes one of the client's
 * MR places (windows and MRs share the key table) */
int
shim_req_alloc_mw(struct shim_client *c, struct dpr_shm_msg *m,
		  int *in_fd __rte_unused, int *out_fd __rte_unused)
{
	struct job j = { .kind = JOB_ALLOC_MW, .c = c };
	int rc;

	j.p = shim_obj_get(c, m->alloc_mw.pd, OBJ_PD);
	if (j.p == NULL || (m->alloc_mw.type != 1 && m->alloc_mw.type != 2))
		return -EINVAL;
	if (shim_over_quota(c, c->n_mr, shim.lim.mrs, "memory window",
			    "client_mrs, MRs and windows together"))
		return -ENOMEM;
	j.access = m->alloc_mw.type;
	rc = shim_job(&j);
	if (rc != 0)
		return rc;
	m->alloc_mw_resp.rkey = ((struct dpr_mr *)j.out)->rkey;
	m->alloc_mw_resp.handle = shim_obj_enter(c, &j, OBJ_MW, JOB_DEALLOC_MW);
	if (m->alloc_mw_resp.handle == 0)
		return -ENOMEM;
	c->n_mr++;
	return 0;
}

int
shim_dealloc_mw(struct shim_client *c, uint32_t h)
{
	int rc = shim_obj_unmake(c, h, OBJ_MW, JOB_DEALLOC_MW);

	if (rc == 0)
		c->n_mr--;
	return rc;
}
