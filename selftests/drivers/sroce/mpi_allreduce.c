// SPDX-License-Identifier: GPL-2.0
/*
 * A float allreduce (MPI_SUM) from 4 bytes to 4 MiB, every result checked,
 * for ucx_mpi.sh: Open MPI's pml ucx over sroce, as an HPC or AI job uses
 * it. Each rank's vector holds small integers, whose float sums are exact,
 * so any byte lost, duplicated or misplaced shows. Rank 0 prints one line
 * per size with the mean time of an allreduce; the exit status is 0 only
 * when every rank saw every element right.
 *
 *   mpirun -np N mpi_allreduce [ITERS]
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_BYTES	(4 * 1024 * 1024)
#define MAX_FLOATS	(MAX_BYTES / (int)sizeof(float))

static float value(int rank, int i, int iter)
{
	return (float)((rank + 1) * (i % 13 + 1) + iter);
}

int main(int argc, char **argv)
{
	int iters = argc > 1 ? atoi(argv[1]) : 3;
	long bad = 0, all_bad = 0;
	int rank, size, n, i, it;
	float *in, *out;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	in = malloc(MAX_FLOATS * sizeof(*in));
	out = malloc(MAX_FLOATS * sizeof(*out));
	if (!in || !out || iters < 1)
		MPI_Abort(MPI_COMM_WORLD, 2);

	for (n = 1; n <= MAX_FLOATS; n *= 4) {
		double t = 0, start;

		for (it = 0; it < iters; it++) {
			for (i = 0; i < n; i++) {
				in[i] = value(rank, i, it);
				out[i] = -1;
			}
			MPI_Barrier(MPI_COMM_WORLD);
			start = MPI_Wtime();
			MPI_Allreduce(in, out, n, MPI_FLOAT, MPI_SUM,
				      MPI_COMM_WORLD);
			t += MPI_Wtime() - start;
			for (i = 0; i < n; i++) {
				/* sum over ranks r of (r + 1) * k + it */
				float want = (float)(size * (size + 1) / 2 *
						     (i % 13 + 1) + size * it);

				if (out[i] != want && bad++ < 5)
					fprintf(stderr,
						"rank %d: %d floats, [%d] = %g, want %g\n",
						rank, n, i, out[i], want);
			}
		}
		if (!rank)
			printf("allreduce %d ranks %zu bytes: %.1f us\n", size,
			       n * sizeof(float), t / iters * 1e6);
	}
	MPI_Allreduce(&bad, &all_bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
	if (!rank)
		printf("allreduce %d ranks: %ld wrong elements\n", size,
		       all_bad);
	free(in);
	free(out);
	MPI_Finalize();
	return all_bad ? 1 : 0;
}
