#!/bin/sh
# Screenshots of every section of the report at 4 and 64 ranks of the halo
# app, of the regions app (4 ranks), and of real programs where they are installed (Debian lammps: LJ
# melt 3000 steps on 2 ranks; hpcc: N=1000 on 2 ranks, N=1500 on 16), for
# the README (docs/screenshots). Not part of test or CI (minutes):
#   make screenshots
# Needs bin/mpiflow, build/apps/halo (make all apps), mpirun and chromium.
set -eu
MPIRUN=${MPIRUN:-mpirun}
MPIRUN_FLAGS=${MPIRUN_FLAGS:---oversubscribe}
OUT=${OUT:-docs/screenshots}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$OUT"
args=
for np in 4 64; do
	iters=500
	[ "$np" -gt 16 ] && iters=100
	MPIFLOW_QUIET=1 bin/mpiflow run --no-report --dir "$work/$np" -- "$MPIRUN" $MPIRUN_FLAGS -np "$np" build/apps/halo "$iters" >/dev/null
	bin/mpiflow report -o "$work/$np.html" "$work/$np"/*.mpiflow 2>/dev/null
	args="$args halo-$np=$work/$np.html"
done
# The halo at 4 ranks compared with a baseline of half its iterations.
MPIFLOW_QUIET=1 bin/mpiflow run --no-report --dir "$work/base4" -- "$MPIRUN" $MPIRUN_FLAGS -np 4 build/apps/halo 250 >/dev/null
bin/mpiflow report -o "$work/compare.html" --compare "$work/base4"/*.mpiflow "$work/4"/*.mpiflow 2>/dev/null
args="$args halo-4-compare=$work/compare.html"
# The regions of MPI_Pcontrol (testdata/apps/regions.c), 4 ranks.
MPIFLOW_QUIET=1 bin/mpiflow run --no-report --dir "$work/regions" -- "$MPIRUN" $MPIRUN_FLAGS -np 4 build/apps/regions >/dev/null
bin/mpiflow report -o "$work/regions.html" "$work/regions"/*.mpiflow 2>/dev/null
args="$args regions-4=$work/regions.html"
# report NAME DIR -- COMMAND... profiles COMMAND in DIR and adds its
# report's sections as NAME.
report() {
	name=$1 dir=$2
	shift 3
	(cd "$dir" && MPIFLOW_QUIET=1 "$root/bin/mpiflow" run --no-report --dir prof -- "$@" >/dev/null 2>&1)
	bin/mpiflow report -o "$work/$name.html" "$dir"/prof/*.mpiflow 2>/dev/null
	args="$args $name=$work/$name.html"
}
root=$(pwd)
if command -v lmp >/dev/null; then
	mkdir -p "$work/lammps"
	report lammps-2 "$work/lammps" -- "$MPIRUN" $MPIRUN_FLAGS -np 2 lmp -in "$root/testdata/lammps/in.lj" -var n 10 -var steps 3000 -log none
fi
if command -v hpcc >/dev/null; then
	for run in "2 1000 1 2" "16 1500 4 4"; do
		set -- $run
		mkdir -p "$work/hpcc-$1"
		scripts/hpccinf.sh "$work/hpcc-$1" "$2" "$3" "$4"
		report "hpcc-$1" "$work/hpcc-$1" -- "$MPIRUN" $MPIRUN_FLAGS -np "$1" hpcc
	done
fi
go run ./scripts/screenshots "$OUT" $args
