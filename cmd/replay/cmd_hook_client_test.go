package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tasklog/tasklog/session/serve/wire"
)

// hookClientBinaries builds replay and the small hook program replay-hook into one temporary
// folder, as 'go install ./cmd/replay/...' puts them side by side.
func hookClientBinaries(tb testing.TB) (replay, client string) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("builds the replay and replay-hook binaries; skipped with -short")
	}
	dir := tb.TempDir()
	replay, client = filepath.Join(dir, "replay"), filepath.Join(dir, "replay-hook")
	for _, b := range [][2]string{{replay, "."}, {client, "./replay-hook"}} {
		if out, err := exec.Command("go", "build", "-o", b[0], b[1]).CombinedOutput(); err != nil {
			tb.Fatalf("go build %s: %v\n%s", b[1], err, out)
		}
	}
	return replay, client
}

// clientProcess runs replay-hook with the payload on stdin and the environment added to this
// process's (the last value of a variable wins).
func clientProcess(bin, agent, db string, payload []byte, env []string, extra ...string) hookResult {
	cmd := exec.Command(bin, append([]string{agent, "--db", db}, extra...)...)
	cmd.Stdin = bytes.NewReader(payload)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	r := hookResult{stdout: out.String(), stderr: errb.String(), took: time.Since(start)}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		r.code, r.stderr = -1, err.Error()
	}
	return r
}

// waitServer waits up to 10 s for the database's server to answer and returns its pid.
func waitServer(tb testing.TB, db string) int {
	tb.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if pid := serverPID(db); pid != 0 {
			return pid
		}
	}
	tb.Fatalf("no server answers for %s", db)
	return 0
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

// BenchmarkHookClientRoundTrip is the hook round trip through a running server that holds the
// database (process start, connect, record, decide, deliver, reply; PreToolUse on a task of
// 10,000 events) two ways, alternating, so that both meet the same load: the small replay-hook
// program (p50-ms, p99-ms) and 'replay hook' (replay-p50-ms, replay-p99-ms); and, in the same
// rotation, what the two add up to: a Go hello world (hello-p50-ms, hello-p99-ms), the floor of
// a Go program's start, and the same hook handed to the same server from this process
// (socket-p50-ms, socket-p99-ms: connect, record, decide, deliver, reply, durable).
func BenchmarkHookClientRoundTrip(b *testing.B) {
	replay, client := hookClientBinaries(b)
	dir, ws, db := benchHookTask(b)
	env := []string{"HOME=" + dir, "TASKLOG_SERVE=on", "TASKLOG_SERVE_IDLE=1m"}
	defer exec.Command(replay, "serve", "--stop", "--db", db).Run()
	payload := func(i int) []byte {
		return fmt.Appendf(nil, `{"session_id":%q,"cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":"toolu_bench_%d"}`,
			benchHookSession, ws, filepath.Join(ws, "src", fmt.Sprintf("f%d.ts", i%50)), i)
	}
	if r := hookProcess(replay, "claude-code", db, payload(-1), env); r.code != 0 {
		b.Fatalf("first hook: %+v", r)
	}
	waitServer(b, db)
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

// reportNamedPercentiles reports the median and the 99th percentile of times as
// <prefix>p50-ms and <prefix>p99-ms.
func reportNamedPercentiles(b *testing.B, prefix string, times []time.Duration) {
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, prefix+"p50-ms")
	b.ReportMetric(float64(times[(len(times)*99)/100].Microseconds())/1000, prefix+"p99-ms")
}
