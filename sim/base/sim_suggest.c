/* sim_suggest — see sim_suggest.h (optimal string alignment distance,
 * words of at most 63 characters compared). */
#include "sim_suggest.h"

#include <string.h>

static int osa(const char *a, const char *b)
{
    int la = (int)strlen(a), lb = (int)strlen(b);
    if (la > 63) la = 63;
    if (lb > 63) lb = 63;
    int d[64][64];
    for (int i = 0; i <= la; i++) d[i][0] = i;
    for (int j = 0; j <= lb; j++) d[0][j] = j;
    for (int i = 1; i <= la; i++)
        for (int j = 1; j <= lb; j++) {
            int c = a[i - 1] == b[j - 1] ? 0 : 1;
            int v = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < v) v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + c < v) v = d[i - 1][j - 1] + c;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = v;
        }
    return d[la][lb];
}

const char *sim_suggest(const char *word, const char *const *cands, size_t n)
{
    const char *best = NULL;
    int bd = 1 << 30;
    size_t wl = strlen(word);
    int limit = wl >= 6 ? 2 : wl >= 3 ? 1 : 0;
    for (size_t i = 0; i < n; i++) {
        int dd = osa(word, cands[i]);
        /* a prefix of a longer option ("--no-per") counts as close */
        if (dd > 1 && wl >= 4 && strncmp(cands[i], word, wl) == 0) dd = 1;
        if (dd == 0) return NULL; /* the word is a candidate: nothing to suggest */
        if (dd < bd) bd = dd, best = cands[i];
    }
    return best && bd <= limit && bd > 0 ? best : NULL;
}

void sim_suggest_unknown(FILE *f, const char *where, const char *what, const char *word, const char *near,
                         const char *usage)
{
    fprintf(f, "servesim: %sunknown %s '%s'%s%s%s\n%s", where, what, word, near ? " (did you mean '" : "",
            near ? near : "", near ? "'?)" : "", usage);
}

int sim_edit_distance(const char *a, const char *b, int fold_case)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > SIM_EDIT_MAX || lb > SIM_EDIT_MAX) return SIM_EDIT_MAX + 1;
    int row[SIM_EDIT_MAX + 1];
    for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        int diag = row[0];
        row[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int up = row[j];
            int same = fold_case ? (a[i - 1] | 32) == (b[j - 1] | 32) : a[i - 1] == b[j - 1];
            int best = diag + (same ? 0 : 1);
            if (up + 1 < best) best = up + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}
