/* sim_search_mpi — spreading a search over MPI ranks (see sim_search.h).
 *
 * Every rank enumerates and bounds the same candidates (deterministic and
 * cheap next to simulating). In each wave, rank r simulates the wave's
 * candidates that sim_search_assign gives it (longest first by the requests
 * a simulation sends, which every rank knows before simulating, so the
 * ranks' shares take about as long); then all ranks exchange the results
 * (the result record followed by its probes, as bytes: all ranks run the
 * same binary) so each rank takes the same pruning decisions for the next
 * wave. Rank 0 alone writes the results DB and the reports. MPI is
 * initialised here on first use and finalised by sim_search_mpi_finish;
 * without SERVESIM_HAVE_MPI every function is a no-op that reports one
 * rank (sim_search_mpi_start returns SIM_ENOTSUP). */
#include "sim_search_impl.h"

#include <stdlib.h>
#include <string.h>

void sim_search_assign(const double *cost, int32_t n, int32_t ranks, int32_t *owner)
{
    double load[SIM_SEARCH_ASSIGN_MAX] = {0};
    int32_t order[SIM_SEARCH_ASSIGN_MAX];
    if (ranks < 1) ranks = 1;
    if (n > SIM_SEARCH_ASSIGN_MAX) { /* beyond a wave: round-robin, the same on every rank */
        for (int32_t j = 0; j < n; j++) owner[j] = j % ranks;
        return;
    }
    /* n candidates never load more than n ranks (a free one always wins). */
    int32_t used = ranks < n ? ranks : n;
    for (int32_t j = 0; j < n; j++) order[j] = j;
    /* Insertion sort, decreasing cost, ties by index (stable). */
    for (int32_t a = 1; a < n; a++) {
        int32_t v = order[a], b = a;
        while (b > 0 && cost[order[b - 1]] < cost[v]) {
            order[b] = order[b - 1];
            b--;
        }
        order[b] = v;
    }
    for (int32_t a = 0; a < n; a++) {
        int32_t j = order[a], q = 0;
        for (int32_t r = 1; r < used; r++)
            if (load[r] < load[q]) q = r;
        owner[j] = q;
        load[q] += cost[j];
    }
}

#ifdef SERVESIM_HAVE_MPI
#include <mpi.h>

int sim_search_mpi_start(int32_t *rank, int32_t *ranks, int32_t *local_ranks)
{
    int init = 0, r = 0, n = 1, ln = 1;
    MPI_Initialized(&init);
    if (!init) MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm node;
    if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, r, MPI_INFO_NULL, &node) == MPI_SUCCESS) {
        MPI_Comm_size(node, &ln);
        MPI_Comm_free(&node);
    }
    *rank = r;
    *ranks = n;
    *local_ranks = ln;
    return 0;
}

static size_t packed_size(const sim_search_result *r)
{
    return sizeof *r + (size_t)r->n_probes * sizeof(sim_search_probe);
}

int sim_search_mpi_wave_exchange(sim_search *s, const int32_t *idx, const int32_t *owner, int32_t n, sim_err *err)
{
    size_t mine = 0;
    for (int32_t j = 0; j < n; j++)
        if (owner[j] == s->rank) mine += packed_size(&s->res[idx[j]]);
    char *buf = malloc(mine ? mine : 1);
    int *counts = calloc((size_t)s->ranks, sizeof *counts), *displs = calloc((size_t)s->ranks, sizeof *displs);
    char *all = NULL;
    int rc = 0;
    if (!buf || !counts || !displs) {
        rc = sim_err_set(err, SIM_ENOMEM, "out of memory exchanging results");
        goto out;
    }
    size_t off = 0;
    for (int32_t j = 0; j < n; j++) {
        if (owner[j] != s->rank) continue;
        const sim_search_result *r = &s->res[idx[j]];
        memcpy(buf + off, r, sizeof *r);
        off += sizeof *r;
        if (r->n_probes > 0) memcpy(buf + off, r->probes, (size_t)r->n_probes * sizeof *r->probes);
        off += (size_t)r->n_probes * sizeof *r->probes;
    }
    int my = (int)mine;
    MPI_Allgather(&my, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
    size_t total = 0;
    for (int32_t q = 0; q < s->ranks; q++) {
        displs[q] = (int)total;
        total += (size_t)counts[q];
    }
    all = malloc(total ? total : 1);
    if (!all) {
        rc = sim_err_set(err, SIM_ENOMEM, "out of memory exchanging results");
        goto out;
    }
    MPI_Allgatherv(buf, my, MPI_BYTE, all, counts, displs, MPI_BYTE, MPI_COMM_WORLD);
    for (int32_t q = 0; q < s->ranks; q++) {
        if (q == s->rank) continue;
        size_t o = (size_t)displs[q];
        for (int32_t j = 0; j < n; j++) {
            if (owner[j] != q) continue;
            sim_search_result *r = &s->res[idx[j]];
            sim_search_probe *keep = r->probes;
            memcpy(r, all + o, sizeof *r);
            o += sizeof *r;
            r->probes = keep;
            if (r->n_probes > 0) {
                if (!r->probes && !(r->probes = calloc(SIM_SEARCH_MAX_PROBES, sizeof *r->probes))) {
                    r->n_probes = 0;
                    rc = sim_err_set(err, SIM_ENOMEM, "out of memory exchanging results");
                    goto out;
                }
                memcpy(r->probes, all + o, (size_t)r->n_probes * sizeof *r->probes);
                o += (size_t)r->n_probes * sizeof *r->probes;
            }
        }
    }
out:
    free(buf);
    free(all);
    free(counts);
    free(displs);
    return rc;
}

void sim_search_mpi_barrier(void)
{
    int init = 0;
    MPI_Initialized(&init);
    if (init) MPI_Barrier(MPI_COMM_WORLD);
}

void sim_search_mpi_finish(void)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (init && !fin) MPI_Finalize();
}

#else

int sim_search_mpi_start(int32_t *rank, int32_t *ranks, int32_t *local_ranks)
{
    *rank = 0;
    *ranks = 1;
    *local_ranks = 1;
    return SIM_ENOTSUP;
}

int sim_search_mpi_wave_exchange(sim_search *s, const int32_t *idx, const int32_t *owner, int32_t n, sim_err *err)
{
    (void)s;
    (void)idx;
    (void)owner;
    (void)n;
    return sim_err_set(err, SIM_ENOTSUP, "built without MPI");
}

void sim_search_mpi_barrier(void) {}
void sim_search_mpi_finish(void) {}

#endif
