/* calib_table_cache — process-wide, thread-safe perf-db tables; see the header. */
#include "calib_table_cache.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct cache_db {
    char *path;
    calib_db *db;
    struct cache_db *next;
} cache_db;

typedef struct cache_tab {
    char *key;
    calib_table *t;
    struct cache_tab *next;
} cache_tab;

struct calib_table_cache {
    pthread_mutex_t mu;
    cache_db *dbs;
    cache_tab *tabs;
};

int calib_table_cache_create(calib_table_cache **out, sim_err *err)
{
    calib_table_cache *c = calloc(1, sizeof *c);
    if (!c) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    if (pthread_mutex_init(&c->mu, NULL) != 0) {
        free(c);
        return sim_err_set(err, SIM_ENOMEM, "perf-db cache: cannot create a mutex");
    }
    *out = c;
    return SIM_OK;
}

void calib_table_cache_free(calib_table_cache *c)
{
    if (!c) return;
    for (cache_tab *t = c->tabs, *nt; t; t = nt) {
        nt = t->next;
        calib_table_free(t->t);
        free(t->key);
        free(t);
    }
    for (cache_db *d = c->dbs, *nd; d; d = nd) {
        nd = d->next;
        calib_db_close(d->db);
        free(d->path);
        free(d);
    }
    pthread_mutex_destroy(&c->mu);
    free(c);
}

/* The open db of path (opened now if new); caller holds the mutex. */
static int db_of(calib_table_cache *c, const char *path, calib_db **out, sim_err *err)
{
    for (cache_db *d = c->dbs; d; d = d->next)
        if (strcmp(d->path, path) == 0) {
            *out = d->db;
            return SIM_OK;
        }
    cache_db *d = calloc(1, sizeof *d);
    if (!d || !(d->path = strdup(path))) {
        free(d);
        return sim_err_set(err, SIM_ENOMEM, "out of memory");
    }
    int rc = calib_db_open_any(path, &d->db, err);
    if (rc < 0) {
        free(d->path);
        free(d);
        return rc;
    }
    d->next = c->dbs;
    c->dbs = d;
    *out = d->db;
    return SIM_OK;
}

int calib_table_cache_get(calib_table_cache *c, const char *path, const char *gpu_key, const char *engine,
                          const char *const *dtypes, int32_t sms, const calib_table **out, sim_err *err)
{
    *out = NULL;
    char key[2048];
    size_t o = (size_t)snprintf(key, sizeof key, "%s\n%s\n%s\n%d\n", path, gpu_key, engine ? engine : "", sms);
    for (const char *const *d = dtypes; d && *d && o < sizeof key; d++)
        o += (size_t)snprintf(key + o, sizeof key - o, "%s,", *d);
    if (o >= sizeof key) return sim_err_set(err, SIM_EINVAL, "perf-db path too long: %s", path);
    pthread_mutex_lock(&c->mu);
    int rc = SIM_OK;
    for (cache_tab *t = c->tabs; t; t = t->next)
        if (strcmp(t->key, key) == 0) {
            *out = t->t;
            pthread_mutex_unlock(&c->mu);
            return SIM_OK;
        }
    calib_db *db = NULL;
    int64_t gpu_id = 0;
    calib_table *tab = NULL;
    cache_tab *e = NULL;
    if ((rc = db_of(c, path, &db, err)) < 0) goto done;
    if ((rc = calib_db_gpu_find(db, gpu_key, "gpu", &gpu_id, err)) < 0) goto done;
    if ((rc = calib_table_build(db, gpu_id, engine, dtypes, sms, &tab, err)) < 0) goto done;
    e = calloc(1, sizeof *e);
    if (!e || !(e->key = strdup(key))) {
        free(e);
        calib_table_free(tab);
        rc = sim_err_set(err, SIM_ENOMEM, "out of memory");
        goto done;
    }
    e->t = tab;
    e->next = c->tabs;
    c->tabs = e;
    *out = tab;
done:
    pthread_mutex_unlock(&c->mu);
    return rc;
}
