/* sim_autoscale — see sim_autoscale.h. */
#include "sim_autoscale.h"

#include <math.h>
#include <stdlib.h>

typedef struct {
    sim_time t;
    double num, den;
} as_sample;

struct sim_autoscale {
    sim_autoscale_cfg cfg;
    double up, down;           /* thresholds resolved (sim_autoscale_thresholds) */
    sim_time lag, window;      /* ns */
    as_sample *ring;
    int32_t cap, head, n;      /* oldest at head */
};

sim_autoscale *sim_autoscale_create(const sim_autoscale_cfg *cfg)
{
    sim_autoscale *a = calloc(1, sizeof *a);
    if (!a) return NULL;
    a->cfg = *cfg;
    sim_autoscale_thresholds(cfg, &a->up, &a->down);
    a->lag = (sim_time)llround(cfg->lag_s * 1e9);
    a->window = (sim_time)llround(cfg->window_s * 1e9);
    double per = cfg->interval_s > 0 ? (cfg->lag_s + cfg->window_s) / cfg->interval_s : 1;
    a->cap = (int32_t)(per < 1e6 ? ceil(per) : 1e6) + 2;
    a->ring = calloc((size_t)a->cap, sizeof *a->ring);
    if (!a->ring) {
        free(a);
        return NULL;
    }
    return a;
}

void sim_autoscale_destroy(sim_autoscale *a)
{
    if (!a) return;
    free(a->ring);
    free(a);
}

void sim_autoscale_push(sim_autoscale *a, sim_time t, double num, double den)
{
    if (a->n == a->cap) { /* the oldest is older than any window reads */
        a->head = (a->head + 1) % a->cap;
        a->n--;
    }
    a->ring[(a->head + a->n) % a->cap] = (as_sample){t, num, den};
    a->n++;
}

int sim_autoscale_value(const sim_autoscale *a, sim_time t, double *out)
{
    sim_time hi = t - a->lag, lo = hi - a->window;
    double num = 0, den = 0;
    for (int32_t i = 0; i < a->n; i++) {
        const as_sample *s = &a->ring[(a->head + i) % a->cap];
        if (s->t > lo && s->t <= hi) {
            num += s->num;
            den += s->den;
        }
    }
    if (!(den > 0)) return 0;
    *out = num / den;
    return 1;
}

int sim_autoscale_direction(const sim_autoscale *a, double v)
{
    if (a->cfg.metric == SIM_AS_SLO) return v < a->up ? 1 : v >= a->down ? -1 : 0;
    return v > a->up ? 1 : v < a->down ? -1 : 0;
}

double sim_autoscale_cold_start_s(const sim_autoscale_cfg *cfg, double weight_bytes_per_gpu)
{
    return weight_bytes_per_gpu / (cfg->storage_gbs * 1e9) + cfg->startup_s;
}
