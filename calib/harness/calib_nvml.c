/* calib_nvml — see calib_nvml.h. The few NVML entry points used are
 * declared here by their documented C signatures (nvml.h is not needed). */
#include "calib_nvml.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int nvml_ret;        /* nvmlReturn_t; 0 = NVML_SUCCESS */
typedef void *nvml_device;   /* nvmlDevice_t */
enum { NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2 };

struct calib_nvml {
    void *lib;
    nvml_device dev;
    nvml_ret (*shutdown)(void);
    nvml_ret (*driver)(char *, unsigned int);
    nvml_ret (*clock)(nvml_device, int, unsigned int *);
    nvml_ret (*app_clock)(nvml_device, int, unsigned int *);
    nvml_ret (*max_clock)(nvml_device, int, unsigned int *);
    nvml_ret (*reasons)(nvml_device, unsigned long long *);
};

/* dlsym into a function pointer of any type (POSIX allows the round trip). */
static void calib_nvml_sym(void *lib, const char *name, void *fnp, size_t size)
{
    void *p = dlsym(lib, name);
    memset(fnp, 0, size);
    if (p) memcpy(fnp, &p, size);
}

int calib_nvml_open(const char *pci_bus_id, calib_nvml **out, sim_err *err)
{
    *out = NULL;
    void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return sim_err_set(err, SIM_ENOTSUP, "NVML not available (%s)", dlerror());
    calib_nvml *n = calloc(1, sizeof *n);
    if (!n) {
        dlclose(lib);
        return sim_err_set(err, SIM_ENOMEM, "out of memory");
    }
    n->lib = lib;
    nvml_ret (*init)(void);
    nvml_ret (*by_pci)(const char *, nvml_device *);
    nvml_ret (*by_index)(unsigned int, nvml_device *);
    calib_nvml_sym(lib, "nvmlInit_v2", &init, sizeof init);
    calib_nvml_sym(lib, "nvmlShutdown", &n->shutdown, sizeof n->shutdown);
    calib_nvml_sym(lib, "nvmlDeviceGetHandleByPciBusId_v2", &by_pci, sizeof by_pci);
    calib_nvml_sym(lib, "nvmlDeviceGetHandleByIndex_v2", &by_index, sizeof by_index);
    calib_nvml_sym(lib, "nvmlSystemGetDriverVersion", &n->driver, sizeof n->driver);
    calib_nvml_sym(lib, "nvmlDeviceGetClockInfo", &n->clock, sizeof n->clock);
    calib_nvml_sym(lib, "nvmlDeviceGetApplicationsClock", &n->app_clock, sizeof n->app_clock);
    calib_nvml_sym(lib, "nvmlDeviceGetMaxClockInfo", &n->max_clock, sizeof n->max_clock);
    calib_nvml_sym(lib, "nvmlDeviceGetCurrentClocksEventReasons", &n->reasons, sizeof n->reasons);
    if (!n->reasons) /* the name before driver 535 */
        calib_nvml_sym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", &n->reasons, sizeof n->reasons);
    nvml_ret r = -1;
    if (!init || !n->shutdown || (!by_pci && !by_index) || !n->clock || !n->reasons) {
        calib_nvml_close(n);
        return sim_err_set(err, SIM_ENOTSUP, "NVML: libnvidia-ml.so.1 lacks the clock functions");
    }
    if ((r = init()) != 0) {
        dlclose(lib);
        free(n);
        return sim_err_set(err, SIM_ENOTSUP, "NVML: nvmlInit failed (%d)", r);
    }
    r = pci_bus_id && by_pci ? by_pci(pci_bus_id, &n->dev) : by_index ? by_index(0, &n->dev) : -1;
    if (r != 0) {
        calib_nvml_close(n);
        return sim_err_set(err, SIM_ENOTSUP, "NVML: no device %s (%d)", pci_bus_id ? pci_bus_id : "0", r);
    }
    *out = n;
    return 0;
}

void calib_nvml_close(calib_nvml *n)
{
    if (!n) return;
    if (n->shutdown) n->shutdown();
    dlclose(n->lib);
    free(n);
}

void calib_nvml_driver(calib_nvml *n, char *buf, size_t len)
{
    char v[96] = "";
    if (n && n->driver && n->driver(v, sizeof v) != 0) v[0] = '\0';
    snprintf(buf, len, "%s", v);
}

int calib_nvml_clocks(calib_nvml *n, int32_t *sm_mhz, int32_t *mem_mhz, uint64_t *reasons)
{
    unsigned int sm = 0, mem = 0;
    unsigned long long r = 0;
    if (!n || n->clock(n->dev, NVML_CLOCK_SM, &sm) != 0 || n->clock(n->dev, NVML_CLOCK_MEM, &mem) != 0 ||
        n->reasons(n->dev, &r) != 0)
        return -1;
    *sm_mhz = (int32_t)sm, *mem_mhz = (int32_t)mem, *reasons = r;
    return 0;
}

int calib_nvml_target_clocks(calib_nvml *n, int32_t *sm_mhz, int32_t *mem_mhz)
{
    unsigned int sm = 0, mem = 0;
    if (!n) return -1;
    if (!(n->app_clock && n->app_clock(n->dev, NVML_CLOCK_SM, &sm) == 0 && n->app_clock(n->dev, NVML_CLOCK_MEM, &mem) == 0 &&
          sm > 0) &&
        !(n->max_clock && n->max_clock(n->dev, NVML_CLOCK_SM, &sm) == 0 && n->max_clock(n->dev, NVML_CLOCK_MEM, &mem) == 0))
        return -1;
    *sm_mhz = (int32_t)sm, *mem_mhz = (int32_t)mem;
    return 0;
}

int calib_nvml_slowdown(uint64_t reasons)
{
    return (reasons & CALIB_NVML_SLOWDOWN) != 0;
}

void calib_nvml_reason_names(uint64_t reasons, char *buf, size_t len)
{
    static const struct {
        uint64_t bit;
        const char *name;
    } names[] = {{0x1, "gpu_idle"},          {0x2, "applications_clocks"}, {0x4, "sw_power_cap"},
                 {0x8, "hw_slowdown"},       {0x10, "sync_boost"},         {0x20, "sw_thermal"},
                 {0x40, "hw_thermal"},       {0x80, "hw_power_brake"},     {0x100, "display_clocks"}};
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (reasons & names[i].bit) {
            int w = snprintf(buf + used, len - used, "%s%s", used ? "," : "", names[i].name);
            if (w < 0 || (size_t)w >= len - used) return;
            used += (size_t)w;
        }
    if (!used) snprintf(buf, len, "%s", reasons ? "other" : "none");
}
