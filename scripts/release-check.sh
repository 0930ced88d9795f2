#!/usr/bin/env bash
# scripts/release-check.sh - what a release build ships has no test hooks
# and no asserts (docs/CONTRIBUTING.md, "Test hooks"): configures
# `meson setup -Dbuildtype=release -Dwerror=true` in build-release/ (or
# --builddir DIR), builds only the `ringlog` CLI and libringlog.so (about
# 45 s on two loaded cores; the test programs are not built), and checks:
#
#   - the build configured RLOG_TEST_HOOKS=0 and NDEBUG (b_ndebug=if-release);
#   - neither binary holds the text "RINGLOG_TEST_" (no getenv of a test
#     variable: no daemon that stops or kills itself on one);
#   - neither has a test hook symbol (rlog__test_hook, rlog__trim_test_hook);
#   - neither calls __assert_fail (the asserts are compiled out).
#
# Prints TAP, then "N passed, N failed" as scripts/test.sh does (.ci/run
# adds it up).  Exits non-zero if a check, the configure or the build
# failed.
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
builddir=build-release
case "${1:-}" in
--builddir) builddir=${2:?--builddir needs a value} ;;
--builddir=*) builddir=${1#*=} ;;
"") ;;
*) echo "release-check.sh: unknown argument: $1" >&2; exit 2 ;;
esac

n=0 failed=0
ok() { local st=$1; shift; n=$((n + 1))
	if [ "$st" -eq 0 ]; then echo "ok $n - $*"; else echo "not ok $n - $*"; failed=$((failed + 1)); fi; }
finish() { echo "1..$n"; echo "$((n - failed)) passed, $failed failed"; [ "$failed" -eq 0 ]; exit; }

if [ -d "$builddir/meson-private" ]; then
	meson configure "$builddir" -Dbuildtype=release -Dwerror=true >/dev/null 2>&1
else
	meson setup "$builddir" -Dbuildtype=release -Dwerror=true >/dev/null 2>&1
fi
ok $? "meson setup -Dbuildtype=release in $builddir" || true
[ "$failed" -eq 0 ] || finish

# The targets' paths, from meson (the library's carries its version).
lib=$(meson introspect --targets "$builddir" | python3 -c '
import json, sys
for t in json.load(sys.stdin):
    if t["name"] == "ringlog" and t["type"] == "shared library":
        print(t["filename"][0])')
cli="$builddir/src/cli/ringlog"
nice ninja -C "$builddir" "${cli#"$builddir"/}" "${lib#"$(cd "$builddir" && pwd)"/}" >"$builddir/release-check.log" 2>&1
st=$?
ok $st "the CLI and libringlog.so build in release mode with -Werror"
[ $st -eq 0 ] || { tail -n 20 "$builddir/release-check.log" | sed 's/^/# /'; finish; }

grep -q -- '-DRLOG_TEST_HOOKS=0' "$builddir/build.ninja"
ok $? "the release build is configured without test hooks (RLOG_TEST_HOOKS=0)"
grep -q -- '-DNDEBUG' "$builddir/build.ninja"
ok $? "the release build is configured with NDEBUG (b_ndebug=if-release)"
for bin in "$cli" "$lib"; do
	name=${bin##*/}
	found=$(grep -c -a 'RINGLOG_TEST_' "$bin")
	ok "$([ "$found" -eq 0 ]; echo $?)" "$name holds no \"RINGLOG_TEST_\" text (found $found)"
	hooks=$(nm "$bin" 2>/dev/null | grep -c 'test_hook')
	ok "$([ "$hooks" -eq 0 ]; echo $?)" "$name has no test hook symbol (found $hooks)"
	asserts=$(nm -D "$bin" | grep -c '__assert_fail')
	ok "$([ "$asserts" -eq 0 ]; echo $?)" "$name calls no assert (found $asserts)"
done
finish
