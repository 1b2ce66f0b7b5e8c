/* sim_clock — wall-clock seconds for measuring how long servesim itself
 * takes (progress bars, wall times in reports, benchmark and calibration
 * timings). Monotonic, so it never jumps with the system clock; nothing in
 * a simulation's results depends on it. */
#ifndef SIM_CLOCK_H
#define SIM_CLOCK_H

#include <time.h>

static inline double sim_wall_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
