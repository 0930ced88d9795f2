#!/usr/bin/env bash
# bench/bench.sh [N [PROGRAM] [ARGS...]] - run a benchmark N times (default
# 5) and print, for every figure, the median of the N invocations and their
# range: the tables in docs/PERFORMANCE.md.  PROGRAM is `ringlog` (the
# default: `ringlog bench ARGS`) or one of the bench/ programs, with or
# without its bench_ prefix (`bench/bench.sh 5 sustained`,
# `bench/bench.sh 5 scaling --runs 5`); ARGS go to it.  Each invocation
# already reports medians of interleaved runs; this adds the spread between
# invocations, which on a noisy 2-core machine is the honest error bar.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-5}
shift || true
prog=ringlog
case "${1:-}" in
"" | -*) ;;
*) prog=$1; shift ;;
esac
case "$prog" in
ringlog) cmd=(build/src/cli/ringlog bench) ;;
bench_*) cmd=("build/bench/$prog") ;;
*) cmd=("build/bench/bench_$prog") ;;
esac
if [ ! -x "${cmd[0]}" ]; then
	echo "bench.sh: ${cmd[0]} is not built (run scripts/test.sh or scripts/build.sh first)" >&2
	exit 1
fi
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'), $(nproc) cpus, $(uname -r)"
echo "command: ${cmd[*]} $*  (x$n)"
for i in $(seq "$n"); do
	"${cmd[@]}" "$@" >>"$out"
done
awk -F': ' '
	$2 ~ /^[0-9.]+$/ { if (!($1 in n)) order[++k] = $1; v[$1, ++n[$1]] = $2 }
	END {
		for (j = 1; j <= k; j++) {
			key = order[j]; m = n[key]
			for (a = 1; a <= m; a++) s[a] = v[key, a] + 0
			for (a = 2; a <= m; a++) for (b = a; b > 1 && s[b-1] > s[b]; b--) { t = s[b]; s[b] = s[b-1]; s[b-1] = t }
			med = (m % 2) ? s[(m + 1) / 2] : (s[m / 2] + s[m / 2 + 1]) / 2
			printf "%-28s median %14.2f   range %.2f - %.2f\n", key, med, s[1], s[m]
		}
	}' "$out"
