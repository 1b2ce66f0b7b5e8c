/* test_util — tiny assertion helpers shared by the ctest executables.
 * CHECK records a failure and continues; the test's main returns
 * test_finish(), non-zero when any check failed. Tests receive argv[1] =
 * path of the servesim binary and argv[2] = source directory. */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int test_failures;
static int test_checks;

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

static inline int test_finish(const char *name)
{
    if (test_failures) {
        fprintf(stderr, "%s: %d of %d checks failed\n", name, test_failures, test_checks);
        return 1;
    }
    printf("%s: all %d checks passed\n", name, test_checks);
    return 0;
}

#endif
