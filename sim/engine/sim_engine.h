/* sim_engine — the discrete-event core.
 *
 * Time is int64_t nanoseconds (sim_time). Events live in a 4-ary min-heap of
 * small fixed-size records ordered by (time, seq), where seq is a per-engine
 * counter, so equal-time events fire in scheduling order and a run is
 * bit-for-bit reproducible. Each event carries a callback, a context pointer
 * and a 64-bit argument; payloads live in a slot table addressed by the
 * handle, so cancel is O(1) (the slot's generation is bumped and the heap
 * record is skipped lazily when it surfaces). There is no global state: the
 * engine pointer is passed to every callback. The engine owns only its own
 * memory; contexts belong to the caller. */
#ifndef SIM_ENGINE_H
#define SIM_ENGINE_H

#include <stdint.h>

typedef int64_t sim_time;            /* nanoseconds */
#define SIM_TIME_MAX INT64_MAX
#define SIM_NS_PER_S 1000000000LL
#define SIM_NS_PER_MS 1000000LL
#define SIM_NS_PER_US 1000LL

typedef struct sim_engine sim_engine;

/* Opaque event handle; 0 is never a valid handle. */
typedef uint64_t sim_handle;

typedef void (*sim_event_fn)(sim_engine *eng, void *ctx, uint64_t arg);

/* Optional prefetch hint of an event: called with the event's ctx and arg
 * while the event before it runs (its ctx's first cache lines were asked
 * for one event earlier still), to ask for the lines the event will read
 * through ctx's pointers (__builtin_prefetch). It must only read ctx and
 * change nothing: firing order and results never depend on it. */
typedef void (*sim_warm_fn)(const void *ctx, uint64_t arg);

sim_engine *sim_engine_create(void);
void sim_engine_destroy(sim_engine *eng);

/* Schedules fn(eng, ctx, arg) at absolute time t (t >= now, asserted).
 * Returns the handle, or 0 on allocation failure: the engine then records
 * the failure (sim_engine_fail with SIM_ENOMEM), so a caller that drops the
 * handle still ends the run cleanly. */
sim_handle sim_engine_at(sim_engine *eng, sim_time t, sim_event_fn fn, void *ctx, uint64_t arg);

/* Same, at now + delay (delay >= 0). */
sim_handle sim_engine_after(sim_engine *eng, sim_time delay, sim_event_fn fn, void *ctx,
                            uint64_t arg);

/* sim_engine_at / _after with a prefetch hint (sim_warm_fn; NULL = none). */
sim_handle sim_engine_at_warm(sim_engine *eng, sim_time t, sim_event_fn fn, sim_warm_fn warm, void *ctx,
                              uint64_t arg);
sim_handle sim_engine_after_warm(sim_engine *eng, sim_time delay, sim_event_fn fn, sim_warm_fn warm,
                                 void *ctx, uint64_t arg);

/* Cancels a pending event in O(1). Returns 1 if it was pending, 0 if it had
 * already fired or been cancelled (stale handles are harmless). */
int sim_engine_cancel(sim_engine *eng, sim_handle h);

sim_time sim_engine_now(const sim_engine *eng);

/* Runs events until the queue is empty, sim_engine_stop() is called, or the
 * next event is later than `until` (the clock is then left at the last
 * fired event). Returns the number of events fired by this call. */
uint64_t sim_engine_run(sim_engine *eng, sim_time until);

/* Fires exactly one event if any is pending; returns 1 if one fired. */
int sim_engine_step(sim_engine *eng);

/* Makes sim_engine_run return after the current event. */
void sim_engine_stop(sim_engine *eng);

/* The run's one failure policy for errors inside the event loop (an
 * allocation that failed): records code (a negative SIM_E*) and the
 * message and stops the engine; sim_engine_run fires nothing more after
 * it. The first failure wins; later ones are ignored. */
void sim_engine_fail(sim_engine *eng, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* 0, or the negative code recorded by sim_engine_fail; *msg (when msg is
 * not NULL) points at its message, owned by the engine. */
int sim_engine_failed(const sim_engine *eng, const char **msg);

uint64_t sim_engine_events_fired(const sim_engine *eng);
uint64_t sim_engine_pending(const sim_engine *eng); /* live (not cancelled) events */

#endif
