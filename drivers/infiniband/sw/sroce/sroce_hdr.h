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

#define SROCE_BTH_SE		0x80	/* flags: solicited event */
#define SROCE_BTH_PAD_SHIFT	4
#define SROCE_BTH_PAD_MASK	0x30
#define SROCE_BTH_TVER_MASK	0x0f
#define SROCE_BTH_QPN_MASK	0x00ffffff
#define SROCE_BTH_RESV8A_MASK	0xff000000	/* FECN, BECN, reserved */
#define SROCE_BTH_BECN		0x40000000	/* in qpn: set in CNPs */
#define SROCE_BTH_PKEY_LOW15	0x7fff
#define SROCE_BTH_PKEY_DEFAULT	0xffff
#define SROCE_BTH_ACKREQ	0x80000000	/* in apsn */
#define SROCE_BTH_PSN_MASK	0x00ffffff

/* Extended transport header sizes, IBA 9.3. */
#define SROCE_RDETH_BYTES	4
#define SROCE_DETH_BYTES	8
#define SROCE_RETH_BYTES	16
#define SROCE_ATMETH_BYTES	28
#define SROCE_AETH_BYTES	4
#define SROCE_ATMACK_BYTES	8
#define SROCE_IMMDT_BYTES	4
#define SROCE_IETH_BYTES	4
#define SROCE_FETH_BYTES	4

/* Datagram extended transport header, IBA 9.3.2. */
struct sroce_deth {
	__be32 qkey;
	__be32 sqpn;		/* low 24 bits */
} __packed;

/* A Q_Key with this bit set in a send WQE means "the QP's own" (10.2.5). */
#define SROCE_QKEY_CONTROLLED	0x80000000

/* RDMA extended transport header, IBA 9.3.3. */
struct sroce_reth {
	__be64 va;
	__be32 rkey;
	__be32 len;
} __packed;

/* Atomic extended transport header, IBA 9.3.4. */
struct sroce_atmeth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;
	__be64 compare;
} __packed;

/*
 * FLUSH extended transport header, IBA annex A19: the placement type
 * (global visibility, persistence) in bits 3-0 and the selectivity (a
 * range of the region, or all of it) in bits 5-4; the RETH follows.
 */
#define SROCE_FETH_PLT_MASK		0x0000000f
#define SROCE_FETH_SEL_MASK		0x00000030
#define SROCE_FETH_SEL_SHIFT		4
#define SROCE_FLUSH_PLT_GLOBAL		0x1
#define SROCE_FLUSH_PLT_PERSISTENT	0x2
#define SROCE_FLUSH_SEL_RANGE		0
#define SROCE_FLUSH_SEL_REGION		1

struct sroce_feth {
	__be32 bits;
} __packed;

static_assert(sizeof(struct sroce_reth) == SROCE_RETH_BYTES);
static_assert(sizeof(struct sroce_feth) == SROCE_FETH_BYTES);
static_assert(sizeof(struct sroce_atmeth) == SROCE_ATMETH_BYTES);

/*
 * ACK extended transport header, IBA 9.3.5: a syndrome byte, then the
 * 24-bit MSN. The syndrome's top three bits give the kind, the low five a
 * credit count (ACK), a timer code (RNR NAK) or a NAK code.
 */
#define SROCE_AETH_SYN_SHIFT	24
#define SROCE_AETH_MSN_MASK	0x00ffffff
#define SROCE_AETH_KIND_MASK	0x60
#define SROCE_AETH_VAL_MASK	0x1f
#define SROCE_AETH_ACK		0x00
#define SROCE_AETH_RNR_NAK	0x20
#define SROCE_AETH_NAK		0x60
/*
 * An ACK's credit code (IBA 9.7.7.2): how many receive WQEs the responder
 * has posted and not yet taken, beyond the message its MSN counts, in
 * steps that grow by half (sroce_aeth_credits()). This one
 * gives no count, and lifts the requester's limit: a QP whose receives
 * come from an SRQ answers with it.
 */
#define SROCE_AETH_CREDIT_INVALID	0x1f

u32 sroce_aeth_credits(u8 code);
u8 sroce_aeth_credit_code(u32 posted);

enum sroce_nak_code {
	SROCE_NAK_PSN_SEQ = 0,
	SROCE_NAK_INV_REQ = 1,
	SROCE_NAK_REM_ACCESS = 2,
	SROCE_NAK_REM_OP = 3,
};

/* Transport service in the top three opcode bits, IBA 9.2.1. */
enum sroce_transport {
	SROCE_TRANSPORT_RC = 0x00,
	SROCE_TRANSPORT_UC = 0x20,
	SROCE_TRANSPORT_RD = 0x40,
	SROCE_TRANSPORT_UD = 0x60,
	SROCE_TRANSPORT_CNP = 0x80,
	SROCE_TRANSPORT_XRC = 0xa0,
};

#define SROCE_TRANSPORT_MASK	0xe0
#define SROCE_OP_MASK		0x1f

/* Operation in the low five opcode bits, IBA table 38. */
enum sroce_op {
	SROCE_OP_SEND_FIRST = 0x00,
	SROCE_OP_SEND_MIDDLE = 0x01,
	SROCE_OP_SEND_LAST = 0x02,
	SROCE_OP_SEND_LAST_IMM = 0x03,
	SROCE_OP_SEND_ONLY = 0x04,
	SROCE_OP_SEND_ONLY_IMM = 0x05,
	SROCE_OP_WRITE_FIRST = 0x06,
	SROCE_OP_WRITE_MIDDLE = 0x07,
	SROCE_OP_WRITE_LAST = 0x08,
	SROCE_OP_WRITE_LAST_IMM = 0x09,
	SROCE_OP_WRITE_ONLY = 0x0a,
	SROCE_OP_WRITE_ONLY_IMM = 0x0b,
	SROCE_OP_READ_REQUEST = 0x0c,
	SROCE_OP_READ_RESPONSE_FIRST = 0x0d,
	SROCE_OP_READ_RESPONSE_MIDDLE = 0x0e,
	SROCE_OP_READ_RESPONSE_LAST = 0x0f,
	SROCE_OP_READ_RESPONSE_ONLY = 0x10,
	SROCE_OP_ACKNOWLEDGE = 0x11,
	SROCE_OP_ATOMIC_ACKNOWLEDGE = 0x12,
	SROCE_OP_COMPARE_SWAP = 0x13,
	SROCE_OP_FETCH_ADD = 0x14,
	SROCE_OP_SEND_LAST_INV = 0x16,
	SROCE_OP_SEND_ONLY_INV = 0x17,
	SROCE_OP_FLUSH = 0x1c,
	SROCE_OP_ATOMIC_WRITE = 0x1d,
};

/* The RoCEv2 congestion notification packet: transport CNP, op 1. */
#define SROCE_OPCODE_CNP	(SROCE_TRANSPORT_CNP | 0x01)

/**
 * struct sroce_opcode_info - what one wire opcode carries.
 * @name: for tracing; NULL for opcodes sroce does not accept
 * @hdr_len: bytes from the start of the BTH to the payload
 * @payload: the opcode may carry payload (and a pad)
 */
struct sroce_opcode_info {
	const char *name;
	u8 hdr_len;
	bool payload;
};

extern const struct sroce_opcode_info sroce_opcodes[256];

#endif /* SROCE_HDR_H */
