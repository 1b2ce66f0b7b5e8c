# Per-instance utilisation and KV-cache occupancy over time: one colour per
# instance (golden-ratio steps round the hue circle), each titled with its pool's role;
# prefill instances dashed, decode (and colocated) solid. Variable roles: the
# role of each series, in order.
load templdir.'/common.gp'
if (!exists('roles')) roles = ''
set multiplot layout 2,1 title (strlen(plottitle) ? plottitle : 'Instances over time')
set key outside right top box opaque font ',8'
set palette model HSV defined (0 0 0.85 0.8, 1 1 0.85 0.8)
unset colorbox
hue(i) = (i * 0.6180339887) - floor(i * 0.6180339887)  # golden-ratio steps: neighbours far apart
dash(i) = word(roles, i + 1) eq 'prefill' ? 2 : 1
set xlabel 'time (s)'
set ylabel 'utilisation'
set yrange [0:1.05]
plot for [i=0:nseries-1] datafile index i using 1:2 with lines lw 1.5 dt dash(i) lc palette frac hue(i) title columnheader(1)
set ylabel 'KV occupancy'
plot for [i=0:nseries-1] datafile index i using 1:3 with lines lw 1.5 dt dash(i) lc palette frac hue(i) title columnheader(1)
unset multiplot
