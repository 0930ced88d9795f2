#!/usr/bin/env bash
# tests/test_exports.sh - libringlog.so exports exactly its export list
# (src/lib/libringlog.map), each symbol under the version node the list
# puts it in (RINGLOG_0.1, RINGLOG_0.2, ...: one per release), the nodes
# chained each to the one before, and the list names every function the
# public headers declare (TAP).
#
#   $1  the built libringlog.so
#   $2  src/lib/libringlog.map
#   $3  the include/ directory
set -u
lib=$1 map=$2 inc=$3
n=0 failed=0
ok() { local st=$1; shift; n=$((n + 1))
	if [ "$st" -eq 0 ]; then echo "ok $n - $*"; else echo "not ok $n - $*"; failed=$((failed + 1)); fi; }

if ! command -v nm >/dev/null 2>&1; then echo "1..0 # SKIP nm is not installed"; exit 0; fi
# "symbol node" for every symbol of the list, from its node's block.
listed_at=$(sed -e 's,/\*.*\*/,,' "$map" | awk '
	/^[A-Za-z0-9_.]+[[:space:]]*\{/ { node = $1; sub(/\{.*/, "", node) }
	/^[[:space:]]*rlog_[A-Za-z0-9_]*;/ { s = $1; sub(/;.*/, "", s); print s, node }' | sort)
listed=$(echo "$listed_at" | awk '{print $1}')
nodes=$(sed -e 's,/\*.*\*/,,' "$map" | grep -oE '^RINGLOG_[0-9.]+' )
# Exported as "symbol node" (nm -D prints symbol@@NODE for the default
# version); the node names themselves are absolute symbols, left out.
exported_at=$(nm -D --defined-only "$lib" | awk '$2 != "A" {print $3}' | sed 's/@@*/ /' | sort)
exported=$(echo "$exported_at" | awk '{print $1}')
defnodes=$(nm -D --defined-only "$lib" | awk '$2 == "A" {print $3}' | sort)
# Functions the public headers declare (a declaration is a line that ends
# an "rlog_name(" with a return type before it, exported by a macro).
declared=$(grep -hoE 'EXPORT[[:space:]]+[a-z_ ]+[ *]+rlog_[a-z0-9_]+\(' "$inc/ringlog.h" "$inc"/ringlog/*.h |
	grep -oE 'rlog_[a-z0-9_]+\($' | tr -d '(' | sort -u)

missing=$(comm -23 <(echo "$listed") <(echo "$exported"))
extra=$(comm -13 <(echo "$listed") <(echo "$exported"))
ok "$([ -z "$missing" ]; echo $?)" "every listed symbol is exported${missing:+ (missing: $(echo $missing))}"
ok "$([ -z "$extra" ]; echo $?)" "nothing else is exported${extra:+ (extra: $(echo $extra))}"
wrongnode=$(comm -3 <(echo "$listed_at") <(echo "$exported_at") | tr -d '\t' | awk '{print $1 "@" $2}' | sort -u | tr '\n' ' ')
ok "$([ -z "$wrongnode" ]; echo $?)" "every exported symbol has its node of the list${wrongnode:+ (differ: $wrongnode)}"
ok "$([ "$(echo "$nodes" | sort)" == "$defnodes" ]; echo $?)" "the library defines the nodes of the list ($(echo $nodes))"
ok "$([ "$(echo "$nodes" | head -n 1)" == RINGLOG_0.1 ]; echo $?)" "the first node is RINGLOG_0.1, the symbols of the first release"
# Each later node inherits the one before ("} RINGLOG_0.1;"): a program
# linked against one node finds the older symbols under theirs.
chain_bad=""
prev=""
for node in $nodes; do
	if [ -n "$prev" ] && ! grep -qE "^\}[[:space:]]*$prev;" <(sed -n "/^$node[[:space:]]*{/,/^}/p" "$map"); then
		chain_bad="$chain_bad $node"
	fi
	prev=$node
done
ok "$([ -z "$chain_bad" ]; echo $?)" "each node inherits the one before${chain_bad:+ (not:$chain_bad)}"
# The newest node is the project's release (meson.build, version.h).
major=$(sed -n 's/^#define RLOG_VERSION_MAJOR \([0-9]*\)$/\1/p' "$inc/ringlog/version.h")
minor=$(sed -n 's/^#define RLOG_VERSION_MINOR \([0-9]*\)$/\1/p' "$inc/ringlog/version.h")
ok "$([ "$(echo "$nodes" | tail -n 1)" == "RINGLOG_$major.$minor" ]; echo $?)" "the newest node is the headers' version RINGLOG_$major.$minor"
undeclared=$(comm -23 <(echo "$declared") <(echo "$listed"))
ok "$([ -z "$undeclared" ]; echo $?)" "every exported function of the public headers is listed${undeclared:+ (not listed: $(echo $undeclared))}"
ok "$([ "$(echo "$declared" | grep -c .)" -ge 20 ]; echo $?)" "the header scan found the API ($(echo "$declared" | grep -c .) functions)"
echo "1..$n"
[ "$failed" -eq 0 ]
