#!/bin/sh
# scripts/install-ldconfig.sh LIBDIR - run by `meson install` (meson.build)
# once it has put libringlog into LIBDIR: makes the dynamic linker find the
# new library, so that a program built against it runs at once.  Without
# this, a fresh install answers "libringlog.so.0: cannot open shared object
# file" until someone runs ldconfig.
#
#   - A staged install (DESTDIR set: a package build, tests/test_install.sh)
#     changes nothing outside DESTDIR, so it does not run ldconfig.
#   - As root, it runs ldconfig, which rebuilds the linker's cache from
#     /etc/ld.so.conf (Debian's lists /usr/local/lib/<triplet>, the default
#     LIBDIR).
#   - If the linker still does not know LIBDIR's libringlog.so.0 (not root,
#     or a prefix that /etc/ld.so.conf does not list), it says what to do,
#     on stderr.  It never fails the install.
set -u

libdir=${1:?usage: install-ldconfig.sh LIBDIR}

if [ -n "${DESTDIR:-}" ]; then
	echo "ringlog: staged install into DESTDIR=$DESTDIR: ldconfig not run"
	exit 0
fi

# ldconfig lives in /sbin, which is not in a Debian user's PATH.
ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
if [ "$(id -u)" -eq 0 ]; then
	"$ldconfig" || echo "ringlog: ldconfig failed" >&2
fi
if ! "$ldconfig" -p 2>/dev/null | grep -qF "=> $libdir/libringlog.so.0"; then
	echo "ringlog: the dynamic linker does not look in $libdir:" \
		"run ldconfig as root (after adding $libdir to /etc/ld.so.conf.d/ if it is not" \
		"listed there), or set LD_LIBRARY_PATH=$libdir" >&2
fi
exit 0
