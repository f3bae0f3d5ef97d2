package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/session/serve"
	"github.com/tasklog/tasklog/session/serve/wire"
)

// clientProcess runs replay-hook with the payload on stdin and the environment added to this
// process's (the last value of a variable wins), with slowBudget unless extra sets a budget.
func clientProcess(bin, agent, db string, payload []byte, env []string, extra ...string) hookResult {
	cmd := exec.Command(bin, withBudget(append([]string{agent, "--db", db}, extra...))...)
	cmd.Stdin = bytes.NewReader(payload)
	cmd.Env = append(os.Environ(), env...)
	return runHookCommand(cmd)
}

// waitServer waits for the server of the database db (or of a NATS store's side file) to
// answer and returns its pid; failing, after testenv.ServerWait, it shows the server's and the hooks'
// logs.
func waitServer(tb testing.TB, db string) int {
	tb.Helper()
	for deadline := time.Now().Add(testenv.ServerWait); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if pid := serverPID(db); pid != 0 {
			return pid
		}
	}
	log, _ := os.ReadFile(filepath.Join(filepath.Dir(db), serveLogName))
	hlog, _ := os.ReadFile(filepath.Join(filepath.Dir(db), hookLogName))
	tb.Fatalf("no server answers for %s; its log:\n%s\nthe hooks' log:\n%s", db, log, hlog)
	return 0
}

// serverAgain waits for a server to answer db again after the one of pid killed was killed. The
// hooks that find nothing listening start one; but on a busy machine all of them may have met
// the dying server (a connection that breaks sends a hook to the database itself), so once its
// socket refuses connections, the payload through run starts one if none came up.
func serverAgain(t *testing.T, db string, killed int, run func(payload []byte) hookResult, payload []byte) int {
	t.Helper()
	for deadline := time.Now().Add(testenv.ServerWait); ; time.Sleep(20 * time.Millisecond) {
		if pid := serverPID(db); pid != 0 && pid != killed {
			return pid
		}
		c, err := net.Dial("unix", serve.SocketPath(db))
		if err == nil {
			c.Close()
		} else if wire.NothingListens(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed server's socket still takes connections after %v", testenv.ServerWait)
		}
	}
	t.Logf("no server came up after the kill; one more hook starts it")
	if r := run(payload); r.code != 0 {
		t.Fatalf("a hook after the server was killed: %+v", r)
	}
	return waitServer(t, db)
}

// helloBinary builds a Go program that prints one line: the floor of any Go program's start on
// this machine, for the benchmarks to quote beside their figures.
func helloBinary(tb testing.TB) string {
	tb.Helper()
	dir := tb.TempDir()
	writeFiles(tb, dir, map[string]string{
		"go.mod":  "module hello\n\ngo 1.26\n",
		"main.go": "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"hello\") }\n",
	})
	cmd := exec.Command("go", "build", "-o", "hello", ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build hello: %v\n%s", err, out)
	}
	return filepath.Join(dir, "hello")
}

// clientBenchServer builds replay and replay-hook, makes benchHookTask's task and has a first
// hook start its server, stopped when b ends; it returns the binaries, the workspace, the
// database and the hooks' environment.
func clientBenchServer(b *testing.B) (replay, client, ws, db string, env []string) {
	replay, client = testenv.Binaries(b)
	dir, ws, db := benchHookTask(b)
	env = []string{"HOME=" + dir, "TASKLOG_SERVE=on", "TASKLOG_SERVE_IDLE=1m"}
	b.Cleanup(func() { exec.Command(replay, "serve", "--stop", "--db", db).Run() })
	if r := hookProcess(replay, "claude-code", db, benchReadPayload(benchHookSession, ws, -1), env); r.code != 0 {
		b.Fatalf("first hook: %+v", r)
	}
	waitServer(b, db)
	return replay, client, ws, db, env
}

// BenchmarkHookClientRoundTrip is the hook round trip through a running server that holds the
// database (process start, connect, record, decide, deliver, reply; PreToolUse on a task of
// 10,000 events) two ways, alternating, so that both meet the same load: the small replay-hook
// program (p50-ms, p99-ms) and 'replay hook' (replay-p50-ms, replay-p99-ms); and, in the same
// rotation, what the two add up to: a Go hello world (hello-p50-ms, hello-p99-ms), the floor of
// a Go program's start, and the same hook handed to the same server from this process
// (socket-p50-ms, socket-p99-ms: connect, record, decide, deliver, reply, durable).
func BenchmarkHookClientRoundTrip(b *testing.B) {
	replay, client, ws, db, env := clientBenchServer(b)
	payload := func(i int) []byte { return benchReadPayload(benchHookSession, ws, i) }
	hello := helloBinary(b)
	fast := make([]time.Duration, 0, b.N)
	full := make([]time.Duration, 0, b.N)
	floor := make([]time.Duration, 0, b.N)
	socket := make([]time.Duration, 0, b.N)
	sock := wire.SocketPath(db)
	b.ResetTimer()
	for i := range b.N {
		r := clientProcess(client, "claude-code", db, payload(2*i), env)
		if r.code != 0 || r.stderr != "" {
			b.Fatalf("replay-hook: %+v", r)
		}
		fast = append(fast, r.took)
		r = hookProcess(replay, "claude-code", db, payload(2*i+1), env)
		if r.code != 0 || r.stderr != "" {
			b.Fatalf("replay hook: %+v", r)
		}
		full = append(full, r.took)
		start := time.Now()
		if out, err := exec.Command(hello).Output(); err != nil || string(out) != "hello\n" {
			b.Fatalf("hello: %q, %v", out, err)
		}
		floor = append(floor, time.Since(start))
		ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
		start = time.Now()
		_, err := wire.Hook(ctx, sock, "bench", "claude-code", payload(-2-i))
		socket = append(socket, time.Since(start))
		cancel()
		if err != nil {
			b.Fatalf("hook over the socket: %v", err)
		}
	}
	b.StopTimer()
	reportPercentiles(b, fast)
	reportNamedPercentiles(b, "replay-", full)
	reportNamedPercentiles(b, "hello-", floor)
	reportNamedPercentiles(b, "socket-", socket)
}

// BenchmarkHookClientCold is BenchmarkHookClientRoundTrip's hooks as an agent mostly sends
// them, seconds apart: each after a pause (not timed) longer than the server's hold period, so
// that the server opens the database again for it and carries the task's parked session on.
// replay-hook (p50-ms, p99-ms) and replay hook (replay-p50-ms, replay-p99-ms) alternate.
func BenchmarkHookClientCold(b *testing.B) {
	replay, client, ws, db, env := clientBenchServer(b)
	payload := func(i int) []byte { return benchReadPayload(benchHookSession, ws, i) }
	fast := make([]time.Duration, 0, b.N)
	full := make([]time.Duration, 0, b.N)
	pause := func() {
		b.StopTimer()
		time.Sleep(serve.DefaultHold + 100*time.Millisecond)
		b.StartTimer()
	}
	b.ResetTimer()
	for i := range b.N {
		pause()
		r := clientProcess(client, "claude-code", db, payload(2*i), env)
		if r.code != 0 || r.stderr != "" {
			b.Fatalf("replay-hook: %+v", r)
		}
		fast = append(fast, r.took)
		pause()
		r = hookProcess(replay, "claude-code", db, payload(2*i+1), env)
		if r.code != 0 || r.stderr != "" {
			b.Fatalf("replay hook: %+v", r)
		}
		full = append(full, r.took)
	}
	b.StopTimer()
	reportPercentiles(b, fast)
	reportNamedPercentiles(b, "replay-", full)
}

// reportNamedPercentiles reports the median and the 99th percentile of times as
// <prefix>p50-ms and <prefix>p99-ms.
func reportNamedPercentiles(b *testing.B, prefix string, times []time.Duration) {
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, prefix+"p50-ms")
	b.ReportMetric(float64(times[(len(times)*99)/100].Microseconds())/1000, prefix+"p99-ms")
}

// TestHookStart: replay hook takes its budget's start from replay-hook when that is a time
// within the budget before now, and from its own start otherwise.
func TestHookStart(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	for _, tt := range []struct {
		env  string
		want time.Time
	}{
		{"", now},
		{"garbage", now},
		{fmt.Sprint(now.Add(-time.Second).UnixNano()), now.Add(-time.Second)},
		{fmt.Sprint(now.UnixNano()), now},
		{fmt.Sprint(now.Add(time.Second).UnixNano()), now},
		{fmt.Sprint(now.Add(-hookBudget).UnixNano()), now},
	} {
		t.Setenv(hookStartEnv, tt.env)
		if got := hookStart(now, hookBudget); !got.Equal(tt.want) {
			t.Errorf("$%s=%q: start %v, want %v", hookStartEnv, tt.env, got, tt.want)
		}
	}
}

// TestHookClient runs the small hook program as an agent would. With no server it runs
// 'replay hook', which starts one; then 32 replay-hook processes at once on one task go through
// that server, and 32 more while the server is killed (SIGKILL): every one exits 0 within its
// budget, every tool call is recorded once, the scoped rule reaches the model once, and verify
// passes. A replay-hook with no replay to fall back on gets its rule from the server. A payload that is not JSON gets the neutral reply and a line in the hook log; -h
// prints replay hook's usage.
func TestHookClient(t *testing.T) {
	replay, client := testenv.Binaries(t)
	ws, home := hookWorkspace(t)
	db := filepath.Join(t.TempDir(), "tasklog.db")
	env := []string{"HOME=" + home, "TASKLOG_SERVE=on", "TASKLOG_SERVE_IDLE=30s", "TASKLOG_DB=", "TASKLOG_STORE="}
	t.Cleanup(func() { exec.Command(replay, "serve", "--stop", "--db", db).Run() })

	start := `{"session_id":"s-client","cwd":"` + ws + `","hook_event_name":"SessionStart","source":"startup"}`
	if r := clientProcess(client, "claude-code", db, []byte(start), env); r.code != 0 || r.stderr != "" {
		t.Fatalf("SessionStart: %+v", r)
	}
	first := waitServer(t, db)

	hook := func(payload []byte) hookResult { return clientProcess(client, "claude-code", db, payload, env) }
	hooksThroughKilledServer(t, db, ws, "s-client", first, "replay-hook", hook)

	// The fast path alone: a replay-hook with no replay beside it nor on $PATH can answer only
	// through the server, which the hooks start again.
	stop := `{"session_id":"s-client","cwd":"` + ws + `","hook_event_name":"Stop","stop_hook_active":false}`
	serverAgain(t, db, first, hook, []byte(stop))
	alone := filepath.Join(t.TempDir(), "replay-hook")
	if bin, err := os.ReadFile(client); err != nil || os.WriteFile(alone, bin, 0o755) != nil {
		t.Fatalf("copy replay-hook: %v", err)
	}
	ui := fmt.Sprintf(`{"session_id":"s-client","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":"toolu_alone"}`,
		ws, filepath.Join(ws, "src/ui/button.tsx"))
	r := clientProcess(alone, "claude-code", db, []byte(ui), append(env, "PATH="+t.TempDir()))
	if r.code != 0 || !strings.Contains(r.stdout, "UI components are function components") {
		t.Fatalf("replay-hook alone: %+v, want the UI rule from the server", r)
	}

	r = clientProcess(client, "claude-code", db, []byte(`{"session_id":`), env)
	if r.code != 0 || r.stdout != "" {
		t.Errorf("a payload that is not JSON: %+v, want exit 0 and Claude Code's neutral (empty) reply", r)
	}
	if log, err := os.ReadFile(filepath.Join(filepath.Dir(db), hookLogName)); err != nil || !strings.Contains(string(log), "not a hook payload") {
		t.Errorf("hook log %q (%v): want the payload refused", log, err)
	}
	if r := clientProcess(client, "-h", db, nil, env); r.code != 0 || !strings.Contains(r.stderr, "usage: replay hook AGENT") {
		t.Errorf("-h: %+v, want replay hook's usage", r)
	}

	exec.Command(replay, "serve", "--stop", "--db", db).Run()
	checkToolCallsOnce(t, db, 33)
	if out, err := exec.Command(replay, "verify", "--db", db).CombinedOutput(); err != nil {
		t.Fatalf("verify: %v\n%s", err, out)
	}
}
