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

#endif /* SROCE_ABI_USER_H */
