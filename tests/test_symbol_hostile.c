/*
 * test_symbol_hostile.c - the profile's symbolizer (src/analysis/symbol.c)
 * on paths a hostile log file may name in its image_load records
 * (docs/PROFILE.md): a FIFO must not block it, a directory or a device is
 * not read as ELF; each is named by its base name, and the lookup returns.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "analysis/symbol.h"
#include "tap.h"

static void name_of(const char *path, const char *want)
{
	struct rlog_sym *s = rlog__sym_new("/nonexistent");
	ok(s != NULL, "symbolizer for %s", path);
	if (!s)
		return;
	ok(rlog__sym_map(s, 7, 0x400000, 0x1000, 0, path, strlen(path)) == 0, "map %s", path);
	char out[256] = "";
	rlog__sym_name(s, 7, 0x400010, true, out, sizeof out);
	ok(strcmp(out, want) == 0, "%s named '%s' (got '%s')", path, want, out);
	rlog__sym_free(s);
}

int main(void)
{
	/* A hang is the failure this test looks for: end it. */
	alarm(20);
	char dir[] = "/tmp/rlog-symXXXXXX";
	ok(mkdtemp(dir) != NULL, "temporary directory");
	char fifo[64];
	snprintf(fifo, sizeof fifo, "%s/a.fifo", dir);
	ok(mkfifo(fifo, 0600) == 0, "FIFO made");
	name_of(fifo, "a.fifo");
	name_of(dir, dir + 5);
	name_of("/dev/null", "null");
	unlink(fifo);
	rmdir(dir);
	return done_testing();
}
