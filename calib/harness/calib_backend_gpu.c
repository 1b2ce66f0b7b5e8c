/* calib_backend_gpu — finds and loads the GPU backend plugin
 * (libservesim_gpu.so, calib_backend_gpu_impl.c and the CUDA kernels) with
 * dlopen; see calib_backend.h. Nothing here links CUDA: a servesim without
 * the plugin, or on a machine whose CUDA libraries are missing or broken,
 * reports "no NVIDIA GPU found (why)" and the way out. */
#include "calib_backend.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CALIB_NO_GPU_HINT "use --backend cpu to exercise the harness on the CPU references"

/* The plugin beside the running executable (build/servesim next to
 * build/libservesim_gpu.so), or "" when /proc/self/exe is unreadable. */
static void calib_plugin_beside_exe(char *out, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    out[0] = '\0';
    if (n <= 0) return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return;
    *slash = '\0';
    snprintf(out, len, "%s/%s", exe, CALIB_GPU_PLUGIN);
}

int calib_backend_gpu_create(calib_backend *b, sim_err *err)
{
    char path[PATH_MAX + 32];
    const char *env = getenv("SERVESIM_GPU_LIB");
    void *h = NULL;
    memset(b, 0, sizeof *b);
    if (env && *env) {
        snprintf(path, sizeof path, "%s", env);
        if (!(h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
            return sim_err_set(err, SIM_ENOTSUP, "no NVIDIA GPU found (cannot load the GPU backend $SERVESIM_GPU_LIB=%s: %s); " CALIB_NO_GPU_HINT,
                               path, dlerror());
    } else {
        calib_plugin_beside_exe(path, sizeof path);
        if (path[0] && access(path, F_OK) == 0) {
            if (!(h = dlopen(path, RTLD_NOW | RTLD_LOCAL)))
                return sim_err_set(err, SIM_ENOTSUP, "no NVIDIA GPU found (cannot load the GPU backend %s: %s); " CALIB_NO_GPU_HINT,
                                   path, dlerror());
        } else if (!(h = dlopen(CALIB_GPU_PLUGIN, RTLD_NOW | RTLD_LOCAL))) {
            return sim_err_set(err, SIM_ENOTSUP,
                               "no NVIDIA GPU found (the GPU backend %s is not built: configure with -DSERVESIM_CUDA=ON, "
                               "or point SERVESIM_GPU_LIB at it); " CALIB_NO_GPU_HINT,
                               CALIB_GPU_PLUGIN);
        } else {
            snprintf(path, sizeof path, "%s", CALIB_GPU_PLUGIN);
        }
    }
    dlerror();
    calib_gpu_plugin_fn create = NULL;
    void *sym = dlsym(h, CALIB_GPU_PLUGIN_ENTRY);
    /* POSIX: a function pointer round-trips through the void * dlsym returns. */
    memcpy(&create, &sym, sizeof create);
    if (!create) {
        dlclose(h);
        return sim_err_set(err, SIM_ENOTSUP, "no NVIDIA GPU found (%s is not a servesim GPU backend: no %s); " CALIB_NO_GPU_HINT, path,
                           CALIB_GPU_PLUGIN_ENTRY);
    }
    return create(CALIB_BACKEND_ABI, b, err);
}
