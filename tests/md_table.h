/*
 * md_table.h - reading the tables of the Markdown documents that programs
 * are written from (docs/FORMAT.md, docs/DUMP.md), for the tests that
 * check them against the code (test_abi.c, test_docs_tables.c).
 */
#ifndef RLOG_TESTS_MD_TABLE_H
#define RLOG_TESTS_MD_TABLE_H

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Splits a table row "| a | b | c |" into trimmed cells (in place).
 * "\|" inside a cell is not a separator.  Returns the number of cells. */
static inline int split_row(char *line, char **cells, int max)
{
	char *p = line;
	while (*p == ' ' || *p == '\t')
		p++;
	if (*p != '|')
		return 0;
	p++;
	int n = 0;
	while (*p && *p != '\n' && n < max) {
		char *start = p;
		while (*p && *p != '\n' && !(*p == '|' && (p == start || p[-1] != '\\')))
			p++;
		if (*p != '|')
			break; /* text after the last separator */
		char *end = p;
		*p++ = '\0';
		while (*start == ' ' || *start == '\t')
			start++;
		while (end > start && (end[-1] == ' ' || end[-1] == '\t'))
			*--end = '\0';
		cells[n++] = start;
	}
	return n;
}

/* Parses a whole cell as an unsigned decimal or 0x-hex number
 * (optionally backquoted, optionally with a u/U/ull suffix). */
static inline int parse_number(const char *s, unsigned long long *out)
{
	char buf[64];
	size_t n = strlen(s);
	if (n >= sizeof buf)
		return -EINVAL;
	memcpy(buf, s, n + 1);
	char *p = buf;
	if (*p == '`') {
		p++;
		char *q = strchr(p, '`');
		if (q == NULL)
			return -EINVAL;
		*q = '\0';
	}
	if (!isdigit((unsigned char)*p))
		return -EINVAL;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(p, &end, 0);
	if (errno != 0 || end == p)
		return -EINVAL;
	while (*end == 'u' || *end == 'U' || *end == 'l' || *end == 'L')
		end++;
	if (*end != '\0')
		return -EINVAL;
	*out = v;
	return 0;
}

/* The size bytes at p as a little-endian number (what a table's row
 * describes, read back from encoded bytes). */
static inline unsigned long long md_le(const uint8_t *p, unsigned long long size)
{
	unsigned long long v = 0;
	for (unsigned long long i = size; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/* One row of a struct's table: | +Offset | Size | Field | ... |. */
struct md_field {
	char field[32];
	unsigned long long off, size;
};

/*
 * The rows of the struct table under the heading line that starts with
 * heading (e.g. "### struct rlog_block_header") in the Markdown file at
 * path, up to its "Total: N bytes" line (N in *total).  Returns the
 * number of rows (at most max), or -1 if the file cannot be read.
 */
static inline int md_struct_rows(const char *path, const char *heading, struct md_field *rows,
				 int max, unsigned long long *total)
{
	FILE *f = fopen(path, "r");
	if (f == NULL)
		return -1;
	char line[1024];
	int in = 0, n = 0;
	size_t hl = strlen(heading);
	*total = 0;
	while (fgets(line, sizeof line, f)) {
		if (strncmp(line, heading, hl) == 0) {
			in = 1;
			continue;
		}
		if (!in)
			continue;
		if (strncmp(line, "Total:", 6) == 0) {
			*total = strtoull(line + 6, NULL, 10);
			break;
		}
		char *c[8];
		if (split_row(line, c, 8) < 3 || c[0][0] != '+' || n == max)
			continue;
		unsigned long long off, size;
		if (parse_number(c[0] + 1, &off) < 0 || parse_number(c[1], &size) < 0)
			continue;
		snprintf(rows[n].field, sizeof rows[n].field, "%s", c[2]);
		rows[n].off = off;
		rows[n].size = size;
		n++;
	}
	fclose(f);
	return n;
}

#endif
