#!/usr/bin/env bash
# tests/test_exports.sh - libringlog.so exports exactly its export list
# (src/lib/libringlog.map), under the version node RINGLOG_0, and the list
# names every function the public headers declare (TAP).
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
listed=$(sed -e 's,/\*.*\*/,,' "$map" | grep -oE '^[[:space:]]*rlog_[A-Za-z0-9_]*;' | tr -d ' ;' | sort)
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^RINGLOG_0$' | sed 's/@.*//' | sort)
versioned=$(nm -D --defined-only "$lib" | awk '$3 ~ /^rlog/ {print $3}' | grep -vc '@@RINGLOG_0$')
# Functions the public headers declare (a declaration is a line that ends
# an "rlog_name(" with a return type before it, exported by a macro).
declared=$(grep -hoE 'EXPORT[[:space:]]+[a-z_ ]+[ *]+rlog_[a-z0-9_]+\(' "$inc/ringlog.h" "$inc"/ringlog/*.h |
	grep -oE 'rlog_[a-z0-9_]+\($' | tr -d '(' | sort -u)

missing=$(comm -23 <(echo "$listed") <(echo "$exported"))
extra=$(comm -13 <(echo "$listed") <(echo "$exported"))
ok "$([ -z "$missing" ]; echo $?)" "every listed symbol is exported${missing:+ (missing: $(echo $missing))}"
ok "$([ -z "$extra" ]; echo $?)" "nothing else is exported${extra:+ (extra: $(echo $extra))}"
ok "$([ "$versioned" -eq 0 ]; echo $?)" "every exported symbol is versioned RINGLOG_0"
undeclared=$(comm -23 <(echo "$declared") <(echo "$listed"))
ok "$([ -z "$undeclared" ]; echo $?)" "every exported function of the public headers is listed${undeclared:+ (not listed: $(echo $undeclared))}"
ok "$([ "$(echo "$declared" | grep -c .)" -ge 20 ]; echo $?)" "the header scan found the API ($(echo "$declared" | grep -c .) functions)"
echo "1..$n"
[ "$failed" -eq 0 ]
