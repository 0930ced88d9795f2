#!/usr/bin/env bash
# scripts/test.sh - configure, build and run ringlog's test suite.
#
#   scripts/test.sh                               plain build in build/
#   scripts/test.sh --sanitize address,undefined  ASan+UBSan build in build-asan/
#   scripts/test.sh --sanitize thread             TSan build in build-tsan/
#   scripts/test.sh --builddir DIR                any of the above, in DIR
#
# Installs missing dependencies (scripts/deps.sh), configures meson with
# -Dwerror=true and builds (scripts/build.sh, as scripts/demo.sh does: after
# the demo the plain build has nothing left to do), and runs
# `meson test --print-errorlogs --num-processes 2`.  The last line printed is
# exactly "N passed, N failed", counted from meson's testlog.json (one line
# per test program: OK and EXPECTEDFAIL pass; FAIL, TIMEOUT, ERROR,
# UNEXPECTEDPASS and INTERRUPT fail; SKIP is reported on the line before).
# A configure or build failure counts as one failed test.  Exits non-zero
# if anything failed.
#
# TSan and ASLR: TSan from gcc 12 / clang 14 maps its shadow memory at fixed
# addresses and dies with "FATAL: ThreadSanitizer: unexpected memory mapping"
# when the kernel randomises mmap with more bits than it expects
# (vm.mmap_rnd_bits > 28).  Before a thread-sanitizer test run this script
# builds and runs a tiny pthread program with -fsanitize=thread; only if
# that fails, and succeeds under `setarch $(uname -m) -R` (ASLR off), does it
# run the test step under setarch.
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
ROOT=$(pwd)

sanitize=""
builddir=""
while [ $# -gt 0 ]; do
	case "$1" in
	--sanitize) sanitize=${2:-}; shift 2 || { echo "test.sh: --sanitize needs a value" >&2; exit 2; } ;;
	--sanitize=*) sanitize=${1#*=}; shift ;;
	--builddir) builddir=${2:-}; shift 2 || { echo "test.sh: --builddir needs a value" >&2; exit 2; } ;;
	--builddir=*) builddir=${1#*=}; shift ;;
	-h|--help) sed -n '2,9p' "$0"; exit 0 ;;
	*) echo "test.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done

case "$sanitize" in
"" | none) sanitize=none; : "${builddir:=build}" ;;
address,undefined | undefined,address) sanitize=address,undefined; : "${builddir:=build-asan}" ;;
address) : "${builddir:=build-asan}" ;;
undefined) : "${builddir:=build-ubsan}" ;;
thread) : "${builddir:=build-tsan}" ;;
*) echo "test.sh: unsupported sanitizer: $sanitize (address,undefined | thread)" >&2; exit 2 ;;
esac

report() { # passed failed skipped
	[ "$3" -gt 0 ] && echo "$3 skipped"
	echo "$1 passed, $2 failed"
}

"$ROOT/scripts/deps.sh" </dev/null || { echo "test.sh: dependencies missing" >&2; report 0 1 0; exit 1; }

# The same configuration as scripts/demo.sh's (scripts/build.sh): after
# the demo, the plain build here has nothing left to do.
if ! "$ROOT/scripts/build.sh" --sanitize "$sanitize" --builddir "$builddir"; then
	echo "test.sh: configure or build failed" >&2
	report 0 1 0
	exit 1
fi

runner=()
test_opts=(--print-errorlogs --num-processes 2)
case "$sanitize" in
none) ;;
thread)
	export TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
	test_opts+=(--timeout-multiplier 3)
	probe=$(mktemp -d)
	cat >"$probe/p.c" <<'PROBE'
#include <pthread.h>
static int n;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static void *run(void *a) { (void)a; pthread_mutex_lock(&m); n++; pthread_mutex_unlock(&m); return 0; }
int main(void) { pthread_t t[2]; for (int i = 0; i < 2; i++) pthread_create(&t[i], 0, run, 0);
	for (int i = 0; i < 2; i++) pthread_join(t[i], 0); return n != 2; }
PROBE
	if ! "${CC:-cc}" -fsanitize=thread -pthread -O1 "$probe/p.c" -o "$probe/p" 2>"$probe/err"; then
		echo "test.sh: cannot build a -fsanitize=thread probe: $(head -n 1 "$probe/err")" >&2
	elif "$probe/p" >/dev/null 2>"$probe/err"; then
		echo "test.sh: TSan runs with ASLR on" >&2
	elif setarch "$(uname -m)" -R "$probe/p" >/dev/null 2>/dev/null; then
		echo "test.sh: TSan fails with ASLR on ($(grep -m1 -o 'unexpected memory mapping' "$probe/err" || head -c 80 "$probe/err")); running tests under setarch -R" >&2
		runner=(setarch "$(uname -m)" -R)
	else
		echo "test.sh: TSan probe fails even without ASLR: $(head -n 1 "$probe/err")" >&2
	fi
	rm -rf "$probe"
	;;
*)
	export ASAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
	export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
	test_opts+=(--timeout-multiplier 3)
	;;
esac

testlog="$builddir/meson-logs/testlog.json"
rm -f "$testlog"
"${runner[@]}" meson test -C "$builddir" "${test_opts[@]}" </dev/null
rc=$?

if [ ! -s "$testlog" ]; then
	# meson test ran nothing it could log: an error in meson itself, or no tests.
	if [ $rc -ne 0 ]; then report 0 1 0; exit 1; fi
	report 0 0 0
	exit 0
fi

if command -v python3 >/dev/null 2>&1; then
	counts=$(python3 - "$testlog" <<'PY'
import json, sys
p = f = s = 0
with open(sys.argv[1], encoding="utf-8", errors="replace") as fh:
    for line in fh:
        line = line.strip()
        if not line:
            continue
        try:
            r = json.loads(line).get("result", "ERROR")
        except ValueError:
            r = "ERROR"
        if r in ("OK", "EXPECTEDFAIL"):
            p += 1
        elif r == "SKIP":
            s += 1
        else:
            f += 1
print(p, f, s)
PY
	)
else
	counts=""
fi
if [ -z "$counts" ]; then
	results=$(grep -oE '"result": *"[A-Z]+"' "$testlog" | sed -E 's/.*"([A-Z]+)"$/\1/')
	p=$(grep -cE '^(OK|EXPECTEDFAIL)$' <<<"$results")
	s=$(grep -cE '^SKIP$' <<<"$results")
	f=$(grep -vcE '^(OK|EXPECTEDFAIL|SKIP|)$' <<<"$results")
	counts="$p $f $s"
fi
read -r passed failed skipped <<<"$counts"

# meson test failing with no failed test logged (e.g. a test it could not
# start) still counts as a failure.
if [ $rc -ne 0 ] && [ "$failed" -eq 0 ]; then
	failed=1
fi
report "$passed" "$failed" "$skipped"
[ "$failed" -eq 0 ]
