/*
 * test_term_escape - text a hostile producer controls never reaches the
 * terminal raw: an escape sequence (ESC, CR, BEL, a lone C1 byte 0x9b,
 * U+009B encoded, a right-to-left override, invalid UTF-8) written into
 * the region's error text and log file path, a thread name, a process
 * name, a RAW_STRING event and a declared event's string field is shown
 * escaped (\xHH, \r) by list, query, stop, dump (text and JSON) and stats:
 * their output holds no byte below 0x20 but the newline, no 0x7f, no C1
 * control and no override, and the escaped form exactly.
 */
#include "harness.h"
#include "ringlog/event.h"
#include "shm.h"
#include "utf8.h"

#include "tap.h"

#define HOSTILE "\x1b[31mRED\r\x07\x9b\xc2\x9b\xe2\x80\xae\xffok"
#define ESCAPED "\\x1b[31mRED\\r\\x07\\x9b\\xc2\\x9b\\xe2\\x80\\xae\\xffok"

#define NOTE_FIELDS(F) F(STRING, text)
RLOG_DEFINE_EVENT(note, 2000, "note", 0, NOTE_FIELDS)

/* Nothing a terminal acts on: see the top of the file. */
static void clean(const char *what, const char *s)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t n = strlen(s), bad = SIZE_MAX;
	for (size_t i = 0; i < n && bad == SIZE_MAX;) {
		uint32_t cp;
		unsigned k = rlog__utf8_len(p + i, n - i, &cp);
		if (k == 0 || (cp < 0x20 && cp != '\n') || (cp >= 0x7f && cp < 0xa0) ||
		    (cp >= 0x202a && cp <= 0x202e))
			bad = i;
		i += k ? k : 1;
	}
	ok(bad == SIZE_MAX, "%s: only printable text (first bad byte at %zd: 0x%02x)", what,
	   bad == SIZE_MAX ? (ssize_t)-1 : (ssize_t)bad, bad == SIZE_MAX ? 0 : p[bad]);
}

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;
	for (const char *p = s; (p = strstr(p, needle)) != NULL; p += strlen(needle))
		n++;
	return n;
}

int main(void)
{
	char name[64], path[256], line[512];
	snprintf(name, sizeof name, "%s", h_session("term"));
	snprintf(path, sizeof path, "%s", h_path("term"));
	h_start(name, path, NULL, NULL);

	/* A producer: names and a string event. */
	ASSERT_EQ(rlog_attach(name), 0);
	ASSERT_EQ(rlog_thread_name(HOSTILE), 0);
	ASSERT_EQ(rlog_process_name(HOSTILE), 0);
	ASSERT_EQ(rlog_write(RLOG_ID_RAW_STRING, HOSTILE, strlen(HOSTILE)), 1);
	ASSERT_EQ(RLOG_EVENT(note, HOSTILE), 1);
	ASSERT_EQ(rlog_detach(), 0);

	/* The region's error text, as a hostile producer may write it. */
	struct rlog__region r;
	ASSERT_EQ(rlog__region_open(name, &r), 0);
	memcpy(r.hdr->last_error, HOSTILE, sizeof HOSTILE);
	/* And its log file's path (the daemon writes through its descriptor,
	 * never reads the path again). */
	memcpy(r.hdr->log_file, "/tmp/" HOSTILE, sizeof "/tmp/" HOSTILE);
	rlog__region_close(&r);

	static struct h_run q;
	h_ringlog(&q, "list", NULL);
	ASSERT_EQ(q.status, 0);
	snprintf(line, sizeof line, "%-24s %-9s /tmp/" ESCAPED "\n", name, "active");
	ASSERT_CONTAINS(q.out, line);
	clean("list", q.out);

	h_ringlog(&q, "query", name, NULL);
	ASSERT_EQ(q.status, 0);
	ASSERT_CONTAINS(q.out, "last_error: " ESCAPED "\n");
	ASSERT_CONTAINS(q.out, "file: /tmp/" ESCAPED "\n");
	clean("query", q.out);

	h_ringlog(&q, "stop", name, NULL);
	ASSERT_EQ(q.status, 1);
	snprintf(line, sizeof line, "ringlog: stop: %s: %s\n", name, ESCAPED);
	ASSERT_CONTAINS(q.err, line);
	ASSERT_CONTAINS(q.out, "file: /tmp/" ESCAPED "\n");
	ASSERT_EQ_U64(h_kv(q.out, "events_written"), 2);
	clean("stop's output", q.out);
	clean("stop's errors", q.err);

	h_ringlog(&q, "dump", path, "--all", NULL);
	ASSERT_EQ(q.status, 0);
	/* The thread's name, the process's name, the RAW_STRING event and the
	 * declared event's string field. */
	ASSERT_EQ_U64(count(q.out, "\"" ESCAPED "\""), 4);
	ASSERT_CONTAINS(q.out, " note         text=\"" ESCAPED "\"\n");
	clean("dump", q.out);

	h_ringlog(&q, "dump", path, "--all", "--format", "json", NULL);
	ASSERT_EQ(q.status, 0);
	ASSERT_CONTAINS(q.out, "\\u001b[31mRED\\r\\u0007\\ufffd\\u009b\\u202e\\ufffdok");
	clean("dump --format json", q.out);

	h_ringlog(&q, "stats", path, NULL);
	ASSERT_EQ(q.status, 0);
	ASSERT_CONTAINS(q.out, ESCAPED);
	clean("stats", q.out);

	unlink(path);
	return done_testing();
}
