#!/usr/bin/env python3
"""The op model's cross-GPU check as one table: for each op family, the
in-sample error on a GPU's measured tables (its own fitted sets) and the
error when another GPU's sets price them (only the catalogue's specs and
measured ceilings change), with their ratio against the 1.5x aim.

Usage: scripts/op-crossgpu.py [--servesim build/servesim] [--root ../shared/validation/ops]
                              [--pairs b200_sxm:h100_sxm,h100_sxm:b200_sxm | --both b200_sxm:h100_sxm]

Each pair TARGET:SOURCE runs `servesim op --score ROOT --gpu TARGET` and
`... --params-gpu SOURCE` and prints a markdown row per family: target
in-sample median (p90), target from the source's sets median (p90), the
ratio of the medians and whether it is within 1.5x (the p90 ratio beside it
when the median meets). Variants the source GPU has no set for are not
counted by `op --score`. Exit 1 when servesim fails."""
import argparse
import re
import subprocess
import sys

ROW = re.compile(r"^\| (\w+) \| (\w+) \| (\d+) \| ([\d.]+) % \| ([\d.]+) % \| ([+-][\d.]+) % \|$")


def score(args, gpu, params_gpu=None):
    cmd = [args.servesim, "op", "--score", args.root, "--gpu", gpu]
    if params_gpu:
        cmd += ["--params-gpu", params_gpu]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("%s: %s" % (" ".join(cmd), r.stderr.strip()))
    fam = {}
    for line in r.stdout.splitlines():
        m = ROW.match(line)
        if m and m.group(1) == gpu:  # the per-family table (the per-backend one has 7 columns)
            fam[m.group(2)] = (float(m.group(4)), float(m.group(5)))
    return fam


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--servesim", default="build/servesim")
    ap.add_argument("--root", default="../shared/validation/ops")
    ap.add_argument("--pairs", default="b200_sxm:h100_sxm,h100_sxm:b200_sxm")
    ap.add_argument("--both", default=None)
    a = ap.parse_args(argv[1:])
    if a.both:
        return both(a)
    try:
        for pair in a.pairs.split(","):
            tgt, src = pair.split(":")
            own, cross = score(a, tgt), score(a, tgt, src)
            print("\n%s tables, in-sample and from %s's sets (median, p90 in brackets):\n" % (tgt, src))
            print("| family | in-sample | from %s | median ratio | within 1.5× |" % src)
            print("|---|---|---|---|---|")
            for f in sorted(own):
                if f not in cross:
                    continue
                (m0, p0), (m1, p1) = own[f], cross[f]
                r, rp = ratios(m0, p0, m1, p1)
                ok = "yes (p90 %.2f×%s)" % (rp, "" if rp <= 1.5 else ", over") if r <= 1.5 else "no"
                print("| %s | %.1f %% (%.1f) | %.1f %% (%.1f) | %.2f× | %s |" % (f, m0, p0, m1, p1, r, ok))
    except (RuntimeError, ValueError) as e:
        print("op-crossgpu: %s" % e, file=sys.stderr)
        return 1
    return 0


def ratios(m0, p0, m1, p1):
    """Cross-GPU over in-sample, for the median and the p90."""
    return m1 / m0 if m0 else float("inf"), p1 / p0 if p0 else float("inf")


def verdict(m0, p0, m1, p1):
    r, rp = ratios(m0, p0, m1, p1)
    return "%.2f× %s" % (r, "✓ (p90 %.2f×)" % rp if r <= 1.5 else "✗")


def both(a):
    try:
        x, y = a.both.split(":")
        ox, xy, oy, yx = score(a, x), score(a, x, y), score(a, y), score(a, y, x)
    except (RuntimeError, ValueError) as e:
        print("op-crossgpu: %s" % e, file=sys.stderr)
        return 1
    name = lambda g: g.split("_")[0].upper()
    print("| family | %s in-sample median | %s from %s sets | ratio | %s in-sample median | %s from %s sets | ratio |"
          % (name(x), name(x), name(y), name(y), name(y), name(x)))
    print("|---|---|---|---|---|---|---|")
    for f in sorted(ox):
        cells = []
        for own, cross in ((ox, xy), (oy, yx)):
            if f in own and f in cross:
                (m0, p0), (m1, p1) = own[f], cross[f]
                cells += ["%.1f %% (p90 %.1f)" % (m0, p0), "%.1f %% (p90 %.1f)" % (m1, p1), verdict(m0, p0, m1, p1)]
            else:
                cells += ["—", "—", "—"]
        print("| %s | %s |" % (f, " | ".join(cells)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
