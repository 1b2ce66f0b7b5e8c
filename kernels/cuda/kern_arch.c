/* kern_arch — see kern_arch.h. */
#include "kern_arch.h"

#include <ctype.h>
#include <stdlib.h>

/* The next entry of an architecture list: its number and the letter after
 * it ('a', 'f' or '\0'); 0 at the end of the list. */
static int arch_next(const char **pp, long *arch, char *suffix)
{
    const char *p = *pp;
    while (*p && !isdigit((unsigned char)*p)) p++;
    if (!*p) return 0;
    char *end;
    *arch = strtol(p, &end, 10);
    *suffix = *end == 'a' || *end == 'f' ? *end : '\0';
    p = end;
    while (*p && *p != ',' && *p != ';') p++;
    *pp = p;
    return 1;
}

int kern_arch_code_for(const char *archs, int cc)
{
    int best_sass = 0, best_ptx = 0;
    const char *p = archs ? archs : "";
    long a;
    char sfx;
    while (arch_next(&p, &a, &sfx)) {
        int specific = sfx != '\0'; /* sm_90a / sm_100f: that cc (family) only */
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

int kern_arch_has_specific(const char *archs, int cc)
{
    const char *p = archs ? archs : "";
    long a;
    char sfx;
    while (arch_next(&p, &a, &sfx))
        if (a == cc && sfx == 'a') return 1;
    return 0;
}
