/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * The RDMA CM's turn on the main lcore (dpr_cm_poll()): the MADs worker
 * 0 queued handed to the peer room, the IDs' retries, time-wait and
 * lingering owners, the capabilities' timers, destroyed channels whose
 * client end is closed; and when the main lcore must wake for them.
 */

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/eventfd.h>
#include <sys/socket.h>

#include <rte_common.h>
#include <rte_log.h>
#include <rte_malloc.h>
#include <rte_random.h>
#include <rte_ring.h>
#include <rte_ring_elem.h>
#include <rte_telemetry.h>

#include "cm_private.h"
#include "dpr_cm.h"
#include "dpr_ratelimit.h"
#include "dpr_cm_mad.h"
#include "dpr_engine.h"
#include "dpr_transport.h"
#include "dpr_verbs.h"

/* Events held back for channels that were full, sent as far as they
 * go now; whether some are still held (cm.backlog: the next wake is near). */
static void
flush_channels(void)
{
	bool held = false;

	if (!cm.backlog)
		return;
	for (uint32_t i = 0; i < CM_MAX_CHANNELS; i++)
		if (cm.chans[i] != NULL && cm.chans[i]->qlen != 0)
			held |= cm_chan_flush(cm.chans[i]);
	cm.backlog = held;
}

/* Destroyed channels whose client end is closed. */
static void
reap_channels(void)
{
	for (uint32_t i = 0; i < CM_MAX_CHANNELS; i++) {
		struct pollfd pf;

		if (cm.chans[i] == NULL || !cm.chans[i]->dead)
			continue;
		pf.fd = cm.chans[i]->fd;
		pf.events = POLLIN;
		if (poll(&pf, 1, 0) == 1 && (pf.revents & (POLLHUP | POLLERR))) {
			cm_chan_free(cm.chans[i]);
			cm.chans[i] = NULL;
		}
	}
}

/* The deadlines come due: an ID whose owner has gone is freed when its
 * linger ends; one waiting for an answer sends its MAD again, or fails
 * when its retries are spent. Entries that are stale (the ID gone, its
 * wait over, its deadline moved) are passed over. */
static void
run_timers(void)
{
	uint64_t now = dpr_cm_now_ms();
	struct cm_id *id;

	while (cm_timer_pop(now, &id)) {
		if (id == NULL)
			continue;
		if (id->owner == NULL && now >= id->linger_ms) {
			cm_id_free(id);
			continue;
		}
		if (!id->waiting || now < id->deadline_ms)
			continue;
		if (id->caps_wait) {
			/* sent once the peer's capabilities are known */
			if (now < id->caps_until &&
			    dpr_cm_caps_pending((uint16_t)id->pi, id->dgid,
						id->sgid_index)) {
				id->deadline_ms = now + 1;
			} else {
				id->caps_wait = false;
				id->deadline_ms = now + cm.conf.response_timeout_ms;
				dpr_cm_mad_send(id->pi, id->sgid_index, id->dgid, id->mad);
			}
			cm_timer_arm(id, id->deadline_ms);
			continue;
		}
		if (id->retries_left > 0) {
			id->retries_left--;
			id->deadline_ms = now + cm.conf.response_timeout_ms;
			cm_timer_arm(id, id->deadline_ms);
			cm.st.mads_retried++;
			dpr_cm_mad_send(id->pi, id->sgid_index, id->dgid, id->mad);
			continue;
		}
		id->waiting = false;
		cm.st.timeouts++;
		if (id->st == CS_DREQ_SENT) {
			id->st = id->owner == NULL ? CS_TIMEWAIT : CS_CLOSED;
			cm_emit(id, DPR_SHM_CM_EV_DISCONNECTED, 0, NULL, 0);
			continue;
		}
		if (id->st == CS_REQ_SENT && !cm_id_is_ud(id))
			cm_send_rej(id, DPR_CM_REF_OTHER, DPR_CM_REJ_TIMEOUT, NULL, 0);
		id->st = CS_CLOSED;
		cm_emit(id, DPR_SHM_CM_EV_UNREACHABLE, -ETIMEDOUT, NULL, 0);
	}
}

void
dpr_cm_poll(void)
{
	struct cm_mad r;

	if (!cm.started)
		return;
	for (int k = 0; k < 256 && rte_ring_sc_dequeue_elem(cm.rx, &r, sizeof(r)) == 0; k++)
		cm_rx_mad(&r);
	cm_mad_flush();
	run_timers();
	cm_mad_flush();
	flush_channels();
	dpr_cm_caps_poll(dpr_cm_now_ms());
	dpr_cm_sec_poll(dpr_cm_now_ms());
	cm_mad_flush();
	if (dpr_cm_now_ms() - cm.last_reap > 1000) {
		cm.last_reap = dpr_cm_now_ms();
		reap_channels();
	}
}

int
dpr_cm_wake_fd(void)
{
	return cm.started ? cm.wake_fd : -1;
}

void
dpr_cm_wake_clear(void)
{
	uint64_t v;

	if (cm.started && read(cm.wake_fd, &v, sizeof(v)) < 0) {
		/* nothing (EAGAIN): another look cleared it */
	}
}

int
dpr_cm_next_timeout_ms(void)
{
	uint64_t now = dpr_cm_now_ms(), next = UINT64_MAX;

	if (cm.started)
		next = cm_timer_next();
	if (cm.started && (cm.backlog || cm.txq_n != 0))
		next = RTE_MIN(next, now + 1);  /* (events, MADs held: again) */
	/* MADs left past dpr_cm_poll()'s 256 a turn: their wake-up is read */
	if (cm.started && rte_ring_count(cm.rx) != 0)
		next = now;
	if (cm.started)
		next = RTE_MIN(next, dpr_cm_caps_next_ms());
	if (cm.started)
		next = RTE_MIN(next, dpr_cm_sec_next_ms());
	if (next == UINT64_MAX)
		return -1;
	return next <= now ? 0 : (int)RTE_MIN(next - now, 60000ull);
}
