# Per-instance utilisation and KV-cache occupancy over time.
load templdir.'/common.gp'
set multiplot layout 2,1 title (strlen(plottitle) ? plottitle : 'Instances over time')
set key outside right top box opaque font ',8'
set xlabel 'time (s)'
set ylabel 'utilisation'
set yrange [0:1.05]
plot for [i=0:nseries-1] datafile index i using 1:2 with lines lw 1.5 title columnheader(1)
set ylabel 'KV occupancy'
plot for [i=0:nseries-1] datafile index i using 1:3 with lines lw 1.5 title columnheader(1)
unset multiplot
