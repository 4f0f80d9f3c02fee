#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""plot_ec.py - the endpoint-congestion figures (Chong and Krishnan, "Addressing Endpoint-induced
Congestion for Accelerator Scale-Out in a Medium-Scale Domain", Figs. 3-10) from the simulator's
output (tests/sim/scenarios/ec-*.ini, docs/ec.md ("In the simulator")).

Inputs are the JSON lines sluice-sim prints for the sweeps (one run per line; the scenario's
file name says which figure a line belongs to) and, with --fig3, the trace directories of
ec-fig3.ini runs (seq.csv: every data packet sent; ec.csv: the target's verdicts and acks).

  ec-unicast.ini   Fig. 4 goodput / Fig. 5 retransmission vs r, one curve per payload, per policy
  ec-incast.ini    Fig. 6 goodput / Fig. 7 retransmission vs r, one curve per policy
  ec-depth.ini     Fig. 8 goodput / Fig. 9 retransmission vs queue depth / BDP(64 B), per policy
  ec-fairness.ini  Fig. 10 largest pairwise rate difference vs r, per policy and fairness knob
  --fig3 DIR...    Fig. 3 sequence number vs time (first 20 us by default), one panel per run

Goodput and retransmissions are normalized to the target's link (goodput_norm, rtx_norm);
r is the host's drain rate over the link rate. With matplotlib each figure is a PNG in the
output directory; without it (or with --csv) each figure is the CSV table it would plot.
--markdown prints the tables of docs/ec.md ("In the simulator") instead.

  tests/sim/plot_ec.py unicast.jsonl incast.jsonl depth.jsonl fairness.jsonl -o plots/
  tests/sim/plot_ec.py --fig3 fig3-opt fig3-aimd fig3-dack -o plots/
"""
import argparse
import csv
import json
import os
import sys

BDP64_BYTES = 100e9 * 8e-6 / 8  # 100 Gbit/s x 8 us: the BDP of a 64 B header-only packet
POLICIES = ["dack", "opt", "aimd", "timeout"]


def load_runs(paths):
    """The sweep lines of every file, grouped by scenario file name."""
    runs = {}
    for path in paths:
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line.startswith("{"):
                    run = json.loads(line)
                    runs.setdefault(run["scenario"], []).append(run)
    return runs


def fairness_label(run):
    """A policy as Fig. 10 names it: dack with the fairness knobs on is its own curve."""
    if run["set"].get("fair_period_us", 0):
        return run["policy"] + "+fair"
    return run["policy"]


def series(runs, curve, x, y):
    """{curve name: [(x, y), ...] sorted by x} over runs."""
    out = {}
    for run in runs:
        out.setdefault(curve(run), []).append((x(run), y(run)))
    return {k: sorted(v) for k, v in out.items()}


METRICS = (("goodput", "goodput_norm"), ("retransmission", "rtx_norm"))


def incast_pair(runs, stems, what, xlabel, x):
    """The goodput and retransmission figures of 8-to-1 runs, one curve per policy."""
    return [(stem, "Fig. %s 8-to-1 %s %s" % (stem[3:], name, what), xlabel, metric,
             {"8-to-1": series(runs, lambda u: u["policy"], x, lambda u, m=metric: u[m])})
            for stem, (name, metric) in zip(stems, METRICS)]


def figures(runs):
    """(file stem, title, x label, y label, {panel: {curve: points}}) of every figure found."""
    figs = []
    r = lambda run: run["drain_pct"] / 100
    uni = runs.get("ec-unicast.ini", [])
    for stem, (name, metric) in zip(("fig4", "fig5") if uni else (), METRICS):
        panels = {pol: series([u for u in uni if u["policy"] == pol],
                              lambda u: "%d B" % u["payload_bytes"], r,
                              lambda u, m=metric: u[m])
                  for pol in POLICIES if any(u["policy"] == pol for u in uni)}
        figs.append((stem, "Fig. %s unicast %s" % (stem[3:], name), "r (drain / link)", metric,
                     panels))
    if runs.get("ec-incast.ini"):
        figs += incast_pair(runs["ec-incast.ini"], ("fig6", "fig7"), "vs r", "r (drain / link)",
                            r)
    if runs.get("ec-depth.ini"):
        figs += incast_pair(runs["ec-depth.ini"], ("fig8", "fig9"), "at r = 0.7 vs depth",
                            "queue depth / BDP(64 B)",
                            lambda u: round(u["set"]["queue_bytes"] / BDP64_BYTES, 2))
    fair = runs.get("ec-fairness.ini", [])
    if fair:
        figs.append(("fig10", "Fig. 10 largest pairwise rate difference, 8-to-1",
                     "r (drain / link)", "rate_diff_max",
                     {"8-to-1": series(fair, fairness_label, r, lambda u: u["rate_diff_max"])}))
    return figs


def fig3_panels(dirs, until_us):
    """{run name: {curve: [(t_us, seq)]}}: sends, resends and the target's DACKs and drops."""
    panels = {}
    for d in dirs:
        curves = {"tx": [], "retx": [], "dack": [], "drop": []}
        with open(os.path.join(d, "seq.csv")) as f:
            for row in csv.DictReader(f):
                t = int(row["t_ns"]) / 1e3
                if t <= until_us:
                    curves["retx" if int(row["tx_id"]) else "tx"].append((t, int(row["seq"])))
        ec_csv = os.path.join(d, "ec.csv")
        if os.path.exists(ec_csv):
            with open(ec_csv) as f:
                for row in csv.DictReader(f):
                    t = int(row["t_ns"]) / 1e3
                    if t > until_us:
                        continue
                    if row["event"] == "dack":
                        curves["dack"].append((t, int(row["psn"])))
                    elif row["event"].startswith("drop"):
                        curves["drop"].append((t, int(row["psn"])))
        panels[os.path.basename(os.path.normpath(d))] = curves
    return panels


def write_csv(outdir, stem, xlabel, ylabel, panels):
    path = os.path.join(outdir, stem + ".csv")
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["panel", "curve", xlabel, ylabel])
        for panel, curves in panels.items():
            for curve, points in curves.items():
                for x, y in points:
                    w.writerow([panel, curve, x, y])
    return path


def write_png(plt, outdir, stem, title, xlabel, ylabel, panels, scatter=False):
    n = len(panels)
    fig, axes = plt.subplots(1, n, figsize=(4.5 * n, 3.6), squeeze=False)
    for ax, (panel, curves) in zip(axes[0], panels.items()):
        for curve, points in curves.items():
            if not points:
                continue
            xs, ys = zip(*points)
            if scatter:
                ax.scatter(xs, ys, s=3, label=curve)
            else:
                ax.plot(xs, ys, marker="o", markersize=3, label=curve)
        ax.set_title(panel)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    path = os.path.join(outdir, stem + ".png")
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def markdown(figs):
    """One table per figure and panel: a row per x, a column per curve."""
    for stem, title, xlabel, ylabel, panels in figs:
        for panel, curves in panels.items():
            xs = sorted({x for points in curves.values() for x, _ in points})
            print("\n%s, %s (%s; %s)\n" % (title, panel, ylabel, stem))
            print("| %s | %s |" % (xlabel, " | ".join(curves)))
            print("|---|%s" % ("---|" * len(curves)))
            for x in xs:
                cells = [dict(points).get(x) for points in curves.values()]
                print("| %s | %s |" % (x, " | ".join("" if y is None else "%.4f" % y
                                                     for y in cells)))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("jsonl", nargs="*", help="sluice-sim sweep output (JSON lines)")
    ap.add_argument("--fig3", nargs="+", metavar="DIR", default=[],
                    help="trace directories of ec-fig3.ini runs")
    ap.add_argument("--until-us", type=float, default=20, help="Fig. 3 time span, us")
    ap.add_argument("-o", "--outdir", default=".", help="where the figures go")
    ap.add_argument("--csv", action="store_true", help="write CSV tables even with matplotlib")
    ap.add_argument("--markdown", action="store_true", help="print the tables as Markdown")
    args = ap.parse_args()

    figs = figures(load_runs(args.jsonl))
    if args.markdown:
        markdown(figs)
        return 0
    os.makedirs(args.outdir, exist_ok=True)
    plt = None
    if not args.csv:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            print("plot_ec.py: no matplotlib: writing the CSV tables", file=sys.stderr)
    todo = [(stem, title, x, y, p, False) for stem, title, x, y, p in figs]
    if args.fig3:
        todo.append(("fig3", "Fig. 3 sequence number vs time, 2 KB, r = 0.5", "t (us)", "PSN",
                     fig3_panels(args.fig3, args.until_us), True))
    for stem, title, x, y, panels, scatter in todo:
        if plt:
            print(write_png(plt, args.outdir, stem, title, x, y, panels, scatter))
        else:
            print(write_csv(args.outdir, stem, x, y, panels))
    return 0


if __name__ == "__main__":
    sys.exit(main())
