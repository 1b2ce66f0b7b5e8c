#!/usr/bin/env python3
"""How far a measured deployment CSV agrees with itself: the spread between
rows that record the same deployment (same engine and version, model, GPU,
dtypes, mode, lengths, concurrency and layout columns) but different
measurements — repeated runs on other dates or images, or runs that differed
in something the columns do not record (speculative decoding, a recipe's
flags). No simulator can tell such rows apart, so their spread is a floor
under the error any prediction from the columns can reach on them.

Usage: scripts/repeatability.py [CSV]   (default ../shared/validation/silicon-dev.csv)

Prints, overall, per mode and per backend, GPU and mode: the deployments measured more than
once with different results, the pairs of distinct measurements, the median
and mean relative difference of a pair (|a - b| / mean(a, b)) for TTFT and
TPOT, and the error of the best prediction the columns allow on those rows
(each row predicted by the mean of its deployment's distinct measurements):
its MAPE and median APE. Re-recordings of one measurement (equal to the
precision they are written with) count once; disaggregated rows without
worker counts are left out (rows of different deployments would group as
one). Exit 1 when the CSV cannot be
read or lacks a column."""
import csv
import itertools
import statistics
import sys

KEY = ["backend", "backend_version", "model_path", "system", "precision", "mode", "isl", "osl", "concurrency",
       "gemm_quant_mode", "moe_quant_mode", "batch_size", "tp_size", "pp_size", "attention_dp_size", "moe_tp_size",
       "moe_ep_size", "prefill_num_workers", "prefill_tp_size", "prefill_pp_size", "prefill_attention_dp_size",
       "prefill_moe_tp_size", "prefill_moe_ep_size", "decode_num_workers", "decode_tp_size", "decode_pp_size",
       "decode_attention_dp_size", "decode_moe_tp_size", "decode_moe_ep_size"]


def gpu_of(system):
    return system.split("_")[0]


def groups(path):
    with open(path, newline="") as f:
        rd = csv.DictReader(f)
        missing = [k for k in KEY + ["silicon_ttft_ms", "silicon_tpot_ms"] if k not in (rd.fieldnames or [])]
        if missing:
            raise ValueError("%s: no column %s" % (path, ", ".join(missing)))
        out = {}
        for line, r in enumerate(rd, start=2):
            if r["mode"] == "disagg" and not (r["prefill_num_workers"] and r["decode_num_workers"]):
                continue  # worker counts unknown: different deployments, not repeats
            try:
                m = (float(r["silicon_ttft_ms"]), float(r["silicon_tpot_ms"]))
            except ValueError:
                raise ValueError("%s:%d: silicon_ttft_ms/silicon_tpot_ms not numbers" % (path, line))
            ms = out.setdefault(tuple(r[k] for k in KEY), [])
            if not any(same(m, o) for o in ms):
                ms.append(m)
    return out


def same(a, b):
    """One measurement written twice: TTFT and TPOT equal to 0.2 % (the
    re-recordings round to two decimals)."""
    return all(abs(x - y) <= 0.002 * max(abs(x), abs(y)) for x, y in zip(a, b))


def summarise(name, sets):
    d_ttft, d_tpot, e_ttft, e_tpot = [], [], [], []
    for ms in sets:
        for (a1, b1), (a2, b2) in itertools.combinations(sorted(ms), 2):
            d_ttft.append(abs(a1 - a2) / ((a1 + a2) / 2))
            d_tpot.append(abs(b1 - b2) / ((b1 + b2) / 2))
        mt = statistics.mean(a for a, _ in ms)
        mp = statistics.mean(b for _, b in ms)
        e_ttft += [abs(mt - a) / a for a, _ in ms]
        e_tpot += [abs(mp - b) / b for _, b in ms]
    if not d_ttft:
        return
    pct = lambda f, v: "%.1f %%" % (100 * f(v))
    print("| %s | %d | %d | %s | %s | %s | %s | %s (%s) | %s (%s) |" % (
        name, len(sets), len(d_ttft), pct(statistics.median, d_ttft), pct(statistics.mean, d_ttft),
        pct(statistics.median, d_tpot), pct(statistics.mean, d_tpot), pct(statistics.mean, e_ttft),
        pct(statistics.median, e_ttft), pct(statistics.mean, e_tpot), pct(statistics.median, e_tpot)))


def main(argv):
    path = argv[1] if len(argv) > 1 else "../shared/validation/silicon-dev.csv"
    try:
        g = groups(path)
    except (OSError, ValueError) as e:
        print("repeatability: %s" % e, file=sys.stderr)
        return 1
    rep = {k: v for k, v in g.items() if len(v) > 1}
    print("| group | deployments | pairs | TTFT diff median | mean | TPOT diff median | mean "
          "| floor TTFT MAPE (median) | floor TPOT MAPE (median) |")
    print("|---|---|---|---|---|---|---|---|---|")
    summarise("all", list(rep.values()))
    for mode in ("agg", "disagg"):
        summarise("mode " + mode, [v for k, v in rep.items() if k[5] == mode])
    for b, s, mode in sorted({(k[0], gpu_of(k[3]), k[5]) for k in rep}):
        summarise("%s %s %s" % (b, s, mode),
                  [v for k, v in rep.items() if k[0] == b and gpu_of(k[3]) == s and k[5] == mode])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
