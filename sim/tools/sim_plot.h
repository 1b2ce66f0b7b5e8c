/* sim_plot — gnuplot figures from a results database (`servesim plot`).
 *
 * Kinds: cdf (TTFT and TPOT distributions of runs, from `requests`: a
 * search's top runs, or every run of the latest sweep titled by its value),
 * throughput-latency (TTFT/TPOT p90 against the load, one curve per
 * deployment: search candidates' probes, or runs of one scenario in the
 * order they ran, labelled by their swept values, from `metrics`), sweep
 * (goodput, latency and each pool's utilisation against the swept value of
 * the latest `run --sweep`: a numeric axis titled with the key when the
 * values are numbers), pareto (goodput/GPU against tokens/s per user and
 * against TTFT of the latest search's candidates, one marker per mode,
 * both frontiers labelled with their deployments), timeline (per-instance
 * utilisation and KV occupancy over time, from `instance_series`, each
 * instance titled with its pool's role). Latency plots draw the runs' SLO
 * bounds. Data are extracted with SQLite into a temporary
 * folder and drawn by a template plots/<kind>.gp run by gnuplot, which
 * writes PNG (pngcairo) or SVG by the output file's extension. Templates
 * are looked up in $SERVESIM_PLOTS, then plots/ beside or above the
 * executable's folder, then the source tree the build came from. Library
 * code: errors come back as SIM_E* with a message; a missing gnuplot is
 * SIM_ENOTSUP naming the package to install; a DB that is missing, not a
 * regular file or not a results DB is SIM_EINVAL (or SIM_EIO). */
#ifndef SIM_PLOT_H
#define SIM_PLOT_H

#include "sim_err.h"

#include <stdint.h>
#include <stdio.h>

typedef enum {
    SIM_PLOT_CDF = 0,
    SIM_PLOT_THROUGHPUT_LATENCY = 1,
    SIM_PLOT_SWEEP = 2,
    SIM_PLOT_PARETO = 3,
    SIM_PLOT_TIMELINE = 4
} sim_plot_kind;

#define SIM_PLOT_MAX_RUNS 16

typedef struct {
    sim_plot_kind kind;
    const char *db;          /* results database */
    const char *out;         /* .png or .svg */
    const char *templates;   /* folder with <kind>.gp (NULL = look it up) */
    const char *gnuplot;     /* program (NULL = $SERVESIM_GNUPLOT or "gnuplot") */
    int64_t runs[SIM_PLOT_MAX_RUNS]; /* run ids (n_runs 0 = chosen per kind) */
    int32_t n_runs;
    const char *title;       /* NULL = derived */
    char *note;              /* when not NULL: a warning about the data read (an */
    size_t note_size;        /* interrupted search), "" when there is none */
} sim_plot_opts;

int sim_plot_make(const sim_plot_opts *o, sim_err *err);

/* The gnuplot data blocks sim_plot_make() would draw for o->kind from
 * o->db, written to f (no gnuplot needed; o->out is not used). */
int sim_plot_write_data(const sim_plot_opts *o, FILE *f, sim_err *err);

/* The SLO bounds (ms, 0 = none) run `run` of results DB db was simulated
 * with, as the plots draw them: the stored scenario's slo.ttft_ms and
 * slo.tpot_ms, overridden by its --set slo.*= values. */
int sim_plot_slo(const char *db, int64_t run, double *ttft, double *tpot, sim_err *err);

/* 1 when the gnuplot program runs (NULL = the default one). */
int sim_plot_have_gnuplot(const char *gnuplot);

int sim_plot_kind_parse(const char *name, sim_plot_kind *out);
const char *sim_plot_kind_name(sim_plot_kind k);

/* `servesim plot DB [--kind K] -o FILE`: argv[0] is the verb. */
int sim_cli_plot(int argc, char **argv);

#endif
