/* SPDX-License-Identifier: BSD-3-Clause
 * Copyright (c) 2026 The dprdma authors
 */

/*
 * dprdma-mpi-coll: collectives with their results checked, built once
 * against Open MPI and once against MPICH and run by test_mpi.py with
 * the ranks split over two dprdma boxes (each rank's libibverbs the
 * drop-in, its daemon chosen by its local rank), so that every message
 * between ranks of different boxes crosses dprdma:
 *
 *   barrier      every rank stamps a counter before and reads it after
 *   allreduce    sums of rank-dependent vectors, 1 to 256 Ki doubles
 *                (eager and rendezvous: the large ones go as RDMA READs
 *                through UCX)
 *   alltoall     each rank sends each other rank a block naming both,
 *                4 B to 64 KiB per block
 *   bcast        a 1 MiB pattern from every root in turn
 *
 * Exit status 0 and "ok N ranks" on rank 0 only if every result matched;
 * a mismatch prints what was expected and what came and exits 1.
 */

#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

static int rank, size;

static void
check(int ok, const char *what, long at, double want, double got)
{
	if (ok)
		return;
	fprintf(stderr, "rank %d: %s: element %ld: expected %.17g, got %.17g\n",
		rank, what, at, want, got);
	MPI_Abort(MPI_COMM_WORLD, 1);
}

static void
test_allreduce(int rounds)
{
	for (long n = 1; n <= 256 * 1024; n *= 8) {
		double *in = malloc(n * sizeof(*in)), *out = malloc(n * sizeof(*out));

		for (int r = 0; r < rounds; r++) {
			for (long i = 0; i < n; i++)
				in[i] = (double)(rank + 1) * (double)(i % 1000 + r);
			MPI_Allreduce(in, out, (int)n, MPI_DOUBLE, MPI_SUM,
				      MPI_COMM_WORLD);
			/* sum over ranks of (rank + 1) * k: exact in doubles */
			for (long i = 0; i < n; i++) {
				double want = (double)size * (size + 1) / 2 *
					      (double)(i % 1000 + r);

				check(out[i] == want, "allreduce", i, want, out[i]);
			}
		}
		free(in);
		free(out);
	}
}

static void
test_alltoall(int rounds)
{
	for (long blk = 1; blk <= 16 * 1024; blk *= 4) {
		uint32_t *in = malloc(blk * size * 4), *out = malloc(blk * size * 4);

		for (int r = 0; r < rounds; r++) {
			for (int d = 0; d < size; d++)
				for (long i = 0; i < blk; i++)
					in[d * blk + i] = (uint32_t)(rank << 24 | d << 16) +
							  (uint32_t)((i + r) & 0xffff);
			MPI_Alltoall(in, (int)blk, MPI_UINT32_T, out, (int)blk,
				     MPI_UINT32_T, MPI_COMM_WORLD);
			for (int s = 0; s < size; s++)
				for (long i = 0; i < blk; i++) {
					uint32_t want = (uint32_t)(s << 24 | rank << 16) +
							(uint32_t)((i + r) & 0xffff);
					uint32_t got = out[s * blk + i];

					check(got == want, "alltoall", s * blk + i,
					      want, got);
				}
		}
		free(in);
		free(out);
	}
}

static void
test_barrier(int rounds)
{
	/* each rank stamps round r into every other rank's window before
	 * the barrier; after it, every stamp of round r must be there */
	uint32_t *stamps;
	MPI_Win win;

	MPI_Win_allocate(size * sizeof(*stamps), sizeof(*stamps), MPI_INFO_NULL,
			 MPI_COMM_WORLD, &stamps, &win);
	memset(stamps, 0, size * sizeof(*stamps));
	MPI_Barrier(MPI_COMM_WORLD);
	for (int r = 1; r <= rounds; r++) {
		uint32_t v = (uint32_t)r;

		MPI_Win_lock_all(0, win);
		for (int d = 0; d < size; d++)
			MPI_Put(&v, 1, MPI_UINT32_T, d, rank, 1, MPI_UINT32_T, win);
		MPI_Win_unlock_all(win);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
		for (int s = 0; s < size; s++)
			check(stamps[s] == (uint32_t)r, "barrier", s, r, stamps[s]);
		MPI_Win_unlock(rank, win);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	MPI_Win_free(&win);
}

static void
test_bcast(void)
{
	const long n = 1 << 20;
	uint8_t *buf = malloc(n);

	for (int root = 0; root < size; root++) {
		if (rank == root)
			for (long i = 0; i < n; i++)
				buf[i] = (uint8_t)(i * 7 + root);
		else
			memset(buf, 0, n);
		MPI_Bcast(buf, (int)n, MPI_BYTE, root, MPI_COMM_WORLD);
		for (long i = 0; i < n; i++)
			check(buf[i] == (uint8_t)(i * 7 + root), "bcast", i,
			      (uint8_t)(i * 7 + root), buf[i]);
	}
	free(buf);
}

int
main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 3;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	test_barrier(rounds * 10);
	test_allreduce(rounds);
	test_alltoall(rounds);
	test_bcast();
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("ok %d ranks\n", size);
	MPI_Finalize();
	return 0;
}
