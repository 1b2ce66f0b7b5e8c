/* sim_parse — see sim_parse.h. */
#include "sim_parse.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What strtod would accept beyond plain decimal, or skip silently, is
 * refused before it runs: blanks first, words (nan, inf), hex. */
static int decimal_start(const char *s)
{
    const char *p = s;
    if (*p == '+' || *p == '-') p++;
    if (*p >= '0' && *p <= '9') return !(p[0] == '0' && (p[1] == 'x' || p[1] == 'X'));
    return *p == '.' && p[1] >= '0' && p[1] <= '9';
}

int sim_parse_double(const char *s, double *out)
{
    if (!*s) return SIM_PARSE_EMPTY;
    if (!decimal_start(s)) return SIM_PARSE_SYNTAX;
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

int sim_parse_double_n(const char *s, size_t len, double *out)
{
    char buf[SIM_PARSE_FIELD_MAX];
    if (len == 0) return SIM_PARSE_EMPTY;
    if (memchr(s, '\0', len)) return SIM_PARSE_SYNTAX;
    if (len >= sizeof buf) return SIM_PARSE_RANGE;
    memcpy(buf, s, len);
    buf[len] = '\0';
    return sim_parse_double(buf, out);
}

/* The one integer reader: an optional sign (a '-' only when neg_ok), then
 * base-10 digits to the field's end; *mag the magnitude, refused above
 * limit. */
static int parse_magnitude(const char *s, size_t len, int neg_ok, uint64_t limit_pos, uint64_t limit_neg,
                           int *neg, uint64_t *mag)
{
    size_t i = 0;
    if (len == 0) return SIM_PARSE_EMPTY;
    *neg = 0;
    if (s[0] == '+' || (neg_ok && s[0] == '-')) {
        *neg = s[0] == '-';
        i = 1;
    }
    if (i == len) return SIM_PARSE_SYNTAX;
    uint64_t m = 0, limit = *neg ? limit_neg : limit_pos;
    int over = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9') return SIM_PARSE_SYNTAX;
        unsigned d = (unsigned)(s[i] - '0');
        if (m > (limit - d) / 10) over = 1; /* keeps reading: junk after the digits is a syntax error */
        else m = m * 10 + d;
    }
    if (over) return SIM_PARSE_RANGE;
    *mag = m;
    return SIM_PARSE_OK;
}

int sim_parse_i64_n(const char *s, size_t len, int64_t *out)
{
    int neg;
    uint64_t m;
    int rc = parse_magnitude(s, len, 1, (uint64_t)INT64_MAX, (uint64_t)INT64_MAX + 1, &neg, &m);
    if (rc != SIM_PARSE_OK) return rc;
    *out = neg ? (m ? -(int64_t)(m - 1) - 1 : 0) : (int64_t)m;
    return SIM_PARSE_OK;
}

int sim_parse_u64_n(const char *s, size_t len, uint64_t *out)
{
    int neg;
    uint64_t m;
    int rc = parse_magnitude(s, len, 0, UINT64_MAX, 0, &neg, &m);
    if (rc != SIM_PARSE_OK) return rc;
    *out = m;
    return SIM_PARSE_OK;
}

int sim_parse_i64(const char *s, int64_t *out)
{
    return sim_parse_i64_n(s, strlen(s), out);
}

int sim_parse_u64(const char *s, uint64_t *out)
{
    return sim_parse_u64_n(s, strlen(s), out);
}

int sim_parse_ratio(const char *s, int64_t *x, int64_t *y)
{
    const char *colon = strchr(s, ':');
    if (!colon) return *s ? SIM_PARSE_SYNTAX : SIM_PARSE_EMPTY;
    int64_t a, b;
    size_t la = (size_t)(colon - s), lb = strlen(colon + 1);
    int ra = sim_parse_i64_n(s, la, &a), rb = sim_parse_i64_n(colon + 1, lb, &b);
    if (ra == SIM_PARSE_EMPTY || rb == SIM_PARSE_EMPTY || ra == SIM_PARSE_SYNTAX || rb == SIM_PARSE_SYNTAX)
        return SIM_PARSE_SYNTAX;
    if (ra != SIM_PARSE_OK || rb != SIM_PARSE_OK) return SIM_PARSE_RANGE;
    *x = a;
    *y = b;
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
