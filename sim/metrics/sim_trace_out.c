/* sim_trace_out — see sim_trace_out.h. */
#include "sim_trace_out.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sim_trace_out {
    FILE *f;
    char path[1024];
    int64_t t0_ns, t1_ns, max_events, events, dropped;
    int64_t counted;          /* events under the cap (metadata is not) */
    int io_error;
};

int sim_trace_out_open(const char *path, double t0, double t1, int64_t max_events, sim_trace_out **out,
                       sim_err *err)
{
    *out = NULL;
    sim_trace_out *t = calloc(1, sizeof *t);
    if (!t) return sim_err_set(err, SIM_ENOMEM, "out of memory");
    t->f = fopen(path, "w");
    if (!t->f) {
        int rc = sim_err_set(err, SIM_EIO, "--trace %s: %s", path, strerror(errno));
        free(t);
        return rc;
    }
    snprintf(t->path, sizeof t->path, "%s", path);
    t->t0_ns = (int64_t)(t0 * 1e9);
    t->t1_ns = t1 > t0 ? (int64_t)(t1 * 1e9) : INT64_MAX;
    t->max_events = max_events > 0 ? max_events : INT64_MAX;
    fputs("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n", t->f);
    *out = t;
    return 0;
}

static int in_window(const sim_trace_out *t, int64_t ns) { return ns >= t->t0_ns && ns < t->t1_ns; }

/* Writes one event (and frees it); metadata events ignore the cap. */
static void emit(sim_trace_out *t, json_t *e, int meta)
{
    if (!e) return;
    if (!meta && t->counted >= t->max_events) {
        t->dropped++;
        json_decref(e);
        return;
    }
    if (!meta) t->counted++;
    if (t->events > 0) fputs(",\n", t->f);
    if (json_dumpf(e, t->f, JSON_COMPACT | JSON_PRESERVE_ORDER) < 0) t->io_error = 1;
    t->events++;
    json_decref(e);
}

static json_t *event(const char *name, const char *ph, int32_t tid, int64_t ns)
{
    json_t *e = json_object();
    json_object_set_new(e, "name", json_string(name));
    json_object_set_new(e, "ph", json_string(ph));
    json_object_set_new(e, "pid", json_integer(0));
    json_object_set_new(e, "tid", json_integer(tid));
    json_object_set_new(e, "ts", json_real((double)ns * 1e-3));
    return e;
}

void sim_trace_out_instance(sim_trace_out *t, int32_t instance, const char *role)
{
    char name[96];
    snprintf(name, sizeof name, "instance %d (%s)", (int)instance, role);
    json_t *e = event("thread_name", "M", instance, 0);
    json_object_del(e, "ts");
    json_object_set_new(e, "args", json_pack("{s:s}", "name", name));
    emit(t, e, 1);
    e = event("thread_sort_index", "M", instance, 0);
    json_object_del(e, "ts");
    json_object_set_new(e, "args", json_pack("{s:i}", "sort_index", (json_int_t)instance));
    emit(t, e, 1);
}

void sim_trace_out_iteration(sim_trace_out *t, int32_t instance, const sim_trace_iter *it)
{
    if (!in_window(t, it->start_ns)) return;
    const char *name = it->prefill_seqs && it->decode_seqs ? "prefill+decode" : it->prefill_seqs ? "prefill" : "decode";
    /* Batches of several pipeline slots overlap: each slot's iterations go
     * on their own async track (begin/end pairs), not as slices of the
     * instance's thread, which must nest. */
    int async = it->slots > 1;
    json_t *e = event(name, async ? "b" : "X", instance, it->start_ns);
    char id[48];
    if (async) {
        snprintf(id, sizeof id, "instance %d slot %d", (int)instance, (int)it->slot);
        json_object_set_new(e, "cat", json_string("iteration"));
        json_object_set_new(e, "id", json_string(id));
    } else {
        json_object_set_new(e, "dur", json_real((double)(it->end_ns - it->start_ns) * 1e-3));
    }
    json_object_set_new(e, "args", json_pack("{s:i,s:i,s:i,s:i}", "prefill_tokens", (json_int_t)it->prefill_tokens,
                                             "prefill_seqs", (json_int_t)it->prefill_seqs, "decode_seqs",
                                             (json_int_t)it->decode_seqs, "batch",
                                             (json_int_t)(it->prefill_seqs + it->decode_seqs)));
    emit(t, e, 0);
    if (async) {
        e = event(name, "e", instance, it->end_ns);
        json_object_set_new(e, "cat", json_string("iteration"));
        json_object_set_new(e, "id", json_string(id));
        emit(t, e, 0);
    }
    char cname[64];
    snprintf(cname, sizeof cname, "instance %d queue", (int)instance);
    e = event(cname, "C", instance, it->end_ns);
    json_object_set_new(e, "args", json_pack("{s:I}", "waiting", (json_int_t)it->waiting));
    emit(t, e, 0);
    snprintf(cname, sizeof cname, "instance %d KV used", (int)instance);
    e = event(cname, "C", instance, it->end_ns);
    json_object_set_new(e, "args", json_pack("{s:f}", "fraction", it->kv_used));
    emit(t, e, 0);
}

void sim_trace_out_kv_begin(sim_trace_out *t, const char *kind, uint64_t req, int32_t src, int32_t dst,
                            int64_t now_ns, double bytes)
{
    if (!in_window(t, now_ns)) return;
    char id[48];
    snprintf(id, sizeof id, "%s %llu", kind, (unsigned long long)req);
    int32_t tid = src >= 0 ? src : dst;
    json_t *e = event(kind, "b", tid, now_ns);
    json_object_set_new(e, "cat", json_string("kv"));
    json_object_set_new(e, "id", json_string(id));
    json_object_set_new(e, "args", json_pack("{s:I,s:i,s:i,s:f}", "request", (json_int_t)req, "from", (json_int_t)src,
                                             "to", (json_int_t)dst, "bytes", bytes));
    emit(t, e, 0);
    e = event(kind, "s", tid, now_ns);
    json_object_set_new(e, "cat", json_string("kv"));
    json_object_set_new(e, "id", json_string(id));
    emit(t, e, 0);
}

void sim_trace_out_kv_end(sim_trace_out *t, const char *kind, uint64_t req, int32_t dst, int64_t now_ns)
{
    if (!in_window(t, now_ns)) return;
    char id[48];
    snprintf(id, sizeof id, "%s %llu", kind, (unsigned long long)req);
    json_t *e = event(kind, "e", dst, now_ns);
    json_object_set_new(e, "cat", json_string("kv"));
    json_object_set_new(e, "id", json_string(id));
    emit(t, e, 0);
    e = event(kind, "f", dst, now_ns);
    json_object_set_new(e, "cat", json_string("kv"));
    json_object_set_new(e, "id", json_string(id));
    json_object_set_new(e, "bp", json_string("e"));
    emit(t, e, 0);
}

int sim_trace_out_close(sim_trace_out *t, int64_t *events, sim_err *err)
{
    if (!t) return 0;
    json_t *e = event("process_name", "M", 0, 0);
    json_object_del(e, "ts");
    json_object_set_new(e, "args", json_pack("{s:s}", "name", t->dropped ? "servesim (trace truncated)" : "servesim"));
    emit(t, e, 1);
    char note[160];
    snprintf(note, sizeof note, "%lld events written, %lld dropped past the event cap", (long long)t->events,
             (long long)t->dropped);
    fprintf(t->f, "\n], \"otherData\": {\"generator\": \"servesim\", \"note\": \"%s\", \"dropped_events\": %lld}}\n", note,
            (long long)t->dropped);
    if (events) *events = t->events;
    int rc = 0;
    if (ferror(t->f) || t->io_error) rc = sim_err_set(err, SIM_EIO, "--trace %s: write failed", t->path);
    if (fclose(t->f) != 0 && rc == 0) rc = sim_err_set(err, SIM_EIO, "--trace %s: write failed", t->path);
    free(t);
    return rc;
}
