// SPDX-License-Identifier: GPL-2.0
/*
 * sroce_ctl: small libibverbs driver for the shell selftests.
 *
 *   sroce_ctl provider DEV      open DEV, allocate a PD, print the provider
 *                               library libibverbs loaded for it
 *   sroce_ctl hold DEV SECS     open DEV with a PD, print "ready", then wait
 *                               up to SECS for async events, printing each;
 *                               exits 0 after IBV_EVENT_DEVICE_FATAL once
 *                               the PD and context were released, 2 when
 *                               SECS pass without it
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list) {
		perror("ibv_get_device_list");
		return NULL;
	}
	for (i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	if (!ctx)
		fprintf(stderr, "cannot open %s: %s\n", name, strerror(errno));
	return ctx;
}

/* The provider is whichever lib*-rdmav*.so got mapped into us. */
static int print_provider(void)
{
	char line[4096];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		char *path = strchr(line, '/');
		char *base;

		if (!path || !strstr(path, "-rdmav"))
			continue;
		path[strcspn(path, "\n")] = 0;
		base = strrchr(path, '/') + 1;
		if (strstr(line, "r-xp")) {
			printf("%s\n", base);
			found = 1;
		}
	}
	fclose(f);
	return found ? 0 : -1;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int hold(struct ibv_context *ctx, struct ibv_pd *pd, int secs)
{
	long deadline = now_ms() + secs * 1000L;
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };

	printf("ready\n");
	fflush(stdout);
	while (now_ms() < deadline) {
		struct ibv_async_event ev;
		enum ibv_event_type type;

		if (poll(&pfd, 1, 100) <= 0)
			continue;
		if (ibv_get_async_event(ctx, &ev))
			continue;
		type = ev.event_type;
		printf("event %s\n", ibv_event_type_str(type));
		fflush(stdout);
		ibv_ack_async_event(&ev);
		if (type == IBV_EVENT_DEVICE_FATAL) {
			/* The device is gone; releasing must still work. */
			if (ibv_dealloc_pd(pd))
				fprintf(stderr, "dealloc_pd after removal failed\n");
			if (ibv_close_device(ctx)) {
				fprintf(stderr, "close after removal failed\n");
				return 1;
			}
			printf("released\n");
			return 0;
		}
	}
	printf("timeout\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int ret;

	if (argc < 3) {
		fprintf(stderr, "usage: %s provider DEV | hold DEV SECS\n",
			argv[0]);
		return 64;
	}
	ctx = open_dev(argv[2]);
	if (!ctx)
		return 1;
	pd = ibv_alloc_pd(ctx);
	if (!pd) {
		perror("ibv_alloc_pd");
		return 1;
	}
	if (!strcmp(argv[1], "hold") && argc > 3)
		return hold(ctx, pd, atoi(argv[3]));
	if (!strcmp(argv[1], "provider")) {
		ret = print_provider() ? 1 : 0;
	} else {
		fprintf(stderr, "unknown command %s\n", argv[1]);
		ret = 64;
	}
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return ret;
}
