#!/usr/bin/env bash
# scripts/demo.sh - build ringlog and trace the demo workload end to end:
# start a session, run build/examples/ringlog-demo in it, stop the session
# (which prints its statistics), and dump the first records of the log.
set -euo pipefail

cd "$(dirname "$0")/.."

scripts/deps.sh </dev/null

builddir=build
if [ -f "$builddir/meson-private/coredata.dat" ]; then
	meson setup --reconfigure "$builddir" >/dev/null
else
	meson setup "$builddir" >/dev/null
fi
ninja -C "$builddir" >/dev/null

RINGLOG="$builddir/src/cli/ringlog"
DEMO="$builddir/examples/ringlog-demo"
for b in "$RINGLOG" "$DEMO"; do
	if [ ! -x "$b" ]; then
		echo "demo.sh: $b was not built" >&2
		exit 1
	fi
done

session="demo-$$"
log="/tmp/ringlog-demo-$$.rlog"
running=0

cleanup() {
	if [ "$running" -eq 1 ]; then
		"$RINGLOG" stop "$session" >/dev/null 2>&1 || true
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "+ ringlog start $session -o $log --force"
"$RINGLOG" start "$session" -o "$log" --force
running=1

echo "+ RINGLOG_SESSION=$session ringlog-demo"
RINGLOG_SESSION="$session" "$DEMO"

echo "+ ringlog stop $session"
"$RINGLOG" stop "$session"
running=0

echo
echo "events: job (span, begin/end: job, worker)  hash (value)  queue.depth (counter)"
echo "        1027/1 enqueue, 1027/2 dequeue (raw: job number)  RAW_U32 (jobs dispatched so far)"
echo "threads: dispatcher, worker-0 .. worker-3"
echo "+ ringlog dump $log | head -n 40"
# head closes the pipe early; the dump's SIGPIPE is expected.
"$RINGLOG" dump "$log" | head -n 40 || true
echo "log file: $log"
