// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RoCEv2 invariant CRC (IBA annex A17.3.3): IEEE CRC32 over 8 bytes of
 * ones standing in for the LRH, the IP and UDP headers and the BTH with
 * every field a router may change set to ones, then the rest of the
 * transport headers and the payload. It is sent as the little-endian
 * complement of the CRC register, like an Ethernet FCS.
 *
 * crc32_le() is the kernel's fastest IEEE CRC32 (PCLMULQDQ folding where
 * the CPU has it). Non-linear packets are covered fragment by fragment
 * with __skb_checksum() and crc32_le_combine(), so nothing is linearised.
 */
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include "sroce.h"
#include "sroce_hdr.h"

/* IPv6 (40) or IPv4 with options (60), UDP, BTH. */
#define SROCE_ICRC_PSEUDO_MAX	(60 + sizeof(struct udphdr) + SROCE_BTH_BYTES)

static __wsum sroce_crc_update(const void *buf, int len, __wsum crc)
{
	return (__force __wsum)crc32_le((__force u32)crc, buf, len);
}

static __wsum sroce_crc_combine(__wsum crc, __wsum crc2, int offset, int len)
{
	return (__force __wsum)crc32_le_combine((__force u32)crc,
						(__force u32)crc2, len);
}

static const struct skb_checksum_ops sroce_crc_ops = {
	.update = sroce_crc_update,
	.combine = sroce_crc_combine,
};

/**
 * sroce_icrc() - compute the ICRC a packet must carry.
 * @skb: packet with its IP header at skb->data
 * @bth_off: offset of the BTH from skb->data
 * @icrc_off: offset of the ICRC field, the end of the covered bytes
 *
 * Return: the ICRC in wire byte order, or 0 when the headers cannot be
 * read (a zero ICRC from the wire then also fails to match, by chance only
 * once in 2^32).
 */
__le32 sroce_icrc(const struct sk_buff *skb, unsigned int bth_off,
		  unsigned int icrc_off)
{
	static const u8 lrh_ones[8] = { 0xff, 0xff, 0xff, 0xff,
					0xff, 0xff, 0xff, 0xff };
	u8 pseudo[SROCE_ICRC_PSEUDO_MAX];
	unsigned int plen = bth_off + SROCE_BTH_BYTES;
	struct udphdr *uh;
	u32 crc;

	if (plen > sizeof(pseudo) || icrc_off < plen ||
	    skb_copy_bits(skb, 0, pseudo, plen))
		return 0;

	if (skb->protocol == htons(ETH_P_IP)) {
		struct iphdr *iph = (struct iphdr *)pseudo;

		iph->tos = 0xff;
		iph->ttl = 0xff;
		iph->check = (__force __sum16)0xffff;
		uh = (struct udphdr *)(pseudo + iph->ihl * 4);
	} else {
		struct ipv6hdr *ip6h = (struct ipv6hdr *)pseudo;

		/* Traffic class and flow label: all but the version nibble. */
		pseudo[0] |= 0x0f;
		memset(&pseudo[1], 0xff, 3);
		ip6h->hop_limit = 0xff;
		uh = (struct udphdr *)(pseudo + sizeof(*ip6h));
	}
	uh->check = (__force __sum16)0xffff;
	((struct sroce_bth *)(pseudo + bth_off))->qpn |=
		cpu_to_be32(SROCE_BTH_RESV8A_MASK);

	crc = crc32_le(~0U, lrh_ones, sizeof(lrh_ones));
	crc = crc32_le(crc, pseudo, plen);
	crc = (__force u32)__skb_checksum(skb, plen, icrc_off - plen,
					  (__force __wsum)crc, &sroce_crc_ops);
	return cpu_to_le32(~crc);
}
