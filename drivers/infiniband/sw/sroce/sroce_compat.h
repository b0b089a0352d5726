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

#include <linux/mm.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

/*
 * ib_device_ops.create_cq takes the whole uverbs attribute bundle since
 * 6.11 (NULL for kernel callers), and the driver udata before that.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 11, 0)
typedef struct uverbs_attr_bundle sroce_create_cq_arg_t;

static inline struct ib_udata *
sroce_create_cq_udata(sroce_create_cq_arg_t *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
typedef struct ib_udata sroce_create_cq_arg_t;

static inline struct ib_udata *
sroce_create_cq_udata(sroce_create_cq_arg_t *udata)
{
	return udata;
}
#endif

/*
 * Atomic write and FLUSH (IBA annex A19) are known to the core from 6.2
 * on. Before that no region or QP can hold the FLUSH right, so the
 * responder refuses every FLUSH.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 2, 0)
#define SROCE_DEVICE_ATOMIC_WRITE	IB_DEVICE_ATOMIC_WRITE
#define SROCE_DEVICE_FLUSH_GLOBAL	IB_DEVICE_FLUSH_GLOBAL
#define SROCE_ACCESS_FLUSH_GLOBAL	IB_ACCESS_FLUSH_GLOBAL
#define SROCE_ACCESS_FLUSH_PERSISTENT	IB_ACCESS_FLUSH_PERSISTENT
#else
#define SROCE_DEVICE_ATOMIC_WRITE	0
#define SROCE_DEVICE_FLUSH_GLOBAL	0
#define SROCE_ACCESS_FLUSH_GLOBAL	0
#define SROCE_ACCESS_FLUSH_PERSISTENT	0
#endif

/* The GSO helpers left netdevice.h for their own header in 6.5. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 5, 0)
#include <net/gso.h>
#endif

/* vm_flags became read-only behind helpers in 6.3. */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 3, 0)
#define sroce_vm_flags_set(vma, flags)	vm_flags_set(vma, flags)
#else
#define sroce_vm_flags_set(vma, flags)	((vma)->vm_flags |= (flags))
#endif

/*
 * The classifier hooks on a netdev's ingress and egress (clsact, BPF)
 * hang off tcx entries since 6.6, off mini qdiscs before.
 */
#if LINUX_VERSION_CODE >= KERNEL_VERSION(6, 6, 0)
#define SROCE_TC_HOOKS	IS_ENABLED(CONFIG_NET_XGRESS)
#define sroce_tc_ingress(dev)	((dev)->tcx_ingress)
#define sroce_tc_egress(dev)	((dev)->tcx_egress)
#else
#define SROCE_TC_HOOKS	IS_ENABLED(CONFIG_NET_CLS_ACT)
#define sroce_tc_ingress(dev)	((dev)->miniq_ingress)
#define sroce_tc_egress(dev)	((dev)->miniq_egress)
#endif

static inline bool sroce_tc_ingress_hooked(const struct net_device *dev)
{
#if SROCE_TC_HOOKS
	return rcu_access_pointer(sroce_tc_ingress(dev));
#else
	return false;
#endif
}

static inline bool sroce_tc_egress_hooked(const struct net_device *dev)
{
#if SROCE_TC_HOOKS
	return rcu_access_pointer(sroce_tc_egress(dev));
#else
	return false;
#endif
}

#endif /* SROCE_COMPAT_H */
