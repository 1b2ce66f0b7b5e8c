/* model_op_family — see model_op_family.h. */
#include "model_op_family.h"

#include <ctype.h>

static const char *const names[MODEL_FAM_COUNT] = {"gemm",       "moe",        "attention",
                                                   "all_reduce", "all_gather", "reduce_scatter",
                                                   "all_to_all", "send_recv",  "other"};

const char *model_op_family_name(model_op_family f)
{
    return (int)f >= 0 && (int)f < MODEL_FAM_COUNT ? names[f] : "?";
}

static int same_name(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char ca = *a == '-' ? '_' : (char)tolower((unsigned char)*a);
        if (ca != *b) return 0;
    }
    return *a == *b;
}

int model_op_family_from_name(const char *s)
{
    if (!s) return -1;
    for (int i = 0; i < MODEL_FAM_COUNT; i++)
        if (same_name(s, names[i])) return i;
    return -1;
}

const char *model_op_family_list(void)
{
    return "gemm, moe, attention, all_reduce, all_gather, reduce_scatter, all_to_all, send_recv, other";
}
