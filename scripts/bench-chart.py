#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Draw the benchmark's ratio chart as a PNG, with the standard library only.

usage: scripts/bench-chart.py RESULTS.csv OUT.png [TITLE]

RESULTS.csv is what scripts/bench writes (columns test, size, mtu, ...,
ratio). One group of bars per test, one bar per size and path MTU, its
height the ratio (above the line at 1.0, sroce is better); a run without a
ratio (a failed run on either device) is drawn as a grey X on the axis.
Text uses a small built-in 5x7 bitmap font (upper case, digits, a few signs).
"""

import csv
import math
import struct
import sys
import zlib

# 5x7 glyphs: seven rows of five bits each, as hex digit pairs.
FONT = {
    "0": "0e11131519110e", "1": "040c040404040e", "2": "0e11010204081f",
    "3": "1f02040201110e", "4": "02060a121f0202", "5": "1f101e0101110e",
    "6": "0608101e11110e", "7": "1f010204080808", "8": "0e11110e11110e",
    "9": "0e11110f01020c", "A": "0e1111111f1111", "B": "1e11111e11111e",
    "C": "0e11101010110e", "D": "1c12111111121c", "E": "1f10101e10101f",
    "F": "1f10101e101010", "G": "0e11101711110f", "H": "1111111f111111",
    "I": "0e04040404040e", "J": "0702020202120c", "K": "11121418141211",
    "L": "1010101010101f", "M": "111b1515111111", "N": "11111915131111",
    "O": "0e11111111110e", "P": "1e11111e101010", "Q": "0e11111115120d",
    "R": "1e11111e141211", "S": "0f10100e01011e", "T": "1f040404040404",
    "U": "1111111111110e", "V": "11111111110a04", "W": "1111111515150a",
    "X": "11110a040a1111", "Y": "1111110a040404", "Z": "1f01020408101f",
    ".": "00000000000c0c", ",": "000000000c0408", "-": "0000001f000000",
    "_": "0000000000001f", "/": "00010204081000", ":": "000c0c000c0c00",
    "=": "00001f001f0000", ">": "08040201020408", "<": "02040810080402",
    "(": "02040808080402", ")": "08040202020408", "+": "0004041f040400",
    " ": "00000000000000",
}

WHITE = (255, 255, 255)
BLACK = (0, 0, 0)
GREY = (150, 150, 150)
LIGHT = (225, 225, 225)
RED = (200, 30, 30)
MTU_COLOURS = [(60, 110, 180), (240, 140, 30), (90, 170, 90), (150, 90, 170)]


class Canvas:
    """An RGB raster with the few drawing primitives the chart needs."""

    def __init__(self, width, height):
        self.w, self.h = width, height
        self.px = bytearray(WHITE * (width * height))

    def rect(self, x0, y0, x1, y1, colour):
        """Fill [x0, x1) x [y0, y1), clipped to the canvas."""
        x0, x1 = max(0, min(x0, x1)), min(self.w, max(x0, x1))
        y0, y1 = max(0, min(y0, y1)), min(self.h, max(y0, y1))
        if x0 >= x1:
            return
        row = bytes(colour) * (x1 - x0)
        for y in range(y0, y1):
            i = (y * self.w + x0) * 3
            self.px[i:i + len(row)] = row

    def dot(self, x, y, colour):
        self.rect(x, y, x + 1, y + 1, colour)

    def text(self, x, y, s, colour=BLACK, scale=1):
        """Draw s with its top left corner at (x, y)."""
        for ch in s.upper():
            rows = FONT.get(ch, FONT["-"])
            for r in range(7):
                bits = int(rows[2 * r:2 * r + 2], 16)
                for c in range(5):
                    if bits & (0x10 >> c):
                        self.rect(x + c * scale, y + r * scale,
                                  x + (c + 1) * scale, y + (r + 1) * scale,
                                  colour)
            x += 6 * scale

    def png(self):
        raw = b"".join(b"\0" + bytes(self.px[y * self.w * 3:(y + 1) * self.w * 3])
                       for y in range(self.h))

        def chunk(kind, data):
            return (struct.pack(">I", len(data)) + kind + data +
                    struct.pack(">I", zlib.crc32(kind + data) & 0xffffffff))
        return (b"\x89PNG\r\n\x1a\n" +
                chunk(b"IHDR", struct.pack(">IIBBBBB", self.w, self.h, 8, 2, 0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(raw, 9)) +
                chunk(b"IEND", b""))


def text_width(s, scale=1):
    return len(s) * 6 * scale - scale


def human(size):
    n = int(size)
    for unit, div in (("M", 1 << 20), ("K", 1 << 10)):
        if n >= div and n % div == 0:
            return f"{n // div}{unit}"
    return str(n)


def load(path):
    """Groups of bars: [(test, [(size, mtu, ratio or None), ...]), ...]."""
    groups = []
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            # Rows with no rxe counterpart (memcpy, TCP over a netns) have
            # no ratio to draw; the table shows them.
            if row.get("rxe_status") in ("n/a", "") and not row.get("ratio"):
                continue
            ratio = float(row["ratio"]) if row.get("ratio") else None
            if not groups or groups[-1][0] != row["test"]:
                groups.append((row["test"], []))
            groups[-1][1].append((row["size"], row["mtu"], ratio))
    return groups


def y_scale(groups):
    """The top of the axis and the tick step."""
    top = max([r for _, bars in groups for _, _, r in bars if r is not None],
              default=1.0)
    top = min(max(2.0, top * 1.1), 20.0)
    step = next(s for s in (0.25, 0.5, 1.0, 2.0, 5.0) if top / s <= 8)
    return math.ceil(top / step) * step, step


def draw(groups, title):
    mtus = sorted({m for _, bars in groups for _, m, _ in bars}, key=int)
    colour = {m: MTU_COLOURS[i % len(MTU_COLOURS)] for i, m in enumerate(mtus)}
    bar, size_gap, group_gap = 14, 8, 28
    left, right, top_m, bottom_m = 56, 20, 56, 48

    # Bars (x, mtu, ratio) and groups (test, x0, x1, size spans).
    x = left + group_gap // 2
    placed, spans_of = [], []
    for test, bars in groups:
        gx0, spans = x, []
        for size, mtu, ratio in bars:
            if spans and spans[-1][0] != size:
                x += size_gap
            if not spans or spans[-1][0] != size:
                spans.append([size, x, x])
            placed.append((x, mtu, ratio))
            x += bar
            spans[-1][2] = x
        spans_of.append((test, gx0, x, spans))
        x += group_gap
    width = max(x - group_gap // 2 + right, left + text_width(title, 2) + right)
    height = 380
    c = Canvas(width, height)
    y0, y1 = height - bottom_m, top_m       # axis bottom and top
    ymax, step = y_scale(groups)

    def ypos(v):
        return round(y0 - (y0 - y1) * min(v, ymax) / ymax)

    c.text(left, 10, title, BLACK, 2)
    lx = left
    for m in mtus:
        c.rect(lx, 34, lx + 10, 44, colour[m])
        c.text(lx + 14, 36, f"MTU {m}")
        lx += 14 + text_width(f"MTU {m}") + 16
    c.text(lx, 36, "X", GREY)
    c.text(lx + 10, 36, "NO RESULT")

    # Grid and ticks.
    t = 0.0
    while t <= ymax + 1e-9:
        y = ypos(t)
        c.rect(left, y, width - right, y + 1, LIGHT)
        label = f"{t:.2f}".rstrip("0").rstrip(".") if step < 1 else f"{t:.0f}"
        c.text(left - 6 - text_width(label), y - 3, label)
        t += step

    for test, gx0, gx1, spans in spans_of:
        for size, sx0, sx1 in spans:
            label = human(size)
            c.text((sx0 + sx1 - text_width(label)) // 2, y0 + 6, label)
        c.text((gx0 + gx1 - text_width(test)) // 2, y0 + 22, test)
    for bx, mtu, ratio in placed:
        if ratio is None:
            c.text(bx + 4, y0 - 9, "X", GREY)
        else:
            c.rect(bx + 1, ypos(ratio), bx + bar - 1, y0, colour[mtu])
            if ratio > ymax:                # clipped: a notch on top
                c.rect(bx + 1, y1 + 3, bx + bar - 1, y1 + 5, WHITE)

    # Axes and the 1.0 line (dashed).
    c.rect(left, y1, left + 1, y0 + 1, BLACK)
    c.rect(left, y0, width - right, y0 + 1, BLACK)
    y = ypos(1.0)
    for dx in range(left, width - right, 8):
        c.rect(dx, y - 1, min(dx + 5, width - right), y + 1, RED)
    c.text(width - right - text_width("1.0"), y - 11, "1.0", RED)
    return c


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: bench-chart.py RESULTS.csv OUT.png [TITLE]")
    title = sys.argv[3] if len(sys.argv) == 4 else "sroce vs rxe: ratio, above 1 = sroce better"
    groups = load(sys.argv[1])
    if not groups:
        sys.exit("bench-chart: no rows in " + sys.argv[1])
    with open(sys.argv[2], "wb") as f:
        f.write(draw(groups, title).png())


if __name__ == "__main__":
    main()
