/* kern_arch — see kern_arch.h. */
#include "kern_arch.h"

#include <ctype.h>
#include <stdlib.h>

int kern_arch_code_for(const char *archs, int cc)
{
    int best_sass = 0, best_ptx = 0;
    const char *p = archs ? archs : "";
    while (*p) {
        while (*p && !isdigit((unsigned char)*p)) p++;
        if (!*p) break;
        char *end;
        long a = strtol(p, &end, 10);
        int specific = *end == 'a' || *end == 'f'; /* sm_90a / sm_100f: that cc (family) only */
        p = end;
        while (*p && *p != ',' && *p != ';') p++;
        if (a <= 0 || a > cc) continue;
        if (a / 10 == cc / 10 && (!specific || a == cc) && a > best_sass) best_sass = (int)a;
        if (!specific && a > best_ptx) best_ptx = (int)a;
    }
    return best_sass ? best_sass : best_ptx;
}

int kern_fp8_mma_ok(int virtual_arch)
{
    return virtual_arch >= 89;
}
