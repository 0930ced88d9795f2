#!/usr/bin/env bash
# scripts/demo.sh - build ringlog and trace the demo workload end to end:
# start a session, run build/examples/ringlog-demo in it (a dispatcher
# thread handing jobs to four workers through a queue: examples/demo.c),
# stop the session (which prints its statistics), then show the first
# events of the log, decoded, with the names of the threads that wrote
# them, and what the log holds in totals.
set -euo pipefail

cd "$(dirname "$0")/.."

scripts/deps.sh </dev/null

builddir=build
# The configuration scripts/test.sh uses too (scripts/build.sh), so that
# test.sh after the demo finds everything built.
scripts/build.sh --builddir "$builddir"
echo

RINGLOG="$builddir/src/cli/ringlog"
DEMO="$builddir/examples/ringlog-demo"
for b in "$RINGLOG" "$DEMO"; do
	if [ ! -x "$b" ]; then
		echo "demo.sh: $b was not built" >&2
		exit 1
	fi
done

session="demo-$$"
# One log file, in the build directory, that each run replaces (--force):
# runs leave nothing behind in /tmp, and the commands suggested at the end
# still find it.
log="$(pwd)/$builddir/demo.rlog"
running=0

cleanup() {
	if [ "$running" -eq 1 ]; then
		"$RINGLOG" stop "$session" >/dev/null 2>&1 || true
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "ringlog demo: a dispatcher thread hands 2000 jobs to 4 worker threads"
echo "through a queue; every step is traced (examples/demo.c)."
echo
echo "+ ringlog start $session -o $log --force"
"$RINGLOG" start "$session" -o "$log" --force
running=1

echo "+ RINGLOG_SESSION=$session $DEMO"
RINGLOG_SESSION="$session" "$DEMO"

echo "+ ringlog stop $session"
"$RINGLOG" stop "$session"
running=0

# Who is who: the threads named themselves (rlog_thread_name), and the
# trace holds the names in its THREAD_NAME records (JSON Lines,
# docs/DUMP.md: ..."tid":N,..."value":"NAME"}).
threads=$("$RINGLOG" dump "$log" --all --name THREAD_NAME --format json |
	sed -n 's/.*"tid":\([0-9]*\),.*"value":"\([^"]*\)".*/\1 \2/p' | sort -n |
	paste -sd, - | sed 's/,/, /g')

echo
echo "+ ringlog dump $log | head -n 24"
echo "  (tid $threads)"
# head closes the pipe early; the dump's SIGPIPE is expected.
"$RINGLOG" dump "$log" | head -n 24 || true

echo
echo "+ ringlog stats $log"
"$RINGLOG" stats "$log"

echo
echo "+ ringlog report $log -o ${log%.rlog}.html --force"
"$RINGLOG" report "$log" -o "${log%.rlog}.html" --force >/dev/null

echo
# One worker's jobs, as a suggestion: the tid named worker-0.
w0=$(printf '%s\n' "$threads" | tr ',' '\n' | sed -n 's/^ *\([0-9]*\) worker-0$/\1/p')
echo "log file: $log (the next run of scripts/demo.sh replaces it)"
echo "report:   ${log%.rlog}.html (one self-contained page: open it in any browser,"
echo "          xdg-open ${log%.rlog}.html, for the timeline, the losses, the top events)"
echo "next: $RINGLOG dump $log --tid ${w0:-TID}"
echo "      $RINGLOG convert $log --to chrome -o ${log%.rlog}.json   (open it in ui.perfetto.dev)"
echo "      $RINGLOG help"
echo "      meson install -C $builddir   (then: man ringlog; README.md, \"Instrumenting a program\")"
