/* test_calib_gpucheck — the parts of scripts/gpu-check.sh that run without
 * a GPU: usage errors and the clear failure (exit 3, no files written) when
 * nvidia-smi is absent — forced with NVIDIA_SMI pointing nowhere, so the
 * test means the same on machines that have a GPU. */
#include "test_util.h"

#include <stdio.h>
#include <stdlib.h>
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

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_calib_gpucheck SERVESIM SRCDIR\n");
        return 2;
    }
    char cmd[1024], buf[4096], dir[256];
    const char *out = buf; /* a pointer: CHECK_CONTAINS tests it for NULL */
    snprintf(cmd, sizeof cmd, "bash '%s/scripts/gpu-check.sh' 2>&1", argv[2]);
    CHECK(run(cmd, buf, sizeof buf) == 2);
    CHECK_CONTAINS(out, "usage: scripts/gpu-check.sh OUTDIR");

    snprintf(dir, sizeof dir, "/tmp/servesim_gpucheck_%d", (int)getpid());
    snprintf(cmd, sizeof cmd, "NVIDIA_SMI=/nonexistent/nvidia-smi bash '%s/scripts/gpu-check.sh' '%s' 2>&1", argv[2], dir);
    CHECK(run(cmd, buf, sizeof buf) == 3);
    CHECK_CONTAINS(out, "needs a machine with an NVIDIA GPU");
    CHECK_CONTAINS(out, "--backend cpu");
    CHECK(access(dir, F_OK) != 0); /* nothing written before the GPU is confirmed */

    /* An nvidia-smi that finds no device fails the same way. */
    snprintf(cmd, sizeof cmd, "NVIDIA_SMI=false bash '%s/scripts/gpu-check.sh' '%s' 2>&1", argv[2], dir);
    CHECK(run(cmd, buf, sizeof buf) == 3);
    CHECK_CONTAINS(out, "found no usable GPU");
    return test_finish("test_calib_gpucheck");
}
