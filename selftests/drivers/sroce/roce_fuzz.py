#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send mutated RoCEv2 packets at an sroce device, as raw Ethernet frames.

usage: roce_fuzz.py IFACE DST_MAC SRC_IP DST_IP --qpns N,N.. [options]

Every packet starts from a plausible request or response for one of the
live QPs (--qpns), a destroyed one (--dead-qpns) or a random QP number,
and then has fields mutated: opcode, flags, pad count, P_Key, PSN (in and
out of the window), extension headers (random bytes, or lengths and
addresses that overflow), payload size (empty to beyond the MTU),
truncated or padded headers, and the UDP length. Most packets carry a
correct ICRC, so the mutation reaches the transport; --bad-icrc-percent
of them carry a broken one. Random QP numbers stay above 0x800000 so the
fuzzing never lands on a QP the test did not offer.

Bounded: --count packets or --seconds, whichever ends first. Prints
"sent N bad_icrc B" (B: the ones sroce must count as bad ICRC) and a histogram of the opcodes sent.
"""
import argparse
import ipaddress
import os
import random
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from roce_pkt import EXT_LEN, ROCE_PORT, icrc, ip_checksum  # noqa: E402

OPCODES = sorted(EXT_LEN)


def ext_bytes(rng, opcode):
    """Extension headers for OPCODE: plausible, hostile or random."""
    n = EXT_LEN.get(opcode, rng.choice((0, 4, 8, 16, 28)))
    kind = rng.random()
    if n in (16, 20) and kind < 0.6:
        # RETH (after a FETH for FLUSH): addresses and lengths that wrap,
        # run past regions, or are plain wrong.
        va = rng.choice((0, rng.getrandbits(64), 2**64 - rng.randint(1, 64),
                         rng.getrandbits(32) << 12))
        length = rng.choice((0, 1, 8, 64, 4096, 2**31, 2**32 - 1,
                             rng.getrandbits(32)))
        reth = struct.pack("!QII", va, rng.getrandbits(32), length)
        return (rng.getrandbits(32).to_bytes(4, "big") + reth
                if n == 20 else reth)
    if n == 28 and kind < 0.6:
        va = rng.choice((rng.getrandbits(64), 2**64 - 8,
                         rng.getrandbits(32) | 1))
        return struct.pack("!QIQQ", va, rng.getrandbits(32),
                           rng.getrandbits(64), rng.getrandbits(64))
    return bytes(rng.getrandbits(8) for _ in range(n))


def packet(rng, a, live, dead):
    r = rng.random()
    if r < 0.7 and live:
        qpn = rng.choice(live)
    elif r < 0.85 and dead:
        qpn = rng.choice(dead)
    else:
        qpn = rng.randint(0x800000, 0xfffffe)
    opcode = rng.choice(OPCODES) if rng.random() < 0.9 else \
        rng.getrandbits(8)
    pad = rng.randint(0, 3) if rng.random() < 0.3 else 0
    tver = 0 if rng.random() < 0.97 else rng.randint(1, 15)
    pkey = 0xffff if rng.random() < 0.95 else rng.getrandbits(16)
    psn = rng.choice((rng.randint(0, 64), rng.getrandbits(24),
                      (2**24 - rng.randint(1, 64))))
    flags = (rng.getrandbits(1) << 7) | (pad << 4) | tver
    bth = struct.pack("!BBHII", opcode, flags, pkey,
                      (rng.getrandbits(2) << 24 if rng.random() < 0.1 else 0)
                      | qpn, (rng.getrandbits(1) << 31) | psn)
    ext = ext_bytes(rng, opcode)
    if rng.random() < 0.1:
        ext = ext[:rng.randint(0, len(ext))] if ext else b"\0" * 3
    plen = rng.choice((0, 0, 4, 8, 60, 1024, 4096, rng.randint(0, 4500)))
    plen -= pad if plen >= pad else 0
    payload = bytes(rng.getrandbits(8) for _ in range(min(plen, 64)))
    payload += bytes(plen - len(payload))
    rest = bth + ext + payload + bytes(pad)

    src = ipaddress.ip_address(a.src_ip)
    dst = ipaddress.ip_address(a.dst_ip)
    udp_len = 8 + len(rest) + 4
    lie = rng.random() < 0.03
    if lie:
        udp_len += rng.choice((-8, -4, -1, 1, 4, 4000))
    udp = struct.pack("!HHHH", rng.randint(49152, 65535), ROCE_PORT,
                      udp_len & 0xffff, 0)
    ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + 8 + len(rest) + 4,
                     rng.getrandbits(16), 0x4000, 64, 17, 0, src.packed,
                     dst.packed)
    ip = ip[:10] + struct.pack("!H", ip_checksum(ip)) + ip[12:]
    crc = icrc(ip, udp, rest, False)
    bad = rng.random() * 100 < a.bad_icrc_percent
    if bad:
        i = rng.randrange(4)
        crc = crc[:i] + bytes([crc[i] ^ (1 << rng.randrange(8))]) + \
            crc[i + 1:]
    # A UDP length that lies is caught before the ICRC is looked at.
    return ip + udp + rest + crc, opcode, bad and not lie


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("iface")
    p.add_argument("dst_mac")
    p.add_argument("src_ip")
    p.add_argument("dst_ip")
    p.add_argument("--qpns", default="", help="live QP numbers, comma-separated")
    p.add_argument("--dead-qpns", default="",
                   help="numbers of QPs already destroyed")
    p.add_argument("--count", type=int, default=10000)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--bad-icrc-percent", type=float, default=10)
    a = p.parse_args()
    if ipaddress.ip_address(a.src_ip).version != 4:
        p.error("IPv4 only")

    live = [int(q, 0) for q in a.qpns.split(",") if q]
    dead = [int(q, 0) for q in a.dead_qpns.split(",") if q]
    rng = random.Random(a.seed)
    with open(f"/sys/class/net/{a.iface}/address") as f:
        src_mac = bytes.fromhex(f.read().strip().replace(":", ""))
    eth = bytes.fromhex(a.dst_mac.replace(":", "")) + src_mac + \
        b"\x08\x00"
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((a.iface, 0))
    hist = {}
    sent = bad_icrc = 0
    end = time.monotonic() + a.seconds
    while sent < a.count and time.monotonic() < end:
        pkt, opcode, bad = packet(rng, a, live, dead)
        try:
            s.send(eth + pkt)
        except OSError:
            continue        # larger than the link takes: not sent
        sent += 1
        bad_icrc += bad
        hist[opcode] = hist.get(opcode, 0) + 1
    print(f"sent {sent} bad_icrc {bad_icrc}")
    print("opcodes " + " ".join(f"{o:#04x}:{n}" for o, n in sorted(hist.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
