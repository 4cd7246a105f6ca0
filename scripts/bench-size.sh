#!/usr/bin/env bash
# bench-size.sh APP...: profiles real applications with 2 ranks under
# `mpiflow run` and prints one table, a column per application, of what the
# profile costs and how faithful it is. APP is lammps (LJ melt,
# testdata/lammps/in.lj with a 10x10x10 box (4000 atoms), STEPS steps, run
# with --trace so the full traces are written) or hpcc (N=HPCC_N on a 1x2
# grid, run ROUNDS times bare then under mpiflow) or irregular
# (testdata/apps/irregular at each of ITERS iterations, with --trace).
#
# Rows: the job file's bytes, by part when `mpiflow stats --json` has
# "file_bytes"; events per rank; for lammps the recorded full traces
# (.mftrace) and their OTF2 export (`mpiflow trace --truth`, or the rebuilt
# trace's export where --truth is missing: the row says so), the OTF2/job
# ratio and the summary of `mpiflow fidelity --json` where it exists; for
# hpcc the wall time bare and under mpiflow and that of MPIRandomAccess,
# medians over the rounds, and their ratios. "n/a": not available with this
# mpiflow, "-": not measured for that application.
#
# Settings (environment): MPIFLOW_BIN (default bin/mpiflow), MPIRUN
# (mpirun), MPIRUN_FLAGS (--oversubscribe), STEPS (3000), HPCC_N (4000),
# ITERS ("3000 10000 30000"),
# ROUNDS (3), KEEP=1 keeps the temporary directory. An application that is not
# installed is skipped with a message; a run that fails ends the script
# with its exit status.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
MPIFLOW_BIN=${MPIFLOW_BIN:-$root/bin/mpiflow}
MPIRUN=${MPIRUN:-mpirun}
MPIRUN_FLAGS=${MPIRUN_FLAGS---oversubscribe}
STEPS=${STEPS:-3000}
HPCC_N=${HPCC_N:-4000}
ITERS=${ITERS:-3000 10000 30000}
ROUNDS=${ROUNDS:-3}
case $ROUNDS in '' | *[!0-9]* | 0)
	echo "bench-size: ROUNDS must be a positive integer, not '$ROUNDS'" >&2
	exit 2
	;;
esac

if [ $# -eq 0 ]; then
	echo "usage: $0 lammps|hpcc|irregular..." >&2
	exit 2
fi
for tool in jq "$MPIRUN" "$MPIFLOW_BIN"; do
	if ! command -v "$tool" >/dev/null; then
		echo "bench-size: $tool not found (jq: apt-get install jq; mpiflow: make)" >&2
		exit 1
	fi
done
# The runs happen in other directories.
MPIFLOW_BIN=$(realpath "$(command -v "$MPIFLOW_BIN")")

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mpiflow-bench-size.XXXXXX")
if [ "${KEEP:-}" = 1 ]; then
	echo "bench-size: keeping $tmp"
else
	trap 'rm -rf "$tmp"' EXIT
fi

# The table: rows[] are the row names in order, cell[app,row] the values.
declare -a rows=() apps=()
declare -A cell=() seen=()
put() { # app row value
	if [ -z "${seen[$2]:-}" ]; then
		seen[$2]=1
		rows+=("$2")
	fi
	cell[$1,$2]=$3
}

# now prints the time in seconds with ms.
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }

# job_file DIR prints the one job file mpiflow run wrote in DIR.
job_file() {
	local f
	f=$(find "$1" -maxdepth 1 -name '*.mpiflow' ! -name '*.partial.mpiflow')
	if [ -z "$f" ] || [ "$(printf '%s\n' "$f" | wc -l)" -ne 1 ]; then
		echo "bench-size: want one job file in $1, found: ${f:-none}" >&2
		exit 1
	fi
	printf '%s\n' "$f"
}

# profile_rows APP FILE adds the rows every application has.
profile_rows() {
	local app=$1 file=$2 stats
	stats="$tmp/$app.stats.json"
	"$MPIFLOW_BIN" stats --json "$file" >"$stats"
	put "$app" "job file bytes" "$(stat -c %s "$file")"
	local part
	for part in graph sequences timing other; do
		put "$app" "  $part bytes" "$(jq -r --arg p "$part" '.file_bytes[$p] // "n/a"' "$stats")"
	done
	put "$app" "events per rank" "$(jq -r '[.ranks[] | if .thread > 0 then "\(.rank).\(.thread):\(.events)" else "\(.rank):\(.events)" end] | join(" ")' "$stats")"
}

# run_mpiflow APP DIR ARGS... runs the job under mpiflow run in DIR and
# sets job to its job file and secs to its wall time.
run_mpiflow() {
	local app=$1 dir=$2 t0 t1
	shift 2
	t0=$(now)
	# MPIRUN_FLAGS is a list of options: split on purpose.
	# shellcheck disable=SC2086
	(cd "$dir" && "$MPIFLOW_BIN" run --quiet --no-report --dir "$dir/prof" "$@" -- $MPIRUN $MPIRUN_FLAGS -np 2 "${cmd[@]}" \
		>"$tmp/$app.mpiflow.log" 2>&1) || {
		rc=$?
		echo "bench-size: $app under mpiflow failed (exit $rc); the last lines of $tmp/$app.mpiflow.log:" >&2
		tail -20 "$tmp/$app.mpiflow.log" >&2
		exit $rc
	}
	t1=$(now)
	secs=$(elapsed "$t0" "$t1")
	job=$(job_file "$dir/prof")
}

lammps() {
	if ! command -v lmp >/dev/null; then
		echo "bench-size: lammps skipped: lmp not found (Debian: apt-get install lammps)"
		return
	fi
	local d="$tmp/lammps" otf2 note=""
	mkdir -p "$d"
	cmd=(lmp -in "$root/testdata/lammps/in.lj" -var n 10 -var steps "$STEPS" -log none)
	echo "bench-size: LAMMPS LJ melt, 2 ranks, $STEPS steps, with --trace"
	run_mpiflow lammps "$d" --trace
	apps+=(lammps)
	put lammps "run" "LJ melt $STEPS steps"
	put lammps "time under mpiflow (s)" "$secs"
	profile_rows lammps "$job"
	put lammps "full traces (.mftrace) bytes" "$(cat "${job%.mpiflow}".rank*.mftrace | wc -c)"
	otf2="$d/otf2"
	if "$MPIFLOW_BIN" trace --help | grep -- '--truth' >/dev/null; then
		"$MPIFLOW_BIN" trace "$job" --truth --format otf2 -o "$otf2/traces.otf2" >/dev/null
	else
		note=" (rebuilt trace: no --truth)"
		"$MPIFLOW_BIN" trace "$job" --format otf2 -o "$otf2/traces.otf2" >/dev/null
	fi
	local ob jb
	ob=$(du -sb "$otf2" | cut -f1)
	jb=$(stat -c %s "$job")
	put lammps "OTF2 bytes$note" "$ob"
	put lammps "OTF2 / job file" "$(awk -v a="$ob" -v b="$jb" 'BEGIN { printf "%.1f", a / b }')"
	fidelity_rows lammps "$job"
}

# fidelity_rows APP FILE adds the summary of `mpiflow fidelity --json` of
# FILE, whose full traces are beside it.
fidelity_rows() {
	local app=$1 fid="$tmp/$1.fidelity.json"
	if ! "$MPIFLOW_BIN" fidelity --help >/dev/null 2>&1; then
		for r in "max MPI share error (pp)" "max call share error (pp)" "largest start error (ms)" "event order" "aggregate same at p"; do
			put "$app" "$r" "n/a"
		done
		return
	fi
	"$MPIFLOW_BIN" fidelity "$2" --json >"$fid"
	put "$app" "max MPI share error (pp)" "$(jq -r '.max_mpi_share_error_pp * 100 | round / 100' "$fid")"
	put "$app" "max call share error (pp)" "$(jq -r '"\(.max_call_share_error_pp * 100 | round / 100) (\(.worst_call))"' "$fid")"
	put "$app" "largest start error (ms)" "$(jq -r '.start_error_ns.max / 1e4 | round / 100' "$fid")"
	put "$app" "event order" "$(jq -r 'if .order_identical then "same" elif .order_identical_up_to_runs then "same up to run lengths" else "differs" end' "$fid")"
	put "$app" "approximate run lengths" "$(jq -r '[.ranks[] | .budget.approximate // 0] | add' "$fid")"
	put "$app" "aggregate same at p" "$(jq -r '[.aggregate[] | "\(.p):\(if .same then "yes" elif .equivalent then "tie" else "no" end)"] | join(" ")' "$fid")"
}

# irregular runs testdata/apps/irregular (built by make apps into
# build/apps) with 2 ranks and --trace at each of ITERS iterations, a
# column each.
irregular() {
	local exe="$root/build/apps/irregular" n d
	if [ ! -x "$exe" ]; then
		echo "bench-size: irregular skipped: $exe not found (make apps)"
		return
	fi
	for n in $ITERS; do
		d="$tmp/irregular.$n"
		mkdir -p "$d"
		cmd=("$exe" "$n")
		echo "bench-size: irregular, 2 ranks, $n iterations, with --trace"
		run_mpiflow "irregular $n" "$d" --trace
		apps+=("irregular $n")
		put "irregular $n" "run" "$n iterations"
		put "irregular $n" "time under mpiflow (s)" "$secs"
		profile_rows "irregular $n" "$job"
		fidelity_rows "irregular $n" "$job"
	done
}

# hpccinf DIR writes HPCC's input for N=HPCC_N on a 1x2 grid
# (scripts/hpccinf.sh).
hpccinf() {
	"$root/scripts/hpccinf.sh" "$1" "$HPCC_N" 1 2
}

# run_bare APP DIR runs the job bare in DIR and sets secs to its wall time.
run_bare() {
	local app=$1 dir=$2 t0 t1 rc
	t0=$(now)
	# shellcheck disable=SC2086
	(cd "$dir" && $MPIRUN $MPIRUN_FLAGS -np 2 "${cmd[@]}" >"$tmp/$app.bare.log" 2>&1) || {
		rc=$?
		echo "bench-size: $app failed (exit $rc); the last lines of $tmp/$app.bare.log:" >&2
		tail -20 "$tmp/$app.bare.log" >&2
		exit $rc
	}
	t1=$(now)
	secs=$(elapsed "$t0" "$t1")
}

# median FORMAT VALUE... prints the median of the values.
median() {
	local fmt=$1
	shift
	printf '%s\n' "$@" | sort -g | awk -v fmt="$fmt" '{ v[NR] = $1 }
		END { printf fmt "\n", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# hpcc_value FILE NAME prints NAME's value from the summary of HPCC's
# report FILE, and fails when it is not there.
hpcc_value() {
	local v
	v=$(sed -n "s/^$2=//p" "$1")
	if [ -z "$v" ]; then
		echo "bench-size: no $2 in $1" >&2
		exit 1
	fi
	printf '%s\n' "$v"
}

# HPCC, ROUNDS times bare then under mpiflow. Rows: the medians of the wall
# times and of MPIRandomAccess's (plain and LCG) update loop times, and the
# median over the rounds of each round's ratio mpiflow / bare; the
# MPIRandomAccess ratios are of the time per update, as HPCC stops the
# updates early when they take longer than its time bound (60 s here). The
# job file rows are the last round's.
hpcc() {
	if ! command -v hpcc >/dev/null; then
		echo "bench-size: hpcc skipped: hpcc not found (Debian: apt-get install hpcc)"
		return
	fi
	local i bare d out m tb ub tm um
	local -a wall_bare=() wall_mpiflow=() wall_ratio=()
	local -A ra=() # ra[metric,bare|mpiflow|ratio] lists the rounds' values
	local metrics=(MPIRandomAccess MPIRandomAccess_LCG)
	cmd=(hpcc)
	echo "bench-size: HPCC N=$HPCC_N, 2 ranks (1x2), $ROUNDS rounds of bare then under mpiflow"
	for ((i = 1; i <= ROUNDS; i++)); do
		echo "bench-size: hpcc round $i of $ROUNDS"
		bare="$tmp/hpcc-bare.$i" d="$tmp/hpcc.$i"
		mkdir -p "$bare" "$d"
		hpccinf "$bare"
		hpccinf "$d"
		run_bare hpcc "$bare"
		wall_bare+=("$secs")
		run_mpiflow hpcc "$d"
		wall_mpiflow+=("$secs")
		wall_ratio+=("$(awk -v a="${wall_bare[-1]}" -v b="$secs" 'BEGIN { print b / a }')")
		# hpcc exits 0 when its input is wrong, so its report must be complete.
		for out in "$bare/hpccoutf.txt" "$d/hpccoutf.txt"; do
			if ! grep -q "End of HPC Challenge tests" "$out"; then
				echo "bench-size: hpcc did not finish its tests (round $i); the end of $out:" >&2
				tail -5 "$out" >&2
				exit 1
			fi
		done
		for m in "${metrics[@]}"; do
			tb=$(hpcc_value "$bare/hpccoutf.txt" "${m}_time")
			ub=$(hpcc_value "$bare/hpccoutf.txt" "${m}_ExeUpdates")
			tm=$(hpcc_value "$d/hpccoutf.txt" "${m}_time")
			um=$(hpcc_value "$d/hpccoutf.txt" "${m}_ExeUpdates")
			ra[$m,bare]+=" $tb"
			ra[$m,mpiflow]+=" $tm"
			ra[$m,ratio]+=" $(awk -v tb="$tb" -v ub="$ub" -v tm="$tm" -v um="$um" 'BEGIN { print (tm / um) / (tb / ub) }')"
		done
		echo "bench-size: hpcc round $i: wall time bare ${wall_bare[-1]} s, under mpiflow $secs s;" \
			"MPIRandomAccess_time bare ${ra[MPIRandomAccess,bare]##* } s, under mpiflow ${ra[MPIRandomAccess,mpiflow]##* } s"
	done
	apps+=(hpcc)
	put hpcc "run" "N=$HPCC_N 1x2, $ROUNDS rounds"
	put hpcc "time bare (s)" "$(median %.2f "${wall_bare[@]}")"
	put hpcc "time under mpiflow (s)" "$(median %.2f "${wall_mpiflow[@]}")"
	put hpcc "time mpiflow / bare" "$(median %.3f "${wall_ratio[@]}")"
	for m in "${metrics[@]}"; do
		# The lists are split on purpose.
		# shellcheck disable=SC2086
		{
			put hpcc "${m}_time bare (s)" "$(median %.3f ${ra[$m,bare]})"
			put hpcc "${m}_time under mpiflow (s)" "$(median %.3f ${ra[$m,mpiflow]})"
			put hpcc "$m mpiflow / bare (per update)" "$(median %.3f ${ra[$m,ratio]})"
		}
	done
	profile_rows hpcc "$job"
}

for app in "$@"; do
	case $app in
	lammps) lammps ;;
	hpcc) hpcc ;;
	irregular) irregular ;;
	*)
		echo "bench-size: unknown application $app (lammps, hpcc or irregular)" >&2
		exit 2
		;;
	esac
done
[ ${#apps[@]} -gt 0 ] || exit 0

echo
{
	printf '%s' "measure"
	for a in "${apps[@]}"; do printf '\t%s' "$a"; done
	printf '\n'
	for r in "${rows[@]}"; do
		printf '%s' "$r"
		for a in "${apps[@]}"; do printf '\t%s' "${cell[$a,$r]:--}"; done
		printf '\n'
	done
} | awk -F '\t' '
{ for (i = 1; i <= NF; i++) { c[NR, i] = $i; if (length($i) > w[i]) w[i] = length($i) } n = NF }
END { for (r = 1; r <= NR; r++) { for (i = 1; i <= n; i++) printf("%-" w[i] "s%s", c[r, i], i < n ? "  " : "\n") } }'
