#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Draw the benchmark's results as one PNG of panels, with matplotlib.

usage: scripts/bench-chart.py RESULTS.csv OUT.png [TITLE]

RESULTS.csv is what scripts/bench writes. Every panel shows absolute
figures of sroce, rdma_rxe and, where the row has one, the reference (TCP,
memcpy, or sroce beside a busy loop for latency under load), each bar or
point labelled with its value:
  - bandwidth against message size, one panel per perftest test (write_bw,
    read_bw, send_bw, send_bw_ud), a line per device and path MTU;
  - latency, one panel per test: t_typical of both devices and sroce's
    99th percentile, per size and MTU;
  - the speed rows: 1 MiB over the netns veth against TCP with memcpy as
    the ceiling, CPU seconds per GB, 64 KiB writes over 1, 8 and 64 QPs,
    latency under load;
  - the loss sweep: goodput and retransmissions against the loss rate,
    sroce against TCP;
  - whatever else the CSV holds (NVMe-oF, UCX, MPI, qperf, NFS), one
    panel per unit.
Panels without data are left out, so --quick and --only runs draw too.
"""

import csv
import math
import re
import sys
import textwrap

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (the backend comes first)

SROCE = "#1f5fa8"
RXE = "#e07b1a"
REF = "#4a9a4a"
MTU_MARKERS = {"1024": "o", "4096": "s"}
BW_TESTS = ["write_bw", "read_bw", "send_bw", "send_bw_ud"]
LAT_TESTS = ["write_lat", "read_lat", "send_lat", "send_lat_ud"]


def num(text):
    """The finite float in a CSV cell, or None."""
    try:
        v = float(text)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def note_value(notes, key):
    """KEY=N from a notes cell ("oos=0 dup=3; p99=20.5"), or None."""
    m = re.search(r"(?:^|[ ;])" + re.escape(key) + r"=([0-9.]+)", notes or "")
    return float(m.group(1)) if m else None


def human(size):
    """A byte count as 64, 4K, 1M."""
    size = int(size)
    if size >= 1 << 20 and size % (1 << 20) == 0:
        return "%dM" % (size >> 20)
    if size >= 1024 and size % 1024 == 0:
        return "%dK" % (size >> 10)
    return str(size)


def fmt(v):
    """A figure short enough to print over a bar."""
    if v is None:
        return ""
    if v == int(v):
        return "%d" % v
    if v >= 100:
        return "%.0f" % v
    if v >= 10:
        return "%.1f" % v
    return "%.2f" % v


def load(path):
    rows = []
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            # A row without its key columns or a whole size is no point.
            if not all(r.get(k) for k in ("test", "size", "mtu", "metric")) \
                    or not r["size"].isdigit():
                continue
            rows.append({
                "test": r["test"], "size": r["size"], "mtu": r["mtu"],
                "metric": r["metric"], "sroce": num(r.get("sroce")),
                "rxe": num(r.get("rxe")), "ref": num(r.get("ref")),
                "notes": r.get("sroce_notes", ""),
                "ref_notes": r.get("ref_notes", ""),
            })
    return rows


def label_bars(ax, bars, values):
    for b, v in zip(bars, values):
        if v is not None:
            ax.annotate(fmt(v), (b.get_x() + b.get_width() / 2, b.get_height()),
                        xytext=(0, 2), textcoords="offset points",
                        ha="center", va="bottom", fontsize=7, rotation=90)


def grouped_bars(ax, groups, series, unit):
    """groups: x labels; series: [(name, colour, [value or None per group])]."""
    n = len(series)
    width = 0.8 / n
    top = 0.0
    for i, (name, colour, values) in enumerate(series):
        xs = [g + (i - (n - 1) / 2) * width for g in range(len(groups))]
        hs = [v if v is not None else 0 for v in values]
        bars = ax.bar(xs, hs, width, label=name, color=colour,
                      edgecolor="white", linewidth=0.5)
        label_bars(ax, bars, values)
        top = max([top] + hs)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups, fontsize=8)
    ax.set_ylabel(unit)
    # Room above the tallest bar for its rotated label.
    ax.set_ylim(0, top * 1.3 if top > 0 else 1)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=7, loc="upper left")


def panel_bw(ax, test, rows):
    sizes = sorted({int(r["size"]) for r in rows})
    for mtu in sorted({r["mtu"] for r in rows}):
        for dev, colour, style in (("sroce", SROCE, "-"), ("rxe", RXE, "--")):
            pts = [(int(r["size"]), r[dev]) for r in rows
                   if r["mtu"] == mtu and r[dev] is not None]
            if not pts:
                continue
            pts.sort()
            xs, ys = zip(*pts)
            ax.plot(xs, ys, style, color=colour,
                    marker=MTU_MARKERS.get(mtu, "^"),
                    label="%s, MTU %s" % (dev, mtu))
            for x, y in pts:
                ax.annotate(fmt(y), (x, y), xytext=(4, -3 if dev == "rxe" else 3),
                            textcoords="offset points", fontsize=7,
                            color=colour)
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xticks(sizes)
    ax.set_xticklabels([human(s) for s in sizes])
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("MB/s")
    ax.set_title("%s: bandwidth (loopback)" % test)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7)


def panel_lat(ax, test, rows):
    rows = sorted(rows, key=lambda r: (int(r["size"]), r["mtu"]))
    groups = ["%s / %s" % (human(r["size"]), r["mtu"]) for r in rows]
    grouped_bars(ax, groups, [
        ("sroce typical", SROCE, [r["sroce"] for r in rows]),
        ("sroce p99", "#7fa7d6", [note_value(r["notes"], "p99") for r in rows]),
        ("rxe typical", RXE, [r["rxe"] for r in rows]),
    ], "usec")
    ax.set_xlabel("message size / path MTU")
    ax.set_title("%s: latency (loopback, lower is better)" % test)


def panel_ns(ax, rows, memcpy):
    groups = [r["test"][3:] for r in rows]
    grouped_bars(ax, groups, [
        ("sroce", SROCE, [r["sroce"] for r in rows]),
        ("TCP (iperf3)", REF, [r["ref"] for r in rows]),
    ], "MB/s")
    if memcpy:
        ax.axhline(memcpy, color="grey", linestyle=":")
        ax.set_ylim(0, max(ax.get_ylim()[1], memcpy * 1.1))
        ax.annotate("memcpy %s MB/s (ceiling)" % fmt(memcpy), (0.99, memcpy),
                    xycoords=("axes fraction", "data"), ha="right",
                    va="bottom", fontsize=7, color="grey")
    ax.set_title("1 MiB over a veth into another netns")


def panel_cpu(ax, rows):
    groups = [r["test"][3:-4] for r in rows]
    grouped_bars(ax, groups, [
        ("sroce", SROCE, [r["sroce"] for r in rows]),
        ("TCP (iperf3)", REF, [r["ref"] for r in rows]),
    ], "CPU seconds per GB")
    ax.set_title("CPU per GB moved (netns, lower is better)")


def panel_qps(ax, rows):
    rows = sorted(rows, key=lambda r: int(r["test"][10:]))
    groups = ["%s QP%s" % (r["test"][10:], "" if r["test"][10:] == "1" else "s")
              for r in rows]
    grouped_bars(ax, groups, [
        ("sroce", SROCE, [r["sroce"] for r in rows]),
        ("rxe", RXE, [r["rxe"] for r in rows]),
    ], "MB/s (all QPs)")
    ax.set_title("64 KiB writes over many QPs (loopback, medians of 3)")


def panel_load(ax, rows):
    rows = sorted(rows, key=lambda r: r["test"])
    groups = [r["test"].rsplit("_", 1)[1] for r in rows]
    grouped_bars(ax, groups, [
        ("sroce", SROCE, [r["sroce"] for r in rows]),
        ("rxe", RXE, [r["rxe"] for r in rows]),
        ("sroce beside a busy loop", REF, [r["ref"] for r in rows]),
    ], "usec")
    ax.set_yscale("symlog", linthresh=10)
    ax.set_ylim(0, max(ax.get_ylim()[1], 10) * 3)
    ax.set_title("2 B write latency under a 64 KiB flow")


def loss_rate(row):
    """The loss rate of a sweep row: ns_write_bw_loss<R>[_noprobe]."""
    return float(row["test"].rsplit("_loss", 1)[1].split("_")[0])


def loss_points(base, sweep, noprobe):
    """[(rate %, row, row with the probe off or None)] of the sweep,
    ns_write_bw as its 0 %."""
    off = {loss_rate(r): r for r in noprobe}
    pts = [(0.0, base, None)] if base else []
    pts += [(loss_rate(r), r, off.get(loss_rate(r))) for r in sweep]
    return sorted(pts, key=lambda p: p[0])


def panel_loss_bw(ax, pts):
    xs = [p[0] for p in pts]
    for dev, colour, key, i in (("sroce", SROCE, "sroce", 1),
                                ("sroce, probe off", "#7fa7d6", "sroce", 2),
                                ("TCP", REF, "ref", 1)):
        ys = [p[i][key] if p[i] else None for p in pts]
        xy = [(x, y) for x, y in zip(xs, ys) if y is not None]
        if not xy:
            continue
        ax.plot(*zip(*xy), "-o", color=colour, label=dev)
        for x, y in xy:
            ax.annotate(fmt(y), (x, y), xytext=(4, 3), textcoords="offset points",
                        fontsize=7, color=colour)
    ax.set_xscale("symlog", linthresh=0.1)
    ax.set_xticks(xs)
    ax.set_xticklabels(["%g" % x for x in xs])
    ax.set_xlabel("frames dropped by netem (%)")
    ax.set_ylabel("MB/s")
    ax.set_ylim(bottom=0)
    ax.set_title("loss sweep: 1 MiB WRITE goodput (netns)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)


def panel_loss_retx(ax, pts):
    xs = [p[0] for p in pts]
    groups = ["%g %%" % x for x in xs]
    rto = [note_value(p[1]["notes"], "rto") for p in pts]
    tlp = [note_value(p[1]["notes"], "tlp") for p in pts]
    nak = [note_value(p[1]["notes"], "nak") for p in pts]
    off = [note_value(p[2]["notes"], "rto") if p[2] else None for p in pts]
    retr = [note_value(p[1]["ref_notes"], "retr") for p in pts]
    series = [("sroce timeouts", SROCE, rto),
              ("sroce tail-loss probes", "#2ca02c", tlp),
              ("sroce sequence NAKs", "#7fa7d6", nak)]
    if any(v is not None for v in off):
        series.append(("sroce timeouts, probe off", "#d62728", off))
    if any(v is not None for v in retr):
        series.append(("TCP segments resent", REF, retr))
    grouped_bars(ax, groups, series, "per run")
    ax.set_yscale("symlog", linthresh=10)
    ax.set_ylim(0, max(ax.get_ylim()[1], 10) * 3)
    ax.set_xlabel("frames dropped by netem (%)")
    ax.set_title("loss sweep: retransmissions")


def panel_other(ax, unit, rows):
    groups = [r["test"] for r in rows]
    grouped_bars(ax, groups, [
        ("sroce", SROCE, [r["sroce"] for r in rows]),
        ("rxe", RXE, [r["rxe"] for r in rows]),
    ], unit)
    ax.set_xticklabels(groups, fontsize=7, rotation=20, ha="right")
    ax.set_title("clients over each device (%s)" % unit)


def panels(rows):
    """[(draw function, args)] for the rows present."""
    by_test = {}
    for r in rows:
        by_test.setdefault(r["test"], []).append(r)
    used = set()
    out = []

    def take(test):
        used.add(test)
        return by_test.get(test, [])

    for t in BW_TESTS:
        if by_test.get(t):
            out.append((panel_bw, (t, take(t))))
    for t in LAT_TESTS:
        if by_test.get(t):
            out.append((panel_lat, (t, take(t))))
    memcpy = take("memcpy")
    memcpy = memcpy[0]["ref"] if memcpy else None
    ns = [r for t in ("ns_write_bw", "ns_read_bw", "ns_send_bw")
          for r in take(t)]
    if ns:
        out.append((panel_ns, (ns, memcpy)))
    cpu = [r for t in ("ns_write_bw_cpu", "ns_read_bw_cpu", "ns_send_bw_cpu")
           for r in take(t)]
    if cpu:
        out.append((panel_cpu, (cpu,)))
    qps = [r for t in by_test if re.fullmatch(r"write_bw_q\d+", t)
           for r in take(t)]
    if qps:
        out.append((panel_qps, (qps,)))
    load = [r for t in by_test if t.startswith("write_lat_load_")
            for r in take(t)]
    if load:
        out.append((panel_load, (load,)))
    sweep = [r for t in by_test if re.fullmatch(r"ns_write_bw_loss[0-9.]+", t)
             for r in take(t)]
    noprobe = [r for t in by_test
               if re.fullmatch(r"ns_write_bw_loss[0-9.]+_noprobe", t)
               for r in take(t)]
    if sweep:
        base = by_test.get("ns_write_bw")
        pts = loss_points(base[0] if base else None, sweep, noprobe)
        out.append((panel_loss_bw, (pts,)))
        out.append((panel_loss_retx, (pts,)))
    rest = {}
    for t, rs in by_test.items():
        if t not in used:
            for r in rs:
                rest.setdefault(r["metric"], []).append(r)
    for unit, rs in sorted(rest.items()):
        out.append((panel_other, (unit, rs)))
    return out


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    rows = load(argv[1])
    todo = panels(rows)
    if not todo:
        print("bench-chart: no rows in %s" % argv[1], file=sys.stderr)
        return 1
    cols = min(3, len(todo))
    nrows = math.ceil(len(todo) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(6.2 * cols, 4.6 * nrows),
                             squeeze=False)
    for ax, (draw, args) in zip(axes.flat, todo):
        draw(ax, *args)
    for ax in list(axes.flat)[len(todo):]:
        ax.set_visible(False)
    # Wrapped to the figure's width (about 9 characters an inch at this
    # size): a one-panel chart cut the title off.
    title = textwrap.wrap(argv[3] if len(argv) > 3 else "sroce bench",
                          width=int(9 * 6.2 * cols))
    fig.suptitle("\n".join(title), fontsize=13)
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.2 * len(title) / (4.6 * nrows)))
    fig.savefig(argv[2], dpi=100)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
