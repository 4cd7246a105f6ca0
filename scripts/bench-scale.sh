#!/usr/bin/env bash
# bench-scale.sh: what analysing a large job costs. For each rank count of
# SCALE_RANKS it writes a generated job of the HPCC shape
# (flowgraph/flowgen.HPCCShape: about 180 call sites in nested loops,
# polls with long-tailed run lengths, branches on data and on the rank,
# SCALE_EVENTS calls a rank within the default budget; scripts/genjob),
# then runs mpiflow stats, loops, aggregate, report, diff and scaling on it
# (the last two with the job twice, to compare their cost with loops') on one core
# (GOMAXPROCS=1) and prints, per command, the wall time and the peak RSS
# (GNU time), with the job file's size and `loops`' groups.
#
# Settings (environment): SCALE_RANKS ("16 64"), SCALE_EVENTS (2000000),
# MPIFLOW_BIN (bin/mpiflow), KEEP=1 keeps the temporary directory.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
MPIFLOW_BIN=${MPIFLOW_BIN:-$root/bin/mpiflow}
SCALE_RANKS=${SCALE_RANKS:-16 64}
SCALE_EVENTS=${SCALE_EVENTS:-2000000}
GO=${GO:-go}
for tool in /usr/bin/time "$MPIFLOW_BIN"; do
	if ! command -v "$tool" >/dev/null; then
		echo "bench-scale: $tool not found (GNU time: apt-get install time; mpiflow: make)" >&2
		exit 1
	fi
done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpiflow-bench-scale.XXXXXX")
if [ "${KEEP:-}" = 1 ]; then
	echo "bench-scale: keeping $tmp"
else
	trap 'rm -rf "$tmp"' EXIT
fi
(cd "$root" && $GO build -o "$tmp/genjob" ./scripts/genjob)

printf '%-6s %-10s %-9s %-7s' ranks events/rank file groups
cmds=(stats loops aggregate report diff scaling)
for c in "${cmds[@]}"; do printf ' %-18s' "$c s/MB"; done
echo
for n in $SCALE_RANKS; do
	job="$tmp/scale$n.mpiflow"
	echo "bench-scale: generating $n ranks of $SCALE_EVENTS calls" >&2
	"$tmp/genjob" -ranks "$n" -events "$SCALE_EVENTS" -o "$job"
	size=$(du -k "$job" | cut -f1)
	groups=$("$MPIFLOW_BIN" loops --json "$job" | jq '.groups | length')
	printf '%-6s %-10s %-9s %-7s' "$n" "$SCALE_EVENTS" "${size}K" "$groups"
	for c in "${cmds[@]}"; do
		args=("$c" "$job")
		case $c in
		report) args+=(-o "$tmp/report$n.html") ;;
		diff | scaling) args+=("$job") ;;
		esac
		if ! GOMAXPROCS=1 /usr/bin/time -f '%e %M' -o "$tmp/time" "$MPIFLOW_BIN" "${args[@]}" >/dev/null 2>"$tmp/err"; then
			echo >&2
			echo "bench-scale: mpiflow ${args[*]} failed:" >&2
			tail -5 "$tmp/err" >&2
			exit 1
		fi
		read -r secs kb <"$tmp/time"
		printf ' %-18s' "$secs/$((kb / 1024))"
	done
	echo
done
