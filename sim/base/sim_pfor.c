/* sim_pfor — see sim_pfor.h. */
#include "sim_pfor.h"

#include <pthread.h>
#include <unistd.h>

typedef struct {
    sim_pfor_fn fn;
    void *ctx;
    int64_t n, next;
    pthread_mutex_t mu;
} pfor_state;

static void *pfor_worker(void *arg)
{
    pfor_state *p = arg;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        int64_t i = p->next++;
        pthread_mutex_unlock(&p->mu);
        if (i >= p->n) break;
        p->fn(p->ctx, i);
    }
    return NULL;
}

int sim_pfor(int64_t n, int threads, sim_pfor_fn fn, void *ctx)
{
    if (n <= 0) return 0;
    if (threads <= 0) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cpus > 0 ? (int)(cpus < SIM_PFOR_MAX_THREADS ? cpus : SIM_PFOR_MAX_THREADS) : 1;
    }
    if (threads > SIM_PFOR_MAX_THREADS) threads = SIM_PFOR_MAX_THREADS;
    if ((int64_t)threads > n) threads = (int)n;
    pfor_state p = {.fn = fn, .ctx = ctx, .n = n, .next = 0};
    pthread_mutex_init(&p.mu, NULL);
    pthread_t th[SIM_PFOR_MAX_THREADS];
    int started = 0;
    for (int t = 1; t < threads; t++)
        if (pthread_create(&th[started], NULL, pfor_worker, &p) == 0) started++;
    pfor_worker(&p);
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
    pthread_mutex_destroy(&p.mu);
    return started + 1;
}
