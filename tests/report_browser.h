/*
 * report_browser.h - the tests of `ringlog report` open its page in
 * headless Chromium (docs/CONVERT.md, "Tested in a real browser"):
 *
 *   const char *bin = chromium();          // NULL: none installed
 *   struct run r = browse(bin, "file:///tmp/x.html#t0=1&t1=2", "--dump-dom", NULL);
 *   struct json *st = selftest_of(r.out);  // the page's <pre id="selftest">
 *   st = page_selftest(bin, "/tmp/x.html", "selftest=ticks", &r);  // both, checked
 *
 * With --enable-logging=stderr, a console message shows in r.err as
 * ":CONSOLE".  Needs proc_run.h and json.h first.
 */
#ifndef RLOG_TESTS_REPORT_BROWSER_H
#define RLOG_TESTS_REPORT_BROWSER_H

#include <dirent.h>
#include <ftw.h>

static inline const char *chromium(void)
{
	const char *env = getenv("RINGLOG_CHROMIUM"); /* a browser of one's choice */
	if (env && *env)
		return access(env, X_OK) == 0 ? env : NULL;
	static const char *const cand[] = { "/usr/bin/chromium", "/usr/bin/chromium-browser",
					    "/usr/bin/google-chrome" };
	for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++)
		if (access(cand[i], X_OK) == 0)
			return cand[i];
	return NULL;
}

static inline int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(p);
}

/* Headless Chromium on url with the extra arguments (NULL-terminated),
 * a profile of its own that is removed after. */
static inline struct run browse(const char *bin, const char *url, const char *a1, const char *a2)
{
	char profile[] = "/tmp/rlog_chromium_XXXXXX", pflag[64];
	BAIL_IF(!mkdtemp(profile), "mkdtemp: %s", strerror(errno));
	snprintf(pflag, sizeof pflag, "--user-data-dir=%s", profile);
	const char *argv[] = { bin, "--headless", "--no-sandbox", "--disable-gpu",
			       "--no-first-run", "--hide-scrollbars", "--enable-logging=stderr",
			       "--v=0", pflag, a1, a2 ? a2 : url, a2 ? url : NULL, NULL };
	struct run r = proc_run(argv);
	nftw(profile, rm_one, 16, FTW_DEPTH | FTW_PHYS);
	return r;
}

/* The text of <pre id="selftest"> in the dumped DOM, its entities
 * undone, parsed. */
static inline struct json *selftest_of(const char *dom)
{
	const char *p = strstr(dom, "<pre id=\"selftest\"");
	if (!p || !(p = strchr(p, '>')))
		return NULL;
	p++;
	const char *e = strstr(p, "</pre>");
	if (!e)
		return NULL;
	char *t = malloc((size_t)(e - p) + 1);
	size_t n = 0;
	while (p < e) {
		if (strncmp(p, "&amp;", 5) == 0)
			t[n++] = '&', p += 5;
		else if (strncmp(p, "&lt;", 4) == 0)
			t[n++] = '<', p += 4;
		else if (strncmp(p, "&gt;", 4) == 0)
			t[n++] = '>', p += 4;
		else if (strncmp(p, "&quot;", 6) == 0)
			t[n++] = '"', p += 6;
		else
			t[n++] = *p++;
	}
	char err[128];
	struct json *j = json_parse(t, n, err, sizeof err);
	if (!j)
		diag("selftest does not parse (%s): %.*s", err, (int)n, t);
	free(t);
	return j;
}

/* Opens file html#hash in the browser (--dump-dom) into *r; two TAP
 * points: it loaded with no console message, the page ran with no
 * error.  Returns the page's self-test figures (NULL if none), for
 * json_free. */
static inline struct json *page_selftest(const char *bin, const char *html, const char *hash,
				  struct run *r)
{
	char url[1024];
	snprintf(url, sizeof url, "file://%s#%s", html, hash);
	*r = browse(bin, url, "--dump-dom", NULL);
	ok(r->status == 0 && strstr(r->err, ":CONSOLE") == NULL,
	   "chromium --dump-dom of %s: exit 0, no console message (%d)", html, r->status);
	if (strstr(r->err, ":CONSOLE"))
		diag("stderr: %.2000s", r->err);
	struct json *st = selftest_of(r->out);
	const struct json *errs = st ? json_get(st, "errors") : NULL;
	ok(errs && errs->type == JSON_ARR && errs->n == 0, "the page ran with no error");
	return st;
}

/* The browser, or NULL after a TAP point: skipped without one, failed
 * under CI=true, where the browser part must run. */
static inline const char *chromium_or_skip(const char *what)
{
	const char *bin = chromium();
	const char *ci = getenv("CI");
	if (!bin && ci && strcmp(ci, "true") == 0)
		ok(0, "chromium is installed (CI=true: the browser test must run; scripts/deps.sh "
		      "installs it)");
	else if (!bin)
		ok(1, "# SKIP %s: no chromium (scripts/deps.sh installs it)", what);
	return bin;
}

#endif
