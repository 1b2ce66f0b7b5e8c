/* test_calib_gpucheck — the parts of scripts/gpu-check.sh that run without
 * a GPU: usage errors and the clear failure (exit 3, no files written) when
 * nvidia-smi is absent — forced with NVIDIA_SMI pointing nowhere, so the
 * test means the same on machines that have a GPU — and, with a stand-in
 * nvidia-smi that reports an H200 and the servesim under test as
 * SERVESIM_BIN whose GPU backend cannot load, the arch choice and the same
 * exit 3 with the backend's reason; and calib/torch_ref.py's reading of the
 * grid with the ideal times it fills frac_of_peak from. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int run(const char *cmd, char *out, size_t len)
{
    FILE *p = popen(cmd, "r");
    size_t n = 0;
    if (!p) return -1;
    n = fread(out, 1, len - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* No output folder: usage, exit 2. */
static void case_usage(void)
{
    char cmd[1024], buf[4096];
    const char *out = buf; /* a pointer: CHECK_CONTAINS tests it for NULL */
    snprintf(cmd, sizeof cmd, "bash '%s/scripts/gpu-check.sh' 2>&1", test_srcdir);
    CHECK(run(cmd, buf, sizeof buf) == 2);
    CHECK_CONTAINS(out, "usage: scripts/gpu-check.sh OUTDIR");
}

/* No nvidia-smi: exit 3 before anything is written. */
static void case_no_nvidia_smi(void)
{
    char cmd[1024], buf[4096], dir[256];
    const char *out = buf; /* a pointer: CHECK_CONTAINS tests it for NULL */
    snprintf(dir, sizeof dir, "/tmp/servesim_gpucheck_%d", (int)getpid());
    snprintf(cmd, sizeof cmd, "NVIDIA_SMI=/nonexistent/nvidia-smi bash '%s/scripts/gpu-check.sh' '%s' 2>&1", test_srcdir, dir);
    CHECK(run(cmd, buf, sizeof buf) == 3);
    CHECK_CONTAINS(out, "needs a machine with an NVIDIA GPU");
    CHECK_CONTAINS(out, "--backend cpu");
    CHECK(access(dir, F_OK) != 0); /* nothing written before the GPU is confirmed */
}

static void case_no_device(void)
{
    char cmd[1024], buf[4096], dir[256];
    const char *out = buf; /* a pointer: CHECK_CONTAINS tests it for NULL */
    snprintf(dir, sizeof dir, "/tmp/servesim_gpucheck_%d", (int)getpid());
    /* An nvidia-smi that finds no device fails the same way. */
    snprintf(cmd, sizeof cmd, "NVIDIA_SMI=false bash '%s/scripts/gpu-check.sh' '%s' 2>&1", test_srcdir, dir);
    CHECK(run(cmd, buf, sizeof buf) == 3);
    CHECK_CONTAINS(out, "found no usable GPU");
}

/* Writes path with text and makes it executable; 0 on success. */
static int write_script(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(text, f);
    fclose(f);
    return chmod(path, 0755);
}

static void case_backend_cannot_load(void)
{
    char cmd[1024], buf[4096], dir[256];
    const char *out = buf; /* a pointer: CHECK_CONTAINS tests it for NULL */
    snprintf(dir, sizeof dir, "/tmp/servesim_gpucheck_%d", (int)getpid());
    /* A stand-in nvidia-smi reporting an H200 with a servesim whose GPU
     * backend cannot load: the script picks the arch, takes the prebuilt
     * binary, and stops with exit 3 and the backend's reason. */
    char smi[300];
    snprintf(smi, sizeof smi, "%s.smi", dir);
    int wrote = write_script(smi, "#!/bin/sh\necho 'NVIDIA H200, 9.0, 580.159'\n") == 0;
    CHECK(wrote);
    if (wrote) {
        snprintf(cmd, sizeof cmd,
                 "NVIDIA_SMI='%s' SERVESIM_BIN='%s' SERVESIM_GPU_LIB=/nonexistent/libservesim_gpu.so GPU_CHECK_TORCH_S=0 "
                 "GPU_CHECK_SANITIZER=0 GPU_CHECK_GRID_S=20 bash '%s/scripts/gpu-check.sh' '%s' 2>&1",
                 smi, test_servesim, test_srcdir, dir);
        CHECK(run(cmd, buf, sizeof buf) == 3);
        CHECK_CONTAINS(out, "NVIDIA H200, 9.0, 580.159 → target sm_90a");
        CHECK_CONTAINS(out, "using the prebuilt");
        CHECK_CONTAINS(out, "no NVIDIA GPU found (cannot load the GPU backend");
        CHECK_CONTAINS(out, "the GPU backend cannot run here");
        char sum[400];
        snprintf(sum, sizeof sum, "%s/summary.txt", dir);
        CHECK(access(sum, F_OK) == 0);
        unlink(smi);
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        CHECK(system(cmd) == 0);
    }
}

/* A kernel that hangs: the all-kernel check is cut at GPU_CHECK_CHECK_S,
 * the kernels in doubt are checked one process each, the hung one is named
 * and left out of the grid, the others are timed. A stand-in servesim
 * answers the checks itself (a PASS line per kernel in --log, at once, so
 * the test does not hang on the CPU references' speed): the all-kernel
 * check passes every kernel up to softmax's and then hangs, a one-kernel
 * check passes, softmax's hangs; the kernel list and the grid are the real
 * servesim's on the CPU backend (tiny grid). */
static void case_isolates_hung_kernel(void)
{
    char cmd[2048], buf[16384], dir[256], smi[300], bin[300], script[2048];
    const char *out = buf; /* a pointer: CHECK_CONTAINS tests it for NULL */
    snprintf(dir, sizeof dir, "/tmp/servesim_gpucheck_iso_%d", (int)getpid());
    snprintf(smi, sizeof smi, "%s.smi", dir);
    snprintf(bin, sizeof bin, "%s.bin", dir);
    CHECK(write_script(smi, "#!/bin/sh\necho 'NVIDIA H100 80GB HBM3, 9.0, 580.159'\n") == 0);
    snprintf(script, sizeof script,
             "#!/bin/bash\n"
             "real='%s'\n"
             "[ \"$1\" != calibrate ] && exec \"$real\" \"$@\"\n"
             "a=(); log=/dev/null; ks=; ops=; chk=0; prev=\n"
             "for x in \"$@\"; do\n"
             "  case $prev in --log) log=$x ;; --kernels) ks=$x ;; --ops) ops=$x ;; esac\n"
             "  [ \"$x\" = --check ] && chk=1\n"
             "  [ \"$x\" = quick ] && x=tiny; a+=(\"$x\"); prev=$x\n"
             "done\n"
             "case \"$*\" in *--list-kernels*) exec \"$real\" calibrate --backend cpu --list-kernels ;; esac\n"
             "if [ $chk = 1 ]; then\n"
             "  if [ -n \"$ks\" ]; then\n"
             "    [ \"$ks\" = kern_softmax_online_ref ] && exec sleep 30\n"
             "    echo \"check $ops $ks PASS [stand-in]\" >\"$log\"; exit 0\n"
             "  fi\n"
             "  \"$real\" calibrate --backend cpu --list-kernels | while read -r op k _; do\n"
             "    echo \"check $op $k PASS [stand-in]\"; [ $op = softmax ] && break\n"
             "  done >\"$log\"\n"
             "  exec sleep 30\n"
             "fi\n"
             "exec \"$real\" calibrate --backend cpu \"${a[@]:1}\"\n",
             test_servesim);
    CHECK(write_script(bin, script) == 0);
    snprintf(cmd, sizeof cmd,
             "NVIDIA_SMI='%s' SERVESIM_BIN='%s' SERVESIM_GPU_LIB=/nonexistent GPU_CHECK_TORCH_S=0 GPU_CHECK_SANITIZER=0 "
             "GPU_CHECK_CHECK_S=3 GPU_CHECK_KERNEL_S=3 GPU_CHECK_GRID_S=600 bash '%s/scripts/gpu-check.sh' '%s' 2>&1",
             smi, bin, test_srcdir, dir);
    CHECK(run(cmd, buf, sizeof buf) == 1);
    CHECK_CONTAINS(out, "the checks hung (cut at 3 s); checking the kernels in doubt one by one");
    CHECK_CONTAINS(out, "softmax kern_softmax_online_ref HUNG (cut at 3 s)");
    CHECK_CONTAINS(out, "rmsnorm kern_rmsnorm_ref passed on its own");
    CHECK_CONTAINS(out, "not timed: kern_softmax_online_ref");
    CHECK(strstr(out, "gemm kern_gemm_bf16_ref passed") == NULL); /* passed in the first run: not rechecked */
    /* The grid timed the others, not the hung one. */
    snprintf(cmd, sizeof cmd, "grep -c '^point.*kern_softmax_online_ref' '%s/calibrate.log'; "
             "grep -c '^point.*kern_rmsnorm_ref' '%s/calibrate.log'", dir, dir);
    char counts[256];
    run(cmd, counts, sizeof counts);
    int nsoft = -1, nrms = -1;
    CHECK(sscanf(counts, "%d %d", &nsoft, &nrms) == 2);
    CHECK_MSG(nsoft == 0 && nrms > 0, "grid points: softmax %d (want 0), rmsnorm %d (want > 0)", nsoft, nrms);
    unlink(smi);
    unlink(bin);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

/* scripts/gpu-bundle.sh packs a build (here the servesim under test, with a
 * copy of it standing in for the GPU plugin) with the libraries it loads;
 * the bundled binary runs on the bundled libraries alone, and the bundle's
 * run-gpu-check.sh takes it to gpu-check.sh (which stops with exit 3 here:
 * the stand-in plugin is no GPU backend). A build without the plugin, or
 * no bundle folder, is refused. */
static void case_bundle(void)
{
    char cmd[2048], buf[8192], dir[256];
    const char *out = buf; /* a pointer: CHECK_CONTAINS tests it for NULL */
    snprintf(dir, sizeof dir, "/tmp/servesim_gpubundle_%d", (int)getpid());
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s/build' && cp '%s' '%s/build/servesim' && cp '%s' '%s/build/libservesim_gpu.so' && "
             "bash '%s/scripts/gpu-bundle.sh' --from-build '%s/build' '%s/bundle' 2>&1",
             dir, test_servesim, dir, test_servesim, dir, test_srcdir, dir, dir);
    CHECK(run(cmd, buf, sizeof buf) == 0);
    CHECK_CONTAINS(out, "run-gpu-check.sh");
    snprintf(cmd, sizeof cmd,
             "ls '%s/bundle/lib' | grep -c 'libgsl\\|libyaml\\|libsqlite3\\|libjansson'; "
             "ls '%s/bundle/lib' | grep -c '^libc\\.so\\|^libcublas\\|^libnccl'; "
             "LD_LIBRARY_PATH='%s/bundle/lib' '%s/bundle/servesim' --version",
             dir, dir, dir, dir);
    CHECK(run(cmd, buf, sizeof buf) == 0);
    int found = -1, excluded = -1;
    CHECK(sscanf(buf, "%d %d", &found, &excluded) == 2);
    CHECK_MSG(found >= 4 && excluded == 0, "bundled: %d of GSL/yaml/SQLite/jansson libraries, %d excluded ones", found,
              excluded);
    CHECK_CONTAINS(out, "servesim ");
    char smi[300];
    snprintf(smi, sizeof smi, "%s.smi", dir);
    CHECK(write_script(smi, "#!/bin/sh\necho 'NVIDIA H100 80GB HBM3, 9.0, 580.159'\n") == 0);
    snprintf(cmd, sizeof cmd,
             "NVIDIA_SMI='%s' SERVESIM_ROOT='%s' GPU_CHECK_TORCH_S=0 GPU_CHECK_SANITIZER=0 GPU_CHECK_PACK='%s/gc.tgz' "
             "bash '%s/bundle/run-gpu-check.sh' '%s/out' 2>&1",
             smi, test_srcdir, dir, dir, dir);
    CHECK(run(cmd, buf, sizeof buf) == 3);
    CHECK_CONTAINS(out, "using the prebuilt");
    CHECK_CONTAINS(out, "the GPU backend cannot run here");
    /* The packed OUTDIR holds the summary even when the check could not run. */
    snprintf(cmd, sizeof cmd, "tar tzf '%s/gc.tgz' 2>&1", dir);
    CHECK(run(cmd, buf, sizeof buf) == 0);
    CHECK_CONTAINS(out, "out/summary.txt");
    /* Refused: a build without the plugin; no bundle folder named. */
    snprintf(cmd, sizeof cmd, "rm '%s/build/libservesim_gpu.so' && bash '%s/scripts/gpu-bundle.sh' --from-build '%s/build' "
             "'%s/b2' 2>&1", dir, test_srcdir, dir, dir);
    CHECK(run(cmd, buf, sizeof buf) == 1);
    CHECK_CONTAINS(out, "libservesim_gpu.so (a build configured with -DSERVESIM_CUDA=ON has both)");
    snprintf(cmd, sizeof cmd, "bash '%s/scripts/gpu-bundle.sh' 2>&1", test_srcdir);
    CHECK(run(cmd, buf, sizeof buf) == 2);
    unlink(smi);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0);
}

static void case_torch_ref_grid(void)
{
    char cmd[1024], buf[4096];
    const char *out = buf; /* a pointer: CHECK_CONTAINS tests it for NULL */
    /* calib/torch_ref.py reads the grid with the ideal times at the
     * device's peaks (its rows' frac_of_peak) from this servesim. */
    if (system("command -v python3 >/dev/null 2>&1") == 0) {
        snprintf(cmd, sizeof cmd,
                 "python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import torch_ref; "
                 "g = list(torch_ref.read_grid(sys.argv[2], \"quick\", \"gemm\", \"bf16\", \"NVIDIA H200\")); "
                 "u = list(torch_ref.read_grid(sys.argv[2], \"tiny\", \"softmax\", \"fp32\", \"Unknown GPU\")); "
                 "print(len(g), min(x[4] for x in g) > 0, g[0][4] == max(g[0][2] / 989.4e12, g[0][3] / 4.8e12), "
                 "all(x[4] == 0 for x in u))' '%s/calib' '%s' 2>&1",
                 test_srcdir, test_servesim);
        CHECK(run(cmd, buf, sizeof buf) == 0);
        CHECK_CONTAINS(out, "28 True True True");
    } else {
        test_case_skip("no python3: calib/torch_ref.py's grid reading not tested");
    }
}

static const test_case cases[] = {
    {"usage", case_usage},
    {"no_nvidia_smi", case_no_nvidia_smi},
    {"no_device", case_no_device},
    {"backend_cannot_load", case_backend_cannot_load},
    {"isolates_hung_kernel", case_isolates_hung_kernel},
    {"bundle", case_bundle},
    {"torch_ref_grid", case_torch_ref_grid},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    if (argc < 3) {
        fprintf(stderr, "usage: test_calib_gpucheck SERVESIM SRCDIR\n");
        return 2;
    }
    return test_run("test_calib_gpucheck", cases);
}
