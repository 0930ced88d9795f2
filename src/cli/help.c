/*
 * help.c - the help text of every `ringlog` command (help.h).
 *
 * When a command gains an option, its entry here gains a line: the usage
 * line must stay the one the command prints after a usage error, and every
 * option in it needs a line in the text (tests/test_cli_help.c checks both,
 * and that ringlog(1) names every option).
 */
#include "help.h"

#include <string.h>

static const struct cli_help help[] = {
	{
		"start", "create a session and its capture daemon, which writes a log file",
		"start NAME [-o FILE] [--mode MODES] [--max-file-size MB] [--buffer-size KB] "
		"[--min-buffers N] [--max-buffers N] [--buffers N] [--flush-timer T] [--enable LIST] "
		"[--mask MASK] [--high-water PCT] [--age-limit MIN] [--drain-threads N] [--counters LIST] "
		"[--counter-period MS] [--system LIST] [--system-pid LIST] [--follow] "
		"[--profile-hz N] [--sink URL [--host-id ID] [--sink-buffer SIZE] [--sink-chunk SIZE]] "
		"[--force] | "
		"start NAME --resume",
		"Creates session NAME (a shared-memory region holding a pool of buffers) and\n"
		"its capture daemon, which writes the events of the session's producers to\n"
		"FILE (and, in real-time mode, to the consumers of ringlog tail), and returns\n"
		"once the session is active.  Prints the session's name, the daemon's pid and\n"
		"the absolute path of FILE (\"-\" without one).  A program records into the\n"
		"session after rlog_attach(\"NAME\"), or rlog_attach(NULL) with\n"
		"RINGLOG_SESSION=NAME in its environment.  Every option is one of ETW's\n"
		"EVENT_TRACE_PROPERTIES (docs/SESSIONS.md).\n"
		"\n"
		"  NAME                  1 to 64 letters, digits, '.', '_' or '-'; case-insensitive\n"
		"  -o FILE, --output FILE\n"
		"                        the log file; an existing file is refused unless --force;\n"
		"                        newfile: a name with %d, which becomes 1, 2, 3, ...;\n"
		"                        only a real-time session or an overwrite one (a\n"
		"                        flight recorder) may have none\n"
		"  --mode MODES          LogFileMode, a comma-separated list of: sequential (the\n"
		"                        default: one file; at MaximumFileSize nothing more is\n"
		"                        written, and what is not is counted lost), circular (one\n"
		"                        file of at most MaximumFileSize holding the newest\n"
		"                        events), newfile (a new file at each MaximumFileSize);\n"
		"                        preallocate (each file allocated to MaximumFileSize);\n"
		"                        real-time (events also go to ringlog tail consumers;\n"
		"                        FlushTimer then defaults to 1 s); overwrite (a flight\n"
		"                        recorder: when no buffer is free a producer reuses the\n"
		"                        oldest full one, and what it overwrites is counted;\n"
		"                        without -o the daemon writes only what ringlog\n"
		"                        snapshot asks for)\n"
		"  --max-file-size MB    MaximumFileSize in MiB, 1 to 1048576; needed by circular,\n"
		"                        newfile and preallocate (default: no maximum)\n"
		"  --buffer-size KB      BufferSize in KiB: a power of two from 4 to 1024 (default 16)\n"
		"  --min-buffers N       MinimumBuffers: the pool at start, 2 to 65536 (default one\n"
		"                        per CPU plus two, at least 32)\n"
		"  --max-buffers N       MaximumBuffers: the pool grows up to N while producers\n"
		"                        write, 2 to 65536 (default 1024); beyond it events are\n"
		"                        lost and counted\n"
		"  --buffers N           a pool of exactly N buffers (minimum = maximum = N)\n"
		"  --flush-timer T       FlushTimer: also drain partly filled buffers every T\n"
		"                        milliseconds, or T with a unit: 500ms, 2s (up to 3600 s;\n"
		"                        default 0: full buffers only, and everything at stop)\n"
		"  --enable LIST         EnableFlags: category names (rlog_category_name) and\n"
		"                        numbers 0..63, comma-separated; a name no process has\n"
		"                        declared yet is enabled when one does\n"
		"  --mask MASK           EnableFlags as a number: bit n turns category n on\n"
		"                        (default: all on); hex with 0x, else decimal\n"
		"  --high-water PCT      wake the daemon when PCT % of the pool is in use, 1 to\n"
		"                        100 (default 70, as QNX)\n"
		"  --age-limit MIN       AgeLimit: accepted and recorded, not used (as on current\n"
		"                        Windows)\n"
		"  --drain-threads N     the daemon's drain threads, 1 to 64 (default 1): the\n"
		"                        extra ones check and checksum full buffers' records;\n"
		"                        the daemon's own keeps the file's order, its losses\n"
		"                        and its writes\n"
		"  --counters LIST       the counters the daemon samples, comma-separated: names\n"
		"                        that \"ringlog counters\" lists, or groups: app (the\n"
		"                        default: counters the program registers), proc, perf,\n"
		"                        system, all, none.  One that this machine lacks is\n"
		"                        named on stderr and left out; the session starts\n"
		"  --counter-period MS   how often the daemon reads them: milliseconds, or with a\n"
		"                        unit (250ms, 1s), 10 ms to 60 s (default 100 ms); a\n"
		"                        counter that changed gets a COUNTER record of its delta\n"
		"  --system LIST         the kernel's events to record beside the applications'\n"
		"                        (ETW's kernel logger), comma-separated: process,\n"
		"                        thread, image-load, process-counters, cswitch,\n"
		"                        softirq, interrupt, syscall, disk-io, page-faults,\n"
		"                        hard-faults, network, profile, file-io, wakeup, all,\n"
		"                        none, or ETW's EnableFlags in hex (0x13: process,\n"
		"                        thread, cswitch); needs root, CAP_PERFMON or\n"
		"                        kernel.perf_event_paranoid -1, and tracefs: without\n"
		"                        them, one line says what is missing (docs/SESSIONS.md)\n"
		"  --system-pid LIST     only these processes' system events (pids,\n"
		"                        comma-separated, at most 120; default: every process)\n"
		"  --follow              also the session's attached processes, and the children\n"
		"                        of the processes traced\n"
		"  --profile-hz N        profile's samples a second, 1 to 100000 (default 1000)\n"
		"  --sink URL            also publish the session, in chunks, to a message log:\n"
		"                        kafka://BROKERS/TOPIC or nats://SERVERS/SUBJECT (NATS\n"
		"                        JetStream; host:port,...); a chunk\n"
		"                        counts as written when the brokers acknowledged it\n"
		"                        (query's sink_* lines); ringlog collect reads it back\n"
		"  --host-id ID          the host's id in the chunks: 32 hex digits (default: the\n"
		"                        machine id, /etc/machine-id)\n"
		"  --sink-buffer SIZE    chunks kept while the brokers do not acknowledge them\n"
		"                        (default 64M, at least 1M); beyond it chunks are dropped\n"
		"                        and counted (DATA_LOSS cause sink in the next chunk)\n"
		"  --sink-chunk SIZE     publish a chunk once it holds SIZE bytes, 64K to 4M\n"
		"                        (default 256K; NATS: within the server's max_payload)\n"
		"  --force               overwrite FILE if it exists\n"
		"  --resume              NAME is orphaned (its daemon died): start a new daemon for\n"
		"                        it, which goes on where the dead one stopped, in the same\n"
		"                        file, while the producers keep writing (no other option:\n"
		"                        the session keeps its properties)\n"
		"\n"
		"RINGLOG_CLOCK=monotonic in the environment makes the session time-stamp with\n"
		"CLOCK_MONOTONIC instead of the TSC.\n",
		true,
	},
	{
		"stop", "stop a session: drain it, close its log file, print its statistics",
		"stop NAME [--force]",
		"Stops session NAME: its daemon drains every buffer (partly filled ones too),\n"
		"writes DATA_LOSS records for the events that were lost, closes the log file\n"
		"and removes the session.  Prints the session's name, the absolute path of its\n"
		"log file and the final statistics, one \"key: value\" per line (events written\n"
		"and lost, buffers and bytes written, ...: see ringlog(1)).  Exits 1 after the\n"
		"statistics if the daemon reported an error (a full disk, say).  A session\n"
		"whose daemon died (ringlog list says orphaned) is left as it is, with a line\n"
		"saying so, unless --force.\n"
		"\n"
		"  NAME                  the session, as given to ringlog start\n"
		"  --force               if the daemon died: drain the session's buffers into its\n"
		"                        log file here (appended after its last whole block, with\n"
		"                        the losses counted), then remove the session\n",
		true,
	},
	{
		"recover", "save an orphaned session's buffers into a new log file, then remove it",
		"recover NAME -o FILE [--force]",
		"For session NAME whose daemon died (ringlog list says orphaned): runs the\n"
		"daemon's stop sequence here, into FILE instead of the session's own output:\n"
		"what the session's log file does not hold yet (every buffer whole if it has\n"
		"no file, a flight recorder say), with the losses counted as DATA_LOSS\n"
		"records and the LOG_MARKER, names and schemas it needs to decode alone; then\n"
		"removes the session and prints its statistics as ringlog stop does: those\n"
		"of the session's file and FILE together.  FILE starts exactly where the\n"
		"session's file ends, and the two hold each event once; a flight\n"
		"recorder's snapshots and FILE count each loss once.  Producers may keep\n"
		"running.  ringlog stop NAME --force does the same into the session's own\n"
		"file; ringlog start NAME --resume gives it a new daemon instead.\n"
		"\n"
		"  NAME                  the orphaned session\n"
		"  -o FILE, --output FILE\n"
		"                        the new log file (sequential); an existing file is\n"
		"                        refused unless --force\n"
		"  --force               overwrite FILE if it exists\n",
		true,
	},
	{
		"query", "a running session's properties and live statistics",
		"query NAME [--json]",
		"Prints the properties of session NAME (ETW's EVENT_TRACE_PROPERTIES: buffer\n"
		"size, minimum, maximum and current number of buffers, free buffers, file mode\n"
		"and maximum size, flush timer, enable mask and its category names, the\n"
		"daemon's pid) and its statistics so far (events and buffers written and lost,\n"
		"log and real-time buffers lost), one \"key: value\" per line; docs/SESSIONS.md\n"
		"maps each key to its ETW member.  producer_threads and processes_attached_now\n"
		"count the threads and processes attached now; processes_attached counts every\n"
		"process that ever attached.  events_written counts what the daemon has drained:\n"
		"events_not_drained says how many events sit in buffers handed to the daemon\n"
		"and not drained yet (buffers_not_drained; drained at its next pass), and\n"
		"buffers_held how many buffers producers still hold with records in them\n"
		"(drained when full, by the flush timer, ringlog flush or stop; their events\n"
		"are counted when they are handed over).  A line on stderr says so when\n"
		"anything is waiting.  system, system_flags, system_pids, system_follow and\n"
		"profile_hz are the system events selected (start --system) and their scope;\n"
		"system_recording the ones the daemon records now.\n"
		"\n"
		"  NAME                  the session\n"
		"  --json                one JSON object instead, with the same keys\n",
		true,
	},
	{
		"list", "the sessions on this machine",
		"list",
		"Prints one line per session on this machine: its name, its state and its log\n"
		"file (\"-\" for none), and \"system: NAMES\" if it selects system events;\n"
		"\"no sessions\" when there are none.  Takes no arguments.  The states:\n"
		"\n"
		"  creating              ringlog start is setting it up\n"
		"  active                recording\n"
		"  stopping              ringlog stop is draining it\n"
		"  stopped               stopped; removed in a moment\n"
		"  failed                its daemon could not start\n"
		"  orphaned              active or stopping, but its daemon has died: ringlog\n"
		"                        stop NAME --force or recover NAME -o FILE saves its\n"
		"                        buffers, start NAME --resume gives it a new daemon\n"
		"  invalid               a region by that name that is not a valid session of\n"
		"                        this version (damaged, or another program's); the file\n"
		"                        column is then \"-\"\n"
		"  unknown               a state number this ringlog does not know\n"
		"  foreign               another user's region, or one open to other users:\n"
		"                        listed with its owner's uid and mode, never opened\n",
		true,
	},
	{
		"emit", "write events into a session, or a single ring, from the command line",
		"emit (NAME | --ring PATH) ID [--count N] [--payload HEX] [--flag F]",
		"Writes events into session NAME, as a program linked with libringlog would (a\n"
		"marker between the steps of a shell script, say), then prints how many were\n"
		"emitted, written and lost.  Exits 1 if the session is paused or stopping.\n"
		"With --ring, writes them into the single ring at PATH instead, time-stamped\n"
		"with the ring's clock (see ring-flush); emit is then the ring's producer, and\n"
		"no other may write into it at the same time.\n"
		"\n"
		"  NAME                  the session\n"
		"  --ring PATH           the single ring to write into: a file, or a shared-\n"
		"                        memory object by its path under /dev/shm\n"
		"  ID                    the event ID: 1024 to 16383 for an application's events,\n"
		"                        16 to 25 for the RAW_* types that dump decodes (32 to 38\n"
		"                        are ringlog's own and refused)\n"
		"  --count N             write N events (default 1)\n"
		"  --payload HEX         the payload as pairs of hex digits, at most 65535 bytes\n"
		"                        and what one of the session's buffers holds (default:\n"
		"                        none)\n"
		"  --flag F              write FLAGGED records with the 16-bit flag F, 0 to 65535\n",
		true,
	},
	{
		"dump", "the events of a log file, one per line, in time order",
		"dump FILE [--id N[,N..]] [--name NAME] [--pid P[,P..]] [--tid T[,T..]] [--since T] "
		"[--until T] [--format text|json] [--time relative|wall] [--all]",
		"Prints the events of log file FILE in time order, one per line: the time, the\n"
		"pid and tid, the event's name and its fields as name=value (or its payload in\n"
		"hex when its type has no schema).  An event passes when it passes every filter\n"
		"given; a filter with several values (a list, or the option repeated) passes\n"
		"an event that matches any.  Options take \"--opt VALUE\" or \"--opt=VALUE\".\n"
		"\n"
		"  FILE                  a log file written by ringlog start; several files, or\n"
		"                        a directory of them (ringlog collect's), are several\n"
		"                        hosts merged by CLOCK_REALTIME, with a host column\n"
		"                        (docs/DUMP.md, \"Several hosts\")\n"
		"  --id N[,N..]          only these event IDs (0 to 16383)\n"
		"  --name NAME           only events whose name matches the shell pattern NAME\n"
		"                        (http.*); events without a schema by their ID (1025)\n"
		"  --pid P[,P..]         only these processes\n"
		"  --tid T[,T..]         only these threads\n"
		"  --since T             only events at or after T\n"
		"  --until T             only events before T.  A time T is relative to the start\n"
		"                        of the trace (1.5s, 250ms, 10us, 123ns) or a wall-clock\n"
		"                        time (2026-11-22T07:01:31.5Z)\n"
		"  --format text|json    text (the default), or JSON Lines: one object per event\n"
		"  --time relative|wall  the time column: ns since the start of the trace (the\n"
		"                        default), or the wall-clock time in UTC\n"
		"  --all                 also the records that describe the others: TIME_SYNC,\n"
		"                        EVENT_SCHEMA, THREAD_NAME, PROCESS_NAME, COUNTER_NAME\n"
		"\n"
		"Exits 1 if FILE cannot be read or holds damaged regions (everything readable\n"
		"is printed first, then one line per region).  docs/DUMP.md has the formats.\n",
		true,
	},
	{
		"profile", "top functions and folded stacks of a sampled profile",
		"profile FILE [--folded | --json] [--pid PID] [--tid TID] [--top N]",
		"Prints the cpu-clock samples that a session with --system profile recorded\n"
		"(add image-load to name the programs started after the session; the\n"
		"rundown names those running at its start): the top functions by samples,\n"
		"self (the innermost frame) and total (anywhere in the stack).  User\n"
		"addresses are named through the image_load mappings and the binaries'\n"
		"ELF symbol tables (elfutils), kernel addresses through /proc/kallsyms\n"
		"(readable as root; otherwise shown as [kernel] 0x...).  A binary gone or\n"
		"not readable shows as [missing] PATH, one rebuilt since as [mismatch] PATH\n"
		"(docs/PROFILE.md).\n"
		"  --folded              folded stacks, one line per stack: PROCESS;outer;...;inner N\n"
		"                        (the input of flame graph tools)\n"
		"  --json                the functions and the stacks as one JSON object\n"
		"  --pid PID             only the samples of that process\n"
		"  --tid TID             only the samples of that thread\n"
		"  --top N               functions listed (default 20)\n"
		"Exit status: 0; 1 unreadable file or damaged regions (one line each); 2 usage.\n",
		true,
	},
	{
		"stats", "what a log file holds, in totals",
		"stats FILE [--sched] [--json]",
		"Prints what log file FILE holds: its duration, its events and bytes per event\n"
		"name and per thread (with the threads' and processes' names), the rate, the\n"
		"losses by cause and the damaged regions.  Exit status as for dump.\n"
		"\n"
		"  FILE                  a log file written by ringlog start; several files, or\n"
		"                        a directory of them: a row per host and the total\n"
		"  --sched               from its system events instead: per thread the time on\n"
		"                        a CPU, runnable, blocked, switches, migrations, system\n"
		"                        calls and page faults; the top system calls by count\n"
		"                        and time (record with --system cswitch,wakeup,syscall)\n"
		"  --json                one JSON object instead of the tables (docs/DUMP.md)\n",
		true,
	},
	{
		"convert", "a log file as a Perfetto trace, Chrome trace JSON or a CTF trace",
		"convert FILE --to chrome|perfetto|ctf -o OUT [--spans x|be] [--since T] [--until T] "
		"[--split DURATION] [--max-size SIZE] [--force]",
		"Writes log file FILE in a format that other tools open, then prints counts,\n"
		"one \"key: value\" per line (not when the JSON goes to stdout).  An existing\n"
		"OUT is refused unless --force, as ringlog start refuses an existing FILE.\n"
		"Exits 1 if FILE cannot be read or converted, or holds damaged regions.\n"
		"docs/CONVERT.md has the details.\n"
		"\n"
		"  FILE                  a log file written by ringlog start; several files, or\n"
		"                        a directory of them: one trace of several hosts on\n"
		"                        the merged CLOCK_REALTIME timeline, processes named\n"
		"                        \"HOST: name\", each host's clock error in perfetto's\n"
		"                        metadata (no window, split); ctf: OUT/HOST per host\n"
		"  --to chrome           the Trace Event Format (JSON) that ui.perfetto.dev and\n"
		"                        chrome://tracing open; OUT is a file, \"-\" for stdout\n"
		"  --to perfetto         Perfetto's own protobuf trace, which ui.perfetto.dev and\n"
		"                        trace_processor load natively (far larger traces than\n"
		"                        JSON); OUT is a file, \"-\" for stdout\n"
		"  --to ctf              a CTF 1.8 trace for babeltrace2 and Trace Compass; OUT is\n"
		"                        a directory, created if missing\n"
		"  -o OUT                the output (required)\n"
		"  --spans x|be          chrome: a span as one complete \"X\" event (the default)\n"
		"                        or as a \"B\" and an \"E\" event\n"
		"  --since T             perfetto: only the events from T on (as dump's: 1.5s,\n"
		"                        250ms, or a wall-clock time 2026-11-22T07:01:31.5Z)\n"
		"  --until T             perfetto: only the events up to T (included)\n"
		"  --split DURATION      perfetto: a new file each DURATION (10s, 500ms) of trace\n"
		"  --max-size SIZE       perfetto: a new file before one passes SIZE (64M, 1G;\n"
		"                        at least 1M); with either, OUT-0001.EXT, OUT-0002.EXT,\n"
		"                        ... each a whole trace that opens on its own\n"
		"  --force               overwrite OUT: truncate the file; for ctf, delete the\n"
		"                        metadata and stream_* files of an earlier conversion\n"
		"                        (a directory holding anything else is still refused)\n",
		true,
	},
	{
		"bench", "what an event costs on this machine",
		"bench [--drain [--rate N] [--dir DIR]] [--runs N] [--events N] [--buffers N] "
		"[--buffer-size KB] [--quick]",
		"Runs its own session and daemon (log file in /dev/shm) and measures, in ns\n"
		"per event, a disabled event, a 16-byte event from one thread and from two\n"
		"threads at once, an untimed 16-byte event, alone and in batches of 32\n"
		"(write_untimed_n_ns), and reference costs measured in the same runs (rdtsc\n"
		"and a store, a store alone, clock_gettime); then events/s, MB/s and the\n"
		"events lost.  Prints \"key: value\" lines; takes about 3 seconds, 1 with\n"
		"--quick.  The daemon's sustained rate, the single ring, overwrite mode,\n"
		"memory and counters are measured by the programs of the source tree's\n"
		"bench/ directory (docs/PERFORMANCE.md).\n"
		"\n"
		"With --drain it measures the daemon instead: one thread writes 16-byte\n"
		"events at a steady rate (--rate) for 500 ms, and the daemon's CPU time\n"
		"(from /proc) per event is drain_cpu_ns_per_event, against write_1t_ns\n"
		"measured in the same session between those runs (drain_cpu_vs_write_1t);\n"
		"then the same into a circular, preallocated file of 128 MiB, whose pages\n"
		"exist (circular_drain_cpu_ns_per_event).  Each against the kernel's part\n"
		"alone: write(2) of 64 MiB into a new file, or over one, in CPU ns per 24\n"
		"bytes (ref_write_cpu_ns_per_event, ref_rewrite_cpu_ns_per_event; on tmpfs\n"
		"also under their older names ref_tmpfs_write_cpu_ns_per_event and\n"
		"ref_tmpfs_rewrite_cpu_ns_per_event).  The files are in /dev/shm (tmpfs),\n"
		"or in --dir: on a disk, the kernel writes a file's pages back in its own\n"
		"threads, whose CPU per event over the same runs (the file system synced\n"
		"before and after each, all such threads of the machine counted) is\n"
		"kernel_threads_cpu_ns_per_event, and the sum drain_total_cpu_ns_per_event.\n"
		"drain_fs names the file system.  Also events/s and MB/s per second of the\n"
		"daemon's CPU, and the events written and lost.\n"
		"Takes about 8 seconds (5 runs), 1 with --quick (1 run of 100 ms, a 4 MiB\n"
		"file).\n"
		"\n"
		"  --drain               the daemon's figures (above)\n"
		"  --rate N              --drain: events/s of the steady runs, 100000 to\n"
		"                        1000000000 (default 8000000)\n"
		"  --dir DIR             --drain: the log files and the reference's file go in\n"
		"                        DIR (default /dev/shm)\n"
		"  --runs N              report the median of N runs, 1 to 101 (default 11;\n"
		"                        --drain: 5)\n"
		"  --events N            events per write run, 1000 to 4294967296 (default 250000)\n"
		"  --buffers N           buffers in the pool: 2 to 65536 (default 1024)\n"
		"  --buffer-size KB      size of each buffer in KiB: a power of two from 4 to\n"
		"                        1024 (default 16)\n"
		"  --quick               3 runs unless --runs says otherwise (--drain: 1)\n",
		true,
	},
	{
		"ring-flush", "write a single ring's events to a log file, as its flush application",
		"ring-flush PATH -o FILE [--once] [--flush-timer MS] [--create KB] [--force]",
		"The flush application of a single ring (<ringlog/ring.h>: one producer, such\n"
		"as a signal handler or firmware, writing into memory that ring-flush maps).\n"
		"Drains the ring's events into log file FILE, which dump, stats and convert\n"
		"read, and writes DATA_LOSS records for the events the producer discarded.\n"
		"Then sleeps until the producer signals the fill event (by default when the\n"
		"ring is 70% full) and drains again, until SIGINT or SIGTERM: then it drains\n"
		"what is left, closes FILE and prints its statistics, one \"key: value\" per\n"
		"line.  Exits 1 if the ring held damaged records (one line each on stderr;\n"
		"the bytes are counted as a CORRUPT loss) or FILE could not be written.\n"
		"\n"
		"  PATH                  the ring: a file, or a shared-memory object by its path\n"
		"                        under /dev/shm (shm_open(\"/r\") is /dev/shm/r)\n"
		"  -o FILE, --output FILE\n"
		"                        the log file; an existing file is refused unless --force\n"
		"  --once                drain once and exit, without waiting\n"
		"  --flush-timer MS      also drain every MS milliseconds, 0 to 3600000 (default\n"
		"                        0: on the fill event only); for a producer that cannot\n"
		"                        wake a futex, or that falls silent for longer than its\n"
		"                        clock takes to wrap (docs/FORMAT.md, \"The single ring\")\n"
		"  --create KB           if PATH does not exist, create it as a ring of KB KiB, 1\n"
		"                        to 1048576, time-stamped with the TSC (or CLOCK_MONOTONIC,\n"
		"                        as for ringlog start)\n"
		"  --force               overwrite FILE if it exists\n",
		true,
	},
	{
		"help", "help on ringlog or on one command",
		"help [COMMAND]",
		"Prints the list of commands, or COMMAND's usage and options.\n"
		"\"ringlog COMMAND --help\" and \"ringlog COMMAND -h\" do the same.\n"
		"\n"
		"  COMMAND               one of the commands that \"ringlog help\" lists\n",
		true,
	},
	{
		"update", "change a running session's enable flags, flush timer, maximum buffers",
		"update NAME [--enable LIST] [--mask MASK] [--flush-timer T] [--max-buffers N] "
		"[--counters LIST] [--counter-period MS] [--system LIST] [--system-pid LIST] "
		"[--follow] [--no-follow] [--profile-hz N] [--sink URL [--host-id ID] "
		"[--sink-buffer SIZE] [--sink-chunk SIZE]]",
		"Changes the properties of running session NAME that ETW's update changes, and\n"
		"its counters.  A new enable mask is seen by every producer at its next write,\n"
		"without a restart; the daemon takes a new flush timer, maximum, counter list\n"
		"or counter period at its next pass.\n"
		"\n"
		"  NAME                  the session\n"
		"  --enable LIST         EnableFlags: exactly these categories (names declared\n"
		"                        with rlog_category_name, and numbers 0..63, separated by\n"
		"                        commas); a name not declared yet is enabled when a\n"
		"                        process declares it\n"
		"  --mask MASK           EnableFlags as a number, hex with 0x, else decimal (0\n"
		"                        pauses the session)\n"
		"  --flush-timer T       FlushTimer: milliseconds, or with a unit (500ms, 2s); 0:\n"
		"                        full buffers only\n"
		"  --max-buffers N       MaximumBuffers: from the buffers in the pool now up to\n"
		"                        the session's capacity (four times MaximumBuffers at\n"
		"                        start)\n"
		"  --counters LIST       exactly these counters from now on (as for start); a\n"
		"                        counter turned on starts from its next reading\n"
		"  --counter-period MS   their sampling period, 10 ms to 60 s\n"
		"  --system LIST         exactly these system events from now on (as for start;\n"
		"                        none: no more), with the same privileges\n"
		"  --system-pid LIST     their processes from now on (all: every process)\n"
		"  --follow              also the attached processes and their children\n"
		"  --no-follow           no longer\n"
		"  --profile-hz N        profile's samples a second, 1 to 100000\n"
		"  --sink URL            add a sink (as start's --sink) to a session that has\n"
		"                        none: its stream says what came before as one\n"
		"                        DATA_LOSS (cause sink)\n"
		"  --host-id ID          the host's id in its chunks (as for start)\n"
		"  --sink-buffer SIZE    chunks kept while unacknowledged (as for start)\n"
		"  --sink-chunk SIZE     the chunk size (as for start)\n",
		true,
	},
	{
		"flush", "write every buffer of a session, partly filled ones too, to its file now",
		"flush NAME",
		"Makes the daemon of session NAME drain every buffer, partly filled ones too,\n"
		"into its log file, and returns when that is done: a reader that opens the file\n"
		"afterwards sees every event written before the command (ETW's FlushTrace).\n"
		"\n"
		"  NAME                  the session\n",
		true,
	},
	{
		"counters", "the counters a session can sample, and which this machine has",
		"counters",
		"Lists every counter source that --counters of start and update accepts, one\n"
		"per line: its name, whether this machine has it (yes, no, or user-only: a\n"
		"performance counter that kernel.perf_event_paranoid limits to user space),\n"
		"and what it counts or why it is missing (no hardware performance counters,\n"
		"perf_event_paranoid, ...).  Each is tried as the daemon samples it: a\n"
		"process's counters on this process, the system's on CPU 0.  Takes no\n"
		"arguments.\n",
		true,
	},
	{
		"tail", "print a real-time session's events as the daemon drains them",
		"tail NAME [--id N[,N..]] [--name NAME] [--pid P[,P..]] [--tid T[,T..]] [--since T] "
		"[--until T] [--format text|json] [--time relative|wall] [--all]",
		"A real-time consumer of session NAME (started with --mode real-time): prints\n"
		"its events as the daemon drains them (within FlushTimer of their writing), as\n"
		"ringlog dump prints a file, until the session stops or tail is interrupted.\n"
		"Events are in time order within each delivery.  A consumer that does not keep\n"
		"up never slows the producers or the file: the blocks it misses are counted in\n"
		"the session's realtime_buffers_lost, a DATA_LOSS line (cause real_time,\n"
		"blocks=N) says where, and at the end one line on stderr says how many, with\n"
		"exit status 1.  What it missed while not reading as the session stopped, the\n"
		"daemon tells it in the stream's end account: one more such DATA_LOSS line.\n"
		"Several consumers may follow a session at once.\n"
		"\n"
		"  NAME                  the session\n"
		"  --id N[,N..]          only these event IDs (0 to 16383)\n"
		"  --name NAME           only events whose name matches the shell pattern NAME\n"
		"  --pid P[,P..]         only these processes\n"
		"  --tid T[,T..]         only these threads\n"
		"  --since T             only events at or after T\n"
		"  --until T             only events before T (times as for ringlog dump)\n"
		"  --format text|json    text (the default), or JSON Lines\n"
		"  --time relative|wall  the time column: ns since the start of the session (the\n"
		"                        default), or the wall-clock time in UTC\n"
		"  --all                 also TIME_SYNC, EVENT_SCHEMA, THREAD_NAME, PROCESS_NAME,\n"
		"                        COUNTER_NAME\n",
		true,
	},
	{
		"collect", "write the sessions published with start --sink as log files",
		"collect URL -o DIR [--follow] [--group NAME] [--gap-wait DURATION]",
		"Reads the chunks sessions published with start --sink and writes each host's\n"
		"session as a log file in DIR, named HOST_SESSION_HOSTID_RUNID.rlog (each run\n"
		"of a session its own file): the bytes the host's local file holds (but the\n"
		"file header's creation time).  A chunk seen twice is written once; chunks\n"
		"missing are a DATA_LOSS (cause sink) of exactly the events they held.  Offsets\n"
		"are committed only once the files are on disk (fsync): a collector killed\n"
		"and started again goes on where it was, nothing lost or written twice.\n"
		"Prints one line per file: its path, chunks, duplicates, gaps, bytes; then\n"
		"\"commits refused by a rebalance: N\" if Kafka refused any (not an error: the\n"
		"files and their state are on disk, what comes again is dropped).\n"
		"\n"
		"  URL                   kafka://BROKERS/TOPIC or nats://SERVERS/SUBJECT\n"
		"  -o DIR                where the files go (an existing directory)\n"
		"  --follow              keep collecting (until SIGINT or SIGTERM); without it,\n"
		"                        stop at the end of what the topic holds\n"
		"  --group NAME          the Kafka consumer group, or JetStream durable consumer\n"
		"                        (default ringlog-collect): collectors of one share the\n"
		"                        work (and may share DIR), and one started again goes\n"
		"                        on where it was\n"
		"  --gap-wait DURATION   JetStream: how long a chunk after ones its file lacks\n"
		"                        waits for them (another collector of the durable may\n"
		"                        hold them) before they are a gap (default 10s)\n",
		true,
	},
	{
		"snapshot", "write a session's buffers to a file, now or when a trigger fires",
		"snapshot NAME -o FILE [--since-last] [--force] [--on-loss | --on-event ID "
		"[--flag F]] [--after MS] [--wait]",
		"The session's daemon writes what its buffers hold now, partly filled ones\n"
		"too, to FILE: a log file that dump, stats and convert read on its own (the\n"
		"process and thread names and the schemas are always in it).  Producers go\n"
		"on writing meanwhile and lose nothing.  Made for flight recorders (start\n"
		"--mode overwrite, with or without -o): their buffers hold the latest events.\n"
		"Each snapshot's DATA_LOSS records count, per thread, what was lost since the\n"
		"previous snapshot (cause overwritten: reused before any snapshot took it).\n"
		"It ends with the sampled counters' latest records (--counters; the daemon\n"
		"keeps up to 1 MiB of them, each with the counter's value).\n"
		"\n"
		"  NAME                  the session\n"
		"  -o FILE               the snapshot file (refused if it exists)\n"
		"  --force               overwrite FILE if it exists\n"
		"  --since-last          only what no earlier snapshot held: consecutive\n"
		"                        snapshots then hold every event and counter record once\n"
		"  --on-loss             arm a trigger: the snapshot is taken at the session's\n"
		"                        first loss from now on (in a flight recorder without\n"
		"                        a file, overwritten events, though losses, do not\n"
		"                        fire it)\n"
		"  --on-event ID         arm a trigger: the snapshot is taken when an event with\n"
		"                        this ID (16 to 16383) is written\n"
		"  --flag F              ... a FLAGGED event with this flag word (0 to 65535)\n"
		"  --after MS            take the trigger's snapshot MS ms after it fires: a\n"
		"                        window around the moment that matters (0 to 3600000)\n"
		"  --wait                with a trigger: wait for its snapshot, then print it\n"
		"  --disarm              (ringlog snapshot NAME --disarm) drop the armed\n"
		"                        trigger\n"
		"\n"
		"A snapshot prints snapshot, events_written, events_lost (the events its\n"
		"DATA_LOSS records count, overwritten ones included, as in the session's\n"
		"events_lost, of which events_overwritten is a part) and file_bytes; an\n"
		"armed trigger prints one line and returns (ringlog query shows it).  One\n"
		"trigger at a time; a trigger still armed when the session stops is dropped.\n",
		true,
	},
	{
		"report", "one self-contained HTML page of a log file: timeline, losses, totals",
		"report FILE -o FILE.html [--since T] [--until T] [--force]",
		"Writes log file FILE as one HTML page that any browser opens with no network\n"
		"and nothing else installed, then prints counts, one \"key: value\" per line.\n"
		"The page shows the session's properties and the totals of ringlog stats\n"
		"--json (the same numbers), the accounting identity, the losses by cause and\n"
		"by thread with their time ranges, a zoomable timeline (a lane per thread,\n"
		"grouped by process: spans as bars, events as ticks, losses in red, counters\n"
		"as lines, and with system events a lane per CPU showing who ran), a sortable\n"
		"table of the events and spans by count and time, and span duration\n"
		"histograms.  The window shown is in the page's address (#t0=NS&t1=NS).\n"
		"--since and --until take a window out of the file, with dump's times and\n"
		"meaning (events at or after T, before T): the page holds what meets it,\n"
		"opens on it and counts it (its events, the losses whose time range meets\n"
		"it), and still shows the whole file's identity.  Several files, or a\n"
		"directory (the files of ringlog collect), are several hosts on one\n"
		"timeline, as dump merges them: a row per host and their total (stats\n"
		"--json's), each host's clock error, lanes grouped by host, then process.\n"
		"An existing OUT is refused unless --force.  Exits 1 if FILE cannot be read,\n"
		"or holds damaged regions (the report of the rest is written).\n"
		"docs/CONVERT.md has the details.\n"
		"\n"
		"  FILE                  a log file written by ringlog start; several, or a\n"
		"                        directory: several hosts (docs/DUMP.md)\n"
		"  -o FILE.html          the output (required), created 0600\n"
		"  --since T             the window's start: 1.5s, 250ms, 10us, 123ns from the\n"
		"                        start (of the earliest host), or 2026-11-22T07:01:31.5Z\n"
		"  --until T             the window's end (excluded), likewise\n"
		"  --force               overwrite FILE.html\n",
		true,
	},
};

const struct cli_help *cli_help_find(const char *name)
{
	for (size_t i = 0; i < sizeof help / sizeof help[0]; i++)
		if (strcmp(help[i].name, name) == 0)
			return &help[i];
	return NULL;
}

void cli_help_overview(FILE *f)
{
	fputs("usage: ringlog COMMAND [ARGS]\n\ncommands:\n", f);
	for (size_t i = 0; i < sizeof help / sizeof help[0]; i++)
		if (help[i].built)
			fprintf(f, "  %-9s %s\n", help[i].name, help[i].summary);
	/* Commands of the design not built yet, if any. */
	const char *sep = "\nnot built yet: ";
	for (size_t i = 0; i < sizeof help / sizeof help[0]; i++)
		if (!help[i].built) {
			fprintf(f, "%s%s", sep, help[i].name);
			sep = ", ";
		}
	fputs(*sep == ',' ? "\n" : "", f);
	fputs("\n\"ringlog help COMMAND\" or \"ringlog COMMAND --help\" shows a command's "
	      "options.\nThe manual: man ringlog (after meson install), or man -l "
	      "docs/man/ringlog.1.\n",
	      f);
}

void cli_help_command(FILE *f, const struct cli_help *h)
{
	fprintf(f, "usage: ringlog %s\n\n%s", h->usage, h->text);
}
