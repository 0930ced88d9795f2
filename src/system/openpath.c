/*
 * openpath.c - the eBPF program that reads an open's path (openpath.h).
 */
#define _GNU_SOURCE
#include "system/openpath.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The output: the path alone; the tracepoint's own sample, which the
 * program keeps (it returns 1), carries dfd, flags and mode. */
#define OUT_SIZE RLOG_OPENPATH_MAX

static int bpf(int cmd, union bpf_attr *a)
{
	long r = syscall(SYS_bpf, cmd, a, sizeof *a);
	return r < 0 ? -errno : (int)r;
}

int rlog__openpath_map(unsigned ncpu)
{
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.map_type = BPF_MAP_TYPE_PERF_EVENT_ARRAY;
	a.key_size = 4;
	a.value_size = 4;
	a.max_entries = ncpu;
	return bpf(BPF_MAP_CREATE, &a);
}

int rlog__openpath_map_set(int map, unsigned cpu, int out_fd)
{
	uint32_t k = cpu, v = (uint32_t)out_fd;
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.map_fd = (uint32_t)map;
	a.key = (uint64_t)(uintptr_t)&k;
	a.value = (uint64_t)(uintptr_t)&v;
	a.flags = BPF_ANY;
	return bpf(BPF_MAP_UPDATE_ELEM, &a);
}

/* The instructions used (the kernel's filter.h macros, which are not
 * in the uapi headers). */
static struct bpf_insn ins(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm)
{
	struct bpf_insn i = { .code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm };
	return i;
}
#define MOV64_REG(d, s) ins(BPF_ALU64 | BPF_MOV | BPF_X, d, s, 0, 0)
#define MOV64_IMM(d, v) ins(BPF_ALU64 | BPF_MOV | BPF_K, d, 0, 0, v)
#define MOV32_IMM(d, v) ins(BPF_ALU | BPF_MOV | BPF_K, d, 0, 0, v)
#define ADD64_IMM(d, v) ins(BPF_ALU64 | BPF_ADD | BPF_K, d, 0, 0, v)
#define LDX_DW(d, s, o) ins(BPF_LDX | BPF_MEM | BPF_DW, d, s, o, 0)
#define CALL(f) ins(BPF_JMP | BPF_CALL, 0, 0, 0, f)
#define EXIT() ins(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

int rlog__openpath_load(const struct rlog__tp_format *tp, int map, char *why, size_t why_size)
{
	const struct rlog__tp_field *fn = rlog__tp_field(tp, "filename");
	if (!fn || fn->size != 8) {
		snprintf(why, why_size, "sys_enter_openat: not the layout expected");
		return -EINVAL;
	}
	/* The output buffer on the stack at fp - OUT_SIZE (8-aligned). */
	const int16_t buf = -(int16_t)((OUT_SIZE + 7) & ~7);
	struct bpf_insn p[] = {
		MOV64_REG(BPF_REG_6, BPF_REG_1),                   /* r6 = ctx */
		/* bpf_probe_read_user_str(fp + buf, MAX, filename): on a
		 * fault it leaves an empty string. */
		LDX_DW(BPF_REG_3, BPF_REG_6, (int16_t)fn->offset),
		MOV64_REG(BPF_REG_1, BPF_REG_10),
		ADD64_IMM(BPF_REG_1, buf),
		MOV64_IMM(BPF_REG_2, RLOG_OPENPATH_MAX),
		CALL(BPF_FUNC_probe_read_user_str),
		/* bpf_perf_event_output(ctx, map, BPF_F_CURRENT_CPU, buf, size) */
		MOV64_REG(BPF_REG_1, BPF_REG_6),
		ins(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_2, BPF_PSEUDO_MAP_FD, 0, map),
		ins(0, 0, 0, 0, 0),
		MOV32_IMM(BPF_REG_3, -1),                          /* 0xffffffff */
		MOV64_REG(BPF_REG_4, BPF_REG_10),
		ADD64_IMM(BPF_REG_4, buf),
		MOV64_IMM(BPF_REG_5, OUT_SIZE),
		CALL(BPF_FUNC_perf_event_output),
		/* 1, whatever the output's result: the kernel keeps one
		 * program list per tracepoint, and a 0 would drop the
		 * tracepoint's sample for every perf event on it, other
		 * users' included (perf_syscall_enter).  A failed output
		 * (a full ring, a CPU without a map entry) leaves the
		 * sample, with no path before it. */
		MOV64_IMM(BPF_REG_0, 1),
		EXIT(),
	};
	char log[4096] = "";
	union bpf_attr a;
	memset(&a, 0, sizeof a);
	a.prog_type = BPF_PROG_TYPE_TRACEPOINT;
	a.insns = (uint64_t)(uintptr_t)p;
	a.insn_cnt = sizeof p / sizeof p[0];
	/* The helpers are GPL-only: the program is offered under both. */
	a.license = (uint64_t)(uintptr_t)"Dual MIT/GPL";
	a.log_buf = (uint64_t)(uintptr_t)log;
	a.log_size = sizeof log;
	a.log_level = 1;
	int fd = bpf(BPF_PROG_LOAD, &a);
	if (fd < 0) {
		/* Again without the log: a log too small fails by itself. */
		a.log_buf = 0;
		a.log_size = 0;
		a.log_level = 0;
		int again = bpf(BPF_PROG_LOAD, &a);
		if (again >= 0)
			return again;
		snprintf(why, why_size, "BPF_PROG_LOAD: %s%s%.120s", strerror(-fd), log[0] ? ": " : "",
			 log);
	}
	return fd;
}
