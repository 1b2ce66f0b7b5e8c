/* sim_autoscale_out — see sim_autoscale_out.h. */
#include "sim_autoscale_out.h"
#include "sim_json.h"

static const char *const ev_names[4] = {"start", "ready", "drain", "leave"};

const char *sim_as_event_name(int kind) { return kind >= 0 && kind < 4 ? ev_names[kind] : "?"; }

/* Significant digits of the block's reals (sim_json: null when not finite). */
#define AS_DIGITS 10

void sim_autoscale_print_json(FILE *f, const sim_autoscale_summary *a)
{
    sim_json_real(f, "{\"span_s\": ", a->span_s, AS_DIGITS);
    sim_json_real(f, ", \"gpu_hours\": ", a->gpu_hours, AS_DIGITS);
    sim_json_real(f, ", \"fixed_gpu_hours\": ", a->fixed_gpu_hours, AS_DIGITS);
    sim_json_real(f, ", \"saved_fraction\": ", a->saved_fraction, AS_DIGITS);
    fputs(",\n    \"pools\": [", f);
    for (int32_t p = 0; p < a->n_pools && p < SIM_MAX_POOLS; p++) {
        const sim_as_pool_summary *s = &a->pools[p];
        fprintf(f, "%s\n      {\"pool\": %d, \"role\": ", p ? "," : "", (int)s->pool);
        sim_json_string(f, s->role);
        fprintf(f, ", \"autoscaled\": %s", s->enabled ? "true" : "false");
        if (s->enabled) {
            fputs(", \"metric\": ", f);
            sim_json_string(f, s->metric);
            fputs(", \"up_threshold\": ", f);
            sim_json_real(f, NULL, s->up_threshold, AS_DIGITS);
            sim_json_real(f, ", \"down_threshold\": ", s->down_threshold, AS_DIGITS);
            fprintf(f, ", \"min\": %d, \"max\": %d, \"initial\": %d", (int)s->min, (int)s->max, (int)s->initial);
        }
        fprintf(f, ", \"gpus_per_instance\": %d,\n       \"cold_start_s\": ", (int)s->gpus_per_instance);
        sim_json_real(f, NULL, s->cold_start_s, AS_DIGITS);
        sim_json_real(f, ", \"load_s\": ", s->load_s, AS_DIGITS);
        sim_json_real(f, ", \"gpu_hours\": ", s->gpu_hours, AS_DIGITS);
        sim_json_real(f, ", \"fixed_gpu_hours\": ", s->fixed_gpu_hours, AS_DIGITS);
        sim_json_real(f, ", \"mean_instances\": ", s->mean_instances, AS_DIGITS);
        int32_t kept = 0;
        for (int32_t e = 0; e < a->n_events && e < SIM_AUTOSCALE_MAX_EVENTS; e++) kept += a->events[e].pool == s->pool;
        fprintf(f, ", \"peak_instances\": %d, \"least_instances\": %d,\n       \"scale_ups\": %d, \"scale_downs\": %d, "
                   "\"up_blocked_at_max\": %d, \"events_dropped\": %d,\n       \"timeline\": [",
                (int)s->peak_instances, (int)s->least_instances, (int)s->scale_ups, (int)s->scale_downs,
                (int)s->up_blocked, (int)(s->n_events - kept));
        /* [t_s, held, serving]: the counts from t = 0 and after every event */
        fprintf(f, "[0, %d, %d]", (int)s->initial, (int)s->initial);
        for (int32_t e = 0; e < a->n_events && e < SIM_AUTOSCALE_MAX_EVENTS; e++) {
            if (a->events[e].pool != s->pool) continue;
            sim_json_real(f, ", [", a->events[e].t_s, AS_DIGITS);
            fprintf(f, ", %d, %d]", (int)a->events[e].held, (int)a->events[e].serving);
        }
        fputs("],\n       \"events\": [", f);
        int first = 1;
        for (int32_t e = 0; e < a->n_events && e < SIM_AUTOSCALE_MAX_EVENTS; e++) {
            const sim_as_event *ev = &a->events[e];
            if (ev->pool != s->pool) continue;
            fprintf(f, "%s\n         {\"t_s\": ", first ? "" : ",");
            first = 0;
            sim_json_real(f, NULL, ev->t_s, AS_DIGITS);
            fprintf(f, ", \"event\": \"%s\", \"instance\": %d, \"held\": %d, \"serving\": %d", sim_as_event_name(ev->kind),
                    (int)ev->instance, (int)ev->held, (int)ev->serving);
            if (ev->kind == SIM_AS_EV_START || ev->kind == SIM_AS_EV_DRAIN) {
                sim_json_real(f, ", \"value\": ", ev->value, AS_DIGITS);
            }
            fputs("}", f);
        }
        fputs(first ? "]}" : "\n       ]}", f);
    }
    fputs("\n    ]}", f);
}

void sim_autoscale_print_table(FILE *f, const sim_autoscale_summary *a, int64_t completed, int64_t good)
{
    fprintf(f, "\nautoscale  %.3f GPU-hours against %.3f for the fleet at max (%.1f %% saved) over %.1f s; "
               "%lld of %lld requests missed the SLO\n",
            a->gpu_hours, a->fixed_gpu_hours, 100 * a->saved_fraction, a->span_s, (long long)(completed - good),
            (long long)completed);
    for (int32_t p = 0; p < a->n_pools && p < SIM_MAX_POOLS; p++) {
        const sim_as_pool_summary *s = &a->pools[p];
        if (!s->enabled) continue;
        fprintf(f, "  pool %d %-9s %s up > %g down < %g, %d..%d instances (started at %d): mean %.2f, peak %d, "
                   "least %d; %d up, %d down, %d blocked at max; cold start %.1f s (weights %.1f s)\n",
                (int)s->pool, s->role, s->metric, s->up_threshold, s->down_threshold, (int)s->min, (int)s->max,
                (int)s->initial, s->mean_instances, (int)s->peak_instances, (int)s->least_instances, (int)s->scale_ups,
                (int)s->scale_downs, (int)s->up_blocked, s->cold_start_s, s->load_s);
        fputs("    timeline (t s: held/serving):", f);
        int32_t kept = 0;
        for (int32_t e = 0; e < a->n_events && e < SIM_AUTOSCALE_MAX_EVENTS; e++) {
            const sim_as_event *ev = &a->events[e];
            if (ev->pool != s->pool) continue;
            fprintf(f, "%s %.1f %s#%d %d/%d", kept++ ? "," : "", ev->t_s, sim_as_event_name(ev->kind),
                    (int)ev->instance, (int)ev->held, (int)ev->serving);
        }
        if (s->n_events == 0) fputs(" no change", f);
        if (s->n_events > kept) fprintf(f, " (+%d events not kept)", (int)(s->n_events - kept));
        fputc('\n', f);
    }
}

int sim_autoscale_each_metric(const sim_autoscale_summary *a, int (*fn)(const char *, double, void *), void *ctx)
{
    char name[96];
    int rc;
#define EMIT(n, v)                                            \
    do {                                                      \
        if ((rc = fn((n), (double)(v), ctx))) return rc;      \
    } while (0)
#define PEMIT(k, v)                                                       \
    do {                                                                  \
        snprintf(name, sizeof name, "autoscale.pools.%d." k, (int)s->pool); \
        EMIT(name, (v));                                                  \
    } while (0)
    EMIT("autoscale.span_s", a->span_s);
    EMIT("autoscale.gpu_hours", a->gpu_hours);
    EMIT("autoscale.fixed_gpu_hours", a->fixed_gpu_hours);
    EMIT("autoscale.saved_fraction", a->saved_fraction);
    for (int32_t p = 0; p < a->n_pools && p < SIM_MAX_POOLS; p++) {
        const sim_as_pool_summary *s = &a->pools[p];
        if (!s->enabled) continue;
        PEMIT("gpu_hours", s->gpu_hours);
        PEMIT("fixed_gpu_hours", s->fixed_gpu_hours);
        PEMIT("mean_instances", s->mean_instances);
        PEMIT("peak_instances", s->peak_instances);
        PEMIT("least_instances", s->least_instances);
        PEMIT("scale_ups", s->scale_ups);
        PEMIT("scale_downs", s->scale_downs);
        PEMIT("up_blocked_at_max", s->up_blocked);
        PEMIT("cold_start_s", s->cold_start_s);
    }
#undef PEMIT
#undef EMIT
    return 0;
}
