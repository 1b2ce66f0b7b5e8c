#!/usr/bin/env python3
"""Little's law on the disaggregated rows of a `servesim fidelity --json` run:
where a measured PD row's clients spent their time, from its own figures.

Usage: servesim fidelity --json > fid.json && scripts/pd-littles-law.py fid.json [--backend B] [--gpu G]

In a closed loop of c clients a request spends TTFT before its first token and
D = (mean output - 1) x TPOT decoding, so on average c·D / (TTFT + D) requests
decode at once (L_d) and c·TTFT / (TTFT + D) are before their first token
(L_p: queued for or in the prefill, moving their KV, or waiting for a decode
slot); the deployment completes X = c / (TTFT + D) requests per second. The
script prints, per PD deployment (backend, model, GPU, dtype, both layouts and
worker counts; rows that re-record the same measurement once), for every
concurrency and prompt length: the measured TTFT and D, TTFT / D, L_d against
the decode slots the row records (decode workers x decode batch x decode DP),
X, and the same figures as simulated. A TTFT that is prefill work grows with
the prompt and stays small against D while the prefill pool keeps up; one that
tracks D at every prompt length, with L_d well under the recorded slots, is
time spent waiting on decode completions that the recorded deployment does
not have to spend. Rows scored apart (unknown layout, inconsistent
measurement) are left out. Standard library only."""
import argparse
import collections
import importlib.util
import json
import os

# The client's mean output length, as the residual test computes it.
_spec = importlib.util.spec_from_file_location(
    "fidelity_residual", os.path.join(os.path.dirname(os.path.abspath(__file__)), "fidelity-residual.py"))
_residual = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_residual)
mean_osl = _residual.mean_osl


def cycle(ttft_ms, tpot_ms, r):
    """(D, L_d, X) of a row for the given TTFT and TPOT."""
    d = (mean_osl(r) - 1) * tpot_ms
    c = r["concurrency"]
    return d, c * d / (ttft_ms + d), 1000.0 * c / (ttft_ms + d)


def layout(p):
    return f"{p['workers']}x(tp{p['tp']} dp{p['dp']} ep{p['ep']})"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--backend")
    ap.add_argument("--gpu")
    args = ap.parse_args()
    with open(args.json) as f:
        rows = json.load(f)["rows"]
    groups = collections.defaultdict(dict)
    for r in rows:
        if r["status"] != "ok" or r["mode"] != "disagg" or r.get("layout_unknown") or r.get("inconsistent"):
            continue
        if (args.backend and r["backend"] != args.backend) or (args.gpu and r["gpu"] != args.gpu):
            continue
        key = (r["backend"], r["model"], r["gpu"], r["dtype"], layout(r["prefill"]), layout(r["decode"]))
        point = (r["isl"], r["osl"], r["concurrency"], round(r["measured_ttft_ms"], 3), round(r["measured_tpot_ms"], 3))
        groups[key].setdefault(point, r)
    print("| deployment | ISL/OSL | clients | decode slots | TTFT ms | D ms | TTFT/D | L_d | X req/s "
          "| sim TTFT/D | sim L_d | sim X |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for key, points in sorted(groups.items()):
        b, m, g, dt, pl, dl = key
        for (isl, osl, c, _, _), r in sorted(points.items()):
            dec = r["decode"]
            slots = dec["workers"] * dec["batch"] * dec["dp"]
            d, ld, x = cycle(r["measured_ttft_ms"], r["measured_tpot_ms"], r)
            sd, sld, sx = cycle(r["predicted_ttft_ms"], r["predicted_tpot_ms"], r)
            print(f"| {b} {g} {m.split('/')[-1]} {dt} P{pl} D{dl} | {isl}/{osl} | {c} | {slots} "
                  f"| {r['measured_ttft_ms']:.0f} | {d:.0f} | {r['measured_ttft_ms'] / d:.2f} | {ld:.1f} | {x:.2f} "
                  f"| {r['predicted_ttft_ms'] / sd:.2f} | {sld:.1f} | {sx:.2f} |")


if __name__ == "__main__":
    main()
