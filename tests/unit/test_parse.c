/* test_parse — the strict number parser (sim_parse) and the shared hash
 * finaliser (sim_hash). */
#include "sim_hash.h"
#include "sim_parse.h"
#include "test_util.h"

#include <errno.h>
#include <float.h>
#include <stdint.h>
#include <string.h>

static void case_valid(void)
{
    double d = 0;
    int64_t i = 0;
    uint64_t u = 0;
    CHECK(sim_parse_double("1.5", &d) == SIM_PARSE_OK && d == 1.5);
    CHECK(sim_parse_double(".25", &d) == SIM_PARSE_OK && d == 0.25);
    CHECK(sim_parse_double("3.", &d) == SIM_PARSE_OK && d == 3.0);
    CHECK(sim_parse_double("2e3", &d) == SIM_PARSE_OK && d == 2000.0);
    CHECK(sim_parse_double("0", &d) == SIM_PARSE_OK && d == 0.0);
    CHECK(sim_parse_i64("42", &i) == SIM_PARSE_OK && i == 42);
    CHECK(sim_parse_i64("007", &i) == SIM_PARSE_OK && i == 7);
    CHECK(sim_parse_i64("9223372036854775807", &i) == SIM_PARSE_OK && i == INT64_MAX);
    CHECK(sim_parse_i64("-9223372036854775808", &i) == SIM_PARSE_OK && i == INT64_MIN);
    CHECK(sim_parse_u64("18446744073709551615", &u) == SIM_PARSE_OK && u == UINT64_MAX);
    CHECK(sim_parse_u64("0", &u) == SIM_PARSE_OK && u == 0);
}

static void case_trailing_junk(void)
{
    double d = 7;
    int64_t i = 7;
    uint64_t u = 7;
    CHECK(sim_parse_double("1.5x", &d) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_double("1.5 ", &d) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_double(" 1.5", &d) == SIM_PARSE_SYNTAX); /* leading blanks too */
    CHECK(sim_parse_double("abc", &d) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_double(".", &d) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_i64("12k", &i) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_i64("1.0", &i) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_i64("\t3", &i) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_u64("5:", &u) == SIM_PARSE_SYNTAX);
    CHECK(d == 7 && i == 7 && u == 7); /* *out untouched on failure */
}

static void case_overflow(void)
{
    double d = 7;
    int64_t i = 7;
    uint64_t u = 7;
    CHECK(sim_parse_double("1e400", &d) == SIM_PARSE_RANGE);
    CHECK(sim_parse_double("-1e400", &d) == SIM_PARSE_RANGE);
    CHECK(sim_parse_i64("9223372036854775808", &i) == SIM_PARSE_RANGE);
    CHECK(sim_parse_i64("-9223372036854775809", &i) == SIM_PARSE_RANGE);
    CHECK(sim_parse_u64("18446744073709551616", &u) == SIM_PARSE_RANGE);
    CHECK(d == 7 && i == 7 && u == 7);
    /* underflow is not an error: it rounds toward 0 */
    CHECK(sim_parse_double("1e-400", &d) == SIM_PARSE_OK && d >= 0 && d < DBL_MIN);
    CHECK(sim_parse_double("1e308", &d) == SIM_PARSE_OK && d == 1e308);
    /* errno is left as the caller had it */
    errno = EDOM;
    CHECK(sim_parse_i64("99999999999999999999", &i) == SIM_PARSE_RANGE && errno == EDOM);
    errno = 0;
}

static void case_empty(void)
{
    double d;
    int64_t i;
    uint64_t u;
    CHECK(sim_parse_double("", &d) == SIM_PARSE_EMPTY);
    CHECK(sim_parse_i64("", &i) == SIM_PARSE_EMPTY);
    CHECK(sim_parse_u64("", &u) == SIM_PARSE_EMPTY);
    CHECK(sim_parse_double("+", &d) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_i64("-", &i) == SIM_PARSE_SYNTAX);
    CHECK(!strcmp(sim_parse_strerror(SIM_PARSE_EMPTY), "empty"));
    CHECK(!strcmp(sim_parse_strerror(SIM_PARSE_SYNTAX), "not a number"));
    CHECK(!strcmp(sim_parse_strerror(SIM_PARSE_RANGE), "out of range"));
    CHECK(!strcmp(sim_parse_strerror(SIM_PARSE_OK), "ok"));
}

static void case_sign(void)
{
    double d = 0;
    int64_t i = 0;
    uint64_t u = 7;
    CHECK(sim_parse_double("-2.5", &d) == SIM_PARSE_OK && d == -2.5);
    CHECK(sim_parse_double("+2.5", &d) == SIM_PARSE_OK && d == 2.5);
    CHECK(sim_parse_double("-.5", &d) == SIM_PARSE_OK && d == -0.5);
    CHECK(sim_parse_i64("-3", &i) == SIM_PARSE_OK && i == -3);
    CHECK(sim_parse_i64("+3", &i) == SIM_PARSE_OK && i == 3);
    CHECK(sim_parse_u64("+3", &u) == SIM_PARSE_OK && u == 3);
    u = 7;
    CHECK(sim_parse_u64("-1", &u) == SIM_PARSE_SYNTAX && u == 7); /* strtoull would wrap */
    CHECK(sim_parse_u64("-0", &u) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_i64("--3", &i) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_double("+-1", &d) == SIM_PARSE_SYNTAX);
}

static void case_hex_inf_nan(void)
{
    double d = 7;
    int64_t i = 7;
    uint64_t u = 7;
    CHECK(sim_parse_double("inf", &d) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_double("-INF", &d) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_double("infinity", &d) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_double("nan", &d) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_double("NAN(1)", &d) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_double("0x10", &d) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_double("-0X1p3", &d) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_i64("0x10", &i) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_u64("0X10", &u) == SIM_PARSE_SYNTAX);
    CHECK(d == 7 && i == 7 && u == 7);
}

/* A field of a longer text: only s[0..len) is read, the rest of the line is
 * not part of the number. */
static void case_field_n(void)
{
    const char line[] = "12.5,300,-7,x";
    double d = 7;
    int64_t i = 7;
    uint64_t u = 7;
    CHECK(sim_parse_double_n(line, 4, &d) == SIM_PARSE_OK && d == 12.5);
    CHECK(sim_parse_i64_n(line + 5, 3, &i) == SIM_PARSE_OK && i == 300);
    CHECK(sim_parse_u64_n(line + 5, 2, &u) == SIM_PARSE_OK && u == 30);
    CHECK(sim_parse_i64_n(line + 9, 2, &i) == SIM_PARSE_OK && i == -7);
    CHECK(sim_parse_double_n(line, 2, &d) == SIM_PARSE_OK && d == 12.0);
    /* not NUL-terminated at all: a field at the very end of a buffer */
    const char tail[3] = {'4', '2', '9'};
    CHECK(sim_parse_i64_n(tail, 2, &i) == SIM_PARSE_OK && i == 42);
    CHECK(sim_parse_double_n(tail, 3, &d) == SIM_PARSE_OK && d == 429.0);
    d = 7;
    i = 7;
    u = 7;
    CHECK(sim_parse_double_n(line, 0, &d) == SIM_PARSE_EMPTY);
    CHECK(sim_parse_i64_n(line, 0, &i) == SIM_PARSE_EMPTY);
    CHECK(sim_parse_double_n(line, 5, &d) == SIM_PARSE_SYNTAX); /* "12.5," */
    CHECK(sim_parse_i64_n(line, 4, &i) == SIM_PARSE_SYNTAX);    /* "12.5" */
    CHECK(sim_parse_u64_n(line + 9, 2, &u) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_i64_n(line + 12, 1, &i) == SIM_PARSE_SYNTAX);
    const char nul[] = {'1', '\0', '2'};
    CHECK(sim_parse_double_n(nul, 3, &d) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_i64_n(nul, 3, &i) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_i64_n("99999999999999999999", 20, &i) == SIM_PARSE_RANGE);
    CHECK(sim_parse_u64_n("18446744073709551616", 20, &u) == SIM_PARSE_RANGE);
    CHECK(sim_parse_i64_n("99999999999999999999x", 21, &i) == SIM_PARSE_SYNTAX); /* junk wins over range */
    CHECK(d == 7 && i == 7 && u == 7);
    /* integers have no length limit: leading zeros are still one number */
    char zeros[300];
    memset(zeros, '0', sizeof zeros);
    zeros[sizeof zeros - 1] = '5';
    CHECK(sim_parse_i64_n(zeros, sizeof zeros, &i) == SIM_PARSE_OK && i == 5);
    /* a double field has one: SIM_PARSE_FIELD_MAX - 1 characters */
    char longd[SIM_PARSE_FIELD_MAX + 1];
    memset(longd, '0', sizeof longd);
    longd[0] = '1';
    longd[1] = '.';
    CHECK(sim_parse_double_n(longd, SIM_PARSE_FIELD_MAX - 1, &d) == SIM_PARSE_OK && d == 1.0);
    CHECK(sim_parse_double_n(longd, SIM_PARSE_FIELD_MAX, &d) == SIM_PARSE_RANGE);
}

static void case_ratio(void)
{
    int64_t x = 7, y = 7;
    CHECK(sim_parse_ratio("1:3", &x, &y) == SIM_PARSE_OK && x == 1 && y == 3);
    CHECK(sim_parse_ratio("12:+4", &x, &y) == SIM_PARSE_OK && x == 12 && y == 4);
    CHECK(sim_parse_ratio("-2:0", &x, &y) == SIM_PARSE_OK && x == -2 && y == 0); /* ranges are the caller's */
    x = y = 7;
    CHECK(sim_parse_ratio("", &x, &y) == SIM_PARSE_EMPTY);
    CHECK(sim_parse_ratio("13", &x, &y) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_ratio("1:", &x, &y) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_ratio(":3", &x, &y) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_ratio("1:3:5", &x, &y) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_ratio("1:3x", &x, &y) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_ratio("1: 3", &x, &y) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_ratio(" 1:3", &x, &y) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_ratio("1.5:3", &x, &y) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_ratio("a:b", &x, &y) == SIM_PARSE_SYNTAX);
    CHECK(sim_parse_ratio("99999999999999999999:1", &x, &y) == SIM_PARSE_RANGE);
    CHECK(x == 7 && y == 7);
}

static void case_hash_mix64(void)
{
    /* splitmix64's published first outputs for seed 0 (state += gamma, then mix) */
    CHECK(sim_hash_mix64(0 + SIM_HASH_GAMMA) == UINT64_C(0xe220a8397b1dcdaf));
    CHECK(sim_hash_mix64(2 * SIM_HASH_GAMMA) == UINT64_C(0x6e789e6aa1b965f4));
    CHECK(sim_hash_mix64(0) == 0); /* a bijection fixing 0 */
    /* one low input bit flips about half the output bits */
    int flips = __builtin_popcountll(sim_hash_mix64(1) ^ sim_hash_mix64(2));
    CHECK(flips > 16 && flips < 48);
}

static const test_case cases[] = {
    {"valid", case_valid},         {"trailing_junk", case_trailing_junk},
    {"overflow", case_overflow},   {"empty", case_empty},
    {"sign", case_sign},           {"hex_inf_nan", case_hex_inf_nan},
    {"field_n", case_field_n},     {"ratio", case_ratio},
    {"hash_mix64", case_hash_mix64},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_parse", cases);
}
