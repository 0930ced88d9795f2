/*
 * tracefs.c - finding tracefs and reading tracepoint formats (tracefs.h).
 *
 * A format file reads, per field:
 *
 *   field:pid_t prev_pid;	offset:24;	size:4;	signed:1;
 *   field:char prev_comm[16];	offset:8;	size:16;	signed:0;
 *   field:__data_loc char[] filename;	offset:8;	size:4;	signed:0;
 *
 * The name is the last identifier before the ';' (after any array
 * suffix); a __data_loc field holds a u32 whose low half is the offset of
 * the data in the raw record and whose high half its length.  This is all
 * the parsing ringlog needs: it copies fields by offset and size, it does
 * not evaluate the print format (docs/DESIGN.md, "System events").
 */
#define _GNU_SOURCE
#include "system/tracefs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#define TRACEFS_MAGIC_ 0x74726163
#define DEBUGFS_MAGIC_ 0x64626720

static bool is_fs(const char *dir, long magic)
{
	struct statfs st;
	return statfs(dir, &st) == 0 && (long)st.f_type == magic;
}

int rlog__tracefs_find(char *dir, size_t size)
{
	static const char *const tracing = "/sys/kernel/tracing";
	if (is_fs(tracing, TRACEFS_MAGIC_)) {
		snprintf(dir, size, "%s", tracing);
		return 0;
	}
	if (is_fs("/sys/kernel/debug/tracing", TRACEFS_MAGIC_)) {
		snprintf(dir, size, "%s", "/sys/kernel/debug/tracing");
		return 0;
	}
	if (mount("nodev", tracing, "tracefs", 0, NULL) < 0)
		return errno == ENODEV ? -ENOENT : -errno;
	snprintf(dir, size, "%s", tracing);
	return 0;
}

/* Reads the whole small file path into a NUL-terminated malloc'd text. */
static int slurp(const char *path, char **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	size_t cap = 4096, len = 0;
	char *buf = malloc(cap);
	if (buf == NULL) {
		close(fd);
		return -ENOMEM;
	}
	for (;;) {
		if (cap - len < 2) {
			char *nb = cap < (1u << 20) ? realloc(buf, cap * 2) : NULL;
			if (nb == NULL) {
				free(buf);
				close(fd);
				return -ENOMEM;
			}
			buf = nb;
			cap *= 2;
		}
		ssize_t n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int err = -errno;
			free(buf);
			close(fd);
			return err;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	buf[len] = '\0';
	*out = buf;
	return 0;
}

/* Parses one "field:" line (after "field:") into *f. */
static int field_parse(const char *s, struct rlog__tp_field *f)
{
	const char *semi = strchr(s, ';');
	if (semi == NULL)
		return -EINVAL;
	/* The declaration: "<type> <name>[<n>]" or "__data_loc <type>[] <name>". */
	const char *end = semi;
	const char *br = memchr(s, '[', (size_t)(semi - s));
	const char *last_sp = NULL;
	for (const char *p = s; p < semi; p++)
		if (*p == ' ')
			last_sp = p;
	if (last_sp == NULL)
		return -EINVAL;
	const char *name = last_sp + 1;
	if (br && br > name)
		end = br; /* "char prev_comm[16]": the name stops at '[' */
	size_t n = (size_t)(end - name);
	if (n == 0 || n >= sizeof f->name)
		return -EINVAL;
	memcpy(f->name, name, n);
	f->name[n] = '\0';
	f->data_loc = strncmp(s, "__data_loc", 10) == 0;
	f->is_string = strncmp(s, f->data_loc ? "__data_loc char" : "char", f->data_loc ? 15 : 4) == 0 &&
		       br != NULL;
	const char *o = strstr(semi, "offset:"), *z = strstr(semi, "size:"), *g = strstr(semi, "signed:");
	if (o == NULL || z == NULL)
		return -EINVAL;
	long off = strtol(o + 7, NULL, 10), sz = strtol(z + 5, NULL, 10);
	if (off < 0 || off > 65535 || sz < 0 || sz > 65535)
		return -EINVAL;
	f->offset = (uint16_t)off;
	f->size = (uint16_t)sz;
	f->is_signed = g && g[7] == '1';
	return 0;
}

int rlog__tracefs_parse(const char *text, struct rlog__tp_format *f)
{
	memset(f, 0, sizeof *f);
	bool have_id = false;
	for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
		while (*line == ' ' || *line == '\t')
			line++;
		if (strncmp(line, "ID:", 3) == 0) {
			f->id = (uint32_t)strtoul(line + 3, NULL, 10);
			have_id = true;
		} else if (strncmp(line, "field:", 6) == 0 && f->nfields < RLOG__TP_FIELDS_MAX) {
			if (field_parse(line + 6, &f->f[f->nfields]) == 0)
				f->nfields++;
		}
	}
	return have_id ? 0 : -EINVAL;
}

int rlog__tracefs_format(const char *dir, const char *group, const char *name,
			 struct rlog__tp_format *f)
{
	char path[512];
	snprintf(path, sizeof path, "%s/events/%s/%s/format", dir, group, name);
	char *text = NULL;
	int rc = slurp(path, &text);
	if (rc < 0)
		return rc;
	rc = rlog__tracefs_parse(text, f);
	free(text);
	return rc;
}

const struct rlog__tp_field *rlog__tp_field(const struct rlog__tp_format *f, const char *name)
{
	for (unsigned i = 0; i < f->nfields; i++)
		if (strcmp(f->f[i].name, name) == 0)
			return &f->f[i];
	return NULL;
}
