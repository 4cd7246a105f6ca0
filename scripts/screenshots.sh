#!/bin/sh
# Screenshots of every section of the report at 4 and 64 ranks of the halo
# app, for the README (docs/screenshots). Not part of test or CI:
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
go run ./scripts/screenshots "$OUT" $args
