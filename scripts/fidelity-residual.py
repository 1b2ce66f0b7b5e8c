#!/usr/bin/env python3
"""Tests one hypothesis about a missing TTFT on a `servesim fidelity --json` run:
that each request also waited one completion interval of its deployment, the
time between two requests finishing in the closed loop, about OSL x TPOT /
clients (what a batch one slot short of the clients, or one extra request
queued in front of every arrival, would add).

Usage: servesim fidelity --json > fid.json && scripts/fidelity-residual.py fid.json [--max-clients 32]

For each aggregated group (backend, GPU, model) over its rows with at most
--max-clients clients (above that, queueing of another kind dominates), it
fits the missing TTFT (measured - simulated, ms) against the hint OSL x TPOT /
clients (measured TPOT; InferenceX rows' mean output 0.9 OSL) by least
squares and prints the slope (1 = the whole interval), intercept and
correlation; then, over every row of the group, TTFT MAPE and median APE as
simulated and with the interval OSL x simulated TPOT / (clients - 1) added
(the prediction if the engine had held one request fewer than its clients).
A behaviour of an engine shows up in every group of that engine; one group
alone points at its measurement. Rows scored apart (unknown layout,
inconsistent measurement) are left out. Standard library only."""
import argparse
import collections
import json
import statistics


def ape(pred, meas):
    return 100 * abs(pred / meas - 1)


def mean_osl(r):
    """The client's mean output length (InferenceX rows draw from [0.8 L, L])."""
    return r["osl"] * (1 + r.get("length_range_ratio", 1)) / 2


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--max-clients", type=int, default=32)
    args = ap.parse_args()
    with open(args.json) as f:
        rows = json.load(f)["rows"]
    groups = collections.defaultdict(list)
    for r in rows:
        if r["status"] != "ok" or r["mode"] != "agg" or r.get("layout_unknown") or r.get("inconsistent"):
            continue
        groups[(r["backend"], r["gpu"], r["model"])].append(r)
    print("| backend | GPU | model | rows (≤ clients) | slope | intercept ms | correlation "
          "| TTFT MAPE / median as simulated | with one interval |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (b, g, m), v in sorted(groups.items()):
        low = [r for r in v if r["concurrency"] <= args.max_clients]
        cells = ["", "", ""]
        if len(low) >= 3:
            hint = [mean_osl(r) * r["measured_tpot_ms"] / r["concurrency"] for r in low]
            miss = [r["measured_ttft_ms"] - r["predicted_ttft_ms"] for r in low]
            if len(set(hint)) > 1 and len(set(miss)) > 1:
                fit = statistics.linear_regression(hint, miss)
                cells = [f"{fit.slope:.2f}", f"{fit.intercept:.0f}", f"{statistics.correlation(hint, miss):.2f}"]
        base = [ape(r["predicted_ttft_ms"], r["measured_ttft_ms"]) for r in v]
        wait = [ape(r["predicted_ttft_ms"] + mean_osl(r) * r["predicted_tpot_ms"] / max(1, r["concurrency"] - 1),
                    r["measured_ttft_ms"]) for r in v]
        print(f"| {b} | {g} | {m} | {len(v)} ({len(low)}) | {' | '.join(cells)} "
              f"| {statistics.mean(base):.1f} / {statistics.median(base):.1f} % "
              f"| {statistics.mean(wait):.1f} / {statistics.median(wait):.1f} % |")


if __name__ == "__main__":
    main()
