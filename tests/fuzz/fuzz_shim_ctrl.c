/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * libFuzzer target: the shim's control messages and rings, against the
 * real daemon side (drivers/shim) on a running engine (EAL without
 * hugepages, one net_null port, one worker that yields).
 *
 * An input is a sequence of records: [len:u16][flags:u8][len bytes].
 *  flags & 0x80  the record is a control message whose header (magic,
 *                version, op = first byte % 16, seq) is made here and whose
 *                body is the rest; else the bytes are sent as they are
 *  flags & 0x01  a sealed memfd (64 KiB) goes with it; 0x02 the write end
 *                of a pipe; 0x04 an unsealed memfd; 0x08 /dev/null
 *  flags & 0x40  not a message: the bytes are written into the last send
 *                ring the daemon handed out (a WQE at its producer index),
 *                the producer moved by the first byte (any amount), and
 *                the QP's doorbell rung: the worker drains it
 * After the input the connection closes; every object the client made
 * must be gone (the verbs tables back to empty), or the target aborts.
 */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/socket.h>

#include <rte_eal.h>
#include <rte_common.h>

#include "dpr_config.h"
#include "dpr_engine.h"
#include "dpr_shim.h"
#include "dpr_shm.h"
#include "dpr_verbs.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct dpr_config conf;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char *eal[] = { (*argv)[0], (char *)"-l", (char *)"0-1", (char *)"--no-pci",
		(char *)"--no-huge", (char *)"-m", (char *)"256",
		(char *)"--no-shconf", (char *)"--no-telemetry",
		(char *)"--vdev", (char *)"net_null0",
		(char *)"--log-level", (char *)"*:error", NULL };
	struct dpr_engine_hooks hooks = { .pollers = { { dpr_shim_worker_poll, NULL, dpr_shim_worker_nap } } };
	char err[256], sock[64];

	(void)argc;
	if (rte_eal_init(RTE_DIM(eal) - 1, eal) < 0)
		abort();
	dpr_engine_config_register();
	dpr_shim_config_register();
	dpr_config_defaults(&conf);
	snprintf(sock, sizeof(sock), "/tmp/dprdma-fuzz-shim-%d.sock", (int)getpid());
	if (dpr_config_set(&conf, "engine", "idle", "yield", "fuzz", err,
			   sizeof(err)) != 0 ||
	    dpr_config_set(&conf, "control", "socket", sock, "fuzz", err,
			   sizeof(err)) != 0 ||
	    /* small tables: a client is made per input */
	    dpr_config_set(&conf, "limits", "client_qps", "64", "fuzz", err,
			   sizeof(err)) != 0 ||
	    dpr_config_set(&conf, "limits", "client_cqs", "64", "fuzz", err,
			   sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_shim_ctrl: %s\n", err);
		abort();
	}
	if (dpr_engine_start(&conf, &hooks, err, sizeof(err)) != 0 ||
	    dpr_shim_start(&conf, err, sizeof(err)) != 0) {
		fprintf(stderr, "fuzz_shim_ctrl: %s\n", err);
		abort();
	}
	return 0;
}

static int
attachment(uint8_t flags)
{
	int p[2], fd = -1;

	if (flags & 0x01) {
		fd = memfd_create("fz", MFD_ALLOW_SEALING);
		if (fd >= 0 && (ftruncate(fd, 65536) != 0 ||
				fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK) != 0)) {
			close(fd);
			fd = -1;
		}
	} else if (flags & 0x02) {
		if (pipe(p) == 0) {
			close(p[0]);
			fd = p[1];
		}
	} else if (flags & 0x04) {
		fd = memfd_create("fz", 0);
		if (fd >= 0 && ftruncate(fd, 65536) != 0) {
			close(fd);
			fd = -1;
		}
	} else if (flags & 0x08) {
		fd = open("/dev/null", O_WRONLY);
	}
	return fd;
}

struct state {
	struct dpr_shm_ctrl *ctrl;
	size_t ctrl_bytes;
	uint8_t *qp_ring;
	size_t qp_bytes;
	uint32_t sq_size, slot;
	uint32_t seq;
};

/* Serve until the answer is there; keep what it hands out. */
static void
exchange(int s, struct state *st, uint16_t op_sent)
{
	struct dpr_shm_msg m;
	int fd = -1;

	for (int i = 0; i < 2000; i++) {
		struct pollfd pf = { .fd = s, .events = POLLIN };

		dpr_shim_poll(0);
		if (poll(&pf, 1, 0) == 1)
			break;
	}
	if (dpr_shm_recv(s, &m, sizeof(m), MSG_DONTWAIT, &fd, NULL) !=
	    (ssize_t)sizeof(m) || fd < 0) {
		if (fd >= 0)
			close(fd);
		return;
	}
	if (m.status == 0 && op_sent == DPR_SHM_OPEN && st->ctrl == NULL) {
		st->ctrl_bytes = m.open_resp.ctrl_bytes;
		st->ctrl = mmap(NULL, st->ctrl_bytes, PROT_READ | PROT_WRITE,
				MAP_SHARED, fd, 0);
		if (st->ctrl == MAP_FAILED)
			st->ctrl = NULL;
	} else if (m.status == 0 && op_sent == DPR_SHM_CREATE_QP &&
		   m.create_qp_resp.slot < DPR_SHM_MAX_QPS) {
		if (st->qp_ring != NULL)
			munmap(st->qp_ring, st->qp_bytes);
		st->qp_bytes = m.create_qp_resp.map_bytes;
		st->qp_ring = mmap(NULL, st->qp_bytes, PROT_READ | PROT_WRITE,
				   MAP_SHARED, fd, 0);
		if (st->qp_ring == MAP_FAILED)
			st->qp_ring = NULL;
		st->sq_size = m.create_qp_resp.sq_size;
		st->slot = m.create_qp_resp.slot;
	}
	close(fd);
}

static void
ring(struct state *st, const uint8_t *b, size_t n)
{
	struct dpr_shm_ring *r = (struct dpr_shm_ring *)st->qp_ring;
	struct dpr_shm_swqe w;

	if (r == NULL || st->ctrl == NULL || n == 0 || st->sq_size == 0)
		return;
	memset(&w, 0, sizeof(w));
	memcpy(&w, b + 1, RTE_MIN(n - 1, sizeof(w)));
	memcpy(dpr_shm_ring_entry(r, sizeof(w), st->sq_size - 1, r->prod), &w,
	       sizeof(w));
	/* any producer index: the daemon must cope with nonsense */
	__atomic_store_n(&r->prod, r->prod + (b[0] == 0xff ? 0x80000000u : b[0] % 5),
			 __ATOMIC_RELEASE);
	__atomic_fetch_or(&st->ctrl->doorbell[st->slot / 64], 1ull << (st->slot % 64),
			  __ATOMIC_RELEASE);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct state st = { 0 };
	struct dpr_verbs_usage u;
	int sp[2];
	size_t off = 0;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sp) != 0)
		abort();
	if (dpr_shim_adopt(sp[0]) != 0)
		abort();
	while (off + 3 <= size) {
		uint16_t len = (uint16_t)((data[off] | data[off + 1] << 8) % 300);
		uint8_t flags = data[off + 2];
		uint8_t buf[320];
		size_t n;
		int fd;

		off += 3;
		n = RTE_MIN((size_t)len, size - off);
		memset(buf, 0, sizeof(buf));
		memcpy(buf, data + off, n);
		off += n;
		if (flags & 0x40) {
			ring(&st, buf, n);
			continue;
		}
		if (flags & 0x80) {
			struct dpr_shm_msg *m = (struct dpr_shm_msg *)(void *)buf;
			uint16_t op = (uint16_t)(buf[0] % 16);

			memmove(buf + 16, buf + 1, sizeof(buf) - 17);
			m->magic = DPR_SHM_MAGIC;
			m->version = DPR_SHM_VERSION;
			m->op = op;
			m->seq = ++st.seq;
			m->status = 0;
			n = sizeof(*m);
		}
		fd = attachment(flags);
		if (dpr_shm_send(sp[1], buf, n, fd) < 0) {
			if (fd >= 0)
				close(fd);
			break;
		}
		if (fd >= 0)
			close(fd);
		exchange(sp[1], &st, (flags & 0x80) ? (uint16_t)(buf[6] | buf[7] << 8) : 0);
	}
	close(sp[1]);
	if (st.qp_ring != NULL)
		munmap(st.qp_ring, st.qp_bytes);
	if (st.ctrl != NULL)
		munmap(st.ctrl, st.ctrl_bytes);
	/* the daemon notices the hang-up and releases everything */
	for (int i = 0; i < 100 && dpr_shim_clients() != 0; i++)
		dpr_shim_poll(1);
	dpr_verbs_usage(dpr_engine_verbs(0), &u);
	if (dpr_shim_clients() != 0 || u.pd || u.mr || u.cq || u.qp) {
		fprintf(stderr, "fuzz_shim_ctrl: left behind: %u clients, %u PDs, "
			"%u MRs, %u CQs, %u QPs\n", dpr_shim_clients(), u.pd, u.mr,
			u.cq, u.qp);
		abort();
	}
	return 0;
}
