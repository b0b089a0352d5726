/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared helpers for the sroce C selftests: every test gets its own veth
 * pair and sroce device, named after its PID, opened with libibverbs.
 */
#ifndef SROCE_TEST_H
#define SROCE_TEST_H

#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

struct sroce_tdev {
	char ibdev[32];
	char veth[IFNAMSIZ];
	char peer[IFNAMSIZ];
	struct ibv_context *ctx;
};

/* Run a shell command built printf-style; returns its exit status. */
static inline int sh(const char *fmt, ...)
{
	char cmd[512];
	va_list ap;
	int ret;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	ret = system(cmd);
	return ret == -1 ? -1 : WEXITSTATUS(ret);
}

/*
 * An IPv4-mapped GID (::ffff:a.b.c.d). The whole prefix counts: a
 * link-local GID's interface ID has 0xff in bytes 10 and 11 whenever the
 * MAC's third byte is 0xff (one random MAC in 256).
 */
static inline int sroce_gid_is_v4(const union ibv_gid *g)
{
	static const unsigned char prefix[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(g->raw, prefix, sizeof(prefix));
}

/* Milliseconds of CLOCK_MONOTONIC. */
static inline uint64_t sroce_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * The GID of IP address @ip of family @af: IPv4 as an IPv4-mapped GID,
 * IPv6 as it is. 0, or -1 when @ip is not such an address.
 */
static inline int sroce_ip_gid(int af, const char *ip, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	if (af == AF_INET) {
		gid->raw[10] = 0xff;
		gid->raw[11] = 0xff;
	}
	return inet_pton(af, ip, af == AF_INET ? &gid->raw[12] : gid->raw) == 1 ?
	       0 : -1;
}

/**
 * sroce_find_gid() - a port-1 RoCE v2 GID of a device.
 * @ctx: the device
 * @af: AF_INET: an IPv4-mapped GID; AF_INET6: an IPv6 one; AF_UNSPEC: any,
 *	an IPv4-mapped one preferred
 * @ip: the GID of this address of family @af, or NULL for any
 * @wait_ms: how long to wait for it to appear (the core adds GIDs from a
 *	workqueue after an address is configured); 0 looks once
 * @gid: set to the GID found; may be NULL
 *
 * Return: its index, or -1.
 */
static inline int sroce_find_gid(struct ibv_context *ctx, int af,
				 const char *ip, int wait_ms,
				 union ibv_gid *gid)
{
	uint64_t end = sroce_now_ms() + wait_ms;
	struct ibv_gid_entry e[64];
	union ibv_gid want;
	ssize_t n, i, best;

	if (ip && sroce_ip_gid(af, ip, &want))
		return -1;
	for (;;) {
		n = ibv_query_gid_table(ctx, e, ARRAY_SIZE(e), 0);
		best = -1;
		for (i = 0; i < n; i++) {
			int v4 = sroce_gid_is_v4(&e[i].gid);

			if (e[i].port_num != 1 ||
			    e[i].gid_type != IBV_GID_TYPE_ROCE_V2 ||
			    (ip && memcmp(&e[i].gid, &want, sizeof(want))) ||
			    (af == AF_INET && !v4) || (af == AF_INET6 && v4))
				continue;
			if (best < 0 || (v4 && !sroce_gid_is_v4(&e[best].gid)))
				best = i;
		}
		if (best >= 0) {
			if (gid)
				*gid = e[best].gid;
			return e[best].gid_index;
		}
		if (sroce_now_ms() >= end)
			return -1;
		usleep(5000);
	}
}

/*
 * Poll @cq for one completion for up to @ms: 1 when one came (in @wc), 0
 * when none did, -1 when polling failed.
 */
static inline int sroce_wait_wc(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	uint64_t end = sroce_now_ms() + ms;
	int n;

	for (;;) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n < 0 ? -1 : 1;
		if (sroce_now_ms() > end)
			return 0;
		usleep(50);
	}
}

/* A QP's state as the kernel has it, or -1. */
static inline int sroce_qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;

	return ibv_query_qp(qp, &a, IBV_QP_STATE, &init) ? -1 : (int)a.qp_state;
}

/*
 * Wait up to @ms for @qp to reach @state (the data path moves a QP to an
 * error state asynchronously); returns the state it is in at the end.
 */
static inline int sroce_wait_qp_state(struct ibv_qp *qp, int state, int ms)
{
	uint64_t end = sroce_now_ms() + ms;
	int st;

	while ((st = sroce_qp_state(qp)) != state && sroce_now_ms() < end)
		usleep(1000);
	return st;
}

/* Send a legacy uverbs write() command; 0 or -errno. */
static inline int uverbs_write(struct ibv_context *ctx, const void *req,
			       size_t len)
{
	return write(ctx->cmd_fd, req, len) == (ssize_t)len ? 0 : -errno;
}

/* RESET to INIT on port 1 with every remote access right. */
static inline int to_init(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/* Where an RC QP connects to and how; sroce_rc_rtr_rts() applies it. */
struct sroce_rc_path {
	union ibv_gid dgid;
	int sgid_index;
	unsigned int dest_qpn;
	unsigned int rq_psn;
	unsigned int sq_psn;
	enum ibv_mtu mtu;
	unsigned char rd_atomic;	/* both directions */
	unsigned char timeout;
	unsigned char retry;		/* retry_cnt and rnr_retry */
	unsigned char hop_limit;
};

/* INIT to RTR to RTS over RoCEv2 (a GRH always); 0 or the errno. */
static inline int sroce_rc_rtr_rts(struct ibv_qp *qp,
				   const struct sroce_rc_path *p)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR, .path_mtu = p->mtu,
		.dest_qp_num = p->dest_qpn, .rq_psn = p->rq_psn,
		.max_dest_rd_atomic = p->rd_atomic, .min_rnr_timer = 1,
		.ah_attr = { .is_global = 1, .port_num = 1,
			     .grh = { .dgid = p->dgid,
				      .sgid_index = p->sgid_index,
				      .hop_limit = p->hop_limit } },
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return errno;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = p->timeout;
	a.retry_cnt = p->retry;
	a.rnr_retry = p->retry;
	a.sq_psn = p->sq_psn;
	a.max_rd_atomic = p->rd_atomic;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		return errno;
	return 0;
}

/*
 * What user space may hold of a device-wide limit @max: sroce keeps an
 * eighth, but at least 16 (or half), for kernel consumers.
 */
static inline int sroce_user_share(int max)
{
	int share = max / 8, floor = max / 2 < 16 ? max / 2 : 16;

	return max - (share > floor ? share : floor);
}

/* Port 1's hardware counter @name of RDMA device @ibdev, or -1. */
static inline long long sroce_counter(const char *ibdev, const char *name)
{
	char path[256];
	long long v = -1;
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/ports/1/hw_counters/%s", ibdev, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

static inline struct ibv_context *open_by_name(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

/*
 * Create the veth pair and the device and open it. Returns 0, or a
 * negative value with @why set: -1 to skip (no root, no module), -2 when
 * a step failed.
 */
static inline int sroce_tdev_up(struct sroce_tdev *d, const char *tag,
				const char **why)
{
	int id = getpid() % 100000;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old_pipe;
	char mac[16];
	FILE *ip;
	int ret;

	snprintf(d->ibdev, sizeof(d->ibdev), "sroce_%s%d", tag, id);
	snprintf(d->veth, sizeof(d->veth), "sr%s%da", tag, id);
	snprintf(d->peer, sizeof(d->peer), "sr%s%db", tag, id);
	d->ctx = NULL;

	if (getuid()) {
		*why = "needs root";
		return -1;
	}
	/* Each program started costs a tenth of a second under emulation. */
	if (access("/sys/module/sroce", F_OK) && sh("modprobe sroce 2>/dev/null")) {
		*why = "sroce module not available";
		return -1;
	}
	*why = "cannot create the veth pair";
	/*
	 * 0xff as the MACs' third byte gives the link-local GIDs 0xff in
	 * bytes 10 and 11, so a test that takes them for IPv4-mapped GIDs
	 * fails every time rather than with one random MAC in 256.
	 */
	snprintf(mac, sizeof(mac), "02:00:ff:%02x:%02x", id >> 8 & 0xff,
		 id & 0xff);
	/*
	 * One ip for the three steps (a veth cannot go up with its peer).
	 * SIGPIPE ignored: an ip that dies unread must fail the setup, not
	 * kill the test.
	 */
	sigaction(SIGPIPE, &ign, &old_pipe);
	ip = popen("ip -batch -", "w");
	if (ip) {
		fprintf(ip, "link add %s address %s:01 type veth peer name %s address %s:02\n",
			d->veth, mac, d->peer, mac);
		fprintf(ip, "link set %s up\nlink set %s up\n", d->veth, d->peer);
	}
	ret = ip ? pclose(ip) : -1;
	sigaction(SIGPIPE, &old_pipe, NULL);
	if (ret)
		return -2;
	*why = "rdma link add failed";
	if (sh("rdma link add %s type sroce netdev %s", d->ibdev, d->veth))
		return -2;
	*why = "cannot open the device (is the provider installed?)";
	d->ctx = open_by_name(d->ibdev);
	return d->ctx ? 0 : -2;
}

static inline void sroce_tdev_down(struct sroce_tdev *d)
{
	if (d->ctx)
		ibv_close_device(d->ctx);
	sh("rdma link del %s 2>/dev/null; ip link del %s 2>/dev/null",
	   d->ibdev, d->veth);
}

#endif /* SROCE_TEST_H */
