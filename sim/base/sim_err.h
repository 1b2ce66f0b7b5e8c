/* sim_err — error reporting for all servesim library code.
 *
 * Library code never exits and never prints: a failing function returns a
 * negative SIM_E* code and writes a human-readable message into a
 * caller-owned sim_err (which may be NULL when the caller does not care).
 * Messages about input name the file, line, column and key path where known.
 * Programming bugs (time going backwards, stale handles) are not errors but
 * hit SIM_ASSERT, which is always on and prints file, line and a context
 * value (usually the simulated time) before aborting. */
#ifndef SIM_ERR_H
#define SIM_ERR_H

#include <stddef.h>
#include <stdint.h>

enum {
    SIM_OK = 0,
    SIM_EINVAL = -1,   /* bad input (scenario, trace, flag) */
    SIM_ENOMEM = -2,   /* allocation failed */
    SIM_EIO = -3,      /* file or database I/O */
    SIM_ERANGE = -4,   /* value out of range / layout does not fit */
    SIM_ENOTSUP = -5,  /* valid request for something not built */
    SIM_EOVERLOAD = -6 /* run stopped: queues grew without bound */
};

typedef struct sim_err {
    char msg[2048];
} sim_err;

/* Formats a message into e (if non-NULL) and returns code. */
int sim_err_set(sim_err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Prepends "prefix: " to an existing message (used to add context). */
int sim_err_wrap(sim_err *e, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

void sim_assert_fail(const char *file, int line, const char *expr, int64_t ctx)
    __attribute__((noreturn));

/* Always-on assert; ctx is printed (simulated ns where meaningful). */
#define SIM_ASSERT(cond, ctx)                                                  \
    do {                                                                       \
        if (!(cond)) sim_assert_fail(__FILE__, __LINE__, #cond, (int64_t)(ctx)); \
    } while (0)

#endif
