/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Frames wake a napping worker (issue 43; doc/deploying.rst, "Shared
 * cores"). A yielding worker naps in ppoll() on its eventfds; with this,
 * also on an eventfd per receive queue that the link rings when a frame
 * comes, so a frame waits for the worker's wake-up, not for its nap to
 * end.
 *
 * DPDK's way is Rx interrupts (rte_eth_dev_rx_intr_enable() and the
 * queue's event fd): net_tap, the default port, has them (its queue's own
 * fd, ready while a frame waits; dpr_port.c asks for them when workers
 * yield). Its receive burst reads the fd only once the PMD's SIGIO has
 * come, so a worker that a frame woke and that found nothing naps 5 us
 * without the fd (dpr_worker.c) rather than waking at once again and
 * again. net_memif, the link between two dprdmad on one
 * machine, offers none in DPDK 22.11, yet it has what they need: memif's
 * protocol gives each ring an eventfd that the sender writes after a
 * burst unless the receiver masked it in the ring's flags (shared
 * memory, MEMIF_RING_FLAG_MASK_INT); DPDK's memif masks its receive
 * rings for good ("polling mode") and keeps the fd in its private queue.
 * Here, only on DPDK 22.11 and only after checks that the layout below is
 * the one in use (the port's name in the device data, the queue pointer
 * the ethdev fast path holds, the ring's cookie), a napping worker unmasks
 * its receive rings, looks once more for frames (a frame that came before
 * the unmasking rang nothing), sleeps on the rings' eventfds too, and
 * masks them again when it wakes: a busy worker's peer sends without a
 * system call. Anything else -- another driver, another DPDK, a check
 * that fails -- naps on its timer as before. The race the protocol
 * leaves (a sender that stored its head, then read the flags before our
 * unmasking was seen, while we read the head before its store was) costs
 * one nap, as every frame did before.
 */

/* rte_intr_fd_get() is experimental in DPDK 22.11 (this file alone) */
#define ALLOW_EXPERIMENTAL_API

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_interrupts.h>
#include <rte_version.h>

#include "engine_private.h"

/* DPDK 22.11's private layouts, as far as they are read here:
 * lib/ethdev/ethdev_driver.h (struct rte_eth_dev, struct
 * rte_eth_dev_data), drivers/net/memif/rte_eth_memif.h and memif.h. */
#define M2211_RING_COOKIE 0x3E31F20
#define M2211_RING_FLAG_MASK_INT 1
#define M2211_RING_C2S 0
#define M2211_MAX_REGIONS 256

struct m2211_dev {                      /* struct rte_eth_dev */
	void *fn[6];                    /* rx/tx burst, prepare, counts */
	struct m2211_dev_data *data;
	void *process_private;
	void *dev_ops, *device, *intr_handle;
	void *link_intr_cbs[2];
	void *post_rx_burst_cbs[RTE_MAX_QUEUES_PER_PORT];
	void *pre_tx_burst_cbs[RTE_MAX_QUEUES_PER_PORT];
	int state;
	void *security_ctx;
} __rte_cache_aligned;

struct m2211_dev_data {                 /* struct rte_eth_dev_data */
	char name[RTE_ETH_NAME_MAX_LEN];
	void **rx_queues;
};

struct m2211_queue {                    /* struct memif_queue */
	void *mempool, *pmd;
	int type;                       /* memif_ring_type_t */
	uint16_t region;
	uint16_t in_port;
	uint32_t ring_offset;
	uint16_t last_head;
	uint16_t last_tail;
	void *buffers;
	uint64_t n_pkts, n_bytes;
	struct rte_intr_handle *intr_handle;
	uint8_t log2_ring_size;
};

struct m2211_region {                   /* struct memif_region */
	uint8_t *addr;
	uint64_t region_size;
	int fd;
	uint32_t pkt_buffer_offset;
};

struct m2211_private {                  /* struct pmd_process_private */
	struct m2211_region *regions[M2211_MAX_REGIONS];
	uint16_t regions_num;
};

struct m2211_ring {                     /* memif_ring_t, its head */
	uint32_t cookie;
	uint16_t flags;
	uint16_t head;
	uint8_t pad[RTE_CACHE_LINE_SIZE - 8];
	uint16_t tail;
};

/* The memif receive queue @p q of port @p port_id, if the layouts above
 * are the ones in use; NULL otherwise (with the reason in the log). */
static struct m2211_queue *
memif_queue(uint16_t port_id, uint16_t q, void **pp)
{
	struct rte_eth_dev_info info;
	char name[RTE_ETH_NAME_MAX_LEN];
	struct m2211_dev *devs, *dev;
	void *fp_q;

	if (rte_eth_dev_info_get(port_id, &info) != 0 || info.driver_name == NULL ||
	    strcmp(info.driver_name, "net_memif") != 0 || q >= info.nb_rx_queues)
		return NULL;
	if (strncmp(rte_version(), "DPDK 22.11.", 11) != 0) {
		ENGINE_LOG(INFO, "port %u: memif receive queues do not wake napping "
			   "workers on %s (the layouts read are 22.11's)",
			   port_id, rte_version());
		return NULL;
	}
	/* (an internal symbol: looked up, not linked) */
	devs = dlsym(RTLD_DEFAULT, "rte_eth_devices");
	if (devs == NULL || rte_eth_dev_get_name_by_port(port_id, name) != 0)
		return NULL;
	dev = &devs[port_id];
	fp_q = rte_eth_fp_ops[port_id].rxq.data != NULL ?
		rte_eth_fp_ops[port_id].rxq.data[q] : NULL;
	if (dev->data == NULL || strcmp(dev->data->name, name) != 0 ||
	    dev->data->rx_queues == NULL || fp_q == NULL ||
	    dev->data->rx_queues[q] != fp_q || dev->process_private == NULL) {
		ENGINE_LOG(WARNING, "port %u (%s): the device is not laid out as "
			   "DPDK 22.11's: its frames wait for a napping worker's "
			   "nap to end", port_id, name);
		return NULL;
	}
	*pp = dev->process_private;
	return fp_q;
}

void
dpr_rxwake_init(struct dpr_worker *w)
{
	for (unsigned int pi = 0; pi < dpr_engine.n_ports; pi++) {
		struct dpr_rxwake *x = &w->rxw[pi];

		x->port_id = dpr_engine.ports[pi].port_id;
		x->mq = memif_queue(x->port_id, w->queue, &x->pp);
		x->ring = NULL;
		x->fd = -1;
		x->dupfd = -1;
		x->qfd = dpr_engine.ports[pi].rx_intr ?
			rte_eth_dev_rx_intr_ctl_q_get_fd(x->port_id, w->queue) : -1;
	}
}

/* The ring of @p x as it is mapped now (a reconnection maps it anew),
 * or NULL: not connected, or not a ring. */
static struct m2211_ring *
ring_now(const struct dpr_rxwake *x)
{
	const struct m2211_queue *mq = x->mq;
	const struct m2211_private *pp = x->pp;
	const struct m2211_region *r;
	struct m2211_ring *ring;
	struct rte_eth_link link;

	/* (memif's receive burst looks first whether it is connected: a
	 * link going down unmaps the regions) */
	if (rte_eth_link_get_nowait(x->port_id, &link) != 0 ||
	    link.link_status != RTE_ETH_LINK_UP ||
	    mq->region >= M2211_MAX_REGIONS || mq->region >= pp->regions_num)
		return NULL;
	r = pp->regions[mq->region];
	if (r == NULL || r->addr == NULL ||
	    (uint64_t)mq->ring_offset + sizeof(*ring) > r->region_size)
		return NULL;
	ring = (struct m2211_ring *)(r->addr + mq->ring_offset);
	return ring->cookie == M2211_RING_COOKIE ? ring : NULL;
}

int
dpr_rxwake_arm(struct dpr_worker *w, unsigned int pi)
{
	struct dpr_rxwake *x = &w->rxw[pi];
	const struct m2211_queue *mq = x->mq;
	struct m2211_ring *ring;
	uint16_t at, seen;
	int fd;

	x->ring = NULL;
	x->fd = -1;
	if (x->qfd >= 0) {
		/* Rx interrupts: ready while a frame waits (net_tap's fd
		 * is its queue's), nothing to look at once more */
		(void)rte_eth_dev_rx_intr_enable(x->port_id, w->queue);
		x->fd = x->qfd;
		return x->fd;
	}
	if (mq == NULL)
		return -ENOTSUP;
	if ((ring = ring_now(x)) == NULL ||
	    (fd = rte_intr_fd_get(mq->intr_handle)) < 0) {
		/* the link is down: its eventfd goes, ours of it too */
		if (x->dupfd >= 0)
			close(x->dupfd);
		x->dupfd = -1;
		return -ENOTSUP;
	}
	/* a copy of our own, kept while memif's fd and ring are the ones it
	 * was made of: memif closes its fd when the link goes down, maybe
	 * while the worker sleeps on it, and the number may be another
	 * file's by the time the worker reads it. (A reconnection while the
	 * worker never napped, that gave the same number and ring address,
	 * leaves it on the old eventfd: its naps then end on their timer.) */
	if (x->dupfd < 0 || x->srcfd != fd || x->srcring != ring) {
		if (x->dupfd >= 0)
			close(x->dupfd);
		x->dupfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		x->srcfd = fd;
		x->srcring = ring;
		if (x->dupfd < 0)
			return -ENOTSUP;
	}
	fd = x->dupfd;
	__atomic_store_n(&ring->flags, 0, __ATOMIC_RELAXED);
	/* the flags stored before the head is read (the sender stores its
	 * head, then reads the flags) */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (mq->type == M2211_RING_C2S) {
		at = __atomic_load_n(&ring->head, __ATOMIC_ACQUIRE);
		seen = mq->last_head;
	} else {
		at = __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
		seen = mq->last_tail;
	}
	x->ring = ring;
	x->fd = fd;
	return at != seen ? -EAGAIN : fd;
}

void
dpr_rxwake_disarm(struct dpr_worker *w, unsigned int pi, bool rang)
{
	struct dpr_rxwake *x = &w->rxw[pi];
	struct m2211_ring *ring;
	uint64_t v;

	if (x->fd < 0)
		return;
	if (x->qfd >= 0) {
		/* (the frame stays for the receive burst to read) */
		(void)rte_eth_dev_rx_intr_disable(x->port_id, w->queue);
		if (rang) {
			w->rx_wakeups++;
			w->rx_woke = true;
		}
		x->fd = -1;
		return;
	}
	/* masked again only where it still is what was unmasked: the link
	 * may have gone down during the nap, its ring unmapped */
	ring = ring_now(x);
	if (ring != NULL && ring == x->ring)
		__atomic_store_n(&ring->flags, (uint16_t)M2211_RING_FLAG_MASK_INT,
				 __ATOMIC_RELAXED);
	/* what it rang (also before: the count a sender left while the
	 * worker was busy) read away, or the next nap ends at once */
	if (read(x->fd, &v, sizeof(v)) == sizeof(v) && rang) {
		w->rx_wakeups++;
		w->rx_woke = true;
	}
	x->ring = NULL;
	x->fd = -1;
}
