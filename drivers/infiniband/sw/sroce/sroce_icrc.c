// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The RoCEv2 invariant CRC (IBA annex A17.3.3): IEEE CRC32 over 8 bytes of
 * ones standing in for the LRH, the IP and UDP headers and the BTH with
 * every field a router may change set to ones, then the rest of the
 * transport headers and the payload. It is sent as the little-endian
 * complement of the CRC register, like an Ethernet FCS.
 *
 * Two implementations compute the same CRC: the library's crc32_le()
 * (slice-by-8 tables on the kernels we target) and the crypto API's
 * "crc32" (crc32-pclmul folding where the CPU has PCLMULQDQ). Which is
 * faster depends on the CPU, and under emulation PCLMULQDQ can be slower
 * than tables, so the module measures both at load time, as the RAID6
 * code picks its syndrome functions, and takes the faster. The "icrc"
 * parameter shows the choice and can force one ("lib", "crypto") or
 * measure again ("auto"); both give identical results, so switching
 * under traffic is harmless.
 *
 * Non-linear packets are read piece by piece with skb_seq_read(), the CRC
 * running on from one piece to the next: nothing is linearised, and no
 * crc32_le_combine() per fragment (__skb_checksum()'s way), which costs
 * as much as a sixth of the CRC itself on 4 KiB fragments.
 */
#include <crypto/hash.h>
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/jump_label.h>
#include <linux/moduleparam.h>
#include <linux/udp.h>

#include "sroce.h"
#include "sroce_hdr.h"

/* IPv6 (40) or IPv4 with options (60), UDP, BTH. */
#define SROCE_ICRC_PSEUDO_MAX	(60 + sizeof(struct udphdr) + SROCE_BTH_BYTES)

/* Set when the crypto API's crc32 is in use; the tfm outlives any user. */
static DEFINE_STATIC_KEY_FALSE(sroce_crc_by_crypto);
static struct crypto_shash *sroce_crc_tfm;
/* Serialises choices; the mode asked for, applied once loading is done. */
static DEFINE_MUTEX(sroce_crc_choice_lock);
enum sroce_crc_mode { SROCE_CRC_AUTO, SROCE_CRC_LIB, SROCE_CRC_CRYPTO };
static enum sroce_crc_mode sroce_crc_mode;
static bool sroce_crc_ready;
static u32 sroce_crc_sink;

/*
 * The shash state of "crc32" is the bare CRC register (no inversion), so
 * a running CRC is imported, extended and exported again.
 */
static u32 sroce_crc32_crypto(u32 crc, const void *buf, size_t len)
{
	SHASH_DESC_ON_STACK(desc, sroce_crc_tfm);

	desc->tfm = sroce_crc_tfm;
	if (crypto_shash_import(desc, &crc) ||
	    crypto_shash_update(desc, buf, len) ||
	    crypto_shash_export(desc, &crc))
		return crc32_le(crc, buf, len);	/* not seen; stay correct */
	return crc;
}

static u32 sroce_crc32_lib(u32 crc, const void *buf, size_t len)
{
	return crc32_le(crc, buf, len);
}

static u32 sroce_crc32(u32 crc, const void *buf, size_t len)
{
	if (static_branch_unlikely(&sroce_crc_by_crypto))
		return sroce_crc32_crypto(crc, buf, len);
	return crc32_le(crc, buf, len);
}

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
__le32 sroce_icrc(struct sk_buff *skb, unsigned int bth_off,
		  unsigned int icrc_off)
{
	static const u8 lrh_ones[8] = { 0xff, 0xff, 0xff, 0xff,
					0xff, 0xff, 0xff, 0xff };
	u8 pseudo[SROCE_ICRC_PSEUDO_MAX];
	unsigned int plen = bth_off + SROCE_BTH_BYTES;
	unsigned int done = 0, len;
	struct skb_seq_state seq;
	struct udphdr *uh;
	const u8 *piece;
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

	crc = sroce_crc32(~0U, lrh_ones, sizeof(lrh_ones));
	crc = sroce_crc32(crc, pseudo, plen);
	skb_prepare_seq_read(skb, plen, icrc_off, &seq);
	/*
	 * A piece may run past icrc_off (to the end of what is mapped);
	 * the call after the last byte returns 0 and releases the mapping.
	 */
	while ((len = skb_seq_read(done, &piece, &seq))) {
		len = min(len, icrc_off - plen - done);
		crc = sroce_crc32(crc, piece, len);
		done += len;
	}
	return cpu_to_le32(~crc);
}

/* Bytes per second of @fn over a 4 KiB packet's worth, best of 3. */
static u64 sroce_crc_rate(u32 (*fn)(u32, const void *, size_t),
			  const void *buf, size_t len)
{
	u64 best = 0, ns;
	u32 crc = 0;
	int round, i;
	ktime_t t;

	for (round = 0; round < 3; round++) {
		t = ktime_get();
		for (i = 0; i < 16; i++)
			crc = fn(crc, buf, len);
		ns = ktime_to_ns(ktime_sub(ktime_get(), t)) ?: 1;
		best = max(best, div64_u64(16ULL * len * NSEC_PER_SEC, ns));
		cond_resched();
	}
	WRITE_ONCE(sroce_crc_sink, crc);	/* the loop has an effect */
	return best;
}

/* Measure both and keep the faster; with no crypto crc32, the library. */
static void sroce_crc_choose_measured(void)
{
	const size_t len = 4096;
	u64 lib, crypto;
	void *buf;

	if (!sroce_crc_tfm) {
		static_branch_disable(&sroce_crc_by_crypto);
		return;
	}
	buf = kmalloc(len, GFP_KERNEL);
	if (!buf)
		return;	/* keep the current choice */
	get_random_bytes(buf, len);
	lib = sroce_crc_rate(sroce_crc32_lib, buf, len);
	crypto = sroce_crc_rate(sroce_crc32_crypto, buf, len);
	kfree(buf);
	if (crypto > lib)
		static_branch_enable(&sroce_crc_by_crypto);
	else
		static_branch_disable(&sroce_crc_by_crypto);
	pr_info("sroce: ICRC by %s: crc32_le %llu MB/s, %s %llu MB/s\n",
		crypto > lib ? "crypto" : "lib", lib >> 20,
		crypto_shash_driver_name(sroce_crc_tfm), crypto >> 20);
}

/* Context: sroce_crc_choice_lock held. */
static int sroce_crc_apply(void)
{
	lockdep_assert_held(&sroce_crc_choice_lock);
	switch (sroce_crc_mode) {
	case SROCE_CRC_LIB:
		static_branch_disable(&sroce_crc_by_crypto);
		return 0;
	case SROCE_CRC_CRYPTO:
		if (!sroce_crc_tfm)
			return -ENODEV;
		static_branch_enable(&sroce_crc_by_crypto);
		return 0;
	default:
		sroce_crc_choose_measured();
		return 0;
	}
}

static int sroce_icrc_param_set(const char *val, const struct kernel_param *kp)
{
	enum sroce_crc_mode mode;
	int ret = 0;

	if (sysfs_streq(val, "auto"))
		mode = SROCE_CRC_AUTO;
	else if (sysfs_streq(val, "lib"))
		mode = SROCE_CRC_LIB;
	else if (sysfs_streq(val, "crypto"))
		mode = SROCE_CRC_CRYPTO;
	else
		return -EINVAL;
	mutex_lock(&sroce_crc_choice_lock);
	/* At load time this only records the mode; sroce_icrc_init() applies it. */
	if (sroce_crc_ready && mode == SROCE_CRC_CRYPTO && !sroce_crc_tfm) {
		ret = -ENODEV;
	} else {
		sroce_crc_mode = mode;
		if (sroce_crc_ready)
			ret = sroce_crc_apply();
	}
	mutex_unlock(&sroce_crc_choice_lock);
	return ret;
}

static int sroce_icrc_param_get(char *buf, const struct kernel_param *kp)
{
	if (static_key_enabled(&sroce_crc_by_crypto))
		return sysfs_emit(buf, "crypto (%s)\n",
				  crypto_shash_driver_name(sroce_crc_tfm));
	return sysfs_emit(buf, "lib (crc32_le)\n");
}

static const struct kernel_param_ops sroce_icrc_param_ops = {
	.set = sroce_icrc_param_set,
	.get = sroce_icrc_param_get,
};

module_param_cb(icrc, &sroce_icrc_param_ops, NULL, 0644);
MODULE_PARM_DESC(icrc,
		 "ICRC implementation: lib, crypto, or auto (measure and pick the faster)");

/* Context: module load, before any device exists. */
void sroce_icrc_init(void)
{
	struct crypto_shash *tfm = crypto_alloc_shash("crc32", 0, 0);

	/* A crc32 whose state is not the bare 4-byte register is unusable. */
	if (!IS_ERR(tfm) && (crypto_shash_descsize(tfm) != sizeof(u32) ||
			     crypto_shash_statesize(tfm) != sizeof(u32))) {
		crypto_free_shash(tfm);
		tfm = ERR_PTR(-EINVAL);
	}
	sroce_crc_tfm = IS_ERR(tfm) ? NULL : tfm;
	mutex_lock(&sroce_crc_choice_lock);
	if (sroce_crc_apply()) {
		pr_warn("sroce: icrc=crypto: the kernel has no crc32 shash; using crc32_le\n");
		sroce_crc_mode = SROCE_CRC_AUTO;
		sroce_crc_apply();
	}
	sroce_crc_ready = true;
	mutex_unlock(&sroce_crc_choice_lock);
}

/* Context: module unload, no device and no packet of ours left. */
void sroce_icrc_exit(void)
{
	static_branch_disable(&sroce_crc_by_crypto);
	if (sroce_crc_tfm)
		crypto_free_shash(sroce_crc_tfm);
}
