#!/bin/sh
# wrapbench.sh LIBDIR N MPI...: the instructions each wrapper adds per call
# (make bench-wrappers), counted by callgrind: for each MPI and test,
# LIBDIR/bench/wrapbench-MPI N TEST runs as a singleton job under
# LIBDIR/bench/libmpiflow-valgrind-MPI.so, and the inclusive counts of
# mpi_TEST and pmpi_TEST differ by what the library adds, in a long run's
# steady state:
# - that library is libmpiflow built to see time MF_SLOWDOWN_BY times
#   slower (clock.h), as valgrind runs code about that much slower, so that
#   its rules that depend on time (which repeats go untimed) take the
#   branches of a run without valgrind;
# - wrapbench warms each test up for WARM seconds (default 2) before it
#   counts: the recorder times every repeat until it has seen the thread
#   keep its processor (WARM=0 counts that first regime);
# - MPIFLOW_TIMING=1024 (bytes of timing intervals): the budget of a long
#   run is full, so its intervals end every many events; a short run with
#   the default budget would end one every other event.
# Only mpi_TEST and pmpi_TEST are counted (--toggle-collect). "timing" is
# the part in mf_timing_flush (interval ends and merges),
# "clock syncs" the clock's re-synchronizations (mf_clock_slow, every ms of
# real time: every few hundred calls under valgrind, every few thousand
# without). Both repeat paths are in the rest: at one site, 1 call in 16 is
# timed once the recorder has learnt the loop's period (recorder.h,
# MF_TIGHT_NS). The Go part is not loaded (MPIFLOW_GOLIB): its runtime's
# signals stop callgrind. TESTS= restricts the tests.
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
	for f in "bench/wrapbench-$mpi" "bench/libmpiflow-valgrind-$mpi.so"; do
		[ -f "$LIB/$f" ] || { echo "bench-wrappers: $LIB/$f is missing (make bench-wrappers builds it)" >&2; exit 1; }
	done
	for t in ${TESTS:-comm_rank test testany allreduce isend_irecv_waitall split_waitall}; do
		if ! (cd "$OUT" && MPIFLOW_GOLIB=/nonexistent MPIFLOW_QUIET=1 MPIFLOW_TIMING=${MPIFLOW_TIMING:-1024} MPIFLOW_DIR="$OUT" \
			LD_PRELOAD="$LIB/bench/libmpiflow-valgrind-$mpi.so" valgrind --tool=callgrind --callgrind-out-file="$OUT/cg" \
			--toggle-collect="mpi_$t" --toggle-collect="pmpi_$t" \
			"$LIB/bench/wrapbench-$mpi" "$N" "$t" "${WARM:-2}" >"$OUT/log" 2>&1); then
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
