#!/bin/sh
# run.sh LIBDIR ITERS: the overhead benchmark. Runs the microbenchmark with
# 2 ranks without a library, with the minimal wrapper and with libmpiflow,
# alternating, ROUNDS times; prints the median ns per call of each over
# the rounds (the lowest is no good: two ranks on a 2-core virtual machine
# now and then land where ping-pong runs twice as fast, with or without a
# library), and the ns each library adds per call. Target: libmpiflow adds at most 1.5x what
# the minimal wrapper adds. MPIFLOW_PAPI is passed on (to measure with
# counters requested).
set -e
LIB=$1
ITERS=${2:-200000}
ROUNDS=${ROUNDS:-7}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
if [ "$(id -u)" = 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
run() { # name preload
	if [ -n "$2" ]; then
		mpirun --oversubscribe -np 2 -x LD_PRELOAD="$2" -x MPIFLOW_QUIET=1 -x MPIFLOW_DIR="$OUT" ${MPIFLOW_PAPI:+-x MPIFLOW_PAPI="$MPIFLOW_PAPI"} \
			"$LIB/bench/microbench" "$ITERS" | sed "s/^/$1 /" >>"$OUT/results"
	else
		mpirun --oversubscribe -np 2 "$LIB/bench/microbench" "$ITERS" | sed "s/^/$1 /" >>"$OUT/results"
	fi
}
i=0
while [ $i -lt "$ROUNDS" ]; do
	run none ""
	run minimal "$(cd "$LIB" && pwd)/bench/libminwrap.so"
	run mpiflow "$(cd "$LIB" && pwd)/libmpiflow-openmpi.so"
	i=$((i + 1))
done
sort -k2,2 -k1,1 -k3,3n "$OUT/results" | awk '
{ key = $1 " " $2; cnt[key]++; val[key, cnt[key]] = $3; tests[$2] = 1 }
END {
	printf "%-20s %10s %10s %10s %12s %12s %7s\n", "test (ns/call)", "none", "minimal", "mpiflow", "+minimal", "+mpiflow", "ratio"
	split("none minimal mpiflow", cfgs, " ")
	for (t in tests) {
		for (c = 1; c <= 3; c++) {
			key = cfgs[c] " " t
			med[cfgs[c]] = val[key, int((cnt[key] + 1) / 2)] # sorted: the median
		}
		dmin = med["minimal"] - med["none"]
		dmf = med["mpiflow"] - med["none"]
		# No comparison inside printf: mawk reads ">" there as a redirection.
		ratio = 0
		if (dmin > 0) ratio = dmf / dmin
		printf "%-20s %10.1f %10.1f %10.1f %12.1f %12.1f %7.2f\n", t, med["none"], med["minimal"], med["mpiflow"], dmin, dmf, ratio
	}
}'
