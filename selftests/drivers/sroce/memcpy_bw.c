// SPDX-License-Identifier: GPL-2.0
/*
 * The bench's ceiling: how fast this machine copies memory, the one thing
 * every transport here must do at least once per byte. Copies one buffer
 * into another (64 MiB each by default, far beyond any cache) for about
 * a second and prints the best pass in MB/s of 2^20 bytes, perftest's unit.
 *
 *   memcpy_bw [MIB]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t mib = argc > 1 ? strtoul(argv[1], NULL, 0) : 64;
	size_t len = mib << 20;
	double best = 0, start, t;
	char *src, *dst;

	if (!mib || argc > 2) {
		fprintf(stderr, "usage: memcpy_bw [MIB]\n");
		return 2;
	}
	src = malloc(len);
	dst = malloc(len);
	if (!src || !dst) {
		perror("malloc");
		return 1;
	}
	/* Fault every page in first: the copy is what is measured. */
	memset(src, 0x5a, len);
	memset(dst, 0xa5, len);
	start = now();
	do {
		t = now();
		memcpy(dst, src, len);
		t = now() - t;
		if (mib / t > best)
			best = mib / t;
		src[len / 2]++;	/* keep the copies from being optimised away */
	} while (now() - start < 1.0);
	if (memcmp(dst, src, len - len / 2))
		return 1;
	printf("memcpy MB/s: %.1f\n", best);
	return 0;
}
