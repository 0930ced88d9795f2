/*
 * report.js - the report page's code: reads the data element `ringlog
 * report` wrote (src/report/report.c), fills the tables and draws the
 * timeline on a canvas.  No library, no network: the page is one file.
 *
 * The data's encodings (all integers are ns, as `ringlog stats` and
 * `ringlog dump` give times):
 *   lane.ticks  base64 of varints, per event: zigzag(time - previous
 *               time of the lane), then name << 2 | kind (kind 0 an
 *               event, 1 a span's begin, 2 a span's end)
 *   lane.spans  per depth d: base64 of varints, per span by start:
 *               zigzag(start - previous start), duration, name << 1 | open
 *   lane.runs   per run on a CPU: zigzag(start - previous start),
 *               duration, tid (data.tasks names it)
 *   lane.ov     base64 of varints: the lane's events in each of the
 *               converter's columns of [tmin, tmax] (the overview)
 * Varints are protobuf's: 7 bits a byte, least significant first.
 *
 * Several hosts' files (data.hosts, `ringlog report DIR`): data.stats is
 * `ringlog stats --json`'s {"hosts":[..],"total":{..}}; every lane,
 * counter, loss and task carries "host", its index there; the times are
 * of the merged CLOCK_REALTIME timeline (0: the earliest host's start).
 * A window (data.window, --since/--until): the data holds what meets it,
 * data.window its own counts; data.stats stays the whole file's.
 *
 * Text from the file reaches the page only through textContent and
 * canvas fillText, never as markup.
 *
 * The page writes what it computed from the data into <pre id="selftest">
 * (JSON), for the browser test (tests/test_report.c): the events, spans,
 * losses and lanes it decoded, and the events in the window shown.
 */
"use strict";

const errors = [];
window.addEventListener("error", (e) => errors.push(String(e.message || e)));
(function () {
	const ce = console.error.bind(console);
	console.error = (...a) => { errors.push(a.map(String).join(" ")); ce(...a); };
})();

const $ = (id) => document.getElementById(id);

function el(tag, text, cls) {
	const e = document.createElement(tag);
	if (text !== undefined && text !== null) e.textContent = String(text);
	if (cls) e.className = cls;
	return e;
}

/* ---- decoding ---- */

function bytes(b64) {
	if (Uint8Array.fromBase64) return Uint8Array.fromBase64(b64); /* native where there is one */
	const s = atob(b64);
	const u = new Uint8Array(s.length);
	for (let i = 0; i < s.length; i++) u[i] = s.charCodeAt(i);
	return u;
}

/* A reader of varints over u (values up to 2^53 exact). */
function varints(u) {
	let i = 0;
	return {
		more: () => i < u.length,
		next() {
			let v = 0, mul = 1, c;
			do {
				c = u[i++];
				v += (c & 0x7f) * mul;
				mul *= 128;
			} while (c & 0x80);
			return v;
		},
		zz() {
			const z = this.next();
			return z % 2 === 0 ? z / 2 : -(z + 1) / 2;
		},
	};
}

function decodeLane(l) {
	const n = l.n;
	const t = new Float64Array(n), name = new Uint32Array(n), kind = new Uint8Array(n);
	/* The hot loop, inlined: the common one- and two-byte varints in
	 * integer arithmetic, longer ones (large gaps) in doubles. */
	const u = bytes(l.ticks);
	let last = 0, i = 0;
	for (let k = 0; k < n; k++) {
		let z = u[i++];
		if (z & 0x80) {
			let mul = 128, c;
			z &= 0x7f;
			do {
				c = u[i++];
				z += (c & 0x7f) * mul;
				mul *= 128;
			} while (c & 0x80);
		}
		last += z % 2 === 0 ? z / 2 : -(z + 1) / 2;
		t[k] = last;
		let x = u[i++];
		if (x & 0x80) {
			let mul = 128, c;
			x &= 0x7f;
			do {
				c = u[i++];
				x += (c & 0x7f) * mul;
				mul *= 128;
			} while (c & 0x80);
		}
		kind[k] = x & 3;
		name[k] = x >>> 2;
	}
	l.t = t; l.tn = name; l.kind = kind;
	l.depths = [];
	for (const d of l.spans) {
		const s = new Float64Array(d.n), e = new Float64Array(d.n), me = new Float64Array(d.n);
		const nm = new Uint32Array(d.n), open = new Uint8Array(d.n);
		const q = varints(bytes(d.b));
		let st = 0, maxEnd = -Infinity;
		for (let k = 0; k < d.n; k++) {
			st += q.zz();
			s[k] = st;
			e[k] = st + q.next();
			const x = q.next();
			nm[k] = Math.floor(x / 2);
			open[k] = x % 2;
			maxEnd = Math.max(maxEnd, e[k]);
			me[k] = maxEnd; /* ends sorted for the search even if spans overlap */
		}
		l.depths[d.d] = { n: d.n, s, e, me, name: nm, open };
	}
	const nr = l.nruns;
	l.rs = new Float64Array(nr); l.re = new Float64Array(nr); l.rme = new Float64Array(nr);
	l.rtid = new Uint32Array(nr);
	const q = varints(bytes(l.runs));
	let st = 0, maxEnd = -Infinity;
	for (let k = 0; k < nr; k++) {
		st += q.zz();
		l.rs[k] = st;
		l.re[k] = st + q.next();
		l.rtid[k] = q.next();
		maxEnd = Math.max(maxEnd, l.re[k]);
		l.rme[k] = maxEnd;
	}
	const o = varints(bytes(l.ov));
	l.overview = [];
	while (o.more()) l.overview.push(o.next());
}

/* First index in a[lo, hi) with a[i] >= v. */
function lower(a, v, lo = 0, hi = a.length) {
	while (lo < hi) {
		const m = (lo + hi) >>> 1;
		if (a[m] < v) lo = m + 1; else hi = m;
	}
	return lo;
}

/* First index in a[lo, hi) with a[i] > v. */
function upper(a, v, lo = 0, hi = a.length) {
	while (lo < hi) {
		const m = (lo + hi) >>> 1;
		if (a[m] <= v) lo = m + 1; else hi = m;
	}
	return lo;
}

/* ---- formatting ---- */

function fmtInt(v) {
	return v === null || v === undefined ? "-" : Number(v).toLocaleString("en-US");
}

function fmtNs(ns) {
	if (ns === null || ns === undefined) return "-";
	const a = Math.abs(ns);
	if (a < 1e3) return ns + " ns";
	if (a < 1e6) return (ns / 1e3).toFixed(a < 1e4 ? 2 : 1) + " \u00b5s";
	if (a < 1e9) return (ns / 1e6).toFixed(a < 1e7 ? 2 : 1) + " ms";
	return (ns / 1e9).toFixed(3) + " s";
}

/* Hues 30..330: red is the losses'. */
function hue(i) {
	return 30 + (i * 137.508) % 300;
}

function color(i, light) {
	return "hsl(" + hue(i).toFixed(0) + "," + (light ? "55%,78%)" : "60%,45%)");
}

/* ---- the data ---- */

const tParse = performance.now();
const D = JSON.parse($("rlog-data").textContent);
const S = D.stats;
const names = D.names;
const MULTI = Array.isArray(D.hosts); /* several hosts' files */
const WIN = D.window || null;          /* --since/--until */
/* A thread's key: host, pid, tid (two hosts' ids are unrelated). */
const key3 = (h, pid, tid) => (h || 0) + ":" + pid + ":" + tid;
const tasks = new Map(D.tasks.map((x) => [(x[3] || 0) + ":" + x[0], { pid: x[1], name: x[2] }]));
const taskOf = (l, tid) => tasks.get((l.host || 0) + ":" + tid);
const tDecode = performance.now();
for (const l of D.lanes) decodeLane(l);
const tDecoded = performance.now();
for (const c of D.counters) {
	let t = 0;
	c.tt = c.t.map((d) => (t += d));
	c.min = Infinity;
	c.max = -Infinity;
	for (const v of c.v) { /* not Math.min(...c.v): arguments are limited */
		if (v < c.min) c.min = v;
		if (v > c.max) c.max = v;
	}
}

function laneLabel(l) {
	/* pid 0: the system blocks (docs/FORMAT.md, "System events"): tid
	 * the CPU, 0xffffffff the rundown; or the daemon's own records */
	if (l.pid === 0 && l.nruns > 0) return "CPU " + l.tid;
	if (l.pid === 0 && l.tid === 4294967295) return "rundown";
	if (l.pid === 0 && l.tid === 0) return "daemon";
	if (l.tid === 0) return "process-wide (0)"; /* records about the process, from the daemon */
	return (l.name ? l.name + " " : "") + "(" + l.tid + ")";
}

function procLabel(host, pid) {
	if (pid === 0) return "system";
	const l = D.lanes.find((x) => (x.host || 0) === host && x.pid === pid && x.process);
	return (l ? l.process + " " : "process ") + "(" + pid + ")";
}

/* ---- the summary, the session, the losses ---- */

function card(k, v, bad) {
	const c = el("div", null, "card" + (bad ? " bad" : ""));
	c.append(el("div", v, "v"), el("div", k, "k"));
	$("summary").append(c);
}

function kv(table, k, v) {
	const tr = el("tr");
	tr.append(el("td", k), el("td", v, "mono"));
	$(table).append(tr);
}

function grid(table, head, rows, numeric) {
	const t = $(table);
	t.textContent = "";
	const hr = el("tr");
	head.forEach((h, i) => hr.append(el("th", h, numeric[i] ? "num" : "")));
	t.append(hr);
	for (const r of rows) {
		const tr = el("tr");
		r.forEach((c, i) => tr.append(el("td", c, numeric[i] ? "num" : "")));
		t.append(tr);
	}
	if (rows.length === 0) {
		const tr = el("tr");
		const td = el("td", "none", "muted");
		td.colSpan = head.length;
		tr.append(td);
		t.append(tr);
	}
}

/* The window as text: its bounds in ns of the trace. */
function winText() {
	return (WIN.since_ns === null ? "start" : fmtInt(WIN.since_ns) + " ns") + " .. " +
		(WIN.until_ns === null ? "end" : fmtInt(WIN.until_ns) + " ns (excluded)");
}

/* The window's losses per thread and cause, summed from its DATA_LOSS
 * records (data.thread_losses is the whole file's). */
function windowThreadLosses() {
	const m = new Map();
	for (const o of D.losses) {
		const k = key3(o.host, o.pid, o.tid) + ":" + o.cause;
		const r = m.get(k) || { host: o.host || 0, pid: o.pid, tid: o.tid, cause: o.cause, events: 0,
			bytes: 0, first_ns: o.t0, last_ns: o.t1 };
		r.events += o.events; r.bytes += o.bytes;
		r.first_ns = Math.min(r.first_ns, o.t0); r.last_ns = Math.max(r.last_ns, o.t1);
		m.set(k, r);
	}
	return [...m.values()];
}

/* The page's DATA_LOSS records (the window's, or every file's) by cause. */
function lossesByCause() {
	const causes = new Map();
	for (const o of D.losses) {
		const c = causes.get(o.cause) || { cause: o.cause, records: 0, events: 0, bytes: 0 };
		c.records++; c.events += o.events; c.bytes += o.bytes;
		causes.set(o.cause, c);
	}
	return [...causes.values()];
}

function lossCauseGrid(rows) {
	grid("loss-cause", ["cause", "records", "events", "bytes"],
		rows.map((l) => [l.cause, fmtInt(l.records), fmtInt(l.events), fmtInt(l.bytes)]),
		[false, true, true, true]);
}

function lossThreadGrid(rows) {
	const h = MULTI ? ["host"] : [], hn = MULTI ? [false] : [];
	grid("loss-thread", h.concat(["pid", "tid", "cause", "events", "bytes", "from", "to"]),
		rows.map((l) => (MULTI ? [D.hosts[l.host || 0].host] : []).concat([l.pid, l.tid, l.cause,
			fmtInt(l.events), fmtInt(l.bytes), fmtInt(l.first_ns) + " ns", fmtInt(l.last_ns) + " ns"])),
		hn.concat([true, true, false, true, true, true, true]));
}

/* The window's cards and rows, before the whole file's. */
function fillWindow() {
	card("window", winText());
	card("events in the window", fmtInt(WIN.events));
	card("threads in the window", fmtInt(WIN.threads));
	card("lost events in the window", fmtInt(WIN.lost_events), WIN.lost_events > 0);
	kv("totals", "window", winText() + ": what meets it is in this page");
	kv("totals", "events in the window", fmtInt(WIN.events));
	kv("totals", "losses meeting the window", fmtInt(WIN.lost_events) + " events in " +
		fmtInt(WIN.loss_records) + " DATA_LOSS records (by their time range)");
	kv("totals", "threads in the window", fmtInt(WIN.threads));
}

/* Several hosts: stats --json's row per host and the total. */
function fillHosts() {
	const T = S.total;
	document.title = "ringlog report: " + T.hosts + " hosts";
	$("title-session").textContent = T.hosts + " hosts";
	$("title-file").textContent = "merged by CLOCK_REALTIME: time 0 is " + D.origin;
	if (WIN) fillWindow();
	card(WIN ? "file events" : "events", fmtInt(T.events));
	card("hosts", fmtInt(T.hosts));
	if (!WIN) card("threads", fmtInt(D.lanes.length));
	card(WIN ? "file lost events" : "lost events", fmtInt(T.lost_events), T.lost_events > 0);
	card("damaged regions", fmtInt(T.damaged_regions), T.damaged_regions > 0);
	card("spans", fmtInt(selftest.spans));
	kv("props", "hosts", fmtInt(T.hosts));
	kv("props", "time 0", D.origin + " (the earliest host's start)");
	kv("props", "written by", D.generator);
	const w = WIN ? " (all files)" : "";
	kv("totals", "events" + w, fmtInt(T.events) + " (" + fmtInt(T.bytes) + " bytes)");
	kv("totals", "metadata records" + w, fmtInt(T.metadata_records));
	kv("totals", "lost" + w, fmtInt(T.lost_events) + " events (" + fmtInt(T.lost_bytes) + " bytes) in " +
		fmtInt(T.loss_records) + " DATA_LOSS records");
	kv("totals", "damaged regions" + w, fmtInt(T.damaged_regions));
	const id = $("identity");
	id.textContent = (WIN ? "all files: " : "") + "emitted = written + lost: " +
		fmtInt(T.events + T.lost_events) + " = " + fmtInt(T.events) + " + " + fmtInt(T.lost_events);
	if (T.lost_events > 0) id.classList.add("bad");
	const row = (name, id, session, x, clock, started, file) => [name, id === null ? "-" : id, session,
		fmtInt(x.events), fmtInt(x.bytes), fmtInt(x.lost_events), fmtInt(x.loss_records),
		fmtInt(x.metadata_records), fmtInt(x.damaged_regions), clock, started, file];
	$("hosts-box").hidden = false;
	grid("hosts", ["host", "id", "session", "events", "bytes", "lost", "loss records", "metadata",
		"damaged", "clock error", "started", "file"],
		S.hosts.map((h, i) => row(h.host, h.host_id, h.session, h, D.hosts[i].clock, D.hosts[i].started,
			h.file)).concat([row("total", null, "-", T, "-", "-", "-")]),
		[false, false, false, true, true, true, true, true, true, false, false, false]);
	lossCauseGrid(lossesByCause());
	lossThreadGrid(WIN ? windowThreadLosses() : D.thread_losses);
	grid("damage", ["host", "damaged regions", "file"],
		S.hosts.filter((h) => h.damaged_regions > 0).map((h) => [h.host, fmtInt(h.damaged_regions), h.file]),
		[false, true, false]);
	grid("counters", ["counter", "host", "pid", "points", "unit"],
		D.counters.map((c) => [c.name, D.hosts[c.host].host, c.pid, fmtInt(c.n), c.unit === null ? "-" : c.unit]),
		[false, false, true, true, false]);
	grid("threads", ["host", "pid", "tid", "thread", "process", "events" + (WIN ? " in the window" : "")],
		D.lanes.map((l) => [D.hosts[l.host].host, l.pid, l.tid, l.name === null ? "-" : l.name,
			l.process === null ? "-" : l.process, fmtInt(l.n)]),
		[false, true, true, false, false, true]);
	$("footer").textContent = "Written by " + D.generator + ".  Numbers above are `ringlog stats --json` of " +
		T.hosts + " files; the timeline is drawn from the events themselves.";
}

const emitted = MULTI ? 0 : S.events + S.lost_events;
function fillSession() {
	if (MULTI) return fillHosts();
	document.title = "ringlog report: " + S.session;
	$("title-session").textContent = S.session;
	$("title-file").textContent = S.file + " \u2014 started " + S.started;
	if (WIN) fillWindow();
	card(WIN ? "file events" : "events", fmtInt(S.events));
	card("duration", fmtNs(S.duration_ns));
	if (!WIN) card("threads", fmtInt(S.threads.length));
	card(WIN ? "file lost events" : "lost events", fmtInt(S.lost_events), S.lost_events > 0);
	card("damaged regions", fmtInt(S.damage.length), S.damage.length > 0);
	card("spans", fmtInt(selftest.spans));

	kv("props", "session", S.session);
	kv("props", "file", S.file);
	kv("props", "started", S.started);
	kv("props", "tick source", S.tick_source + " at " + fmtInt(S.tick_hz) + " Hz");
	kv("props", "first event", S.first_ns === null ? "-" : fmtInt(S.first_ns) + " ns");
	kv("props", "last event", S.last_ns === null ? "-" : fmtInt(S.last_ns) + " ns");
	kv("props", "duration", fmtNs(S.duration_ns));
	kv("props", "buffers", fmtInt(D.info.buffer_count) + " of " + fmtInt(D.info.buffer_size) + " bytes");
	kv("props", "log file", fmtInt(D.info.file_size) + " bytes, " + fmtInt(D.info.blocks) +
		" blocks, format " + D.info.format + (D.info.marker_copy ? " (clock from the header's copy)" : ""));
	kv("props", "written by", D.generator);

	if (WIN) kv("totals", "the whole file:", "");
	kv("totals", "events", fmtInt(S.events) + " (" + fmtInt(S.bytes) + " bytes)");
	kv("totals", "rate", S.rate === null ? "-" : fmtInt(Math.round(S.rate)) + " events/s");
	kv("totals", "threads", fmtInt(S.threads.length));
	kv("totals", "metadata records", fmtInt(S.metadata_records));
	kv("totals", "lost", fmtInt(S.lost_events) + " events (" + fmtInt(S.lost_bytes) + " bytes) in " +
		fmtInt(S.loss_records) + " DATA_LOSS records");
	kv("totals", "damaged regions", fmtInt(S.damage.length));
	kv("totals", "counters", fmtInt(S.counters.length));
	const id = $("identity");
	id.textContent = (WIN ? "the whole file: " : "") + "emitted = written + lost: " + fmtInt(emitted) + " = " + fmtInt(S.events) +
		" + " + fmtInt(S.lost_events);
	if (S.lost_events > 0) id.classList.add("bad");

	lossCauseGrid(WIN ? lossesByCause() : S.losses);
	lossThreadGrid(WIN ? windowThreadLosses() : D.thread_losses);
	grid("damage", ["offset", "length", "kind", "records skipped", "message"],
		S.damage.map((d) => [fmtInt(d.offset), fmtInt(d.length), d.kind,
			d.records_skipped === null ? "?" : fmtInt(d.records_skipped), d.message]),
		[true, true, false, true, false]);
	grid("counters", ["counter", "pid", "source", "records", "resets", "total", "rate /s", "unit"],
		S.counters.map((c) => [c.name === null ? "#" + c.counter : c.name, c.pid,
			c.source === null ? "-" : c.source, fmtInt(c.records), fmtInt(c.resets), fmtInt(c.total),
			c.rate === null ? "-" : fmtInt(Math.round(c.rate)), c.unit === null ? "-" : c.unit]),
		[false, true, false, true, true, true, true, false]);
	grid("threads", ["pid", "tid", "thread", "process", "events", "bytes", "lost", "first", "last"],
		S.threads.map((t) => [t.pid, t.tid, t.name === null ? "-" : t.name,
			t.process === null ? "-" : t.process, fmtInt(t.events), fmtInt(t.bytes),
			fmtInt(t.lost_events), t.first_ns === null ? "-" : fmtInt(t.first_ns),
			t.last_ns === null ? "-" : fmtInt(t.last_ns)]),
		[true, true, false, false, true, true, true, true, true]);
	$("footer").textContent = "Written by " + D.generator + ".  Numbers above are `ringlog stats --json " +
		S.file + "`" + (WIN ? " (the whole file) and the window's own" : "") +
		"; the timeline is drawn from the events themselves.";
	if (WIN) $("threads").before(el("p", "The whole file's threads; the timeline, the events and " +
		"spans above and the losses by cause and thread are the window's.", "muted"));
}

/* ---- top events and spans ---- */

let topSort = { key: 4, asc: false };
function fillTop() {
	const cols = ["name", "events", "spans", "total time", "total (ns)", "mean", "min", "max"];
	const rows = names.map((n) => [n.s, n.events, n.spans, n.total_ns, n.total_ns,
		n.spans ? n.total_ns / n.spans : null, n.spans ? n.min_ns : null, n.spans ? n.max_ns : null]);
	const k = topSort.key;
	rows.sort((a, b) => {
		let x = a[k], y = b[k];
		if (k === 0) return topSort.asc ? (x < y ? -1 : x > y) : (x < y ? 1 : -(x > y));
		x = x === null ? -1 : x; y = y === null ? -1 : y;
		if (x === y) return a[1] === b[1] ? 0 : b[1] - a[1];
		return topSort.asc ? x - y : y - x;
	});
	const t = $("top");
	t.textContent = "";
	const hr = el("tr");
	cols.forEach((c, i) => {
		const th = el("th", c, i ? "num" : "");
		if (i === k) th.classList.add("sorted"), topSort.asc && th.classList.add("asc");
		th.addEventListener("click", () => {
			topSort = { key: i, asc: topSort.key === i ? !topSort.asc : i === 0 };
			fillTop();
		});
		hr.append(th);
	});
	t.append(hr);
	for (const r of rows) {
		const tr = el("tr");
		tr.append(el("td", r[0]), el("td", fmtInt(r[1]), "num"), el("td", fmtInt(r[2]), "num"),
			el("td", r[2] ? fmtNs(r[3]) : "-", "num"), el("td", r[2] ? fmtInt(r[4]) : "-", "num"),
			el("td", r[5] === null ? "-" : fmtNs(Math.round(r[5])), "num"),
			el("td", r[6] === null ? "-" : fmtNs(r[6]), "num"),
			el("td", r[7] === null ? "-" : fmtNs(r[7]), "num"));
		t.append(tr);
	}
}

function fillHists() {
	const box = $("hists");
	const spans = names.map((n, i) => [n, i]).filter((x) => x[0].spans > 0)
		.sort((a, b) => b[0].total_ns - a[0].total_ns).slice(0, 12);
	if (spans.length === 0) box.append(el("p", "No spans in this file.", "muted"));
	for (const [n, i] of spans) {
		const d = el("div", null, "hist");
		d.append(el("div", n.s, "name"),
			el("div", fmtInt(n.spans) + " spans, " + fmtNs(n.min_ns) + " .. " + fmtNs(n.max_ns), "muted"));
		const c = el("canvas");
		const W = 300, H = 90, dpr = window.devicePixelRatio || 1;
		c.width = W * dpr; c.height = H * dpr;
		c.style.width = W + "px"; c.style.height = H + "px";
		const g = c.getContext("2d");
		g.scale(dpr, dpr);
		let lo = n.hist.findIndex((v) => v > 0);
		const hi = n.hist.length;
		lo = Math.max(0, Math.min(lo, hi - 1));
		const nb = Math.max(hi - lo, 1), max = Math.max(...n.hist), bw = (W - 10) / nb;
		g.font = "10px sans-serif";
		g.fillStyle = color(i);
		for (let b = lo; b < hi; b++) {
			const h = n.hist[b] ? Math.max(1, (H - 24) * n.hist[b] / max) : 0;
			g.fillRect(5 + (b - lo) * bw, H - 14 - h, Math.max(bw - 1, 1), h);
		}
		g.fillStyle = "#66707a";
		g.textBaseline = "alphabetic";
		g.fillText("\u2265" + fmtNs(lo === 0 ? 0 : 2 ** lo), 5, H - 2);
		const last = "<" + fmtNs(2 ** hi);
		g.fillText(last, W - 5 - g.measureText(last).width, H - 2);
		d.append(c);
		box.append(d);
	}
}

/* ---- the timeline ---- */

const G = 190;        /* the labels' gutter, px */
const SPAN_H = 16, TICK_H = 10, RUN_H = 16, CTR_H = 36, PROC_H = 20, PAD = 4;
const cv = $("timeline"), mm = $("minimap"), tip = $("tip");
const T0 = D.tmin, T1 = D.tmax > D.tmin ? D.tmax : D.tmin + 1;
let v0 = T0, v1 = T1;
const losses = new Map(); /* lane key -> losses */
for (const l of D.losses) {
	const k = key3(l.host, l.pid, l.tid);
	if (!losses.has(k)) losses.set(k, []);
	losses.get(k).push(l);
}

/* The rows, top to bottom: per host (several files) a heading, then per
 * process (by pid) a heading, its threads' lanes (by tid), its counters. */
const rows = [];
function layout() {
	let y = 0;
	const nh = MULTI ? D.hosts.length : 1;
	for (let h = 0; h < nh; h++) {
		const mine = (x) => (x.host || 0) === h;
		if (MULTI) {
			rows.push({ type: "host", y, h: PROC_H, label: "host " + D.hosts[h].host +
				" — clock error " + D.hosts[h].clock });
			y += PROC_H;
		}
		const pids = [...new Set(D.lanes.filter(mine).map((l) => l.pid)
			.concat(D.counters.filter(mine).map((c) => c.pid)))].sort((a, b) => a - b);
		for (const pid of pids) {
			rows.push({ type: "proc", pid, y, h: PROC_H, label: procLabel(h, pid) });
			y += PROC_H;
			for (const l of D.lanes.filter((x) => mine(x) && x.pid === pid).sort((a, b) => a.tid - b.tid)) {
				const nd = l.depths.length;
				const hh = PAD + (l.nruns ? RUN_H + 2 : 0) + nd * SPAN_H + TICK_H + PAD;
				rows.push({ type: "lane", lane: l, y, h: hh, label: laneLabel(l) });
				y += hh;
			}
			for (const c of D.counters.filter((x) => mine(x) && x.pid === pid)) {
				rows.push({ type: "counter", c, y, h: CTR_H + 2 * PAD, label: c.name });
				y += CTR_H + 2 * PAD;
			}
		}
	}
	return y;
}
const totalH = layout();

const box = $("timeline-box");
let W = 800, dpr = 1, viewH = 40;
function size() {
	dpr = window.devicePixelRatio || 1;
	W = Math.max(box.clientWidth, 400);
	viewH = Math.max(Math.min(totalH, Math.floor(window.innerHeight * 0.7)), Math.min(totalH, 200), 40);
	box.style.height = viewH + "px";
	$("timeline-rest").style.height = Math.max(totalH - viewH, 0) + "px";
	cv.width = W * dpr; cv.height = viewH * dpr;
	cv.style.height = viewH + "px";
	mm.width = W * dpr; mm.height = 36 * dpr;
}

const tx = (t) => G + (t - v0) / (v1 - v0) * (W - G);
const xt = (x) => v0 + (x - G) / (W - G) * (v1 - v0);

function clip(g) {
	g.save();
	g.beginPath();
	g.rect(G, box.scrollTop, W - G, viewH);
	g.clip();
}

/* Bars of one sorted, non-overlapping series (a depth's spans, a CPU's
 * runs) in [v0, v1]: one search, then the bars in view; bars narrower
 * than a pixel are merged into a pixel each. */
function bars(g, s, e, me, n, y, h, fill, label) {
	let i = lower(me, v0, 0, n);
	while (i < n && s[i] <= v1) {
		const x0 = Math.max(tx(s[i]), G - 1), x1 = Math.min(tx(e[i]), W + 1);
		g.fillStyle = fill(i);
		if (x1 - x0 >= 1) {
			g.fillRect(x0, y, x1 - x0 - (x1 - x0 > 3 ? 1 : 0), h);
			if (x1 - x0 > 40) {
				g.save();
				g.beginPath(); g.rect(x0, y, x1 - x0 - 2, h); g.clip();
				g.fillStyle = "#111";
				g.fillText(label(i), x0 + 3, y + h / 2 + 0.5);
				g.restore();
			}
			i++;
		} else {
			const px = Math.floor(x0);
			g.fillRect(px, y, 1, h);
			const j = lower(s, xt(px + 1), i + 1, n);
			i = Math.max(i + 1, j - 1);
		}
	}
}

function drawLane(g, r) {
	const l = r.lane;
	let y = r.y + PAD;
	if (l.nruns) {
		bars(g, l.rs, l.re, l.rme, l.nruns, y, RUN_H, (i) => color(l.rtid[i] * 7 + 3, true), (i) => {
			const tk = taskOf(l, l.rtid[i]);
			return (tk && tk.name ? tk.name + " " : "") + l.rtid[i];
		});
		y += RUN_H + 2;
	}
	l.depths.forEach((d, k) => {
		if (!d) return;
		bars(g, d.s, d.e, d.me, d.n, y + k * SPAN_H, SPAN_H - 1,
			(i) => (d.open[i] ? "#bbb" : color(d.name[i], true)), (i) => names[d.name[i]].s);
	});
	y += l.depths.length * SPAN_H;
	/* the events: one tick per pixel column that holds any */
	const t = l.t, n = t.length;
	let i = lower(t, v0), end = upper(t, v1);
	while (i < end) {
		const x = Math.floor(tx(t[i]));
		g.fillStyle = l.kind[i] ? "#8a94a0" : color(l.tn[i]);
		g.fillRect(x, y + 1, 1, TICK_H - 2);
		i = Math.max(i + 1, lower(t, xt(x + 1), i + 1, end));
	}
	void n;
	const ls = losses.get(key3(l.host, l.pid, l.tid)) || [];
	g.fillStyle = "#d0021b";
	for (const o of ls) {
		if (o.t1 < v0 || o.t0 > v1) continue;
		const x0 = tx(o.t0), x1 = Math.max(tx(o.t1), x0 + 2);
		g.globalAlpha = 0.25;
		g.fillRect(x0, r.y, x1 - x0, r.h);
		g.globalAlpha = 1;
		g.fillRect(x0, r.y, Math.max(x1 - x0, 2), 4);
		g.beginPath();
		g.moveTo(x0 - 4, r.y); g.lineTo(x0 + 4, r.y); g.lineTo(x0, r.y + 7);
		g.fill();
	}
}

function drawCounter(g, r) {
	const c = r.c, y0 = r.y + PAD, h = CTR_H;
	const span = c.max - c.min || 1;
	const yv = (v) => y0 + h - (v - c.min) / span * h;
	const t = c.tt, n = t.length;
	let i = Math.max(lower(t, v0) - 1, 0);
	const end = Math.min(upper(t, v1) + 1, n);
	g.strokeStyle = "#2f6db5";
	g.fillStyle = "rgba(47,109,181,.15)";
	g.beginPath();
	let first = true, px = -1, lastY = 0;
	for (; i < end; i++) {
		const x = tx(t[i]), y = yv(c.v[i]);
		if (first) { g.moveTo(x, y); first = false; } else { g.lineTo(x, lastY); g.lineTo(x, y); }
		lastY = y;
		px = x;
	}
	if (!first) {
		g.lineTo(Math.max(px, tx(v1)), lastY);
		g.stroke();
	}
	g.fillStyle = "#66707a";
	g.fillText(fmtInt(c.max) + (c.unit ? " " + c.unit : ""), G + 4, y0 + 6);
}

function draw() {
	const g = cv.getContext("2d");
	const top = box.scrollTop;
	g.setTransform(dpr, 0, 0, dpr, 0, -top * dpr); /* rows at their y, the box scrolled */
	g.clearRect(0, top, W, viewH);
	g.font = "11px system-ui, sans-serif";
	g.textBaseline = "middle";
	rows.forEach((r, k) => {
		if (r.y + r.h < top || r.y > top + viewH) return;
		if (r.type === "proc" || r.type === "host") {
			g.fillStyle = r.type === "host" ? "#c9d3de" : "#e6eaef";
			g.fillRect(0, r.y, W, r.h);
			g.fillStyle = "#1d2329";
			g.font = "bold 11px system-ui, sans-serif";
			g.fillText(r.label, 6, r.y + r.h / 2);
			g.font = "11px system-ui, sans-serif";
			return;
		}
		g.fillStyle = k % 2 ? "#ffffff" : "#f8f9fb";
		g.fillRect(0, r.y, W, r.h);
		clip(g);
		if (r.type === "lane") drawLane(g, r); else drawCounter(g, r);
		g.restore();
		g.fillStyle = r.type === "counter" ? "#2f6db5" : "#1d2329";
		g.save();
		g.beginPath(); g.rect(0, r.y, G - 6, r.h); g.clip();
		g.fillText((r.type === "counter" ? "\u223f " : "") + r.label, 14, r.y + Math.min(r.h / 2, 14));
		g.restore();
	});
	g.strokeStyle = "#d8dde3";
	g.beginPath(); g.moveTo(G - 0.5, top); g.lineTo(G - 0.5, top + viewH); g.stroke();
	drawMinimap();
	const inWin = windowEvents();
	$("window-text").textContent = fmtInt(Math.round(v0)) + " .. " + fmtInt(Math.round(v1)) + " ns (" +
		fmtNs(Math.round(v1 - v0)) + "), " + fmtInt(inWin) + " events";
	selftest.window = { t0: v0, t1: v1, events: inWin };
	writeSelftest();
}

/* The overview: the converter's per-column counts, summed over lanes. */
const ovCols = D.lanes.length ? D.lanes[0].overview.length : 0;
const ovSum = new Float64Array(ovCols);
for (const l of D.lanes) l.overview.forEach((v, i) => (ovSum[i] += v));
const ovMax = Math.max(1, ...ovSum);
function drawMinimap() {
	const g = mm.getContext("2d");
	g.setTransform(dpr, 0, 0, dpr, 0, 0);
	g.clearRect(0, 0, W, 36);
	g.fillStyle = "#f4f6f8";
	g.fillRect(0, 0, W, 36);
	g.fillStyle = "#8aa9cf";
	const cw = (W - G) / Math.max(ovCols, 1);
	for (let i = 0; i < ovCols; i++) {
		if (!ovSum[i]) continue;
		const h = 3 + 30 * Math.log1p(ovSum[i]) / Math.log1p(ovMax);
		g.fillRect(G + i * cw, 36 - h, Math.max(cw, 1), h);
	}
	g.fillStyle = "#d0021b";
	for (const o of D.losses) g.fillRect(G + (o.t0 - T0) / (T1 - T0) * (W - G), 0, 2, 6);
	const a = G + (v0 - T0) / (T1 - T0) * (W - G), b = G + (v1 - T0) / (T1 - T0) * (W - G);
	g.fillStyle = "rgba(47,109,181,.18)";
	g.fillRect(a, 0, Math.max(b - a, 2), 36);
	g.strokeStyle = "#2f6db5";
	g.strokeRect(a + 0.5, 0.5, Math.max(b - a, 2) - 1, 35);
	g.fillStyle = "#1d2329";
	g.font = "11px system-ui, sans-serif";
	g.textBaseline = "middle";
	g.fillText((WIN ? "the window: " : "whole trace: ") + fmtNs(T1 - T0), 6, 18);
}

/* The events in [v0, v1], both included: a search per lane. */
function windowEvents() {
	let n = 0;
	for (const l of D.lanes) n += upper(l.t, v1) - lower(l.t, v0);
	return n;
}

function setWindow(a, b, fromHash) {
	const minW = 10;
	if (!(b > a)) b = a + minW;
	if (b - a < minW) { const m = (a + b) / 2; a = m - minW / 2; b = m + minW / 2; }
	v0 = a; v1 = b;
	if (!fromHash) {
		const h = "#t0=" + Math.round(v0) + "&t1=" + Math.round(v1);
		if (location.hash !== h) history.replaceState(null, "", h);
	}
	draw();
}

function fromHash() {
	const m = /t0=(-?[0-9.e+]+)&t1=(-?[0-9.e+]+)/.exec(location.hash);
	if (m) setWindow(Number(m[1]), Number(m[2]), true);
	return !!m;
}

function zoom(f, at) {
	const c = at === undefined ? (v0 + v1) / 2 : at;
	setWindow(c - (c - v0) * f, c + (v1 - c) * f);
}

function bindUi() {
	$("zoom-in").onclick = () => zoom(0.5);
	$("zoom-out").onclick = () => zoom(2);
	$("zoom-reset").onclick = () => setWindow(T0, T1);
	cv.addEventListener("wheel", (e) => {
		const r = cv.getBoundingClientRect(), x = e.clientX - r.left;
		if (x < G || e.shiftKey) return;
		e.preventDefault();
		zoom(e.deltaY > 0 ? 1.25 : 0.8, xt(x));
	}, { passive: false });
	let drag = null;
	cv.addEventListener("mousedown", (e) => { drag = { x: e.clientX, a: v0, b: v1 }; cv.style.cursor = "grabbing"; });
	window.addEventListener("mouseup", () => { drag = null; cv.style.cursor = ""; });
	window.addEventListener("mousemove", (e) => {
		if (!drag) return;
		const d = (e.clientX - drag.x) / (W - G) * (drag.b - drag.a);
		setWindow(drag.a - d, drag.b - d);
	});
	cv.addEventListener("dblclick", () => setWindow(T0, T1));
	const mmMove = (e) => {
		const r = mm.getBoundingClientRect();
		const t = T0 + (e.clientX - r.left - G) / (W - G) * (T1 - T0), w = v1 - v0;
		setWindow(t - w / 2, t + w / 2);
	};
	mm.addEventListener("mousedown", (e) => { mmMove(e); mm.onmousemove = (f) => f.buttons && mmMove(f); });
	window.addEventListener("keydown", (e) => {
		if (e.target.tagName === "INPUT") return;
		const w = v1 - v0;
		if (e.key === "+" || e.key === "=") zoom(0.5);
		else if (e.key === "-") zoom(2);
		else if (e.key === "0") setWindow(T0, T1);
		else if (e.key === "ArrowLeft") setWindow(v0 - w / 4, v1 - w / 4);
		else if (e.key === "ArrowRight") setWindow(v0 + w / 4, v1 + w / 4);
	});
	window.addEventListener("hashchange", fromHash);
	window.addEventListener("resize", () => { size(); draw(); });
	let pending = false;
	box.addEventListener("scroll", () => {
		if (pending) return;
		pending = true;
		requestAnimationFrame(() => { pending = false; draw(); });
	});
	cv.addEventListener("mousemove", hover);
	cv.addEventListener("mouseleave", () => (tip.hidden = true));
}

/* What is under the pointer: a span, a run, an event or a loss. */
function hover(e) {
	const r = cv.getBoundingClientRect(), x = e.clientX - r.left, y = e.clientY - r.top + box.scrollTop;
	const row = rows.find((w) => y >= w.y && y < w.y + w.h);
	let text = null;
	if (row && x >= G) {
		const t = xt(x), slack = (v1 - v0) / (W - G) * 3;
		if (row.type === "lane") {
			const l = row.lane;
			let yy = row.y + PAD;
			const inside = (s, e, me, n) => {
				const i = upper(s, t + slack, 0, n) - 1;
				for (let k = i; k >= 0 && me[k] >= t - slack; k--)
					if (e[k] >= t - slack) return k;
				return -1;
			};
			if (l.nruns && y >= yy && y < yy + RUN_H) {
				const k = inside(l.rs, l.re, l.rme, l.nruns);
				if (k >= 0) {
					const tk = taskOf(l, l.rtid[k]);
					text = "ran: " + (tk && tk.name ? tk.name : "?") + " (tid " + l.rtid[k] + ")\n" +
						fmtInt(l.rs[k]) + " ns, " + fmtNs(l.re[k] - l.rs[k]);
				}
			}
			if (l.nruns) yy += RUN_H + 2;
			const d = l.depths[Math.floor((y - yy) / SPAN_H)];
			if (!text && d && y >= yy) {
				const k = inside(d.s, d.e, d.me, d.n);
				if (k >= 0)
					text = names[d.name[k]].s + (d.open[k] ? " (never ended)" : "") + "\n" +
						fmtInt(d.s[k]) + " ns, " + fmtNs(d.e[k] - d.s[k]);
			}
			if (!text) {
				const i = lower(l.t, t - slack);
				if (i < l.t.length && l.t[i] <= t + slack)
					text = names[l.tn[i]].s + ["", " (begin)", " (end)", ""][l.kind[i]] + "\n" +
						fmtInt(l.t[i]) + " ns";
			}
			for (const o of losses.get(key3(l.host, l.pid, l.tid)) || [])
				if (t >= o.t0 - slack && t <= o.t1 + slack)
					text = "lost " + fmtInt(o.events) + " events (" + o.cause + ")\n" +
						fmtInt(o.t0) + " .. " + fmtInt(o.t1) + " ns";
		} else if (row.type === "counter") {
			const c = row.c, i = upper(c.tt, t) - 1;
			if (i >= 0) text = c.name + " = " + fmtInt(c.v[i]) + (c.unit ? " " + c.unit : "") + "\n" +
				"since " + fmtInt(c.tt[i]) + " ns";
		}
	}
	tip.hidden = !text;
	if (text) {
		tip.textContent = text;
		tip.style.left = Math.min(x + 12, W - 260) + "px";
		tip.style.top = y + 14 + "px";
	}
}

/* ---- the self-test figures ---- */

const selftest = { events: 0, spans: 0, open_spans: 0, lanes: D.lanes.length, lost_events: 0,
	loss_records: D.losses.length, counters: D.counters.length, cpu_runs: 0,
	stats_events: MULTI ? S.total.events : S.events,
	stats_lost_events: MULTI ? S.total.lost_events : S.lost_events,
	stats_threads: MULTI ? null : S.threads.length, hosts: null, ticks: null,
	shown_events: null, shown_lost_events: null, shown_threads: null, window: null, errors };
for (const l of D.lanes) {
	selftest.events += l.t.length;
	selftest.cpu_runs += l.nruns;
	for (const d of l.depths) {
		if (!d) continue;
		selftest.spans += d.n;
		for (const o of d.open) selftest.open_spans += o;
	}
}
for (const o of D.losses) selftest.lost_events += o.events;

/* With "selftest=ui" in the address: the timeline's own handlers driven
 * by synthetic events (a wheel notch up at the plot's middle, a drag of
 * 100 px to the left, a double-click), the window after each recorded. */
function uiSelftest() {
	const r = cv.getBoundingClientRect();
	const x = r.left + G + (W - G) / 2, y = r.top + 5;
	const rec = () => ({ t0: v0, t1: v1, events: windowEvents() });
	const mouse = (target, type, cx) =>
		target.dispatchEvent(new MouseEvent(type, { clientX: cx, clientY: y, bubbles: true, cancelable: true }));
	cv.dispatchEvent(new WheelEvent("wheel", { deltaY: -100, clientX: x, clientY: y, bubbles: true, cancelable: true }));
	const ui = { plot_width: W - G, wheel: rec() };
	mouse(cv, "mousedown", x);
	mouse(window, "mousemove", x - 100);
	mouse(window, "mouseup", x - 100);
	ui.drag = rec();
	mouse(cv, "dblclick", x);
	ui.reset = rec();
	/* the pointer over the middle of the first lane's first span */
	const row = rows.find((w) => w.type === "lane" && w.lane.depths[0] && w.lane.depths[0].n);
	if (row) {
		const d = row.lane.depths[0], t = (d.s[0] + d.e[0]) / 2;
		const yy = row.y + PAD + (row.lane.nruns ? RUN_H + 2 : 0) + SPAN_H / 2 - box.scrollTop;
		cv.dispatchEvent(new MouseEvent("mousemove", { clientX: r.left + tx(t), clientY: r.top + yy, bubbles: true }));
		ui.hover = tip.hidden ? null : tip.textContent;
	}
	box.scrollTop = box.scrollHeight; /* the last rows, drawn into the canvas */
	draw();
	ui.scrolled = box.scrollTop;
	box.scrollTop = 0;
	draw();
	selftest.ui = ui;
}

function writeSelftest() {
	$("selftest").textContent = JSON.stringify(selftest);
}

function main() {
	fillSession();
	fillTop();
	fillHists();
	/* the figures as the page shows them, read back from the page */
	const cards = [...document.querySelectorAll("#summary .card")];
	const shown = (k) => {
		const c = cards.find((x) => x.querySelector(".k").textContent === k);
		return c ? Number(c.querySelector(".v").textContent.replace(/,/g, "")) : null;
	};
	selftest.shown_events = shown(WIN ? "events in the window" : "events");
	selftest.shown_lost_events = shown(WIN ? "lost events in the window" : "lost events");
	selftest.shown_threads = shown(WIN ? "threads in the window" : "threads");
	if (MULTI) {
		/* per host: what the page decoded, and its row as shown */
		const shownRows = [...$("hosts").querySelectorAll("tr")].slice(1)
			.map((tr) => [...tr.children].map((td) => td.textContent));
		selftest.hosts = D.hosts.map((h, i) => ({ host: h.host, events: 0, lost_events: 0, shown: shownRows[i] }));
		for (const l of D.lanes) selftest.hosts[l.host].events += l.t.length;
		for (const o of D.losses) selftest.hosts[o.host].lost_events += o.events;
		selftest.total_shown = shownRows[D.hosts.length];
		/* the timeline's headings and lanes, top to bottom */
		selftest.layout = rows.filter((r) => r.type !== "counter").map((r) => [r.type, r.label]);
	}
	/* With "selftest=ticks" in the address: every event as decoded, [host, pid,
	 * tid, time, name] (for a test's small files). */
	if (/selftest=ticks/.test(location.hash)) {
		selftest.ticks = [];
		for (const l of D.lanes)
			for (let i = 0; i < l.t.length; i++)
				selftest.ticks.push([l.host || 0, l.pid, l.tid, l.t[i], names[l.tn[i]].s]);
	}
	size();
	bindUi();
	if (!fromHash()) setWindow(T0, T1, true);
	selftest.opened = selftest.window;
	if (/selftest=ui/.test(location.hash)) uiSelftest();
	/* ms from the start of the navigation to the page drawn */
	selftest.ready_ms = Math.round(performance.now());
	selftest.parse_ms = Math.round(tDecode - tParse);
	selftest.decode_ms = Math.round(tDecoded - tDecode);
	writeSelftest();
}

try {
	main();
} catch (e) {
	errors.push(String(e && e.stack ? e.stack : e));
	writeSelftest();
	throw e;
}
