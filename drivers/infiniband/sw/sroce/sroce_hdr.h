/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * RoCEv2 wire format (IBA annex A17): InfiniBand transport headers carried
 * in UDP to port 4791. All multi-byte fields are big-endian on the wire.
 */
#ifndef SROCE_HDR_H
#define SROCE_HDR_H

#include <linux/build_bug.h>
#include <linux/types.h>

#define SROCE_UDP_PORT		4791	/* IANA "roce" */

/**
 * struct sroce_bth - Base Transport Header, IBA 9.2.
 * @opcode: transport service (3 bits) and operation (5 bits)
 * @flags: solicited event, MigReq, pad count (2 bits), transport version
 * @pkey: partition key
 * @qpn: 8 reserved bits (FECN/BECN in bits 31..30), then destination QPN
 * @apsn: AckReq bit, 7 reserved bits, then 24-bit PSN
 */
struct sroce_bth {
	u8 opcode;
	u8 flags;
	__be16 pkey;
	__be32 qpn;
	__be32 apsn;
} __packed;

#define SROCE_BTH_BYTES		12
#define SROCE_ICRC_BYTES	4

static_assert(sizeof(struct sroce_bth) == SROCE_BTH_BYTES);

#endif /* SROCE_HDR_H */
