/*
 * md_table.h - reading the tables of the Markdown documents that programs
 * are written from (docs/FORMAT.md, docs/DUMP.md), for the tests that
 * check them against the code (test_abi.c, test_docs_tables.c).
 */
#ifndef RLOG_TESTS_MD_TABLE_H
#define RLOG_TESTS_MD_TABLE_H

#include <ctype.h>
#include <errno.h>
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

#endif
