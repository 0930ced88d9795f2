#!/usr/bin/env bash
# scripts/fuzz.sh [SECONDS] - build the libFuzzer targets (tests/fuzz/) with
# clang, ASan and UBSan, and run each for SECONDS (default 60) starting from
# its committed seed corpus (tests/fuzz/corpus/TARGET/).  New inputs go to a
# scratch directory, not into the repository.  A crash, leak, sanitizer
# report or timeout fails the target; its input is kept in build-fuzz/.
# Ends with "N passed, N failed" (one per target).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
scripts/deps.sh </dev/null || exit 1

secs=${1:-60}
out=build-fuzz
mkdir -p "$out"
# Every source but the CLI's (except the consumer's stream framing): the
# targets call the parsers directly.
srcs=(src/common/*.c src/format/*.c src/reader/*.c src/system/*.c src/daemon/*.c src/ring/*.c)
# Without RLOG_HAVE_RDKAFKA / RLOG_HAVE_NATS nothing calls the network
# sinks (src/daemon/sink_chunks.c), whose libraries the targets do not link.
for i in "${!srcs[@]}"; do
	case ${srcs[$i]} in
	src/daemon/sink_kafka.c | src/daemon/sink_nats.c) unset 'srcs[i]' ;;
	esac
done
flags=(-g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
	-std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude -Isrc/common -Isrc)

pass=0
fail=0
for t in tests/fuzz/fuzz_*.c; do
	name=$(basename "$t" .c)
	target=${name#fuzz_}
	if ! clang "${flags[@]}" "$t" "${srcs[@]}" -lz -pthread -o "$out/$name"; then
		echo "fuzz.sh: $name: build failed"
		fail=$((fail + 1))
		continue
	fi
	work=$(mktemp -d)
	seeds=tests/fuzz/corpus/$target
	echo "fuzz.sh: $name for ${secs}s from $seeds"
	if (cd "$out" && ./"$name" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
		-print_final_stats=1 "$work" "../$seeds") >"$out/$name.log" 2>&1; then
		pass=$((pass + 1))
		grep -E "^stat::number_of_executed_units|^Done" "$out/$name.log" | sed "s/^/fuzz.sh: $name: /"
	else
		fail=$((fail + 1))
		echo "fuzz.sh: $name: FAILED; see $out/$name.log:"
		grep -E "ERROR|SUMMARY|Test unit written" "$out/$name.log" | head -5
	fi
	rm -rf "$work"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
