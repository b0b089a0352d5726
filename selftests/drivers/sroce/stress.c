// SPDX-License-Identifier: GPL-2.0
/*
 * stress: thousands of RC QPs at once, in loopback pairs on one device,
 * each pair doing a different operation every wave (SEND, RDMA WRITE,
 * RDMA READ, FETCH_ADD), every byte and every returned value checked,
 * until a time bound. Completions share a few CQs, as servers do.
 *
 * Environment: SROCE_DEV (required), SROCE_STRESS_PAIRS (default 1000),
 * SROCE_STRESS_SECS (default 60). Prints the waves and operations done;
 * exit status 0 only when every check held.
 */
#include <stdint.h>
#include <time.h>
#include "sroce_test.h"

#define SLOT		4096	/* bytes per QP: its send/read/atomic area */
#define NCQ		4
#define OPS		4

struct pair {
	struct ibv_qp *qp[2];
	uint64_t adds;		/* FETCH_ADDs done on this pair's word */
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cqs[NCQ];
static struct ibv_mr *mr;
static unsigned char *mem;
static struct pair *pairs;
static int npairs, gidx = -1;
static union ibv_gid gid;
static long failures;

static unsigned char *slot(int p, int side)
{
	return mem + ((size_t)p * 2 + side) * SLOT;
}

static unsigned char pat(int p, long wave, size_t i)
{
	return (unsigned char)(p * 13 + wave * 7 + i);
}

static int setup(const char *dev)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		return -1;
	gidx = sroce_find_gid(ctx, AF_INET, NULL, 0, &gid);
	pd = ibv_alloc_pd(ctx);
	mem = calloc((size_t)npairs * 2, SLOT);
	if (gidx < 0 || !pd || !mem)
		return -1;
	mr = ibv_reg_mr(pd, mem, (size_t)npairs * 2 * SLOT,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC);
	for (i = 0; i < NCQ; i++)
		cqs[i] = ibv_create_cq(ctx, npairs * 4 / NCQ + 16, NULL, NULL,
				       0);
	return mr && cqs[NCQ - 1] ? 0 : -1;
}

static int connect_pair(struct pair *pr, int p)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 2, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct sroce_rc_path path = {
		.dgid = gid, .sgid_index = gidx, .mtu = IBV_MTU_1024,
		.rd_atomic = 1, .timeout = 14, .retry = 7, .hop_limit = 1,
	};
	int s;

	for (s = 0; s < 2; s++) {
		ia.send_cq = cqs[(p * 2 + s) % NCQ];
		ia.recv_cq = ia.send_cq;
		pr->qp[s] = ibv_create_qp(pd, &ia);
		if (!pr->qp[s] || to_init(pr->qp[s]))
			return -1;
	}
	for (s = 0; s < 2; s++) {
		path.dest_qpn = pr->qp[!s]->qp_num;
		if (sroce_rc_rtr_rts(pr->qp[s], &path))
			return -1;
	}
	return 0;
}

/* Post pair p's operation of this wave; returns completions to expect. */
static int post(int p, long wave)
{
	int op = (p + wave) % OPS;
	struct pair *pr = &pairs[p];
	unsigned char *src = slot(p, 0), *dst = slot(p, 1);
	uint32_t len = 1 + (p * 31 + wave * 17) % (SLOT - 64);
	struct ibv_sge s = { (uintptr_t)src, len, mr->lkey };
	struct ibv_sge r = { (uintptr_t)dst, SLOT, mr->lkey };
	struct ibv_recv_wr rwr = { .wr_id = p, .sg_list = &r, .num_sge = 1 };
	struct ibv_send_wr wr = { .wr_id = p, .sg_list = &s, .num_sge = 1,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr *rbad;
	size_t i;

	switch (op) {
	case 0:		/* SEND from side 0 into side 1's slot */
		for (i = 0; i < len; i++)
			src[i] = pat(p, wave, i);
		wr.opcode = IBV_WR_SEND;
		if (ibv_post_recv(pr->qp[1], &rwr, &rbad))
			return -1;
		break;
	case 1:		/* WRITE side 0's slot into side 1's */
		for (i = 0; i < len; i++)
			src[i] = pat(p, wave, i);
		wr.opcode = IBV_WR_RDMA_WRITE;
		wr.wr.rdma.remote_addr = (uintptr_t)dst;
		wr.wr.rdma.rkey = mr->rkey;
		break;
	case 2:		/* READ side 1's slot into side 0's */
		for (i = 0; i < len; i++)
			dst[i] = pat(p, wave, i);
		memset(src, 0, len);
		wr.opcode = IBV_WR_RDMA_READ;
		wr.wr.rdma.remote_addr = (uintptr_t)dst;
		wr.wr.rdma.rkey = mr->rkey;
		break;
	default:	/* FETCH_ADD on side 1's last word */
		s.length = 8;
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		wr.wr.atomic.remote_addr = (uintptr_t)dst + SLOT - 8;
		wr.wr.atomic.rkey = mr->rkey;
		wr.wr.atomic.compare_add = 1;
		break;
	}
	if (ibv_post_send(pr->qp[0], &wr, &bad))
		return -1;
	return op == 0 ? 2 : 1;
}

static void check(int p, long wave)
{
	int op = (p + wave) % OPS;
	unsigned char *src = slot(p, 0), *dst = slot(p, 1);
	uint32_t len = 1 + (p * 31 + wave * 17) % (SLOT - 64);
	uint64_t v;
	size_t i;

	if (op == 0 || op == 1 || op == 2) {
		const unsigned char *got = op == 2 ? src : dst;

		for (i = 0; i < len; i++)
			if (got[i] != pat(p, wave, i)) {
				if (failures++ < 10)
					fprintf(stderr, "pair %d wave %ld op %d: byte %zu\n",
						p, wave, op, i);
				break;
			}
		return;
	}
	memcpy(&v, src, 8);
	if (v != pairs[p].adds && failures++ < 10)
		fprintf(stderr, "pair %d: FETCH_ADD returned %llu, want %llu\n",
			p, (unsigned long long)v,
			(unsigned long long)pairs[p].adds);
	pairs[p].adds++;
	memcpy(&v, dst + SLOT - 8, 8);
	if (v != pairs[p].adds && failures++ < 10)
		fprintf(stderr, "pair %d: word %llu after the add\n", p,
			(unsigned long long)v);
}

int main(void)
{
	const char *dev = getenv("SROCE_DEV");
	const char *e = getenv("SROCE_STRESS_PAIRS");
	int secs = getenv("SROCE_STRESS_SECS") ?
		   atoi(getenv("SROCE_STRESS_SECS")) : 60;
	time_t end;
	long wave, ops = 0;
	struct ibv_wc wc[64];
	int p, i, n, want, got;

	npairs = e ? atoi(e) : 1000;
	if (!dev || npairs < 1) {
		fprintf(stderr, "set SROCE_DEV\n");
		return 64;
	}
	pairs = calloc(npairs, sizeof(*pairs));
	if (!pairs || setup(dev)) {
		perror("setup");
		return 1;
	}
	for (p = 0; p < npairs; p++)
		if (connect_pair(&pairs[p], p)) {
			fprintf(stderr, "pair %d: cannot connect\n", p);
			return 1;
		}
	printf("%d QPs connected in %d pairs\n", 2 * npairs, npairs);
	end = time(NULL) + secs;
	for (wave = 0; time(NULL) < end && failures == 0; wave++) {
		want = 0;
		for (p = 0; p < npairs; p++) {
			n = post(p, wave);
			if (n < 0) {
				fprintf(stderr, "pair %d: post failed\n", p);
				return 1;
			}
			want += n;
		}
		for (got = 0; got < want;) {
			if (time(NULL) > end + 60) {
				fprintf(stderr, "wave %ld: %d of %d completions\n",
					wave, got, want);
				return 1;
			}
			for (i = 0; i < NCQ; i++) {
				n = ibv_poll_cq(cqs[i], 64, wc);
				while (n-- > 0) {
					got++;
					if (wc[n].status != IBV_WC_SUCCESS &&
					    failures++ < 10)
						fprintf(stderr, "pair %llu: status %s\n",
							(unsigned long long)wc[n].wr_id,
							ibv_wc_status_str(wc[n].status));
				}
			}
		}
		for (p = 0; p < npairs; p++)
			check(p, wave);
		ops += npairs;
	}
	printf("%ld waves, %ld operations checked, %ld failures\n", wave, ops,
	       failures);
	for (p = 0; p < npairs; p++) {
		ibv_destroy_qp(pairs[p].qp[0]);
		ibv_destroy_qp(pairs[p].qp[1]);
	}
	ibv_dereg_mr(mr);
	for (i = 0; i < NCQ; i++)
		ibv_destroy_cq(cqs[i]);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return failures || wave < 2 ? 1 : 0;
}
