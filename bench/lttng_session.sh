# bench/lttng_session.sh - sourced by bench/vs_lttng.sh and
# bench/total_cost.sh (not run alone).
#
# lttng_session_start NAME DIR: starts an LTTng session daemon if none is
# running (its pid in sessiond_pid: the caller's cleanup stops the one it
# started, by that pid), then session NAME recording ringlog_bench:ev16
# (bench/vs_lttng_tp.h) into DIR through a per-user channel of 8 x 4 MiB
# sub-buffers, and starts it.
lttng_session_start() {
	if ! lttng list >/dev/null 2>&1; then
		lttng-sessiond --no-kernel --quiet &
		sessiond_pid=$!
		for _ in $(seq 50); do
			lttng list >/dev/null 2>&1 && break
			sleep 0.1
		done
	fi
	lttng create "$1" --output="$2" >/dev/null
	lttng enable-channel -u --session="$1" --subbuf-size=4M --num-subbuf=8 ch >/dev/null
	lttng enable-event -u --session="$1" --channel=ch 'ringlog_bench:ev16' >/dev/null
	lttng start "$1" >/dev/null
}
