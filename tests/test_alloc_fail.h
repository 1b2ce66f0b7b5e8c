/* test_alloc_fail — allocation-failure injection for a test: a test that
 * includes this header is linked with the linker's --wrap for malloc,
 * calloc, realloc and aligned_alloc (tests/CMakeLists.txt looks for the
 * include), so every such call of servesim's static libraries and of the
 * test itself comes here first (not libc's own, strdup's included, nor
 * those of the shared libraries: SQLite, jansson, libyaml). test_alloc_fail_after(n) lets the
 * next n of them succeed and fails the one after (it returns NULL, as an
 * exhausted malloc does, and the injection is then off again);
 * test_alloc_calls() counts the calls seen, to find the n that reaches a
 * given allocation. Include it in one file of a test only (it defines the
 * wrappers). */
#ifndef TEST_ALLOC_FAIL_H
#define TEST_ALLOC_FAIL_H

#include <stddef.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n);

static long test_alloc_countdown_ = -1; /* calls until the failing one; −1 off */
static long test_alloc_calls_;

static inline void test_alloc_fail_after(long n) { test_alloc_countdown_ = n; }
static inline void test_alloc_fail_off(void) { test_alloc_countdown_ = -1; }
static inline long test_alloc_calls(void) { return test_alloc_calls_; }

/* 1 when this call is the one to fail. */
static inline int test_alloc_fails_now_(void)
{
    test_alloc_calls_++;
    if (test_alloc_countdown_ < 0) return 0;
    return test_alloc_countdown_-- == 0;
}

void *__wrap_malloc(size_t n) { return test_alloc_fails_now_() ? NULL : __real_malloc(n); }
void *__wrap_calloc(size_t n, size_t size) { return test_alloc_fails_now_() ? NULL : __real_calloc(n, size); }
void *__wrap_realloc(void *p, size_t n) { return test_alloc_fails_now_() ? NULL : __real_realloc(p, n); }
void *__wrap_aligned_alloc(size_t align, size_t n)
{
    return test_alloc_fails_now_() ? NULL : __real_aligned_alloc(align, n);
}

#endif
