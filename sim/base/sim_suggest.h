/* sim_suggest — "did you mean" for command-line words: the candidate
 * nearest to a mistyped verb or option by edit distance (insertions,
 * deletions, substitutions and swaps of neighbours each cost 1). Pure;
 * returns a pointer into the caller's list or NULL when nothing is close
 * (distance above 2, or above a third of the word for short words).
 * Also the plain edit distance the scenario-key and catalogue-name
 * suggestions rank by, and the one wording of an unknown word's error. */
#ifndef SIM_SUGGEST_H
#define SIM_SUGGEST_H

#include <stddef.h>
#include <stdio.h>

const char *sim_suggest(const char *word, const char *const *cands, size_t n);

/* Writes "servesim: <where>unknown <what> '<word>' (did you mean
 * '<near>'?)" and a newline, then usage, to f; the parenthesis only when
 * near is not NULL. where is "" or e.g. "search: ". */
void sim_suggest_unknown(FILE *f, const char *where, const char *what, const char *word, const char *near,
                         const char *usage);

/* Longest string sim_edit_distance compares. */
#define SIM_EDIT_MAX 128

/* Levenshtein distance between a and b (insertions, deletions and
 * substitutions each cost 1; no swaps), letters compared as they are or,
 * with fold_case, with bit 0x20 set (ASCII case-insensitive). The caller
 * keeps both at most SIM_EDIT_MAX characters; longer ones give
 * SIM_EDIT_MAX + 1. */
int sim_edit_distance(const char *a, const char *b, int fold_case);

#endif
