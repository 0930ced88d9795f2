/*
 * test_version.c - the version's five spellings agree: the macros of
 * include/ringlog/version.h, what libringlog.so's rlog_version() and
 * rlog_version_string() return (this program links the shared library),
 * meson.build's project version (RLOG_TEST_PROJECT_VERSION, from meson),
 * `ringlog --version`, and the manual pages' title lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ringlog.h"
#include "ringlog/version.h"
#include "proc_run.h"
#include "tap.h"

#ifndef RLOG_TEST_PROJECT_VERSION
#error "tests/meson.build defines RLOG_TEST_PROJECT_VERSION (meson.project_version())"
#endif

/* The .TH line of a manual page names "ringlog X.Y.Z". */
static void check_man(const char *root, const char *page, const char *want)
{
	char path[4096], line[512] = "";
	snprintf(path, sizeof path, "%s/docs/man/%s", root, page);
	FILE *f = fopen(path, "r");
	if (f != NULL) {
		if (fgets(line, sizeof line, f) == NULL)
			line[0] = 0;
		fclose(f);
	}
	char needle[64];
	snprintf(needle, sizeof needle, "\"ringlog %s\"", want);
	ok(strncmp(line, ".TH ", 4) == 0 && strstr(line, needle) != NULL, "%s's title names %s",
	   page, needle);
}

int main(void)
{
	/* The macros against each other and against meson. */
	char from_numbers[32];
	snprintf(from_numbers, sizeof from_numbers, "%d.%d.%d", RLOG_VERSION_MAJOR,
		 RLOG_VERSION_MINOR, RLOG_VERSION_PATCH);
	ASSERT_STREQ(RLOG_VERSION_STRING, from_numbers);
	ASSERT_STREQ(RLOG_VERSION_STRING, RLOG_TEST_PROJECT_VERSION);
	ASSERT_EQ(RLOG_VERSION_HEX,
		  (RLOG_VERSION_MAJOR << 16) | (RLOG_VERSION_MINOR << 8) | RLOG_VERSION_PATCH);
	ok(RLOG_VERSION_MAJOR < 256 && RLOG_VERSION_MINOR < 256 && RLOG_VERSION_PATCH < 256,
	   "each number fits its byte of RLOG_VERSION_HEX");

	/* The library at run time. */
	ASSERT_EQ(rlog_version(), RLOG_VERSION_HEX);
	ASSERT_STREQ(rlog_version_string(), RLOG_VERSION_STRING);
	ok(rlog_version_string() == rlog_version_string(), "rlog_version_string is one static string");

	/* The CLI. */
	const char *bin = getenv("RINGLOG_BIN");
	BAIL_IF(bin == NULL, "RINGLOG_BIN is not set (run through meson test)");
	struct run r = proc_run((const char *const[]){ bin, "--version", NULL });
	ASSERT_EQ(r.status, 0);
	char want[64];
	snprintf(want, sizeof want, "ringlog %s\n", RLOG_VERSION_STRING);
	ASSERT_STREQ(r.out, want);
	run_free(&r);

	/* The manual pages. */
	const char *root = getenv("RINGLOG_SOURCE_ROOT");
	BAIL_IF(root == NULL, "RINGLOG_SOURCE_ROOT is not set (run through meson test)");
	check_man(root, "ringlog.1", RLOG_VERSION_STRING);
	check_man(root, "ringlog-format.5", RLOG_VERSION_STRING);
	return done_testing();
}
