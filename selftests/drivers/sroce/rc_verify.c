// SPDX-License-Identifier: GPL-2.0
/*
 * rc_verify: one RC connection between two hosts, any two RoCEv2 devices,
 * every byte checked. The client drives, the server checks what arrives:
 *
 *   SENDs of 1 B to 64 KiB (the server checks length and content),
 *   RDMA WRITEs into the server's region (the server checks its memory),
 *   RDMA READs of a region the server filled (the client checks),
 *   100 FETCH_ADDs and two COMPARE_SWAPs on one word (the client checks
 *   every returned value, the server the final one).
 *
 * The two exchange QP numbers, PSNs, GIDs, MTUs and keys over TCP.
 *
 *   rc_verify server DEV GID_INDEX [PORT]
 *   rc_verify client DEV GID_INDEX SERVER_IP [PORT]
 *
 * Exit status 0 when every check held on both sides, 1 otherwise. The QP's
 * local ACK timeout is 14 (67 ms), or SROCE_VERIFY_TIMEOUT (0 to 31).
 */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>
#include "sroce_test.h"

#define KIB		1024u
#define REGION		(2048 * KIB)
#define SEND_AREA	(1024 * KIB)	/* server: receives land here */
#define READ_AREA	(512 * KIB)	/* server: filled for the READs */
#define WRITE_LEN	(256 * KIB)
#define ATOMIC_OFF	(REGION - 64)
#define NRECV		8
#define RECV_LEN	(64 * KIB)

struct peer_info {
	uint32_t qpn, psn, rkey, mtu;
	uint64_t va;
	uint8_t gid[16];
};

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static struct ibv_mr *mr;
static unsigned char *buf;
static int failures;

#define CHECK(cond, ...) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "rc_verify: " __VA_ARGS__);		\
		fputc('\n', stderr);					\
		failures++;						\
	}								\
} while (0)

static unsigned char pattern(unsigned int seed, size_t i)
{
	return (unsigned char)(seed * 131 + i * 7 + (i >> 8));
}

static void fill(unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern(seed, i);
}

static size_t mismatch(const unsigned char *p, size_t len, unsigned int seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern(seed, i))
			return i;
	return len;
}

static int tcp_connect(const char *host, const char *port, int server)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = server ? AI_PASSIVE : 0 };
	struct addrinfo *res;
	int fd, one = 1, conn, tries;

	if (getaddrinfo(host, port, &hints, &res))
		return -1;
	fd = socket(res->ai_family, SOCK_STREAM, 0);
	if (fd < 0)
		goto out;
	if (server) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, 1)) {
			close(fd);
			fd = -1;
			goto out;
		}
		conn = accept(fd, NULL, NULL);
		close(fd);
		fd = conn;
		goto out;
	}
	/*
	 * The server may not listen yet: retry for up to 30 s, each time
	 * with a new socket (one whose connect failed keeps its error).
	 */
	for (tries = 0; tries < 300; tries++) {
		if (!connect(fd, res->ai_addr, res->ai_addrlen))
			goto out;
		close(fd);
		usleep(100000);
		fd = socket(res->ai_family, SOCK_STREAM, 0);
		if (fd < 0)
			goto out;
	}
	close(fd);
	fd = -1;
out:
	freeaddrinfo(res);
	return fd;
}

static int xfer(int fd, void *out, void *in, size_t len)
{
	size_t done;
	ssize_t n;

	for (done = 0; out && done < len; done += n) {
		n = write(fd, (char *)out + done, len - done);
		if (n <= 0)
			return -1;
	}
	for (done = 0; in && done < len; done += n) {
		n = read(fd, (char *)in + done, len - done);
		if (n <= 0)
			return -1;
	}
	return 0;
}

static int wait_wc(struct ibv_wc *wc)
{
	if (sroce_wait_wc(cq, wc, 60000) == 1)
		return 0;
	fprintf(stderr, "rc_verify: no completion in 60 s\n");
	return -1;
}

static int post_recv(uint64_t id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf + SEND_AREA + id * RECV_LEN,
		.length = RECV_LEN, .lkey = mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge,
				  .num_sge = 1 }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

/* Post one send WR and wait for it; returns its completion status. */
static int post_wait(enum ibv_wr_opcode op, size_t off, uint32_t len,
		     const struct peer_info *p, uint64_t remote, uint64_t cmp,
		     uint64_t swap)
{
	struct ibv_sge sge = { .addr = (uintptr_t)buf + off, .length = len,
			       .lkey = mr->lkey };
	struct ibv_send_wr wr = { .wr_id = off, .sg_list = &sge, .num_sge = 1,
				  .opcode = op,
				  .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_wc wc;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD ||
	    op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = p->va + remote;
		wr.wr.atomic.rkey = p->rkey;
		wr.wr.atomic.compare_add = cmp;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = p->va + remote;
		wr.wr.rdma.rkey = p->rkey;
	}
	if (ibv_post_send(qp, &wr, &bad) || wait_wc(&wc))
		return -1;
	return wc.status;
}

static int setup(const char *dev, int gidx, struct peer_info *me)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = NRECV,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_device **list;
	struct ibv_port_attr port;
	union ibv_gid gid;
	int i, n;

	list = ibv_get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), dev))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx || ibv_query_port(ctx, 1, &port) ||
	    ibv_query_gid(ctx, 1, gidx, &gid))
		return -1;
	buf = aligned_alloc(4096, REGION);
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!buf || !pd || !cq)
		return -1;
	memset(buf, 0, REGION);
	mr = ibv_reg_mr(pd, buf, REGION, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC);
	ia.send_cq = cq;
	ia.recv_cq = cq;
	qp = mr ? ibv_create_qp(pd, &ia) : NULL;
	if (!qp || to_init(qp))
		return -1;
	srand48(getpid() ^ time(NULL));
	me->qpn = qp->qp_num;
	me->psn = lrand48() & 0xffffff;
	me->rkey = mr->rkey;
	me->va = (uintptr_t)buf;
	me->mtu = port.active_mtu;
	memcpy(me->gid, gid.raw, 16);
	return 0;
}

static int connect_qp(int gidx, const struct peer_info *me,
		      const struct peer_info *p)
{
	const char *timeout = getenv("SROCE_VERIFY_TIMEOUT");
	struct sroce_rc_path path = {
		.sgid_index = gidx, .dest_qpn = p->qpn, .rq_psn = p->psn,
		.sq_psn = me->psn, .mtu = me->mtu < p->mtu ? me->mtu : p->mtu,
		.rd_atomic = 4, .timeout = timeout ? atoi(timeout) & 31 : 14,
		.retry = 7, .hop_limit = 64,
	};

	memcpy(path.dgid.raw, p->gid, 16);
	return sroce_rc_rtr_rts(qp, &path);
}

static const uint32_t send_lens[] = { 1, 100, 4095, 4096, 5000, 65536 };
#define NSEND ARRAY_SIZE(send_lens)

static void run_server(int fd)
{
	uint64_t final, want = 0xdeadbeefcafe0000ull;
	struct ibv_wc wc;
	char msg;
	size_t i, at;

	/* The receives are posted before the client hears our QP number. */
	for (i = 0; i < NSEND; i++) {
		if (wait_wc(&wc)) {
			failures++;
			return;
		}
		CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV,
		      "receive %zu: status %d opcode %d", i, wc.status,
		      wc.opcode);
		CHECK(wc.byte_len == send_lens[i], "SEND %zu: %u bytes, want %u",
		      i, wc.byte_len, send_lens[i]);
		at = mismatch(buf + SEND_AREA + wc.wr_id * RECV_LEN,
			      send_lens[i], 100 + i);
		CHECK(at == send_lens[i], "SEND %zu: byte %zu differs", i, at);
	}
	printf("server: %zu SENDs received and checked\n", NSEND);
	/* The client says when its WRITEs and atomics are done. */
	if (xfer(fd, NULL, &msg, 1)) {
		failures++;
		return;
	}
	at = mismatch(buf, WRITE_LEN, 7);
	CHECK(at == WRITE_LEN, "WRITE data: byte %zu differs", at);
	memcpy(&final, buf + ATOMIC_OFF, 8);
	CHECK(final == want, "atomic word %#llx, want %#llx",
	      (unsigned long long)final, (unsigned long long)want);
	printf("server: %u written bytes and the atomic word checked\n",
	       WRITE_LEN);
}

static void run_client(const struct peer_info *p)
{
	uint64_t got, i;
	uint32_t off, len;
	size_t at;
	int st;

	for (i = 0; i < NSEND; i++) {
		fill(buf + i * RECV_LEN, send_lens[i], 100 + i);
		st = post_wait(IBV_WR_SEND, i * RECV_LEN, send_lens[i], p, 0, 0,
			       0);
		CHECK(st == IBV_WC_SUCCESS, "SEND %llu: status %d",
		      (unsigned long long)i, st);
	}
	/* WRITEs of odd sizes that tile the area, then READ it all back. */
	fill(buf, WRITE_LEN, 7);
	for (off = 0, len = 1; off < WRITE_LEN; off += len, len = len * 3 + 5) {
		if (len > WRITE_LEN - off)
			len = WRITE_LEN - off;
		st = post_wait(IBV_WR_RDMA_WRITE, off, len, p, off, 0, 0);
		CHECK(st == IBV_WC_SUCCESS, "WRITE at %u: status %d", off, st);
	}
	memset(buf + REGION / 2, 0, WRITE_LEN);
	st = post_wait(IBV_WR_RDMA_READ, REGION / 2, WRITE_LEN, p, 0, 0, 0);
	at = mismatch(buf + REGION / 2, WRITE_LEN, 7);
	CHECK(st == IBV_WC_SUCCESS && at == WRITE_LEN,
	      "READ back: status %d, byte %zu differs", st, at);
	/* READ what the server filled, in pieces. */
	memset(buf + REGION / 2, 0, READ_AREA);
	for (off = 0; off < READ_AREA; off += 65536 + 17) {
		len = off + 65536 + 17 > READ_AREA ? READ_AREA - off :
						     65536 + 17;
		st = post_wait(IBV_WR_RDMA_READ, REGION / 2 + off, len, p,
			       READ_AREA + off, 0, 0);
		CHECK(st == IBV_WC_SUCCESS, "READ at %u: status %d", off, st);
	}
	at = mismatch(buf + REGION / 2, READ_AREA, 9);
	CHECK(at == READ_AREA, "READ data: byte %zu differs", at);
	for (i = 0; i < 100; i++) {
		st = post_wait(IBV_WR_ATOMIC_FETCH_AND_ADD, 0, 8, p,
			       ATOMIC_OFF, 3, 0);
		memcpy(&got, buf, 8);
		CHECK(st == IBV_WC_SUCCESS && got == 3 * i,
		      "FETCH_ADD %llu: status %d, got %llu",
		      (unsigned long long)i, st, (unsigned long long)got);
	}
	st = post_wait(IBV_WR_ATOMIC_CMP_AND_SWP, 0, 8, p, ATOMIC_OFF, 300,
		       0xdeadbeefcafe0000ull);
	memcpy(&got, buf, 8);
	CHECK(st == IBV_WC_SUCCESS && got == 300,
	      "COMPARE_SWAP hit: status %d, got %llu", st,
	      (unsigned long long)got);
	st = post_wait(IBV_WR_ATOMIC_CMP_AND_SWP, 0, 8, p, ATOMIC_OFF, 1, 5);
	memcpy(&got, buf, 8);
	CHECK(st == IBV_WC_SUCCESS && got == 0xdeadbeefcafe0000ull,
	      "COMPARE_SWAP miss: status %d, got %#llx", st,
	      (unsigned long long)got);
	printf("client: %zu SENDs, %u bytes written and read back, %u read, 102 atomics\n",
	       NSEND, WRITE_LEN, READ_AREA);
}

int main(int argc, char **argv)
{
	int server = argc >= 4 && !strcmp(argv[1], "server");
	int client = argc >= 5 && !strcmp(argv[1], "client");
	struct peer_info me, peer;
	const char *port;
	int fd, gidx, i;
	char ok, peer_ok = 0;

	if (!server && !client) {
		fprintf(stderr, "usage: %s server DEV GID_INDEX [PORT]\n"
			"       %s client DEV GID_INDEX SERVER_IP [PORT]\n",
			argv[0], argv[0]);
		return 64;
	}
	gidx = atoi(argv[3]);
	port = server ? (argc > 4 ? argv[4] : "18600") :
			(argc > 5 ? argv[5] : "18600");
	if (setup(argv[2], gidx, &me)) {
		perror("rc_verify: device setup");
		return 1;
	}
	if (server) {
		fill(buf + READ_AREA, READ_AREA, 9);
		for (i = 0; i < NRECV; i++)
			if (post_recv(i))
				return 1;
	}
	fd = tcp_connect(server ? NULL : argv[4], port, server);
	if (fd < 0 || xfer(fd, &me, NULL, sizeof(me)) ||
	    xfer(fd, NULL, &peer, sizeof(peer)) ||
	    connect_qp(gidx, &me, &peer)) {
		perror("rc_verify: connection");
		return 1;
	}
	/* Both QPs ready to receive before the first SEND. */
	ok = 1;
	if (xfer(fd, &ok, &peer_ok, 1))
		return 1;
	if (server) {
		run_server(fd);
	} else {
		run_client(&peer);
		ok = 'd';
		if (xfer(fd, &ok, NULL, 1))
			failures++;
	}
	ok = failures == 0;
	if (xfer(fd, &ok, &peer_ok, 1))
		peer_ok = 0;
	close(fd);
	printf("%s: %s, peer %s\n", server ? "server" : "client",
	       ok ? "all checks held" : "CHECKS FAILED",
	       peer_ok ? "agrees" : "FAILED");
	ibv_destroy_qp(qp);
	ibv_dereg_mr(mr);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return ok && peer_ok ? 0 : 1;
}
