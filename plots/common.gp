# Shared settings for servesim plot templates. Variables set by servesim:
#   datafile, outfile, termtype, nseries, plottitle, percentile, templdir
eval sprintf("set terminal %s", termtype)
set output outfile
set grid lc rgb '#dddddd'
set key outside right top box opaque
set border lw 1.2
