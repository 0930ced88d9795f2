/*
 * rundown.h - the processes, threads and executable mappings that exist
 * now, walked from /proc: ETW's rundown, LTTng's state dump.  When system
 * events start, and at each snapshot, the daemon writes them, so that
 * every tid and address in the trace has a name even if its thread or
 * mapping began before the session (docs/SESSIONS.md, "System events").
 *
 * The walker only reads and calls back; what becomes a record is the
 * caller's business.  For each process (every one in /proc, or those of a
 * pid list, in that order):
 *
 *   process(pid, ppid, comm, cmdline)
 *   thread(pid, tid, comm)              for each of its threads
 *   mapping(pid, start, end, offset,    for each executable mapping of
 *           dev, inode, path)           /proc/PID/maps (permission x)
 *
 * Processes come and go while it walks: one that is gone before its
 * files are read (ENOENT, ESRCH) is skipped and counted in vanished, a
 * thread likewise in threads_vanished; nothing else is an error.  A
 * process's files are read through a descriptor of its /proc directory,
 * so that a pid reused meanwhile is never mixed with the process that
 * had it.
 *
 * Names are bytes: a comm may hold a newline or a terminal escape (any
 * process may name itself so, prctl(PR_SET_NAME)); the callbacks get
 * pointer and length, and escaping is the printer's job (term.h).
 */
#ifndef RLOG_COMMON_RUNDOWN_H
#define RLOG_COMMON_RUNDOWN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RLOG__RUNDOWN_CMDLINE_MAX 65536 /* cmdline bytes passed on (cmdline_cut past it) */

struct rlog__rundown_process {
	uint32_t pid;
	uint32_t ppid;           /* /proc/PID/stat field 4 */
	const char *comm;        /* /proc/PID/comm without its final newline (1..15 bytes) */
	size_t comm_len;
	const char *cmdline;     /* /proc/PID/cmdline: the arguments, each ending in NUL as the
	                            kernel gives them; 0 bytes for a kernel thread or a zombie */
	size_t cmdline_len;
	bool cmdline_cut;        /* longer than RLOG__RUNDOWN_CMDLINE_MAX: cut there */
};

struct rlog__rundown_thread {
	uint32_t pid;
	uint32_t tid;
	const char *comm;        /* /proc/PID/task/TID/comm without its final newline */
	size_t comm_len;
};

struct rlog__rundown_mapping {
	uint32_t pid;
	uint64_t start, end;     /* addresses [start, end) */
	uint64_t offset;         /* of the file mapped at start */
	uint32_t dev_major, dev_minor;
	uint64_t inode;          /* 0: not a file */
	const char *path;        /* as /proc/PID/maps gives it (the kernel writes a newline in
	                            a file name as \012, and appends " (deleted)" to a removed
	                            file's); "[vdso]" and the like for the kernel's; 0 bytes
	                            for anonymous memory */
	size_t path_len;
	uint32_t prot;           /* PROT_READ | PROT_WRITE | PROT_EXEC of its perms */
	bool shared;             /* perms 's' (MAP_SHARED), else 'p' (MAP_PRIVATE) */
};

/* The callbacks (any may be NULL).  A negative return stops the walk,
 * which returns it. */
struct rlog__rundown_ops {
	int (*process)(const struct rlog__rundown_process *p, void *arg);
	int (*thread)(const struct rlog__rundown_thread *t, void *arg);
	int (*mapping)(const struct rlog__rundown_mapping *m, void *arg);
	void *arg;
};

struct rlog__rundown_stats {
	uint64_t processes;        /* processes called back */
	uint64_t threads;          /* threads called back */
	uint64_t mappings;         /* mappings called back */
	uint64_t vanished;         /* processes gone before they were read */
	uint64_t threads_vanished; /* threads gone before they were read */
};

/*
 * Walks /proc (npids 0), or the processes of pids[0..npids-1], calling
 * ops for each as above; proc is the procfs mount to walk ("/proc", or
 * NULL for it).  *st (which may be NULL) receives the counts.  Returns 0,
 * a callback's negative value, -ENOMEM, or the -errno of opening proc.
 */
int rlog__rundown_walk(const char *proc, const uint32_t *pids, size_t npids,
		       const struct rlog__rundown_ops *ops, struct rlog__rundown_stats *st);

#endif
