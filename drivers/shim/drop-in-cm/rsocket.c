/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * rsockets (rdma/rsocket.h) are not served by dprdma's librdmacm: each
 * call fails with EOPNOTSUPP, so a program that tries them (rstream,
 * LD_PRELOAD=librspreload) learns it at once instead of hanging. Use
 * the verbs or RDMA CM calls, or kernel TCP.
 */

#include <errno.h>
#include <sys/select.h>

#include <rdma/rsocket.h>

#define REFUSE(ret) do { errno = EOPNOTSUPP; return ret; } while (0)
#define U __attribute__((unused))

int rsocket(int d U, int t U, int p U) { REFUSE(-1); }
int rbind(int s U, const struct sockaddr *a U, socklen_t l U) { REFUSE(-1); }
int rlisten(int s U, int b U) { REFUSE(-1); }
int raccept(int s U, struct sockaddr *a U, socklen_t *l U) { REFUSE(-1); }
int rconnect(int s U, const struct sockaddr *a U, socklen_t l U) { REFUSE(-1); }
int rshutdown(int s U, int h U) { REFUSE(-1); }
int rclose(int s U) { REFUSE(-1); }
ssize_t rrecv(int s U, void *b U, size_t l U, int f U) { REFUSE(-1); }
ssize_t rrecvfrom(int s U, void *b U, size_t l U, int f U, struct sockaddr *a U,
		  socklen_t *al U) { REFUSE(-1); }
ssize_t rrecvmsg(int s U, struct msghdr *m U, int f U) { REFUSE(-1); }
ssize_t rsend(int s U, const void *b U, size_t l U, int f U) { REFUSE(-1); }
ssize_t rsendto(int s U, const void *b U, size_t l U, int f U,
		const struct sockaddr *a U, socklen_t al U) { REFUSE(-1); }
ssize_t rsendmsg(int s U, const struct msghdr *m U, int f U) { REFUSE(-1); }
ssize_t rread(int s U, void *b U, size_t c U) { REFUSE(-1); }
ssize_t rreadv(int s U, const struct iovec *v U, int c U) { REFUSE(-1); }
ssize_t rwrite(int s U, const void *b U, size_t c U) { REFUSE(-1); }
ssize_t rwritev(int s U, const struct iovec *v U, int c U) { REFUSE(-1); }
int rpoll(struct pollfd *f U, nfds_t n U, int t U) { REFUSE(-1); }
int rselect(int n U, fd_set *r U, fd_set *w U, fd_set *e U, struct timeval *t U)
{ REFUSE(-1); }
int rgetpeername(int s U, struct sockaddr *a U, socklen_t *l U) { REFUSE(-1); }
int rgetsockname(int s U, struct sockaddr *a U, socklen_t *l U) { REFUSE(-1); }
int rsetsockopt(int s U, int lv U, int o U, const void *v U, socklen_t l U)
{ REFUSE(-1); }
int rgetsockopt(int s U, int lv U, int o U, void *v U, socklen_t *l U) { REFUSE(-1); }
int rfcntl(int s U, int c U, ...) { REFUSE(-1); }
off_t riomap(int s U, void *b U, size_t l U, int p U, int f U, off_t o U) { REFUSE(-1); }
int riounmap(int s U, void *b U, size_t l U) { REFUSE(-1); }
size_t riowrite(int s U, const void *b U, size_t c U, off_t o U, int f U) { REFUSE(0); }
