/* calib_dump_read — calib_db_import: a .sql perf-db dump read back by a
 * parser of its own small grammar, so no statement of the file ever runs as
 * SQL (see calib_db.h for what is accepted).
 *
 *   dump   := header line, "-- schema_version N" line, stmt*  (ends with COMMIT)
 *             N is CALIB_SCHEMA_VERSION or 1: a version-1 dump lists the
 *             points' columns without skew_milli, and its rows load as
 *             skew 0 (the balanced routing every version-1 row measured)
 *   stmt   := BEGIN [TRANSACTION] ; | COMMIT [TRANSACTION] ; | END [TRANSACTION] ;
 *           | CREATE TABLE IF NOT EXISTS (meta|gpus|points) ( … ) ;   checked, skipped
 *           | CREATE INDEX IF NOT EXISTS name ON table ( … ) ;        checked, skipped
 *           | INSERT OR IGNORE INTO meta(key, value) VALUES('k', 'v') ;
 *           | INSERT OR IGNORE INTO gpus(cols) VALUES(literal, …) ;
 *           | INSERT OR IGNORE INTO points(gpu_id, cols) VALUES(gpuref, literal, …) ;
 *   gpuref := ( SELECT id FROM gpus WHERE col = literal AND … )   each gpus column once
 *   literal:= [+-]number | 'text' ('' escapes a quote) | NULL
 * Rows are checked by calib_db_check.c and bound into prepared inserts, all
 * in one transaction that a failure rolls back. Errors are SIM_EINVAL with
 * file:line:column and the statement number. */
#include "calib_db_impl.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#define RD_TEXT_MAX 260 /* decoded text kept per value: more than any field holds */

typedef enum { TK_EOF, TK_IDENT, TK_NUMBER, TK_STRING, TK_PUNCT } rd_kind;

typedef struct {
    rd_kind k;
    const char *p;
    size_t len;
    int64_t line, col;
} rd_tok;

typedef struct {
    const char *name, *cur, *end, *bol;
    int64_t line, stmt;
    rd_tok t;
    sim_err *err;
    calib_db *db;
    sqlite3_stmt *ins_gpu, *ins_point, *find_gpu;
    calib_gpu_id last_id;
    int64_t last_gid, rows;
    int have_last, committed;
    int version; /* the dump's schema version (rd_header) */
} rd;

typedef struct {
    calib_value v;
    int64_t line, col; /* where the literal starts */
    char buf[RD_TEXT_MAX];
} rd_lit;

static int rd_fail_at(rd *r, int64_t line, int64_t col, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int rd_fail_at(rd *r, int64_t line, int64_t col, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (r->stmt > 0)
        return sim_err_set(r->err, SIM_EINVAL, "%s:%lld:%lld: statement %lld: %s", r->name, (long long)line,
                           (long long)col, (long long)r->stmt, msg);
    return sim_err_set(r->err, SIM_EINVAL, "%s:%lld:%lld: %s", r->name, (long long)line, (long long)col, msg);
}

#define rd_fail(r, fmt, ...) rd_fail_at((r), (r)->t.line, (r)->t.col, fmt, __VA_ARGS__)

/* The current token as the user wrote it, shortened, for messages. */
static const char *rd_show(const rd_tok *t, char *buf, size_t len)
{
    if (t->k == TK_EOF) return "the end of the file";
    size_t n = t->len < 40 ? t->len : 40;
    snprintf(buf, len, "'%.*s%s'", (int)n, t->p, t->len > n ? "…" : "");
    return buf;
}

/* Scans the next token into r->t. */
static int rd_next(rd *r)
{
    for (;;) {
        while (r->cur < r->end && isspace((unsigned char)*r->cur)) {
            if (*r->cur == '\n') r->line++, r->bol = r->cur + 1;
            r->cur++;
        }
        if (r->end - r->cur >= 2 && r->cur[0] == '-' && r->cur[1] == '-') {
            while (r->cur < r->end && *r->cur != '\n') r->cur++;
            continue;
        }
        break;
    }
    rd_tok *t = &r->t;
    t->p = r->cur, t->len = 0, t->line = r->line, t->col = (int64_t)(r->cur - r->bol) + 1;
    if (r->cur >= r->end) {
        t->k = TK_EOF;
        return 0;
    }
    const char *s = r->cur;
    unsigned char c = (unsigned char)*s;
    if (isalpha(c) || c == '_') {
        while (s < r->end && (isalnum((unsigned char)*s) || *s == '_')) s++;
        t->k = TK_IDENT;
    } else if (isdigit(c) || ((c == '-' || c == '+' || c == '.') && s + 1 < r->end &&
                              (isdigit((unsigned char)s[1]) || (s[1] == '.' && c != '.')))) {
        if (c == '-' || c == '+') s++;
        int digits = 0;
        while (s < r->end && isdigit((unsigned char)*s)) s++, digits++;
        if (s < r->end && *s == '.')
            for (s++; s < r->end && isdigit((unsigned char)*s); s++) digits++;
        if (digits && s < r->end && (*s == 'e' || *s == 'E')) {
            const char *e = s + 1;
            if (e < r->end && (*e == '+' || *e == '-')) e++;
            if (e < r->end && isdigit((unsigned char)*e)) {
                while (e < r->end && isdigit((unsigned char)*e)) e++;
                s = e;
            } else {
                digits = 0;
            }
        }
        if (!digits || (s < r->end && (isalnum((unsigned char)*s) || *s == '_' || *s == '.')))
            return rd_fail(r, "%s", "malformed number");
        t->k = TK_NUMBER;
    } else if (c == '\'') {
        for (s++;; s++) {
            if (s >= r->end) return rd_fail(r, "%s", "unterminated string literal");
            if (*s == '\n') r->line++, r->bol = s + 1;
            if (*s == '\'') {
                if (s + 1 < r->end && s[1] == '\'') s++;
                else break;
            }
        }
        s++;
        t->k = TK_STRING;
    } else if (c == '(' || c == ')' || c == ',' || c == ';' || c == '=') {
        s++;
        t->k = TK_PUNCT;
    } else if (isprint(c)) {
        return rd_fail(r, "unexpected character '%c' (a perf-db dump holds only literal inserts)", c);
    } else {
        return rd_fail(r, "unexpected byte 0x%02x (a perf-db dump is plain text)", c);
    }
    t->len = (size_t)(s - t->p);
    r->cur = s;
    return 0;
}

static int rd_is_kw(const rd *r, const char *kw)
{
    return r->t.k == TK_IDENT && r->t.len == strlen(kw) && strncasecmp(r->t.p, kw, r->t.len) == 0;
}

static int rd_is_punct(const rd *r, char c) { return r->t.k == TK_PUNCT && r->t.p[0] == c; }

/* Consumes the keyword sequence `kws` (space-separated) or fails. */
static int rd_expect_kws(rd *r, const char *kws, const char *context)
{
    char kw[32], shown[64];
    for (const char *p = kws; *p;) {
        size_t n = strcspn(p, " ");
        snprintf(kw, sizeof kw, "%.*s", (int)n, p);
        if (!rd_is_kw(r, kw))
            return rd_fail(r, "expected %s in %s, found %s", kw, context, rd_show(&r->t, shown, sizeof shown));
        int rc = rd_next(r);
        if (rc) return rc;
        p += n;
        while (*p == ' ') p++;
    }
    return 0;
}

static int rd_expect_punct(rd *r, char c, const char *context)
{
    char shown[64];
    if (!rd_is_punct(r, c))
        return rd_fail(r, "expected '%c' in %s, found %s", c, context, rd_show(&r->t, shown, sizeof shown));
    return rd_next(r);
}

static int rd_ident(rd *r, char *out, size_t len, const char *what)
{
    char shown[64];
    if (r->t.k != TK_IDENT || r->t.len >= len)
        return rd_fail(r, "expected %s, found %s", what, rd_show(&r->t, shown, sizeof shown));
    memcpy(out, r->t.p, r->t.len);
    out[r->t.len] = '\0';
    return rd_next(r);
}

/* One literal for column `col`. */
static int rd_literal(rd *r, const char *col, rd_lit *out)
{
    char shown[64], num[80];
    calib_value *v = &out->v;
    memset(v, 0, sizeof *v);
    out->line = r->t.line, out->col = r->t.col;
    if (r->t.k == TK_STRING) {
        size_t n = 0;
        for (size_t i = 1; i + 1 < r->t.len; i++) {
            if (r->t.p[i] == '\'') i++; /* '' is one quote */
            if (n < sizeof out->buf) out->buf[n] = r->t.p[i];
            n++;
        }
        v->t = CALIB_V_TEXT, v->s = out->buf, v->len = n; /* a len over the buffer is refused as too long */
    } else if (r->t.k == TK_NUMBER) {
        if (r->t.len >= sizeof num) return rd_fail(r, "number for %s is %zu characters long", col, r->t.len);
        memcpy(num, r->t.p, r->t.len);
        num[r->t.len] = '\0';
        char *end;
        errno = 0;
        if (strpbrk(num, ".eE")) {
            v->t = CALIB_V_REAL, v->r = strtod(num, &end); /* overflow gives ±inf, refused by the checks */
        } else {
            v->t = CALIB_V_INT, v->i = strtoll(num, &end, 10);
            if (errno == ERANGE) return rd_fail(r, "integer %s for %s is out of range", num, col);
        }
    } else if (rd_is_kw(r, "NULL")) {
        v->t = CALIB_V_NULL;
    } else {
        return rd_fail(r, "expected a literal value (number, 'text' or NULL) for %s, found %s: a perf-db dump holds "
                       "literal values only",
                       col, rd_show(&r->t, shown, sizeof shown));
    }
    return rd_next(r);
}

/* Skips a parenthesised body (already at its '('). */
static int rd_skip_parens(rd *r, const char *context)
{
    int64_t depth = 0;
    do {
        if (r->t.k == TK_EOF) return rd_fail(r, "unbalanced parentheses in %s", context);
        if (rd_is_punct(r, ';')) return rd_fail(r, "unbalanced parentheses in %s", context);
        if (rd_is_punct(r, '(')) depth++;
        else if (rd_is_punct(r, ')')) depth--;
        int rc = rd_next(r);
        if (rc) return rc;
    } while (depth > 0);
    return 0;
}

static int rd_create(rd *r)
{
    char name[64], shown[64];
    int rc, table = rd_is_kw(r, "TABLE");
    if (!table && !rd_is_kw(r, "INDEX"))
        return rd_fail(r, "expected TABLE or INDEX after CREATE, found %s", rd_show(&r->t, shown, sizeof shown));
    if ((rc = rd_next(r)) || (rc = rd_expect_kws(r, "IF NOT EXISTS", "CREATE"))) return rc;
    int64_t line = r->t.line, col = r->t.col;
    if ((rc = rd_ident(r, name, sizeof name, table ? "a table name" : "an index name"))) return rc;
    if (table && strcmp(name, "meta") && strcmp(name, "gpus") && strcmp(name, "points"))
        return rd_fail_at(r, line, col, "CREATE TABLE %s: a perf-db dump has only tables meta, gpus and points", name);
    if (!table) {
        if ((rc = rd_expect_kws(r, "ON", "CREATE INDEX"))) return rc;
        line = r->t.line, col = r->t.col;
        if ((rc = rd_ident(r, name, sizeof name, "a table name"))) return rc;
        if (strcmp(name, "gpus") && strcmp(name, "points"))
            return rd_fail_at(r, line, col, "CREATE INDEX on %s: a perf-db dump indexes only gpus and points", name);
    }
    if (!rd_is_punct(r, '(')) return rd_fail(r, "expected '(' in CREATE, found %s", rd_show(&r->t, shown, sizeof shown));
    return rd_skip_parens(r, "CREATE");
}

/* "(a, b, c)" must be exactly the expected columns. */
static int rd_columns(rd *r, const char *table, int32_t n, const char *(*name_of)(int32_t))
{
    char col[64];
    int rc = rd_expect_punct(r, '(', "the column list");
    for (int32_t i = 0; !rc && i < n; i++) {
        if (i && (rc = rd_expect_punct(r, ',', "the column list"))) break;
        int64_t line = r->t.line, c = r->t.col;
        if ((rc = rd_ident(r, col, sizeof col, "a column name"))) break;
        if (strcmp(col, name_of(i)) != 0)
            return rd_fail_at(r, line, c, "column %d of %s is '%s', expected '%s' (the columns a perf-db dump lists)",
                              (int)i + 1, table, col, name_of(i));
    }
    return rc ? rc : rd_expect_punct(r, ')', "the column list (too many columns?)");
}

static const char *rd_meta_col(int32_t i) { return i == 0 ? "key" : "value"; }
static const char *rd_point_col(int32_t i) { return i == 0 ? "gpu_id" : calib_point_col_name(i - 1); }
/* A version-1 dump's point columns: the same without skew_milli. */
static const char *rd_v1_col(int32_t i) { return calib_point_col_name(i < CALIB_POINT_COL_SKEW ? i : i + 1); }
static const char *rd_point_col_v1(int32_t i) { return i == 0 ? "gpu_id" : rd_v1_col(i - 1); }

static int rd_meta(rd *r)
{
    rd_lit v[2];
    int64_t line = 0, col = 0;
    int rc = rd_columns(r, "meta", 2, rd_meta_col);
    if (!rc) rc = rd_expect_kws(r, "VALUES", "INSERT");
    if (!rc) rc = rd_expect_punct(r, '(', "VALUES");
    if (!rc) rc = rd_literal(r, "key", &v[0]);
    if (!rc) rc = rd_expect_punct(r, ',', "VALUES");
    if (!rc) line = r->t.line, col = r->t.col, rc = rd_literal(r, "value", &v[1]);
    if (!rc) rc = rd_expect_punct(r, ')', "VALUES");
    if (rc) return rc;
    if (v[0].v.t != CALIB_V_TEXT || v[1].v.t != CALIB_V_TEXT || v[1].v.len >= sizeof v[1].buf)
        return rd_fail_at(r, line, col, "%s", "meta rows are ('key', 'value') text pairs");
    if (v[0].v.len == 14 && memcmp(v[0].buf, "schema_version", 14) == 0) {
        char want[16];
        snprintf(want, sizeof want, "%d", r->version);
        if (v[1].v.len != strlen(want) || memcmp(v[1].buf, want, v[1].v.len) != 0)
            return rd_fail_at(r, line, col, "meta's schema_version is %.*s, the header's %d", (int)v[1].v.len,
                              v[1].buf, r->version);
    }
    return 0; /* meta is ours to write: checked, not copied */
}

static int rd_step(rd *r, sqlite3_stmt *st, int64_t line, int64_t col)
{
    int s = sqlite3_step(st);
    sqlite3_reset(st);
    if (s != SQLITE_DONE) return rd_fail_at(r, line, col, "insert failed: %s", sqlite3_errmsg(r->db->h));
    r->rows += sqlite3_changes(r->db->h);
    return 0;
}

/* n literals (after a comma when `lead_comma`) up to the closing ')'. */
static int rd_value_list(rd *r, int32_t n, const char *(*name_of)(int32_t), int lead_comma, rd_lit *v,
                         calib_value *vals)
{
    int rc = 0;
    for (int32_t i = 0; !rc && i < n; i++) {
        if ((i || lead_comma) && (rc = rd_expect_punct(r, ',', "VALUES"))) break;
        rc = rd_literal(r, name_of(i), &v[i]);
        vals[i] = v[i].v;
    }
    return rc ? rc : rd_expect_punct(r, ')', "VALUES (too many values?)");
}

static int rd_gpus(rd *r)
{
    rd_lit v[CALIB_GPU_NCOLS];
    calib_value vals[CALIB_GPU_NCOLS];
    calib_gpu_id id;
    char why[256];
    int rc = rd_columns(r, "gpus", CALIB_GPU_NCOLS, calib_gpu_col_name);
    if (!rc) rc = rd_expect_kws(r, "VALUES", "INSERT");
    int64_t line = r->t.line, col = r->t.col;
    if (!rc) rc = rd_expect_punct(r, '(', "VALUES");
    if (!rc) rc = rd_value_list(r, CALIB_GPU_NCOLS, calib_gpu_col_name, 0, v, vals);
    if (rc) return rc;
    int32_t bad;
    if (calib_gpu_from_values(vals, &id, &bad, why, sizeof why))
        return rd_fail_at(r, bad >= 0 ? v[bad].line : line, bad >= 0 ? v[bad].col : col, "gpus row: %s", why);
    calib_db_bind_gpu(r->ins_gpu, &id);
    return rd_step(r, r->ins_gpu, line, col);
}

/* "(SELECT id FROM gpus WHERE name = '…' AND …)": the GPU's row id. */
static int rd_gpu_ref(rd *r, int64_t *gid)
{
    rd_lit v[CALIB_GPU_NCOLS];
    calib_value vals[CALIB_GPU_NCOLS];
    int seen[CALIB_GPU_NCOLS] = {0};
    calib_gpu_id id;
    char col[64], why[256];
    int64_t line = r->t.line, c = r->t.col;
    int rc = rd_expect_punct(r, '(', "the point's GPU (SELECT id FROM gpus WHERE …)");
    if (!rc) rc = rd_expect_kws(r, "SELECT id FROM gpus WHERE", "the point's GPU");
    for (int32_t n = 0; !rc && n < CALIB_GPU_NCOLS; n++) {
        if (n && (rc = rd_expect_kws(r, "AND", "the point's GPU"))) break;
        int64_t cl = r->t.line, cc = r->t.col;
        if ((rc = rd_ident(r, col, sizeof col, "a gpus column"))) break;
        int32_t f = -1;
        for (int32_t i = 0; i < CALIB_GPU_NCOLS; i++)
            if (strcmp(col, calib_gpu_col_name(i)) == 0) f = i;
        if (f < 0 || seen[f])
            return rd_fail_at(r, cl, cc, "'%s' in the point's GPU: expected each gpus column once", col);
        seen[f] = 1;
        if ((rc = rd_expect_punct(r, '=', "the point's GPU"))) break;
        rc = rd_literal(r, col, &v[f]);
        vals[f] = v[f].v;
    }
    if (!rc) rc = rd_expect_punct(r, ')', "the point's GPU");
    if (rc) return rc;
    int32_t bad;
    if (calib_gpu_from_values(vals, &id, &bad, why, sizeof why))
        return rd_fail_at(r, bad >= 0 ? v[bad].line : line, bad >= 0 ? v[bad].col : c, "the point's GPU: %s", why);
    if (r->have_last && memcmp(&id, &r->last_id, sizeof id) == 0) {
        *gid = r->last_gid;
        return 0;
    }
    calib_db_bind_gpu(r->find_gpu, &id);
    int s = sqlite3_step(r->find_gpu);
    if (s == SQLITE_ROW) *gid = sqlite3_column_int64(r->find_gpu, 0);
    sqlite3_reset(r->find_gpu);
    if (s != SQLITE_ROW)
        return rd_fail_at(r, line, c, "the point's GPU '%s' has no gpus row (it must be inserted before its points)",
                          id.name);
    r->last_id = id, r->last_gid = *gid, r->have_last = 1;
    return 0;
}

static int rd_points(rd *r)
{
    rd_lit v[CALIB_POINT_NCOLS];
    calib_value vals[CALIB_POINT_NCOLS];
    calib_point p;
    char why[256];
    int64_t gid = 0;
    const int v1 = r->version == 1;
    const int32_t ncols = v1 ? CALIB_POINT_NCOLS - 1 : CALIB_POINT_NCOLS;
    int rc = rd_columns(r, "points", ncols + 1, v1 ? rd_point_col_v1 : rd_point_col);
    if (!rc) rc = rd_expect_kws(r, "VALUES", "INSERT");
    int64_t line = r->t.line, col = r->t.col;
    if (!rc) rc = rd_expect_punct(r, '(', "VALUES");
    if (!rc) rc = rd_gpu_ref(r, &gid);
    if (!rc) rc = rd_value_list(r, ncols, v1 ? rd_v1_col : calib_point_col_name, 1, v, vals);
    if (rc) return rc;
    if (v1) { /* skew_milli 0 moved in at its column; text values point into their own literal's buffer */
        for (int32_t i = CALIB_POINT_NCOLS - 1; i > CALIB_POINT_COL_SKEW; i--) {
            v[i] = v[i - 1];
            if (v[i].v.t == CALIB_V_TEXT) v[i].v.s = v[i].buf;
            vals[i] = v[i].v;
        }
        memset(&v[CALIB_POINT_COL_SKEW], 0, sizeof v[0]);
        v[CALIB_POINT_COL_SKEW].v.t = CALIB_V_INT;
        v[CALIB_POINT_COL_SKEW].line = line, v[CALIB_POINT_COL_SKEW].col = col;
        vals[CALIB_POINT_COL_SKEW] = v[CALIB_POINT_COL_SKEW].v;
    }
    int32_t bad;
    if (calib_point_from_values(vals, &p, &bad, why, sizeof why))
        return rd_fail_at(r, bad >= 0 ? v[bad].line : line, bad >= 0 ? v[bad].col : col, "points row: %s", why);
    calib_db_bind_point(r->ins_point, gid, &p);
    return rd_step(r, r->ins_point, line, col);
}

static int rd_insert(rd *r)
{
    char table[64];
    int64_t line, col;
    int rc = rd_expect_kws(r, "OR IGNORE INTO", "INSERT");
    line = r->t.line, col = r->t.col;
    if (!rc) rc = rd_ident(r, table, sizeof table, "a table name");
    if (rc) return rc;
    if (strcmp(table, "meta") == 0) return rd_meta(r);
    if (strcmp(table, "gpus") == 0) return rd_gpus(r);
    if (strcmp(table, "points") == 0) return rd_points(r);
    return rd_fail_at(r, line, col, "INSERT INTO %s: a perf-db dump inserts only into meta, gpus and points", table);
}

static int rd_statement(rd *r)
{
    char shown[64];
    int rc;
    int commit = rd_is_kw(r, "COMMIT") || rd_is_kw(r, "END");
    r->committed = 0;
    if (commit || rd_is_kw(r, "BEGIN")) {
        if ((rc = rd_next(r))) return rc;
        if (rd_is_kw(r, "TRANSACTION") && (rc = rd_next(r))) return rc;
        r->committed = commit;
    } else if (rd_is_kw(r, "CREATE")) {
        if ((rc = rd_next(r)) || (rc = rd_create(r))) return rc;
    } else if (rd_is_kw(r, "INSERT")) {
        if ((rc = rd_next(r)) || (rc = rd_insert(r))) return rc;
    } else {
        return rd_fail(r, "%s is not part of a perf-db dump (expected BEGIN, COMMIT, CREATE … IF NOT EXISTS or "
                       "INSERT OR IGNORE INTO meta/gpus/points)",
                       rd_show(&r->t, shown, sizeof shown));
    }
    if (!rd_is_punct(r, ';'))
        return rd_fail(r, "expected ';' at the end of the statement, found %s", rd_show(&r->t, shown, sizeof shown));
    return rd_next(r);
}

/* The two header lines; 0, or the error. */
static int rd_header(rd *r, const char *text, size_t len)
{
    size_t hl = strlen(CALIB_DUMP_HEADER);
    if (len < hl || memcmp(text, CALIB_DUMP_HEADER, hl) != 0)
        return sim_err_set(r->err, SIM_EINVAL, "%s:1:1: not a servesim perf-db dump (the first line is not '%.*s')",
                           r->name, (int)hl - 1, CALIB_DUMP_HEADER);
    static const char ver[] = "-- schema_version ";
    const char *p = text + hl, *end = text + len;
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    size_t vl = strlen(ver);
    if (!eol || (size_t)(eol - p) < vl || memcmp(p, ver, vl) != 0)
        return sim_err_set(r->err, SIM_EINVAL, "%s:2:1: expected '-- schema_version %d' on the second line", r->name,
                           CALIB_SCHEMA_VERSION);
    for (int vn = 1; vn <= CALIB_SCHEMA_VERSION; vn++) {
        char want[16];
        int wl = snprintf(want, sizeof want, "%d", vn);
        if ((size_t)(eol - p) - vl == (size_t)wl && memcmp(p + vl, want, (size_t)wl) == 0) {
            r->version = vn;
            return 0;
        }
    }
    return sim_err_set(r->err, SIM_EINVAL,
                       "%s:2:%zu: dump of schema version %.*s; this servesim reads versions 1 to %d", r->name, vl + 1, (int)((size_t)(eol - p) - vl < 32 ? (size_t)(eol - p) - vl : 32), p + vl,
                       CALIB_SCHEMA_VERSION);
}

int calib_db_import_text(calib_db *db, const char *text, size_t len, const char *name, int64_t *rows, sim_err *err)
{
    rd r;
    memset(&r, 0, sizeof r);
    r.name = name, r.err = err, r.db = db, r.cur = text, r.end = text + len, r.bol = text, r.line = 1;
    const char *nul = memchr(text, '\0', len);
    if (nul) {
        int64_t line = 1;
        const char *bol = text;
        for (const char *q = text; q < nul; q++)
            if (*q == '\n') line++, bol = q + 1;
        return sim_err_set(err, SIM_EINVAL, "%s:%lld:%lld: NUL byte: a perf-db dump is text", name, (long long)line,
                           (long long)(nul - bol) + 1);
    }
    int rc = rd_header(&r, text, len);
    if (rc) return rc;
    if (sqlite3_exec(db->h, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return sim_err_set(err, SIM_EIO, "perf-db import: %s", sqlite3_errmsg(db->h));
    if (sqlite3_prepare_v2(db->h, "INSERT OR IGNORE INTO gpus(" CALIB_GPU_COLS ") VALUES(?,?,?,?,?,?,?,?)", -1,
                           &r.ins_gpu, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db->h,
                           "INSERT OR IGNORE INTO points(gpu_id, " CALIB_POINT_COLS
                           ") VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                           -1, &r.ins_point, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(db->h,
                           "SELECT id FROM gpus WHERE name=? AND sms=? AND cc=? AND sm_clock_mhz=? AND "
                           "mem_clock_mhz=? AND driver=? AND cuda=? AND backend=?",
                           -1, &r.find_gpu, NULL) != SQLITE_OK) {
        rc = sim_err_set(err, SIM_EIO, "perf-db import: %s", sqlite3_errmsg(db->h));
        goto done;
    }
    if ((rc = rd_next(&r))) goto done;
    while (r.t.k != TK_EOF) {
        r.stmt++;
        if ((rc = rd_statement(&r))) goto done;
    }
    if (!r.committed) {
        r.stmt = 0;
        rc = rd_fail_at(&r, r.line, (int64_t)(r.cur - r.bol) + 1, "%s",
                        "the dump does not end with COMMIT (truncated?); nothing imported");
        goto done;
    }
    sqlite3_finalize(r.ins_gpu), sqlite3_finalize(r.ins_point), sqlite3_finalize(r.find_gpu);
    r.ins_gpu = r.ins_point = r.find_gpu = NULL;
    if (sqlite3_exec(db->h, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
        rc = sim_err_set(err, SIM_EIO, "perf-db import: commit: %s", sqlite3_errmsg(db->h));
        goto done;
    }
    calib_db_cache_clear(db);
    if (rows) *rows = r.rows;
    return 0;
done:
    sqlite3_finalize(r.ins_gpu), sqlite3_finalize(r.ins_point), sqlite3_finalize(r.find_gpu);
    sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
    calib_db_cache_clear(db);
    return rc;
}

int calib_db_import(calib_db *db, const char *sql_path, int64_t *rows, sim_err *err)
{
    struct stat sb;
    if (stat(sql_path, &sb) != 0)
        return sim_err_set(err, errno == ENOENT || errno == EACCES || errno == ENOTDIR ? SIM_EINVAL : SIM_EIO, "%s: %s",
                           sql_path, strerror(errno));
    if (!S_ISREG(sb.st_mode))
        return sim_err_set(err, SIM_EINVAL, "%s: %s, not a perf-db dump", sql_path,
                           S_ISDIR(sb.st_mode) ? "a directory" : "not a regular file");
    if ((long long)sb.st_size > CALIB_DUMP_MAX_BYTES)
        return sim_err_set(err, SIM_EINVAL, "%s: %lld bytes; a perf-db dump is at most %lld", sql_path,
                           (long long)sb.st_size, (long long)CALIB_DUMP_MAX_BYTES);
    FILE *f = fopen(sql_path, "rb");
    if (!f) return sim_err_set(err, SIM_EINVAL, "%s: %s", sql_path, strerror(errno));
    size_t cap = (size_t)sb.st_size + 1;
    char *text = malloc(cap);
    if (!text) {
        fclose(f);
        return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", sql_path);
    }
    size_t n = fread(text, 1, cap, f); /* one byte more than stat said, to notice growth */
    int bad = ferror(f);
    fclose(f);
    int rc;
    if (bad) rc = sim_err_set(err, SIM_EIO, "%s: read error", sql_path);
    else if (n == cap) rc = sim_err_set(err, SIM_EIO, "%s: the file grew while it was read", sql_path);
    else rc = calib_db_import_text(db, text, n, sql_path, rows, err);
    free(text);
    return rc;
}
