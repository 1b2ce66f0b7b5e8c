#!/usr/bin/env python3
"""Markdown tables of a `servesim fidelity --json` run (README "Fidelity").

Usage: servesim fidelity --json > fid.json && scripts/fidelity-tables.py fid.json

Prints the coverage table (rows and simulated rows by model, GPU and mode),
the error tables (MAPE and median APE of TTFT and TPOT by backend, GPU and
mode as the command's summary gives them, then by backend x GPU x mode from
the rows; rows of unknown layout, scored apart, in their own group and as
mode "disagg, layout unknown"; so the aggregated rows of inconsistent
measurement, as mode "agg, inconsistent") and the skip reasons with counts.
Standard library only."""
import collections
import json
import re
import statistics
import sys


def main(path):
    with open(path) as f:
        d = json.load(f)
    rows = d["rows"]
    cov = collections.OrderedDict()
    for r in rows:
        k = (r["model"], r["gpu"], r["mode"])
        n, ok = cov.get(k, (0, 0))
        cov[k] = (n + 1, ok + (r["status"] == "ok"))
    print("| model | GPU | mode | rows | simulated |")
    print("|---|---|---|---|---|")
    for (m, g, mo), (n, ok) in sorted(cov.items()):
        print(f"| {m} | {g} | {mo} | {n} | {ok} |")
    tot = len(rows)
    sim = sum(r["status"] == "ok" for r in rows)
    print(f"| **all** | | | **{tot}** | **{sim} ({100.0 * sim / tot:.1f} %)** |")
    print()
    print("| group | rows | TTFT MAPE | TTFT median APE | TPOT MAPE | TPOT median APE |")
    print("|---|---|---|---|---|---|")
    s = d["summary"]
    apart = {"layout_unknown": "layout unknown (scored apart)",
             "inconsistent": "inconsistent measurement (scored apart)"}
    for by in ("all", "backend", "gpu", "mode", "layout_unknown", "inconsistent"):
        for key, g in s.get(by, {}).items():
            label = key if by == "all" else f"{by} {key}"
            if by in apart:
                if g["rows"] == 0:
                    continue
                label = apart[by]
            print(f"| {label} | {g['rows']} | {g['ttft_mape_pct']:.1f} % | {g['ttft_median_ape_pct']:.1f} % "
                  f"| {g['tpot_mape_pct']:.1f} % | {g['tpot_median_ape_pct']:.1f} % |")
    print()
    cross = collections.defaultdict(list)
    for r in rows:
        if r["status"] == "ok":
            mode = r["mode"] + (", layout unknown" if r.get("layout_unknown") else
                                ", inconsistent" if r.get("inconsistent") else "")
            cross[(r["backend"], r["gpu"], mode)].append(
                (abs(r["predicted_ttft_ms"] / r["measured_ttft_ms"] - 1) * 100,
                 abs(r["predicted_tpot_ms"] / r["measured_tpot_ms"] - 1) * 100))
    print("| backend | GPU | mode | rows | TTFT MAPE | TTFT median APE | TPOT MAPE | TPOT median APE |")
    print("|---|---|---|---|---|---|---|---|")
    for (b, g, mo), v in sorted(cross.items()):
        t = [x[0] for x in v]
        p = [x[1] for x in v]
        print(f"| {b} | {g} | {mo} | {len(v)} | {statistics.mean(t):.1f} % | {statistics.median(t):.1f} % "
              f"| {statistics.mean(p):.1f} % | {statistics.median(p):.1f} % |")
    print()
    why = collections.Counter()
    for r in rows:
        if r["status"] != "ok":
            why[re.sub(r"\d+(\.\d+)?", "N", r["reason"])[:110]] += 1
    for k, v in why.most_common():
        print(f"- {v} rows: {k}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
