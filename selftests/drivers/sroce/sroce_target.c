// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_target: live RC queue pairs for a scripted peer (roce_pkt.py,
 * roce_fuzz.py) to talk to. The peer has no RDMA device: it writes the
 * frames itself, so every field is the test's to choose.
 *
 *   sroce_target DEV LOCAL_IP PEER_IP
 *
 * then one command per line on stdin, one answer line each on stdout:
 *
 *   qp QP_ACCESS MR_ACCESS DEST_QPN [TIMEOUT]
 *        an RC QP in RTS (both PSNs 0, local ACK timeout TIMEOUT, 14
 *        unless given; 0: none) towards PEER_IP's DEST_QPN, its own
 *        zeroed 16 KiB region and 32 posted receives into it (512 bytes
 *        each, in order)
 *        -> "qp IDX QPN RKEY VA LEN" or "err ERRNO"
 *   uc QP_ACCESS MR_ACCESS DEST_QPN
 *        the same with a UC QP
 *   state IDX         -> "state IDX IBV_QPS_*"
 *   mem IDX OFF LEN   -> "mem IDX HEX"
 *   cqes IDX          -> "cqes IDX N STATUS..." (drains the QP's CQ)
 *   send IDX LEN      -> "send IDX RC": posts a signaled SEND of the
 *                        region's first LEN bytes, for the peer to
 *                        answer (or not)
 *   error IDX         -> "error IDX RC" (moves the QP to the error state)
 *   destroy IDX       -> "destroyed IDX RC"
 *   guards            -> "guards ok", or "guards bad IDX" for the first QP
 *                        whose region's guard pages (a page on each side,
 *                        filled with 0x5a) changed: a write outside the
 *                        region
 *   quit
 */
#include <arpa/inet.h>
#include <sys/mman.h>
#include "sroce_test.h"

#define MAX_QPS		4096
#define REGION_LEN	16384
#define RECVS		32
#define GUARD		4096
#define GUARD_BYTE	0x5a

struct target {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	unsigned char *buf;	/* the region, between two guard pages */
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct target t[MAX_QPS];
static int nqps;
static int sgid_index = -1;
static union ibv_gid peer_gid;

static int connect_uc(struct ibv_qp *qp, unsigned int dqpn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = IBV_MTU_1024,
		.dest_qp_num = dqpn,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = peer_gid,
				      .sgid_index = sgid_index,
				      .hop_limit = 64 } },
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN))
		return errno;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN) ? errno : 0;
}

static int connect_qp(struct ibv_qp *qp, int qp_access, unsigned int dqpn,
		      int timeout)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = qp_access,
	};
	struct sroce_rc_path path = {
		.dgid = peer_gid, .sgid_index = sgid_index,
		.mtu = IBV_MTU_1024, .rd_atomic = 16, .timeout = timeout, .retry = 7,
		.hop_limit = 64,
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return errno;
	if (qp->qp_type == IBV_QPT_UC)
		return connect_uc(qp, dqpn);
	path.dest_qpn = dqpn;
	return sroce_rc_rtr_rts(qp, &path);
}

static int new_qp(enum ibv_qp_type type, int qp_access, int mr_access,
		  unsigned int dqpn, int timeout)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = type,
		.cap = { .max_send_wr = 16, .max_recv_wr = RECVS,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct target *x = &t[nqps];
	int i, err;

	if (nqps == MAX_QPS)
		return ENOSPC;
	x->buf = mmap(NULL, REGION_LEN + 2 * GUARD, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x->buf == MAP_FAILED)
		return ENOMEM;
	memset(x->buf, GUARD_BYTE, REGION_LEN + 2 * GUARD);
	x->buf += GUARD;
	memset(x->buf, 0, REGION_LEN);
	x->mr = ibv_reg_mr(pd, x->buf, REGION_LEN, mr_access);
	if (!x->mr)
		return errno;
	x->cq = ibv_create_cq(ctx, 2 * RECVS, NULL, NULL, 0);
	if (!x->cq)
		return errno;
	ia.send_cq = x->cq;
	ia.recv_cq = x->cq;
	x->qp = ibv_create_qp(pd, &ia);
	if (!x->qp)
		return errno;
	err = connect_qp(x->qp, qp_access, dqpn, timeout);
	if (err)
		return err;
	for (i = 0; i < RECVS; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)x->buf + i * (REGION_LEN / RECVS),
			.length = REGION_LEN / RECVS,
			.lkey = x->mr->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		if (ibv_post_recv(x->qp, &wr, &bad))
			return errno;
	}
	nqps++;
	return 0;
}

static void answer_guards(void)
{
	int i, k;

	for (i = 0; i < nqps; i++)
		for (k = 0; k < GUARD; k++)
			if (t[i].buf[-1 - k] != GUARD_BYTE ||
			    t[i].buf[REGION_LEN + k] != GUARD_BYTE) {
				printf("guards bad %d\n", i);
				return;
			}
	printf("guards ok\n");
}

static struct target *pick(int idx)
{
	return idx >= 0 && idx < nqps && t[idx].qp ? &t[idx] : NULL;
}

static void answer_mem(int idx, struct target *x, int off, int len)
{
	if (off < 0 || len < 0 || off > REGION_LEN || len > REGION_LEN - off) {
		printf("mem %d out-of-range\n", idx);
		return;
	}
	printf("mem %d ", idx);
	while (len--)
		printf("%02x", x->buf[off++]);
	printf("\n");
}

static void answer_cqes(int idx, struct target *x)
{
	struct ibv_wc wc[16];
	char out[1024] = "";
	int n, i, total = 0;

	while ((n = ibv_poll_cq(x->cq, 16, wc)) > 0) {
		for (i = 0; i < n; i++)
			snprintf(out + strlen(out), sizeof(out) - strlen(out),
				 " %d:%d:%u", wc[i].status, wc[i].opcode,
				 wc[i].byte_len);
		total += n;
	}
	printf("cqes %d %d%s\n", idx, total, out);
}

static int post_send(struct target *x, int len)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)x->buf, .length = len, .lkey = x->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (len < 0 || len > REGION_LEN)
		return EINVAL;
	return ibv_post_send(x->qp, &wr, &bad);
}

static void answer_destroy(int idx, struct target *x)
{
	int err;

	err = ibv_destroy_qp(x->qp) ? errno : 0;
	if (!err)
		err = ibv_destroy_cq(x->cq) ? errno : 0;
	if (!err)
		err = ibv_dereg_mr(x->mr) ? errno : 0;
	x->qp = NULL;
	printf("destroyed %d %d\n", idx, err);
}

static void answer(char *line)
{
	struct ibv_qp_init_attr qia;
	struct ibv_qp_attr qa;
	int v[4] = { -1, -1, -1, 14 };
	struct target *x;
	char verb[16];
	int err;

	if (sscanf(line, "%15s %i %i %i %i", verb, &v[0], &v[1], &v[2],
		   &v[3]) < 1)
		verb[0] = 0;
	if (!strcmp(verb, "qp") || !strcmp(verb, "uc")) {
		err = new_qp(verb[0] == 'u' ? IBV_QPT_UC : IBV_QPT_RC,
			     v[0], v[1], v[2], v[3]);
		x = err ? NULL : &t[nqps - 1];
		if (!x)
			printf("err %d\n", err);
		else
			printf("qp %d %u %u %llu %d\n", nqps - 1, x->qp->qp_num,
			       x->mr->rkey,
			       (unsigned long long)(uintptr_t)x->buf,
			       REGION_LEN);
		goto out;
	}
	if (!strcmp(verb, "guards")) {
		answer_guards();
		goto out;
	}
	x = pick(v[0]);
	if (!x)
		printf("bad command\n");
	else if (!strcmp(verb, "state") && !ibv_query_qp(x->qp, &qa,
							 IBV_QP_STATE, &qia))
		printf("state %d %d\n", v[0], qa.qp_state);
	else if (!strcmp(verb, "mem"))
		answer_mem(v[0], x, v[1], v[2]);
	else if (!strcmp(verb, "cqes"))
		answer_cqes(v[0], x);
	else if (!strcmp(verb, "send"))
		printf("send %d %d\n", v[0], post_send(x, v[1]));
	else if (!strcmp(verb, "error"))
		printf("error %d %d\n", v[0],
		       ibv_modify_qp(x->qp, &(struct ibv_qp_attr){
				     .qp_state = IBV_QPS_ERR }, IBV_QP_STATE));
	else if (!strcmp(verb, "destroy"))
		answer_destroy(v[0], x);
	else
		printf("bad command\n");
out:
	fflush(stdout);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	char line[256];
	int i, n;

	if (argc != 4) {
		fprintf(stderr, "usage: %s DEV LOCAL_IP PEER_IP\n", argv[0]);
		return 64;
	}
	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (list)
		ibv_free_device_list(list);
	if (!ctx) {
		fprintf(stderr, "cannot open %s\n", argv[1]);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	sgid_index = sroce_find_gid(ctx, AF_INET, argv[2], 0, NULL);
	if (!pd || sgid_index < 0) {
		fprintf(stderr, "no PD or no RoCEv2 GID for %s\n", argv[2]);
		return 1;
	}
	sroce_ip_gid(AF_INET, argv[3], &peer_gid);
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (!strncmp(line, "quit", 4))
			break;
		answer(line);
	}
	for (i = 0; i < nqps; i++)
		if (t[i].qp) {
			ibv_destroy_qp(t[i].qp);
			ibv_destroy_cq(t[i].cq);
			ibv_dereg_mr(t[i].mr);
		}
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}
