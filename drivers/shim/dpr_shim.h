/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/**
 * @file
 * The daemon side of the shared-memory verbs shim: the client socket
 * (served by the main lcore), each client's objects, the worker hook that
 * drains client send/receive rings on doorbells, and the cleanup of a
 * client that goes away. The ABI is lib/shm/dpr_shm.h.
 */

#ifndef DPR_SHIM_H
#define DPR_SHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dpr_config.h"

/** The [control] section: the client socket. */
struct dpr_shim_conf {
	char socket[108];            /**< client Unix socket (sun_path size) */
	unsigned int socket_mode;    /**< its permissions */
	unsigned int max_clients;    /**< connections at once */
	unsigned int dev_nodes;      /**< 1: make /dev/infiniband/dprdmaN */
	unsigned int shutdown_timeout; /**< s clients get to leave on SIGTERM */
};

/** Add [control] to the configuration (lib/config): call before the
 * first dpr_config_defaults(). */
void dpr_shim_config_register(void);
const struct dpr_shim_conf *dpr_shim_conf(const struct dpr_config *conf);

/**
 * Listen on [control] socket. Call after dpr_engine_start().
 * @return 0, or a negative errno with @p err saying what to change.
 */
int dpr_shim_start(const struct dpr_config *conf, char *err, size_t errlen);

/** Serve the socket for up to @p timeout_ms (the main lcore's loop).
 * @return the clients whose requests were served (0: none came). */
unsigned int dpr_shim_poll(int timeout_ms);

/** Drop every client (their objects destroyed) and close the socket.
 * Call before dpr_engine_stop(). */
void dpr_shim_stop(void);
/**
 * The first step of a graceful stop (SIGTERM): the client socket closes to
 * new clients, every client QP goes to ERR (its work completes with
 * WR_FLUSH_ERR), every client gets IBV_EVENT_DEVICE_FATAL, and from now on
 * requests that make something are refused with EIO. Call dpr_shim_poll()
 * on, so that clients can destroy their objects and leave.
 * @return the clients still connected.
 */
unsigned int dpr_shim_drain(void);

/** Serve an already connected SOCK_SEQPACKET socket as a client (as if
 * accepted; the fuzz target uses it). @return 0, or -EUSERS (max_clients
 * reached), -ENOMEM; on failure the caller keeps @p fd. */
int dpr_shim_adopt(int fd);

/** Clients connected now. */
unsigned int dpr_shim_clients(void);

/** The engine's worker hook (struct dpr_engine_hooks.worker_poll). */
bool dpr_shim_worker_poll(void *arg, unsigned int worker, uint64_t now_ns);
/** The worker hook's nap (struct dpr_engine_poller): clients told, and
 * told to wake the worker when they post. */
bool dpr_shim_worker_nap(void *arg, unsigned int worker, bool napping, uint64_t now_ns);

/** Register /dprdma/shim/{stats,clients,client} with telemetry. */
void dpr_shim_register_telemetry(void);

#endif /* DPR_SHIM_H */
