/* calib_optable — streaming CSV(.gz) reader of per-op tables; see the header. */
#include "calib_optable.h"

#include "sim_parse.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct calib_optable {
    char *path;
    gzFile gz;
    char *line;          /* current raw line, fields unquoted in place into buf */
    size_t line_cap;
    char *buf;           /* unquoted fields, NUL-separated */
    size_t buf_cap;
    char **cols;         /* header names (owned copies) */
    size_t ncols;
    const char **fields; /* into buf, ncols of them */
    size_t *field_pos;   /* 1-based character column of each field */
    long lineno;
};

/* Reads one physical line (without the newline, CR stripped) into t->line.
 * 1 = a line, 0 = EOF, < 0 = error. */
static int read_line(calib_optable *t, sim_err *err)
{
    size_t len = 0;
    for (;;) {
        if (t->line_cap - len < 2) {
            size_t cap = t->line_cap ? t->line_cap * 2 : 4096;
            char *p = realloc(t->line, cap);
            if (!p) return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", t->path);
            t->line = p;
            t->line_cap = cap;
        }
        int room = (int)((t->line_cap - len) > INT_MAX ? INT_MAX : (t->line_cap - len));
        if (!gzgets(t->gz, t->line + len, room)) {
            int zerr = 0;
            const char *msg = gzerror(t->gz, &zerr);
            if (zerr != Z_OK) /* Z_BUF_ERROR: the gzip stream ended early */
                return sim_err_set(err, SIM_EIO, "%s:%ld: read error: %s", t->path, t->lineno + 1,
                                   msg);
            if (!gzeof(t->gz))
                return sim_err_set(err, SIM_EIO, "%s:%ld: read error", t->path, t->lineno + 1);
            if (len == 0) return 0;
            break; /* last line without a newline */
        }
        len += strlen(t->line + len);
        if (len > 0 && t->line[len - 1] == '\n') break;
        if (gzeof(t->gz)) break;
    }
    t->lineno++;
    while (len > 0 && (t->line[len - 1] == '\n' || t->line[len - 1] == '\r')) t->line[--len] = '\0';
    if (memchr(t->line, '\0', len))
        return sim_err_set(err, SIM_EINVAL, "%s:%ld: NUL byte in a text table", t->path, t->lineno);
    return 1;
}

/* Splits t->line into fields in t->buf. Returns the number of fields, or
 * < 0 on an unterminated quote. pos gets each field's 1-based column when
 * non-NULL (sized by the caller to at least max_fields). */
static long split_line(calib_optable *t, const char ***fields_out, size_t **pos_out, sim_err *err)
{
    size_t len = strlen(t->line);
    if (t->buf_cap < len + 1) {
        char *p = realloc(t->buf, len + 1);
        if (!p) return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", t->path);
        t->buf = p;
        t->buf_cap = len + 1;
    }
    /* count separators for an upper bound on fields */
    size_t max_fields = 1;
    for (size_t i = 0; i < len; i++) max_fields += t->line[i] == ',';
    const char **fields = malloc(max_fields * sizeof *fields);
    size_t *pos = malloc(max_fields * sizeof *pos);
    if (!fields || !pos) {
        free(fields);
        free(pos);
        return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", t->path);
    }
    size_t nf = 0, i = 0, o = 0;
    for (;;) {
        pos[nf] = i + 1;
        fields[nf] = t->buf + o;
        if (t->line[i] == '"') {
            size_t start = i++;
            for (;;) {
                if (t->line[i] == '\0') {
                    free(fields);
                    free(pos);
                    return sim_err_set(err, SIM_EINVAL, "%s:%ld:%zu: unterminated quoted field",
                                       t->path, t->lineno, start + 1);
                }
                if (t->line[i] == '"') {
                    if (t->line[i + 1] == '"') {
                        t->buf[o++] = '"';
                        i += 2;
                        continue;
                    }
                    i++;
                    break;
                }
                t->buf[o++] = t->line[i++];
            }
            if (t->line[i] != ',' && t->line[i] != '\0') {
                free(fields);
                free(pos);
                return sim_err_set(err, SIM_EINVAL,
                                   "%s:%ld:%zu: expected ',' or end of line after a quoted field",
                                   t->path, t->lineno, i + 1);
            }
        } else {
            while (t->line[i] != ',' && t->line[i] != '\0') t->buf[o++] = t->line[i++];
        }
        t->buf[o++] = '\0';
        nf++;
        if (t->line[i] == '\0') break;
        i++; /* the comma */
    }
    *fields_out = fields;
    *pos_out = pos;
    return (long)nf;
}

int calib_optable_open(const char *path, calib_optable **out, sim_err *err)
{
    *out = NULL;
    calib_optable *t = calloc(1, sizeof *t);
    if (!t) return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", path);
    t->path = strdup(path);
    if (!t->path) {
        free(t);
        return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", path);
    }
    t->gz = gzopen(path, "rb");
    if (!t->gz) {
        int rc = sim_err_set(err, SIM_EIO, "%s: cannot open: %s", path,
                             errno ? strerror(errno) : "out of memory");
        calib_optable_close(t);
        return rc;
    }
    int rc = read_line(t, err);
    if (rc == 0) rc = sim_err_set(err, SIM_EINVAL, "%s:1:1: empty table, expected a header line", path);
    if (rc < 0) {
        calib_optable_close(t);
        return rc;
    }
    /* a UTF-8 byte-order mark before the first name */
    if ((unsigned char)t->line[0] == 0xEF && (unsigned char)t->line[1] == 0xBB &&
        (unsigned char)t->line[2] == 0xBF)
        memmove(t->line, t->line + 3, strlen(t->line + 3) + 1);
    const char **names = NULL;
    size_t *pos = NULL;
    long nf = split_line(t, &names, &pos, err);
    if (nf < 0) {
        calib_optable_close(t);
        return (int)nf;
    }
    t->cols = calloc((size_t)nf, sizeof *t->cols);
    t->fields = calloc((size_t)nf, sizeof *t->fields);
    t->field_pos = calloc((size_t)nf, sizeof *t->field_pos);
    if (!t->cols || !t->fields || !t->field_pos) {
        free(names);
        free(pos);
        calib_optable_close(t);
        return sim_err_set(err, SIM_ENOMEM, "%s: out of memory", path);
    }
    t->ncols = (size_t)nf;
    for (size_t c = 0; c < t->ncols; c++) {
        if (!names[c][0] || !(t->cols[c] = strdup(names[c]))) {
            rc = names[c][0] ? sim_err_set(err, SIM_ENOMEM, "%s: out of memory", path)
                             : sim_err_set(err, SIM_EINVAL, "%s:1:%zu: empty column name in the header",
                                           path, pos[c]);
            free(names);
            free(pos);
            calib_optable_close(t);
            return rc;
        }
        for (size_t d = 0; d < c; d++)
            if (strcmp(t->cols[d], t->cols[c]) == 0) {
                rc = sim_err_set(err, SIM_EINVAL, "%s:1:%zu: column '%s' appears twice in the header",
                                 path, pos[c], t->cols[c]);
                free(names);
                free(pos);
                calib_optable_close(t);
                return rc;
            }
    }
    free(names);
    free(pos);
    *out = t;
    return SIM_OK;
}

void calib_optable_close(calib_optable *t)
{
    if (!t) return;
    if (t->gz) gzclose(t->gz);
    for (size_t c = 0; c < t->ncols; c++) free(t->cols[c]);
    free(t->cols);
    free(t->fields);
    free(t->field_pos);
    free(t->line);
    free(t->buf);
    free(t->path);
    free(t);
}

const char *calib_optable_path(const calib_optable *t) { return t->path; }
size_t calib_optable_ncols(const calib_optable *t) { return t->ncols; }
long calib_optable_line(const calib_optable *t) { return t->lineno; }

const char *calib_optable_colname(const calib_optable *t, size_t i)
{
    return i < t->ncols ? t->cols[i] : NULL;
}

int calib_optable_col(const calib_optable *t, const char *name)
{
    for (size_t c = 0; c < t->ncols; c++)
        if (strcmp(t->cols[c], name) == 0) return (int)c;
    return -1;
}

int calib_optable_has(const calib_optable *t, const char *name) { return calib_optable_col(t, name) >= 0; }

int calib_optable_next(calib_optable *t, sim_err *err)
{
    for (;;) {
        int rc = read_line(t, err);
        if (rc <= 0) return rc;
        if (t->line[strspn(t->line, " \t")] == '\0') continue; /* blank line */
        const char **fields = NULL;
        size_t *pos = NULL;
        long nf = split_line(t, &fields, &pos, err);
        if (nf < 0) return (int)nf;
        if ((size_t)nf != t->ncols) {
            free(fields);
            free(pos);
            return sim_err_set(err, SIM_EINVAL, "%s:%ld:1: %ld fields, the header has %zu columns",
                               t->path, t->lineno, nf, t->ncols);
        }
        memcpy(t->fields, fields, t->ncols * sizeof *fields);
        memcpy(t->field_pos, pos, t->ncols * sizeof *pos);
        free(fields);
        free(pos);
        return 1;
    }
}

const char *calib_optable_field(const calib_optable *t, size_t col)
{
    return col < t->ncols && t->lineno > 1 ? t->fields[col] : NULL;
}

const char *calib_optable_get(const calib_optable *t, const char *name)
{
    int c = calib_optable_col(t, name);
    return c < 0 ? NULL : calib_optable_field(t, (size_t)c);
}

int calib_optable_str(const calib_optable *t, const char *name, const char **out, sim_err *err)
{
    const char *s = calib_optable_get(t, name);
    if (!s)
        return sim_err_set(err, SIM_EINVAL, "%s:1: no column '%s' in the header", t->path, name);
    *out = s;
    return SIM_OK;
}

/* The field of column name with its position, or an error. */
static int field_at(const calib_optable *t, const char *name, const char **s, size_t *pos,
                    sim_err *err)
{
    int c = calib_optable_col(t, name);
    if (c < 0) return sim_err_set(err, SIM_EINVAL, "%s:1: no column '%s' in the header", t->path, name);
    if (!t->fields[c]) return sim_err_set(err, SIM_EINVAL, "%s: no row read yet", t->path);
    *s = t->fields[c];
    *pos = t->field_pos[c];
    return SIM_OK;
}

int calib_optable_double(const calib_optable *t, const char *name, double *out, sim_err *err)
{
    const char *s = "";
    size_t pos = 0;
    int rc = field_at(t, name, &s, &pos, err);
    if (rc < 0) return rc;
    double v;
    if (sim_parse_double(s, &v) != SIM_PARSE_OK)
        return sim_err_set(err, SIM_EINVAL, "%s:%ld:%zu: column '%s': expected a finite number, got '%s'",
                           t->path, t->lineno, pos, name, s);
    *out = v;
    return SIM_OK;
}

int calib_optable_long(const calib_optable *t, const char *name, long *out, sim_err *err)
{
    const char *s = "";
    size_t pos = 0;
    int rc = field_at(t, name, &s, &pos, err);
    if (rc < 0) return rc;
    int64_t v;
    _Static_assert(sizeof(long) == sizeof(int64_t), "long is 64-bit");
    if (sim_parse_i64(s, &v) != SIM_PARSE_OK)
        return sim_err_set(err, SIM_EINVAL, "%s:%ld:%zu: column '%s': expected an integer, got '%s'",
                           t->path, t->lineno, pos, name, s);
    *out = (long)v;
    return SIM_OK;
}

/* ---- tree walk ---- */

static int not_hidden(const struct dirent *d) { return d->d_name[0] != '.'; }

/* Sorted names of the entries of dir; *n gets the count (free with
 * free_names). < 0 when dir cannot be read. */
static int list_dir(const char *dir, struct dirent ***names, int *n, sim_err *err)
{
    *n = scandir(dir, names, not_hidden, alphasort);
    if (*n < 0) return sim_err_set(err, SIM_EIO, "%s: cannot read directory: %s", dir, strerror(errno));
    return SIM_OK;
}

static void free_names(struct dirent **names, int n)
{
    for (int i = 0; i < n; i++) free(names[i]);
    free(names);
}

static char *join(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *p = malloc(la + lb + 2);
    if (!p) return NULL;
    memcpy(p, a, la);
    p[la] = '/';
    memcpy(p + la + 1, b, lb + 1);
    return p;
}

static int is_dir(const char *path)
{
    DIR *d = opendir(path);
    if (!d) return 0;
    closedir(d);
    return 1;
}

/* Table name of a file name ending .csv or .csv.gz, written into out; 0
 * when the name does not end so. */
static int table_name(const char *file, char *out, size_t cap)
{
    size_t n = strlen(file);
    size_t cut = 0;
    if (n > 7 && strcmp(file + n - 7, ".csv.gz") == 0) cut = 7;
    else if (n > 4 && strcmp(file + n - 4, ".csv") == 0) cut = 4;
    if (!cut || n - cut >= cap) return 0;
    memcpy(out, file, n - cut);
    out[n - cut] = '\0';
    return 1;
}

typedef struct {
    const char *root;
    calib_optable_visit visit;
    void *ctx;
    size_t n;
} walk_state;

static int walk_backend(walk_state *w, const char *gpu, const char *family, const char *bv,
                        const char *dir, sim_err *err)
{
    const char *dash = strchr(bv, '-');
    if (!dash || dash == bv || !dash[1]) return SIM_OK;
    char backend[128];
    size_t bl = (size_t)(dash - bv);
    if (bl >= sizeof backend) return SIM_OK;
    memcpy(backend, bv, bl);
    backend[bl] = '\0';
    struct dirent **files;
    int nf, rc = list_dir(dir, &files, &nf, err);
    if (rc < 0) return rc;
    for (int i = 0; i < nf && rc == 0; i++) {
        char table[256];
        if (!table_name(files[i]->d_name, table, sizeof table)) continue;
        char *path = join(dir, files[i]->d_name);
        if (!path) {
            rc = sim_err_set(err, SIM_ENOMEM, "out of memory");
            break;
        }
        calib_optable_entry e = {w->root, gpu, family, backend, dash + 1, table, path};
        rc = w->visit(&e, w->ctx, err);
        w->n++;
        free(path);
    }
    free_names(files, nf);
    return rc;
}

/* Walks <dir>/<family>/<backend>-<version>/ of one GPU, sorted. */
static int walk_gpu(walk_state *w, const char *gpu, const char *dir, sim_err *err)
{
    struct dirent **fams;
    int nfam, rc = list_dir(dir, &fams, &nfam, err);
    if (rc < 0) return rc;
    for (int i = 0; i < nfam && rc == 0; i++) {
        char *fdir = join(dir, fams[i]->d_name);
        if (!fdir) {
            rc = sim_err_set(err, SIM_ENOMEM, "out of memory");
            break;
        }
        if (is_dir(fdir)) {
            struct dirent **bvs;
            int nbv;
            rc = list_dir(fdir, &bvs, &nbv, err);
            for (int j = 0; rc == 0 && j < nbv; j++) {
                char *bdir = join(fdir, bvs[j]->d_name);
                if (!bdir) {
                    rc = sim_err_set(err, SIM_ENOMEM, "out of memory");
                    break;
                }
                if (is_dir(bdir)) rc = walk_backend(w, gpu, fams[i]->d_name, bvs[j]->d_name, bdir, err);
                free(bdir);
            }
            if (nbv >= 0) free_names(bvs, nbv);
        }
        free(fdir);
    }
    free_names(fams, nfam);
    return rc;
}

int calib_optable_walk(const char *root, const char *gpu, calib_optable_visit visit, void *ctx,
                       size_t *n_tables, sim_err *err)
{
    walk_state w = {root, visit, ctx, 0};
    int rc = SIM_OK;
    if (n_tables) *n_tables = 0;
    if (gpu) {
        char *dir = join(root, gpu);
        if (!dir) return sim_err_set(err, SIM_ENOMEM, "out of memory");
        if (!is_dir(dir)) rc = sim_err_set(err, SIM_EINVAL, "%s: no folder for GPU '%s'", dir, gpu);
        else rc = walk_gpu(&w, gpu, dir, err);
        free(dir);
    } else {
        struct dirent **gpus;
        int ng;
        rc = list_dir(root, &gpus, &ng, err);
        if (rc < 0) return rc;
        for (int i = 0; i < ng && rc == 0; i++) {
            char *dir = join(root, gpus[i]->d_name);
            if (!dir) {
                rc = sim_err_set(err, SIM_ENOMEM, "out of memory");
                break;
            }
            if (is_dir(dir)) rc = walk_gpu(&w, gpus[i]->d_name, dir, err);
            free(dir);
        }
        free_names(gpus, ng);
    }
    if (n_tables) *n_tables = w.n;
    return rc;
}
