#!/usr/bin/env bash
# scripts/deps.sh - install ringlog's build and test dependencies (Debian 12).
#
#   scripts/deps.sh           what the build and the tests need
#   scripts/deps.sh --lttng   instead, what bench/vs_lttng.sh needs (LTTng-UST
#                             and lttng-tools): optional, never a test dependency
#
# Idempotent: asks dpkg-query which packages are missing and runs apt-get
# (update once, then install) only if something is.  As root it calls
# apt-get directly; otherwise through sudo if there is one; otherwise it
# prints one error line naming the missing packages and exits 1.
set -euo pipefail

PACKAGES=(
	build-essential
	meson
	ninja-build
	pkg-config
	zlib1g-dev
	clang              # libFuzzer targets (tests/fuzz/)
	libclang-rt-14-dev # clang's sanitizer and fuzzer runtimes
	babeltrace2        # CTF conversion check
	man-db             # man ringlog after meson install; tests/test_cli_help.c renders the pages
	protobuf-compiler  # protoc --decode: tests/test_convert_perfetto.c checks the Perfetto output
	libdw-dev          # ringlog profile: ELF symbol tables of the sampled binaries (elfutils)
	libelf-dev         # libdw's ELF layer (elfutils)
	linux-perf         # perf record: bench/vs_perf.sh's anchor for system events
	trace-cmd          # trace-cmd record: bench/vs_perf.sh's other anchor
	chromium           # headless browser: tests/test_report.c opens ringlog report's page
	libnats-dev        # the NATS JetStream sink and ringlog collect nats:// (src/daemon/sink_nats.c, src/collect/)
	nats-server        # tests/test_sink_nats.c starts one with JetStream on loopback
	librdkafka-dev     # the Kafka sink and ringlog collect kafka:// (src/daemon/sink_kafka.c, src/collect/); its mock cluster runs tests/test_sink_kafka.c
)
case "${1:-}" in
"") ;;
--lttng)
	PACKAGES=(
		lttng-tools      # lttng create/enable-event/start/stop, lttng-sessiond
		liblttng-ust-dev # the tracepoint headers and library bench/vs_lttng.sh compiles against
	)
	;;
*) echo "deps.sh: unknown argument: $1 (--lttng or nothing)" >&2; exit 2 ;;
esac

missing=()
for p in "${PACKAGES[@]}"; do
	status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	if [ "$status" != "install ok installed" ]; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi

if [ "$(id -u)" -eq 0 ]; then
	SUDO=()
elif command -v sudo >/dev/null 2>&1; then
	SUDO=(sudo)
else
	echo "deps.sh: missing packages (${missing[*]}) and not root, no sudo: run as root: apt-get install ${missing[*]}" >&2
	exit 1
fi

echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null
"${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
	"${missing[@]}" </dev/null
