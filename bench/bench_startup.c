/* bench_startup — start-up cost of the servesim binary (not a test): runs
 * `SERVESIM version` (start-up alone: dynamic loading, relocation, main)
 * and `SERVESIM validate scenarios/quickstart.yaml` (a command that loads the
 * catalogues and builds a deployment) RUNS times each, and prints the
 * median / min / max wall time of a whole process (fork to reap) and its
 * peak RSS (the child's ru_maxrss). With the GPU backend in the dlopen'd
 * plugin these stay at a few milliseconds and about 11 MB whether or not
 * servesim was configured with -DSERVESIM_CUDA=ON.
 *
 * Usage: bench_startup SERVESIM [SRCDIR] [RUNS] (defaults: ., 20); run from
 * anywhere, SRCDIR locates scenarios/quickstart.yaml. */
#include "sim_clock.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_RUNS 1000

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* One run of argv with stdout/stderr to /dev/null; wall seconds and peak
 * RSS (KiB), or -1 when it could not run or exited non-zero. */
static int run_once(char *const argv[], double *wall, long *rss_kib)
{
    double t0 = sim_wall_s();
    pid_t pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int fd = open("/dev/null", O_WRONLY);
        if (fd >= 0) dup2(fd, 1), dup2(fd, 2);
        execv(argv[0], argv);
        _exit(127);
    }
    int st = 0;
    struct rusage ru;
    if (wait4(pid, &st, 0, &ru) != pid) return -1;
    *wall = sim_wall_s() - t0;
    *rss_kib = ru.ru_maxrss;
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : -1;
}

static int bench(const char *label, char *const argv[], int runs)
{
    static double w[MAX_RUNS];
    long rss_max = 0, rss_min = -1;
    double wall;
    long rss;
    if (run_once(argv, &wall, &rss) != 0) { /* warm-up (page cache), also the sanity run */
        fprintf(stderr, "bench_startup: '%s %s' failed\n", argv[0], argv[1]);
        return 1;
    }
    for (int i = 0; i < runs; i++) {
        if (run_once(argv, &w[i], &rss) != 0) {
            fprintf(stderr, "bench_startup: run %d of '%s' failed\n", i, label);
            return 1;
        }
        rss_max = rss > rss_max ? rss : rss_max;
        rss_min = rss_min < 0 || rss < rss_min ? rss : rss_min;
    }
    qsort(w, (size_t)runs, sizeof w[0], cmp_double);
    printf("%-44s wall median %7.2f ms (min %.2f, max %.2f)  peak RSS %.1f-%.1f MB  (%d runs)\n", label,
           1e3 * w[runs / 2], 1e3 * w[0], 1e3 * w[runs - 1], rss_min / 1024.0, rss_max / 1024.0, runs);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench_startup SERVESIM [SRCDIR] [RUNS]\n");
        return 2;
    }
    const char *src = argc > 2 ? argv[2] : ".";
    int runs = argc > 3 ? atoi(argv[3]) : 20;
    if (runs < 1 || runs > MAX_RUNS) {
        fprintf(stderr, "bench_startup: RUNS is 1..%d\n", MAX_RUNS);
        return 2;
    }
    char scen[4096];
    snprintf(scen, sizeof scen, "%s/scenarios/quickstart.yaml", src);
    char *v[] = {argv[1], "version", NULL};
    char *val[] = {argv[1], "validate", scen, NULL};
    int rc = bench("servesim version", v, runs);
    rc |= bench("servesim validate scenarios/quickstart.yaml", val, runs);
    return rc;
}
