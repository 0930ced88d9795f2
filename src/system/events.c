/*
 * events.c - the table of system events (events.h; docs/FORMAT.md,
 * "System events", lists the same).  Names and fields follow the Linux
 * tracepoints, with pid renamed tid where the kernel's "pid" is a thread.
 */
#include "system/events.h"

#include <linux/perf_event.h>
#include <stddef.h>

#include "sysflags.h"

#define U8 RLOG_FIELD_U8
#define U32 RLOG_FIELD_U32
#define U64 RLOG_FIELD_U64
#define I32 RLOG_FIELD_I32
#define I64 RLOG_FIELD_I64
#define STR RLOG_FIELD_STRING
#define TP RLOG__SRC_TRACEPOINT

const struct rlog__sys_event rlog__sys_events[] = {
	{ 64, "sched_switch", RLOG_SYS_CSWITCH, TP, "sched", "sched_switch", 0, 7,
	  { { "prev_tid", I32, "prev_pid" }, { "prev_state", I64, "prev_state" },
	    { "prev_prio", I32, "prev_prio" }, { "next_tid", I32, "next_pid" },
	    { "next_prio", I32, "next_prio" }, { "prev_comm", STR, "prev_comm" },
	    { "next_comm", STR, "next_comm" } } },
	{ 65, "sched_wakeup", RLOG_SYS_WAKEUP, TP, "sched", "sched_wakeup", 0, 4,
	  { { "target_tid", I32, "pid" }, { "prio", I32, "prio" },
	    { "target_cpu", I32, "target_cpu" }, { "comm", STR, "comm" } } },
	{ 66, "sched_waking", RLOG_SYS_WAKEUP, TP, "sched", "sched_waking", 0, 4,
	  { { "target_tid", I32, "pid" }, { "prio", I32, "prio" },
	    { "target_cpu", I32, "target_cpu" }, { "comm", STR, "comm" } } },
	{ 67, "sched_wakeup_new", RLOG_SYS_WAKEUP | RLOG_SYS_THREAD, TP, "sched", "sched_wakeup_new", 0, 4,
	  { { "target_tid", I32, "pid" }, { "prio", I32, "prio" },
	    { "target_cpu", I32, "target_cpu" }, { "comm", STR, "comm" } } },
	{ 68, "sched_migrate_task", RLOG_SYS_CSWITCH, TP, "sched", "sched_migrate_task", 0, 4,
	  { { "target_tid", I32, "pid" }, { "orig_cpu", I32, "orig_cpu" },
	    { "dest_cpu", I32, "dest_cpu" }, { "comm", STR, "comm" } } },
	{ 69, "sched_process_fork", RLOG_SYS_PROCESS | RLOG_SYS_THREAD, TP, "sched", "sched_process_fork", 0, 4,
	  { { "parent_tid", I32, "parent_pid" }, { "child_tid", I32, "child_pid" },
	    { "parent_comm", STR, "parent_comm" }, { "child_comm", STR, "child_comm" } } },
	{ 70, "sched_process_exec", RLOG_SYS_PROCESS, TP, "sched", "sched_process_exec", 0, 3,
	  { { "exec_tid", I32, "pid" }, { "old_tid", I32, "old_pid" },
	    { "filename", STR, "filename" } } },
	{ 71, "sched_process_exit", RLOG_SYS_PROCESS | RLOG_SYS_THREAD, TP, "sched", "sched_process_exit", 0, 3,
	  { { "exit_tid", I32, "pid" }, { "prio", I32, "prio" }, { "comm", STR, "comm" } } },
	{ 72, "sched_process_free", RLOG_SYS_PROCESS | RLOG_SYS_THREAD, TP, "sched", "sched_process_free", 0, 2,
	  { { "free_tid", I32, "pid" }, { "comm", STR, "comm" } } },
	{ 73, "task_newtask", RLOG_SYS_PROCESS | RLOG_SYS_THREAD, TP, "task", "task_newtask", 0, 3,
	  { { "new_tid", I32, "pid" }, { "clone_flags", U64, "clone_flags" }, { "comm", STR, "comm" } } },
	{ 74, "task_rename", RLOG_SYS_PROCESS | RLOG_SYS_THREAD, TP, "task", "task_rename", 0, 3,
	  { { "rename_tid", I32, "pid" }, { "oldcomm", STR, "oldcomm" }, { "newcomm", STR, "newcomm" } } },
	/* process-counters: written by the rundown (from /proc) and at each
	 * process's exit (from taskstats), src/system/pcounters.h; kind 0
	 * rundown, 1 exit.  The payload is laid out by pcounters.c. */
	{ 76, "process_counters", RLOG_SYS_PROCESS_COUNTERS, RLOG__SRC_COUNTERS, NULL, NULL, 0, 14,
	  { { "kind", U32, NULL }, { "threads", U32, NULL }, { "minflt", U64, NULL },
	    { "majflt", U64, NULL }, { "utime_ns", U64, NULL }, { "stime_ns", U64, NULL },
	    { "nvcsw", U64, NULL }, { "nivcsw", U64, NULL }, { "rss_kb", U64, NULL },
	    { "rss_peak_kb", U64, NULL }, { "vm_kb", U64, NULL }, { "vm_peak_kb", U64, NULL },
	    { "read_bytes", U64, NULL }, { "write_bytes", U64, NULL } } },
	{ 80, "sys_enter", RLOG_SYS_SYSTEMCALL, TP, "raw_syscalls", "sys_enter", 0, 8,
	  { { "id", I64, "id" }, { "name", STR, "@sysname" }, { "arg0", U64, "args.0" },
	    { "arg1", U64, "args.1" }, { "arg2", U64, "args.2" }, { "arg3", U64, "args.3" },
	    { "arg4", U64, "args.4" }, { "arg5", U64, "args.5" } } },
	{ 81, "sys_exit", RLOG_SYS_SYSTEMCALL, TP, "raw_syscalls", "sys_exit", 0, 3,
	  { { "id", I64, "id" }, { "name", STR, "@sysname" }, { "ret", I64, "ret" } } },
	/* file-io: the open, read, write and close calls by their own
	 * tracepoints, whose arguments are typed (docs/DESIGN.md, "Why each
	 * source").  Each call is two records, its entry's (the arguments)
	 * and its exit's (ret: the fd opened or the bytes done, or -errno),
	 * paired by tid as sys_enter and sys_exit are.  The tracepoint's
	 * filename is a user pointer, no string: the path comes from the
	 * engine's eBPF program where it can load one (openpath.h), else it
	 * is empty. */
	{ 82, "file_open", RLOG_SYS_FILE_IO, TP, "syscalls", "sys_enter_openat", 0, 4,
	  { { "dfd", I32, "dfd" }, { "filename", STR, "filename" }, { "flags", U32, "flags" },
	    { "mode", U32, "mode" } } },
	{ 83, "file_open_ret", RLOG_SYS_FILE_IO, TP, "syscalls", "sys_exit_openat", 0, 1,
	  { { "ret", I64, "ret" } } },
	{ 84, "file_read", RLOG_SYS_FILE_IO, TP, "syscalls", "sys_enter_read", 0, 2,
	  { { "fd", I32, "fd" }, { "count", U64, "count" } } },
	{ 85, "file_read_ret", RLOG_SYS_FILE_IO, TP, "syscalls", "sys_exit_read", 0, 1,
	  { { "ret", I64, "ret" } } },
	{ 86, "file_write", RLOG_SYS_FILE_IO, TP, "syscalls", "sys_enter_write", 0, 2,
	  { { "fd", I32, "fd" }, { "count", U64, "count" } } },
	{ 87, "file_write_ret", RLOG_SYS_FILE_IO, TP, "syscalls", "sys_exit_write", 0, 1,
	  { { "ret", I64, "ret" } } },
	{ 91, "file_pread", RLOG_SYS_FILE_IO, TP, "syscalls", "sys_enter_pread64", 0, 3,
	  { { "fd", I32, "fd" }, { "count", U64, "count" }, { "pos", I64, "pos" } } },
	{ 92, "file_pread_ret", RLOG_SYS_FILE_IO, TP, "syscalls", "sys_exit_pread64", 0, 1,
	  { { "ret", I64, "ret" } } },
	{ 93, "file_pwrite", RLOG_SYS_FILE_IO, TP, "syscalls", "sys_enter_pwrite64", 0, 3,
	  { { "fd", I32, "fd" }, { "count", U64, "count" }, { "pos", I64, "pos" } } },
	{ 94, "file_pwrite_ret", RLOG_SYS_FILE_IO, TP, "syscalls", "sys_exit_pwrite64", 0, 1,
	  { { "ret", I64, "ret" } } },
	{ 95, "file_close", RLOG_SYS_FILE_IO, TP, "syscalls", "sys_enter_close", 0, 1,
	  { { "fd", I32, "fd" } } },
	{ 88, "page_fault_user", RLOG_SYS_MEMORY_PAGE_FAULTS, TP, "exceptions", "page_fault_user", 0, 3,
	  { { "address", U64, "address" }, { "ip", U64, "ip" }, { "error_code", U64, "error_code" } } },
	{ 89, "page_fault_kernel", RLOG_SYS_MEMORY_PAGE_FAULTS, TP, "exceptions", "page_fault_kernel", 0, 3,
	  { { "address", U64, "address" }, { "ip", U64, "ip" }, { "error_code", U64, "error_code" } } },
	{ 90, "page_fault_major", RLOG_SYS_MEMORY_HARD_FAULTS, RLOG__SRC_SOFTWARE, NULL, NULL,
	  PERF_COUNT_SW_PAGE_FAULTS_MAJ, 2, { { "address", U64, "@addr" }, { "ip", U64, "@ip" } } },
	{ 96, "irq_handler_entry", RLOG_SYS_INTERRUPT, TP, "irq", "irq_handler_entry", 0, 2,
	  { { "irq", I32, "irq" }, { "irq_name", STR, "name" } } },
	{ 97, "irq_handler_exit", RLOG_SYS_INTERRUPT, TP, "irq", "irq_handler_exit", 0, 2,
	  { { "irq", I32, "irq" }, { "ret", I32, "ret" } } },
	{ 98, "softirq_entry", RLOG_SYS_SOFTIRQ | RLOG_SYS_DPC, TP, "irq", "softirq_entry", 0, 1,
	  { { "vec", U32, "vec" } } },
	{ 99, "softirq_exit", RLOG_SYS_SOFTIRQ | RLOG_SYS_DPC, TP, "irq", "softirq_exit", 0, 1,
	  { { "vec", U32, "vec" } } },
	{ 104, "block_rq_issue", RLOG_SYS_DISK_IO, TP, "block", "block_rq_issue", 0, 5,
	  { { "dev", U32, "dev" }, { "sector", U64, "sector" }, { "nr_sector", U32, "nr_sector" },
	    { "bytes", U32, "bytes" }, { "rwbs", STR, "rwbs" } } },
	{ 105, "block_rq_complete", RLOG_SYS_DISK_IO, TP, "block", "block_rq_complete", 0, 5,
	  { { "dev", U32, "dev" }, { "sector", U64, "sector" }, { "nr_sector", U32, "nr_sector" },
	    { "error", I32, "error" }, { "rwbs", STR, "rwbs" } } },
	{ 106, "net_dev_xmit", RLOG_SYS_NETWORK_TCPIP, TP, "net", "net_dev_xmit", 0, 4,
	  { { "skbaddr", U64, "skbaddr" }, { "len", U32, "len" }, { "rc", I32, "rc" },
	    { "dev", STR, "name" } } },
	{ 107, "netif_receive_skb", RLOG_SYS_NETWORK_TCPIP, TP, "net", "netif_receive_skb", 0, 3,
	  { { "skbaddr", U64, "skbaddr" }, { "len", U32, "len" }, { "dev", STR, "name" } } },
	/* network: TCP's state changes with the connection's endpoints (the
	 * addresses as text, IPv4 or IPv6 by family), and the bytes of each
	 * send and receive call on a socket (ret: the bytes, or -errno), tied
	 * to the connection by the socket's address (sk = skaddr). */
	{ 108, "inet_sock_set_state", RLOG_SYS_NETWORK_TCPIP, TP, "sock", "inet_sock_set_state", 0, 9,
	  { { "skaddr", U64, "skaddr" }, { "oldstate", I32, "oldstate" },
	    { "newstate", I32, "newstate" }, { "sport", U32, "sport" }, { "dport", U32, "dport" },
	    { "family", U32, "family" }, { "protocol", U32, "protocol" },
	    { "saddr", STR, "@inet:saddr" }, { "daddr", STR, "@inet:daddr" } } },
	{ 109, "sock_send_length", RLOG_SYS_NETWORK_TCPIP, TP, "sock", "sock_send_length", 0, 5,
	  { { "sk", U64, "sk" }, { "family", U32, "family" }, { "protocol", U32, "protocol" },
	    { "ret", I32, "ret" }, { "flags", I32, "flags" } } },
	{ 110, "sock_recv_length", RLOG_SYS_NETWORK_TCPIP, TP, "sock", "sock_recv_length", 0, 5,
	  { { "sk", U64, "sk" }, { "family", U32, "family" }, { "protocol", U32, "protocol" },
	    { "ret", I32, "ret" }, { "flags", I32, "flags" } } },
	{ 112, "image_load", RLOG_SYS_IMAGE_LOAD, RLOG__SRC_MMAP, NULL, NULL, PERF_COUNT_SW_DUMMY, 6,
	  { { "addr", U64, NULL }, { "len", U64, NULL }, { "pgoff", U64, NULL },
	    { "prot", U32, NULL }, { "flags", U32, NULL }, { "filename", STR, NULL } } },
	{ 120, "profile", RLOG_SYS_PROFILE, RLOG__SRC_PROFILE, NULL, NULL, PERF_COUNT_SW_CPU_CLOCK, 2,
	  { { "ip", U64, "@ip" }, { "callchain", STR, "@chain" } } },
};

const unsigned rlog__sys_nevents = sizeof rlog__sys_events / sizeof rlog__sys_events[0];

const struct rlog__sys_event *rlog__sys_event(uint16_t id)
{
	for (unsigned i = 0; i < rlog__sys_nevents; i++)
		if (rlog__sys_events[i].id == id)
			return &rlog__sys_events[i];
	return NULL;
}
