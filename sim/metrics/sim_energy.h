/* sim_energy — the energy a deployment draws over a run.
 *
 * Power model, per GPU, from the hardware catalogue (models/gpus/<gpu>.yaml,
 * `power:`): a board draws idle_w whenever it is powered (the whole run,
 * busy or not), and during an iteration of d seconds the dynamic part
 * (max_w − idle_w) × min(1, u_c + mem_share · u_m), where u_c and u_m are
 * the iteration's busy fractions of compute and of HBM bandwidth: the
 * seconds its ops would keep the tensor cores and the HBM busy at the
 * roofline's derated peaks (model_iter_cost.compute_busy_s, mem_busy_s),
 * over d. A compute-bound iteration at its roofline draws max_w; one that
 * streams HBM at the derated bandwidth idle_w + mem_share of the range;
 * host time (framework overhead, eager launch gaps) and idle gaps between
 * iterations draw idle_w. Each node adds its host's share (CPUs, DRAM,
 * NICs, switches, fans), constant over the run. So the energy of a run of
 * T seconds on G GPUs in N nodes is
 *   G · idle_w · T + (max_w − idle_w) · Σ_GPUs Σ_iterations min(d, busy)
 *   + N · host_w_per_node · T
 * accumulated once per iteration (never per token). Units: watts, joules,
 * seconds. Pure functions on caller-owned structs; nothing allocates. */
#ifndef SIM_ENERGY_H
#define SIM_ENERGY_H

#include <stdint.h>

/* One GPU type's power figures (the catalogue's power block). */
typedef struct {
    double idle_w, max_w;      /* board power at idle and at its power limit */
    double mem_share;          /* share of (max − idle) at the derated HBM bandwidth, 0..1 */
    double host_w_per_gpu;     /* the host's share per GPU of a node */
} sim_power;

typedef struct {
    int32_t enabled;
    double joules;                       /* gpu_idle_j + gpu_dynamic_j + host_j */
    double gpu_idle_j, gpu_dynamic_j, host_j;
    double mean_power_w;                 /* joules / span */
    double joules_per_request;           /* over completed requests */
    double joules_per_output_token;
    double joules_per_million_tokens;    /* per 10^6 tokens processed (prompt + output) */
    double kwh_per_million_output_tokens;
    double span_s;                       /* the window: first arrival to last completion */
} sim_energy_summary;

/* Seconds at the full dynamic range that an iteration of dur_s seconds
 * with these busy seconds (model_iter_cost) adds on each of its GPUs:
 * min(dur_s, compute_busy_s + mem_share · mem_busy_s), 0 for a bad input. */
double sim_energy_busy_s(double dur_s, double compute_busy_s, double mem_busy_s, double mem_share);

/* Adds a pool of gpus GPUs of power p to e over span_s seconds, whose
 * GPUs spent busy_gpu_s GPU-seconds (Σ over GPUs of sim_energy_busy_s) at
 * the full dynamic range; host_w_per_node > 0 replaces the catalogue's
 * host share (it is then charged per node by sim_energy_finish instead). */
void sim_energy_add_pool(sim_energy_summary *e, const sim_power *p, int32_t gpus, double span_s,
                         double busy_gpu_s, int host_override);

/* Charges nodes × host_w_per_node × span_s when host_w_per_node > 0, then
 * fills the totals and the per-request, per-token and power figures. */
void sim_energy_finish(sim_energy_summary *e, double span_s, int32_t nodes, double host_w_per_node,
                       int64_t requests, double input_tokens, double output_tokens);

#endif
