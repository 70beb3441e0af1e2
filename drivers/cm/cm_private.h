/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * Between the files of drivers/cm: QP1's MADs (dpr_cm.c) and the peers'
 * capabilities asked over them (dpr_cm_caps.c). Main lcore, unless said.
 */

#ifndef CM_PRIVATE_H
#define CM_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_telemetry.h>

#include "dpr_cm_mad.h"
#include "dpr_config.h"

/* A MAD between the main lcore and worker 0 (the rings' element). */
struct cm_mad {
	uint16_t port;
	uint8_t sgid_index;
	uint8_t pad;
	uint32_t qpn;                   /* the peer's QP (1) */
	uint32_t qkey;
	uint8_t gid[16];                /* rx: the source; tx: the destination */
	uint8_t mad[DPR_MAD_LEN];
};

/* dpr_cm.c */
uint64_t dpr_cm_now_ms(void);
/* Queue @p mad to QP1 of @p gid on port @p pi, from our GID @p sgid_index. */
void dpr_cm_mad_send(int pi, uint8_t sgid_index, const uint8_t gid[16],
		const uint8_t *mad);
/* The port and our GID index that reach @p gid, or -1. */
int dpr_cm_route(const uint8_t *gid, uint8_t *sgid_index);
/* Port @p pi's node GUID, network order. */
uint64_t dpr_cm_node_guid(uint16_t pi);

/* dpr_cm_caps.c: made by dpr_cm_start() (@p wake_fd wakes the main
 * lcore), gone with dpr_cm_stop() (with the workers still running). */
int dpr_cm_caps_start(const struct dpr_config *conf, int wake_fd);
void dpr_cm_caps_stop(void);
/* A DprdmaCaps MAD: taken (true), or someone else's (false). */
bool dpr_cm_caps_rx(const struct cm_mad *r);
/* Questions the workers asked, answers not come: sent (again). */
void dpr_cm_caps_poll(uint64_t now_ms);
/* When dpr_cm_caps_poll() has a timer to run (UINT64_MAX: none). */
uint64_t dpr_cm_caps_next_ms(void);
/* Its counters into /dprdma/cm/stats (a dict begun); /dprdma/cm/peers. */
void dpr_cm_caps_stats(struct rte_tel_data *d);
void dpr_cm_caps_register_telemetry(void);

#endif /* CM_PRIVATE_H */
