#!/usr/bin/env bash
# bench/total_cost.sh [--quick] - what a traced event costs in total: the
# producer's CPU per event plus the CPU per event of the process that takes
# the events away (ringlog's capture daemon, LTTng's consumer daemon, perf
# record), for the same 16-byte event, each against the floor (rdtsc and a
# 16-byte store) measured in the same invocation.  docs/PERFORMANCE.md's
# first table comes from one run of it.
#
#   floor         bench/total_cost.c floor: no tracer
#   ringlog       rlog_write into a session of 1024 x 16 KiB buffers on
#                 /dev/shm; the daemon's CPU from its CPU-time clock, from
#                 before the first event until it has drained the last
#   lttng         an LTTng-UST tracepoint, per-user channel of 8 x 4 MiB
#                 sub-buffers on /dev/shm; every lttng-consumerd's CPU from
#                 before the first event until `lttng stop` has flushed
#                 (scripts/deps.sh --lttng: never a test dependency)
#   perf_uprobe   `perf probe -x` on a function the program calls per
#                 event, `perf record` of that probe (root): the producer's
#                 CPU includes the kernel's trap and sample; perf record's
#                 own CPU is its process tree's (/usr/bin/time) less the
#                 traced program's
# Each producer writes CHUNKS chunks 50 ms apart, so that each consumer
# keeps up (losses are counted and printed).  A tracer that cannot run
# here prints "TRACER: skipped: why" and the rest still run; exit 0.
# --quick (tests/test_bench.c): 3 chunks of 20,000 events (2,000 probed).
# RINGLOG_TOTAL_COST_NO_LTTNG=1 takes the no-LTTng path (the test does);
# RINGLOG_BIN names the ringlog binary of the build to use.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lttng_session.sh
chunks=21 events=250000 probe_events=10000
if [ "${1:-}" = --quick ]; then
	chunks=3 events=20000 probe_events=2000
elif [ -n "${1:-}" ]; then
	echo "total_cost.sh: unknown argument: $1 (--quick or nothing)" >&2
	exit 2
fi
# The build: RINGLOG_BIN (the tests set it) or build/; the library beside it.
bin=${RINGLOG_BIN:-build/src/cli/ringlog}
lib=$(cd "$(dirname "$bin")/../lib" 2>/dev/null && pwd || true)
if [ ! -x "$bin" ] || [ ! -e "$lib/libringlog.so" ]; then
	echo "total_cost.sh: $bin is not built (meson setup build && ninja -C build)" >&2
	exit 1
fi

lttng_why=""
if [ -n "${RINGLOG_TOTAL_COST_NO_LTTNG:-}" ]; then
	lttng_why="RINGLOG_TOTAL_COST_NO_LTTNG is set"
elif ! command -v lttng >/dev/null || ! command -v lttng-sessiond >/dev/null ||
	! echo '#include <lttng/tracepoint.h>' | cc -E -x c - >/dev/null 2>&1; then
	lttng_why="lttng-tools or LTTng-UST's headers are not installed (scripts/deps.sh --lttng)"
fi

work=$(mktemp -d /dev/shm/ringlog-total-cost.XXXXXX)
name="totalcost-$$"
sessiond_pid=""
probe_added=""
cleanup() {
	[ -z "$lttng_why" ] && lttng destroy "$name" >/dev/null 2>&1 || true
	"$bin" stop "$name" >/dev/null 2>&1 || true
	[ -n "$probe_added" ] && perf probe -q -d 'probe_total_cost:*' >/dev/null 2>&1 || true
	if [ -n "$sessiond_pid" ]; then
		kill "$sessiond_pid" 2>/dev/null || true
		wait "$sessiond_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

tc="$work/total_cost"
# GNU C for LTTng's macros; -O2 as meson's debugoptimized build of ringlog.
ccargs=(-std=gnu11 -O2 -I bench -I include -o "$tc" bench/total_cost.c
	-L "$lib" -Wl,-rpath,"$lib" -lringlog -lpthread)
if [ -z "$lttng_why" ]; then
	cc "${ccargs[@]}" -DWITH_LTTNG -llttng-ust -ldl
else
	cc "${ccargs[@]}"
fi

# report PREFIX CONSUMER_KEY LABEL OUT DAEMON_NS RECORDED EMITTED: prints a
# tracer's figures (the producer's from total_cost's output OUT) and adds
# its row to the table.
report() {
	local prefix=$1 ckey=$2 label=$3 out=$4 daemon=$5 recorded=$6 emitted=$7
	local prod total
	prod=$(echo "$out" | kv producer_cpu_ns)
	total=$(awk -v a="$prod" -v b="$daemon" 'BEGIN { printf "%.2f", a + b }')
	echo "${prefix}_producer_ns: $prod"
	echo "${prefix}_producer_wall_ns: $(echo "$out" | kv producer_ns)"
	echo "$ckey: $daemon"
	echo "${prefix}_total_ns: $total"
	echo "${prefix}_total_vs_floor: $(div "$total" "$floor")"
	echo "${prefix}_events_recorded: $recorded"
	echo "${prefix}_events_lost: $((emitted - recorded))"
	rows+=("| $label | $prod | $daemon | $total | $(div "$total" "$floor") | $recorded ($((emitted - recorded))) |")
}
kv() { awk -F': ' -v k="$1" '$1 == k {print $2; exit}'; }
cpu_of() { "$tc" cpu "$@"; }
# a / b with 2 decimals (awk: bash has no floating point).
div() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "nan" }'; }

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cpus, $(uname -r)"
echo "load_average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "command: bench/total_cost.sh${1:+ $1}"
echo "chunks: $chunks"
echo "events_per_chunk: $events"

# The floor.
out=$("$tc" floor "$chunks" "$events")
floor=$(echo "$out" | kv producer_cpu_ns)
echo "floor_ns: $floor"
echo "floor_wall_ns: $(echo "$out" | kv producer_ns)"
rows=("| floor: rdtsc + 16-byte store | $floor | 0 | $floor | 1.00 | $((chunks * events)) (0) |")

# ringlog.
"$bin" start "$name" -o "$work/ringlog.rlog" --buffers 1024 >/dev/null
dpid=$("$bin" query "$name" | kv daemon_pid)
c0=$(cpu_of "$dpid")
out=$(RINGLOG_SESSION="$name" "$tc" ringlog "$chunks" "$events")
written=$(echo "$out" | kv ringlog_written)
# Until the daemon has drained every event written (rlog_detach handed the
# last buffer over): its CPU then covers all of them.
for _ in $(seq 100); do
	[ "$("$bin" query "$name" | kv events_written)" = "$written" ] && break
	sleep 0.05
done
c1=$(cpu_of "$dpid")
"$bin" stop "$name" >"$work/stop.txt"
prod=$(echo "$out" | kv producer_cpu_ns)
daemon=$(div "$((c1 - c0))" "$written")
total=$(awk -v a="$prod" -v b="$daemon" 'BEGIN { printf "%.2f", a + b }')
lost=$(kv events_lost <"$work/stop.txt")
echo "ringlog_producer_ns: $prod"
echo "ringlog_producer_wall_ns: $(echo "$out" | kv producer_ns)"
echo "ringlog_daemon_cpu_ns: $daemon"
echo "ringlog_total_ns: $total"
echo "ringlog_total_vs_floor: $(div "$total" "$floor")"
echo "ringlog_events_written: $(kv events_written <"$work/stop.txt")"
echo "ringlog_events_lost: $lost"
rows+=("| ringlog (rlog_write; capture daemon) | $prod | $daemon | $total | $(div "$total" "$floor") | $written ($lost) |")

# LTTng-UST.
if [ -n "$lttng_why" ]; then
	echo "lttng: skipped: $lttng_why"
	rows+=("| LTTng-UST | skipped: $lttng_why | | | | |")
else
	lttng_session_start "$name" "$work/lttng"
	# The consumer daemons exist once a session has started.
	cpids=$(pgrep -x lttng-consumerd | tr '\n' ' ' || true)
	if [ -z "$cpids" ]; then
		echo "lttng: skipped: no lttng-consumerd process after lttng start"
		rows+=("| LTTng-UST | skipped: no consumer daemon | | | | |")
	else
		# shellcheck disable=SC2086
		c0=$(cpu_of $cpids)
		out=$("$tc" lttng "$chunks" "$events")
		lttng stop "$name" >/dev/null # waits until the consumer has flushed
		# shellcheck disable=SC2086
		c1=$(cpu_of $cpids)
		emitted=$(echo "$out" | kv events)
		recorded=$emitted
		if command -v babeltrace2 >/dev/null; then
			recorded=$(babeltrace2 "$work/lttng" -c sink.utils.counter 2>/dev/null |
				awk '/Event messages/ {n=$1} END {print n+0}')
		fi
		report lttng lttng_consumerd_cpu_ns "LTTng-UST (tracepoint; lttng-consumerd)" "$out" \
			"$(div "$((c1 - c0))" "$recorded")" "$recorded" "$emitted"
	fi
	lttng destroy "$name" >/dev/null 2>&1 || true
fi

# perf record of a uprobe.
perf_why=""
if [ "$(id -u)" -ne 0 ]; then
	perf_why="not root (perf probe -x needs root)"
elif ! command -v perf >/dev/null; then
	perf_why="perf is not installed (linux-perf)"
elif [ ! -x /usr/bin/time ]; then
	perf_why="/usr/bin/time is not installed (perf record's CPU is measured with it)"
elif ! msg=$(perf probe -q -x "$tc" --add 'total_cost_probe a=%di:u64 b=%si:u64' 2>&1); then
	perf_why="perf probe -x failed: $(echo "$msg" | head -1)"
fi
if [ -z "$perf_why" ]; then
	probe_added=1
	/usr/bin/time -f '%U %S' -o "$work/time.txt" \
		perf record -q -o "$work/perf.data" -e 'probe_total_cost:total_cost_probe' -- \
		"$tc" probe "$chunks" "$probe_events" >"$work/probe.txt" 2>"$work/perf.err" ||
		perf_why="perf record failed: $(head -1 "$work/perf.err")"
fi
if [ -n "$perf_why" ]; then
	echo "perf_uprobe: skipped: $perf_why"
	rows+=("| perf record of a uprobe | skipped: $perf_why | | | | |")
else
	out=$(cat "$work/probe.txt")
	emitted=$(echo "$out" | kv events)
	recorded=$(perf script -i "$work/perf.data" -F event 2>/dev/null | grep -c total_cost_probe || true)
	tree_ns=$(awk '{ printf "%.0f", ($1 + $2) * 1e9 }' "$work/time.txt")
	self_ns=$(echo "$out" | kv process_cpu_ns)
	echo "perf_uprobe_events_per_chunk: $probe_events"
	report perf_uprobe perf_record_cpu_ns "perf record of a uprobe (perf probe -x)" "$out" \
		"$(div "$((tree_ns - self_ns))" "$recorded")" "$recorded" "$emitted"
fi

# The table (to stderr: stdout stays "key: value" lines).
{
	echo "| tracer | producer CPU ns/event | consumer CPU ns/event | total ns/event | total / floor | events recorded (lost) |"
	echo "| --- | --- | --- | --- | --- | --- |"
	printf '%s\n' "${rows[@]}"
} >&2
