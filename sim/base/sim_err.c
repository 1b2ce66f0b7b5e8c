/* sim_err — see sim_err.h. */
#include "sim_err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sim_err_set(sim_err *e, int code, const char *fmt, ...)
{
    if (e) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->msg, sizeof e->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}

int sim_err_wrap(sim_err *e, int code, const char *fmt, ...)
{
    if (e) {
        char prefix[512];
        char old[sizeof e->msg];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(prefix, sizeof prefix, fmt, ap);
        va_end(ap);
        memcpy(old, e->msg, sizeof old);
        old[sizeof old - 1] = '\0';
        /* Copy by hand: the message may be truncated, never overflowed. */
        size_t n = strlen(prefix);
        if (n > sizeof e->msg - 3) n = sizeof e->msg - 3;
        memcpy(e->msg, prefix, n);
        e->msg[n++] = ':';
        e->msg[n++] = ' ';
        size_t m = strlen(old);
        if (m > sizeof e->msg - 1 - n) m = sizeof e->msg - 1 - n;
        memcpy(e->msg + n, old, m);
        e->msg[n + m] = '\0';
    }
    return code;
}

void sim_assert_fail(const char *file, int line, const char *expr, int64_t ctx)
{
    fprintf(stderr, "servesim: internal error at %s:%d: assertion '%s' failed (t=%lld ns)\n",
            file, line, expr, (long long)ctx);
    abort();
}
