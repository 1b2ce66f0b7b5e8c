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

/* How much of an offending value an error message quotes. */
#define TRACE_QUOTE_MAX 40

typedef struct {
    sim_trace *t;
    int64_t cap_entries;
    int64_t cap_hashes;
    const char *name;
    sim_err *err;
    /* session structure: session_id -> session index, id -> entry index,
     * and per session its latest turn and that turn's latest sub-request */
    json_t *sess_map, *id_map;
    int64_t *sess_turn, *sess_child;
    int64_t cap_sess;
} trace_builder;

/* An entry outside any session. */
static void entry_init(sim_trace_entry *e)
{
    memset(e, 0, sizeof *e);
    e->session = e->parent = e->next = e->first_child = e->next_child = -1;
}

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

/* A session_id / id / parent_id value as a map key: an integer >= 0 in
 * decimal (so 7 and "7" name the same thing) or a non-empty string. */
static int session_key(trace_builder *b, int64_t line, const char *field, const json_t *v, char *out,
                       size_t cap)
{
    int64_t x;
    if (json_is_string(v) && json_string_length(v) > 0 && json_string_length(v) < cap &&
        !memchr(json_string_value(v), '\0', json_string_length(v))) {
        snprintf(out, cap, "%s", json_string_value(v));
        return 0;
    }
    if (!json_is_string(v) && json_get_integral(v, &x) == 0 && x >= 0) {
        snprintf(out, cap, "%lld", (long long)x);
        return 0;
    }
    return sim_err_set(b->err, SIM_EINVAL,
                       "%s:%lld: field '%s': expected an integer >= 0 or a non-empty string (under %zu bytes), "
                       "got %s",
                       b->name, (long long)line, field, cap, json_kind(v));
}

static int session_grow(trace_builder *b)
{
    if (b->t->n_sessions < b->cap_sess) return 0;
    int64_t cap = b->cap_sess ? b->cap_sess * 2 : 256;
    int64_t *a = realloc(b->sess_turn, (size_t)cap * sizeof *a);
    if (!a) return sim_err_set(b->err, SIM_ENOMEM, "%s: out of memory", b->name);
    b->sess_turn = a;
    a = realloc(b->sess_child, (size_t)cap * sizeof *a);
    if (!a) return sim_err_set(b->err, SIM_ENOMEM, "%s: out of memory", b->name);
    b->sess_child = a;
    b->cap_sess = cap;
    return 0;
}

/* Reads session_id, id, parent_id and delay into e (entry index b->t->n to
 * be) and sets *follow_up when the line continues an earlier session. The
 * links to earlier entries are made by session_link once the line parsed. */
static int session_fields(trace_builder *b, int64_t line, const json_t *obj, sim_trace_entry *e, int *follow_up,
                          char *id_key, size_t id_cap)
{
    char key[256];
    const json_t *sid = json_object_get(obj, "session_id");
    const json_t *id = json_object_get(obj, "id");
    const json_t *pid = json_object_get(obj, "parent_id");
    const json_t *delay = json_object_get(obj, "delay");
    int rc;
    *follow_up = 0;
    id_key[0] = '\0';
    if (!sid) {
        const char *f = pid ? "parent_id" : delay ? "delay" : NULL;
        if (f)
            return sim_err_set(b->err, SIM_EINVAL, "%s:%lld: field '%s' needs 'session_id' on the same line",
                               b->name, (long long)line, f);
        if (id && (rc = session_key(b, line, "id", id, id_key, id_cap))) return rc;
        return 0;
    }
    if ((rc = session_key(b, line, "session_id", sid, key, sizeof key))) return rc;
    if (id && (rc = session_key(b, line, "id", id, id_key, id_cap))) return rc;
    if (!b->sess_map && !(b->sess_map = json_object()))
        return sim_err_set(b->err, SIM_ENOMEM, "%s: out of memory", b->name);
    const json_t *known = json_object_get(b->sess_map, key);
    if (known) {
        e->session = (int64_t)json_integer_value(known);
        *follow_up = 1;
    } else {
        if ((rc = session_grow(b))) return rc;
        e->session = b->t->n_sessions;
        if (json_object_set_new(b->sess_map, key, json_integer(e->session)))
            return sim_err_set(b->err, SIM_ENOMEM, "%s: out of memory", b->name);
        b->sess_turn[e->session] = b->sess_child[e->session] = -1;
        b->t->n_sessions++;
    }
    if (delay) {
        double ms = json_is_number(delay) ? json_number_value(delay) : -1;
        if (!json_is_number(delay) || !(ms >= 0) || !isfinite(ms))
            return sim_err_set(b->err, SIM_EINVAL, "%s:%lld: field 'delay': expected a number of ms >= 0, got %s",
                               b->name, (long long)line, json_kind(delay));
        e->delay_s = ms / 1000.0;
    }
    if (pid) {
        char pkey[256];
        if ((rc = session_key(b, line, "parent_id", pid, pkey, sizeof pkey))) return rc;
        const json_t *pe = b->id_map ? json_object_get(b->id_map, pkey) : NULL;
        if (!pe)
            return sim_err_set(b->err, SIM_EINVAL,
                               "%s:%lld: field 'parent_id': no earlier line has id '%s' (a sub-request follows "
                               "the turn it fans out from)",
                               b->name, (long long)line, pkey);
        int64_t p = (int64_t)json_integer_value(pe);
        const sim_trace_entry *pt = &b->t->entries[p];
        if (pt->session != e->session || b->sess_turn[e->session] != p || pt->parent >= 0)
            return sim_err_set(b->err, SIM_EINVAL,
                               "%s:%lld: field 'parent_id': '%s' is not the latest turn of session '%s' "
                               "(expected the id of that session's latest line without parent_id: "
                               "sub-requests follow their turn, before the next turn, and do not nest)",
                               b->name, (long long)line, pkey, key);
        e->parent = p;
        e->turn = pt->turn;
    } else if (*follow_up) {
        e->turn = b->t->entries[b->sess_turn[e->session]].turn + 1;
    }
    return 0;
}

/* Links entry b->t->n - 1 (just pushed) into its session and id map. */
static int session_link(trace_builder *b, const char *id_key)
{
    int64_t i = b->t->n - 1;
    sim_trace_entry *e = &b->t->entries[i];
    if (id_key[0]) {
        if (!b->id_map && !(b->id_map = json_object()))
            return sim_err_set(b->err, SIM_ENOMEM, "%s: out of memory", b->name);
        if (json_object_set_new(b->id_map, id_key, json_integer(i)))
            return sim_err_set(b->err, SIM_ENOMEM, "%s: out of memory", b->name);
    }
    if (e->session < 0) return 0;
    if (e->parent >= 0) {
        int64_t last = b->sess_child[e->session];
        if (last >= 0) b->t->entries[last].next_child = i;
        else b->t->entries[e->parent].first_child = i;
        b->t->entries[e->parent].n_children++;
        b->sess_child[e->session] = i;
    } else {
        int64_t last = b->sess_turn[e->session];
        if (last >= 0) b->t->entries[last].next = i;
        b->sess_turn[e->session] = i;
        b->sess_child[e->session] = -1;
    }
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

    sim_trace_entry e;
    entry_init(&e);
    char id_key[256];
    int follow_up;
    if ((rc = session_fields(b, line, obj, &e, &follow_up, id_key, sizeof id_key))) goto fail;
    if (id_key[0] && b->id_map && json_object_get(b->id_map, id_key)) {
        rc = sim_err_set(b->err, SIM_EINVAL, "%s:%lld: field 'id': '%s' is already the id of an earlier line",
                         b->name, (long long)line, id_key);
        goto fail;
    }
    rc = SIM_EINVAL;
    const json_t *ts = json_object_get(obj, "timestamp");
    if (follow_up && (!ts || json_is_number(ts))) {
        /* A follow-up arrives by its delay: its timestamp is not used. */
        if ((rc = mooncake_length(b, line, obj, "input_length", &e.input_tokens))) goto fail;
        if ((rc = mooncake_length(b, line, obj, "output_length", &e.output_tokens))) goto fail;
        if ((rc = mooncake_hashes(b, line, obj, &e))) goto fail;
        if (b->t->n > 0) e.timestamp_s = b->t->entries[b->t->n - 1].timestamp_s;
        if ((rc = trace_push_entry(b, &e))) goto fail;
        rc = session_link(b, id_key);
        goto fail;
    }
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
    if ((rc = trace_push_entry(b, &e))) goto fail;
    rc = session_link(b, id_key);
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

    sim_trace_entry e;
    entry_init(&e);
    double ts;
    if (sim_parse_double_n(f[0], flen[0], &ts) != SIM_PARSE_OK || ts < 0)
        return sim_err_set(b->err, SIM_EINVAL,
                           "%s:%lld: column 1 (timestamp): expected a number of seconds >= 0, got '%s'",
                           b->name, (long long)line, trace_quote(f[0], flen[0], q, sizeof q));
    e.timestamp_s = ts;
    int rc = trace_check_order(b, line, ts);
    if (rc) return rc;
    for (int i = 1; i < 3; i++) {
        int64_t v;
        if (sim_parse_i64_n(f[i], flen[i], &v) != SIM_PARSE_OK || v < 1 || v > INT32_MAX)
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
    json_decref(p->b.sess_map);
    json_decref(p->b.id_map);
    free(p->b.sess_turn);
    free(p->b.sess_child);
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

int64_t sim_trace_continuation(const sim_trace *t, int64_t i)
{
    const sim_trace_entry *e = &t->entries[i];
    if (e->session < 0 || e->parent >= 0) return -1;
    return e->n_children > 0 ? e->first_child : e->next;
}
