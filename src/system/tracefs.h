/*
 * tracefs.h - the kernel's tracepoints as tracefs describes them: the id
 * that perf_event_open(2) takes as the config of a PERF_TYPE_TRACEPOINT
 * event, and the layout of its raw data (the `format` file: each field's
 * name, offset, size and signedness).
 */
#ifndef RLOG_SYSTEM_TRACEFS_H
#define RLOG_SYSTEM_TRACEFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RLOG__TP_FIELDS_MAX 24
#define RLOG__TP_NAME_MAX 32

struct rlog__tp_field {
	char name[RLOG__TP_NAME_MAX];
	uint16_t offset, size;
	bool is_signed;
	bool data_loc;   /* __data_loc: a u32 (length << 16 | offset) to the bytes */
	bool is_string;  /* char[N] or __data_loc char[] */
};

struct rlog__tp_format {
	uint32_t id;
	unsigned nfields;
	struct rlog__tp_field f[RLOG__TP_FIELDS_MAX];
};

/*
 * The tracefs mount point: /sys/kernel/tracing, or the tracing directory
 * of a debugfs mount; if neither is mounted, mounts tracefs on
 * /sys/kernel/tracing (as root).  Fills dir (size bytes).  Returns 0 or
 * -errno (-ENOENT: no tracefs in this kernel).
 */
int rlog__tracefs_find(char *dir, size_t size);

/* Reads events/<group>/<name>/format under dir into *f.  Returns 0 or
 * -errno (-ENOENT: no such tracepoint). */
int rlog__tracefs_format(const char *dir, const char *group, const char *name,
			 struct rlog__tp_format *f);

/* Parses the text of a format file (its "ID:" and "field:" lines). */
int rlog__tracefs_parse(const char *text, struct rlog__tp_format *f);

/* The field called name, or NULL. */
const struct rlog__tp_field *rlog__tp_field(const struct rlog__tp_format *f, const char *name);

#endif
