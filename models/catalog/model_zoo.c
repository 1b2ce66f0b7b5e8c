/* model_zoo — see model_zoo.h. */
#include "model_zoo.h"

#include "model_catalog_data.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <zlib.h>

/* Inflated configs are small; anything past this is corrupt data. */
#define ZOO_MAX_TEXT (64u << 20)

static const model_catalog_file *zoo_entry(const char *kind, int i)
{
    int n = 0;
    for (int k = 0; k < model_catalog_n_files; k++) {
        if (strcmp(model_catalog_files[k].kind, kind)) continue;
        if (n++ == i) return &model_catalog_files[k];
    }
    return NULL;
}

int model_zoo_count(void)
{
    int n = 0;
    for (int k = 0; k < model_catalog_n_files; k++) n += !strcmp(model_catalog_files[k].kind, "hf");
    return n;
}

const char *model_zoo_stem(int i)
{
    const model_catalog_file *e = i >= 0 ? zoo_entry("hf", i) : NULL;
    return e ? e->name : NULL;
}

void model_zoo_id(int i, char *out, size_t size)
{
    const char *s = model_zoo_stem(i);
    const char *sep = s ? strstr(s, "--") : NULL;
    if (!s)
        snprintf(out, size, "?");
    else if (!sep)
        snprintf(out, size, "%s", s);
    else
        snprintf(out, size, "%.*s/%s", (int)(sep - s), s, sep + 2);
}

void model_zoo_stem_of(const char *id, char *out, size_t size)
{
    const char *slash = strchr(id, '/');
    if (slash)
        snprintf(out, size, "%.*s--%s", (int)(slash - id), id, slash + 1);
    else
        snprintf(out, size, "%s", id);
    size_t n = strlen(out);
    if (n > 5 && !strcasecmp(out + n - 5, ".json")) out[n - 5] = 0;
}

int model_zoo_find_name(const char *name)
{
    int found = -1, n = model_zoo_count();
    for (int i = 0; i < n; i++) {
        const char *s = model_zoo_stem(i), *sep = strstr(s, "--");
        if (strcasecmp(sep ? sep + 2 : s, name)) continue;
        if (found >= 0) return -1;
        found = i;
    }
    return found;
}

int model_zoo_find(const char *id)
{
    if (!id || !*id) return -1;
    char stem[512];
    model_zoo_stem_of(id, stem, sizeof stem);
    int n = model_zoo_count();
    for (int i = 0; i < n; i++)
        if (!strcasecmp(model_zoo_stem(i), stem)) return i;
    if (!strstr(stem, "--")) return model_zoo_find_name(stem);
    return -1;
}

static const model_catalog_file *zoo_quant_entry(int i)
{
    const char *s = model_zoo_stem(i);
    if (!s) return NULL;
    for (int k = 0; k < model_catalog_n_files; k++)
        if (!strcmp(model_catalog_files[k].kind, "hfq") && !strcmp(model_catalog_files[k].name, s))
            return &model_catalog_files[k];
    return NULL;
}

int model_zoo_has_quant(int i)
{
    return zoo_quant_entry(i) != NULL;
}

int model_zoo_read(int i, int quant, char **text, size_t *len, sim_err *err)
{
    const model_catalog_file *e = quant ? zoo_quant_entry(i) : (i >= 0 ? zoo_entry("hf", i) : NULL);
    *text = NULL;
    *len = 0;
    if (!e) return sim_err_set(err, SIM_EINVAL, "model zoo: no %s for entry %d", quant ? "hf_quant.json" : "config", i);
    /* gzip keeps the uncompressed size (mod 2^32) in its last four bytes. */
    const unsigned char *g = (const unsigned char *)e->text;
    if (e->len < 18) return sim_err_set(err, SIM_EIO, "model zoo: %s: truncated gzip data", e->name);
    uint32_t size = (uint32_t)g[e->len - 4] | (uint32_t)g[e->len - 3] << 8 | (uint32_t)g[e->len - 2] << 16 |
                    (uint32_t)g[e->len - 1] << 24;
    if (size > ZOO_MAX_TEXT) return sim_err_set(err, SIM_EIO, "model zoo: %s: implausible size %u", e->name, size);
    char *buf = malloc((size_t)size + 1);
    if (!buf) return sim_err_set(err, SIM_ENOMEM, "model zoo: out of memory inflating %s", e->name);
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK) {
        free(buf);
        return sim_err_set(err, SIM_ENOMEM, "model zoo: inflateInit failed");
    }
    z.next_in = (Bytef *)(uintptr_t)e->text;
    z.avail_in = (uInt)e->len;
    z.next_out = (Bytef *)buf;
    z.avail_out = (uInt)size;
    int zr = inflate(&z, Z_FINISH);
    uLong got = z.total_out;
    inflateEnd(&z);
    if (zr != Z_STREAM_END || got != size) {
        free(buf);
        return sim_err_set(err, SIM_EIO, "model zoo: %s%s: corrupt embedded gzip data", e->name,
                           quant ? ".hf_quant" : "");
    }
    buf[size] = 0;
    *text = buf;
    *len = size;
    return 0;
}
