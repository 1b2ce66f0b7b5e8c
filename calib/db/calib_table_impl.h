/* calib_table_impl — what calib_table.c lends calib_table_skew.c (not for
 * other modules): the lookups of one series alone, at the shape as given
 * (its skew_milli must be the series' own for a grid answer). */
#ifndef CALIB_TABLE_IMPL_H
#define CALIB_TABLE_IMPL_H

#include "calib_table.h"

double calib_series_lookup_one(const calib_series *s, const calib_shape *sh, calib_table_status *status);
double calib_series_lookup_memo_one(const calib_series *s, const calib_shape *sh, calib_memo *m,
                                    calib_table_status *status);

#endif
