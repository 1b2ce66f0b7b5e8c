#!/usr/bin/env python3
"""Fits the engine presets' host parameters to measured deployments and
cross-validates them by leaving a GPU or a model out.

Usage: scripts/fit-engine.py [--csv tests/data/fidelity/silicon-subset.csv]
                             [--servesim build/servesim] [--jobs 2] [--out DIR]
       scripts/fit-engine.py --pd [--csv ../shared/validation/silicon-dev.csv] ...
       scripts/fit-engine.py --recv [--csv ../shared/validation/silicon-dev.csv] ...
       scripts/fit-engine.py --floor [--csv ../shared/validation/silicon-dev.csv] ...
       scripts/fit-engine.py --stream [--csv ../shared/validation/silicon-dev.csv] ...
       scripts/fit-engine.py --trt-floor [--csv ../shared/validation/silicon-dev.csv] ...
       scripts/fit-engine.py --floor-launch [--csv ../shared/validation/silicon-dev.csv] ...

The parameters (per backend, each with a unit and a physical meaning; the
preset values live in sim/config/sim_sched_preset.c):
  overhead_us      µs per iteration: the engine's host scheduling, input
                   preparation and output processing between GPU steps
  frontend_us      µs per request before the engine sees it: API server,
                   tokenisation, process hops, streaming (vLLM, SGLang)
  eager_launch_us  µs per op launch of an iteration with a context request
                   (TensorRT-LLM and SGLang run those without a CUDA graph)

Procedure: a full grid of GRID_N x GRID_N values of each backend's two
parameters; every grid point is one `servesim fidelity --csv CSV --json
--set BACKEND:KEY=VALUE ...` run (the three backends' rows are independent,
so one run scores one grid point of every backend). The objective of a
backend is the mean over its rows of |ln(predicted/measured)| of TTFT plus
that of TPOT (robust to the rows whose TTFT is off by 10-100x, which would
otherwise decide a MAPE fit). The fit picks the grid point with the lowest
objective. Cross-validation refits on the rows without one group (a GPU,
then each model) and scores that group with the refitted values; it needs no
further simulation, since a row's prediction depends only on its backend's
grid point. Aggregated rows only (a disaggregated row's pools.0 is its
prefill pool; its decode pool keeps the preset), without the rows of an
inconsistent measurement (`servesim fidelity` scores them apart). Only shared data (silicon-dev.csv rows) are used.

--pd fits the prefill-to-decode hand-over of each backend instead, on the
disaggregated rows of the CSV that give their worker counts (rows that
replay an assumed one-prefill-one-decode deployment, or that re-record
another row's measurement, are left out), through the decode pool
(deployment.pools.1.scheduler):
  pd_handover_us   µs per request after the KV transfer: completion
                   notification and polling, the decode side's admission
  pd_handover_gbs  GB/s per GPU of the engine's KV path (per-page RDMA
                   writes, NIXL/UCX, Mooncake): a transfer lasts at least
                   its stripe's bytes / this (0 = the network model's time)
Same objective, grid search and leave-one-GPU/model-out folds.

--recv fits SGLang's poll interval of the InferenceX recipes instead, on the
aggregated SGLang rows of InferenceX runs (silicon_data_source with wip= or
workflow_run_id=; the replay gives only those the recipe's interval,
aiconfigurator's collector runs the engine's default of 1):
  recv_interval    steps: the scheduler reads new requests only when its
                   counter (1 per decode-only step, the whole interval
                   after a step with a prefill) reaches this
                   (--scheduler-recv-interval; the recipes write 10 or a
                   per-run variable)
One dimension (RECV_GRID), same objective and folds (all these rows are
B200: only the model folds hold anything out).

--floor fits SGLang's prefill host floor, its form and the poll interval
together, on all aggregated SGLang rows (overhead_us stays at the preset's):
  eager_launch_us  µs per op launch of an iteration with a prefill (every
                   SGLang row)
  eager_serial     fraction of the shorter of that iteration's host launch
                   time and GPU time that does not overlap the longer
                   (0: max of the two; 1: their sum)
  recv_interval    steps, as --recv (only the InferenceX rows take it; the
                   others keep the engine's 1)
FLOOR_POINTS; the InferenceX rows are replayed at every point, the others
once per (eager_launch_us, eager_serial). Same objective and folds.
--trt-floor fits TensorRT-LLM's eager context iteration the same way, on
all aggregated TensorRT-LLM rows (overhead_us at the preset's 0):
  eager_launch_us  µs per op launch of an iteration with a context request
  eager_serial     as --floor: 0 prices the iteration at max(host, GPU),
                   1 at host + GPU
TRT_FLOOR_GRID (every pair); same objective and folds, TTFT MAPE by GPU.
--floor-launch refits SGLang's eager_launch_us alone, on all aggregated
SGLang rows as the replay runs them (eager_serial and every row's poll
interval at the preset's and the replay's; --floor sets the poll interval
itself): FLOOR_LAUNCH_GRID, same objective and folds, TTFT / TPOT MAPE
by GPU and by model at every grid point.
--stream fits TensorRT-LLM's output stage instead, on all aggregated
TensorRT-LLM rows: one detokenise-and-stream worker per instance (the
OpenAI server's single process handles every streamed token) costing
  stream_us_per_token  µs per output token: detokenisation, response
                   framing and the send; the client sees a token when the
                   worker has served it and sends its next request after
                   its last one, so a saturated worker caps the run's
                   output tokens/s and the queue lands in TTFT
One dimension (STREAM_GRID), same objective and folds; the objective and
TTFT/TPOT MAPE by GPU at every grid point.
Standard library only. Prints the fitted values and the CV table
(markdown)."""
import argparse
import csv
import itertools
import json
import math
import os
import statistics
import subprocess
import sys

GRID = {
    "vllm": {"overhead_us": [250, 500, 1000, 1500], "frontend_us": [25000, 35000, 45000, 65000]},
    "sglang": {"overhead_us": [500, 1000, 1500, 2000], "eager_launch_us": [50, 100, 200, 300]},
    "trtllm": {"overhead_us": [0, 500, 1000, 2000], "eager_launch_us": [50, 75, 100, 150]},
}
GRID_N = 4
PD_GRID = {"pd_handover_us": [0, 50000, 150000], "pd_handover_gbs": [0, 4, 1]}
PD_BACKENDS = ("vllm", "sglang", "trtllm")
RECV_GRID = [1, 10, 20, 30]
STREAM_GRID = [0, 30, 50, 70]  # µs per output token (--stream)
# --floor grid points (eager_launch_us µs per op launch, eager_serial fraction, recv_interval steps; 1 is
# the collector runs' default, 20 scored between 10 and 30 in --recv). The overlapped form (eager_serial 0)
# was searched over 50-200 µs x 10/30 steps before (200 µs / 30 best: docs/cost-model.md), so its best
# point and its 10-step neighbour stay as the reference; the serial form is tried at the poll interval
# the overlapped form prefers, whole (50, 75 µs), half (100-150 µs) and a quarter (125-200 µs) in series.
FLOOR_POINTS = [(200, 0.0, 10), (200, 0.0, 30), (50, 1.0, 30), (100, 0.5, 30), (75, 1.0, 30), (150, 0.5, 30),
                (150, 0.25, 30), (200, 0.25, 30), (125, 0.5, 30), (125, 0.25, 30), (175, 0.25, 30), (150, 0.35, 30)]
# --floor-launch grid: eager_launch_us µs per op launch (the preset: 200).
FLOOR_LAUNCH_GRID = [150, 175, 200, 225, 250]
# --trt-floor grid: eager_launch_us µs per op launch x eager_serial fraction (the preset: 75 µs, 0.5; was 100 µs, 0).
TRT_FLOOR_GRID = {"eager_launch_us": [25, 50, 60, 75, 100], "eager_serial": [0.0, 0.5, 0.75, 1.0]}


def point_sets(i, j):
    """The --set overrides of grid point (i, j) for every backend."""
    sets = []
    for b, ps in GRID.items():
        (k1, v1), (k2, v2) = ps.items()
        sets += [f"{b}:deployment.pools.0.scheduler.{k1}={v1[i]}", f"{b}:deployment.pools.0.scheduler.{k2}={v2[j]}"]
    return sets


def run_agg(args, csv_path, name, sets):
    """One `servesim fidelity` run of csv_path with the --set overrides
    `sets`, cached in args.out/name: its aggregated rows scored ok and not
    inconsistent, by id."""
    path = os.path.join(args.out, name)
    if not os.path.exists(path):
        cmd = [args.servesim, "fidelity", "--csv", csv_path, "--json", "--jobs", str(args.jobs)]
        for s in sets:
            cmd += ["--set", s]
        with open(path + ".tmp", "w") as f:
            subprocess.run(cmd, stdout=f, check=True)
        os.replace(path + ".tmp", path)
    with open(path) as f:
        return {r["id"]: r for r in json.load(f)["rows"] if r["status"] == "ok" and r["mode"] == "agg"
                and not r.get("inconsistent")}


def run_point(args, i, j):
    return run_agg(args, args.csv, f"grid-{i}-{j}.json", point_sets(i, j))


def lnerr(r):
    return (abs(math.log(r["predicted_ttft_ms"] / r["measured_ttft_ms"])),
            abs(math.log(r["predicted_tpot_ms"] / r["measured_tpot_ms"])))


def ape(r):
    return (100 * abs(r["predicted_ttft_ms"] / r["measured_ttft_ms"] - 1),
            100 * abs(r["predicted_tpot_ms"] / r["measured_tpot_ms"] - 1))


def objective(rows, ids, backend):
    """Mean over the rows of `backend` among `ids` of |ln| TTFT + |ln| TPOT
    (None when there are none)."""
    v = [lnerr(rows[i]) for i in ids if i in rows and rows[i]["backend"] == backend]
    return sum(a + b for a, b in v) / len(v) if v else None


def fit(runs, ids, backend):
    """Grid point with the lowest objective on `ids` of `backend`."""
    best, arg = None, None
    for p, rows in runs.items():
        obj = objective(rows, ids, backend)
        if obj is None:
            continue
        if best is None or obj < best:
            best, arg = obj, p
    return arg


def score(runs, choice, ids):
    t, p = [], []
    for i in ids:
        r = runs[choice[runs_any(runs)[i]["backend"]]].get(i)
        if r is None:
            continue
        a, b = ape(r)
        t.append(a)
        p.append(b)
    if not t:
        return None
    return (len(t), statistics.mean(t), statistics.median(t), statistics.mean(p), statistics.median(p))


def label(b, point):
    (k1, v1), (k2, v2) = GRID[b].items()
    return f"{v1[point[0]]:g}/{v2[point[1]]:g} µs"


def runs_any(runs):
    return next(iter(runs.values()))


def subset_csv(args, name, keep):
    """The CSV's rows that keep(row) accepts, written once into args.out/name
    (later runs reuse the file)."""
    path = os.path.join(args.out, name)
    if not os.path.exists(path):
        with open(args.csv, newline="") as f:
            rd = csv.DictReader(f)
            rows = [r for r in rd if keep(r)]
            fields = rd.fieldnames
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fields)
            w.writeheader()
            w.writerows(rows)
    return path


def pd_csv(args):
    """The CSV's disaggregated rows with their own worker counts, written
    once into args.out (the replay of the whole file would cost 20x)."""
    return subset_csv(args, "pd-rows.csv", lambda r: r.get("mode") == "disagg" and r.get("prefill_num_workers")
                      and r.get("decode_num_workers"))


def run_pd_point(args, path, i, j):
    out = os.path.join(args.out, f"pd-{i}-{j}.json")
    if not os.path.exists(out):
        cmd = [args.servesim, "fidelity", "--csv", path, "--json", "--jobs", str(args.jobs)]
        (k1, v1), (k2, v2) = PD_GRID.items()
        for b in PD_BACKENDS:
            # pools.0 first: an override list reaches index 1 only after 0
            # (the prefill pool ignores the hand-over keys).
            cmd += ["--set", f"{b}:deployment.pools.0.scheduler.{k1}=0",
                    "--set", f"{b}:deployment.pools.1.scheduler.{k1}={v1[i]}",
                    "--set", f"{b}:deployment.pools.1.scheduler.{k2}={v2[j]}"]
        with open(out + ".tmp", "w") as f:
            subprocess.run(cmd, stdout=f, check=True)
        os.replace(out + ".tmp", out)
    with open(out) as f:
        return {r["id"]: r for r in json.load(f)["rows"] if r["status"] == "ok" and r["mode"] == "disagg"}


def cv_table(runs, full, backends, moved_to=None, every_backend=False):
    """Prints the leave-one-GPU/model-out table. moved_to(backend, point)
    names the point a refit moved to (else the cell just says "moved");
    every_backend lists each backend in every fold, not only those with
    rows in the held-out group."""
    rows = runs_any(runs)
    ids = sorted(rows)
    print("| held out | rows | fitted without it | TTFT MAPE (in-sample) | TTFT median APE (in-sample) "
          "| TPOT MAPE (in-sample) | TPOT median APE (in-sample) |")
    print("|---|---|---|---|---|---|---|")
    folds = [("GPU " + g, lambda r, g=g: r["gpu"] == g) for g in sorted({r["gpu"] for r in rows.values()})]
    folds += [("model " + m, lambda r, m=m: r["model"] == m) for m in sorted({r["model"] for r in rows.values()})]
    for name, held in folds:
        test = [i for i in ids if held(rows[i])]
        train = [i for i in ids if not held(rows[i])]
        if not train:
            print(f"| {name} | {len(test)} | nothing left to fit on | | | | |")
            continue
        choice = {b: (fit(runs, train, b) or full[b]) for b in backends}
        cv, ins = score(runs, choice, test), score(runs, full, test)
        cells = []
        for b in backends:
            if not every_backend and not any(rows[i]["backend"] == b for i in test):
                continue
            if choice[b] == full[b]:
                cells.append(f"{b} same")
            else:
                cells.append(f"{b} moved" + (f" to {moved_to(b, choice[b])}" if moved_to else ""))
        moved = ", ".join(cells)
        print(f"| {name} | {cv[0]} | {moved} | {cv[1]:.1f} % ({ins[1]:.1f} %) | {cv[2]:.1f} % ({ins[2]:.1f} %) "
              f"| {cv[3]:.1f} % ({ins[3]:.1f} %) | {cv[4]:.1f} % ({ins[4]:.1f} %) |")


def main_pd(args):
    path = pd_csv(args)
    n1, n2 = (len(v) for v in PD_GRID.values())
    runs = {}
    for i, j in itertools.product(range(n1), range(n2)):
        print(f"pd grid point {i},{j}", file=sys.stderr)
        runs[(i, j)] = run_pd_point(args, path, i, j)
    rows = runs_any(runs)
    backends = [b for b in PD_BACKENDS if any(r["backend"] == b for r in rows.values())]
    full = {b: fit(runs, sorted(rows), b) for b in backends}
    (k1, v1), (k2, v2) = PD_GRID.items()
    print("## PD hand-over fitted (all rows)\n")
    for b, (i, j) in full.items():
        n = sum(1 for r in rows.values() if r["backend"] == b)
        print(f"- {b} ({n} rows): {k1} = {v1[i]} µs, {k2} = {v2[j]} GB/s")
    print("\n## Objective by grid point (mean |ln| TTFT + TPOT)\n")
    for b in backends:
        line = [f"{v1[i] / 1000:g}ms/{v2[j]:g}: {objective(rr, rows, b):.3f}" for (i, j), rr in sorted(runs.items())]
        print(f"- {b}: " + "; ".join(line))
    print("\n## Leave-one-group-out cross-validation\n")
    cv_table(runs, full, backends)


def inferencex_sglang_csv(args):
    """The CSV's aggregated SGLang rows of InferenceX runs, written once."""
    src = lambda r: r.get("silicon_data_source") or ""
    return subset_csv(args, "recv-rows.csv", lambda r: r.get("mode") == "agg" and r.get("backend") == "sglang"
                      and ("wip=" in src(r) or "workflow_run_id=" in src(r)))


def main_recv(args):
    path = inferencex_sglang_csv(args)
    runs = {}
    for i, v in enumerate(RECV_GRID):
        out = os.path.join(args.out, f"recv-{v}.json")
        if not os.path.exists(out):
            print(f"recv_interval {v}", file=sys.stderr)
            cmd = [args.servesim, "fidelity", "--csv", path, "--json", "--jobs", str(args.jobs),
                   "--set", f"sglang:deployment.pools.0.scheduler.recv_interval={v}"]
            with open(out + ".tmp", "w") as f:
                subprocess.run(cmd, stdout=f, check=True)
            os.replace(out + ".tmp", out)
        with open(out) as f:
            runs[i] = {r["id"]: r for r in json.load(f)["rows"] if r["status"] == "ok" and r["mode"] == "agg"}
    rows = runs_any(runs)
    full = {"sglang": fit(runs, sorted(rows), "sglang")}
    print(f"## SGLang recv_interval fitted ({len(rows)} rows): {RECV_GRID[full['sglang']]} steps\n")
    print("## Objective and error by grid point (mean |ln| TTFT + TPOT; TTFT / TPOT MAPE)\n")
    for i, v in enumerate(RECV_GRID):
        sc = score(runs, {"sglang": i}, sorted(rows))
        print(f"- {v}: {objective(runs[i], rows, 'sglang'):.3f}; TTFT {sc[1]:.1f} % (median {sc[2]:.1f} %), "
              f"TPOT {sc[3]:.1f} % (median {sc[4]:.1f} %)")
    print("\n## Leave-one-group-out cross-validation\n")
    cv_table(runs, full, ["sglang"], moved_to=lambda b, i: f"{RECV_GRID[i]} steps")


def floor_csvs(args):
    """The CSV's aggregated SGLang rows, InferenceX runs and the others apart."""
    src = lambda r: r.get("silicon_data_source") or ""
    ix = lambda r: "wip=" in src(r) or "workflow_run_id=" in src(r)
    agg = lambda r: r.get("mode") == "agg" and r.get("backend") == "sglang"
    return (subset_csv(args, "floor-ix-rows.csv", lambda r: agg(r) and ix(r)),
            subset_csv(args, "floor-other-rows.csv", lambda r: agg(r) and not ix(r)))


def run_floor(args, path, name, sets):
    print(name, file=sys.stderr)
    return run_agg(args, path, name, ["sglang:deployment.pools.0.scheduler." + s for s in sets])


def main_floor(args):
    ix_csv, other_csv = floor_csvs(args)
    runs = {}
    for e, sr, r in FLOOR_POINTS:
        sets = [f"eager_launch_us={e}", f"eager_serial={sr:g}"]
        rows = dict(run_floor(args, other_csv, f"floor-other-{e}-{sr:g}.json", sets))
        rows.update(run_floor(args, ix_csv, f"floor-ix-{e}-{sr:g}-{r}.json", sets + [f"recv_interval={r}"]))
        runs[(e, sr, r)] = rows
    rows = runs_any(runs)
    ids = sorted(rows)
    full = {"sglang": fit(runs, ids, "sglang")}
    e, sr, r = full["sglang"]
    print(f"## SGLang fitted ({len(ids)} rows): eager_launch_us = {e} µs, eager_serial = {sr:g}, "
          f"recv_interval = {r} steps\n")
    print("## Objective and error by grid point (mean |ln| TTFT + TPOT; TTFT / TPOT MAPE; TTFT MAPE by GPU)\n")
    gpus = sorted({rows[i]["gpu"] for i in ids})
    for p in sorted(runs):
        sc = score(runs, {"sglang": p}, ids)
        by = ", ".join(f"{g} {score(runs, {'sglang': p}, [i for i in ids if rows[i]['gpu'] == g])[1]:.1f} %"
                       for g in gpus)
        print(f"- {p[0]} µs / serial {p[1]:g} / {p[2]} steps: {objective(runs[p], ids, 'sglang'):.3f}; TTFT {sc[1]:.1f} % "
              f"(median {sc[2]:.1f} %), TPOT {sc[3]:.1f} % (median {sc[4]:.1f} %); TTFT {by}")
    print("\n## Leave-one-group-out cross-validation\n")
    cv_table(runs, full, ["sglang"], moved_to=lambda b, p: f"{p[0]} µs / serial {p[1]:g} / {p[2]} steps")


def fit_1d(args, path, backend, grid, name, sets, title):
    """Replays path at every value v of grid (the --set overrides sets(v),
    cached as name(v)), fits backend on all its rows, prints title(value,
    rows) and every grid point's errors by GPU; returns runs, rows, ids and
    the fitted choice."""
    runs = {}
    for v in grid:
        print(name(v), file=sys.stderr)
        runs[v] = run_agg(args, path, name(v), sets(v))
    rows = runs_any(runs)
    ids = sorted(rows)
    full = {backend: fit(runs, ids, backend)}
    print(title(full[backend], len(ids)) + "\n")
    grid_by_gpu(runs, rows, ids, backend, lambda v: f"{v} µs")
    return runs, rows, ids, full


def main_floor_launch(args):
    path = subset_csv(args, "floor-launch-rows.csv", lambda r: r.get("mode") == "agg" and r.get("backend") == "sglang")
    runs, rows, ids, full = fit_1d(
        args, path, "sglang", FLOOR_LAUNCH_GRID, lambda e: f"floor-launch-{e}.json",
        lambda e: [f"sglang:deployment.pools.0.scheduler.eager_launch_us={e}"],
        lambda e, n: f"## SGLang fitted ({n} rows): eager_launch_us = {e} µs")
    print("\n## TTFT / TPOT MAPE by model at every grid point\n")
    for e in sorted(runs):
        by = []
        for m in sorted({rows[i]["model"] for i in ids}):
            ms = score(runs, {"sglang": e}, [i for i in ids if rows[i]["model"] == m])
            by.append(f"{m.split('/')[-1]} {ms[1]:.1f} / {ms[3]:.1f} %")
        print(f"- {e} µs: " + ", ".join(by))
    print("\n## Leave-one-group-out cross-validation\n")
    cv_table(runs, full, ["sglang"], moved_to=lambda b, e: f"{e} µs")


def trtllm_agg_csv(args):
    """The CSV's aggregated TensorRT-LLM rows (--trt-floor, --stream), written once."""
    return subset_csv(args, "trtllm-agg-rows.csv", lambda r: r.get("mode") == "agg" and r.get("backend") == "trtllm")


def grid_by_gpu(runs, rows, ids, backend, label):
    """Prints every grid point's objective, TTFT / TPOT MAPE and, by GPU,
    TTFT and TPOT MAPE; label(point) names the point."""
    print("## Objective and error by grid point (mean |ln| TTFT + TPOT; TTFT / TPOT MAPE; by GPU)\n")
    gpus = sorted({rows[i]["gpu"] for i in ids})
    for p in sorted(runs):
        sc = score(runs, {backend: p}, ids)
        by = []
        for g in gpus:
            gs = score(runs, {backend: p}, [i for i in ids if rows[i]["gpu"] == g])
            by.append(f"{g} TTFT {gs[1]:.1f} % / TPOT {gs[3]:.1f} %")
        print(f"- {label(p)}: {objective(runs[p], ids, backend):.3f}; TTFT {sc[1]:.1f} % (median {sc[2]:.1f} %), "
              f"TPOT {sc[3]:.1f} % (median {sc[4]:.1f} %); " + ", ".join(by))


def main_trt_floor(args):
    path = trtllm_agg_csv(args)
    runs = {}
    for e, sr in itertools.product(*TRT_FLOOR_GRID.values()):
        name = f"trt-floor-{e}-{sr:g}.json"
        print(name, file=sys.stderr)
        runs[(e, sr)] = run_agg(args, path, name, [f"trtllm:deployment.pools.0.scheduler.eager_launch_us={e}",
                                                   f"trtllm:deployment.pools.0.scheduler.eager_serial={sr:g}"])
    rows = runs_any(runs)
    ids = sorted(rows)
    full = {"trtllm": fit(runs, ids, "trtllm")}
    e, sr = full["trtllm"]
    print(f"## TensorRT-LLM fitted ({len(ids)} rows): eager_launch_us = {e} µs, eager_serial = {sr:g}\n")
    grid_by_gpu(runs, rows, ids, "trtllm", lambda p: f"{p[0]} µs / serial {p[1]:g}")
    print("\n## Leave-one-group-out cross-validation\n")
    cv_table(runs, full, ["trtllm"], moved_to=lambda b, p: f"{p[0]} µs / serial {p[1]:g}")


def main_stream(args):
    path = trtllm_agg_csv(args)
    runs, rows, ids, full = fit_1d(
        args, path, "trtllm", STREAM_GRID, lambda v: f"stream-{v}.json",
        lambda v: ["trtllm:deployment.pools.0.scheduler.detokenizer_workers=1",
                   f"trtllm:deployment.pools.0.scheduler.stream_us_per_token={v}"],
        lambda v, n: f"## TensorRT-LLM fitted ({n} rows): stream_us_per_token = {v} µs, one worker")
    print("\n## Leave-one-group-out cross-validation\n")
    cv_table(runs, full, ["trtllm"], moved_to=lambda b, v: f"{v} µs")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", default=None)
    ap.add_argument("--servesim", default="build/servesim")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="fit-engine.out")
    ap.add_argument("--pd", action="store_true", help="fit the PD hand-over on the disaggregated rows")
    ap.add_argument("--recv", action="store_true", help="fit SGLang's recv_interval on its InferenceX rows")
    ap.add_argument("--stream", action="store_true",
                    help="fit TensorRT-LLM's per-token output stage (stream_us_per_token) on its aggregated rows")
    ap.add_argument("--trt-floor", action="store_true",
                    help="fit TensorRT-LLM's eager_launch_us and eager_serial together on its aggregated rows")
    ap.add_argument("--floor-launch", action="store_true",
                    help="refit SGLang's eager_launch_us alone on its aggregated rows as the replay runs them")
    ap.add_argument("--floor", action="store_true",
                    help="fit SGLang's eager_launch_us, eager_serial and recv_interval together on its aggregated rows")
    args = ap.parse_args()
    if args.csv is None:
        full_file = args.pd or args.recv or args.floor or args.floor_launch or args.stream or args.trt_floor
        args.csv = "../shared/validation/silicon-dev.csv" if full_file else "tests/data/fidelity/silicon-subset.csv"
    os.makedirs(args.out, exist_ok=True)
    if args.pd:
        main_pd(args)
        return
    if args.recv:
        main_recv(args)
        return
    if args.floor:
        main_floor(args)
        return
    if args.floor_launch:
        main_floor_launch(args)
        return
    if args.stream:
        main_stream(args)
        return
    if args.trt_floor:
        main_trt_floor(args)
        return
    runs = {}
    for i, j in itertools.product(range(GRID_N), range(GRID_N)):
        print(f"grid point {i},{j}", file=sys.stderr)
        runs[(i, j)] = run_point(args, i, j)
    rows = runs_any(runs)
    ids = sorted(rows)
    full = {b: fit(runs, ids, b) for b in GRID}
    print("## Fitted (all rows)\n")
    for b, (i, j) in full.items():
        (k1, v1), (k2, v2) = GRID[b].items()
        print(f"- {b}: {k1} = {v1[i]} µs, {k2} = {v2[j]} µs")
    print("\n## Leave-one-group-out cross-validation\n")
    cv_table(runs, full, list(GRID), moved_to=label, every_backend=True)


if __name__ == "__main__":
    main()
