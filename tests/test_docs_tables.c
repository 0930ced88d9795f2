/*
 * test_docs_tables - the tables of docs/FORMAT.md and docs/DUMP.md that
 * programs are written from alone, against what the code does.  Read at
 * test time (paths in RINGLOG_FORMAT_MD and RINGLOG_DUMP_MD), so that a
 * document and the code cannot drift apart without failing CI:
 *
 *   1. FORMAT.md "ID ranges": the rows cover 0..16383 in order; each ID is
 *      accepted by the producer API (rlog__id_ok) and may be described by
 *      an EVENT_SCHEMA (rlog__schema_check) exactly as its row says; on a
 *      crafted file the reader takes a schema for the first and last ID of
 *      each range, or ignores and counts it, as the row says;
 *   2. FORMAT.md "Record kinds by block": for every ID, unflagged and
 *      FLAGGED, rlog__record_check in a thread, daemon, copy and
 *      DAEMON+METADATA block agrees with the table; on a crafted file an
 *      application event in a daemon block is returned (from_daemon), a
 *      DAEMON+METADATA block is read as a copy block;
 *   3. FORMAT.md's ID table: "metadata" in the status exactly for the
 *      metadata record kind;
 *   4. DUMP.md "Names": every ID, DATA_LOSS cause and tick source the code
 *      names has its row, with the code's name, and each FORMAT.md
 *      constant (RLOG_ID_*, RLOG_LOSS_*, RLOG_TICK_*) its row; the payload
 *      Length of each cause is the code's structure; `ringlog dump` (text
 *      and JSON) prints these names, and a DATA_LOSS line's members are
 *      those the Length table gives, with first_ns/last_ns exact.
 */
#include <inttypes.h>
#include <stdio.h>

#include "ringlog.h"
#include "ringlog/reader.h"
#include "proc_run.h"
#include "filegen.h"
#include "md_table.h"
#include "names.h"
#include "record.h"
#include "schema.h"
#include "tap.h"

#define S 1000000u     /* sync ticks; 1 tick = 1 ns */
#define HZ 1000000000u
#define MAX_CELLS 8

/* ------------------------------------------------------------------ */
/* Documents                                                           */
/* ------------------------------------------------------------------ */

struct doc {
	const char *name;
	char **lines;
	size_t n;
};

static void doc_load(struct doc *d, const char *env, const char *name)
{
	const char *path = getenv(env);
	BAIL_IF(path == NULL || *path == '\0', "%s must name docs/%s (tests/meson.build)", env, name);
	FILE *f = fopen(path, "r");
	BAIL_IF(f == NULL, "cannot open %s", path);
	d->name = name;
	d->lines = NULL;
	d->n = 0;
	char buf[4096];
	size_t cap = 0;
	while (fgets(buf, sizeof buf, f)) {
		if (d->n == cap) {
			cap = cap ? 2 * cap : 1024;
			d->lines = realloc(d->lines, cap * sizeof(*d->lines));
			BAIL_IF(d->lines == NULL, "out of memory");
		}
		d->lines[d->n++] = strdup(buf);
	}
	fclose(f);
}

static void doc_free(struct doc *d)
{
	for (size_t i = 0; i < d->n; i++)
		free(d->lines[i]);
	free(d->lines);
}

/*
 * The table rows of the section whose heading is exactly heading (outside
 * code blocks, up to the next heading), one by one: *i is the cursor (0 to
 * start), line a scratch copy that cells point into.  Returns the number
 * of cells, or 0 at the end of the section.
 */
static int section_row(const struct doc *d, const char *heading, size_t *i, char *line,
		       size_t cap, char **cells)
{
	size_t len = strlen(heading);
	if (*i == 0) {
		int in_code = 0;
		for (; *i < d->n; (*i)++) {
			if (strncmp(d->lines[*i], "```", 3) == 0)
				in_code = !in_code;
			else if (!in_code && strncmp(d->lines[*i], heading, len) == 0 &&
				 d->lines[*i][len] == '\n')
				break;
		}
		if (*i == d->n)
			return 0;
		(*i)++;
	}
	for (; *i < d->n && d->lines[*i][0] != '#'; (*i)++) {
		snprintf(line, cap, "%s", d->lines[*i]);
		int n = split_row(line, cells, MAX_CELLS);
		if (n > 0 && strncmp(cells[0], "---", 3) != 0) {
			(*i)++;
			return n;
		}
	}
	return 0;
}

/* A cell without its backquotes. */
static const char *unquote(const char *cell, char *out, size_t cap)
{
	size_t j = 0;
	for (size_t i = 0; cell[i] && j + 1 < cap; i++)
		if (cell[i] != '`')
			out[j++] = cell[i];
	out[j] = '\0';
	return out;
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* "N" or "N..M" into [*lo, *hi]. */
static bool parse_range(const char *cell, unsigned long long *lo, unsigned long long *hi)
{
	char a[32];
	const char *dots = strstr(cell, "..");
	if (!dots)
		return parse_number(cell, lo) == 0 && (*hi = *lo, true);
	size_t n = (size_t)(dots - cell);
	if (n >= sizeof a)
		return false;
	memcpy(a, cell, n);
	a[n] = '\0';
	return parse_number(a, lo) == 0 && parse_number(dots + 2, hi) == 0 && *lo <= *hi;
}

/* ------------------------------------------------------------------ */
/* 1. FORMAT.md: ID ranges                                             */
/* ------------------------------------------------------------------ */

struct id_range {
	unsigned lo, hi;
	bool api, schema;
};

static size_t read_ranges(const struct doc *fmt, struct id_range *out, size_t max)
{
	char line[4096], *cells[MAX_CELLS];
	size_t i = 0, n = 0;
	int nc;
	while ((nc = section_row(fmt, "### ID ranges", &i, line, sizeof line, cells)) > 0) {
		unsigned long long lo, hi;
		if (nc < 4 || !parse_range(cells[0], &lo, &hi))
			continue; /* the header row */
		if (n == max)
			break;
		out[n++] = (struct id_range){ (unsigned)lo, (unsigned)hi, starts(cells[2], "yes"),
					      starts(cells[3], "yes") };
	}
	return n;
}

static bool schema_ok(unsigned id)
{
	struct rlog_field f = { .type = RLOG_FIELD_U32, .name = "n" };
	struct rlog_schema s = { .id = (uint16_t)id, .kind = RLOG_KIND_EVENT, .name = "t.x",
				 .fields = &f, .field_count = 1 };
	return rlog__schema_check(&s) == 0;
}

static void test_id_ranges(const struct doc *fmt)
{
	struct id_range rg[32];
	size_t n = read_ranges(fmt, rg, 32);
	ok(n >= 4, "FORMAT.md has an \"ID ranges\" table (%zu rows)", n);
	unsigned next = 0;
	int bad_api = 0, bad_schema = 0;
	for (size_t k = 0; k < n; k++) {
		ok(rg[k].lo == next, "ID ranges: %u..%u starts where the previous ended (%u)", rg[k].lo,
		   rg[k].hi, next);
		next = rg[k].hi + 1;
		for (unsigned id = rg[k].lo; id <= rg[k].hi && id <= RLOG_ID_MAX; id++) {
			if (rlog__id_ok(id) != rg[k].api && bad_api++ < 5)
				diag("ID %u: FORMAT.md says the producer API %s it", id,
				     rg[k].api ? "takes" : "refuses");
			if (schema_ok(id) != rg[k].schema && bad_schema++ < 5)
				diag("ID %u: FORMAT.md says a schema %s describe it", id,
				     rg[k].schema ? "may" : "may not");
		}
	}
	ok(next == RLOG_ID_MAX + 1u, "ID ranges end at RLOG_ID_MAX (%u)", next - 1);
	ok(bad_api == 0, "the producer API (rlog__id_ok) takes the IDs FORMAT.md says (%d differ)",
	   bad_api);
	ok(bad_schema == 0, "rlog__schema_check takes the IDs FORMAT.md says (%d differ)",
	   bad_schema);

	/* The reader: a schema for the first and last ID of each range, and a
	 * FLAGGED event of each that can be one (16 and up). */
	static const struct fg_field one[] = { { RLOG_FIELD_U32, 0, "n" } };
	struct fg_file f;
	struct fg_block b;
	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, HZ, S, 1790000000000000000ull, RLOG_TICK_MONOTONIC, 16384, 8,
			"ids");
	fg_block_begin(&b, 100, 101, S, 0);
	uint32_t t = S, x = 7;
	uint64_t refused = 0;
	for (size_t k = 0; k < n; k++) {
		unsigned ends[2] = { rg[k].lo, rg[k].hi };
		for (int e = 0; e < 2 && (e == 0 || rg[k].hi != rg[k].lo); e++) {
			fg_schema(&b, ++t, (uint16_t)ends[e], RLOG_KIND_EVENT, 0, "range.ev", one, 1);
			refused += !rg[k].schema;
		}
	}
	for (size_t k = 0; k < n; k++) {
		unsigned ends[2] = { rg[k].lo, rg[k].hi };
		for (int e = 0; e < 2 && (e == 0 || rg[k].hi != rg[k].lo); e++)
			if (ends[e] >= RLOG_ID_RAW_U8)
				fg_event(&b, ends[e], 7, true, ++t, &x, 4);
	}
	fg_block_end(&f, &b);
	struct rlog_reader *r = NULL;
	ASSERT_EQ(fg_open(&f, &r), 0);
	ASSERT_EQ(rlog_reader_damage_count(r), 0);
	ok(rlog_reader_bad_schemas(r, NULL) == refused,
	   "the reader ignores and counts the schemas FORMAT.md refuses (%" PRIu64 ", want %" PRIu64
	   ")", rlog_reader_bad_schemas(r, NULL), refused);
	struct rlog_event ev;
	int events = 0;
	while (rlog_reader_next(r, &ev) == 1) {
		if (!ev.flagged)
			continue;
		events++;
		bool want = false;
		for (size_t k = 0; k < n; k++)
			if (ev.id >= rg[k].lo && ev.id <= rg[k].hi)
				want = rg[k].schema;
		ok((rlog_reader_schema(r, &ev) != NULL) == want,
		   "an event of ID %u %s its schema, as FORMAT.md says", (unsigned)ev.id,
		   want ? "has" : "has not");
	}
	ok(events > 0, "the flagged events are read (%d)", events);
	rlog_reader_close(r);
	fg_file_free(&f);
}

/* ------------------------------------------------------------------ */
/* 2. FORMAT.md: record kinds by block                                 */
/* ------------------------------------------------------------------ */

enum { THREAD, DAEMON, COPY, NBLOCK };
static const uint16_t block_flags[NBLOCK] = { 0, RLOG_BLOCK_FLAG_DAEMON, RLOG_BLOCK_FLAG_METADATA };

struct kind_row {
	unsigned ids[8];
	int nids;    /* 0: "other" */
	bool allowed[NBLOCK];
};

static size_t read_kinds(const struct doc *fmt, struct kind_row *out, size_t max, int *other)
{
	char line[4096], *cells[MAX_CELLS];
	size_t i = 0, n = 0;
	int nc;
	*other = -1;
	while ((nc = section_row(fmt, "### Record kinds by block", &i, line, sizeof line, cells)) >
	       0) {
		if (nc < 5 || strcmp(cells[0], "Records") == 0 || n == max)
			continue;
		struct kind_row *k = &out[n];
		memset(k, 0, sizeof(*k));
		if (strcmp(cells[1], "other") == 0) {
			*other = (int)n;
		} else {
			char *save = NULL;
			for (char *tok = strtok_r(cells[1], ", ", &save); tok && k->nids < 8;
			     tok = strtok_r(NULL, ", ", &save)) {
				unsigned long long v = 0;
				ok(parse_number(tok, &v) == 0, "Record kinds by block: \"%s\" is an ID", tok);
				k->ids[k->nids++] = (unsigned)v;
			}
		}
		for (int c = 0; c < NBLOCK; c++) {
			const char *cell = cells[2 + c];
			ok(starts(cell, "yes") || starts(cell, "malformed"),
			   "Record kinds by block: \"%s\" says yes or malformed", cell);
			k->allowed[c] = starts(cell, "yes");
		}
		n++;
	}
	return n;
}

/* rlog__record_check on a record of ID id (flagged or not) whose payload
 * is long enough for any of ringlog's records. */
static bool record_allowed(unsigned id, bool flagged, uint16_t flags)
{
	static uint8_t payload[128];
	payload[0] = 1; /* a LOG_MARKER's tick_freq_hz is not 0 */
	struct rlog__record rec = { .id = (uint16_t)id, .flagged = flagged, .flag = flagged ? 7 : 0,
				    .has_time = true, .length = sizeof payload, .payload = payload };
	return rlog__record_check(&rec, flags) == 0;
}

static void test_record_kinds(const struct doc *fmt)
{
	struct kind_row rows[16];
	int other;
	size_t n = read_kinds(fmt, rows, 16, &other);
	ok(n >= 7 && other >= 0, "FORMAT.md has a \"Record kinds by block\" table with an \"other\" row");
	if (other < 0)
		return;
	int bad = 0;
	for (unsigned id = 1; id <= RLOG_ID_MAX; id++) {
		for (int flagged = 0; flagged < 2; flagged++) {
			if (flagged ? id < RLOG_ID_RAW_U8 : id == RLOG_ID_FLAGGED)
				continue; /* not a record (rlog__record_decode refuses it) */
			const struct kind_row *k = &rows[other];
			for (size_t j = 0; j < n && !flagged; j++)
				for (int m = 0; m < rows[j].nids; m++)
					if (rows[j].ids[m] == id)
						k = &rows[j];
			for (int c = 0; c < NBLOCK; c++) {
				if (record_allowed(id, flagged, block_flags[c]) != k->allowed[c] &&
				    bad++ < 5)
					diag("ID %u%s in a block of flags %u: FORMAT.md says %s", id,
					     flagged ? " (FLAGGED)" : "", block_flags[c],
					     k->allowed[c] ? "yes" : "malformed");
			}
			/* A block with DAEMON and METADATA is a copy block. */
			uint16_t both = RLOG_BLOCK_FLAG_DAEMON | RLOG_BLOCK_FLAG_METADATA;
			if (record_allowed(id, flagged, both) != k->allowed[COPY] && bad++ < 5)
				diag("ID %u%s in a DAEMON+METADATA block: not as in a copy block", id,
				     flagged ? " (FLAGGED)" : "");
		}
	}
	ok(bad == 0, "rlog__record_check agrees with FORMAT.md for every ID and block (%d differ)",
	   bad);

	/* The reader: an application event in a daemon block is an event of
	 * the block's thread; a DAEMON+METADATA block is a copy block (its
	 * THREAD_NAME names the thread, it returns nothing), and a COUNTER in
	 * one makes it damaged. */
	struct fg_file f;
	struct fg_block b;
	uint32_t x = 5;
	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, HZ, S, 1790000000000000000ull, RLOG_TICK_MONOTONIC, 16384, 8,
			"kinds");
	fg_block_begin(&b, 100, 101, S + 10, RLOG_BLOCK_FLAG_DAEMON | RLOG_BLOCK_FLAG_METADATA);
	fg_thread_name(&b, S + 10, "copied");
	fg_block_end(&f, &b);
	fg_block_begin(&b, 100, 101, S + 20, 0);
	fg_event(&b, 2000, -1, true, S + 20, &x, 4);
	fg_block_end(&f, &b);
	fg_block_begin(&b, 100, 101, S + 30, RLOG_BLOCK_FLAG_DAEMON);
	fg_event(&b, 2001, -1, true, S + 30, &x, 4);
	fg_data_loss(&b, S + 31, 3, 48, RLOG_LOSS_NO_BUFFER);
	fg_block_end(&f, &b);
	fg_block_begin(&b, 100, 0, S + 40, RLOG_BLOCK_FLAG_DAEMON | RLOG_BLOCK_FLAG_METADATA);
	fg_counter(&b, S + 40, 1, RLOG_COUNTER_FLAG_VALUE, 0, 1, 1, 0);
	fg_block_end(&f, &b);
	struct rlog_reader *r = NULL;
	ASSERT_EQ(fg_open(&f, &r), 0);
	struct rlog_event ev;
	int ev2000 = 0, ev2001 = 0, others = 0;
	while (rlog_reader_next(r, &ev) == 1) {
		if (ev.id == 2000 && !ev.from_daemon && ev.tid == 101)
			ev2000++;
		else if (ev.id == 2001 && ev.from_daemon && ev.pid == 100 && ev.tid == 101)
			ev2001++;
		else if (ev.id != RLOG_ID_LOG_MARKER && ev.id != RLOG_ID_DATA_LOSS)
			others++;
	}
	ok(ev2000 == 1 && ev2001 == 1 && others == 0,
	   "an event in a daemon block is read as its thread's, from the daemon; a DAEMON+METADATA "
	   "block returns nothing (%d, %d, %d others)", ev2000, ev2001, others);
	ASSERT_STREQ(rlog_reader_thread_name(r, 100, 101) ? rlog_reader_thread_name(r, 100, 101)
							  : "(null)",
		     "copied");
	ok(rlog_reader_damage_count(r) == 1,
	   "a COUNTER in a DAEMON+METADATA block damages it, as in a copy block (%zu reports)",
	   rlog_reader_damage_count(r));
	rlog_reader_close(r);
	fg_file_free(&f);
}

/* ------------------------------------------------------------------ */
/* 3. FORMAT.md's ID table: what is metadata                           */
/* ------------------------------------------------------------------ */

static void test_id_table(const struct doc *fmt)
{
	char line[4096], *cells[MAX_CELLS];
	size_t i = 0;
	int nc, rows = 0;
	while ((nc = section_row(fmt, "## Event IDs", &i, line, sizeof line, cells)) > 0) {
		unsigned long long v;
		if (nc < 3 || !starts(cells[0], "`RLOG_ID_") || parse_number(cells[1], &v) < 0 ||
		    v >= RLOG_ID_USER_MIN || v == RLOG_ID_INVALID || v == RLOG_ID_FLAGGED)
			continue;
		rows++;
		bool meta = strstr(cells[2], "metadata") != NULL;
		ok(meta == (rlog__record_kind((unsigned)v, false) == RLOG_RECORD_METADATA),
		   "FORMAT.md's ID table: %s is %smetadata, as rlog__record_kind says", cells[0],
		   meta ? "" : "not ");
	}
	ok(rows >= 20, "FORMAT.md's ID table has ringlog's IDs (%d rows)", rows);
}

/* ------------------------------------------------------------------ */
/* 4. DUMP.md: names                                                   */
/* ------------------------------------------------------------------ */

#define MAX_NAMES 64

struct name_row {
	long long value; /* -1: "other" */
	char name[32];
	unsigned length; /* DATA_LOSS causes: the payload Length, 0 if none */
};

struct names {
	struct name_row ids[MAX_NAMES], causes[MAX_NAMES], ticks[MAX_NAMES];
	size_t nids, ncauses, nticks;
	char members_text[3][128], members_json[3][128]; /* by Length 24, 32, 48 */
	unsigned member_len[3];
	size_t nmembers;
};

static void read_names(const struct doc *dump, struct names *nm)
{
	char line[4096], *cells[MAX_CELLS];
	size_t i = 0;
	int nc;
	struct name_row *table = NULL;
	size_t *count = NULL;
	bool members = false;
	memset(nm, 0, sizeof(*nm));
	while ((nc = section_row(dump, "## Names", &i, line, sizeof line, cells)) > 0) {
		/* A header row says which table follows. */
		if (strcmp(cells[0], "ID") == 0 || strcmp(cells[0], "Cause") == 0 ||
		    strcmp(cells[0], "Tick source") == 0) {
			table = cells[0][0] == 'I' ? nm->ids : cells[0][0] == 'C' ? nm->causes : nm->ticks;
			count = cells[0][0] == 'I' ? &nm->nids : cells[0][0] == 'C' ? &nm->ncauses
										  : &nm->nticks;
			members = false;
			continue;
		}
		if (starts(cells[0], "Length")) {
			members = true;
			table = NULL;
			continue;
		}
		unsigned long long v;
		if (members && nc >= 3 && nm->nmembers < 3 && parse_number(cells[0], &v) == 0) {
			nm->member_len[nm->nmembers] = (unsigned)v;
			unquote(cells[1], nm->members_text[nm->nmembers], 128);
			unquote(cells[2], nm->members_json[nm->nmembers], 128);
			nm->nmembers++;
			continue;
		}
		if (!table || nc < 2 || *count == MAX_NAMES)
			continue;
		struct name_row *row = &table[*count];
		memset(row, 0, sizeof(*row));
		if (strcmp(cells[0], "other") == 0)
			row->value = -1;
		else if (parse_number(cells[0], &v) == 0)
			row->value = (long long)v;
		else
			continue;
		unquote(cells[1], row->name, sizeof row->name);
		if (nc >= 3 && parse_number(cells[2], &v) == 0)
			row->length = (unsigned)v;
		(*count)++;
	}
}

static const struct name_row *find_row(const struct name_row *t, size_t n, long long value)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].value == value)
			return &t[i];
	return NULL;
}

/* The code's names against a table of DUMP.md, both ways. */
static void check_names(const char *what, const struct name_row *t, size_t n, unsigned limit,
			const char *(*code)(unsigned))
{
	int missing = 0, wrong = 0;
	for (unsigned v = 0; v < limit; v++) {
		const char *c = code(v);
		const struct name_row *row = find_row(t, n, v);
		if (c && !row && missing++ < 5)
			diag("DUMP.md has no %s row for %u (%s)", what, v, c);
		if (row && (!c || strcmp(c, row->name) != 0) && wrong++ < 5)
			diag("DUMP.md: %s %u is %s, the code says %s", what, v, row->name,
			     c ? c : "(none)");
	}
	ok(missing == 0, "DUMP.md names every %s the code names (%d missing)", what, missing);
	ok(wrong == 0, "DUMP.md's %s names are the code's (%d differ)", what, wrong);
	ok(find_row(t, n, -1) != NULL, "DUMP.md says how an unknown %s prints", what);
}

static const char *id_name(unsigned v) { return rlog__id_name(v); }
static const char *cause_name(unsigned v) { return rlog__loss_cause_name(v); }
static const char *tick_name(unsigned v) { return rlog__tick_source_name(v); }

/* Each FORMAT.md constant PREFIX* has a DUMP.md row of its value, named
 * after it (RLOG_LOSS_NO_BUFFER: no_buffer; RLOG_ID_LOG_MARKER:
 * LOG_MARKER). */
static void check_constants(const struct doc *fmt, const char *prefix, bool lower,
			    const struct name_row *t, size_t n)
{
	int rows = 0, bad = 0;
	for (size_t i = 0; i < fmt->n; i++) {
		char line[4096], *cells[MAX_CELLS];
		snprintf(line, sizeof line, "%s", fmt->lines[i]);
		int nc = split_row(line, cells, MAX_CELLS);
		unsigned long long v;
		if (nc < 2 || cells[0][0] != '`' || !starts(cells[0] + 1, prefix) ||
		    parse_number(cells[1], &v) < 0)
			continue;
		char want[64];
		unquote(cells[0] + 1 + strlen(prefix), want, sizeof want);
		if (strcmp(want, "INVALID") == 0 || strcmp(want, "FLAGGED") == 0 ||
		    v >= RLOG_ID_USER_MIN)
			continue; /* not a record's name, or a boundary */
		for (char *p = want; lower && *p; p++)
			*p = (char)tolower((unsigned char)*p);
		rows++;
		const struct name_row *row = find_row(t, n, (long long)v);
		if (!row || strcmp(row->name, want) != 0) {
			bad++;
			diag("FORMAT.md's %s%s (%llu) has no DUMP.md row named %s", prefix,
			     cells[0] + 1 + strlen(prefix), v, want);
		}
	}
	ok(rows > 0 && bad == 0, "every FORMAT.md %s* constant is named in DUMP.md (%d of %d not)",
	   prefix, bad, rows);
}

/* The id column of the line of dump's text output at time_ns t. */
static bool id_at(const char *out, long long t, char *id, size_t cap)
{
	for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (*p == '#')
			continue;
		long long tt;
		unsigned pid, tid;
		char col[64];
		if (sscanf(p, "%lld %u %u %63s", &tt, &pid, &tid, col) == 4 && tt == t) {
			snprintf(id, cap, "%s", col);
			return true;
		}
	}
	return false;
}

/* The line of out that contains needle, in buf. */
static bool line_with(const char *out, const char *needle, char *buf, size_t cap)
{
	const char *p = strstr(out, needle);
	if (!p)
		return false;
	size_t line = 0;
	for (const char *q = out; q < p; q++)
		line += *q == '\n';
	run_line(out, line, buf, cap);
	return true;
}

/* Every ID DUMP.md names, printed by dump in its id column. */
static void dump_ids(const struct names *nm, const char *path)
{
	struct fg_file f;
	struct fg_block b;
	static const struct fg_field one[] = { { RLOG_FIELD_U32, 0, "n" } };
	uint8_t p8[8] = { 1 };
	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, HZ, S, 1790000000000000000ull, RLOG_TICK_MONOTONIC, 16384, 8,
			"names");
	/* Record of ID X at time 1000 + X ns. */
	fg_block_begin(&b, 100, 101, S + 1000, 0);
	fg_time_sync(&b, S + 1000 + RLOG_ID_TIME_SYNC);
	for (unsigned id = RLOG_ID_RAW_U8; id <= RLOG_ID_RAW_STRING; id++)
		fg_event(&b, id, -1, true, S + 1000 + id, p8, 8);
	fg_schema(&b, S + 1000 + RLOG_ID_EVENT_SCHEMA, 2000, RLOG_KIND_EVENT, 0, "n.ev", one, 1);
	fg_thread_name(&b, S + 1000 + RLOG_ID_THREAD_NAME, "worker");
	fg_process_name(&b, S + 1000 + RLOG_ID_PROCESS_NAME, "proc");
	fg_event(&b, RLOG_ID_SPAN_BEGIN, -1, true, S + 1000 + RLOG_ID_SPAN_BEGIN, p8, 4);
	fg_event(&b, RLOG_ID_SPAN_END, -1, true, S + 1000 + RLOG_ID_SPAN_END, p8, 4);
	fg_block_end(&f, &b);
	fg_block_begin(&b, 100, 0, S + 1000, RLOG_BLOCK_FLAG_DAEMON);
	fg_data_loss(&b, S + 1000 + RLOG_ID_DATA_LOSS, 1, 16, RLOG_LOSS_NO_BUFFER);
	fg_counter(&b, S + 1000 + RLOG_ID_COUNTER, 1, RLOG_COUNTER_FLAG_VALUE, 0, 3, 3, 0);
	fg_counter_name(&b, S + 1000 + RLOG_ID_COUNTER_NAME, 1, RLOG_COUNTER_SRC_APP,
			RLOG_COUNTER_UNIT_COUNT, 1, 0, "c");
	fg_block_end(&f, &b);
	BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);
	fg_file_free(&f);

	struct run o = RUN("dump", path, "--all");
	ASSERT_EQ(o.status, 0);
	int bad = 0;
	for (size_t i = 0; i < nm->nids; i++) {
		const struct name_row *row = &nm->ids[i];
		if (row->value < 0)
			continue;
		char id[64] = "";
		long long t = row->value == RLOG_ID_LOG_MARKER ? 0 : 1000 + row->value;
		if (!id_at(o.out, t, id, sizeof id) || strcmp(id, row->name) != 0) {
			bad++;
			diag("dump prints ID %lld as \"%s\", DUMP.md says %s", row->value, id, row->name);
		}
	}
	ok(bad == 0, "dump prints every ID by its DUMP.md name (%zu rows, %d differ)", nm->nids, bad);
	run_free(&o);
}

/* The words of s (space-separated) equal those of want, in order. */
static bool same_words(const char *s, const char *want)
{
	char a[256], w[256];
	snprintf(a, sizeof a, "%s", s);
	snprintf(w, sizeof w, "%s", want);
	char *sa = NULL, *sw = NULL;
	char *x = strtok_r(a, " ", &sa), *y = strtok_r(w, " ", &sw);
	while (x && y && strcmp(x, y) == 0) {
		x = strtok_r(NULL, " ", &sa);
		y = strtok_r(NULL, " ", &sw);
	}
	return x == NULL && y == NULL;
}

/* The member table's row for a payload of len bytes. */
static int members_for(const struct names *nm, unsigned len)
{
	int k = -1;
	for (size_t i = 0; i < nm->nmembers; i++)
		if (nm->member_len[i] <= len && (k < 0 || nm->member_len[i] > nm->member_len[k]))
			k = (int)i;
	return k;
}

/* The keys of a dump text payload ("events=1 bytes=16 cause=x") or of a
 * JSON line's members after "id" (without "type"), space-separated. */
static void text_keys(const char *line, char *out, size_t cap)
{
	out[0] = '\0';
	const char *p = strstr(line, "DATA_LOSS");
	if (!p)
		return;
	for (p += strlen("DATA_LOSS"); *p;) {
		while (*p == ' ')
			p++;
		const char *eq = strchr(p, '='), *sp = strchr(p, ' ');
		if (!eq || (sp && sp < eq))
			break;
		snprintf(out + strlen(out), cap - strlen(out), "%s%.*s", out[0] ? " " : "",
			 (int)(eq - p), p);
		p = sp ? sp : p + strlen(p);
	}
}

static void json_keys(const char *line, char *out, size_t cap)
{
	out[0] = '\0';
	const char *p = strstr(line, "\"type\":\"data_loss\"");
	if (!p)
		return;
	p += strlen("\"type\":\"data_loss\"");
	while ((p = strstr(p, ",\""))) {
		p += 2;
		const char *q = strchr(p, '"');
		if (!q)
			break;
		snprintf(out + strlen(out), cap - strlen(out), "%s%.*s", out[0] ? " " : "",
			 (int)(q - p), p);
		p = q;
	}
}

/* A DATA_LOSS of every cause DUMP.md names, at its Length, and of an
 * unknown cause: dump's names and members. */
static void dump_causes(const struct names *nm, const char *path)
{
	struct fg_file f;
	struct fg_block b;
	fg_file_init(&f);
	fg_marker_block(&f, 1, 1, HZ, S, 1790000000000000000ull, RLOG_TICK_MONOTONIC, 16384, 8,
			"causes");
	fg_block_begin(&b, 100, 101, S + 2000, RLOG_BLOCK_FLAG_DAEMON);
	for (size_t i = 0; i < nm->ncauses; i++) {
		const struct name_row *row = &nm->causes[i];
		uint32_t cause = row->value < 0 ? 99u : (uint32_t)row->value;
		unsigned len = row->length ? row->length : (unsigned)sizeof(struct rlog_data_loss);
		struct fg_buf p = { 0 };
		fg_u64(&p, 10 + cause); /* events */
		fg_u64(&p, 160);        /* bytes */
		fg_u32(&p, cause);
		fg_u32(&p, 0);
		if (len >= 32)
			fg_u64(&p, 4);            /* blocks */
		if (len >= 48) {
			fg_u64(&p, S + 500);      /* first_time */
			fg_u64(&p, S + 700);      /* last_time */
		}
		while (p.len < len)
			fg_u8(&p, 0);
		fg_event(&b, RLOG_ID_DATA_LOSS, -1, true, S + 2000 + cause, p.p, (unsigned)p.len);
		free(p.p);
	}
	fg_block_end(&f, &b);
	BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);
	fg_file_free(&f);

	struct run o = RUN("dump", path), j = RUN("dump", path, "--format", "json");
	ASSERT_EQ(o.status, 0);
	ASSERT_EQ(j.status, 0);
	for (size_t i = 0; i < nm->ncauses; i++) {
		const struct name_row *row = &nm->causes[i];
		uint32_t cause = row->value < 0 ? 99u : (uint32_t)row->value;
		unsigned len = row->length ? row->length : (unsigned)sizeof(struct rlog_data_loss);
		char name[40], needle[80], line[512], keys[256];
		snprintf(name, sizeof name, "%s", row->name);
		if (row->value < 0)
			snprintf(name, sizeof name, "unknown(%u)", cause);
		int k = members_for(nm, len);
		ok(k >= 0, "DUMP.md says what a DATA_LOSS of Length %u holds", len);
		if (k < 0)
			continue;
		/* Text: "events=N bytes=N cause=NAME ..." on its own line. */
		snprintf(needle, sizeof needle, "events=%u bytes=160 cause=%s", 10 + cause, name);
		bool found = line_with(o.out, needle, line, sizeof line);
		ok(found, "dump prints cause %s (%s)", name, needle);
		text_keys(line, keys, sizeof keys);
		ok(found && same_words(keys, nm->members_text[k]),
		   "cause %s, Length %u: the text line's members are \"%s\" (DUMP.md \"%s\")", name,
		   len, keys, nm->members_text[k]);
		if (len >= 48)
			ok(strstr(line, " first_ns=500 last_ns=700") != NULL,
			   "cause %s: first_ns and last_ns are the range's times in ns (%s)", name, line);
		/* JSON. */
		snprintf(needle, sizeof needle, "\"events\":%u,\"bytes\":160,\"cause\":\"%s\"",
			 10 + cause, name);
		found = line_with(j.out, needle, line, sizeof line);
		ok(found, "dump --format json prints cause %s", name);
		json_keys(line, keys, sizeof keys);
		ok(found && same_words(keys, nm->members_json[k]),
		   "cause %s, Length %u: the JSON members are \"%s\" (DUMP.md \"%s\")", name, len, keys,
		   nm->members_json[k]);
		if (len >= 48)
			ok(strstr(line, "\"first_ns\":500,\"last_ns\":700") != NULL,
			   "cause %s: JSON first_ns and last_ns (%s)", name, line);
	}
	run_free(&o);
	run_free(&j);
}

/* A file of each tick source DUMP.md names, and of an unknown one. */
static void dump_ticks(const struct names *nm, const char *path)
{
	for (size_t i = 0; i < nm->nticks; i++) {
		const struct name_row *row = &nm->ticks[i];
		uint32_t src = row->value < 0 ? 9u : (uint32_t)row->value;
		char name[40], needle[80];
		snprintf(name, sizeof name, "%s", row->name);
		if (row->value < 0)
			snprintf(name, sizeof name, "unknown(%u)", src);
		struct fg_file f;
		fg_file_init(&f);
		fg_marker_block(&f, 1, 1, HZ, S, 1790000000000000000ull, src, 16384, 8, "ticks");
		BAIL_IF(fg_write(&f, path) < 0, "cannot write %s", path);
		fg_file_free(&f);
		struct run o = RUN("dump", path), j = RUN("dump", path, "--format", "json");
		snprintf(needle, sizeof needle, " source=%s realtime=", name);
		ok(o.status == 0 && strstr(o.out, needle) != NULL, "dump's LOG_MARKER says%s", needle);
		snprintf(needle, sizeof needle, "tick source %s at", name);
		ok(strstr(o.out, needle) != NULL, "dump's header says \"%s\"", needle);
		snprintf(needle, sizeof needle, "\"source\":\"%s\"", name);
		ok(j.status == 0 && strstr(j.out, needle) != NULL, "dump --format json says %s", needle);
		run_free(&o);
		run_free(&j);
	}
}

static void test_names(const struct doc *fmt, const struct doc *dump)
{
	struct names *nm = malloc(sizeof(*nm));
	BAIL_IF(nm == NULL, "out of memory");
	read_names(dump, nm);
	ok(nm->nids > 0 && nm->ncauses > 0 && nm->nticks > 0 && nm->nmembers > 0,
	   "DUMP.md has the name tables (%zu IDs, %zu causes, %zu tick sources, %zu Lengths)",
	   nm->nids, nm->ncauses, nm->nticks, nm->nmembers);
	check_names("ID", nm->ids, nm->nids, RLOG_ID_MAX + 1u, id_name);
	check_names("DATA_LOSS cause", nm->causes, nm->ncauses, 1024, cause_name);
	check_names("tick source", nm->ticks, nm->nticks, 1024, tick_name);
	check_constants(fmt, "RLOG_ID_", false, nm->ids, nm->nids);
	check_constants(fmt, "RLOG_LOSS_", true, nm->causes, nm->ncauses);
	check_constants(fmt, "RLOG_TICK_", true, nm->ticks, nm->nticks);

	/* The Length the daemon writes for each cause: its structure. */
	for (size_t i = 0; i < nm->ncauses; i++) {
		const struct name_row *row = &nm->causes[i];
		if (row->value < 0)
			continue;
		size_t want = row->value == RLOG_LOSS_REAL_TIME || row->value == RLOG_LOSS_SINK
				      ? sizeof(struct rlog_data_loss_blocks)
			      : row->value == RLOG_LOSS_OVERWRITTEN ? sizeof(struct rlog_data_loss_range)
								    : sizeof(struct rlog_data_loss);
		ok(row->length == want, "DUMP.md: cause %s has Length %u (format.h: %zu)", row->name,
		   row->length, want);
	}
	unsigned lens[3] = { sizeof(struct rlog_data_loss), sizeof(struct rlog_data_loss_blocks),
			     sizeof(struct rlog_data_loss_range) };
	for (int k = 0; k < 3; k++)
		ok(k < (int)nm->nmembers && nm->member_len[k] == lens[k],
		   "DUMP.md's DATA_LOSS members by Length: row %d is Length %u", k, lens[k]);

	char path[64];
	fg_tmpname(path, "docs");
	dump_ids(nm, path);
	dump_causes(nm, path);
	dump_ticks(nm, path);
	unlink(path);
	free(nm);
}

int main(void)
{
	struct doc fmt, dump;
	doc_load(&fmt, "RINGLOG_FORMAT_MD", "FORMAT.md");
	doc_load(&dump, "RINGLOG_DUMP_MD", "DUMP.md");
	diag("checking the tables of %s and %s", getenv("RINGLOG_FORMAT_MD"),
	     getenv("RINGLOG_DUMP_MD"));
	test_id_ranges(&fmt);
	test_record_kinds(&fmt);
	test_id_table(&fmt);
	test_names(&fmt, &dump);
	doc_free(&fmt);
	doc_free(&dump);
	return done_testing();
}
