# Shared settings for servesim plot templates. Variables set by servesim:
#   datafile, outfile, termtype, nseries, plottitle, percentile, templdir,
#   slo_ttft, slo_tpot (the runs' SLO bounds in ms, 0 = none)
eval sprintf("set terminal %s", termtype)
set output outfile
set grid lc rgb '#dddddd'
set key outside right top box opaque
set border lw 1.2
if (!exists('slo_ttft')) slo_ttft = 0
if (!exists('slo_tpot')) slo_tpot = 0
slo_style = "lw 2 dt 2 lc rgb '#d62728'"
# An SLO bound as a vertical line (x = bound, y from 0 to 1) or a horizontal
# one (a constant), appended to a plot command; "" without a bound.
slo_vline(v, what) = v > 0 ? sprintf(", '+' using (%.9g):($0) every ::0::1 with lines %s title '%s SLO %g ms'", v, slo_style, what, v) : ""
slo_hline(v, what) = v > 0 ? sprintf(", %.9g with lines %s title '%s SLO %g ms'", v, slo_style, what, v) : ""
