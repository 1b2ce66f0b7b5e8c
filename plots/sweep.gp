# Sweep: goodput and latency against the swept value (PD ratio, lambda, ...).
load templdir.'/common.gp'
set multiplot layout 2,1 title (strlen(plottitle) ? plottitle : 'Sweep')
set key inside top right box opaque
set style data linespoints
set xtics rotate by -30
set ylabel 'goodput (req/s)'
set y2label 'output tok/s per GPU'
set ytics nomirror
set y2tics
plot datafile using 1:3:xtic(2) lw 2 pt 7 title 'goodput req/s' axes x1y1, \
     '' using 1:4 lw 2 pt 5 title 'tok/s/GPU' axes x1y2
unset y2tics
unset y2label
set ylabel 'latency p90 (ms)'
plot datafile using 1:5:xtic(2) lw 2 pt 7 title 'TTFT p90', '' using 1:6 lw 2 pt 5 title 'TPOT p90'
unset multiplot
