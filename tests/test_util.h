/* test_util — the one harness of the ctest executables: checks, named
 * cases, a name filter and the exit status.
 *
 * Checks: CHECK records a failure and continues. REQUIRE states a
 * precondition (a setup step the following checks depend on): when it fails
 * it records a failure and returns from the enclosing void function (a
 * case), so the dependent checks are skipped loudly rather than vanishing
 * or crashing; REQUIRE_OR runs another action instead (`return 1`,
 * `goto out`, `continue`).
 *
 * Cases: a test is a table of named cases (void functions) run by
 * test_run(), which prints `NAME: OK`, `NAME: FAIL` or `NAME: SKIP (why)`
 * per case and a summary line; a case that ran no check fails, and so does
 * a binary that ran none (a test that checks nothing cannot pass).
 * test_case_skip() is the one deliberate way to skip a case (with its
 * reason); a binary whose cases passed but one skipped exits 77 (ctest's
 * SKIP_RETURN_CODE), a failure anywhere exits 1.
 *
 * Command line: tests receive argv[1] = path of the servesim binary and
 * argv[2] = source directory (test_servesim and test_srcdir once test_args()
 * has run; test_src_dir() is the source directory with a fallback for a run
 * by hand). test_args() takes the harness's own flags out of argv first:
 *   -o NAME[,NAME...]  run only the cases whose name contains one of NAMEs
 *                      (as ggml's test-backend-ops -o); none matching fails
 *   -l                 list the case names and exit
 * e.g. `build/test_parse -o overflow,sign` or
 * `build/test_cli build/servesim . -o exit_codes`. */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;
static int test_checks;
static const char *test_filter_;     /* -o NAME[,NAME...], NULL for all */
static int test_list_;               /* -l */
static const char *test_skip_why_;   /* set by test_case_skip in the running case */
/* argv[1] (the servesim binary) and argv[2] (the source directory) once
 * test_args has run; NULL when not given. */
static const char *test_servesim;
static const char *test_srcdir;

#define CHECK(cond)                                                              \
    do {                                                                         \
        test_checks++;                                                           \
        if (!(cond)) {                                                           \
            test_failures++;                                                     \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
        }                                                                        \
    } while (0)

#define CHECK_MSG(cond, ...)                                                     \
    do {                                                                         \
        test_checks++;                                                           \
        if (!(cond)) {                                                           \
            test_failures++;                                                     \
            fprintf(stderr, "%s:%d: CHECK failed: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                        \
            fputc('\n', stderr);                                                 \
        }                                                                        \
    } while (0)

#define CHECK_NEAR(a, b, tol)                                                    \
    do {                                                                         \
        double a_ = (double)(a), b_ = (double)(b), t_ = (double)(tol);           \
        CHECK_MSG(fabs(a_ - b_) <= t_, "%s=%.9g vs %s=%.9g (tol %.3g)", #a, a_, #b, b_, t_); \
    } while (0)

#define CHECK_CONTAINS(hay, needle)                                              \
    CHECK_MSG((hay) && strstr((hay), (needle)), "'%s' not in '%s'", (needle), (hay) ? (hay) : "(null)")

/* A precondition that failed: counted as a failed check, reported with
 * its expression, then `action` skips what depends on it: one or more
 * statements (`return`, `return 1`, `goto out`, `continue`, `break`,
 * `free(p); return`). An if/else rather than do-while(0), so that
 * continue and break reach the caller's loop; use it as a statement of
 * its own (inside an unbraced if it draws a dangling-else warning). */
static inline int test_require_(int ok, const char *file, int line, const char *expr, int with_msg)
{
    test_checks++;
    if (ok) return 1;
    test_failures++;
    fprintf(stderr, "%s:%d: REQUIRE failed: %s%s", file, line, expr, with_msg ? ": " : " (dependent checks skipped)\n");
    return 0;
}

static inline int test_require_msg_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int test_require_msg_(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputs(" (dependent checks skipped)\n", stderr);
    return 0;
}

#define REQUIRE_OR(cond, action)                                                 \
    if (test_require_(!!(cond), __FILE__, __LINE__, #cond, 0)) {                 \
    } else {                                                                     \
        action;                                                                  \
    }

#define REQUIRE_MSG_OR(cond, action, ...)                                        \
    if (test_require_(!!(cond), __FILE__, __LINE__, #cond, 1)) {                 \
    } else if (test_require_msg_(__VA_ARGS__)) {                                 \
    } else {                                                                     \
        action;                                                                  \
    }

/* In a void test function: fail and return when the precondition fails. */
#define REQUIRE(cond) REQUIRE_OR(cond, return)
#define REQUIRE_MSG(cond, ...) REQUIRE_MSG_OR(cond, return, __VA_ARGS__)

/* The rest of an open stream as a NUL-terminated string (NULL when out of
 * memory); *len gets its length. */
static inline char *test_read_stream(FILE *f, long *len)
{
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (!buf) return NULL;
    size_t got = fread(buf, 1, (size_t)n, f);
    buf[got] = '\0';
    if (len) *len = (long)got;
    return buf;
}

/* A whole file as a NUL-terminated string; NULL if it cannot be read. */
static inline char *test_slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *s = test_read_stream(f, NULL);
    fclose(f);
    return s;
}

/* Drops the line holding "wall_time_s" from a --json text (the only
 * non-deterministic key), so two runs' outputs compare byte for byte. */
static inline void test_strip_wall(char *s)
{
    char *p = strstr(s, "\"wall_time_s\"");
    if (!p) return;
    char *b = p;
    while (b > s && b[-1] != '\n') b--;
    char *e = strchr(p, '\n');
    e = e ? e + 1 : p + strlen(p);
    memmove(b, e, strlen(e) + 1);
}

/* Runs a shell command; returns its exit status (-1 when it did not exit)
 * and, when out is not NULL, its stdout (free it). */
#include <sys/wait.h>
static inline int test_sh(const char *cmd, char **out)
{
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t cap = 1 << 16, n = 0, got;
    char *buf = malloc(cap);
    while (buf && (got = fread(buf + n, 1, cap - n - 1, p)) > 0) {
        n += got;
        if (n + 1 == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) free(buf);
            buf = nb;
        }
    }
    if (buf) buf[n] = '\0';
    int st = pclose(p);
    if (out) *out = buf;
    else free(buf);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The exit status of a test binary: 1 when a check failed or when no
 * check ran (a test that checks nothing cannot pass), else 0. */
static inline int test_finish(const char *name)
{
    if (test_failures) {
        fprintf(stderr, "%s: %d of %d checks failed\n", name, test_failures, test_checks);
        return 1;
    }
    if (test_checks == 0) {
        fprintf(stderr, "%s: no check ran\n", name);
        return 1;
    }
    printf("%s: all %d checks passed\n", name, test_checks);
    return 0;
}

/* A deliberate skip (ctest's SKIP_RETURN_CODE 77) naming why; the checks
 * that ran before it still count, so a failure among them fails the test. */
static inline int test_skip(const char *name, const char *why)
{
    if (test_failures) return test_finish(name);
    printf("%s: SKIPPED: %s (%d checks passed before the skip)\n", name, why, test_checks);
    return 77;
}

/* Harness flags out of argv (they may stand anywhere); returns the new
 * argc, argv[argc] stays NULL. Exits 2 on `-o` without a name. */
static inline int test_args(int argc, char **argv)
{
    int n = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-o")) {
            if (i + 1 >= argc || !argv[i + 1][0]) {
                fprintf(stderr, "%s: -o needs a case name (-o NAME[,NAME...])\n", argv[0]);
                exit(2);
            }
            test_filter_ = argv[++i];
        } else if (!strcmp(argv[i], "-l")) {
            test_list_ = 1;
        } else {
            argv[n++] = argv[i];
        }
    }
    argv[n] = NULL;
    test_servesim = n > 1 ? argv[1] : NULL;
    test_srcdir = n > 2 ? argv[2] : NULL;
    return n;
}

/* The source directory: argv[2] once test_args has run; without it (a
 * run by hand) "." when it holds tests/test_util.h (run from the
 * checkout), else ".." (run from build/). */
static inline const char *test_src_dir(void)
{
    if (test_srcdir) return test_srcdir;
    FILE *f = fopen("tests/test_util.h", "r");
    if (!f) return "..";
    fclose(f);
    return ".";
}

/* Whether a case name contains one of the comma-separated filter names. */
static inline int test_selected_(const char *name)
{
    if (!test_filter_) return 1;
    for (const char *p = test_filter_; *p;) {
        size_t len = strcspn(p, ",");
        for (const char *h = name; len && *h; h++)
            if (!strncmp(h, p, len)) return 1;
        p += len + (p[len] == ',');
    }
    return 0;
}

/* Marks the running case skipped, with its reason; the checks it ran so
 * far still count (a failure among them fails the case). Return from the
 * case after calling it. */
static inline void test_case_skip(const char *why) { test_skip_why_ = why; }

typedef struct {
    const char *name;
    void (*fn)(void);
} test_case;

/* Runs the selected cases in order and returns the binary's exit status:
 * 1 when a check failed, a case ran no check or no case matched the
 * filter, 77 when a case skipped and nothing failed, else 0. */
static inline int test_run_(const char *name, const test_case *cases, size_t n)
{
    if (test_list_) {
        for (size_t k = 0; k < n; k++) printf("%s\n", cases[k].name);
        return 0;
    }
    int ran = 0, ok = 0, failed = 0, skipped = 0;
    for (size_t k = 0; k < n; k++) {
        if (!test_selected_(cases[k].name)) continue;
        int f0 = test_failures, c0 = test_checks;
        test_skip_why_ = NULL;
        cases[k].fn();
        ran++;
        fflush(stderr);
        if (test_failures != f0) {
            failed++;
            printf("%s: FAIL\n", cases[k].name);
        } else if (test_skip_why_) {
            skipped++;
            printf("%s: SKIP (%s)\n", cases[k].name, test_skip_why_);
        } else if (test_checks == c0) {
            failed++;
            test_failures++;
            printf("%s: FAIL (no check ran)\n", cases[k].name);
        } else {
            ok++;
            printf("%s: OK\n", cases[k].name);
        }
        fflush(stdout);
    }
    if (!ran) {
        fprintf(stderr, "%s: no case matches -o %s (-l lists them)\n", name, test_filter_ ? test_filter_ : "");
        return 1;
    }
    printf("%s: %d of %d cases OK, %d failed, %d skipped\n", name, ok, ran, failed, skipped);
    if (skipped && !test_failures) {
        printf("%s: SKIPPED: %d case(s) (%d checks passed)\n", name, skipped, test_checks);
        return 77;
    }
    return test_finish(name);
}
#define test_run(name, cases) test_run_((name), (cases), sizeof(cases) / sizeof((cases)[0]))

#endif
