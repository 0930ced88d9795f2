#!/bin/sh
# drain_threads.sh - the daemon with one and with two drain threads
# (`ringlog start --drain-threads`) under the same paced load, run by run
# (docs/PERFORMANCE.md, "Several drain threads"): two producers
# (bench/drain_load.c, one thread each, batches of 10,000 events then a
# sleep) at RATE/2 events/s each for SECONDS, into a session of 1024 x 16
# KiB buffers with its file on tmpfs.  Prints, per run, the events written
# and lost (from `ringlog stop`) and the daemon's CPU per event written,
# its own thread's and the extra threads' (from /proc/PID/task/*/stat).
#
#   bench/drain_threads.sh RATE SECONDS RUNS [THREADS...]   (default THREADS: 1 2)
set -eu
rate=${1:?RATE}; secs=${2:?SECONDS}; runs=${3:-3}; shift 3 || true
threads=${*:-1 2}
root=$(cd "$(dirname "$0")/.." && pwd)
rl=$root/build/src/cli/ringlog
dl=$(mktemp /tmp/drain_load.XXXXXX)
cc -O2 -std=c11 -I "$root/include" "$root/bench/drain_load.c" -L "$root/build/src/lib" \
	-Wl,-rpath,"$root/build/src/lib" -lringlog -o "$dl"
half=$(awk "BEGIN { printf \"%d\", $rate / 2 }")
ticks() { # utime + stime of task $1 (clock ticks)
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "$1/stat"
}
r=1
while [ "$r" -le "$runs" ]; do
	for t in $threads; do
		name=dt$$_$t
		file=/dev/shm/$name.rlog
		out=$("$rl" start "$name" -o "$file" --buffers 1024 --force --drain-threads "$t")
		pid=$(echo "$out" | awk '/^daemon_pid:/ { print $2 }')
		RINGLOG_SESSION=$name "$dl" "$half" "$secs" > /dev/null &
		a=$!
		RINGLOG_SESSION=$name "$dl" "$half" "$secs" > /dev/null &
		b=$!
		wait $a $b
		main=0; extra=0
		for task in /proc/$pid/task/*; do
			n=$(ticks "$task")
			if [ "$(basename "$task")" = "$pid" ]; then main=$n; else extra=$((extra + n)); fi
		done
		stats=$("$rl" stop "$name")
		rm -f "$file"
		w=$(echo "$stats" | awk '/^events_written:/ { print $2 }')
		l=$(echo "$stats" | awk '/^events_lost:/ { print $2 }')
		hz=$(getconf CLK_TCK)
		awk -v t="$t" -v r="$r" -v w="$w" -v l="$l" -v m="$main" -v x="$extra" -v hz="$hz" 'BEGIN {
			printf "run %d drain_threads %d events_written %d events_lost %d main_ns_per_event %.2f extra_ns_per_event %.2f\n",
				r, t, w, l, w ? m / hz * 1e9 / w : 0, w ? x / hz * 1e9 / w : 0 }'
	done
	r=$((r + 1))
done
rm -f "$dl"
