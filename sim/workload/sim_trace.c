/* sim_trace — see sim_trace.h.
 *
 * A file is streamed line by line with getline (lines of any length, a NUL
 * byte in a line is just another bad character); a buffer is split into
 * lines here. Only regular files are read (sim_file). Mooncake lines are parsed one by one with jansson;
 * CSV lines by hand (three fields, sim_parse on a bounded copy). Entries
 * and hash ids grow in two doubling arrays owned by the trace. */
#include "sim_trace.h"
#include "sim_file.h"
#include "sim_parse.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Longest numeric CSV field accepted; anything longer is not a number. */
#define TRACE_NUM_MAX 128
/* How much of an offending value an error message quotes. */
#define TRACE_QUOTE_MAX 40

typedef struct {
    sim_trace *t;
    int64_t cap_entries;
    int64_t cap_hashes;
    const char *name;
    sim_err *err;
} trace_builder;

/* Copies at most TRACE_QUOTE_MAX printable bytes of s[0..len) into out for an
 * error message; non-printable bytes become '?'. */
static const char *trace_quote(const char *s, size_t len, char *out, size_t out_size)
{
    size_t n = len < TRACE_QUOTE_MAX ? len : TRACE_QUOTE_MAX;
    if (n > out_size - 4) n = out_size - 4;
    size_t j = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        out[j++] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    if (n < len) {
        out[j++] = '.';
        out[j++] = '.';
        out[j++] = '.';
    }
    out[j] = '\0';
    return out;
}

static int trace_push_entry(trace_builder *b, const sim_trace_entry *e)
{
    sim_trace *t = b->t;
    if (t->n == b->cap_entries) {
        int64_t cap = b->cap_entries ? b->cap_entries * 2 : 1024;
        if ((uint64_t)cap > SIZE_MAX / sizeof *t->entries)
            return sim_err_set(b->err, SIM_ENOMEM, "%s: trace too large", b->name);
        sim_trace_entry *p = realloc(t->entries, (size_t)cap * sizeof *p);
        if (!p) return sim_err_set(b->err, SIM_ENOMEM, "%s: out of memory", b->name);
        t->entries = p;
        b->cap_entries = cap;
    }
    t->entries[t->n++] = *e;
    return 0;
}

static int trace_reserve_hashes(trace_builder *b, int64_t extra)
{
    sim_trace *t = b->t;
    if (t->n_hashes + extra <= b->cap_hashes) return 0;
    int64_t cap = b->cap_hashes ? b->cap_hashes : 4096;
    while (cap < t->n_hashes + extra) cap *= 2;
    if ((uint64_t)cap > SIZE_MAX / sizeof *t->hashes)
        return sim_err_set(b->err, SIM_ENOMEM, "%s: trace too large", b->name);
    uint32_t *p = realloc(t->hashes, (size_t)cap * sizeof *p);
    if (!p) return sim_err_set(b->err, SIM_ENOMEM, "%s: out of memory", b->name);
    t->hashes = p;
    b->cap_hashes = cap;
    return 0;
}

/* Timestamps must not go backwards; checked on every new entry. */
static int trace_check_order(trace_builder *b, int64_t line, double ts_s)
{
    const sim_trace *t = b->t;
    if (t->n > 0 && ts_s < t->entries[t->n - 1].timestamp_s)
        return sim_err_set(b->err, SIM_EINVAL,
                           "%s:%lld: timestamp %.9g s is before the previous entry's %.9g s "
                           "(timestamps must not go backwards)",
                           b->name, (long long)line, ts_s, t->entries[t->n - 1].timestamp_s);
    return 0;
}

/* ---- Mooncake JSONL --------------------------------------------------- */

static const char *json_kind(const json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER: return "an integer";
    case JSON_REAL: return "a real number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "?";
}

/* Reads an integral JSON number (an integer, or a real with no fraction as
 * some trace writers emit) into *out. Returns 0, or -1 if v is not one. */
static int json_get_integral(const json_t *v, int64_t *out)
{
    if (json_is_integer(v)) {
        *out = (int64_t)json_integer_value(v);
        return 0;
    }
    if (json_is_real(v)) {
        double d = json_real_value(v);
        if (isfinite(d) && d == floor(d) && fabs(d) < 9.0e15) {
            *out = (int64_t)d;
            return 0;
        }
    }
    return -1;
}

static int mooncake_length(trace_builder *b, int64_t line, const json_t *obj, const char *key,
                           int32_t *out)
{
    const json_t *v = json_object_get(obj, key);
    int64_t x;
    if (!v)
        return sim_err_set(b->err, SIM_EINVAL, "%s:%lld: missing field '%s' (expected an integer >= 1)",
                           b->name, (long long)line, key);
    if (json_get_integral(v, &x) != 0)
        return sim_err_set(b->err, SIM_EINVAL, "%s:%lld: field '%s': expected an integer >= 1, got %s",
                           b->name, (long long)line, key, json_kind(v));
    if (x < 1 || x > INT32_MAX)
        return sim_err_set(b->err, SIM_EINVAL,
                           "%s:%lld: field '%s': expected an integer in [1, %d], got %lld", b->name,
                           (long long)line, key, INT32_MAX, (long long)x);
    *out = (int32_t)x;
    return 0;
}

static int mooncake_hashes(trace_builder *b, int64_t line, const json_t *obj, sim_trace_entry *e)
{
    const json_t *arr = json_object_get(obj, "hash_ids");
    e->n_hash = 0;
    e->hash_off = b->t->n_hashes;
    if (!arr || json_is_null(arr)) return 0;
    if (!json_is_array(arr))
        return sim_err_set(b->err, SIM_EINVAL,
                           "%s:%lld: field 'hash_ids': expected an array of integers, got %s",
                           b->name, (long long)line, json_kind(arr));
    size_t n = json_array_size(arr);
    if (n > INT32_MAX)
        return sim_err_set(b->err, SIM_EINVAL, "%s:%lld: field 'hash_ids': too many entries",
                           b->name, (long long)line);
    int rc = trace_reserve_hashes(b, (int64_t)n);
    if (rc) return rc;
    for (size_t i = 0; i < n; i++) {
        const json_t *v = json_array_get(arr, i);
        int64_t x;
        if (json_get_integral(v, &x) != 0)
            return sim_err_set(b->err, SIM_EINVAL,
                               "%s:%lld: field 'hash_ids'[%zu]: expected a non-negative integer, got %s",
                               b->name, (long long)line, i, json_kind(v));
        if (x < 0 || x > (int64_t)UINT32_MAX)
            return sim_err_set(b->err, SIM_EINVAL,
                               "%s:%lld: field 'hash_ids'[%zu]: expected an integer in [0, %u], got %lld",
                               b->name, (long long)line, i, UINT32_MAX, (long long)x);
        b->t->hashes[b->t->n_hashes + (int64_t)i] = (uint32_t)x;
    }
    e->n_hash = (int32_t)n;
    b->t->n_hashes += (int64_t)n;
    return 0;
}

static int mooncake_line(trace_builder *b, int64_t line, const char *s, size_t len)
{
    json_error_t jerr;
    int rc = SIM_EINVAL;
    json_t *obj = json_loadb(s, len, JSON_REJECT_DUPLICATES, &jerr);
    if (!obj)
        return sim_err_set(b->err, SIM_EINVAL, "%s:%lld:%d: invalid JSON: %s", b->name,
                           (long long)line, jerr.column, jerr.text);
    if (!json_is_object(obj)) {
        sim_err_set(b->err, SIM_EINVAL, "%s:%lld: expected a JSON object, got %s", b->name,
                    (long long)line, json_kind(obj));
        goto fail;
    }

    sim_trace_entry e = {0};
    const json_t *ts = json_object_get(obj, "timestamp");
    if (!ts) {
        sim_err_set(b->err, SIM_EINVAL, "%s:%lld: missing field 'timestamp' (expected a number of ms >= 0)",
                    b->name, (long long)line);
        goto fail;
    }
    if (!json_is_number(ts)) {
        sim_err_set(b->err, SIM_EINVAL, "%s:%lld: field 'timestamp': expected a number of ms >= 0, got %s",
                    b->name, (long long)line, json_kind(ts));
        goto fail;
    }
    double ms = json_number_value(ts);
    if (!(ms >= 0) || !isfinite(ms)) {
        sim_err_set(b->err, SIM_EINVAL, "%s:%lld: field 'timestamp': expected a number of ms >= 0, got %.9g",
                    b->name, (long long)line, ms);
        goto fail;
    }
    e.timestamp_s = ms / 1000.0;
    if ((rc = trace_check_order(b, line, e.timestamp_s))) goto fail;
    if ((rc = mooncake_length(b, line, obj, "input_length", &e.input_tokens))) goto fail;
    if ((rc = mooncake_length(b, line, obj, "output_length", &e.output_tokens))) goto fail;
    if ((rc = mooncake_hashes(b, line, obj, &e))) goto fail;
    rc = trace_push_entry(b, &e);
fail:
    json_decref(obj);
    return rc;
}

/* ---- CSV ----------------------------------------------------------------- */

static void trim(const char **s, size_t *len)
{
    while (*len && isspace((unsigned char)**s)) {
        (*s)++;
        (*len)--;
    }
    while (*len && isspace((unsigned char)(*s)[*len - 1])) (*len)--;
}

/* s[0..len) copied into num as one NUL-terminated field for sim_parse;
 * 0 when it cannot be one number (empty, too long, or holding a NUL). */
static int csv_field(const char *s, size_t len, char num[TRACE_NUM_MAX])
{
    if (len == 0 || len >= TRACE_NUM_MAX || memchr(s, '\0', len)) return 0;
    memcpy(num, s, len);
    num[len] = '\0';
    return 1;
}

static const char *const csv_cols[3] = {"timestamp", "input_tokens", "output_tokens"};

/* A first line is a header when its first field reads like a word, not a
 * number, e.g. "timestamp,input_tokens,output_tokens" ("inf" and "nan" are
 * numbers to strtod, so they are rejected as data instead). */
static int csv_is_header(const char *s, size_t len)
{
    const char *c = memchr(s, ',', len);
    char buf[16];
    if (c) len = (size_t)(c - s);
    trim(&s, &len);
    if (len == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_' || s[0] == '"')) return 0;
    if (len >= sizeof buf) return 1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    (void)strtod(buf, &end);
    return end != buf + len;
}

static int csv_line(trace_builder *b, int64_t line, const char *s, size_t len)
{
    const char *f[3];
    size_t flen[3];
    int nf = 0;
    const char *p = s, *end = s + len;
    char q[TRACE_QUOTE_MAX + 8];
    for (;;) {
        const char *c = memchr(p, ',', (size_t)(end - p));
        const char *fe = c ? c : end;
        if (nf < 3) {
            f[nf] = p;
            flen[nf] = (size_t)(fe - p);
            trim(&f[nf], &flen[nf]);
        }
        nf++;
        if (!c) break;
        p = c + 1;
    }
    if (nf != 3)
        return sim_err_set(b->err, SIM_EINVAL,
                           "%s:%lld: expected 3 columns (timestamp,input_tokens,output_tokens), got %d",
                           b->name, (long long)line, nf);

    sim_trace_entry e = {0};
    char num[TRACE_NUM_MAX];
    double ts;
    if (!csv_field(f[0], flen[0], num) || sim_parse_double(num, &ts) != SIM_PARSE_OK || ts < 0)
        return sim_err_set(b->err, SIM_EINVAL,
                           "%s:%lld: column 1 (timestamp): expected a number of seconds >= 0, got '%s'",
                           b->name, (long long)line, trace_quote(f[0], flen[0], q, sizeof q));
    e.timestamp_s = ts;
    int rc = trace_check_order(b, line, ts);
    if (rc) return rc;
    for (int i = 1; i < 3; i++) {
        int64_t v;
        if (!csv_field(f[i], flen[i], num) || sim_parse_i64(num, &v) != SIM_PARSE_OK || v < 1 || v > INT32_MAX)
            return sim_err_set(b->err, SIM_EINVAL,
                               "%s:%lld: column %d (%s): expected an integer in [1, %d], got '%s'",
                               b->name, (long long)line, i + 1, csv_cols[i], INT32_MAX,
                               trace_quote(f[i], flen[i], q, sizeof q));
        if (i == 1) e.input_tokens = (int32_t)v;
        else e.output_tokens = (int32_t)v;
    }
    e.hash_off = b->t->n_hashes;
    return trace_push_entry(b, &e);
}

/* ---- driver ------------------------------------------------------------- */

static int is_blank(const char *s, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!isspace((unsigned char)s[i])) return 0;
    return 1;
}

/* One parse in progress: the builder plus the line-level state, so the
 * same code serves an in-memory buffer and a file streamed line by line. */
typedef struct {
    trace_builder b;
    sim_trace_format fmt;
    int64_t line;
    int seen_content;
} trace_parser;

static int parser_begin(trace_parser *p, const char *name, sim_trace_format fmt, sim_err *err)
{
    memset(p, 0, sizeof *p);
    if (fmt != SIM_TRACE_MOONCAKE && fmt != SIM_TRACE_CSV)
        return sim_err_set(err, SIM_EINVAL, "%s: unknown trace format %d", name, (int)fmt);
    p->fmt = fmt;
    p->b.name = name;
    p->b.err = err;
    p->b.t = calloc(1, sizeof *p->b.t);
    if (!p->b.t) return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", name);
    return 0;
}

/* One line without its newline. */
static int parser_line(trace_parser *p, const char *s, size_t l)
{
    int rc;
    p->line++;
    if (is_blank(s, l)) return 0;
    if (p->fmt == SIM_TRACE_MOONCAKE) {
        rc = mooncake_line(&p->b, p->line, s, l);
    } else {
        if (!p->seen_content && csv_is_header(s, l)) {
            p->seen_content = 1;
            return 0;
        }
        rc = csv_line(&p->b, p->line, s, l);
    }
    p->seen_content = 1;
    return rc;
}

/* Hands the trace over on success; frees it on failure (rc != 0). */
static int parser_end(trace_parser *p, int rc, sim_trace **out)
{
    if (rc == 0 && p->b.t->n == 0)
        rc = sim_err_set(p->b.err, SIM_EINVAL, "%s: trace is empty (expected at least one %s entry)", p->b.name,
                         p->fmt == SIM_TRACE_MOONCAKE ? "JSON" : "CSV");
    if (rc) {
        sim_trace_destroy(p->b.t);
        return rc;
    }
    *out = p->b.t;
    return 0;
}

int sim_trace_parse(const char *buf, size_t len, const char *name, sim_trace_format fmt,
                    sim_trace **out, sim_err *err)
{
    trace_parser p;
    *out = NULL;
    if (!name) name = "(trace)";
    int rc = parser_begin(&p, name, fmt, err);
    if (rc) return rc;
    size_t pos = 0;
    while (rc == 0 && pos < len) {
        const char *s = buf + pos;
        const char *nl = memchr(s, '\n', len - pos);
        size_t l = nl ? (size_t)(nl - s) : len - pos;
        pos += l + (nl ? 1 : 0);
        rc = parser_line(&p, s, l);
    }
    return parser_end(&p, rc, out);
}

/* Reads one line (without its newline) into *buf; 1 when a line was read,
 * 0 at the end, negative on a line over SIM_FILE_MAX_TEXT or no memory. */
static int read_line(FILE *f, char **buf, size_t *cap, size_t *len)
{
    size_t n = 0;
    int ch;
    while ((ch = getc_unlocked(f)) != EOF) {
        if (ch == '\n') break;
        if (n + 1 >= *cap) {
            if (*cap > SIM_FILE_MAX_TEXT) return SIM_ERANGE;
            size_t nc = *cap ? *cap * 2 : 4096;
            char *nb = realloc(*buf, nc);
            if (!nb) return SIM_ENOMEM;
            *buf = nb;
            *cap = nc;
        }
        (*buf)[n++] = (char)ch;
    }
    *len = n;
    return ch == EOF && n == 0 ? 0 : 1;
}

int sim_trace_load(const char *path, sim_trace_format fmt, sim_trace **out, sim_err *err)
{
    trace_parser p;
    FILE *f = NULL;
    *out = NULL;
    int rc = sim_file_open_regular(path, "trace", &f, err);
    if (rc < 0) return rc;
    if ((rc = parser_begin(&p, path, fmt, err))) {
        fclose(f);
        return rc;
    }
    /* Streamed: only the current line is held, whatever the file's size. */
    char *line = NULL;
    size_t line_cap = 0, l = 0;
    int got = 0;
    errno = 0;
    while (rc == 0 && (got = read_line(f, &line, &line_cap, &l)) > 0) rc = parser_line(&p, line, l);
    if (rc == 0 && got == SIM_ERANGE)
        rc = sim_err_set(err, SIM_EINVAL, "%s:%lld: line longer than %zu MiB", path, (long long)p.line + 1,
                         SIM_FILE_MAX_TEXT >> 20);
    else if (rc == 0 && got == SIM_ENOMEM)
        rc = sim_err_set(err, SIM_ENOMEM, "%s: out of memory reading trace", path);
    else if (rc == 0 && ferror(f))
        rc = sim_err_set(err, errno == ENOMEM ? SIM_ENOMEM : SIM_EIO, "%s: cannot read trace: %s", path,
                         strerror(errno));
    free(line);
    fclose(f);
    return parser_end(&p, rc, out);
}

void sim_trace_destroy(sim_trace *t)
{
    if (!t) return;
    free(t->entries);
    free(t->hashes);
    free(t);
}
