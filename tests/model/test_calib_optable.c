/* test_calib_optable — the per-op table reader: header names, fields by
 * column name, strict numbers with file:line:column errors, plain and gzip
 * files, quoted fields, and the walk of a <gpu>/<family>/<backend>-<version>
 * tree (tests/data/optable, a few real rows of the shared H100 tables). */
#include "calib_optable.h"
#include "test_util.h"

#include <unistd.h>
#include <zlib.h>

static char tmpdir[256];

static void write_file(const char *name, const char *text, int gz)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    if (gz) {
        gzFile g = gzopen(path, "wb");
        REQUIRE(g != NULL);
        gzputs(g, text);
        gzclose(g);
    } else {
        FILE *f = fopen(path, "w");
        REQUIRE(f != NULL);
        fputs(text, f);
        fclose(f);
    }
}

static char *tmp_path(const char *name)
{
    static char path[512];
    snprintf(path, sizeof path, "%s/%s", tmpdir, name);
    return path;
}

static void test_fixture_gemm(void)
{
    const char *src = test_src_dir();
    char path[1024];
    snprintf(path, sizeof path, "%s/tests/data/optable/h100_sxm/gemm/vllm-0.24.0/gemm_perf.csv.gz", src);
    sim_err err = {{0}};
    calib_optable *t = NULL;
    CHECK_MSG(calib_optable_open(path, &t, &err) == 0, "%s", err.msg);
    if (!t) return;
    CHECK(calib_optable_ncols(t) == 10);
    CHECK(strcmp(calib_optable_colname(t, 0), "framework") == 0);
    CHECK(strcmp(calib_optable_colname(t, 9), "latency") == 0);
    CHECK(calib_optable_colname(t, 10) == NULL);
    CHECK(calib_optable_col(t, "k") == 8);
    CHECK(calib_optable_col(t, "nope") == -1);
    CHECK(calib_optable_get(t, "m") == NULL); /* no row yet */
    int rows = 0, rc;
    double first_lat = 0;
    long first_m = 0;
    while ((rc = calib_optable_next(t, &err)) == 1) {
        long m, n, k;
        double lat;
        CHECK(calib_optable_long(t, "m", &m, &err) == 0);
        CHECK(calib_optable_long(t, "n", &n, &err) == 0);
        CHECK(calib_optable_long(t, "k", &k, &err) == 0);
        CHECK(calib_optable_double(t, "latency", &lat, &err) == 0);
        CHECK(lat > 0 && lat < 1.0);
        CHECK(strcmp(calib_optable_get(t, "gemm_dtype"), "bfloat16") == 0);
        if (rows == 0) {
            first_lat = lat;
            first_m = m;
            CHECK(calib_optable_line(t) == 2);
        }
        rows++;
    }
    CHECK(rc == 0);
    CHECK(rows == 12);
    CHECK(first_m == 128);
    CHECK_NEAR(first_lat, 0.017215111189418368, 1e-15);
    /* a column the header lacks is an error naming it */
    const char *s;
    CHECK(calib_optable_str(t, "batch_size", &s, &err) < 0);
    CHECK_CONTAINS(err.msg, "no column 'batch_size'");
    calib_optable_close(t);
}

static void test_strict_numbers(void)
{
    write_file("bad.csv",
               "op,m,latency\n"
               "gemm,16,0.5\n"
               "gemm,16x,0.5\n"
               "gemm,,0.5\n"
               "gemm,3.5,nan\n"
               "gemm, 4,1e400\n"
               "gemm,99999999999999999999999,0.1\n",
               0);
    sim_err err = {{0}};
    calib_optable *t = NULL;
    CHECK(calib_optable_open(tmp_path("bad.csv"), &t, &err) == 0);
    if (!t) return;
    long m;
    double lat;
    CHECK(calib_optable_next(t, &err) == 1);
    CHECK(calib_optable_long(t, "m", &m, &err) == 0 && m == 16);
    CHECK(calib_optable_double(t, "latency", &lat, &err) == 0 && lat == 0.5);
    CHECK(calib_optable_double(t, "m", &lat, &err) == 0 && lat == 16.0);

    CHECK(calib_optable_next(t, &err) == 1);
    CHECK(calib_optable_long(t, "m", &m, &err) < 0);
    CHECK_CONTAINS(err.msg, "bad.csv:3:6: column 'm': expected an integer, got '16x'");
    CHECK(calib_optable_double(t, "m", &lat, &err) < 0);
    CHECK_CONTAINS(err.msg, "bad.csv:3:6: column 'm': expected a finite number");

    CHECK(calib_optable_next(t, &err) == 1);
    CHECK(calib_optable_long(t, "m", &m, &err) < 0);
    CHECK_CONTAINS(err.msg, "bad.csv:4:6: column 'm'");
    CHECK(calib_optable_double(t, "m", &lat, &err) < 0);

    CHECK(calib_optable_next(t, &err) == 1);
    CHECK(calib_optable_long(t, "m", &m, &err) < 0); /* 3.5 is not an integer */
    CHECK(calib_optable_double(t, "m", &lat, &err) == 0 && lat == 3.5);
    CHECK(calib_optable_double(t, "latency", &lat, &err) < 0);
    CHECK_CONTAINS(err.msg, ":5:10: column 'latency'");

    CHECK(calib_optable_next(t, &err) == 1);
    CHECK(calib_optable_long(t, "m", &m, &err) < 0);          /* leading blank */
    CHECK(calib_optable_double(t, "latency", &lat, &err) < 0); /* overflow */

    CHECK(calib_optable_next(t, &err) == 1);
    CHECK(calib_optable_long(t, "m", &m, &err) < 0); /* out of range */
    CHECK(calib_optable_next(t, &err) == 0);
    calib_optable_close(t);
}

static void test_gzip_quotes_and_shape_errors(void)
{
    write_file("q.csv.gz",
               "\xEF\xBB\xBFname,model_name,latency\r\n"
               "a,\"Qwen/Qwen3, \"\"big\"\"\",0.25\r\n"
               "\r\n"
               "b,plain,1\n",
               1);
    sim_err err = {{0}};
    calib_optable *t = NULL;
    CHECK_MSG(calib_optable_open(tmp_path("q.csv.gz"), &t, &err) == 0, "%s", err.msg);
    if (t) {
        CHECK(calib_optable_col(t, "name") == 0); /* byte-order mark dropped */
        CHECK(calib_optable_next(t, &err) == 1);
        CHECK(strcmp(calib_optable_get(t, "model_name"), "Qwen/Qwen3, \"big\"") == 0);
        double lat;
        CHECK(calib_optable_double(t, "latency", &lat, &err) == 0 && lat == 0.25);
        CHECK(calib_optable_next(t, &err) == 1); /* blank line skipped */
        CHECK(strcmp(calib_optable_get(t, "name"), "b") == 0);
        CHECK(calib_optable_line(t) == 4);
        CHECK(calib_optable_next(t, &err) == 0);
        calib_optable_close(t);
    }

    write_file("short.csv", "a,b,c\n1,2,3\n1,2\n", 0);
    t = NULL;
    CHECK(calib_optable_open(tmp_path("short.csv"), &t, &err) == 0);
    if (t) {
        CHECK(calib_optable_next(t, &err) == 1);
        CHECK(calib_optable_next(t, &err) < 0);
        CHECK_CONTAINS(err.msg, "short.csv:3:1: 2 fields, the header has 3 columns");
        calib_optable_close(t);
    }

    write_file("quote.csv", "a,b\n1,\"open\n", 0);
    t = NULL;
    CHECK(calib_optable_open(tmp_path("quote.csv"), &t, &err) == 0);
    if (t) {
        CHECK(calib_optable_next(t, &err) < 0);
        CHECK_CONTAINS(err.msg, "quote.csv:2:3: unterminated quoted field");
        calib_optable_close(t);
    }

    write_file("dup.csv", "a,b,a\n", 0);
    t = NULL;
    CHECK(calib_optable_open(tmp_path("dup.csv"), &t, &err) < 0 && t == NULL);
    CHECK_CONTAINS(err.msg, "dup.csv:1:5: column 'a' appears twice");
    write_file("emptycol.csv", "a,,b\n", 0);
    CHECK(calib_optable_open(tmp_path("emptycol.csv"), &t, &err) < 0);
    CHECK_CONTAINS(err.msg, "emptycol.csv:1:3: empty column name");
    write_file("empty.csv", "", 0);
    CHECK(calib_optable_open(tmp_path("empty.csv"), &t, &err) < 0);
    CHECK_CONTAINS(err.msg, "empty table");
    CHECK(calib_optable_open(tmp_path("missing.csv"), &t, &err) < 0);
    CHECK_CONTAINS(err.msg, "missing.csv: cannot open");

    /* a truncated gzip stream is a read error, not a silent short table */
    char big[8192];
    size_t o = (size_t)snprintf(big, sizeof big, "a,b\n");
    for (int i = 0; o < sizeof big - 32; i++) o += (size_t)snprintf(big + o, sizeof big - o, "%d,%d\n", i, i * 7919 % 104729);
    write_file("trunc.csv.gz", big, 1);
    FILE *f = fopen(tmp_path("trunc.csv.gz"), "rb");
    char raw[16384];
    size_t n = f ? fread(raw, 1, sizeof raw, f) : 0;
    if (f) fclose(f);
    f = fopen(tmp_path("trunc.csv.gz"), "wb");
    if (f) {
        fwrite(raw, 1, n / 2, f);
        fclose(f);
    }
    t = NULL;
    CHECK(calib_optable_open(tmp_path("trunc.csv.gz"), &t, &err) == 0);
    if (t) {
        int rc;
        while ((rc = calib_optable_next(t, &err)) == 1) {}
        CHECK_MSG(rc < 0, "a truncated gzip file read to its end without an error");
        calib_optable_close(t);
    }
}

typedef struct {
    int n;
    char seen[8][160];
} walk_log;

static int log_visit(const calib_optable_entry *e, void *ctx, sim_err *err)
{
    walk_log *w = ctx;
    if (w->n < 8)
        snprintf(w->seen[w->n], sizeof w->seen[w->n], "%s|%s|%s|%s|%s", e->gpu, e->family, e->backend,
                 e->version, e->table);
    w->n++;
    /* each entry opens */
    calib_optable *t = NULL;
    int rc = calib_optable_open(e->path, &t, err);
    calib_optable_close(t);
    return rc;
}

static int stop_visit(const calib_optable_entry *e, void *ctx, sim_err *err)
{
    (void)e;
    (void)ctx;
    (void)err;
    return 7;
}

static void test_walk(void)
{
    const char *src = test_src_dir();
    char root[1024];
    snprintf(root, sizeof root, "%s/tests/data/optable", src);
    walk_log w = {0};
    size_t n = 0;
    sim_err err = {{0}};
    CHECK_MSG(calib_optable_walk(root, NULL, log_visit, &w, &n, &err) == 0, "%s", err.msg);
    CHECK(n == 4 && w.n == 4);
    CHECK(strcmp(w.seen[0], "h100_sxm|attention|vllm|0.24.0|generation_attention_perf") == 0);
    CHECK(strcmp(w.seen[1], "h100_sxm|comm|nccl|2.29.2|nccl_perf") == 0);
    CHECK(strcmp(w.seen[2], "h100_sxm|gemm|trtllm|1.3.0rc20|gemm_perf") == 0);
    CHECK(strcmp(w.seen[3], "h100_sxm|gemm|vllm|0.24.0|gemm_perf") == 0);
    memset(&w, 0, sizeof w);
    CHECK(calib_optable_walk(root, "h100_sxm", log_visit, &w, &n, &err) == 0 && n == 4);
    CHECK(calib_optable_walk(root, "b200_sxm", log_visit, &w, &n, &err) < 0);
    CHECK_CONTAINS(err.msg, "no folder for GPU 'b200_sxm'");
    CHECK(calib_optable_walk(root, NULL, stop_visit, NULL, &n, &err) == 7 && n == 1);
    CHECK(calib_optable_walk("/nonexistent-optable-root", NULL, log_visit, &w, &n, &err) < 0);
    CHECK_CONTAINS(err.msg, "cannot read directory");
}

static const test_case cases[] = {
    {"fixture_gemm", test_fixture_gemm},
    {"strict_numbers", test_strict_numbers},
    {"gzip_quotes_and_shape_errors", test_gzip_quotes_and_shape_errors},
    {"walk", test_walk},
};

int main(int argc, char **argv)
{
    argc = test_args(argc, argv);
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_calib_optable.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 1;
    }
    int rc = test_run("test_calib_optable", cases);
    const char *names[] = {"bad.csv", "q.csv.gz", "short.csv", "quote.csv", "dup.csv",
                           "emptycol.csv", "empty.csv", "trunc.csv.gz"};
    for (size_t i = 0; i < sizeof names / sizeof *names; i++) unlink(tmp_path(names[i]));
    rmdir(tmpdir);
    return rc;
}
