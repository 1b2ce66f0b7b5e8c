#!/usr/bin/env python3
"""fidelity-crossgpu.py — the end-to-end cross-GPU check: each measured GPU's
rows replayed with the op model's fitted sets of its own per-op tables and
with another GPU's (`hardware.op_params_gpu`), as if the GPU had never been
measured: how servesim would predict a deployment on a GPU without tables.

usage: scripts/fidelity-crossgpu.py [--servesim build/servesim] [--csv PATH]
                                    [--jobs N] [--gpus h100-sxm,b200]
                                    [--json-dir DIR]

Runs `servesim fidelity --json` once with each GPU's sets (--gpus, the GPUs
with per-op tables to try) and once as it stands, then prints, for each GPU
of the CSV that --gpus names, its rows' TTFT and TPOT MAPE (median APE in
brackets) with its own sets and with each other GPU's, per backend and
mode, over the rows of known layout and consistent measurement (what
README's fidelity tables score). The engine presets' host parameters are
the same in every replay: they are cross-validated by GPU on their own
(scripts/fit-engine.py). Exit status 1 when a replay fails.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

# Catalogue names of the GPUs with measured per-op tables, and the GPU
# column of `fidelity --json` rows on them.
ROW_GPU = {"h100-sxm": "h100-sxm", "b200": "b200", "a100-sxm-80g": "a100-sxm-80g"}


def replay(args, params_gpu, path):
    cmd = [args.servesim, "fidelity", "--json", "--jobs", str(args.jobs)]
    if args.csv:
        cmd += ["--csv", args.csv]
    if params_gpu:
        cmd += ["--set", f"hardware.op_params_gpu={params_gpu}"]
    with open(path, "w") as out:
        r = subprocess.run(cmd, stdout=out)
    if r.returncode != 0:
        sys.exit(f"fidelity-crossgpu: {' '.join(cmd)} failed (exit {r.returncode})")
    with open(path) as f:
        return {row["id"]: row for row in json.load(f)["rows"]}


def scored(row):
    return (row.get("status") == "ok" and "predicted_ttft_ms" in row and not row.get("layout_unknown")
            and not row.get("inconsistent") and row["measured_ttft_ms"] > 0 and row["measured_tpot_ms"] > 0)


def errors(rows, metric):
    return [abs(r[f"predicted_{metric}_ms"] / r[f"measured_{metric}_ms"] - 1) * 100 for r in rows]


def cell(rows, metric):
    e = errors(rows, metric)
    return f"{statistics.mean(e):.1f} % ({statistics.median(e):.1f})" if e else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--servesim", default="build/servesim")
    ap.add_argument("--csv", default=None, help="measured rows (default: fidelity's, silicon-dev.csv)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--gpus", default="h100-sxm,b200", help="GPUs with per-op tables whose sets to try")
    ap.add_argument("--json-dir", default="/tmp", help="where the replays' --json output is written")
    args = ap.parse_args()
    gpus = [g for g in args.gpus.split(",") if g]
    for g in gpus:
        if g not in ROW_GPU:
            sys.exit(f"fidelity-crossgpu: --gpus: '{g}' has no per-op tables (expected {', '.join(ROW_GPU)})")
    runs = {"own": replay(args, "", os.path.join(args.json_dir, "crossgpu-own.json"))}
    for g in gpus:
        runs[g] = replay(args, g, os.path.join(args.json_dir, f"crossgpu-{g}.json"))
    print("| GPU | backend | mode | rows | sets | TTFT MAPE (median) | TPOT MAPE (median) |")
    print("|---|---|---|---|---|---|---|")
    for target in gpus:
        ids = [i for i, r in runs["own"].items() if r.get("gpu") == ROW_GPU[target] and scored(r)]
        groups = {("all", "all"): ids}
        for i in ids:
            r = runs["own"][i]
            groups.setdefault((r["backend"], r["mode"]), []).append(i)
        for (be, mode), gi in sorted(groups.items(), key=lambda kv: (kv[0] != ("all", "all"), kv[0])):
            for sets in ["own"] + [g for g in gpus if g != target]:
                rows = [runs[sets][i] for i in gi if i in runs[sets] and scored(runs[sets][i])]
                name = f"{target} (own)" if sets == "own" else sets
                print(f"| {target} | {be} | {mode} | {len(rows)} | {name} | {cell(rows, 'ttft')} | "
                      f"{cell(rows, 'tpot')} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
