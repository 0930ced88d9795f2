/*
 * schema_stub.c - placeholders for the reader's schema and name API until
 * the schema table lands (issue 3): no schemas, no names.
 */
#include <errno.h>

#include "ringlog/reader.h"
#include "schema.h"

const struct rlog_schema *rlog_reader_schema(struct rlog_reader *r, const struct rlog_event *ev)
{
	(void)r;
	(void)ev;
	return NULL;
}

const char *rlog_reader_thread_name(struct rlog_reader *r, uint32_t pid, uint32_t tid)
{
	(void)r;
	(void)pid;
	(void)tid;
	return NULL;
}

const char *rlog_reader_process_name(struct rlog_reader *r, uint32_t pid)
{
	(void)r;
	(void)pid;
	return NULL;
}

int rlog_event_field(const struct rlog_schema *s, const struct rlog_event *ev, unsigned idx,
		     size_t *off, struct rlog_value *v)
{
	if (s == NULL || ev == NULL || idx >= s->field_count)
		return -EINVAL;
	return rlog__value_decode(s, idx, ev->payload, ev->length, off, v);
}
