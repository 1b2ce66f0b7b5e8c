# Sweep: goodput, latency and each pool's utilisation against the swept
# value (xPyD ratio, lambda, rate, ...). Variables: numeric (1: the values
# are numbers, drawn on a numeric axis; 0: one tick per value, in the order
# given), sweep_key (the axis title), npools and pool_names (the pools' roles).
load templdir.'/common.gp'
if (!exists('numeric')) numeric = 0
if (!exists('sweep_key')) sweep_key = 'swept value'
if (!exists('npools')) npools = 0
if (!exists('pool_names')) pool_names = ''
set multiplot layout (npools > 0 ? 3 : 2),1 title (strlen(plottitle) ? plottitle : 'Sweep over '.sweep_key)
set key outside right top box opaque font ',8'
set lmargin 12
set rmargin 30
set style data linespoints
set xlabel sweep_key
if (!numeric) set xtics rotate by -30
xt = numeric ? "" : ":xtic(2)"
set ylabel 'goodput (req/s)'
set y2label 'output tok/s per GPU'
set ytics nomirror
set y2tics
eval "plot datafile using 1:3".xt." lw 2 pt 7 title 'goodput req/s' axes x1y1, '' using 1:4 lw 2 pt 5 title 'tok/s/GPU' axes x1y2"
unset y2tics
unset y2label
set ytics mirror
set ylabel 'latency p90 (ms, log scale)'
set logscale y
eval "plot datafile using 1:5".xt." lw 2 pt 7 title 'TTFT p90', '' using 1:6 lw 2 pt 5 title 'TPOT p90'"\
     .slo_hline(slo_ttft, 'TTFT').slo_hline(slo_tpot, 'TPOT')
unset logscale y
if (npools > 0) {
  set ylabel 'utilisation'
  set yrange [0:1.05]
  eval "plot for [p=1:npools] datafile using 1:(column(6+p))".xt." lw 2 pt 7 title sprintf('pool %d (%s)', p-1, word(pool_names, p))"
}
unset multiplot
