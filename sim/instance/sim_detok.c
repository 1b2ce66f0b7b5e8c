/* sim_detok — see sim_detok.h. */
#include "sim_detok.h"

#include <math.h>

void sim_detok_init(sim_detok *d, const sim_sched_cfg *cfg)
{
    *d = (sim_detok){0};
    if (cfg->detokenizer_workers <= 0) return;
    d->workers = cfg->detokenizer_workers;
    d->ns_per_token = (cfg->detokenize_us_per_token + cfg->stream_us_per_token) * 1e3;
}

sim_time sim_detok_step(sim_detok *d, sim_time now, int64_t jobs, int64_t tokens)
{
    if (d->workers <= 0 || jobs <= 0) return 0;
    const double t = (double)now, work = (double)tokens * d->ns_per_token, s = work / (double)jobs;
    const double start = d->free_at > t ? d->free_at : t;
    /* Mean over the jobs j = 0..m−1 of floor(j / c) + 1 (waves of c). */
    const int64_t c = d->workers, q = jobs / c, r = jobs % c;
    const double waves = ((double)c * (double)q * (double)(q + 1) / 2 + (double)r * (double)(q + 1)) / (double)jobs;
    d->free_at = start + work / (double)c;
    d->jobs += jobs;
    d->tokens += tokens;
    d->wait_ns += (double)jobs * ((start - t) + s * (waves - 1));
    d->service_ns += work;
    return (sim_time)llround(start - t + s * waves);
}
