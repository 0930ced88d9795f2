#!/usr/bin/env bash
# bench/stats_vs_babeltrace.sh [EVENTS] - how fast ringlog reads a large
# trace, next to babeltrace2 reading the same trace's CTF export, in one
# run (the figures in docs/PERFORMANCE.md).
#
# Records EVENTS (default 52,000,000) 16-byte events from two producer
# processes into a real session, converts the log to CTF, then times with
# hyperfine:
#   ringlog stats FILE                           (3 runs)
#   ringlog dump FILE > /dev/null                (3 runs)
#   babeltrace2 CTF -c sink.utils.counter        (2 runs)
# and prints events/s for each and the stats/babeltrace2 ratio.
# Needs build/ (scripts/test.sh) and hyperfine and babeltrace2 (Debian).
set -euo pipefail
cd "$(dirname "$0")/.."
events=${1:-52000000}
bin=$PWD/build/src/cli/ringlog
for tool in hyperfine babeltrace2; do
	command -v "$tool" >/dev/null || { echo "stats_vs_babeltrace.sh: needs $tool (apt-get install $tool)" >&2; exit 1; }
done
[ -x "$bin" ] || { echo "stats_vs_babeltrace.sh: build first (scripts/test.sh)" >&2; exit 1; }

dir=$(mktemp -d /tmp/rlog-bench.XXXXXX)
name=bench-stats-$$
cleanup() { "$bin" stop "$name" >/dev/null 2>&1 || true; rm -rf "$dir"; }
trap cleanup EXIT

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cpus"
echo "recording $events events ..."
"$bin" start "$name" -o "$dir/big.rlog" --buffers 16384 >/dev/null
per=$((events / 2 / 1000000))
for p in 1 2; do
	(for i in $(seq "$per"); do
		"$bin" emit "$name" 1024 --count 1000000 --payload 0011223344556677 >/dev/null
	done) &
done
wait
"$bin" stop "$name" | grep -E '^(events_written|events_lost|file_bytes):'
n=$(( per * 2 * 1000000 ))
echo "converting to CTF ..."
"$bin" convert "$dir/big.rlog" --to ctf -o "$dir/ctf" >/dev/null

mean() { # hyperfine CSV -> mean seconds of the first command
	awk -F, 'NR == 2 { print $2 }' "$1"
}
hyperfine --style basic --warmup 1 --runs 3 --export-csv "$dir/stats.csv" \
	"$bin stats $dir/big.rlog" >/dev/null
hyperfine --style basic --runs 3 --export-csv "$dir/dump.csv" \
	"$bin dump $dir/big.rlog > /dev/null" >/dev/null
hyperfine --style basic --runs 2 --export-csv "$dir/bt.csv" \
	"babeltrace2 $dir/ctf -c sink.utils.counter" >/dev/null
ts=$(mean "$dir/stats.csv") td=$(mean "$dir/dump.csv") tb=$(mean "$dir/bt.csv")
awk -v n="$n" -v ts="$ts" -v td="$td" -v tb="$tb" 'BEGIN {
	printf "events: %d\n", n
	printf "stats_s: %.3f\nstats_events_per_s: %.0f\n", ts, n / ts
	printf "dump_s: %.3f\ndump_lines_per_s: %.0f\n", td, n / td
	printf "babeltrace2_counter_s: %.3f\nbabeltrace2_events_per_s: %.0f\n", tb, n / tb
	printf "stats_vs_babeltrace2: %.1f\n", tb / ts
}'
