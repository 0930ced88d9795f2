#!/bin/sh
# collect_lag.sh - how far behind `ringlog collect --follow` runs at a steady
# load (docs/PERFORMANCE.md, "Multi-host sinks"): Debian's nats-server
# (JetStream, its store in /dev/shm) on loopback; a session with
# --sink nats://; `ringlog emit` writing COUNT 8-byte events every 100 ms
# for SECONDS seconds; every 250 ms the local file's size and the collected
# file's size (the bytes the collector has not written yet: its lag).
# Prints the median and the largest lag in bytes and in seconds of load,
# and the time from stop to the collected file holding everything.
#
#   bench/collect_lag.sh build/src/cli/ringlog [COUNT] [SECONDS]
set -eu
bin=$1
count=${2:-20000}
secs=${3:-15}
tmp=$(mktemp -d /dev/shm/rlog-lag.XXXXXX)
port=$((20000 + $$ % 20000))
nats-server -js -a 127.0.0.1 -p "$port" -sd "$tmp/js" >/dev/null 2>&1 &
ns=$!
trap 'kill $ns $col 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
col=
sleep 0.5
name=lag-$$
url=nats://127.0.0.1:$port/lag$$
mkdir "$tmp/out"
"$bin" start "$name" -o "$tmp/local.rlog" --sink "$url" --flush-timer 100 >/dev/null
"$bin" collect "$url" -o "$tmp/out" --follow >/dev/null 2>&1 &
col=$!
payload=0102030405060708
size() { stat -c %s "$1" 2>/dev/null || echo 0; }
coll() { f=$(ls "$tmp"/out/*.rlog 2>/dev/null | head -1); [ -n "$f" ] && size "$f" || echo 0; }
t0=$(date +%s.%N)
( end=$(echo "$t0 + $secs" | bc)
  while [ "$(echo "$(date +%s.%N) < $end" | bc)" = 1 ]; do
	"$bin" emit "$name" 1024 --count "$count" --payload $payload >/dev/null
	sleep 0.1
  done ) &
load=$!
: > "$tmp/lag"
while kill -0 $load 2>/dev/null; do
	sleep 0.25
	echo "$(size "$tmp/local.rlog") $(coll)" >> "$tmp/lag"
done
wait $load
el=$(echo "$(date +%s.%N) - $t0" | bc)
"$bin" stop "$name" > "$tmp/stop"
ts=$(date +%s.%N)
final=$(size "$tmp/local.rlog")
i=0
while [ "$(coll)" -lt "$final" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
catchup=$(echo "$(date +%s.%N) - $ts" | bc)
rate=$(echo "$final / $el" | bc)
awk -v rate="$rate" '{ d = $1 - $2; if (d < 0) d = 0; print d }' "$tmp/lag" | sort -n > "$tmp/d"
n=$(wc -l < "$tmp/d")
med=$(sed -n "$(( (n + 1) / 2 ))p" "$tmp/d")
max=$(tail -1 "$tmp/d")
echo "load: $(echo "$final / $el / 1000000" | bc -l | cut -c1-5) MB/s of file for ${el%????} s ($n samples)"
echo "lag median: $med bytes ($(echo "$med / $rate" | bc -l | cut -c1-5) s); max: $max bytes ($(echo "$max / $rate" | bc -l | cut -c1-5) s)"
echo "after stop: the collected file complete in $(echo "$catchup" | cut -c1-5) s"
