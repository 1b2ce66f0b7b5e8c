/* calib_nvml — the GPU's clocks, clock-event (throttle) reasons and driver
 * version through NVML, loaded with dlopen (libnvidia-ml.so.1, which comes
 * with the driver, not the toolkit), so nothing links it. The GPU backend
 * reads the clocks and reasons after every timed sample and drops samples
 * taken during a slowdown; the driver version string (e.g. "580.159.03")
 * and the application clocks go into the perf-db's GPU identity.
 * calib_nvml_open: 0, or SIM_ENOTSUP with the reason (no libnvidia-ml, no
 * device with that PCI bus id); the handle owns the library. The reason
 * bits are NVML's nvmlClocksEventReason* values. */
#ifndef CALIB_NVML_H
#define CALIB_NVML_H

#include "sim_err.h"

#include <stddef.h>
#include <stdint.h>

typedef struct calib_nvml calib_nvml;

/* pci_bus_id as CUDA prints it ("0000:1B:00.0"); NULL takes device 0. */
int calib_nvml_open(const char *pci_bus_id, calib_nvml **out, sim_err *err);
void calib_nvml_close(calib_nvml *n);
/* The driver version string ("" when NVML does not give it). */
void calib_nvml_driver(calib_nvml *n, char *buf, size_t len);
/* Current SM and memory clocks (MHz) and the active clock-event reasons. 0, or -1. */
int calib_nvml_clocks(calib_nvml *n, int32_t *sm_mhz, int32_t *mem_mhz, uint64_t *reasons);
/* Application (target) clocks, or the maximum clocks where those are not
 * reported. 0, or -1. */
int calib_nvml_target_clocks(calib_nvml *n, int32_t *sm_mhz, int32_t *mem_mhz);

/* Reason bits that mean the GPU ran slower than it would (software power
 * cap, hardware slowdown, software/hardware thermal, power brake): idle,
 * application-clock and sync-boost bits do not count. */
#define CALIB_NVML_SLOWDOWN 0xECull
int calib_nvml_slowdown(uint64_t reasons);
/* "sw_power_cap,hw_thermal" for the log ("none" when 0). */
void calib_nvml_reason_names(uint64_t reasons, char *buf, size_t len);

#endif
