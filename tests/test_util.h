/* test_util — tiny assertion helpers shared by the ctest executables.
 * CHECK records a failure and continues; the test's main returns
 * test_finish(), non-zero when any check failed. Tests receive argv[1] =
 * path of the servesim binary and argv[2] = source directory. */
#ifndef TEST_UTIL_H
#define TEST_UTIL_H

#include <math.h>
#include <stdio.h>
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
