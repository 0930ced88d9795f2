/*
 * symbol.c - addresses to names (symbol.h).  User addresses: the latest
 * image_load mapping of the process that holds the address gives the
 * file and the file offset (address - start + pgoff, docs/FORMAT.md,
 * "System events"); the file's PT_LOAD segment holding that offset gives
 * the ELF virtual address, and the symbol table (.symtab, else .dynsym)
 * the function around it.  Files are read once each, with elfutils'
 * libelf.  Kernel addresses: /proc/kallsyms, read once.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbol.h"
#include "vec.h"

struct fsym { uint64_t addr, size; char *name; };
struct seg { uint64_t off, filesz, vaddr; };

/* One file, read once.  state: 0 read, 1 missing (cannot be opened),
 * 2 not an ELF file or no segments. */
struct file {
	char *path;
	int state;
	struct fsym *syms;
	size_t nsyms;
	struct seg *segs;
	size_t nsegs;
};

struct map { uint32_t pid; uint64_t addr, len, pgoff; struct file *f; };

struct rlog_sym {
	struct file **files;
	size_t nfiles, capfiles;
	struct map *maps;
	size_t nmaps, capmaps;
	struct fsym *ksyms;
	size_t nksyms;
	bool kernel_named;
};

static int sym_cmp(const void *a, const void *b)
{
	const struct fsym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The symbol at or before a (NULL if none, or if a is past a sized
 * symbol's end). */
static const struct fsym *find(const struct fsym *v, size_t n, uint64_t a)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (v[mid].addr <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	const struct fsym *f = &v[lo - 1];
	return f->size == 0 || a < f->addr + f->size ? f : NULL;
}

static void read_kallsyms(struct rlog_sym *s, const char *path)
{
	FILE *fp = fopen(path ? path : "/proc/kallsyms", "re");
	if (!fp)
		return;
	char line[512];
	size_t cap = 0;
	bool nonzero = false;
	while (fgets(line, sizeof line, fp)) {
		char type, name[256];
		uint64_t a;
		if (sscanf(line, "%" SCNx64 " %c %255s", &a, &type, name) != 3)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (a != 0)
			nonzero = true;
		if (rlog__vec_room(&s->ksyms, s->nksyms, &cap, sizeof *s->ksyms, 4096) < 0)
			break;
		char *dup = strdup(name);
		if (!dup)
			break;
		s->ksyms[s->nksyms++] = (struct fsym){ a, 0, dup };
	}
	fclose(fp);
	/* Without the privilege to see them (kptr_restrict), the kernel
	 * shows every address as 0: no names then. */
	if (!nonzero) {
		for (size_t i = 0; i < s->nksyms; i++)
			free(s->ksyms[i].name);
		s->nksyms = 0;
	}
	qsort(s->ksyms, s->nksyms, sizeof *s->ksyms, sym_cmp);
	s->kernel_named = s->nksyms > 0;
}

struct rlog_sym *rlog__sym_new(const char *kallsyms)
{
	struct rlog_sym *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	elf_version(EV_CURRENT);
	read_kallsyms(s, kallsyms);
	return s;
}

void rlog__sym_free(struct rlog_sym *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nfiles; i++) {
		struct file *f = s->files[i];
		for (size_t j = 0; j < f->nsyms; j++)
			free(f->syms[j].name);
		free(f->syms);
		free(f->segs);
		free(f->path);
		free(f);
	}
	for (size_t i = 0; i < s->nksyms; i++)
		free(s->ksyms[i].name);
	free(s->ksyms);
	free(s->files);
	free(s->maps);
	free(s);
}

static void read_symtab(struct file *f, Elf *e, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	if (!d || sh->sh_entsize == 0)
		return;
	size_t n = sh->sh_size / sh->sh_entsize;
	f->syms = calloc(n ? n : 1, sizeof *f->syms);
	if (!f->syms)
		return;
	for (size_t i = 0; i < n; i++) {
		GElf_Sym sym;
		if (!gelf_getsym(d, (int)i, &sym))
			continue;
		int t = GELF_ST_TYPE(sym.st_info);
		if ((t != STT_FUNC && t != STT_GNU_IFUNC) || sym.st_value == 0 || sym.st_shndx == SHN_UNDEF)
			continue;
		const char *nm = elf_strptr(e, sh->sh_link, sym.st_name);
		if (!nm || !*nm)
			continue;
		char *dup = strdup(nm);
		if (!dup)
			break;
		f->syms[f->nsyms++] = (struct fsym){ sym.st_value, sym.st_size, dup };
	}
	qsort(f->syms, f->nsyms, sizeof *f->syms, sym_cmp);
}

static void read_elf(struct file *f)
{
	/* The path comes from the log file: a FIFO or a terminal named there
	 * must not block the profile (O_NONBLOCK, and only regular files are
	 * read; anything else is named by its base name, as a non-ELF file). */
	int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0) {
		f->state = 1;
		return;
	}
	f->state = 2;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t nph;
	if (e && elf_kind(e) == ELF_K_ELF && elf_getphdrnum(e, &nph) == 0) {
		f->segs = calloc(nph ? nph : 1, sizeof *f->segs);
		for (size_t i = 0; f->segs && i < nph; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
				f->segs[f->nsegs++] = (struct seg){ ph.p_offset, ph.p_filesz, ph.p_vaddr };
		}
		/* .symtab holds every function, .dynsym only the exported
		 * ones: the first when the file was not stripped. */
		Elf_Scn *scn = NULL, *dyn = NULL, *tab = NULL;
		GElf_Shdr sh, dsh, tsh;
		while ((scn = elf_nextscn(e, scn)) != NULL) {
			if (!gelf_getshdr(scn, &sh))
				continue;
			if (sh.sh_type == SHT_SYMTAB) {
				tab = scn;
				tsh = sh;
			} else if (sh.sh_type == SHT_DYNSYM) {
				dyn = scn;
				dsh = sh;
			}
		}
		if (tab)
			read_symtab(f, e, tab, &tsh);
		if (f->nsyms == 0 && dyn) {
			free(f->syms);
			f->syms = NULL;
			read_symtab(f, e, dyn, &dsh);
		}
		if (f->nsegs > 0)
			f->state = 0;
	}
	if (e)
		elf_end(e);
	close(fd);
}

static struct file *file_of(struct rlog_sym *s, const char *path, size_t len)
{
	for (size_t i = 0; i < s->nfiles; i++)
		if (strlen(s->files[i]->path) == len && memcmp(s->files[i]->path, path, len) == 0)
			return s->files[i];
	if (rlog__vec_room(&s->files, s->nfiles, &s->capfiles, sizeof *s->files, 64) < 0)
		return NULL;
	struct file *f = calloc(1, sizeof *f);
	if (!f)
		return NULL;
	f->path = strndup(path, len);
	if (!f->path) {
		free(f);
		return NULL;
	}
	s->files[s->nfiles++] = f;
	/* Pseudo-files ([vdso], [vsyscall]) and anonymous code have no
	 * file to read: their name is the mapping's. */
	if (f->path[0] != '/')
		f->state = 2;
	else
		read_elf(f);
	return f;
}

static int add_map(struct rlog_sym *s, struct map m)
{
	if (rlog__vec_room(&s->maps, s->nmaps, &s->capmaps, sizeof *s->maps, 256) < 0)
		return -ENOMEM;
	s->maps[s->nmaps++] = m;
	return 0;
}

int rlog__sym_map(struct rlog_sym *s, uint32_t pid, uint64_t addr, uint64_t len, uint64_t pgoff,
		  const char *file, size_t file_len)
{
	struct file *f = file_of(s, file, file_len);
	if (!f)
		return -ENOMEM;
	return add_map(s, (struct map){ pid, addr, len, pgoff, f });
}

int rlog__sym_fork(struct rlog_sym *s, uint32_t parent, uint32_t child)
{
	size_t n = s->nmaps;
	for (size_t i = 0; i < n; i++)
		if (s->maps[i].pid == parent) {
			struct map m = s->maps[i];
			m.pid = child;
			if (add_map(s, m) < 0)
				return -ENOMEM;
		}
	return 0;
}

static const char *base(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

void rlog__sym_name(struct rlog_sym *s, uint32_t pid, uint64_t a, bool exact, char *out, size_t cap)
{
	uint64_t q = exact || a == 0 ? a : a - 1;
	if (rlog__sym_is_kernel(a)) {
		const struct fsym *k = s->nksyms ? find(s->ksyms, s->nksyms, q) : NULL;
		if (k)
			snprintf(out, cap, "%s", k->name);
		else
			snprintf(out, cap, "[kernel] 0x%" PRIx64, a);
		return;
	}
	/* The latest mapping wins: an address reused after an munmap or an
	 * exec is the newer file's. */
	const struct map *m = NULL;
	for (size_t i = s->nmaps; i-- > 0;) {
		const struct map *c = &s->maps[i];
		if (c->pid == pid && q >= c->addr && q - c->addr < c->len) {
			m = c;
			break;
		}
	}
	if (!m) {
		snprintf(out, cap, "[unknown]");
		return;
	}
	const struct file *f = m->f;
	if (f->state == 1) {
		snprintf(out, cap, "[missing] %s", f->path);
		return;
	}
	uint64_t off = q - m->addr + m->pgoff;
	if (f->state == 2) {
		snprintf(out, cap, "%s", f->path[0] == '/' ? base(f->path) : f->path[0] ? f->path : "[anon]");
		return;
	}
	for (size_t i = 0; i < f->nsegs; i++) {
		const struct seg *g = &f->segs[i];
		if (off < g->off || off - g->off >= g->filesz)
			continue;
		const struct fsym *y = find(f->syms, f->nsyms, off - g->off + g->vaddr);
		if (y)
			snprintf(out, cap, "%s", y->name);
		else
			snprintf(out, cap, "%s+0x%" PRIx64, base(f->path), off);
		return;
	}
	/* The offset is in no code segment of the file on disk: not the
	 * file that was mapped (rebuilt or replaced since). */
	snprintf(out, cap, "[mismatch] %s", f->path);
}

bool rlog__sym_kernel_named(const struct rlog_sym *s)
{
	return s->kernel_named;
}
