/*
 * test_hostile_region - the session region is hostile input to the daemon
 * and to every opener.  The test maps a live session's region itself and
 * forges buffers: a descriptor naming a slot past the pool, a write offset
 * past the buffer, and three buffers holding one valid record followed by
 * garbage (reserved bit, ID 0, Length past the data).  The daemon must
 * skip and count exactly those five, keep the good events and the three
 * valid records, report the skipped bytes as DATA_LOSS (cause CORRUPT) and
 * write a file without damage.  Then a region with a bad header (garbage,
 * a wrong ABI version, too short) is refused by rlog_attach, query, stop
 * and list.
 */
#include "harness.h"

#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>

#include "atomics.h"
#include "procstat.h"
#include "record.h"
#include "shm.h"
#include "tap.h"

#define GOOD 100u
#define FAKE_TID 0x3ffff000u

/* Takes buffer idx out of the free bitmap.  Returns true if it was free. */
static bool take_buffer(struct rlog__region *r, uint32_t idx)
{
	uint64_t bit = UINT64_C(1) << (idx % 64);
	return (atomic_fetch_and(&r->free_bits[idx / 64], ~bit) & bit) != 0;
}

/* Claims a free producer slot as if a thread FAKE_TID + k of ours had. */
static uint32_t claim_slot(struct rlog__region *r, uint32_t k)
{
	for (uint32_t i = r->slot_count; i-- > 0;) {
		uint32_t expect = RLOG_SLOT_FREE;
		if (atomic_compare_exchange_strong(&r->slots[i].state, &expect, RLOG_SLOT_ACTIVE)) {
			r->slots[i].pid = (uint32_t)getpid();
			r->slots[i].tid = FAKE_TID + k;
			return i;
		}
	}
	return UINT32_MAX;
}

static void forge_desc(struct rlog__region *r, uint32_t idx, uint32_t slot, uint32_t tid,
		       uint32_t write_off, uint64_t base)
{
	struct rlog_shm_desc *d = &r->desc[idx];
	d->pid = (uint32_t)getpid();
	d->tid = tid;
	d->slot = slot;
	d->seq = 0;
	d->base_time = base;
	memset(d->lost_events, 0, sizeof d->lost_events);
	memset(d->lost_bytes, 0, sizeof d->lost_bytes);
	store_relaxed(&d->write_off, write_off);
}

/* One valid 16-byte record (ID 1025, payload u64 1), then 16 bytes of bad. */
static void forge_records(struct rlog__region *r, uint32_t idx, uint64_t base, uint32_t bad_hdr)
{
	uint8_t *p = rlog__region_buffer(r, idx);
	uint32_t w[8] = { rlog__hdr_make(1025, 8, true), (uint32_t)(base + 10), 1, 0,
			  bad_hdr, (uint32_t)(base + 20), 0xdeadbeef, 0xdeadbeef };
	memcpy(p, w, sizeof w);
}

/* Starts session tag (its file's path into path), attached, with GOOD
 * events of ours written into it; returns its name. */
static const char *start_with_good(const char *tag, char *path, size_t cap)
{
	const char *name = h_session(tag);
	snprintf(path, cap, "%s", h_path(tag));
	h_start(name, path, "4", "16");
	ASSERT_EQ(rlog_attach(name), 0);
	uint64_t ones = 0;
	for (uint64_t i = 1; i <= GOOD; i++) {
		uint64_t v[2] = { i, 0 };
		ones += rlog_write(1024, v, sizeof v) == 1;
	}
	ASSERT_EQ_U64(ones, GOOD);
	return name;
}

static void hostile_buffers(void)
{
	char path[256];
	/* Good events first: G events of ours, handed over. */
	const char *name = start_with_good("hr", path, sizeof path);
	ASSERT_EQ(rlog_flush_thread(), 0);

	struct rlog__region r;
	ASSERT_EQ(rlog__region_open(name, &r), 0);
	BAIL_IF(r.hdr == NULL, "cannot map the region");
	uint32_t bs = r.buffer_size;
	ASSERT_EQ_U64(bs, 4096);
	uint64_t base = rlog__now();

	/* The highest buffers: the producer takes the lowest free ones. */
	uint32_t a = 15, b = 14, c[3] = { 13, 12, 11 };
	ok(take_buffer(&r, a) && take_buffer(&r, b) && take_buffer(&r, c[0]) &&
	   take_buffer(&r, c[1]) && take_buffer(&r, c[2]), "took 5 free buffers");

	/* A: slot out of range. */
	forge_desc(&r, a, r.slot_count + 5, FAKE_TID, 64, base);
	/* B: a claimed slot, write_off past the buffer. */
	uint32_t sb = claim_slot(&r, 1);
	BAIL_IF(sb == UINT32_MAX, "no free slot");
	forge_desc(&r, b, sb, FAKE_TID + 1, bs + 4, base);
	/* C0..C2: one good record, then garbage. */
	uint32_t bad[3] = {
		rlog__hdr_make(1025, 8, true) | RLOG_HDR_RESERVED_BIT,
		rlog__hdr_make(RLOG_ID_INVALID, 8, true),
		rlog__hdr_make(1025, 1000, true), /* Length past write_off */
	};
	for (int k = 0; k < 3; k++) {
		uint32_t sc = claim_slot(&r, 2 + (uint32_t)k);
		BAIL_IF(sc == UINT32_MAX, "no free slot");
		forge_records(&r, c[k], base, bad[k]);
		forge_desc(&r, c[k], sc, FAKE_TID + 2 + (uint32_t)k, 32, base);
	}
	/* Hand them all to the daemon (pairs with its load_acquire(state)). */
	store_release(&r.desc[a].state, RLOG_BUF_FULL);
	store_release(&r.desc[b].state, RLOG_BUF_FULL);
	for (int k = 0; k < 3; k++)
		store_release(&r.desc[c[k]].state, RLOG_BUF_FULL);
	rlog__region_close(&r);

	struct h_run run;
	h_ringlog(&run, "stop", name, NULL);
	ASSERT_EQ(run.status, 0);
	ASSERT_STREQ(run.err, "");
	ASSERT_EQ_U64(h_kv(run.out, "corrupt_buffers"), 5);
	ASSERT_EQ_U64(h_kv(run.out, "events_written"), GOOD + 3);
	ASSERT_EQ_U64(h_kv(run.out, "bytes_written"), GOOD * 24 + 3 * 16);
	ASSERT_EQ_U64(h_kv(run.out, "events_lost"), 0);
	/* A and B lose a whole buffer each, C0..C2 the 16 bytes after the
	 * valid record. */
	ASSERT_EQ_U64(h_kv(run.out, "bytes_lost"), 2 * bs + 3 * 16);

	struct rlog_reader *rd;
	ASSERT_EQ(rlog_reader_open(path, &rd), 0);
	struct rlog_event ev;
	uint64_t good = 0, forged = 0, other = 0, corrupt_records = 0, corrupt_bytes = 0;
	uint64_t forged_tids = 0;
	while (rlog_reader_next(rd, &ev) == 1) {
		if (ev.from_daemon && ev.id == RLOG_ID_LOG_MARKER)
			continue;
		if (ev.from_daemon && ev.id == RLOG_ID_DATA_LOSS) {
			struct rlog_data_loss dl;
			memcpy(&dl, ev.payload, sizeof dl);
			if (dl.cause == RLOG_LOSS_CORRUPT) {
				corrupt_records++;
				corrupt_bytes += dl.bytes;
				ASSERT_EQ_U64(dl.events, 0);
			} else {
				other++;
			}
			continue;
		}
		if (h_is_metadata(&ev))
			continue;
		uint64_t seq;
		memcpy(&seq, ev.payload, 8);
		if (ev.id == 1024 && ev.tid != FAKE_TID + 2 && ev.length == 16)
			good++;
		else if (ev.id == 1025 && ev.length == 8 && seq == 1 && ev.tid >= FAKE_TID + 2 &&
			 ev.tid <= FAKE_TID + 4) {
			forged++;
			forged_tids |= UINT64_C(1) << (ev.tid - FAKE_TID);
		} else
			other++;
	}
	ASSERT_EQ_U64(rlog_reader_damage_count(rd), 0);
	rlog_reader_close(rd);
	ASSERT_EQ_U64(good, GOOD);
	ASSERT_EQ_U64(forged, 3);
	ASSERT_EQ_U64(forged_tids, 0x1c);
	ASSERT_EQ_U64(other, 0);
	ASSERT_EQ_U64(corrupt_records, 5);
	ASSERT_EQ_U64(corrupt_bytes, 2 * bs + 3 * 16);
	rlog_detach();
	unlink(path);
}

/* Makes /dev/shm/ringlog.<name> of size bytes: 0xa5 garbage, then fix(). */
static void bad_region(const char *name, size_t size, void (*fix)(struct rlog_shm_header *))
{
	char shm[96];
	snprintf(shm, sizeof shm, "/ringlog.%s", name);
	shm_unlink(shm);
	int fd = shm_open(shm, O_RDWR | O_CREAT | O_EXCL, 0600);
	BAIL_IF(fd < 0, "shm_open %s: %s", shm, strerror(errno));
	BAIL_IF(ftruncate(fd, (off_t)size) != 0, "ftruncate");
	uint8_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	BAIL_IF(p == MAP_FAILED, "mmap");
	close(fd);
	memset(p, 0xa5, size);
	if (fix)
		fix((struct rlog_shm_header *)p);
	munmap(p, size);
}

static void fix_abi(struct rlog_shm_header *h)
{
	/* A real header of 2 x 4 KiB buffers, but ABI version 2. */
	memset(h, 0, sizeof *h);
	h->magic = RLOG_SHM_MAGIC;
	h->abi_version = RLOG_SHM_ABI_VERSION + 1;
	h->header_size = sizeof *h;
	h->state = RLOG_STATE_ACTIVE;
}

static void fix_geometry(struct rlog_shm_header *h)
{
	/* Right magic and version, a geometry that does not fit the size. */
	fix_abi(h);
	h->abi_version = RLOG_SHM_ABI_VERSION;
	h->region_size = 8192;
	h->buffer_size = 4096;
	h->buffer_count = 1000;
	h->slot_count = 1064;
	h->min_buffers = 32;
	h->high_water_pct = 70;
}

static void check_refused(const char *what, const char *name)
{
	char line[256];
	struct h_run r;
	ASSERT_EQ(rlog_attach(name), -EPROTO);
	uint64_t v = 1;
	ASSERT_EQ(rlog_write(1024, &v, sizeof v), 0);
	ok(!rlog_enabled(0), "%s: not enabled", what);

	h_ringlog(&r, "query", name, NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(line, sizeof line,
		 "ringlog: query: %s: not a ringlog session region of this version\n", name);
	ASSERT_STREQ(r.err, line);
	ASSERT_STREQ(r.out, "");

	h_ringlog(&r, "list", NULL);
	ASSERT_EQ(r.status, 0);
	snprintf(line, sizeof line, "%-24s %-9s %s\n", name, "invalid", "-");
	ASSERT_CONTAINS(r.out, line);

	h_ringlog(&r, "emit", name, "1024", NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(line, sizeof line, "ringlog: emit: %s: %s\n", name, strerror(EPROTO));
	ASSERT_STREQ(r.err, line);

	h_ringlog(&r, "stop", name, NULL);
	ASSERT_EQ(r.status, 1);
	snprintf(line, sizeof line,
		 "ringlog: stop: %s: not a ringlog session region of this version\n", name);
	ASSERT_STREQ(r.err, line);
	ASSERT_STREQ(r.out, "");
}

static void hostile_headers(void)
{
	char name[64], shm[96];
	snprintf(name, sizeof name, "t-bad-%d-%x", (int)getpid(), h_nonce());
	snprintf(shm, sizeof shm, "/ringlog.%s", name);

	bad_region(name, 8192, NULL);
	check_refused("garbage", name);
	bad_region(name, 8192, fix_abi);
	check_refused("abi version", name);
	bad_region(name, 8192, fix_geometry);
	check_refused("geometry", name);
	bad_region(name, 100, NULL);
	check_refused("short", name);
	ASSERT_EQ(shm_unlink(shm), 0);

	/* An empty object (size 0): refused the same way, nothing mapped. */
	int fd = shm_open(shm, O_RDWR | O_CREAT | O_EXCL, 0600);
	ok(fd >= 0, "created an empty region");
	close(fd);
	check_refused("empty", name);
	ASSERT_EQ(shm_unlink(shm), 0);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/*
 * Slots and a process entry whose pids no process can have: a slot inside
 * a write (busy 1) whose pid is above INT32_MAX, one inside a write whose
 * pid is pid_max, one ACTIVE with pid 0 and no claimer's stamp, and a
 * process entry with its gate raised and pid 0.  The daemon once waited
 * its whole 10 s at stop for the first and the last; now each is damage,
 * counted at once: stop returns in well under 2 s, corrupt_buffers is 4,
 * the file has four CORRUPT records and every good event, and stop says
 * the region is damaged (exit 1).
 */
static void impossible_pids(void)
{
	char path[256];
	const char *name = start_with_good("ip", path, sizeof path);
	ASSERT_EQ(rlog_detach(), 0);

	struct rlog__region r;
	ASSERT_EQ(rlog__region_open(name, &r), 0);
	BAIL_IF(r.hdr == NULL, "cannot map the region");
	uint32_t pids[3] = { UINT32_C(0xfffffff0), rlog__pid_max(), 0 };
	for (uint32_t k = 0; k < 3; k++) {
		uint32_t i = claim_slot(&r, k);
		BAIL_IF(i == UINT32_MAX, "no free slot");
		r.slots[i].pid = pids[k];
		store_seq_cst(&r.slots[i].busy, k < 2);
	}
	uint32_t e = UINT32_MAX;
	for (uint32_t i = r.slot_count; i-- > 0 && e == UINT32_MAX;) {
		uint32_t expect = RLOG_PROC_FREE;
		if (atomic_compare_exchange_strong(&r.procs[i].state, &expect, RLOG_PROC_ACTIVE))
			e = i;
	}
	BAIL_IF(e == UINT32_MAX, "no free process entry");
	store_seq_cst(&r.procs[e].gate, 1);
	rlog__region_close(&r);

	struct h_run run;
	uint64_t t0 = mono_ms();
	h_ringlog(&run, "stop", name, NULL);
	uint64_t ms = mono_ms() - t0;
	ok(ms < 2000, "stop returned in %" PRIu64 " ms (under 2 s; the wait limit is 10 s)", ms);
	ASSERT_EQ(run.status, 1);
	ok(strstr(run.err, "ringlog: stop: ") == run.err &&
	   strstr(run.err, "the region is damaged: ") != NULL &&
	   strstr(run.err, "which no process can have") != NULL,
	   "stop says the region is damaged: %s", run.err);
	ASSERT_EQ_U64(h_kv(run.out, "corrupt_buffers"), 4);
	ASSERT_EQ_U64(h_kv(run.out, "events_written"), GOOD);
	ASSERT_EQ_U64(h_kv(run.out, "events_lost"), 0);
	struct h_summary sum;
	h_summarize(path, &sum);
	ASSERT_EQ(sum.open_err, 0);
	ASSERT_EQ_U64(sum.damage, 0);
	ASSERT_EQ_U64(sum.events, GOOD);
	ASSERT_EQ_U64(sum.loss_records, 4);
	ASSERT_EQ_U64(sum.loss_events, 0);
	unlink(path);
}

int main(void)
{
	impossible_pids();
	hostile_buffers();
	hostile_headers();
	return done_testing();
}
