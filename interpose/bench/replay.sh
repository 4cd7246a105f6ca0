#!/bin/sh
# replay.sh LIBDIR ROUNDS MPI...: how well fast repeats estimate the call
# time of real polls (make bench-replay): for each MPI (openmpi: mpirun;
# mpich: mpiexec.mpich), ROUNDS runs of LIBDIR/bench/microbench-MPI with 2
# ranks under libmpiflow with full traces (MPIFLOW_TRACE=1), whose traces
# BenchmarkFastRepeatsReplay (interpose/replay_test.go) then records again
# through the recorder and compares. It fails (exit 1) when a run does.
set -eu
LIB=$(cd "$1" && pwd -P)
ROUNDS=$2
shift 2
GO=${GO:-go}
ITERS=${ITERS:-400000}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
case $ROUNDS in '' | *[!0-9]* | 0) echo "bench-replay: ROUNDS must be a positive integer, not '$ROUNDS'" >&2; exit 1 ;; esac
[ $# -gt 0 ] || { echo "bench-replay: no MPI to run (usage: replay.sh LIBDIR ROUNDS openmpi|mpich...)" >&2; exit 1; }
if [ "$(id -u)" = 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
for mpi in "$@"; do
	round=1
	while [ "$round" -le "$ROUNDS" ]; do
		dir=$OUT/$mpi.$round
		mkdir "$dir"
		case $mpi in
		openmpi) set -- mpirun --oversubscribe -np 2 -x LD_PRELOAD="$LIB/libmpiflow-openmpi.so" -x MPIFLOW_DIR="$dir" -x MPIFLOW_QUIET=1 -x MPIFLOW_TRACE=1 ;;
		mpich) set -- mpiexec.mpich -n 2 -genv LD_PRELOAD "$LIB/libmpiflow-mpich.so" -genv MPIFLOW_DIR "$dir" -genv MPIFLOW_QUIET 1 -genv MPIFLOW_TRACE 1 ;;
		*) echo "bench-replay: unknown MPI $mpi" >&2; exit 1 ;;
		esac
		if ! "$@" "$LIB/bench/microbench-$mpi" "$ITERS" "$LIB/bench/libminwrap-$mpi.so" >"$OUT/out" 2>&1; then
			echo "bench-replay: $mpi round $round failed; the end of its output:" >&2
			tail -n 20 "$OUT/out" >&2
			exit 1
		fi
		round=$((round + 1))
	done
done
traces=$(ls "$OUT"/*/*.mftrace | tr '\n' ' ')
[ -n "$traces" ] || { echo "bench-replay: the runs wrote no full trace" >&2; exit 1; }
MPIFLOW_REPLAY=$traces $GO test -run '^$' -bench FastRepeatsReplay -benchtime 1x ./interpose
