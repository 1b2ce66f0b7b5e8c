#!/usr/bin/env python3
"""Tests whether TensorRT-LLM B200 DeepSeek-R1 aggregated rows of one engine
image ran multi-token prediction (MTP), and fits its acceptance rate.

Usage: scripts/fit-mtp.py [--csv ../shared/validation/silicon-dev.csv]
                          [--image 1.2.0rc6.post3] [--control 1.2.0rc6.post2]
                          [--servesim build/servesim] [--jobs 2] [--out DIR]
                          [--ks 1,2,3,recipe]

The hypothesis is physical: the image's runs drafted k tokens a step with
DeepSeek-R1's MTP module (k = 1..3 on every row, or "recipe": the k that
InferenceX's dsr1_fp8/fp4_b200_trt_mtp scripts set, 3, and 1 with attention
DP, which the replay gives each row; scheduler.speculative method mtp) and
the target accepted draft position i with one probability a at every
position, the same for fp8 and nvfp4, every concurrency and ISL/OSL. One
parameter per k:
  a   acceptance rate per draft position (dimensionless, 0..1); expected
      tokens per step 1 + a + ... + a^k
Procedure: the image's rows (silicon_data_source names the image; the same
measurement recorded in two source files is kept once) are replayed with
`servesim fidelity --csv ROWS --json --set trtllm:...speculative.*` at each
(k, a) of a grid (A_GRID); a row's ln(predicted/measured) TPOT is
interpolated linearly in a between grid points, and the fit picks the a
with the lowest mean |ln| over the rows. Cross-validation refits a without
one group (each dtype, then each ISL/OSL) and scores that group. The same
replay of the control image's rows (no MTP assumed) says whether the
correction is specific to the image. Prints markdown: TPOT and TTFT ratios
(median of predicted/measured) and MAPE without MTP and at each k's fit,
the residual by dtype, ISL/OSL and concurrency, and the CV table. Only
shared data are used; standard library only."""
import argparse
import csv
import importlib.util
import json
import math
import os
import re
import statistics
import subprocess

A_GRID = [0.3, 0.45, 0.6, 0.7, 0.8, 0.9]
# The default hypotheses: k = 1..3 for every row, and "recipe": the draft
# tokens the replay gives each row from InferenceX's MTP recipes (3, 1 with
# attention DP), a fitted alone.
KS_DEFAULT = "1,2,3,recipe"


def k_sets(k, a):
    """--set values of one replay: the draft tokens (unless the recipe's) and a."""
    sets = [] if k == "recipe" else [f"{SPEC}.draft_tokens={k}"]
    return sets + [f"{SPEC}.acceptance={a}"]


def k_name(k, a):
    if k == "recipe":
        return f"MTP k by recipe (3; 1 with attention DP), a={a:.3f}"
    return f"MTP k={k}, a={a:.3f} (E={sum(a ** j for j in range(k + 1)):.2f} tokens/step)"
SPEC = "trtllm:deployment.pools.0.scheduler.speculative"


def load_fit_engine():
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("fit_engine", os.path.join(here, "fit-engine.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def image_of(row):
    m = re.search(r"release:([\w.]+)", row.get("silicon_data_source", ""))
    return m.group(1) if m else None


def keeper(image):
    """Row filter: the image's TensorRT-LLM B200 DeepSeek-R1 aggregated rows,
    each measurement once."""
    seen = set()

    def keep(r):
        if not (r["backend"] == "trtllm" and r["system"].lower().startswith("b200") and "DeepSeek-R1" in r["model_path"]
                and r["mode"] == "agg" and image_of(r) == image):
            return False
        key = (r["precision"], r["isl"], r["osl"], r["concurrency"], r["tp_size"], r["attention_dp_size"],
               r["moe_ep_size"], round(float(r["silicon_tpot_ms"]), 4), round(float(r["silicon_ttft_ms"]), 3))
        if key in seen:
            return False
        seen.add(key)
        return True

    return keep


def run(args, path, tag, sets):
    out = os.path.join(args.out, f"{tag}.json")
    if not os.path.exists(out):
        cmd = [args.servesim, "fidelity", "--csv", path, "--json", "--jobs", str(args.jobs)]
        for s in sets:
            cmd += ["--set", s]
        with open(out + ".tmp", "w") as f:
            subprocess.run(cmd, stdout=f, check=True)
        os.replace(out + ".tmp", out)
    with open(out) as f:
        return {r["id"]: r for r in json.load(f)["rows"] if r["status"] == "ok"}


def ln_tpot(r):
    return math.log(r["predicted_tpot_ms"] / r["measured_tpot_ms"])


def ln_ttft(r):
    return math.log(r["predicted_ttft_ms"] / r["measured_ttft_ms"])


def interp(grid_vals, a):
    """Linear interpolation of [(a_i, v_i)] at a (clamped to the grid)."""
    if a <= grid_vals[0][0]:
        return grid_vals[0][1]
    for (a0, v0), (a1, v1) in zip(grid_vals, grid_vals[1:]):
        if a <= a1:
            return v0 + (v1 - v0) * (a - a0) / (a1 - a0)
    return grid_vals[-1][1]


def fit_a(curves, ids):
    """The a (0.001 steps over the grid) minimising mean |ln| TPOT over ids."""
    best = None
    a = A_GRID[0]
    while a <= A_GRID[-1] + 1e-9:
        obj = statistics.mean(abs(interp(curves[i], a)) for i in ids)
        if best is None or obj < best[1]:
            best = (a, obj)
        a += 0.001
    return best[0]


def summary(lns):
    """(n, median ratio, MAPE %) of ln ratios."""
    return (len(lns), math.exp(statistics.median(lns)), 100 * statistics.mean(abs(math.exp(x) - 1) for x in lns))


def fmt(s):
    return f"{s[1]:.3f} / {s[2]:.1f} % (n={s[0]})"


def groups(rows):
    g = {}
    for i, r in rows.items():
        g.setdefault(("dtype", r["dtype"]), []).append(i)
        g.setdefault(("isl/osl", f"{r['isl']}/{r['osl']}"), []).append(i)
        c = r["concurrency"]
        g.setdefault(("concurrency", "4-16" if c <= 16 else "32-64" if c <= 64 else "128-256"), []).append(i)
    return g


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--csv", default="../shared/validation/silicon-dev.csv")
    ap.add_argument("--image", default="1.2.0rc6.post3")
    ap.add_argument("--control", default="1.2.0rc6.post2")
    ap.add_argument("--servesim", default="build/servesim")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--out", default="/tmp/fit-mtp")
    ap.add_argument("--ks", default=KS_DEFAULT, help="the draft-token hypotheses to fit, comma-separated")
    args = ap.parse_args()
    ks = [k if k == "recipe" else int(k) for k in args.ks.split(",")]
    os.makedirs(args.out, exist_ok=True)
    fe = load_fit_engine()
    path = fe.subset_csv(args, f"rows-{args.image}.csv", keeper(args.image))
    cpath = fe.subset_csv(args, f"rows-{args.control}.csv", keeper(args.control))
    # The replay gives the image's rows MTP itself (sim_fidelity_csv.c): off here.
    base = run(args, path, f"{args.image}-k0", [f"{SPEC}.draft_tokens=0"])
    ids = sorted(base)
    print(f"# MTP on TensorRT-LLM B200 DeepSeek-R1 rows of image {args.image} ({len(ids)} measurements)\n")
    print("ratio = median predicted/measured, MAPE of predicted/measured\n")
    print("| replay | TPOT ratio / MAPE | TTFT ratio / MAPE | mean abs ln TPOT |")
    print("|---|---|---|---|")
    print(f"| no MTP | {fmt(summary([ln_tpot(base[i]) for i in ids]))} | "
          f"{fmt(summary([ln_ttft(base[i]) for i in ids]))} | "
          f"{statistics.mean(abs(ln_tpot(base[i])) for i in ids):.3f} |")
    fits = {}
    for k in ks:
        runs = {a: run(args, path, f"{args.image}-k{k}-a{a}", k_sets(k, a)) for a in A_GRID}
        ok = [i for i in ids if all(i in runs[a] for a in A_GRID)]
        curves = {i: [(a, ln_tpot(runs[a][i])) for a in A_GRID] for i in ok}
        a = fit_a(curves, ok)
        # The replay at the fitted value itself (not the interpolation).
        at = run(args, path, f"{args.image}-k{k}-fit{a:.3f}", k_sets(k, f"{a:.3f}"))
        fits[k] = (a, curves, ok, at)
        print(f"| {k_name(k, a)} | {fmt(summary([ln_tpot(at[i]) for i in ok]))} | "
              f"{fmt(summary([ln_ttft(at[i]) for i in ok]))} | "
              f"{statistics.mean(abs(ln_tpot(at[i])) for i in ok):.3f} |")
    print("\n## Residual TPOT ratio by group (median ratio / MAPE)\n")
    print("| group | no MTP | " + " | ".join(f"k={k} a={fits[k][0]:.3f}" for k in ks) + " |")
    print("|---|---|" + "---|" * len(ks))
    g = groups(base)
    for key in sorted(g):
        row = [fmt(summary([ln_tpot(base[i]) for i in g[key]]))]
        for k in ks:
            at, ok = fits[k][3], fits[k][2]
            row.append(fmt(summary([ln_tpot(at[i]) for i in g[key] if i in ok and i in at])))
        print(f"| {key[0]} {key[1]} | " + " | ".join(row) + " |")
    print("\n## Cross-validation: a refitted without a group, scored on it (TPOT median ratio / MAPE)\n")
    print("| held out | " + " | ".join(f"k={k}: a / score" for k in ks) + " |")
    print("|---|" + "---|" * len(ks))
    for key in sorted(g):
        if key[0] == "concurrency":
            continue
        cells = []
        for k in ks:
            a, curves, ok, _ = fits[k]
            train = [i for i in ok if i not in g[key]]
            held = [i for i in ok if i in g[key]]
            af = fit_a(curves, train)
            cells.append(f"{af:.3f} / {fmt(summary([interp(curves[i], af) for i in held]))}")
        print(f"| {key[0]} {key[1]} | " + " | ".join(cells) + " |")
    ctrl = run(args, cpath, f"{args.control}-k0", [])
    cids = sorted(ctrl)
    print(f"\n## Control: image {args.control} ({len(cids)} measurements)\n")
    print("| replay | TPOT ratio / MAPE | TTFT ratio / MAPE |")
    print("|---|---|---|")
    print(f"| no MTP | {fmt(summary([ln_tpot(ctrl[i]) for i in cids]))} | {fmt(summary([ln_ttft(ctrl[i]) for i in cids]))} |")
    for k in ks:
        if k == "recipe":
            continue  # the control image's rows replay without MTP whatever a
        a = fits[k][0]
        cr = run(args, cpath, f"{args.control}-k{k}-fit{a:.3f}", k_sets(k, f"{a:.3f}"))
        ci = sorted(cr)
        print(f"| MTP k={k}, a={a:.3f} | {fmt(summary([ln_tpot(cr[i]) for i in ci]))} | "
              f"{fmt(summary([ln_ttft(cr[i]) for i in ci]))} |")


if __name__ == "__main__":
    main()
