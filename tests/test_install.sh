#!/usr/bin/env bash
# tests/test_install.sh - the README's "Instrumenting a program", end to end,
# against an installed ringlog (TAP):
#
#   1. `meson install --destdir` of this build into a temporary directory:
#      the CLI, the library, the headers, the pkg-config file and the
#      manual pages land where the prefix says, and the install script
#      (scripts/install-ldconfig.sh) leaves a staged install alone;
#   2. the C example and then the shell commands of README.md, as written
#      there (only the session name is made unique), with the installed
#      `ringlog` first in PATH and pkg-config pointed at the staged tree:
#      the example compiles without a warning, the session records its
#      five events, and `ringlog dump` prints them with their names and
#      decoded fields;
#   3. scripts/install-ldconfig.sh's three cases, with stub ldconfig and id
#      programs: a staged install, root (runs ldconfig), not root (says
#      what to do).
#
# A DESTDIR install is what a test can do without root: the library is not
# in the linker's path there, so the example runs with LD_LIBRARY_PATH, as
# the README says for such installs.
#
# Environment (tests/meson.build): MESON, RINGLOG_BUILD_ROOT,
# RINGLOG_SOURCE_ROOT, RINGLOG_PREFIX, RINGLOG_BINDIR, RINGLOG_LIBDIR,
# RINGLOG_INCLUDEDIR, RINGLOG_MANDIR (absolute), RINGLOG_SANITIZE
# (b_sanitize: the installed library needs the same runtime in the
# program), CC.
set -u

n=0
failed=0
ok() { # condition-status description...
	local st=$1
	shift
	n=$((n + 1))
	if [ "$st" -eq 0 ]; then
		echo "ok $n - $*"
	else
		echo "not ok $n - $*"
		failed=$((failed + 1))
	fi
}
# is GOT WANT description: exact equality, both printed on failure.
is() {
	if [ "$1" == "$2" ]; then
		ok 0 "$3"
	else
		ok 1 "$3"
		printf '#   got:  %s\n' "$1" | sed '2,$s/^/#         /'
		printf '#   want: %s\n' "$2" | sed '2,$s/^/#         /'
	fi
}
bail() {
	echo "Bail out! $*"
	exit 1
}

for v in MESON RINGLOG_BUILD_ROOT RINGLOG_SOURCE_ROOT RINGLOG_PREFIX RINGLOG_BINDIR \
	RINGLOG_LIBDIR RINGLOG_INCLUDEDIR RINGLOG_MANDIR; do
	[ -n "${!v:-}" ] || bail "$v is not set (run through meson test)"
done

tmp=$(mktemp -d /tmp/rlog-install-XXXXXX)
session="t-install-$$"
cleanup() {
	"$tmp/root$RINGLOG_BINDIR/ringlog" stop "$session" >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT

# ---------------------------------------------------------------------
# 1. Install
# ---------------------------------------------------------------------
root="$tmp/root"
"$MESON" install -C "$RINGLOG_BUILD_ROOT" --no-rebuild --destdir "$root" >"$tmp/install.log" 2>&1
st=$?
ok $st "meson install --destdir exits 0"
[ $st -eq 0 ] || { sed 's/^/# /' "$tmp/install.log"; bail "the install failed"; }
grep -qxF "Running custom install script '$RINGLOG_SOURCE_ROOT/scripts/install-ldconfig.sh $RINGLOG_LIBDIR'" \
	"$tmp/install.log"
ok $? "the install ran scripts/install-ldconfig.sh $RINGLOG_LIBDIR"

for f in "$RINGLOG_BINDIR/ringlog" "$RINGLOG_LIBDIR/libringlog.so.0" \
	"$RINGLOG_LIBDIR/libringlog.so" "$RINGLOG_LIBDIR/libringlog.a" \
	"$RINGLOG_LIBDIR/pkgconfig/ringlog.pc" "$RINGLOG_INCLUDEDIR/ringlog.h" \
	"$RINGLOG_INCLUDEDIR/ringlog/event.h" "$RINGLOG_INCLUDEDIR/ringlog/reader.h" \
	"$RINGLOG_MANDIR/man1/ringlog.1" "$RINGLOG_MANDIR/man5/ringlog-format.5"; do
	[ -e "$root$f" ]
	ok $? "installed $f"
done
[ -x "$root$RINGLOG_BINDIR/ringlog" ]
ok $? "the installed ringlog is executable"
# The installed headers are the public API's and no more: the session
# region's layout (src/common/region_abi.h) is private to ringlog.
is "$(cd "$root$RINGLOG_INCLUDEDIR" && find . -type f | sort | tr '\n' ' ')" \
	"./ringlog.h ./ringlog/event.h ./ringlog/format.h ./ringlog/reader.h ./ringlog/ring.h ./ringlog/schema.h ./ringlog/version.h " \
	"the installed headers"

# ---------------------------------------------------------------------
# 2. The README's example, against the installed tree
# ---------------------------------------------------------------------
readme="$RINGLOG_SOURCE_ROOT/README.md"
# The section "## Instrumenting a program": its C block, then its sh block.
section=$(sed -n '/^## Instrumenting a program/,/^## [^I]/p' "$readme")
printf '%s\n' "$section" | awk '/^```c$/ {f = 1; next} /^```$/ {if (f) exit} f' >"$tmp/app.c"
printf '%s\n' "$section" | awk '/^```sh$/ {f = 1; next} /^```$/ {if (f) exit} f' >"$tmp/commands"
grep -q 'RLOG_DEFINE_EVENT' "$tmp/app.c"
ok $? "README.md: the C example is found"
is "$(sed 's/ *#.*//' "$tmp/commands" | sed 's/ *$//')" \
"cc app.c \$(pkg-config --cflags --libs ringlog) -o app
ringlog start mysession -o app.rlog
RINGLOG_SESSION=mysession ./app
ringlog stop mysession
ringlog dump app.rlog
ringlog report app.rlog -o app.html" "README.md: the six commands are the ones this test knows"

export PATH="$root$RINGLOG_BINDIR:$PATH"
export PKG_CONFIG_PATH="$root$RINGLOG_LIBDIR/pkgconfig"
export PKG_CONFIG_SYSROOT_DIR="$root"
export LD_LIBRARY_PATH="$root$RINGLOG_LIBDIR"
san=()
case "${RINGLOG_SANITIZE:-none}" in
none | "") ;;
*) san=("-fsanitize=$RINGLOG_SANITIZE") ;;
esac
# The README says "cc"; the build's compiler, with the library's
# sanitizer runtime if it has one, and warnings as errors.
# shellcheck disable=SC2086 # CC may be a command with arguments (ccache cc)
cc() { command ${CC:-cc} "${san[@]}" -Wall -Wextra -Werror "$@"; }

# Each installed header compiles alone against the installed tree: none
# includes a header that is not installed.
for h in $(cd "$root$RINGLOG_INCLUDEDIR" && find . -name '*.h' | sort); do
	printf '#include "%s"\n' "${h#./}" >"$tmp/h.c"
	cc -fsyntax-only -I"$root$RINGLOG_INCLUDEDIR" "$tmp/h.c" >"$tmp/h.err" 2>&1
	ok $? "${h#./} compiles alone against the installed tree"
	[ -s "$tmp/h.err" ] && sed 's/^/# /' "$tmp/h.err" | head -n 5
done

# Runs README command number $1 in $tmp: output in $tmp/out.$1, $tmp/err.$1.
i=0
while IFS= read -r line; do
	i=$((i + 1))
	line=${line%%#*}
	line=${line//mysession/$session}
	(cd "$tmp" && eval "$line") >"$tmp/out.$i" 2>"$tmp/err.$i"
	echo $? >"$tmp/rc.$i"
done <"$tmp/commands"
out() { cat "$tmp/out.$1"; }
err() { cat "$tmp/err.$1"; }
rc() { cat "$tmp/rc.$1"; }

is "$(rc 1):$(out 1)$(err 1)" "0:" "cc app.c \$(pkg-config ...): no warning, exit 0"
is "$(rc 2):$(err 2)" "0:" "ringlog start: exit 0"
is "$(out 2 | sed 's/^daemon_pid: [0-9]*$/daemon_pid: N/')" "session: $session
daemon_pid: N
file: $tmp/app.rlog" "ringlog start: the session, the daemon, the absolute file path"
is "$(rc 3):$(out 3)$(err 3)" "0:" "RINGLOG_SESSION=... ./app: exit 0, silent"
is "$(rc 4):$(err 4)" "0:" "ringlog stop: exit 0"
is "$(out 4 | sed -n '1,2p')" "session: $session
file: $tmp/app.rlog" "ringlog stop: the session and the same absolute file path"
is "$(out 4 | grep -E '^events_(written|lost):')" "events_written: 5
events_lost: 0" "ringlog stop: 5 events written (begin, event, end, 2 raw), none lost"
is "$(rc 5):$(err 5)" "0:" "ringlog dump: exit 0"

# The dump without its time, pid and tid columns; the events' pid and tid
# are the example's main thread.
body=$(out 5 | sed -n '3,$p')
is "$(printf '%s\n' "$body" | awk '{print $4}' | head -n 1)" "LOG_MARKER" \
	"ringlog dump: the LOG_MARKER first"
is "$(printf '%s\n' "$body" | sed -n '2,$p' | sed -E 's/^ *-?[0-9]+ +[0-9]+ +[0-9]+ //')" \
"job          begin job=17
http.request status=200 bytes=5120 path=\"/index\" ms=0.25
job          end
1024         2a000000 00000000 07000000 00000000
1025/3       2a000000 00000000" "ringlog dump: the events with their names and decoded fields"
is "$(printf '%s\n' "$body" | sed -n '2,$p' | awk '$2 != $3' | wc -l)" "0" \
	"ringlog dump: every event from the main thread (tid = pid)"
is "$(rc 6):$(err 6)" "0:" "ringlog report: exit 0"
is "$(out 6 | grep -E '^(events|spans):')" "events: 5
spans: 1" "ringlog report: the 5 events and the job span"
is "$(stat -c %a "$tmp/app.html" 2>&1)" "600" "ringlog report: app.html is 0600"
# stats lists the thread by the name the example gave it.
stats=$(cd "$tmp" && ringlog stats app.rlog)
is "$(printf '%s\n' "$stats" | awk '$1 ~ /^[0-9]+$/ && NF == 8 {print $3, $7, $8}')" \
	"5 main app" "ringlog stats: the thread 'main' of process 'app' wrote the 5 events"

# ---------------------------------------------------------------------
# 3. scripts/install-ldconfig.sh
# ---------------------------------------------------------------------
script="$RINGLOG_SOURCE_ROOT/scripts/install-ldconfig.sh"
stubs="$tmp/stubs"
mkdir -p "$stubs"
lib=/opt/rlog-test/lib
cat >"$stubs/ldconfig" <<EOF
#!/bin/sh
# Records its calls; lists libringlog once a rebuild has run.
echo "ldconfig \$*" >>"$tmp/ldconfig.calls"
if [ "\$1" = -p ] && [ -e "$tmp/ldconfig.rebuilt" ]; then
	echo "	libringlog.so.0 (libc6,x86-64) => $lib/libringlog.so.0"
elif [ \$# -eq 0 ]; then
	touch "$tmp/ldconfig.rebuilt"
fi
EOF
printf '#!/bin/sh\necho "$STUB_UID"\n' >"$stubs/id"
chmod +x "$stubs/ldconfig" "$stubs/id"
calls() { cat "$tmp/ldconfig.calls" 2>/dev/null; }

rm -f "$tmp/ldconfig.calls" "$tmp/ldconfig.rebuilt"
o=$(DESTDIR=/staged PATH="$stubs:$PATH" STUB_UID=0 "$script" "$lib" 2>&1)
is "$?:$o:$(calls)" "0:ringlog: staged install into DESTDIR=/staged: ldconfig not run:" \
	"install-ldconfig.sh with DESTDIR: says so, runs nothing"

rm -f "$tmp/ldconfig.calls" "$tmp/ldconfig.rebuilt"
o=$(env -u DESTDIR PATH="$stubs:$PATH" STUB_UID=0 "$script" "$lib" 2>&1)
is "$?:$o:$(calls)" "0::ldconfig 
ldconfig -p" "install-ldconfig.sh as root: runs ldconfig, then finds the library"

rm -f "$tmp/ldconfig.calls" "$tmp/ldconfig.rebuilt"
o=$(env -u DESTDIR PATH="$stubs:$PATH" STUB_UID=1000 "$script" "$lib" 2>&1 >/dev/null)
is "$?:$o:$(calls)" "0:ringlog: the dynamic linker does not look in $lib: run ldconfig as root\
 (after adding $lib to /etc/ld.so.conf.d/ if it is not listed there), or set\
 LD_LIBRARY_PATH=$lib:ldconfig -p" "install-ldconfig.sh not as root: says what to do, on stderr"

echo "1..$n"
[ "$failed" -eq 0 ]
