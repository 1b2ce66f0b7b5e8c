/* sim_suggest — "did you mean" for command-line words: the candidate
 * nearest to a mistyped verb or option by edit distance (insertions,
 * deletions, substitutions and swaps of neighbours each cost 1). Pure;
 * returns a pointer into the caller's list or NULL when nothing is close
 * (distance above 2, or above a third of the word for short words). */
#ifndef SIM_SUGGEST_H
#define SIM_SUGGEST_H

#include <stddef.h>

const char *sim_suggest(const char *word, const char *const *cands, size_t n);

#endif
