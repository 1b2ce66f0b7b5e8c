# Pareto frontiers of a search: goodput per GPU against tokens/s per user
# (left) and against TTFT at the SLO percentile (right). Blocks: one per
# deployment mode present (nmodes: colocated, pd, af, pd+af, told apart by
# colour and marker), the tok/s-per-user frontier and the TTFT frontier (each
# point labelled with its deployment), the recommended candidate.
load templdir.'/common.gp'
if (!exists('nmodes')) nmodes = 1
set multiplot layout 1,2 title (strlen(plottitle) ? plottitle : 'Deployment search: goodput per GPU against interactivity and TTFT')
set key inside bottom right box opaque font ',8'
set offsets graph 0.06, graph 0.16, graph 0.06, graph 0.04
set ylabel 'SLO-meeting output tokens/s per GPU'
mode_pt(i) = i == 0 ? 7 : i == 1 ? 9 : i == 2 ? 5 : 13
mode_lc(i) = i == 0 ? '#1f77b4' : i == 1 ? '#ff7f0e' : i == 2 ? '#9467bd' : '#8c564b'
set xlabel 'tokens/s per user (1000 / mean TPOT)'
plot for [i=0:nmodes-1] datafile index i using 1:2 with points pt mode_pt(i) ps 0.9 lc rgb mode_lc(i) title columnheader(1), \
     datafile index nmodes using 1:2 with lines lw 2 lc rgb '#d62728' title 'Pareto frontier', \
     datafile index nmodes using 1:2:3 with labels offset 0,0.9 font ',7' tc rgb '#444444' notitle, \
     datafile index nmodes+2 using 1:2 with points pt 3 ps 3 lw 3 lc rgb '#2ca02c' title 'recommended'
set xlabel sprintf('TTFT %s (ms)', percentile)
if (slo_ttft > 0) {
  set xrange [0:slo_ttft * 1.08]
  set arrow 1 from slo_ttft, graph 0 to slo_ttft, graph 1 nohead lw 2 dt 2 lc rgb '#d62728'
  set label 1 sprintf('TTFT SLO %g ms', slo_ttft) at slo_ttft, graph 0.5 right rotate by 90 offset -0.8,0 font ',8' tc rgb '#d62728'
}
eval "plot for [i=0:nmodes-1] datafile index i using 3:2 with points pt mode_pt(i) ps 0.9 lc rgb mode_lc(i) title columnheader(1), "\
     ."datafile index nmodes+1 using 1:2 with lines lw 2 lc rgb '#d62728' title 'Pareto frontier (TTFT)', "\
     ."datafile index nmodes+1 using 1:2:3 with labels offset 0,0.9 font ',7' tc rgb '#444444' notitle, "\
     ."datafile index nmodes+2 using 3:2 with points pt 3 ps 3 lw 3 lc rgb '#2ca02c' title 'recommended'"
unset multiplot
