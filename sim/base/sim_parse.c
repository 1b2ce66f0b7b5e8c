/* sim_parse — see sim_parse.h. */
#include "sim_parse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

_Static_assert(sizeof(long long) == sizeof(int64_t), "long long is 64-bit");

/* What strtod/strtoll would accept beyond plain decimal, or skip silently,
 * is refused before they run: blanks first, words (nan, inf), hex. */
static int decimal_start(const char *s, int allow_minus, int allow_dot)
{
    const char *p = s;
    if (*p == '+' || (allow_minus && *p == '-')) p++;
    if (*p >= '0' && *p <= '9') return !(p[0] == '0' && (p[1] == 'x' || p[1] == 'X'));
    return allow_dot && *p == '.' && p[1] >= '0' && p[1] <= '9';
}

int sim_parse_double(const char *s, double *out)
{
    if (!*s) return SIM_PARSE_EMPTY;
    if (!decimal_start(s, 1, 1)) return SIM_PARSE_SYNTAX;
    int saved = errno;
    char *end;
    errno = 0;
    double x = strtod(s, &end);
    int overflow = errno == ERANGE && !isfinite(x);
    errno = saved;
    if (*end) return SIM_PARSE_SYNTAX;
    if (overflow || !isfinite(x)) return SIM_PARSE_RANGE;
    *out = x;
    return SIM_PARSE_OK;
}

int sim_parse_i64(const char *s, int64_t *out)
{
    if (!*s) return SIM_PARSE_EMPTY;
    if (!decimal_start(s, 1, 0)) return SIM_PARSE_SYNTAX;
    int saved = errno;
    char *end;
    errno = 0;
    long long x = strtoll(s, &end, 10);
    int range = errno == ERANGE;
    errno = saved;
    if (*end) return SIM_PARSE_SYNTAX;
    if (range) return SIM_PARSE_RANGE;
    *out = (int64_t)x;
    return SIM_PARSE_OK;
}

int sim_parse_u64(const char *s, uint64_t *out)
{
    if (!*s) return SIM_PARSE_EMPTY;
    if (!decimal_start(s, 0, 0)) return SIM_PARSE_SYNTAX;
    int saved = errno;
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    int range = errno == ERANGE;
    errno = saved;
    if (*end) return SIM_PARSE_SYNTAX;
    if (range) return SIM_PARSE_RANGE;
    *out = (uint64_t)x;
    return SIM_PARSE_OK;
}

const char *sim_parse_strerror(int code)
{
    switch (code) {
    case SIM_PARSE_OK: return "ok";
    case SIM_PARSE_EMPTY: return "empty";
    case SIM_PARSE_SYNTAX: return "not a number";
    case SIM_PARSE_RANGE: return "out of range";
    default: return "unknown parse error";
    }
}
