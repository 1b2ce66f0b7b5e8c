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
    {"hash_mix64", case_hash_mix64},
};

int main(int argc, char **argv)
{
    test_args(argc, argv);
    return test_run("test_parse", cases);
}
