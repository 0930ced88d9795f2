/*
 * symbol.h - addresses to names for the profile: a user address through
 * the process's executable mapping (the image_load records: address ->
 * mapping -> file offset -> the ELF segment holding it -> symbol, read
 * with elfutils' libelf), a kernel address through /proc/kallsyms.
 * docs/PROFILE.md, "Names", gives the names made when that fails.
 */
#ifndef RLOG_ANALYSIS_SYMBOL_H
#define RLOG_ANALYSIS_SYMBOL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rlog_sym;

struct rlog_sym *rlog__sym_new(const char *kallsyms);
void rlog__sym_free(struct rlog_sym *s);

/* A mapping of process pid (an image_load record); a later one that
 * overlaps an earlier one replaces it for the addresses they share. */
int rlog__sym_map(struct rlog_sym *s, uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff,
		  const char *file, size_t file_len);

/* Process child was forked from parent: it has the parent's mappings
 * (the kernel writes no image_load for them). */
int rlog__sym_fork(struct rlog_sym *s, uint32_t parent, uint32_t child);

/* The name of address a in process pid, written into out (cap bytes,
 * NUL-terminated).  exact: a is the interrupted instruction (else a
 * return address, looked up at a - 1). */
void rlog__sym_name(struct rlog_sym *s, uint32_t pid, uint64_t a, bool exact, char *out, size_t cap);

/* Kernel addresses named so far, and whether kallsyms was readable. */
bool rlog__sym_kernel_named(const struct rlog_sym *s);

/* Is a a kernel address (the upper half of x86-64's address space)? */
static inline bool rlog__sym_is_kernel(uint64_t a)
{
	return a >= UINT64_C(0xffff800000000000);
}

#endif
