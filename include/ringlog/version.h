/*
 * ringlog/version.h - the version of the ringlog headers a program is
 * compiled against (as libuv's uv/version.h).
 *
 *   #include <ringlog/version.h>
 *
 *   #if RLOG_VERSION_HEX >= 0x000200
 *   ... code that needs ringlog 0.2 ...
 *   #endif
 *
 * Macros only, so that a build can test them before it includes anything
 * else.  The version of the library a program runs with is rlog_version()
 * and rlog_version_string() (<ringlog.h>): a program linked against an
 * older libringlog.so.0 than its headers can tell the two apart.
 *
 * The numbers are the project's version (meson.build's project()), checked
 * by tests/test_version.c; a release that adds functions gets a version
 * node of its own in the export map (src/lib/libringlog.map).
 */
#ifndef RINGLOG_VERSION_H
#define RINGLOG_VERSION_H

#define RLOG_VERSION_MAJOR 0
#define RLOG_VERSION_MINOR 2
#define RLOG_VERSION_PATCH 0

/* 0xMMmmpp: one byte each for major, minor and patch, so that versions
 * compare as integers. */
#define RLOG_VERSION_HEX                                                                  \
	((RLOG_VERSION_MAJOR << 16) | (RLOG_VERSION_MINOR << 8) | RLOG_VERSION_PATCH)

#define RLOG_VERSION__STR(x) #x
#define RLOG_VERSION__XSTR(x) RLOG_VERSION__STR(x)
/* "0.2.0" */
#define RLOG_VERSION_STRING                                                               \
	RLOG_VERSION__XSTR(RLOG_VERSION_MAJOR)                                            \
	"." RLOG_VERSION__XSTR(RLOG_VERSION_MINOR) "." RLOG_VERSION__XSTR(RLOG_VERSION_PATCH)

#endif /* RINGLOG_VERSION_H */
