/* calib_check — see calib_check.h. */
#include "calib_check.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void calib_check_init(calib_check_result *r, double atol, double rtol)
{
    memset(r, 0, sizeof *r);
    r->worst_index = -1;
    r->atol = atol, r->rtol = rtol;
    r->got = r->ref = NAN;
}

static void calib_check_take(calib_check_result *r, double ratio, int64_t index, double got, double ref,
                             const char *what)
{
    r->n++;
    if (!(ratio <= 1.0)) r->n_bad++;
    if (r->worst_index < 0 || ratio > r->worst || (isnan(ratio) && !isnan(r->worst))) {
        r->worst = isnan(ratio) ? INFINITY : ratio;
        r->worst_index = index, r->got = got, r->ref = ref;
        snprintf(r->what, sizeof r->what, "%s", what ? what : "out");
    }
}

void calib_check_compare(calib_check_result *r, const float *got, const float *ref, int64_t n, int64_t offset,
                         const char *what)
{
    for (int64_t i = 0; i < n; i++) {
        double x = got[i], y = ref[i], ratio;
        if (isnan(x) || isnan(y)) ratio = INFINITY; /* unwritten (poisoned) or a NaN produced */
        else if (isinf(x) || isinf(y)) ratio = x == y ? 0.0 : INFINITY; /* −inf LSE of an empty row matches −inf */
        else ratio = fabs(x - y) / (r->atol + r->rtol * fabs(y));
        calib_check_take(r, ratio, offset + i, x, y, what);
    }
}

void calib_check_ratio(calib_check_result *r, double ratio, int64_t index, double got, double ref, const char *what)
{
    calib_check_take(r, isnan(ratio) ? INFINITY : ratio, index, got, ref, what);
}

void calib_check_bytes(calib_check_result *r, const void *got, const void *ref, size_t n, const char *what)
{
    const unsigned char *g = got, *f = ref;
    for (size_t i = 0; i < n; i++)
        if (g[i] != f[i]) {
            r->n += (int64_t)n;
            r->n_bad++;
            r->worst = INFINITY, r->worst_index = (int64_t)i, r->got = g[i], r->ref = f[i];
            snprintf(r->what, sizeof r->what, "%s", what ? what : "out");
            return;
        }
    if (n) calib_check_take(r, 0.0, 0, g[0], f[0], what), r->n += (int64_t)n - 1;
}

double calib_absmax(const float *x, int64_t n)
{
    double m = 0.0;
    for (int64_t i = 0; i < n; i++)
        if (fabs(x[i]) > m) m = fabs(x[i]);
    return m;
}

int calib_check_passed(const calib_check_result *r)
{
    return r->n > 0 && r->n_bad == 0 && r->canary_broken == 0 && r->worst <= 1.0;
}

void calib_check_format(const calib_check_result *r, char *buf, size_t len)
{
    if (r->n == 0) {
        snprintf(buf, len, "nothing compared");
        return;
    }
    int k = snprintf(buf, len, "worst %.3g of tolerance at %s[%lld]: %.6g vs %.6g (atol %.3g, rtol %.3g), %lld of %lld over",
                     r->worst, r->what, (long long)r->worst_index, r->got, r->ref, r->atol, r->rtol, (long long)r->n_bad,
                     (long long)r->n);
    if (r->canary_broken && k > 0 && (size_t)k < len)
        snprintf(buf + k, len - (size_t)k, "; %d guard canar%s overwritten (a write past a buffer's end)", r->canary_broken,
                 r->canary_broken == 1 ? "y" : "ies");
}

static unsigned char calib_canary_byte(size_t i)
{
    return (unsigned char)(0xA5u ^ (unsigned)(i * 37u));
}

void calib_canary_fill(void *buf_end, size_t n)
{
    unsigned char *p = buf_end;
    for (size_t i = 0; i < n; i++) p[i] = calib_canary_byte(i);
}

int calib_canary_intact(const void *buf_end, size_t n)
{
    const unsigned char *p = buf_end;
    for (size_t i = 0; i < n; i++)
        if (p[i] != calib_canary_byte(i)) return 0;
    return 1;
}
