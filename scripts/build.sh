#!/usr/bin/env bash
# scripts/build.sh - configure and build ringlog, the one way that
# scripts/demo.sh and scripts/test.sh share, so that the second of them
# finds everything built ("ninja: no work to do").
#
#   scripts/build.sh                               plain build in build/
#   scripts/build.sh --sanitize address,undefined  (test.sh passes its choice)
#   scripts/build.sh --builddir DIR                in DIR
#
# Configures meson with -Dwerror=true and -Db_sanitize=S (reconfiguring an
# existing build directory with the same options, which rebuilds nothing
# that is built), then builds with ninja, its progress shown on stderr
# (-j RINGLOG_JOBS, default the number of CPUs).  Does not
# install dependencies (scripts/deps.sh does).  Exits 1 if the configure
# step fails, 2 for a usage error, 3 if the build fails.
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1

sanitize=none
builddir=build
while [ $# -gt 0 ]; do
	case "$1" in
	--sanitize) sanitize=${2:-}; shift 2 || { echo "build.sh: --sanitize needs a value" >&2; exit 2; } ;;
	--sanitize=*) sanitize=${1#*=}; shift ;;
	--builddir) builddir=${2:-}; shift 2 || { echo "build.sh: --builddir needs a value" >&2; exit 2; } ;;
	--builddir=*) builddir=${1#*=}; shift ;;
	-h|--help) sed -n '2,14p' "$0"; exit 0 ;;
	*) echo "build.sh: unknown argument: $1" >&2; exit 2 ;;
	esac
done
[ -n "$sanitize" ] || sanitize=none

opts=(-Dwerror=true "-Db_sanitize=$sanitize")
if [ "$sanitize" != none ]; then
	# The shared library leaves sanitizer symbols to the executable's runtime.
	opts+=(-Db_lundef=false)
fi

echo "build.sh: configuring $builddir (werror=true, b_sanitize=$sanitize)" >&2
# meson's own report goes to a log, shown only if the step fails.
log=$(mktemp) || exit 1
trap 'rm -f "$log"' EXIT
if [ -f "$builddir/meson-private/coredata.dat" ]; then
	meson setup --reconfigure "$builddir" "${opts[@]}" </dev/null >"$log" 2>&1 ||
		meson setup --wipe "$builddir" "${opts[@]}" </dev/null >"$log" 2>&1
else
	meson setup "$builddir" "${opts[@]}" </dev/null >"$log" 2>&1
fi || {
	cat "$log" >&2
	echo "build.sh: meson setup $builddir ${opts[*]} failed" >&2
	exit 1
}

# A first build takes a minute or two on a small machine: say so, and let
# ninja show its progress ([N/M] per step) rather than a silent wait.
echo "build.sh: building in $builddir (a first build takes a minute or two; ninja's progress follows)" >&2
if ! ninja -C "$builddir" -j "${RINGLOG_JOBS:-$(nproc)}" </dev/null >&2; then
	echo "build.sh: build failed" >&2
	exit 3
fi
