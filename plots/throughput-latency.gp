# Throughput vs latency: TTFT and TPOT p90 against the load (req/s), one curve
# per deployment (a search's top candidates, or the runs of one scenario in
# the order they ran, each point labelled by its swept value); the SLO bounds
# as dashed red lines.
load templdir.'/common.gp'
if (!exists('xlab')) xlab = 'load (req/s)'
set multiplot layout 2,1 title (strlen(plottitle) ? plottitle : 'Throughput vs latency')
set key outside right top box opaque font ',8'
set xlabel xlab
set ylabel 'TTFT p90 (ms)'
eval "plot for [i=0:nseries-1] datafile index i using 1:2 with linespoints lw 2 pt 7 title columnheader(1), "\
     ."for [i=0:nseries-1] datafile index i using 1:2:4 with labels offset 0,0.8 font ',7' notitle".slo_hline(slo_ttft, 'TTFT')
set ylabel 'TPOT p90 (ms)'
eval "plot for [i=0:nseries-1] datafile index i using 1:3 with linespoints lw 2 pt 7 title columnheader(1), "\
     ."for [i=0:nseries-1] datafile index i using 1:3:4 with labels offset 0,0.8 font ',7' notitle".slo_hline(slo_tpot, 'TPOT')
unset multiplot
