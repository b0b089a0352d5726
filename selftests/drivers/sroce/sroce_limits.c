// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_limits: push a device against its limits, for limits.sh.
 *
 *   sroce_limits DEV attrs      print "max_qp N max_cq N max_mr N"
 *   sroce_limits DEV qp|cq|mr   create objects until the device refuses;
 *                               print "made N errno E", then the same
 *                               after freeing one and retrying ("again")
 *   sroce_limits DEV memlock KIB
 *                               register regions of KIB KiB until one is
 *                               refused; print "made N errno E", then free
 *                               one and print whether a retry worked
 *   sroce_limits DEV keys N     register and deregister a region N times;
 *                               print "keys N repeated R stepped S": keys
 *                               handed out more than once, and next keys
 *                               whose low byte is the last one's plus one
 *   sroce_limits DEV rings N    create up to N CQs of 32768 entries (2 MiB);
 *                               print "rings made M bytes B errno E", B
 *                               the ring memory they hold
 *   sroce_limits DEV hog        take every CQ, QP, MR, AH and PD the
 *                               device gives a user, print "hog cq N qp N
 *                               mr N ah N pd N", hold them until a line
 *                               (or EOF) comes on stdin, then free them
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>
#include <rdma/sroce-abi.h>
#include "sroce_test.h"

#define MAX_OBJS	300000

static void *objs[MAX_OBJS];

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	return ctx;
}

static void *make(const char *kind, struct ibv_context *ctx,
		  struct ibv_pd *pd, struct ibv_cq *cq, void *buf, size_t len)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	if (!strcmp(kind, "qp"))
		return ibv_create_qp(pd, &ia);
	if (!strcmp(kind, "cq"))
		return ibv_create_cq(ctx, 1, NULL, NULL, 0);
	return ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE);
}

static int destroy(const char *kind, void *obj)
{
	if (!strcmp(kind, "qp"))
		return ibv_destroy_qp(obj);
	if (!strcmp(kind, "cq"))
		return ibv_destroy_cq(obj);
	return ibv_dereg_mr(obj);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Keys of N registrations one after another: none may come back. */
static int key_reuse(struct ibv_pd *pd, int n)
{
	static char page[4096];
	uint32_t *key = calloc(n, sizeof(*key));
	int i, repeated = 0, stepped = 0;
	struct ibv_mr *mr;

	if (!key)
		return 1;
	for (i = 0; i < n; i++) {
		mr = ibv_reg_mr(pd, page, sizeof(page), IBV_ACCESS_LOCAL_WRITE);
		if (!mr) {
			fprintf(stderr, "registration %d: %s\n", i,
				strerror(errno));
			return 1;
		}
		key[i] = mr->rkey;
		stepped += i && (uint8_t)(key[i - 1] + 1) == (uint8_t)key[i];
		if (ibv_dereg_mr(mr))
			return 1;
	}
	qsort(key, n, sizeof(*key), cmp_u32);
	for (i = 1; i < n; i++)
		repeated += key[i] == key[i - 1];
	printf("keys %d repeated %d stepped %d\n", n, repeated, stepped);
	free(key);
	return 0;
}

/* CQs of @cqe entries until refused or @n: ring memory is charged. */
static int make_rings(struct ibv_context *ctx, int cqe, int n)
{
	unsigned long long bytes = 0;
	int made, err = 0;

	for (made = 0; made < n && made < MAX_OBJS; made++) {
		struct ibv_cq *cq = ibv_create_cq(ctx, cqe, NULL, NULL, 0);

		if (!cq) {
			err = errno;
			break;
		}
		objs[made] = cq;
		bytes += (unsigned long long)cq->cqe * sizeof(struct sroce_cqe) +
			 SROCE_RING_HDR_SIZE;
	}
	printf("rings made %d bytes %llu errno %d\n", made, bytes, err);
	while (made-- > 0)
		ibv_destroy_cq(objs[made]);
	return 0;
}

/* Everything a user may take, held until told to let go. */
static int take_all(struct ibv_context *ctx, struct ibv_pd *pd,
		    struct ibv_cq *cq, char *buf)
{
	static const char *const kinds[] = { "cq", "qp", "mr", "ah", "pd" };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	int counts[5] = { 0 }, k, n = 0, first;
	char line[16];

	aa.grh.hop_limit = 64;
	/* A GID of the device itself: AHs that point at it. */
	aa.grh.sgid_index = sroce_find_gid(ctx, AF_UNSPEC, NULL, 0,
					   &aa.grh.dgid);
	if (aa.grh.sgid_index < 0)
		return 1;
	for (k = 0; k < 5; k++) {
		for (first = n; n < MAX_OBJS; n++) {
			if (k == 3)
				objs[n] = ibv_create_ah(pd, &aa);
			else if (k == 4)
				objs[n] = ibv_alloc_pd(ctx);
			else
				objs[n] = make(kinds[k], ctx, pd, cq, buf, 4096);
			if (!objs[n])
				break;
		}
		counts[k] = n - first;
		if (errno != ENOMEM) {
			fprintf(stderr, "%s: %s\n", kinds[k], strerror(errno));
			return 1;
		}
	}
	printf("hog cq %d qp %d mr %d ah %d pd %d\n", counts[0], counts[1],
	       counts[2], counts[3], counts[4]);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0;
	for (k = 4; k >= 0; k--)
		while (counts[k]-- > 0) {
			void *o = objs[--n];

			if (k == 3 ? ibv_destroy_ah(o) : k == 4 ?
			    ibv_dealloc_pd(o) : destroy(kinds[k], o))
				return 1;
		}
	return 0;
}

int main(int argc, char **argv)
{
	struct ibv_device_attr attr;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	const char *kind;
	size_t len = 4096;
	char *buf;
	int n, err, ret = 0;
	void *again;

	if (argc < 3) {
		fprintf(stderr, "usage: %s DEV attrs|qp|cq|mr|memlock KIB|keys N|rings N|hog\n",
			argv[0]);
		return 64;
	}
	kind = argv[2];
	ctx = open_dev(argv[1]);
	if (!ctx || ibv_query_device(ctx, &attr)) {
		fprintf(stderr, "cannot open or query %s\n", argv[1]);
		return 1;
	}
	if (!strcmp(kind, "attrs")) {
		printf("max_qp %d max_cq %d max_mr %d\n", attr.max_qp,
		       attr.max_cq, attr.max_mr);
		return 0;
	}
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	if (!pd || !cq)
		return 1;
	if (!strcmp(kind, "rings"))
		return argc < 4 ? 64 : make_rings(ctx, 32768, atoi(argv[3]));
	if (!strcmp(kind, "keys"))
		return argc < 4 ? 64 : key_reuse(pd, atoi(argv[3]));
	if (!strcmp(kind, "memlock")) {
		if (argc < 4)
			return 64;
		len = strtoul(argv[3], NULL, 0) * 1024;
		kind = "mr";
	}
	/* One buffer; every region covers its own part of it. */
	buf = mmap(NULL, len * 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (buf == MAP_FAILED)
		return 1;
	if (!strcmp(kind, "hog"))
		return take_all(ctx, pd, cq, buf);
	for (n = 0; n < MAX_OBJS; n++) {
		objs[n] = make(kind, ctx, pd, cq,
			       buf + (size_t)(n % 4096) * len, len);
		if (!objs[n])
			break;
	}
	err = errno;
	printf("made %d errno %d\n", n, n < MAX_OBJS ? err : 0);
	if (n > 0 && n < MAX_OBJS) {
		/* Freeing one makes room for one. */
		if (destroy(kind, objs[0]))
			ret = 1;
		again = make(kind, ctx, pd, cq, buf, len);
		printf("again %s\n", again ? "made" : "refused");
		objs[0] = again;
	}
	while (n-- > 0)
		if (objs[n] && destroy(kind, objs[n]))
			ret = 1;
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return ret;
}
