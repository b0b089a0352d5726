// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The wire opcodes sroce accepts, one table row each (IBA 9.2.1, 9.3 and
 * annex A17): which headers follow the BTH and whether payload may follow.
 * The receive path looks an opcode up here instead of switching on it, so
 * every opcode not in the table is rejected in one place. Also the AETH's
 * credit codes, which both ends of a connection read the same way.
 */
#include "sroce.h"
#include "sroce_hdr.h"

#define BTH	SROCE_BTH_BYTES
#define OP(t, o, n, len, pl) \
	[SROCE_TRANSPORT_##t | SROCE_OP_##o] = { .name = n, .hdr_len = (len), \
						 .payload = (pl) }

const struct sroce_opcode_info sroce_opcodes[256] = {
	OP(RC, SEND_FIRST, "RC_SEND_FIRST", BTH, true),
	OP(RC, SEND_MIDDLE, "RC_SEND_MIDDLE", BTH, true),
	OP(RC, SEND_LAST, "RC_SEND_LAST", BTH, true),
	OP(RC, SEND_LAST_IMM, "RC_SEND_LAST_IMM", BTH + SROCE_IMMDT_BYTES,
	   true),
	OP(RC, SEND_ONLY, "RC_SEND_ONLY", BTH, true),
	OP(RC, SEND_ONLY_IMM, "RC_SEND_ONLY_IMM", BTH + SROCE_IMMDT_BYTES,
	   true),
	OP(RC, WRITE_FIRST, "RC_WRITE_FIRST", BTH + SROCE_RETH_BYTES, true),
	OP(RC, WRITE_MIDDLE, "RC_WRITE_MIDDLE", BTH, true),
	OP(RC, WRITE_LAST, "RC_WRITE_LAST", BTH, true),
	OP(RC, WRITE_LAST_IMM, "RC_WRITE_LAST_IMM", BTH + SROCE_IMMDT_BYTES,
	   true),
	OP(RC, WRITE_ONLY, "RC_WRITE_ONLY", BTH + SROCE_RETH_BYTES, true),
	OP(RC, WRITE_ONLY_IMM, "RC_WRITE_ONLY_IMM",
	   BTH + SROCE_RETH_BYTES + SROCE_IMMDT_BYTES, true),
	OP(RC, READ_REQUEST, "RC_READ_REQUEST", BTH + SROCE_RETH_BYTES, false),
	OP(RC, READ_RESPONSE_FIRST, "RC_READ_RESPONSE_FIRST",
	   BTH + SROCE_AETH_BYTES, true),
	OP(RC, READ_RESPONSE_MIDDLE, "RC_READ_RESPONSE_MIDDLE", BTH, true),
	OP(RC, READ_RESPONSE_LAST, "RC_READ_RESPONSE_LAST",
	   BTH + SROCE_AETH_BYTES, true),
	OP(RC, READ_RESPONSE_ONLY, "RC_READ_RESPONSE_ONLY",
	   BTH + SROCE_AETH_BYTES, true),
	OP(RC, ACKNOWLEDGE, "RC_ACKNOWLEDGE", BTH + SROCE_AETH_BYTES, false),
	OP(RC, ATOMIC_ACKNOWLEDGE, "RC_ATOMIC_ACKNOWLEDGE",
	   BTH + SROCE_AETH_BYTES + SROCE_ATMACK_BYTES, false),
	OP(RC, COMPARE_SWAP, "RC_COMPARE_SWAP", BTH + SROCE_ATMETH_BYTES,
	   false),
	OP(RC, FETCH_ADD, "RC_FETCH_ADD", BTH + SROCE_ATMETH_BYTES, false),
	OP(RC, SEND_LAST_INV, "RC_SEND_LAST_INV", BTH + SROCE_IETH_BYTES,
	   true),
	OP(RC, SEND_ONLY_INV, "RC_SEND_ONLY_INV", BTH + SROCE_IETH_BYTES,
	   true),
	/* IBA annex A19: FETH then RETH; no payload. */
	OP(RC, FLUSH, "RC_FLUSH", BTH + SROCE_FETH_BYTES + SROCE_RETH_BYTES,
	   false),
	/* IBA annex A19: eight bytes of payload, stored atomically. */
	OP(RC, ATOMIC_WRITE, "RC_ATOMIC_WRITE", BTH + SROCE_RETH_BYTES, true),

	OP(UC, SEND_FIRST, "UC_SEND_FIRST", BTH, true),
	OP(UC, SEND_MIDDLE, "UC_SEND_MIDDLE", BTH, true),
	OP(UC, SEND_LAST, "UC_SEND_LAST", BTH, true),
	OP(UC, SEND_LAST_IMM, "UC_SEND_LAST_IMM", BTH + SROCE_IMMDT_BYTES,
	   true),
	OP(UC, SEND_ONLY, "UC_SEND_ONLY", BTH, true),
	OP(UC, SEND_ONLY_IMM, "UC_SEND_ONLY_IMM", BTH + SROCE_IMMDT_BYTES,
	   true),
	OP(UC, WRITE_FIRST, "UC_WRITE_FIRST", BTH + SROCE_RETH_BYTES, true),
	OP(UC, WRITE_MIDDLE, "UC_WRITE_MIDDLE", BTH, true),
	OP(UC, WRITE_LAST, "UC_WRITE_LAST", BTH, true),
	OP(UC, WRITE_LAST_IMM, "UC_WRITE_LAST_IMM", BTH + SROCE_IMMDT_BYTES,
	   true),
	OP(UC, WRITE_ONLY, "UC_WRITE_ONLY", BTH + SROCE_RETH_BYTES, true),
	OP(UC, WRITE_ONLY_IMM, "UC_WRITE_ONLY_IMM",
	   BTH + SROCE_RETH_BYTES + SROCE_IMMDT_BYTES, true),

	OP(UD, SEND_ONLY, "UD_SEND_ONLY", BTH + SROCE_DETH_BYTES, true),
	OP(UD, SEND_ONLY_IMM, "UD_SEND_ONLY_IMM",
	   BTH + SROCE_DETH_BYTES + SROCE_IMMDT_BYTES, true),

	/* CNP: BTH and 16 reserved bytes, IBA A17.9.3. */
	[SROCE_OPCODE_CNP] = { .name = "CNP", .hdr_len = BTH + 16 },
};

/* IBA 9.7.7.2: credit code to receive WQEs; 0x1f gives no count. */
static const u16 sroce_credit_steps[SROCE_AETH_CREDIT_INVALID] = {
	0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256,
	384, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288,
	16384, 24576, 32768,
};

/* The receive WQEs a credit code promises; none for the invalid code. */
u32 sroce_aeth_credits(u8 code)
{
	code &= SROCE_AETH_VAL_MASK;
	return code < SROCE_AETH_CREDIT_INVALID ? sroce_credit_steps[code] : 0;
}

/* The largest credit code that does not promise more than @posted WQEs. */
u8 sroce_aeth_credit_code(u32 posted)
{
	u8 code = SROCE_AETH_CREDIT_INVALID - 1;

	while (sroce_credit_steps[code] > posted)
		code--;
	return code;
}
