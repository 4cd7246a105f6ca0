#!/bin/sh
# wrapbench.sh LIBDIR N MPI...: the instructions each wrapper adds per call
# (make bench-wrappers), counted by callgrind: for each MPI and test,
# LIBDIR/bench/wrapbench-MPI N TEST runs as a singleton job under
# LIBDIR/libmpiflow-MPI.so, and the inclusive counts of mpi_TEST and
# pmpi_TEST differ by what the library adds. "timing" is the part of it in
# mf_timing_flush (interval ends and merges), which is large here: under
# valgrind calls take some 50 times longer, so the sums need more nibbles
# than in a real run (make bench-recorder times the recorder with realistic
# durations), and so are the clock's synchronizations (mf_clock_slow,
# every ms of real time: every few calls under valgrind, every few
# thousand without). The Go part is not loaded (MPIFLOW_GOLIB): its runtime's
# signals stop callgrind.
set -eu
LIB=$(cd "$1" && pwd -P)
N=$2
shift 2
command -v valgrind >/dev/null || { echo "bench-wrappers: valgrind is not installed" >&2; exit 1; }
if [ "$(id -u)" = 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
for mpi in "$@"; do
	for t in comm_rank test testany allreduce; do
		if ! (cd "$OUT" && MPIFLOW_GOLIB=/nonexistent MPIFLOW_QUIET=1 MPIFLOW_DIR="$OUT" \
			LD_PRELOAD="$LIB/libmpiflow-$mpi.so" valgrind --tool=callgrind --callgrind-out-file="$OUT/cg" \
			"$LIB/bench/wrapbench-$mpi" "$N" "$t" >"$OUT/log" 2>&1); then
			echo "bench-wrappers: $mpi $t failed; the end of its output:" >&2
			tail -n 20 "$OUT/log" >&2
			exit 1
		fi
		callgrind_annotate --inclusive=yes "$OUT/cg" 2>/dev/null |
			grep -E ' \*? *[^ ]*(wrapbench\.c:p?mpi_|mf_timing_flush|mf_clock_slow)' |
			awk -v n="$N" -v t="$t" -v mpi="$mpi" '
			{ x = $1; gsub(",", "", x); sub(/.*\.c:/, ""); sub(/ .*/, ""); v[$0] = x }
			END {
				if (!(("mpi_" t) in v) || !(("pmpi_" t) in v)) { print "bench-wrappers: " mpi " " t ": no counts" | "cat 1>&2"; exit 1 }
				a = (v["mpi_" t] - v["pmpi_" t]) / n; f = v["mf_timing_flush"] / n; c = v["mf_clock_slow"] / n
				printf "%-8s %-10s %7.1f instructions/call added: %6.1f in the timing, %4.1f in clock syncs, %6.1f else\n", mpi, t, a, f, c, a - f - c
			}'
	done
done
