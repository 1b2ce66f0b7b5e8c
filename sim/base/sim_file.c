/* sim_file — see sim_file.h. The file is checked with fstat on the opened
 * descriptor (not stat on the name), so what is checked is what is read. */
#include "sim_file.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *kind_of(mode_t m)
{
    if (S_ISDIR(m)) return "a directory";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISFIFO(m)) return "a pipe (FIFO)";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

int sim_file_open_regular(const char *path, const char *what, FILE **out, sim_err *err)
{
    *out = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) return sim_err_set(err, SIM_EIO, "%s: cannot open %s: %s", path, what, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        int e = errno;
        fclose(f);
        return sim_err_set(err, SIM_EIO, "%s: cannot stat %s: %s", path, what, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        fclose(f);
        return sim_err_set(err, SIM_EINVAL, "%s: is %s; expected a %s file", path, kind_of(st.st_mode), what);
    }
    *out = f;
    return SIM_OK;
}

int sim_file_read_all(const char *path, const char *what, size_t max_bytes, char **text, size_t *len,
                      sim_err *err)
{
    FILE *f = NULL;
    *text = NULL;
    if (len) *len = 0;
    int rc = sim_file_open_regular(path, what, &f, err);
    if (rc < 0) return rc;
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && (unsigned long long)st.st_size > max_bytes) {
        fclose(f);
        return sim_err_set(err, SIM_EINVAL, "%s: %s file is %lld bytes; at most %zu MiB is accepted", path, what,
                           (long long)st.st_size, max_bytes >> 20);
    }
    /* Read in chunks up to the cap: the file may grow while it is read. */
    size_t cap = 0, n = 0;
    char *buf = NULL;
    for (;;) {
        if (n == cap) {
            if (cap > max_bytes) {
                rc = sim_err_set(err, SIM_EINVAL, "%s: %s file is larger than %zu MiB", path, what, max_bytes >> 20);
                goto fail;
            }
            size_t nc = cap ? cap * 2 : 8192;
            if (nc > max_bytes + 1) nc = max_bytes + 1;
            if (nc <= cap) nc = cap + 1;
            char *nb = realloc(buf, nc + 1);
            if (!nb) {
                rc = sim_err_set(err, SIM_ENOMEM, "%s: out of memory reading %s", path, what);
                goto fail;
            }
            buf = nb;
            cap = nc;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (ferror(f)) {
        rc = sim_err_set(err, SIM_EIO, "%s: cannot read %s: %s", path, what, strerror(errno));
        goto fail;
    }
    if (n > max_bytes) {
        rc = sim_err_set(err, SIM_EINVAL, "%s: %s file is larger than %zu MiB", path, what, max_bytes >> 20);
        goto fail;
    }
    fclose(f);
    buf[n] = '\0';
    *text = buf;
    if (len) *len = n;
    return SIM_OK;
fail:
    fclose(f);
    free(buf);
    return rc;
}

int sim_file_join(char *dst, size_t len, const char *dir, const char *name)
{
    size_t dl = dir ? strlen(dir) : 0;
    while (dl > 1 && dir[dl - 1] == '/') dl--;
    while (*name == '/' && dl > 0) name++;
    int w = dl == 0 ? snprintf(dst, len, "%s", name)
          : dl == 1 && dir[0] == '/' ? snprintf(dst, len, "/%s", name)
                                     : snprintf(dst, len, "%.*s/%s", (int)dl, dir, name);
    return w < 0 || (size_t)w >= len ? SIM_ERANGE : 0;
}

void sim_file_stem(char *dst, size_t len, const char *name)
{
    size_t n = 0;
    if (!len) return;
    for (const char *c = name; *c && n + 1 < len; c++) {
        int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-' ||
                 *c == '_' || (*c == '.' && n > 0);
        dst[n++] = ok ? *c : '_';
    }
    dst[n] = '\0';
    if (n == 0) snprintf(dst, len, "servesim");
}
