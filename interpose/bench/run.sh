#!/bin/sh
# run.sh LIBDIR ITERS MPI...: the overhead benchmark, one table per MPI
# (openmpi: mpirun; mpich: mpiexec.mpich). For each MPI it runs
# LIBDIR/bench/microbench-MPI with 2 ranks, alternately without a library
# and with libmpiflow (LIBDIR/libmpiflow-MPI.so) preloaded, ROUNDS times
# (default 15). Each run times, in blocks that alternate within one
# process, the MPI_ functions (intercepted by a preloaded library), the
# PMPI_ ones (not) and those of the minimal wrapper
# (LIBDIR/bench/libminwrap-MPI.so, two clock_gettime stamps per call,
# opened by microbench itself), so what each library adds per call is
# measured side by side. The table shows the medians over the rounds: the
# PMPI_ time, the ns added without a library (about 0: the method's zero),
# by the minimal wrapper and by libmpiflow (the runs with it), and the
# ratio mpiflow / minimal (the median of each run's ratio). Target: at
# most 1.5. MPIFLOW_PAPI is passed on (to measure with counters
# requested).
#
# It fails (exit 1, naming the MPI, configuration and round) when a run
# exits non-zero or takes more than RUN_TIMEOUT seconds (default 300), when
# a test has no row, when an MPI_ function the tests call is not resolved to
# the preloaded library (or, without one, not to the MPI library), and when
# a run under libmpiflow wrote no job file.
set -eu
LIB=$(cd "$1" && pwd -P)
ITERS=$2
shift 2
ROUNDS=${ROUNDS:-15}
RUN_TIMEOUT=${RUN_TIMEOUT:-300}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT

die() {
	echo "bench-overhead: $*" >&2
	exit 1
}
case $ROUNDS in '' | *[!0-9]* | 0) die "ROUNDS must be a positive integer, not '$ROUNDS'" ;; esac
[ $# -gt 0 ] || die "no MPI to measure (usage: run.sh LIBDIR ITERS openmpi|mpich...)"
if [ "$(id -u)" = 0 ]; then
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

# run MPI CONFIG PRELOAD ROUND runs the microbenchmark once and appends
# "CONFIG TEST MPI_NS PMPI_NS MINWRAP_NS" per test to $OUT/results.MPI.
run() {
	mpi=$1 cfg=$2 preload=$3 what="$1 $2 (round $4)"
	case $mpi in
	openmpi)
		set -- mpirun --oversubscribe -np 2 -x LD_PRELOAD="$preload" -x MPIFLOW_QUIET=1 -x MPIFLOW_DIR="$OUT/prof" \
			${MPIFLOW_PAPI:+-x MPIFLOW_PAPI="$MPIFLOW_PAPI"}
		;;
	mpich)
		set -- mpiexec.mpich -n 2 -genv LD_PRELOAD "$preload" -genv MPIFLOW_QUIET 1 -genv MPIFLOW_DIR "$OUT/prof" \
			${MPIFLOW_PAPI:+-genv MPIFLOW_PAPI "$MPIFLOW_PAPI"}
		;;
	esac
	rm -rf "$OUT/prof" && mkdir "$OUT/prof"
	rc=0
	timeout "$RUN_TIMEOUT" "$@" "$LIB/bench/microbench-$mpi" "$ITERS" "$LIB/bench/libminwrap-$mpi.so" >"$OUT/out" 2>"$OUT/err" || rc=$?
	if [ $rc -ne 0 ]; then
		[ $rc -ne 124 ] || echo "bench-overhead: $what: timed out after $RUN_TIMEOUT s" >&2
		echo "bench-overhead: $what: $1 exited with status $rc; the end of its output:" >&2
		tail -n 20 "$OUT/out" "$OUT/err" >&2
		exit 1
	fi
	# The tests line names the tests (the first run's must hold for all);
	# the sym lines where each MPI_ function resolves: under a library
	# that library, else the object that has its PMPI_ function.
	[ -e "$OUT/tests.$mpi" ] || grep '^tests ' "$OUT/out" >"$OUT/tests.$mpi" || die "$what: no tests line in the output"
	awk -v what="$what" -v lib="$preload" -v rows="$OUT/results.$mpi" -v cfg="$cfg" -v tests="$(cat "$OUT/tests.$mpi")" '
	function fail(msg) { print "bench-overhead: " what ": " msg | "cat 1>&2"; bad = 1 }
	$1 == "tests" && $0 != tests { fail("the tests differ from the first run: " $0) }
	$1 == "sym" {
		nsym++
		want = lib == "" ? $4 : lib
		if ($3 != want) fail($2 " resolves to " $3 ", not " want ": not intercepted")
	}
	$1 == "row" { got[$2] = 1; print cfg, $2, $3, $4, $5 >>rows }
	END {
		if (!nsym) fail("no sym lines in the output")
		n = split(tests, t, " ")
		for (k = 2; k <= n; k++)
			if (!(t[k] in got)) fail("no row for test " t[k])
		exit bad
	}' "$OUT/out" || exit 1
	if [ "$cfg" = mpiflow ] && [ -z "$(find "$OUT/prof" -name '*.mpiflow' ! -name '*.partial.mpiflow')" ]; then
		echo "bench-overhead: $what: libmpiflow wrote no job file into MPIFLOW_DIR; its stderr:" >&2
		tail -n 20 "$OUT/err" >&2
		exit 1
	fi
}

# table MPI prints the medians per test, in the order of the tests line.
table() {
	echo "$1: ns per call, medians of $ROUNDS rounds, $ITERS calls a test (a third of them through each way)"
	awk -v tests="$(cat "$OUT/tests.$1")" '
	function median(key, n, i, j, v) { # of x[key, 1..n]
		for (i = 1; i <= n; i++) {
			v = x[key, i]
			for (j = i - 1; j >= 1 && s[j] > v; j--)
				s[j + 1] = s[j]
			s[j + 1] = v
		}
		return n % 2 ? s[(n + 1) / 2] : (s[n / 2] + s[n / 2 + 1]) / 2
	}
	function add(key, v) { x[key, ++cnt[key]] = v }
	{
		add($1 " " $2, $3 - $4)
		add("pmpi " $2, $4)
		if ($1 == "mpiflow") {
			add("minimal " $2, $5 - $4)
			# a run whose minimal wrapper added nothing measurable has no ratio
			if ($5 - $4 > 0) add("ratio " $2, ($3 - $4) / ($5 - $4))
		}
	}
	END {
		printf "%-26s %10s %10s %10s %10s %7s\n", "test (ns/call)", "PMPI", "+none", "+minimal", "+mpiflow", "ratio"
		n = split(tests, t, " ")
		for (k = 2; k <= n; k++) {
			ratio = "-"
			if (cnt["ratio " t[k]]) ratio = sprintf("%.2f", median("ratio " t[k], cnt["ratio " t[k]]))
			printf "%-26s %10.1f %10.1f %10.1f %10.1f %7s\n", t[k], median("pmpi " t[k], cnt["pmpi " t[k]]),
				median("none " t[k], cnt["none " t[k]]), median("minimal " t[k], cnt["minimal " t[k]]),
				median("mpiflow " t[k], cnt["mpiflow " t[k]]), ratio
		}
	}' "$OUT/results.$1"
}

for mpi in "$@"; do
	for f in "bench/microbench-$mpi" "bench/libminwrap-$mpi.so" "libmpiflow-$mpi.so"; do
		[ -f "$LIB/$f" ] || die "$mpi: $LIB/$f is missing (make bench-overhead builds it)"
	done
	echo "bench-overhead: $mpi, $ROUNDS rounds without a library and with mpiflow (and the minimal wrapper in each)" >&2
	i=1
	while [ $i -le "$ROUNDS" ]; do
		run "$mpi" none "" $i
		run "$mpi" mpiflow "$LIB/libmpiflow-$mpi.so" $i
		i=$((i + 1))
	done
done
for mpi in "$@"; do
	echo
	table "$mpi"
done
