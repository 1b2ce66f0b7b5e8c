# Latency CDFs: TTFT and TPOT of each run (blocks 0..n-1 TTFT, n..2n-1 TPOT),
# a sweep's runs titled by their swept value; the SLO bounds as dashed red lines.
load templdir.'/common.gp'
set multiplot layout 1,2 title (strlen(plottitle) ? plottitle : 'Latency distribution')
set xlabel 'TTFT (ms)'
set ylabel 'fraction of requests'
set yrange [0:1]
set key inside bottom right box opaque font ',8'
set logscale x
eval "plot for [i=0:nseries-1] datafile index i using 1:2 with steps lw 2 title columnheader(1)".slo_vline(slo_ttft, 'TTFT')
set xlabel 'TPOT (ms)'
unset logscale x
set offsets 0, graph 0.05, 0, 0
eval "plot for [i=nseries:2*nseries-1] datafile index i using 1:2 with steps lw 2 title columnheader(1)".slo_vline(slo_tpot, 'TPOT')
unset multiplot
