/*
 * profile.h - the sampled profile of a log file (the `profile` records of
 * docs/FORMAT.md, "System events"), symbolized: per call stack the
 * samples, per function the samples it was the innermost frame of (self)
 * and those whose stack held it (total).  `ringlog profile` prints it
 * (docs/PROFILE.md).
 */
#ifndef RLOG_ANALYSIS_PROFILE_H
#define RLOG_ANALYSIS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rlog_prof_opts {
	bool by_pid, by_tid;  /* keep only the samples of pid / tid */
	uint32_t pid, tid;
	const char *kallsyms; /* the kernel's symbols; NULL: /proc/kallsyms */
};

struct rlog_prof_func {
	const char *name;     /* the frame's name (docs/PROFILE.md, "Names") */
	uint64_t self, total;
};

struct rlog_prof_stack {
	const char **frames;  /* outermost first; frames[0] is the process */
	size_t nframes;
	uint64_t samples;
};

struct rlog_prof {
	uint64_t samples;        /* those kept by the filters */
	bool kernel_named;       /* whether /proc/kallsyms named kernel addresses */
	struct rlog_prof_func *funcs;   /* by self, then total, then name */
	size_t nfuncs;
	struct rlog_prof_stack *stacks; /* by samples, then frames */
	size_t nstacks;
	void *priv;
};

/*
 * Reads the log file at path and builds its profile into *out (freed
 * with rlog__profile_free, also after a failure).  Returns 0, or a
 * negative errno of the reader (rlog_reader_strerror words it).  Damaged
 * regions do not fail it: the caller asks the reader's damage through
 * *damage (the messages, NUL-separated, in out's memory) to report them.
 */
int rlog__profile_build(const char *path, const struct rlog_prof_opts *o, struct rlog_prof *out,
			char **damage, size_t *ndamage);

void rlog__profile_free(struct rlog_prof *p);

#endif
