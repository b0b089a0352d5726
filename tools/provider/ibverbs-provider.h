/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The slice of the libibverbs provider interface that sroce uses, declared
 * for building out of tree against an installed libibverbs.
 *
 * Debian's libibverbs-dev ships only the public verbs.h; the provider
 * interface (rdma-core's libibverbs/driver.h and kern-abi.h) is private and
 * versioned by the IBVERBS_PRIVATE_<N> symbol set. Everything here mirrors
 * rdma-core v44.0, IBVERBS_PRIVATE_34, field for field: libibverbs reads and
 * writes these structures from its side, so any layout drift is silent
 * memory corruption. Where a layout could be checked against the shipped
 * binary (objdump of libibverbs.so.1 44.0-2), a static_assert pins it.
 *
 * Inside an rdma-core tree this whole file is replaced by
 * <infiniband/driver.h>; see sroce.h.
 */
#ifndef SROCE_IBVERBS_PROVIDER_H
#define SROCE_IBVERBS_PROVIDER_H

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/ib_user_ioctl_verbs.h>

/*
 * The Makefile passes the private ABI it found in the installed library;
 * the layouts below are only right for 34 (rdma-core 44.x).
 */
#ifndef IBVERBS_PABI_VERSION
#define IBVERBS_PABI_VERSION 34
#endif
#if IBVERBS_PABI_VERSION != 34
#error "these declarations are the IBVERBS_PRIVATE_34 (rdma-core 44) layouts only"
#endif

#ifndef container_of
#define container_of(ptr, type, member) \
	((type *)((uintptr_t)(ptr) - offsetof(type, member)))
#endif

/* ccan/list.h: an intrusive doubly linked list node, as libibverbs uses it. */
struct list_node {
	struct list_node *next;
	struct list_node *prev;
};

/* --- logging (verbs_log level filtering happens inside libibverbs) --- */

enum {
	VERBS_LOG_LEVEL_NONE,
	VERBS_LOG_ERR,
	VERBS_LOG_WARN,
	VERBS_LOG_INFO,
	VERBS_LOG_DEBUG,
};

void __verbs_log(struct verbs_context *ctx, uint32_t level,
		 const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define verbs_log(ctx, level, fmt, ...)					\
	do {								\
		int __saved_errno = errno;				\
									\
		__verbs_log(ctx, level, "%s: %s:%d: " fmt,		\
			    (ctx)->context.device->name, __func__,	\
			    __LINE__, ##__VA_ARGS__);			\
		errno = __saved_errno;					\
	} while (0)

#define verbs_err(ctx, fmt, ...) \
	verbs_log(ctx, VERBS_LOG_ERR, fmt, ##__VA_ARGS__)
#define verbs_warn(ctx, fmt, ...) \
	verbs_log(ctx, VERBS_LOG_WARN, fmt, ##__VA_ARGS__)
#define verbs_debug(ctx, fmt, ...) \
	verbs_log(ctx, VERBS_LOG_DEBUG, fmt, ##__VA_ARGS__)

/* --- object wrappers the ops table refers to --- */

struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

/* verbs_qp.comp_mask: VERBS_QP_EX makes ibv_qp_to_qp_ex() succeed. */
enum verbs_qp_mask {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1,
};

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

/* --- device matching --- */

enum {
	VERBS_MATCH_SENTINEL = 0,
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

#define VERBS_DRIVER_ID(_id)						\
	{ .u.driver_id = (_id), .kind = VERBS_MATCH_DRIVER_ID }

/*
 * MODALIAS entries are fnmatch() patterns. libibverbs tries each one
 * against the string "rdma_device:N<ibdev name>" (after driver-id matching
 * and before the sysfs device/modalias file), which is what name matching
 * is built on.
 */
#define VERBS_MODALIAS_MATCH(_glob, _data)				\
	{								\
		.driver_data = (void *)(_data),				\
		.u.modalias = (_glob),					\
		.kind = VERBS_MATCH_MODALIAS,				\
	}

#define VERBS_NAME_MATCH(_name_prefix, _data)				\
	VERBS_MODALIAS_MATCH("rdma_device:*N" _name_prefix "*", _data)

enum {
	VSYSFS_READ_MODALIAS = 1 << 0,
	VSYSFS_READ_NODE_GUID = 1 << 1,
};

/* One uverbs device as libibverbs discovered it (netlink or sysfs). */
struct verbs_sysfs_dev {
	struct list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX];
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;
	struct timespec time_created;
};

struct verbs_device;

struct verbs_device_ops {
	const char *name;

	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;

	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);

	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd,
					       void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);

	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

struct verbs_device {
	struct ibv_device device;	/* first: libibverbs casts */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

static inline struct verbs_device *
verbs_get_device(const struct ibv_device *dev)
{
	return container_of(dev, struct verbs_device, device);
}

/*
 * Every op a provider may supply. libibverbs' verbs_set_ops() walks the
 * whole table, so it must be complete and in v44.0 order (alphabetical).
 * A NULL entry leaves libibverbs' stub in place, which fails with
 * EOPNOTSUPP.
 */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(
		struct ibv_context *context,
		struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd,
				    struct ibv_ah_attr *attr);
	struct ibv_counters *(*create_counters)(
		struct ibv_context *context,
		struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(
		struct ibv_context *context,
		struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(
		struct ibv_context *context,
		struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *attr);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *attr);
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			     struct ibv_recv_wr **bad_recv_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova,
					int fd, int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/*
 * Layout pins, read out of the x86_64 machine code of Debian's 44.0-2
 * libibverbs.so.1: verbs_set_ops() reads 76 slots, the last at 0x258;
 * init.c touches verbs_sysfs_dev.node_guid/driver_id/abi_ver at
 * 0x3b0/0x3b8/0x3c8.
 */
static_assert(sizeof(struct verbs_context_ops) == 76 * sizeof(void *),
	      "verbs_context_ops must have the 76 v44 slots");
static_assert(offsetof(struct verbs_context_ops, unimport_pd) ==
	      75 * sizeof(void *), "verbs_context_ops order");
#ifdef __x86_64__
static_assert(offsetof(struct verbs_sysfs_dev, node_guid) == 0x3b0,
	      "verbs_sysfs_dev layout");
static_assert(offsetof(struct verbs_sysfs_dev, driver_id) == 0x3b8,
	      "verbs_sysfs_dev layout");
static_assert(offsetof(struct verbs_sysfs_dev, abi_ver) == 0x3c8,
	      "verbs_sysfs_dev layout");
#endif
static_assert(offsetof(struct verbs_device, ops) ==
	      sizeof(struct ibv_device), "verbs_device layout");
static_assert(offsetof(struct ibv_qp_ex, qp_base) == 0, "ibv_qp_ex layout");
/* ibv_qp_to_qp_ex() tests VERBS_QP_EX (0x2) at 0x160 of the verbs_qp. */
#ifdef __x86_64__
static_assert(offsetof(struct verbs_qp, comp_mask) == 0x160,
	      "verbs_qp layout");
#endif
static_assert(VERBS_QP_EX == 0x2, "verbs_qp_mask");

/*
 * The registration entry point carries the private ABI number in its name,
 * so a provider built for another ABI fails to load instead of corrupting
 * memory.
 */
#define __verbs_register_driver_n(n) verbs_register_driver_ ## n
#define _verbs_register_driver_n(n) __verbs_register_driver_n(n)
#define verbs_register_driver _verbs_register_driver_n(IBVERBS_PABI_VERSION)

void verbs_register_driver(const struct verbs_device_ops *ops);

/*
 * Register @ops when the provider is dlopen()ed; the alias names the ops
 * for rdma-core's static-provider build and stays local here.
 */
#define PROVIDER_DRIVER(provider_name, drv_struct)			\
	extern const struct verbs_device_ops				\
		verbs_provider_ ## provider_name			\
		__attribute__((alias(#drv_struct)));			\
	static __attribute__((constructor)) void			\
	provider_name ## _register_driver(void)				\
	{								\
		verbs_register_driver(&drv_struct);			\
	}

/* --- context life cycle --- */

void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);

/*
 * calloc() a provider context of type *drv_ctx_ptr with the verbs_context
 * at member ctx_memb, and initialise the core part. On failure cmd_fd is
 * closed and NULL returned.
 */
#define verbs_init_and_alloc_context(ibdev, cmd_fd, drv_ctx_ptr, ctx_memb, \
				     driver_id)				\
	((__typeof__(drv_ctx_ptr))_verbs_init_and_alloc_context(	\
		ibdev, cmd_fd, sizeof(*(drv_ctx_ptr)),			\
		&((__typeof__(drv_ctx_ptr))NULL)->ctx_memb, (driver_id)))

void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context);

/* --- uverbs write() commands (rdma-core kern-abi.h) --- */

/*
 * Each legacy command is the uverbs header followed by the kernel's request
 * struct. rdma-core also overlays a tagless copy of the kernel struct so
 * fields can be named directly; only core_payload is provided here, which
 * gives the same layout.
 */
#define IBV_ABI_REQ(_enum) _ABI_REQ_STRUCT_ ## _enum
#define IBV_KABI_REQ(_enum) _KABI_REQ_STRUCT_ ## _enum
#define IBV_KABI_RESP(_enum) _KABI_RESP_STRUCT_ ## _enum
#define IBV_ABI_ALIGN(_enum) _ABI_ALIGN_ ## _enum

#define DECLARE_CMDX(_enum, _name, _kabi, _kabi_resp)			\
	struct _name {							\
		struct ib_uverbs_cmd_hdr hdr;				\
		union {							\
			struct _kabi core_payload;			\
		};							\
	};								\
	typedef struct _name IBV_ABI_REQ(_enum);			\
	typedef struct _kabi IBV_KABI_REQ(_enum);			\
	typedef struct _kabi_resp IBV_KABI_RESP(_enum);			\
	enum { IBV_ABI_ALIGN(_enum) = 4 };				\
	static_assert(sizeof(struct _kabi_resp) % 4 == 0,		\
		      #_kabi_resp " size");				\
	static_assert(sizeof(struct _name) ==				\
		      sizeof(struct ib_uverbs_cmd_hdr) +		\
		      sizeof(struct _kabi), #_name " size")

#define DECLARE_CMD(_enum, _name, _kabi)				\
	DECLARE_CMDX(_enum, _name, _kabi, _kabi ## _resp)

/*
 * Extended commands: the uverbs header, the extended header, then the
 * kernel's request struct; requests and responses are 8-byte aligned.
 */
struct ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

#define DECLARE_CMD_EXX(_enum, _name, _kabi, _kabi_resp)		\
	struct _name {							\
		struct ex_hdr hdr;					\
		union {							\
			struct _kabi core_payload;			\
		};							\
	};								\
	typedef struct _name IBV_ABI_REQ(_enum);			\
	typedef struct _kabi IBV_KABI_REQ(_enum);			\
	typedef struct _kabi_resp IBV_KABI_RESP(_enum);			\
	enum { IBV_ABI_ALIGN(_enum) = 8 };				\
	static_assert(sizeof(struct _kabi) % 8 == 0, #_kabi " size");	\
	static_assert(sizeof(struct _kabi_resp) % 8 == 0,		\
		      #_kabi_resp " size");				\
	static_assert(sizeof(struct _name) ==				\
		      sizeof(struct ex_hdr) + sizeof(struct _kabi),	\
		      #_name " size");					\
	static_assert(sizeof(struct _name) % 8 == 0, #_name " alignment")

#define DECLARE_CMD_EX(_enum, _name, _kabi)				\
	DECLARE_CMD_EXX(_enum, _name, _kabi, _kabi ## _resp)

/* A command without driver data uses 'empty' for the driver struct. */
struct empty {};

DECLARE_CMD(IB_USER_VERBS_CMD_ALLOC_PD, ibv_alloc_pd, ib_uverbs_alloc_pd);
DECLARE_CMDX(IB_USER_VERBS_CMD_DEALLOC_PD, ibv_dealloc_pd,
	     ib_uverbs_dealloc_pd, empty);
DECLARE_CMD(IB_USER_VERBS_CMD_GET_CONTEXT, ibv_get_context,
	    ib_uverbs_get_context);
DECLARE_CMD(IB_USER_VERBS_CMD_QUERY_DEVICE, ibv_query_device,
	    ib_uverbs_query_device);
DECLARE_CMD(IB_USER_VERBS_CMD_QUERY_PORT, ibv_query_port,
	    ib_uverbs_query_port);
DECLARE_CMD(IB_USER_VERBS_CMD_REG_MR, ibv_reg_mr, ib_uverbs_reg_mr);
DECLARE_CMD(IB_USER_VERBS_CMD_CREATE_CQ, ibv_create_cq, ib_uverbs_create_cq);
DECLARE_CMD(IB_USER_VERBS_CMD_RESIZE_CQ, ibv_resize_cq, ib_uverbs_resize_cq);
DECLARE_CMD(IB_USER_VERBS_CMD_CREATE_QP, ibv_create_qp, ib_uverbs_create_qp);
DECLARE_CMDX(IB_USER_VERBS_CMD_MODIFY_QP, ibv_modify_qp, ib_uverbs_modify_qp,
	     empty);
DECLARE_CMD(IB_USER_VERBS_CMD_QUERY_QP, ibv_query_qp, ib_uverbs_query_qp);
DECLARE_CMD(IB_USER_VERBS_CMD_CREATE_AH, ibv_create_ah, ib_uverbs_create_ah);
DECLARE_CMD(IB_USER_VERBS_CMD_CREATE_SRQ, ibv_create_srq,
	    ib_uverbs_create_srq);
DECLARE_CMDX(IB_USER_VERBS_CMD_MODIFY_SRQ, ibv_modify_srq,
	     ib_uverbs_modify_srq, empty);
DECLARE_CMD(IB_USER_VERBS_CMD_QUERY_SRQ, ibv_query_srq, ib_uverbs_query_srq);
DECLARE_CMD(IB_USER_VERBS_CMD_ALLOC_MW, ibv_alloc_mw, ib_uverbs_alloc_mw);
DECLARE_CMD_EX(IB_USER_VERBS_EX_CMD_CREATE_CQ, ibv_create_cq_ex,
	       ib_uverbs_ex_create_cq);
/* ibv_cmd_create_cq_ex() of 44.0-2 sizes the core parts 0x38 and 0x10. */
static_assert(sizeof(struct ibv_create_cq_ex) == 0x38, "ibv_create_cq_ex");
static_assert(sizeof(struct ib_uverbs_ex_create_cq_resp) == 0x10,
	      "ib_uverbs_ex_create_cq_resp");

/*
 * A provider command: the core command followed by the driver's request
 * (udata in), and the core response followed by the driver's response
 * (udata out). libibverbs hands the kernel everything past the core parts
 * as driver data.
 */
#define DECLARE_DRV_CMD(_name, _enum, _kabi_req, _kabi_resp)		\
	struct _name {							\
		IBV_ABI_REQ(_enum) ibv_cmd;				\
		union {							\
			struct _kabi_req drv_payload;			\
		};							\
	};								\
	struct _name ## _resp {						\
		IBV_KABI_RESP(_enum) ibv_resp;				\
		union {							\
			struct _kabi_resp drv_payload;			\
		};							\
	};								\
	static_assert(sizeof(IBV_KABI_REQ(_enum)) %			\
		      __alignof__(struct _kabi_req) == 0,		\
		      #_name " req: driver part misaligned");		\
	static_assert(sizeof(struct _name) ==				\
		      sizeof(IBV_ABI_REQ(_enum)) +			\
		      sizeof(struct _kabi_req),				\
		      #_name " req: padding");				\
	static_assert(sizeof(struct _name) % IBV_ABI_ALIGN(_enum) == 0,	\
		      #_name " req: alignment");			\
	static_assert(sizeof(IBV_KABI_RESP(_enum)) %			\
		      __alignof__(struct _kabi_resp) == 0,		\
		      #_name " resp: driver part misaligned");		\
	static_assert(sizeof(struct _name ## _resp) ==			\
		      sizeof(IBV_KABI_RESP(_enum)) +			\
		      sizeof(struct _kabi_resp),			\
		      #_name " resp: padding");				\
	static_assert(sizeof(struct _name ## _resp) %			\
		      IBV_ABI_ALIGN(_enum) == 0,			\
		      #_name " resp: alignment")

/* --- command helpers exported as IBVERBS_PRIVATE_34 --- */

int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr, struct ibv_create_qp *cmd,
		      size_t cmd_size, struct ib_uverbs_create_qp_resp *resp,
		      size_t resp_size);
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct ibv_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp,
		      size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);
int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);
int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);
int ibv_cmd_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);

#endif /* SROCE_IBVERBS_PROVIDER_H */
