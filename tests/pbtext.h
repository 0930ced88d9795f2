/*
 * pbtext.h - a Perfetto trace written by `ringlog convert --to perfetto`,
 * decoded by `protoc --decode=perfetto.protos.Trace` against
 * docs/perfetto/ringlog_perfetto.proto (found beside $RINGLOG_FORMAT_MD),
 * as a tree of protoc's text format, one field per line:
 *
 *   struct node *root = pbtext_decode(path);   // NULL: protoc failed (said)
 *   for (size_t i = 0; i < root->n; i++) ... root->kids[i]: a TracePacket
 *   val(p, "timestamp"), kid(p, "track_event"), num(p, "...")
 *   node_free(root);
 */
#ifndef RLOG_TESTS_PBTEXT_H
#define RLOG_TESTS_PBTEXT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

struct node {
	char *key, *val;         /* val NULL for a message */
	struct node **kids;
	size_t n;
};

static struct node *node_new(const char *key, size_t klen)
{
	struct node *n = calloc(1, sizeof(*n));
	n->key = strndup(key, klen);
	return n;
}

static void node_add(struct node *p, struct node *k)
{
	p->kids = realloc(p->kids, (p->n + 1) * sizeof(*p->kids));
	p->kids[p->n++] = k;
}

static void node_free(struct node *n)
{
	for (size_t i = 0; i < n->n; i++)
		node_free(n->kids[i]);
	free(n->kids);
	free(n->key);
	free(n->val);
	free(n);
}

static struct node *parse(const char *text)
{
	struct node *stack[16];
	int depth = 0;
	stack[0] = node_new("", 0);
	for (const char *l = text; *l;) {
		const char *e = strchr(l, '\n');
		if (!e)
			e = l + strlen(l);
		while (l < e && *l == ' ')
			l++;
		if (l < e && *l == '}') {
			depth--;
		} else if (l < e) {
			const char *sp = memchr(l, ' ', (size_t)(e - l));
			if (e[-1] == '{') {
				struct node *k = node_new(l, (size_t)(sp - l));
				node_add(stack[depth], k);
				stack[++depth] = k;
			} else {
				const char *colon = memchr(l, ':', (size_t)(e - l));
				struct node *k = node_new(l, (size_t)(colon - l));
				k->val = strndup(colon + 2, (size_t)(e - colon - 2));
				node_add(stack[depth], k);
			}
		}
		l = *e ? e + 1 : e;
	}
	return stack[0];
}

static const char *val(const struct node *n, const char *key)
{
	for (size_t i = 0; i < n->n; i++)
		if (strcmp(n->kids[i]->key, key) == 0)
			return n->kids[i]->val;
	return NULL;
}

static const struct node *kid(const struct node *n, const char *key)
{
	for (size_t i = 0; i < n->n; i++)
		if (strcmp(n->kids[i]->key, key) == 0)
			return n->kids[i];
	return NULL;
}

static uint64_t num(const struct node *n, const char *key)
{
	const char *v = val(n, key);
	return v ? strtoull(v, NULL, 10) : 0;
}

/* The trace at path as protoc decodes it, or NULL (protoc's error said). */
static struct node *pbtext_decode(const char *path)
{
	static char dir[2048];
	const char *md = getenv("RINGLOG_FORMAT_MD");
	BAIL_IF(!md, "RINGLOG_FORMAT_MD is not set");
	snprintf(dir, sizeof(dir), "%s", md);
	*strrchr(dir, '/') = '\0';
	char cmd[8192 + 256];
	snprintf(cmd, sizeof(cmd),
		 "protoc --decode=perfetto.protos.Trace --proto_path='%s/perfetto' "
		 "'%s/perfetto/ringlog_perfetto.proto' < '%s' 2>&1",
		 dir, dir, path);
	FILE *f = popen(cmd, "r");
	BAIL_IF(!f, "popen");
	size_t cap = 1 << 20, n = 0;
	char *text = malloc(cap);
	for (size_t k; (k = fread(text + n, 1, cap - n - 1, f)) > 0;) {
		n += k;
		if (n + 1 == cap)
			text = realloc(text, cap *= 2);
	}
	text[n] = '\0';
	int st = pclose(f);
	if (st != 0) {
		diag("protoc --decode failed on %s: %.300s", path, text);
		free(text);
		return NULL;
	}
	struct node *root = parse(text);
	free(text);
	return root;
}

#endif
