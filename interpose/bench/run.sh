#!/bin/sh
# run.sh LIBDIR ITERS: the overhead benchmark. Runs the microbenchmark with
# 2 ranks without a library, with the minimal wrapper (two clock_gettime
# stamps per call) and with libmpiflow, alternating, ROUNDS times. Each run
# measures, in alternating blocks, the MPI_ functions (intercepted) and the
# PMPI_ ones (not), so "added" is what the library costs per call, taken
# within one process; the table shows the medians over the rounds: the
# PMPI_ time, the ns added by each configuration (about 0 without a
# library) and the ratio mpiflow / minimal. Target: at most 1.5.
# MPIFLOW_PAPI is passed on (to measure with counters requested).
set -e
LIB=$1
ITERS=${2:-200000}
ROUNDS=${ROUNDS:-15}
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
# results: config test mpi_ns pmpi_ns; medians of pmpi_ns and of the
# difference per config and test.
awk '{ print $1, $2, $3 - $4, $4 }' "$OUT/results" | sort -k2,2 -k1,1 -k3,3n | awk '
function median(key, n) { return n % 2 ? add[key, (n + 1) / 2] : (add[key, n / 2] + add[key, n / 2 + 1]) / 2 }
{ key = $1 " " $2; cnt[key]++; add[key, cnt[key]] = $3; base[$2] += $4; nb[$2]++; tests[$2] = 1 }
END {
	printf "%-20s %10s %10s %10s %10s %7s\n", "test (ns/call)", "PMPI", "+none", "+minimal", "+mpiflow", "ratio"
	for (t in tests) {
		n = median("none " t, cnt["none " t])
		m = median("minimal " t, cnt["minimal " t])
		f = median("mpiflow " t, cnt["mpiflow " t])
		# No comparison inside printf: mawk reads ">" there as a redirection.
		ratio = 0
		if (m > 0) ratio = f / m
		printf "%-20s %10.1f %10.1f %10.1f %10.1f %7.2f\n", t, base[t] / nb[t], n, m, f, ratio
	}
}'
