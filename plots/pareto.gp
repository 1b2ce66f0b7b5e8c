# Pareto frontier: goodput per GPU against tokens/s per user (blocks:
# all candidates meeting the SLO, the frontier, the recommended one).
load templdir.'/common.gp'
set title (strlen(plottitle) ? plottitle : 'Deployment search: goodput per GPU vs tokens/s per user')
set xlabel 'tokens/s per user (1000 / mean TPOT)'
set ylabel 'SLO-meeting output tokens/s per GPU'
set key inside top right box opaque
plot datafile index 0 using 1:2 with points pt 7 ps 0.8 lc rgb '#9ab0c8' title columnheader(1), \
     datafile index 1 using 1:2 with linespoints lw 2 pt 7 lc rgb '#d62728' title columnheader(1), \
     datafile index 2 using 1:2 with points pt 3 ps 3 lw 3 lc rgb '#2ca02c' title columnheader(1)
