# Sourced by .ci/run: the build of Jaeger in the background for TestOtelJaeger, and the bounded
# wait for it. Times are bash's $SECONDS of the script that sources this file.

# jaeger_build_start CMD [ARG...] starts the build at the lowest priority, in a process group of
# its own (setsid: the build and the compilers it starts stop together), its output in a file.
jaeger_build_start() {
	jaeger_log="$(mktemp)"
	setsid nice -n 19 "$@" >"$jaeger_log" 2>&1 </dev/null &
	jaeger_pid=$!
}

# jaeger_build_stop stops the build and everything it started, if it still runs.
jaeger_build_stop() {
	if [ -n "${jaeger_pid:-}" ]; then
		kill -TERM -- -"$jaeger_pid" 2>/dev/null || true
		wait "$jaeger_pid" 2>/dev/null || true
		jaeger_pid=
	fi
}

# jaeger_build_wait DEADLINE waits for the build until $SECONDS reaches DEADLINE. It returns 0
# when the build finished and succeeded; 1, with the end of its output, when it failed; 2 when
# it was still running at DEADLINE: it is then stopped.
jaeger_build_wait() {
	local deadline=$1 rc=0
	while kill -0 "$jaeger_pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do
		sleep 0.2
	done
	if kill -0 "$jaeger_pid" 2>/dev/null; then
		jaeger_build_stop
		echo "Jaeger could not be built in time (still building ${SECONDS}s after CI started); TestOtelJaeger did not run"
		return 2
	fi
	wait "$jaeger_pid" || rc=$?
	jaeger_pid=
	if [ "$rc" -ne 0 ]; then
		echo "Jaeger's build failed (exit $rc); TestOtelJaeger did not run. The end of its output:"
		tail -n 20 "$jaeger_log"
		return 1
	fi
}
