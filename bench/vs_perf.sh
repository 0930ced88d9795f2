#!/usr/bin/env bash
# bench/vs_perf.sh [--quick] [RUNS] [ROUND_TRIPS] - what recording the
# kernel's context switches costs (docs/PERFORMANCE.md, "System events"):
# bench_pingpong (bench/pingpong.c, two threads passing a byte through two
# pipes) untraced, under a ringlog session with `--system cswitch` and with
# `--system cswitch,wakeup`, under `perf record -e sched:sched_switch -a`
# and under `trace-cmd record -e sched:sched_switch` (the anchors, Debian's
# linux-perf and trace-cmd: scripts/deps.sh), pinned to one CPU (2 switches
# per round trip) and to two (4: each thread to idle and back).  The
# configurations are interleaved within each run; the figures are medians
# over RUNS runs (default 5 of 20000 round trips), with their range:
#
#   pingpong_Ncpu_CONF_round_trip_ns       median wall time of a round trip
#   pingpong_Ncpu_CONF_round_trip_ns_min   and _max: the range over the runs
#   pingpong_Ncpu_CONF_overhead_ns         (CONF - untraced) / switches per round trip:
#                                          what a traced switch adds
#   pingpong_Ncpu_CONF_lost                events each tracer reported lost, all runs
#   pingpong_Ncpu_ringlog_vs_perf          ringlog's round trip / perf's
#   pingpong_Ncpu_ringlog_overhead_vs_perf ringlog's overhead / perf's (and _trace_cmd)
#   storm_CONF_events_per_s, storm_CONF_lost  a switch storm (a ping-pong
#                                          pinned to each of CPU 0 and 1 for
#                                          STORM seconds): events recorded per
#                                          second and lost
#
# CONF: untraced, ringlog (cswitch), ringlog_wakeup (cswitch,wakeup), perf,
# trace_cmd.  Losses: ringlog's sys_lost from `ringlog stop`, perf's
# PERF_RECORD_LOST records (perf report -D), trace-cmd's per-CPU
# "overrun:".  An anchor that is missing or cannot run here prints
# "TOOL: skipped: why" and its keys are left out.  --quick: 1 run of 2000
# round trips and a 0.3 s storm (tests/test_bench.c).  Needs root (system
# events, perf -a); every output goes to a directory in /dev/shm.
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [ "${1:-}" = --quick ]; then
	quick=1
	shift
fi
runs=${1:-$([ $quick = 1 ] && echo 1 || echo 5)}
trips=${2:-$([ $quick = 1 ] && echo 2000 || echo 20000)}
storm=$([ $quick = 1 ] && echo 0.3 || echo 2)
bin=${RINGLOG_BIN:-build/src/cli/ringlog}
pp=${RINGLOG_BENCH_DIR:-build/bench}/bench_pingpong
for f in "$bin" "$pp"; do
	if [ ! -x "$f" ]; then
		echo "vs_perf.sh: $f is not built (run scripts/test.sh or scripts/build.sh first)" >&2
		exit 1
	fi
done

work=$(mktemp -d /dev/shm/ringlog-vs-perf.XXXXXX)
name="vsperf-$$"
cleanup() {
	"$bin" stop "$name" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT

# The anchors: each tried once on a tiny run; one that fails here says why.
confs=(untraced ringlog ringlog_wakeup)
if ! command -v perf >/dev/null; then
	echo "perf: skipped: not installed (scripts/deps.sh installs linux-perf)"
elif ! perf record -q -e sched:sched_switch -a -o "$work/try.perf" -- true >"$work/try.txt" 2>&1; then
	echo "perf: skipped: perf record fails here: $(grep -m1 . "$work/try.txt" | tr -cd '[:print:]')"
else
	confs+=(perf)
fi
if ! command -v trace-cmd >/dev/null; then
	echo "trace_cmd: skipped: not installed (scripts/deps.sh installs trace-cmd)"
elif ! trace-cmd record -q -e sched:sched_switch -o "$work/try.dat" true >"$work/try.txt" 2>&1; then
	# In a container /proc/sys/kernel/ftrace_enabled is read-only and
	# trace-cmd insists on writing it ("Can't enable ftrace").
	echo "trace_cmd: skipped: trace-cmd record fails here: $(grep -v '^ *$' "$work/try.txt" | tr '\n' ' ' | tr -cd '[:print:]' | sed 's/ *$//')"
	trace-cmd reset >/dev/null 2>&1 || true
else
	confs+=(trace_cmd)
fi

# run CONF COMMAND...: COMMAND (bench_pingpong, or the storm's two) under
# CONF; prints its output plus "lost: N" and "events: N" (what the tracer
# recorded).
run() {
	local conf=$1
	shift
	case $conf in
	untraced)
		"$@"
		echo "lost: 0"
		echo "events: 0"
		;;
	ringlog | ringlog_wakeup)
		local sys=cswitch
		[ "$conf" = ringlog_wakeup ] && sys=cswitch,wakeup
		rm -f "$work/r.rlog"
		"$bin" start "$name" -o "$work/r.rlog" --system "$sys" >/dev/null
		"$@"
		"$bin" stop "$name" 2>/dev/null >"$work/stop.txt"
		awk -F': ' '$1 == "sys_lost" {l = $2} $1 == "sys_written" {w = $2}
			END {print "lost: " l + 0; print "events: " w + 0}' "$work/stop.txt"
		;;
	perf)
		rm -f "$work/p.perf"
		perf record -q -e sched:sched_switch -a -o "$work/p.perf" -- "$@" 2>/dev/null
		perf report -D -i "$work/p.perf" 2>/dev/null |
			awk '/PERF_RECORD_SAMPLE/ {s++} /PERF_RECORD_LOST/ {l += $NF}
				END {print "lost: " l + 0; print "events: " s + 0}'
		;;
	trace_cmd)
		rm -f "$work/t.dat"
		trace-cmd record -e sched:sched_switch -o "$work/t.dat" "$@" 2>/dev/null >"$work/tc.txt"
		grep -E '^[a-z_]+: [0-9.]+$' "$work/tc.txt" | grep -vE '^(entries|overrun|commit overrun|bytes|read events|dropped events):' || true
		awk '/^overrun:/ {o += $2} /^dropped events:/ {o += $3} /^entries:/ {e += $2}
			END {print "lost: " o + 0; print "events: " e + 0}' "$work/tc.txt"
		;;
	esac
}

val() { awk -F': ' -v k="$2" '$1 == k {print $2}' <<<"$1"; }

cpusets=("0")
[ "$(nproc)" -ge 2 ] && cpusets+=("0,1")
declare -A rt lost
for _ in $(seq "$runs"); do
	for cpus in "${cpusets[@]}"; do
		for conf in "${confs[@]}"; do
			out=$(run "$conf" "$pp" "$cpus" "$trips")
			rt[$cpus,$conf]+="$(val "$out" round_trip_ns) "
			lost[$cpus,$conf]=$((${lost[$cpus,$conf]:-0} + $(val "$out" lost)))
		done
	done
done

# median, min, max of the numbers in $1
stats() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{v[NR] = $1}
	END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; printf "%.1f %.1f %.1f\n", m, v[1], v[NR]}'; }
# a / b; "n/a" unless both are above 0 (under noise an overhead can come
# out at or below 0, and its ratio means nothing)
div() { awk -v a="$1" -v b="$2" 'BEGIN {if (a <= 0 || b <= 0) print "n/a"; else printf "%.3g\n", a / b}'; }

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cpus, $(uname -r)"
echo "command: bench/vs_perf.sh $([ $quick = 1 ] && echo '--quick ')$runs $trips"
echo "runs: $runs"
echo "round_trips_per_run: $trips"
for cpus in "${cpusets[@]}"; do
	n=$([ "$cpus" = 0 ] && echo 1 || echo 2)
	sw=$((2 * n))
	p=pingpong_${n}cpu
	echo "${p}_switches_per_round_trip: $sw"
	declare -A med=() ovh=()
	for conf in "${confs[@]}"; do
		read -r m lo hi <<<"$(stats "${rt[$cpus,$conf]}")"
		med[$conf]=$m
		echo "${p}_${conf}_round_trip_ns: $m"
		echo "${p}_${conf}_round_trip_ns_min: $lo"
		echo "${p}_${conf}_round_trip_ns_max: $hi"
		[ "$conf" = untraced ] && continue
		ovh[$conf]=$(awk -v a="$m" -v b="${med[untraced]}" -v s="$sw" 'BEGIN {printf "%.1f\n", (a - b) / s}')
		echo "${p}_${conf}_overhead_ns: ${ovh[$conf]}"
		echo "${p}_${conf}_lost: ${lost[$cpus,$conf]}"
	done
	for anchor in perf trace_cmd; do
		[ -n "${med[$anchor]:-}" ] || continue
		echo "${p}_ringlog_vs_${anchor}: $(div "${med[ringlog]}" "${med[$anchor]}")"
		echo "${p}_ringlog_overhead_vs_${anchor}: $(div "${ovh[ringlog]}" "${ovh[$anchor]}")"
	done
done

# The storm: a ping-pong on each CPU at once, STORM seconds, both inside
# the traced command; events per second of the first one's time.
echo "storm_seconds: $storm"
storm_cmd=("$pp" 0 --seconds "$storm")
if [ ${#cpusets[@]} -ge 2 ]; then
	storm_cmd=(bash -c '"$1" 1 --seconds "$2" >/dev/null & "$1" 0 --seconds "$2"; wait' storm "$pp" "$storm")
fi
for conf in "${confs[@]}"; do
	[ "$conf" = untraced ] && continue
	out=$(run "$conf" "${storm_cmd[@]}")
	secs=$(val "$out" seconds)
	echo "storm_${conf}_events_per_s: $(awk -v e="$(val "$out" events)" -v s="$secs" 'BEGIN {printf "%.0f\n", e / s}')"
	echo "storm_${conf}_lost: $(val "$out" lost)"
done
