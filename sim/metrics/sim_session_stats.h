/* sim_session_stats — per-session and per-turn figures of a run with
 * sessions (sim_session.h): session end-to-end latency, and for each turn
 * index the time to first token and the prefix-cache hit.
 *
 * Values go into log-bucket sketches (sim_sketch), so memory is fixed
 * (one sketch per turn bin plus one for session latency) whatever the
 * number of sessions or tokens simulated; means, counts and hit rates are
 * exact, percentiles within SIM_METRICS_SKETCH_REL_ERROR (relative) of the
 * exact ones. Turn indices past SIM_SESSION_TURN_BINS - 1 share the last
 * bin. The object owns its sketches; create returns NULL when out of
 * memory, the add calls return SIM_EINVAL for impossible values. */
#ifndef SIM_SESSION_STATS_H
#define SIM_SESSION_STATS_H

#include "sim_engine.h"
#include "sim_metrics.h"

#include <stdint.h>

typedef struct sim_session_stats sim_session_stats;

sim_session_stats *sim_session_stats_create(void);
void sim_session_stats_destroy(sim_session_stats *s);

/* A turn (index from 0) that arrived at `arrival`, emitted its first token
 * at `first_token` and found cached_tokens of its input_tokens cached. */
int sim_session_stats_add_turn(sim_session_stats *s, int32_t turn, sim_time arrival, sim_time first_token,
                               int32_t input_tokens, int32_t cached_tokens);
/* A sub-request finished. */
void sim_session_stats_add_sub(sim_session_stats *s);
/* A request of a session could never fit an instance and was dropped. */
void sim_session_stats_add_dropped(sim_session_stats *s);
/* A session that started at `start` ended at `end` after `turns` turns. */
int sim_session_stats_add_session(sim_session_stats *s, sim_time start, sim_time end, int32_t turns);

/* Fills *out (enabled = 1). */
void sim_session_stats_summarize(const sim_session_stats *s, sim_session_summary *out);

#endif
