#!/usr/bin/env python3
"""torch_ref — production-library references timed through PyTorch on the
calibration grid, written into a servesim perf-db beside the bundled kernels.

servesim's own attention kernels are plain SIMT code and its fp8 GEMM is an
mma.sync kernel: correct, but far slower than what serving engines run
(FlashAttention/cuDNN attention, cuBLASLt fp8). The cost model reads the
fastest kernel per shape, so timing those libraries on the same grid lets a
perf-db describe what an engine on that GPU achieves. Through PyTorch, when it
is installed with CUDA: scaled_dot_product_attention with the flash and cuDNN
backends (attn_prefill, attn_decode), torch._scaled_mm (fp8 GEMM, per-tensor
scales) and torch._grouped_mm (bf16 grouped GEMM, contiguous layout). Every
kernel is first checked against a float32 reference on fresh random inputs;
one that fails is not timed. Points already in the perf-db are skipped, so an
interrupted run resumes. Rows get frac_of_peak from the peaks servesim knows
for the device (`--print-grid --peak-of`) and check_err NULL (the point itself
was not compared with a reference; its kernel passed the check). The shapes come from `servesim calibrate
--print-grid`, and the GPU row from a `servesim calibrate` run on the same
perf-db (run that first).

usage: torch_ref.py --servesim BIN --db PERF.db [--grid quick|full]
                    [--max-seconds S] [--log FILE]
exit: 0 done, 1 a check or a step failed, 2 usage, 3 no PyTorch with CUDA.
"""
import argparse
import datetime
import math
import sqlite3
import subprocess
import sys
import time

SHAPE = ["m", "n", "k", "batch", "ctx", "heads", "kv_heads", "head_dim", "groups", "bytes", "ranks", "skew_milli"]
KERNEL_VERSION = 1


def read_grid(servesim, grid, ops, dtype, device):
    """Yields (op, shape dict, flops, bytes, ideal seconds at the device's
    peaks — 0 when servesim does not know them) for each point of the grid."""
    out = subprocess.run([servesim, "calibrate", "--print-grid", "--grid", grid, "--ops", ops, "--dtype", dtype,
                          "--peak-of", device], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        f = line.split()
        kv = dict(x.split("=", 1) for x in f[1:])
        shape = {k: int(kv.get(k, 0)) for k in SHAPE}
        yield f[0], shape, float(kv["op_flops"]), float(kv["op_bytes"]), float(kv.get("ideal_s", 0))


class Timer:
    """Median/p10/p90 per call. Calls are captured into a CUDA graph (several
    per replay for short kernels, as engines replay decode steps) so that
    Python's launch overhead stays out; eager launches only where capture
    fails. Repetitions adapt so a point takes about target_s."""

    def __init__(self, torch, target_s=0.1, min_reps=5, max_reps=40):
        self.torch, self.target, self.min_reps, self.max_reps = torch, target_s, min_reps, max_reps
        self.start = torch.cuda.Event(enable_timing=True)
        self.stop = torch.cuda.Event(enable_timing=True)

    def elapsed(self, run):
        self.start.record()
        run()
        self.stop.record()
        self.stop.synchronize()
        return self.start.elapsed_time(self.stop) / 1e3

    def __call__(self, fn, nsets):
        torch = self.torch
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up (and library workspaces) off the capture
            for i in range(max(2, nsets)):
                fn(i)
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        t0 = self.elapsed(lambda: fn(0))
        calls = int(min(64, max(1, math.ceil(5e-4 / max(t0, 1e-7)))))
        try:
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for i in range(calls):
                    fn(i)
            run = g.replay
            run()
        except Exception:  # not capturable: eager launches, Python overhead included
            torch.cuda.synchronize()
            run = lambda: [fn(i) for i in range(calls)]
        t1 = self.elapsed(run)
        reps = int(min(self.max_reps, max(self.min_reps, self.target / max(t1, 1e-7))))
        ts = sorted(self.elapsed(run) / calls for _ in range(reps))
        q = lambda p: ts[min(len(ts) - 1, int(p * (len(ts) - 1) + 0.5))]
        return reps * calls, q(0.5), q(0.1), q(0.9)


def sets_for(footprint, l2_bytes):
    """Input sets to rotate through so repeated runs do not hit in L2."""
    return max(1, min(8, math.ceil(3 * l2_bytes / max(footprint, 1))))


def rel_err(torch, out, ref):
    out, ref = out.double(), ref.double()
    if not torch.isfinite(out).all():
        return float("inf")
    return (torch.linalg.vector_norm(out - ref) / torch.linalg.vector_norm(ref)).item()


class Refs:
    def __init__(self, torch, log):
        self.torch, self.log = torch, log
        props = torch.cuda.get_device_properties(0)
        self.l2 = getattr(props, "L2_cache_size", 50 << 20)
        self.dev = torch.device("cuda", 0)

    # --- attention -------------------------------------------------------
    def sdpa_backends(self):
        from torch.nn.attention import SDPBackend
        out = [("torch_sdpa_flash", SDPBackend.FLASH_ATTENTION)]
        if hasattr(SDPBackend, "CUDNN_ATTENTION"):
            out.append(("torch_sdpa_cudnn", SDPBackend.CUDNN_ATTENTION))
        return out

    def attn_call(self, backend, q, k, v, m, ctx):
        """Causal attention of m new queries over ctx cached + m new keys
        (bottom-right aligned, as in chunked prefill); m == 1 is decode."""
        import torch.nn.functional as F
        from torch.nn.attention import sdpa_kernel
        gqa = q.shape[1] != k.shape[1]
        with sdpa_kernel([backend]):
            if m == 1:
                return F.scaled_dot_product_attention(q, k, v, enable_gqa=gqa)
            if ctx == 0:
                return F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=gqa)
            from torch.nn.attention.bias import causal_lower_right
            return F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(m, ctx + m), enable_gqa=gqa)

    def attn_ref(self, q, k, v, m, ctx):
        torch = self.torch
        rep = q.shape[1] // k.shape[1]
        qf, kf, vf = q.float(), k.float().repeat_interleave(rep, 1), v.float().repeat_interleave(rep, 1)
        s = qf @ kf.transpose(-1, -2) / math.sqrt(q.shape[-1])
        L = ctx + m
        mask = torch.arange(L, device=q.device)[None, :] > (ctx + torch.arange(m, device=q.device))[:, None]
        s = s.masked_fill(mask, float("-inf"))
        return torch.softmax(s, -1) @ vf

    def attn_check(self, backend, m, ctx):
        torch = self.torch
        g = torch.Generator(device=self.dev).manual_seed(int(time.time_ns() % (1 << 31)))
        q = torch.randn(2, 8, m, 128, device=self.dev, generator=g).bfloat16()
        k = torch.randn(2, 2, ctx + m, 128, device=self.dev, generator=g).bfloat16()
        v = torch.randn(2, 2, ctx + m, 128, device=self.dev, generator=g).bfloat16()
        return rel_err(torch, self.attn_call(backend, q, k, v, m, ctx), self.attn_ref(q, k, v, m, ctx))

    def attn_point(self, op, backend, s, timer):
        torch = self.torch
        b, h, kvh, d = max(1, s["batch"]), s["heads"], s["kv_heads"], s["head_dim"]
        decode = op == "attn_decode"
        m, ctx = (1, 0) if decode else (s["m"], s["ctx"])
        L = s["ctx"] if decode else ctx + m
        n = sets_for(2 * (b * h * m * d * 2 + 2 * b * kvh * L * d), self.l2)
        bufs = [(torch.randn(b, h, m, d, device=self.dev, dtype=torch.bfloat16),
                 torch.randn(b, kvh, L, d, device=self.dev, dtype=torch.bfloat16),
                 torch.randn(b, kvh, L, d, device=self.dev, dtype=torch.bfloat16)) for _ in range(n)]
        return timer(lambda i: self.attn_call(backend, *bufs[i % n], m, ctx), n)

    # --- GEMMs ----------------------------------------------------------
    def fp8_operands(self, M, N, K):
        torch = self.torch
        a = (torch.randn(M, K, device=self.dev) * 0.5).to(torch.float8_e4m3fn)
        bt = (torch.randn(N, K, device=self.dev) * 0.5).to(torch.float8_e4m3fn)
        return a, bt

    def fp8_call(self, a, bt, sa, sb):
        return self.torch._scaled_mm(a, bt.t(), scale_a=sa, scale_b=sb, out_dtype=self.torch.bfloat16)

    def fp8_check(self):
        torch = self.torch
        a, bt = self.fp8_operands(64, 256, 512)
        sa = torch.tensor(0.5, device=self.dev)
        sb = torch.tensor(2.0, device=self.dev)
        ref = (a.float() * 0.5) @ (bt.float() * 2.0).t()
        return rel_err(torch, self.fp8_call(a, bt, sa, sb), ref)

    def fp8_point(self, s, timer):
        torch = self.torch
        # cuBLASLt fp8 needs rows in multiples of 16: engines pad decode GEMVs too.
        M, N, K = max(16, (s["m"] + 15) // 16 * 16), s["n"], s["k"]
        n = sets_for(M * K + N * K + 2 * M * N, self.l2)
        ops = [self.fp8_operands(M, N, K) for _ in range(n)]
        one = torch.tensor(1.0, device=self.dev)
        return timer(lambda i: self.fp8_call(*ops[i % n], one, one), n)

    def grouped_call(self, a, b, offs):
        return self.torch._grouped_mm(a, b.transpose(-2, -1), offs=offs, out_dtype=self.torch.bfloat16)

    def grouped_operands(self, G, m, N, K):
        torch = self.torch
        a = torch.randn(G * m, K, device=self.dev, dtype=torch.bfloat16)
        b = torch.randn(G, N, K, device=self.dev, dtype=torch.bfloat16)
        offs = torch.arange(1, G + 1, device=self.dev, dtype=torch.int32) * m
        return a, b, offs

    def grouped_check(self):
        torch = self.torch
        G, m, N, K = 4, 32, 128, 256
        a, b, offs = self.grouped_operands(G, m, N, K)
        ref = torch.cat([a[g * m:(g + 1) * m].float() @ b[g].float().t() for g in range(G)])
        return rel_err(torch, self.grouped_call(a, b, offs), ref)

    def grouped_point(self, s, timer):
        G, m, N, K = s["groups"], s["m"], s["n"], s["k"]
        # The multiple-of-16 row alignment per group is what engines pad to as well.
        m16 = max(16, (m + 15) // 16 * 16)
        n = sets_for(2 * (G * m16 * K + G * N * K + G * m16 * N), self.l2)
        ops = [self.grouped_operands(G, m16, N, K) for _ in range(n)]
        return timer(lambda i: self.grouped_call(*ops[i % n]), n)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--servesim", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--grid", default="quick", choices=["tiny", "quick", "full"])
    ap.add_argument("--max-seconds", type=float, default=0, help="stop (resumably) after this long; 0: no limit")
    ap.add_argument("--log")
    args = ap.parse_args()
    log = open(args.log, "w") if args.log else sys.stdout
    say = lambda *a: (print(*a, file=log), log.flush())
    try:
        import torch
    except ImportError as e:
        print(f"torch_ref: PyTorch is not installed ({e})", file=sys.stderr)
        return 3
    if not torch.cuda.is_available():
        print("torch_ref: PyTorch sees no CUDA GPU", file=sys.stderr)
        return 3
    name = torch.cuda.get_device_name(0)
    db = sqlite3.connect(args.db)
    rows = db.execute("SELECT id FROM gpus WHERE name = ? AND backend = 'gpu' ORDER BY id DESC", (name,)).fetchall()
    if not rows:
        print(f"torch_ref: {args.db} has no GPU row for '{name}': run 'servesim calibrate --db {args.db}' first",
              file=sys.stderr)
        return 1
    gpu_id = rows[0][0]
    say(f"torch_ref: torch {torch.__version__} on {name} (gpu_id {gpu_id}), grid {args.grid}")
    refs, timer = Refs(torch, log), Timer(torch)
    t_end = time.time() + args.max_seconds if args.max_seconds > 0 else float("inf")
    status = 0

    # (op, dtype, kernel, check, point, which grid points): prefill over a
    # cached prefix needs bottom-right causal masking, a separate code path
    # with its own check.
    plan, later = [], []
    for kname, be in refs.sdpa_backends():
        # FlashAttention first: the backend engines run; cuDNN after the GEMMs.
        dst = plan if kname == "torch_sdpa_flash" else later
        dst.append(("attn_prefill", "bf16", kname, lambda be=be: refs.attn_check(be, 64, 0),
                    lambda s, be=be: refs.attn_point("attn_prefill", be, s, timer), lambda s: s["ctx"] == 0))
        dst.append(("attn_prefill", "bf16", kname, lambda be=be: refs.attn_check(be, 48, 80),
                    lambda s, be=be: refs.attn_point("attn_prefill", be, s, timer), lambda s: s["ctx"] > 0))
        dst.append(("attn_decode", "bf16", kname, lambda be=be: refs.attn_check(be, 1, 300),
                    lambda s, be=be: refs.attn_point("attn_decode", be, s, timer), lambda s: True))
    plan.append(("gemm", "fp8", "torch_scaled_mm", refs.fp8_check, lambda s: refs.fp8_point(s, timer), lambda s: True))
    if hasattr(torch, "_grouped_mm"):
        # Equal groups only: the balanced points (skew_milli 0); the skewed
        # twins of the grid have no torch row to compare with.
        plan.append(("grouped_contig", "bf16", "torch_grouped_mm", refs.grouped_check,
                     lambda s: refs.grouped_point(s, timer), lambda s: s["skew_milli"] == 0))
    else:
        say("skip  grouped_contig  torch_grouped_mm: this PyTorch has no torch._grouped_mm")
    plan += later

    tol = {"bf16": 2e-2, "fp8": 1e-2}
    measured = skipped = failed = 0
    for op, dtype, kernel, check, point, keep in plan:
        try:
            err = check()
        except Exception as e:  # a backend that cannot run here is reported, not fatal
            say(f"check {op:<15} {kernel:<28} SKIP: {type(e).__name__}: {str(e).splitlines()[0][:160]}")
            continue
        ok = err <= tol[dtype]
        say(f"check {op:<15} {kernel:<28} {'PASS' if ok else 'FAIL'} error {err:.3g} (tolerance {tol[dtype]:g})")
        if not ok:
            status = 1
            continue
        for gop, s, flops, nbytes, ideal_s in read_grid(args.servesim, args.grid, op, dtype, name):
            if not keep(s):
                continue
            if time.time() > t_end:
                say(f"torch_ref: stopped at --max-seconds {args.max_seconds:g}; rerun to resume")
                db.close()
                say(f"torch_ref: {measured} measured, {skipped} already present, {failed} failed")
                return status
            key = [gpu_id, op, dtype, kernel, KERNEL_VERSION] + [s[f] for f in SHAPE]
            have = db.execute("SELECT 1 FROM points WHERE gpu_id=? AND op=? AND dtype=? AND kernel=? AND kernel_version=? AND "
                              + " AND ".join(f"{f}=?" for f in SHAPE), key).fetchone()
            if have:
                skipped += 1
                continue
            desc = " ".join(f"{f}={s[f]}" for f in SHAPE if s[f])
            try:
                reps, med, p10, p90 = point(s)
            except Exception as e:
                failed += 1
                say(f"fail  {op} {dtype} {desc} {kernel}: {type(e).__name__}: {str(e).splitlines()[0][:160]}")
                torch.cuda.empty_cache()
                continue
            tflops, gbps = flops / med / 1e12, nbytes / med / 1e9
            db.execute("INSERT OR IGNORE INTO points(gpu_id, op, dtype, kernel, kernel_version, " + ", ".join(SHAPE)
                       + ", reps, median_s, p10_s, p90_s, tflops, gbps, frac_of_peak, check_err, measured_at) VALUES("
                       + ", ".join("?" * (5 + len(SHAPE) + 9)) + ")",
                       # frac_of_peak as the harness computes it (time at the peaks over the
                       # measured time); check_err NULL: the kernel passed its check above,
                       # this point itself was not compared with a reference.
                       key + [reps, med, p10, p90, tflops, gbps, ideal_s / med if ideal_s > 0 else None, None,
                              datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")])
            db.commit()  # per point, as the harness does: an interrupted run resumes
            measured += 1
            say(f"point {op} {dtype} {desc} {kernel}: median {med:.4g} s p10 {p10:.4g} p90 {p90:.4g}  "
                f"{tflops:.3g} TFLOP/s {gbps:.3g} GB/s")
            torch.cuda.empty_cache()
    db.close()
    say(f"torch_ref: {measured} measured, {skipped} already present, {failed} failed")
    return 1 if failed else status


if __name__ == "__main__":
    sys.exit(main())
