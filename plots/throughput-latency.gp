# Throughput vs latency: TTFT and TPOT p90 against the load (req/s), one curve
# per deployment (a search's top candidates, or the runs of one scenario).
load templdir.'/common.gp'
if (!exists('xlab')) xlab = 'load (req/s)'
set multiplot layout 2,1 title (strlen(plottitle) ? plottitle : 'Throughput vs latency')
set key outside right top box opaque font ',8'
set xlabel xlab
set ylabel 'TTFT p90 (ms)'
plot for [i=0:nseries-1] datafile index i using 1:2 with linespoints lw 2 pt 7 title columnheader(1)
set ylabel 'TPOT p90 (ms)'
plot for [i=0:nseries-1] datafile index i using 1:3 with linespoints lw 2 pt 7 title columnheader(1)
unset multiplot
