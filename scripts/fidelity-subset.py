#!/usr/bin/env python3
"""The fixed subset of silicon-dev.csv that test_fidelity_subset replays.

Usage: scripts/fidelity-subset.py [../shared/validation/silicon-dev.csv] > tests/data/fidelity/silicon-subset.csv

Rows are grouped by (backend, GPU, mode, model); each group gives up to
PER_GROUP rows, those whose id hashes lowest (SHA-1, so the choice does not
depend on the CSV's order and is reproducible), after dropping exact
duplicates (the same measurement listed under several sources). Rows are
not chosen by how well servesim predicts them. Standard library only."""
import csv
import hashlib
import sys

PER_GROUP = 8


def main(path):
    with open(path, newline="") as f:
        rd = csv.DictReader(f)
        rows = list(rd)
        fields = rd.fieldnames
    seen, groups = set(), {}
    for r in rows:
        meas = (r["backend"], r["model_path"], r["system"], r["mode"], r["isl"], r["osl"], r["concurrency"],
                r["silicon_ttft_ms"], r["silicon_tpot_ms"])
        if meas in seen:
            continue
        seen.add(meas)
        groups.setdefault((r["backend"], r["system"], r["mode"], r["model_path"]), []).append(r)
    out = []
    for k in sorted(groups):
        g = sorted(groups[k], key=lambda r: hashlib.sha1(r["id"].encode()).hexdigest())
        out.extend(g[:PER_GROUP])
    w = csv.DictWriter(sys.stdout, fieldnames=fields, lineterminator="\n")
    w.writeheader()
    for r in out:
        w.writerow(r)
    print(f"{len(out)} rows from {len(groups)} groups", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "../shared/validation/silicon-dev.csv")
