/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Differences between the kernel APIs sroce builds against: Debian's 6.1
 * and 6.12 kernels. Everything version-dependent lives here so the rest of
 * the module is written against one API.
 */
#ifndef SROCE_COMPAT_H
#define SROCE_COMPAT_H

#include <linux/version.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 1, 0)
#error "sroce needs Linux 6.1 or newer"
#endif

/*
 * 6.1 counts netdev references with the same netdev_hold()/netdev_put()
 * pair as 6.12, and the rdma core calls every op sroce implements so far
 * with the same signature in both, so nothing needs wrapping yet. The
 * create_cq/create_user_ah udata changes of 6.8+ will land here.
 */

#endif /* SROCE_COMPAT_H */
