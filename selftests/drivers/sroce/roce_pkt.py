#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Craft RoCEv2 packets, valid or broken on purpose, and send them as raw
Ethernet frames (AF_PACKET) out of IFACE, so that every header byte is the
test's choice and none the kernel's.

usage: roce_pkt.py IFACE DST_MAC SRC_IP DST_IP [options]

With --batch it says "ready", then reads one argument list per line
from stdin (shell quoting, the four positional arguments included),
sends each, and answers "sent" (or "error MESSAGE") on stdout, after the
"reply" line if --reply asked for one: a test that sends many frames
pays for starting Python once. Its answer sockets stay open from one
request to the next, and what reached them late for an earlier request
is discarded before the next is sent.

With --reply SECS it also plays the requester's part: it listens on UDP
port 4791 (the netns it runs in has no RoCE device of its own) and prints
the first answer as "reply OPCODE PSN SYNDROME PAYLOAD_LEN", or
"reply none"; with --msn, an answer with an AETH also gives its MSN last.
After a READ response's first packet, its middle and last packets are
never taken for an answer: they came late (--check-answers checks that,
on this host's loopback).

The ICRC is computed here independently of sroce (IBA A17.3.3: CRC32 over
eight 0xff bytes, then the IP, UDP and BTH headers with their variant
fields set to ones, then the rest), so a packet this tool calls valid and
sroce rejects means one of the two is wrong.
"""
import argparse
import ipaddress
import shlex
import socket
import struct
import sys
import time
import zlib

ROCE_PORT = 4791
# RC RDMA READ response first; middle and last.
READ_RESP_FIRST = 0x0d
READ_RESP_TAIL = (0x0e, 0x0f)

# Bytes of extended headers after the BTH, by opcode (IBA 9.3).
EXT_LEN = {
    0x00: 0, 0x01: 0, 0x02: 0, 0x03: 4, 0x04: 0, 0x05: 4,      # RC send
    0x06: 16, 0x07: 0, 0x08: 0, 0x09: 4, 0x0a: 16, 0x0b: 20,   # RC write
    0x0c: 16, 0x0d: 4, 0x0e: 0, 0x0f: 4, 0x10: 4,             # RC read
    0x11: 4, 0x12: 12, 0x13: 28, 0x14: 28, 0x16: 4, 0x17: 4,
    0x1c: 20, 0x1d: 16,                                       # FLUSH, AW
    0x64: 8, 0x65: 12,                                        # UD send
    0x81: 16,                                                 # CNP
}


def ip_checksum(hdr):
    s = sum(struct.unpack(f"!{len(hdr) // 2}H", hdr))
    while s >> 16:
        s = (s & 0xffff) + (s >> 16)
    return ~s & 0xffff


def icrc(ip_hdr, udp_hdr, rest, v6):
    ip = bytearray(ip_hdr)
    if v6:
        ip[0] |= 0x0f            # traffic class (high nibble part)
        ip[1:4] = b"\xff\xff\xff"  # traffic class + flow label
        ip[7] = 0xff             # hop limit
    else:
        ip[1] = 0xff             # TOS
        ip[8] = 0xff             # TTL
        ip[10:12] = b"\xff\xff"  # header checksum
    udp = bytearray(udp_hdr)
    udp[6:8] = b"\xff\xff"
    bth = bytearray(rest)
    bth[4] = 0xff                # resv8a: FECN, BECN
    return struct.pack("<I", zlib.crc32(b"\xff" * 8 + ip + udp + bth))


def build(a):
    src = ipaddress.ip_address(a.src_ip)
    dst = ipaddress.ip_address(a.dst_ip)
    v6 = src.version == 6
    pad = a.pad
    pad_bytes = pad if a.pad_bytes is None else a.pad_bytes
    ext = EXT_LEN.get(a.opcode, 0) if a.ext_len is None else a.ext_len
    ext = bytes(ext) if a.ext is None else bytes.fromhex(a.ext)

    flags = (a.se << 7) | (pad << 4) | a.tver
    bth = struct.pack("!BBHII", a.opcode, flags, a.pkey,
                      (a.resv8a << 24) | a.qpn, (a.ackreq << 31) | a.psn)
    rest = bth + ext + bytes((i & 0xff for i in range(a.payload)))
    rest += bytes(pad_bytes)
    udp_len = 8 + len(rest) + 4 + a.udp_len_delta
    udp = struct.pack("!HHHH", a.sport, ROCE_PORT, udp_len & 0xffff, 0)
    if v6:
        ver_tc_fl = (6 << 28) | (a.tos << 20) | a.flow
        ip = struct.pack("!IHBB", ver_tc_fl, 8 + len(rest) + 4, 17, a.ttl)
        ip += src.packed + dst.packed
    else:
        frag = 0x2000 if a.more_frags else 0x4000   # MF, or DF
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, a.tos, 20 + 8 + len(rest) + 4,
                         0x1234, frag, a.ttl, 17, 0, src.packed, dst.packed)
        csum = ip_checksum(ip) ^ (0xffff if a.bad_ip_csum else 0)
        ip = ip[:10] + struct.pack("!H", csum) + ip[12:]
    crc = icrc(ip, udp, rest, v6)
    if a.bad_icrc:
        crc = bytes([crc[0] ^ 0x01]) + crc[1:]
    pkt = ip + udp + rest + crc
    if a.truncate:
        pkt = pkt[:-a.truncate]
    return pkt, v6


def psn_of(data):
    """The PSN in the BTH at the start of DATA."""
    return struct.unpack("!I", data[8:12])[0] & 0xffffff


def parse_reply(data, msn=False):
    """OPCODE PSN SYNDROME PAYLOAD_LEN [MSN] of a RoCEv2 UDP payload."""
    opcode, flags = data[0], data[1]
    psn = psn_of(data)
    has_aeth = opcode in (0x0d, 0x0f, 0x10, 0x11, 0x12)
    syn = data[12] if has_aeth else -1
    plen = len(data) - 12 - EXT_LEN.get(opcode, 0) - 4 - ((flags >> 4) & 3)
    out = f"0x{opcode:02x} {psn} 0x{syn & 0xff:02x} {plen}"
    if msn and has_aeth:
        out += f" {struct.unpack('!I', data[12:16])[0] & 0xffffff}"
    return out


def parser():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("iface")
    p.add_argument("dst_mac")
    p.add_argument("src_ip")
    p.add_argument("dst_ip")
    p.add_argument("--opcode", type=lambda x: int(x, 0), default=0x04)
    p.add_argument("--qpn", type=lambda x: int(x, 0), default=0x11)
    p.add_argument("--psn", type=int, default=0)
    p.add_argument("--pkey", type=lambda x: int(x, 0), default=0xffff)
    p.add_argument("--pad", type=int, default=0)
    p.add_argument("--pad-bytes", type=int, help="pad bytes actually sent")
    p.add_argument("--payload", type=int, default=64)
    p.add_argument("--ext-len", type=int, help="override extension bytes")
    p.add_argument("--ext", help="extension header bytes, in hex")
    p.add_argument("--reply", type=float, metavar="SECS",
                   help="wait this long for an answer and print it")
    p.add_argument("--msn", action="store_true",
                   help="with --reply: print the answer's MSN too")
    p.add_argument("--tver", type=int, default=0)
    p.add_argument("--se", type=int, default=0)
    p.add_argument("--ackreq", type=int, default=0)
    p.add_argument("--resv8a", type=lambda x: int(x, 0), default=0)
    p.add_argument("--tos", type=lambda x: int(x, 0), default=0)
    p.add_argument("--flow", type=lambda x: int(x, 0), default=0)
    p.add_argument("--ttl", type=int, default=64)
    p.add_argument("--sport", type=int, default=49152)
    p.add_argument("--udp-len-delta", type=int, default=0)
    p.add_argument("--truncate", type=int, default=0,
                   help="cut this many bytes off the end")
    p.add_argument("--bad-icrc", action="store_true")
    p.add_argument("--bad-ip-csum", action="store_true")
    p.add_argument("--more-frags", action="store_true",
                   help="IPv4: first fragment of a larger datagram")
    p.add_argument("--count", type=int, default=1)
    p.add_argument("--also", nargs=2, metavar=("SRC_IP", "DST_IP"),
                   help="send the same packet between these addresses too")
    return p


def send(a, answer_sockets=None):
    """Send the frames option set A asks for; print a reply if asked.
    ANSWER_SOCKETS (batch mode) keeps each address's Answers."""
    with open(f"/sys/class/net/{a.iface}/address") as f:
        src_mac = bytes.fromhex(f.read().strip().replace(":", ""))
    dst_mac = bytes.fromhex(a.dst_mac.replace(":", ""))
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
        send_on(s, a, src_mac, dst_mac, answer_sockets)


class Answers:
    """A UDP socket on an address's port 4791, for the answers to our
    requests, and the READ response tail it is still owed: after a
    READ_RESPONSE_FIRST at PSN P, its MIDDLE and LAST packets (PSNs after
    P) may come late, and are then no answer to a later request."""

    def __init__(self, sock):
        self.sock = sock
        self.owed_after = None

    @classmethod
    def bound(cls, src_ip):
        ip = ipaddress.ip_address(src_ip)
        r = socket.socket(socket.AF_INET6 if ip.version == 6
                          else socket.AF_INET, socket.SOCK_DGRAM)
        r.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        r.bind((src_ip, ROCE_PORT))
        return cls(r)

    def late_tail(self, data):
        """Is DATA a packet of the owed READ response tail? The tail is
        paid once its LAST comes."""
        if (self.owed_after is None or len(data) < 12 or
                data[0] not in READ_RESP_TAIL):
            return False
        if not 0 < (psn_of(data) - self.owed_after) & 0xffffff < 1 << 23:
            return False
        if data[0] == READ_RESP_TAIL[-1]:
            self.owed_after = None
        return True

    def drain(self):
        """Discard what came late for an earlier request."""
        self.sock.setblocking(False)
        try:
            while True:
                self.late_tail(self.sock.recv(65536))
        except BlockingIOError:
            pass

    def first(self, secs, msn):
        """The first answer within SECS, parsed, or "none"; the owed
        tail's packets are passed over."""
        deadline = time.monotonic() + secs
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                return "none"
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(65536)
            except socket.timeout:
                return "none"
            if self.late_tail(data):
                continue
            if data and data[0] == READ_RESP_FIRST:
                self.owed_after = psn_of(data)
            return parse_reply(data, msn)


def answers_for(src_ip, kept):
    """SRC_IP's Answers: from KEPT (a dict, or None), emptied of what
    came late for an earlier request, or new."""
    key = ipaddress.ip_address(src_ip)
    ans = kept.get(key) if kept is not None else None
    if ans is not None:
        ans.drain()
        return ans
    ans = Answers.bound(src_ip)
    if kept is not None:
        kept[key] = ans
    return ans


def send_on(s, a, src_mac, dst_mac, kept=None):
    s.bind((a.iface, 0))
    pairs = [(a.src_ip, a.dst_ip)] + ([tuple(a.also)] if a.also else [])
    if a.reply is not None:
        ans = answers_for(a.src_ip, kept)
    for a.src_ip, a.dst_ip in pairs:
        pkt, v6 = build(a)
        eth = dst_mac + src_mac + struct.pack("!H", 0x86dd if v6 else 0x0800)
        for _ in range(a.count):
            s.send(eth + pkt)
    if a.reply is not None:
        print("reply", ans.first(a.reply, a.msn))
        if kept is None:
            ans.sock.close()


def check_answers():
    """--check-answers: Answers passes over the late tail of a READ
    response it printed the first packet of, and over nothing else, on a
    UDP socket of this host's loopback. Exit status 0 when it does."""
    def pkt(op, psn):
        """BTH (OP, PSN), AETH (syndrome 0x1f), ICRC; no payload."""
        return bytes([op, 0, 0xff, 0xff, 0, 0, 0, 0x11,
                      0, 0, 0, psn, 0x1f, 0, 0, 1]) + bytes(4)

    # (packets that arrive, then the answer printed for a request)
    steps = [
        ([(0x0d, 3)], "0x0d 3 0x1f 0"),        # a READ's FIRST
        ([(0x0f, 4), (0x10, 4)], "0x10 4 0x1f 0"),  # its LAST came late
        ([(0x0f, 5)], "0x0f 5 0x1f 0"),        # nothing owed: reported
        ([(0x0d, 6), (0x0e, 7)], "0x0d 6 0x1f 0"),
        ([(0x0e, 7), (0x0f, 8)], "none"),      # a tail, drained first
        ([(0x0f, 9)], "0x0f 9 0x1f 0"),        # paid: reported again
    ]
    got = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as r, \
            socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as w:
        r.bind(("127.0.0.1", 0))
        ans = Answers(r)
        for i, (arrive, _) in enumerate(steps):
            for op, psn in arrive:
                w.sendto(pkt(op, psn), r.getsockname())
            if i == 4:
                time.sleep(0.1)
                ans.drain()
            got.append(ans.first(0.5, False))
    expected = [answer for _, answer in steps]
    if got != expected:
        print("# answers", got, "where", expected, file=sys.stderr)
    return 0 if got == expected else 1


def main():
    if sys.argv[1:] == ["--check-answers"]:
        return check_answers()
    if sys.argv[1:] == ["--batch"]:
        p = parser()
        p.exit_on_error = False
        kept = {}
        print("ready", flush=True)
        for line in sys.stdin:
            try:
                send(p.parse_args(shlex.split(line)), kept)
                print("sent", flush=True)
            except SystemExit:  # argparse has already said why
                print("error bad arguments", flush=True)
            except Exception as e:  # pylint: disable=broad-except
                # An answer too short to parse, say: the next request
                # must still be served.
                print("error", type(e).__name__, e, flush=True)
        return 0
    send(parser().parse_args())
    return 0


if __name__ == "__main__":
    sys.exit(main())
