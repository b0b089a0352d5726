/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * sroce user/kernel ABI: the one header shared by the sroce kernel module
 * and its rdma-core provider. Every structure is fixed-width, explicitly
 * padded and identical on 32- and 64-bit builds.
 */
#ifndef SROCE_ABI_USER_H
#define SROCE_ABI_USER_H

#include <linux/types.h>

/*
 * Reported as the uverbs ABI version of sroce devices; the provider refuses
 * devices whose version it does not know.
 */
#define SROCE_UVERBS_ABI_VERSION	1

/* Conventional name prefix of sroce devices ("rdma link add sroce0 ..."). */
#define SROCE_DEVICE_NAME_PREFIX	"sroce"

/*
 * Node description of every sroce device; it cannot be changed, so the
 * provider recognises sroce devices by it whatever their name.
 */
#define SROCE_NODE_DESC			"sroce"

/*
 * query_device reports fw_ver packed as major << 32 | minor << 16 | subminor;
 * the provider prints it as "major.minor.subminor".
 */

/* Bits of sroce_alloc_ucontext_resp.caps: features the kernel side offers. */
enum sroce_ucontext_caps {
	SROCE_UCTX_CAP_NONE = 0,
	/* SROCE_METHOD_QP_SQ_DOORBELL is there. */
	SROCE_UCTX_CAP_SQ_DOORBELL_METHOD = 1 << 0,
};

/*
 * Driver-specific ioctl methods (RDMA_VERBS_IOCTL on the uverbs file, in
 * the driver's ID space, bit 12 of the IDs: UVERBS_ID_NS_SHIFT).
 *
 * SROCE_METHOD_QP_SQ_DOORBELL, on UVERBS_OBJECT_QP: the send queue's
 * doorbell. It does what ibv_post_send's command with no work requests
 * does, without the command's buffers: no allocation, nothing copied in
 * or out but the QP's handle. One attribute, the QP (an IDR handle).
 */
enum sroce_qp_methods {
	SROCE_METHOD_QP_SQ_DOORBELL = 1U << 12,
};

enum sroce_qp_sq_doorbell_attrs {
	SROCE_ATTR_SQ_DOORBELL_QP = 1U << 12,
};

/* Response to ibv_get_context (udata of ib_device_ops.alloc_ucontext). */
struct sroce_alloc_ucontext_resp {
	__u32 abi_version;	/* SROCE_UVERBS_ABI_VERSION of the module */
	__u32 caps;		/* enum sroce_ucontext_caps */
	__aligned_u64 reserved;	/* zero; room for growth */
};

/* Response to ibv_alloc_pd (udata of ib_device_ops.alloc_pd). */
struct sroce_alloc_pd_resp {
	__u32 pdn;		/* protection domain number, unique per device */
	__u32 reserved;
};

/*
 * Shared rings. A ring is one mapping: a header page, then a power-of-two
 * number of fixed-size entries. The producer owns prod and the consumer
 * owns cons; each sits on its own cache line so the two sides never write
 * the same line. Indices run freely and wrap at 2^32; the entry of index i
 * is i & (num_entries - 1). The kernel never trusts an index it reads from
 * a mapping: it masks it and checks it against what it produced.
 */
#define SROCE_RING_HDR_SIZE	4096

struct sroce_ring_hdr {
	__u32 prod;		/* next index the producer will fill */
	__u32 reserved0[15];
	__u32 cons;		/* next index the consumer will read */
	__u32 flags;		/* enum sroce_ring_flags, kernel-written */
	__u32 reserved1[14];
};

/*
 * Doorbells. On the send and receive rings of a queue pair the kernel is
 * the consumer; it sets SROCE_RING_NEED_DOORBELL in flags when it will not
 * look at the ring again by itself. After publishing prod, the provider
 * issues a full memory barrier, reads flags, and only if the bit is set
 * makes the doorbell system call (post_send or post_recv with no work
 * requests). The kernel sets the bit, issues a full barrier and re-reads
 * prod before it goes idle, so one side always sees the other's store.
 * The send ring's cons is the oldest entry not yet completed: entries
 * before it may be reused.
 */
enum sroce_ring_flags {
	SROCE_RING_NEED_DOORBELL = 1 << 0,
	SROCE_RING_DEAD = 1 << 1,
};

/*
 * A dead ring. When the kernel destroys an object, on request or because
 * its device goes away under a running process (which keeps the mapping),
 * it sets SROCE_RING_DEAD | SROCE_RING_NEED_DOORBELL in flags of each of
 * the object's rings and never touches them again (so also in a CQ's old
 * ring after a resize, which the provider no longer reads). A QP poster
 * then makes the doorbell call, which fails; an SRQ poster, which has no
 * doorbell, fails (EIO) on seeing the flag; a poller that finds a CQ ring
 * empty and dead fails the poll (EIO) instead of waiting for completions
 * that will never come.
 */

/*
 * A completion as the kernel writes it into a CQ ring. status is enum
 * ibv_wc_status (numbered as the kernel's enum ib_wc_status), opcode enum
 * ib_uverbs_wc_opcode (as enum ibv_wc_opcode), wc_flags the SROCE_WC_F_*
 * bits below; ex is the immediate data (big-endian, as on the wire) or the
 * invalidated rkey.
 */
enum sroce_wc_flags {
	SROCE_WC_F_GRH = 1 << 0,
	SROCE_WC_F_WITH_IMM = 1 << 1,
	SROCE_WC_F_WITH_INV = 1 << 2,
};

/*
 * Receives on UD QPs: the first 40 bytes of the buffer hold the GRH, which
 * for RoCEv2 is the packet's IPv6 header, or its IPv4 header in the last
 * 20 of the 40 bytes; network_hdr_type says which (SROCE_NETWORK_*), smac
 * is the sender's Ethernet address. RoCE carries no SL: on UD (not GSI)
 * receives sl holds the packet type as mlx5 reports it, 0x8 | 1 for IPv6,
 * 0x8 | 2 for IPv4 (UCX's ud_verbs relies on it).
 */
enum sroce_network_hdr_type {
	SROCE_NETWORK_IPV4 = 1,
	SROCE_NETWORK_IPV6 = 2,
};

struct sroce_cqe {
	__aligned_u64 wr_id;
	__u32 status;
	__u32 opcode;
	__u32 vendor_err;
	__u32 byte_len;
	__u32 ex;
	__u32 qp_num;
	__u32 src_qp;
	__u32 wc_flags;
	__u16 pkey_index;
	__u16 slid;
	__u8 sl;
	__u8 dlid_path_bits;
	__u8 port_num;
	__u8 network_hdr_type;	/* UD receives: enum sroce_network_hdr_type */
	__u8 smac[6];		/* UD receives: source MAC */
	__u16 reserved;
	__u32 reserved2[2];	/* to 64 bytes: one cache line per CQE */
};

/* Response to ibv_create_cq / ibv_resize_cq: where the CQ ring is. */
struct sroce_create_cq_resp {
	__aligned_u64 mmap_offset;	/* pass to mmap() on the context fd */
	__aligned_u64 mmap_length;	/* header page plus entries */
	__u32 num_entries;		/* ring entries, a power of two */
	__u32 reserved;
};

struct sroce_resize_cq_resp {
	__aligned_u64 mmap_offset;
	__aligned_u64 mmap_length;
	__u32 num_entries;
	__u32 reserved;
};

/* A scatter/gather element as posted in a work queue entry. */
struct sroce_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/* send_flags of a send work queue entry (the values of ibv_send_flags). */
enum sroce_send_flags {
	SROCE_SEND_F_FENCE = 1 << 0,
	SROCE_SEND_F_SIGNALED = 1 << 1,
	SROCE_SEND_F_SOLICITED = 1 << 2,
	SROCE_SEND_F_INLINE = 1 << 3,
};

/*
 * A send work queue entry: this header, then num_sge struct sroce_sge or
 * inline_len bytes of data, within the queue's wqe_size stride. opcode is
 * enum ib_uverbs_wr_opcode (the values of enum ibv_wr_opcode), send_flags
 * enum sroce_send_flags; ex is the immediate data (big-endian) or the rkey
 * to invalidate. IB_UVERBS_WR_BIND_MW binds a memory window (type 1 for
 * ibv_bind_mw, or type 2) as wr.bind says, with no data. The kernel copies
 * an entry once, when it starts on it, and checks the copy; later changes
 * to the ring entry have no effect.
 */
struct sroce_send_wqe {
	__aligned_u64 wr_id;
	__u32 opcode;
	__u32 send_flags;
	__u32 num_sge;
	__u32 ex;
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		struct {
			__u32 ah;		/* sroce_create_ah_resp.ah_num */
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 reserved;
		} ud;
		struct {
			__aligned_u64 addr;	/* window start (MR's VA) */
			__aligned_u64 length;	/* 0 unbinds a type 1 MW */
			__u32 mw_rkey;		/* the MW's current rkey */
			__u32 new_rkey;		/* its rkey once bound */
			__u32 mr_lkey;		/* the MR it opens onto */
			__u32 access;		/* IBV_ACCESS_REMOTE_* */
		} bind;
	} wr;
	__u32 inline_len;
	__u32 reserved;
};

/*
 * IB_UVERBS_WR_ATOMIC_WRITE (ibv_wr_atomic_write) and its completion
 * opcode, by value: older kernels' ib_user_verbs.h do not name them. Its
 * WQE carries wr.atomic.remote_addr and rkey, and the 8 bytes to store, as
 * they are in memory, in wr.atomic.swap.
 */
#define SROCE_WR_ATOMIC_WRITE	15
#define SROCE_WC_ATOMIC_WRITE	9

/* A receive work queue entry: this header, then num_sge struct sroce_sge. */
struct sroce_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
};

/*
 * Response to ibv_create_qp: the QP's send and receive rings. Each ring's
 * entries are wqe_size bytes apart (a power of two); the ring header is
 * the struct sroce_ring_hdr above, user space producing, kernel consuming.
 */
struct sroce_create_qp_resp {
	__aligned_u64 sq_mmap_offset;
	__aligned_u64 sq_mmap_length;
	__aligned_u64 rq_mmap_offset;
	__aligned_u64 rq_mmap_length;
	__u32 sq_num_entries;
	__u32 sq_wqe_size;
	__u32 rq_num_entries;
	__u32 rq_wqe_size;
};

/*
 * Response to ibv_create_srq: the shared receive queue's ring, laid out as
 * a QP's receive ring (struct sroce_recv_wqe entries wqe_size apart), user
 * space producing, the kernel consuming. It needs no doorbell.
 */
struct sroce_create_srq_resp {
	__aligned_u64 mmap_offset;
	__aligned_u64 mmap_length;
	__u32 num_entries;
	__u32 wqe_size;
};

/*
 * Response to ibv_create_ah: the number UD send WQEs name the address
 * handle by. The kernel checks that it exists and belongs to the QP's PD.
 */
struct sroce_create_ah_resp {
	__u32 ah_num;
	__u32 reserved;
};

/*
 * Raw resource dumps: "rdma resource show qp|cq|mr -r" (CAP_NET_ADMIN).
 * The values are those of the -dd fields, read at the same moment, as
 * little-endian 64-bit words indexed by the enums below; bit i of
 * "present" says whether val[i] applies to the object (the requester and
 * responder fields to RC and UC QPs, the receive ring to QPs without an
 * SRQ, the send-ring poller's CPU while one watches it). The congestion
 * control fields (RC and UC): whether a CNP limited the rate, the rate
 * and target rate in Mb/s (the line rate while not limited), and DCQCN's
 * alpha in 1/1024ths. A later version only appends to the enums: a
 * reader checks version and takes the first nfields words it knows.
 */
#define SROCE_RES_RAW_VERSION	1

struct sroce_res_raw {
	__le16 version;
	__le16 nfields;
	__le32 present;
	__le64 val[];
};

enum sroce_res_qp_field {
	SROCE_RES_QP_SQ_PROD,
	SROCE_RES_QP_SQ_FETCHED,
	SROCE_RES_QP_SQ_NEXT,
	SROCE_RES_QP_SQ_HEAD,
	SROCE_RES_QP_SQ_NEED_DOORBELL,
	SROCE_RES_QP_REQ_PSN,
	SROCE_RES_QP_REQ_UNA,
	SROCE_RES_QP_REQ_OFF,
	SROCE_RES_QP_RD_PENDING,
	SROCE_RES_QP_RETRY_LEFT,
	SROCE_RES_QP_RNR_LEFT,
	SROCE_RES_QP_RNR_WAIT,
	SROCE_RES_QP_TIMER_ARMED,
	SROCE_RES_QP_RQ_PROD,
	SROCE_RES_QP_RQ_CONS,
	SROCE_RES_QP_RESP_EPSN,
	SROCE_RES_QP_RESP_MSN,
	SROCE_RES_QP_IN_SEND,
	SROCE_RES_QP_IN_WRITE,
	SROCE_RES_QP_REPLIES_QUEUED,
	SROCE_RES_QP_TX_INFLIGHT,
	SROCE_RES_QP_CC_LIMITED,
	SROCE_RES_QP_CC_RATE_MBPS,
	SROCE_RES_QP_CC_TARGET_MBPS,
	SROCE_RES_QP_CC_ALPHA,
	SROCE_RES_QP_SRTT_US,
	SROCE_RES_QP_SQ_POLL_BACKOFF,
	SROCE_RES_QP_SQ_POLL_CPU,	/* only while a poller watches the SQ */
	SROCE_RES_QP_NFIELDS
};

enum sroce_res_cq_field {
	SROCE_RES_CQ_RING_ENTRIES,
	SROCE_RES_CQ_PROD,
	SROCE_RES_CQ_CONS,
	SROCE_RES_CQ_FILL,
	SROCE_RES_CQ_OVERRUN,
	SROCE_RES_CQ_NFIELDS
};

/* SROCE_RES_MR_KIND: the -dd field drv_kind, as a number. */
enum sroce_res_mr_kind {
	SROCE_RES_MR_USER,
	SROCE_RES_MR_DMA,
	SROCE_RES_MR_FAST_REG,
};

enum sroce_res_mr_field {
	SROCE_RES_MR_KIND,
	SROCE_RES_MR_ACCESS,
	SROCE_RES_MR_PINNED_PAGES,
	SROCE_RES_MR_PAGE_OFFSET,
	SROCE_RES_MR_VALID,
	SROCE_RES_MR_MW_BINDS,
	SROCE_RES_MR_FR_MAX_PAGES,
	SROCE_RES_MR_NFIELDS
};

#endif /* SROCE_ABI_USER_H */
