#!/usr/bin/env bash
# bench/vs_lttng.sh [RUNS] [EVENTS] - the same 16-byte event through ringlog
# and through LTTng-UST, side by side in one process (bench/vs_lttng.c), runs
# interleaved, and the ratio.  Both record to /dev/shm with big enough
# buffers that neither loses events (each one's losses are printed); LTTng
# runs a per-user channel of 8 x 4 MiB sub-buffers, ringlog a fixed pool
# of 1024 x 16 KiB (its default maximum), category 63 off.  Then the
# disabled event: a declared event (RLOG_EVENT) and rlog_write with no
# session, the declared event and an rlog_enabled(63)-guarded
# writes in the session, and an LTTng tracepoint no session enables
# (disabled_ns, disabled_category_ns, lttng_disabled_ns and their ratios).
#
# Needs lttng-tools and LTTng-UST's headers (scripts/deps.sh --lttng): not a
# test dependency.  Without them it says so and exits 0.  Starts a session
# daemon if none is running, and stops the one it started (by its pid).
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lttng_session.sh
runs=${1:-11}
events=${2:-250000}
bin=build/src/cli/ringlog
if [ ! -x "$bin" ] || [ ! -e build/src/lib/libringlog.so ]; then
	echo "vs_lttng.sh: $bin is not built (run scripts/test.sh first)" >&2
	exit 1
fi
if ! command -v lttng >/dev/null || ! command -v lttng-sessiond >/dev/null ||
	! echo '#include <lttng/tracepoint.h>' | cc -E -x c - >/dev/null 2>&1; then
	echo "vs_lttng.sh: skipped: lttng-tools or LTTng-UST's headers are not installed (scripts/deps.sh --lttng)"
	exit 0
fi

work=$(mktemp -d /dev/shm/ringlog-vs-lttng.XXXXXX)
name="vslttng-$$"
sessiond_pid=""
cleanup() {
	lttng destroy "$name" >/dev/null 2>&1 || true
	"$bin" stop "$name" >/dev/null 2>&1 || true
	if [ -n "$sessiond_pid" ]; then
		kill "$sessiond_pid" 2>/dev/null || true
		wait "$sessiond_pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

# GNU C for LTTng's macros (statement expressions, attributes); -O2 as
# meson's debugoptimized build of ringlog.
cc -std=gnu11 -O2 -I bench -I include -o "$work/vs_lttng" bench/vs_lttng.c \
	-L build/src/lib -Wl,-rpath,"$(pwd)/build/src/lib" -lringlog -llttng-ust -ldl -lpthread

lttng_session_start "$name" "$work/lttng"
# Category 63 off: the disabled case by category (bench/vs_lttng.c).
"$bin" start "$name" -o "$work/ringlog.rlog" --buffers 1024 --mask 0x7fffffffffffffff >/dev/null

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cpus, $(uname -r)"
echo "lttng: $(lttng --version | head -1)"
echo "command: bench/vs_lttng.sh $runs $events"
out=$(RINGLOG_SESSION="$name" "$work/vs_lttng" "$runs" "$events")
echo "$out"
lttng stop "$name" >/dev/null
"$bin" stop "$name" >"$work/stop.txt"
echo "ringlog_session_events_written: $(awk -F': ' '$1 == "events_written" {print $2}' "$work/stop.txt")"
echo "ringlog_session_events_lost: $(awk -F': ' '$1 == "events_lost" {print $2}' "$work/stop.txt")"
if command -v babeltrace2 >/dev/null; then
	babeltrace2 "$work/lttng" -c sink.utils.counter >"$work/count.txt" 2>&1 || true
	recorded=$(cat "$work/count.txt" |
		awk '/Event messages/ {n=$1} END {print n+0}')  # the counter's last report
	emitted=$(echo "$out" | awk -F': ' '$1 == "lttng_events_emitted" {print $2}')
	echo "lttng_events_recorded: $recorded"
	echo "lttng_events_lost: $((emitted - recorded))"
	[ "$recorded" -gt 0 ] || { echo "vs_lttng.sh: babeltrace2 read no event:"; cat "$work/count.txt"; ls -R "$work/lttng" | head; } >&2
fi
