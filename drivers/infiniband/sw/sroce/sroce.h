/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * sroce: software RoCEv2 device. Every file of the module includes this
 * header, which includes one header per unit below; wire formats live in
 * sroce_hdr.h, the send side's internals in sroce_sq.h.
 *
 * Lock order, outermost first (lockdep checks it; functions that need a
 * lock held assert it with lockdep_assert_held()):
 *
 *   sroce_dev_list_lock (mutex, the module's devices)
 *   RTNL (the netdev notifier; device state and port events)
 *   sroce_qp.lock (mutex: modify and query of one QP)
 *   sroce_lo_shard.drain_lock (BH off: whoever delivers looped-back
 *       packets takes the QP locks of their receivers)
 *   sroce_qp.req_lock (BH off: requester, completer, send queue)
 *     sroce_qp.resp_lock (responder, receive queue; nested inside
 *         req_lock only where both halves change: state, reset, destroy)
 *       sroce_srq.lock (taking from an SRQ)
 *       sroce_cc_rp.lock (a QP's rate limiter; also taken alone, by a
 *           CNP's receiver and by queries)
 *       sroce_dev.mw_lock (binding windows against deregistration)
 *       sroce_cq.lock (IRQ off: producing completions; innermost)
 *   sroce_lo_shard.queue.lock (BH off, never in a hard interrupt: the
 *       packets a loopback queue holds; innermost, taken by senders under
 *       the QP locks and by a drainer under drain_lock)
 *
 * Leaves, taken with nothing else held: sroce_dev.mcast_lock,
 * sroce_dev.gid_lock (mutex, inside RTNL and the core's GID table mutex,
 * which add_gid and del_gid are called with),
 * sroce_qp.sq_post_lock and rq_post_lock, sroce_srq.post_lock (kernel
 * posters; they ring doorbells only after dropping them). A kernel
 * consumer's CQ handlers and QP events run from an irq_work or a work
 * item, under none of these; uverbs's handlers, which only queue an
 * event, and SRQ events are called with the data path's lock held.
 */
#ifndef SROCE_H
#define SROCE_H

#include <linux/bits.h>
#include <linux/hrtimer.h>
#include <linux/interrupt.h>
#include <linux/irq_work.h>
#include <linux/in6.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/percpu.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <rdma/sroce-abi.h>

#include "sroce_compat.h"
#include "sroce_param.h"
#include "sroce_counters.h"
#include "sroce_ring.h"

struct sroce_dev;
struct sroce_qp;
struct sroce_pkt;

#include "sroce_mr.h"
#include "sroce_dev.h"
#include "sroce_cq.h"
#include "sroce_srq.h"
#include "sroce_ah.h"
#include "sroce_qp.h"
#include "sroce_net.h"

#endif /* SROCE_H */

