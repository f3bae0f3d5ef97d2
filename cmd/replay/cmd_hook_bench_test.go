package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// benchReadPayload is the PreToolUse payload of the i-th Read in session of the workspace ws,
// one of 50 files in turn.
func benchReadPayload(session, ws string, i int) []byte {
	return fmt.Appendf(nil, `{"session_id":%q,"cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":"toolu_bench_%d"}`,
		session, ws, filepath.Join(ws, "src", fmt.Sprintf("f%d.ts", i%50)), i)
}

// BenchmarkHookRoundTrip is what an agent waits for at every tool call: a 'replay hook'
// process started with a PreToolUse payload on a task of 10,000 events, which opens the
// database and the task, parses, records, decides, delivers and replies, without a resident
// server ($TASKLOG_SERVE=off). It reports the median and the 99th percentile of the wall time
// per hook.
func BenchmarkHookRoundTrip(b *testing.B) {
	bin := testenv.ReplayBinary(b)
	dir, ws, db := benchHookTask(b)
	env := []string{"HOME=" + dir}
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		payload := benchReadPayload(benchHookSession, ws, i)
		r := hookProcess(bin, "claude-code", db, payload, env)
		if r.code != 0 || r.stderr != "" {
			b.Fatalf("hook: %+v", r)
		}
		times = append(times, r.took)
	}
	b.StopTimer()
	reportPercentiles(b, times)
}

// benchHookSession is the Claude Code session the hook benchmarks add to.
const benchHookSession = "bench-session"

// benchHookTask writes the benchmarks' workspace (dir/shop: a path-scoped Cline rule, an
// always rule, an AGENTS.md) and seeds a task of 10,000 events for benchHookSession in
// dir/tasklog.db.
func benchHookTask(b *testing.B) (dir, ws, db string) {
	b.Helper()
	dir = b.TempDir()
	ws = filepath.Join(dir, "shop")
	writeFiles(b, ws, map[string]string{
		".clinerules/api.md":       "---\npaths: [\"src/api/**\"]\n---\nAPI handlers return JSON errors with a code.\n",
		".claude/rules/testing.md": "Every change comes with a test.\n",
		"AGENTS.md":                "Run npm test before you finish.\n",
		"src/api/routes.ts":        "export const routes = []\n",
	})
	db = filepath.Join(dir, "tasklog.db")
	seedHookTask(b, db, ws, benchHookSession, 10000)
	return dir, ws, db
}

// seedHookTask records n events of a Claude Code session through the agent session API: tool
// calls with a decision every fifth.
func seedHookTask(b *testing.B, db, ws, sid string, n int) {
	b.Helper()
	d, err := store.Open(db, &store.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	defer d.Close()
	ctx := context.Background()
	a, err := session.OpenAgent(ctx, d, agentlog.TaskID(agentlog.ClaudeCode, sid), session.AgentOptions{
		Agent:   agentlog.ClaudeCode,
		Started: &events.TaskStarted{Roots: []string{ws}, Cwd: ws, Runtime: events.Runtime{Name: "claude-code"}},
		RootFS:  func(root string) fs.FS { return os.DirFS(root) }})
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	for i := 0; a.Version() < uint64(n); i++ {
		params, _ := json.Marshal(map[string]string{"file_path": filepath.Join(ws, "src", fmt.Sprintf("s%d.ts", i%200))})
		id := fmt.Sprintf("seed_%d", i)
		if _, err := a.RecordHook(ctx, []agentlog.Record{{Key: id, Payload: &events.ToolCall{Tool: "Read", ID: id, Params: params}}}); err != nil {
			b.Fatal(err)
		}
		if i%5 == 4 {
			if _, err := a.Decide(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
}

// hookInProcess runs 'replay hook claude-code' with the store arguments and payload in this
// process and returns how long it took; it fails b unless the hook exits 0 silently.
func hookInProcess(b *testing.B, payload []byte, storeArgs ...string) time.Duration {
	b.Helper()
	start := time.Now()
	old := hookStdin
	hookStdin = bytes.NewReader(payload)
	defer func() { hookStdin = old }()
	var out, errb strings.Builder
	if code := run(append([]string{"hook", "claude-code"}, storeArgs...), &out, &errb); code != 0 || errb.Len() > 0 {
		b.Fatalf("hook: exit %d, %s", code, errb.String())
	}
	return time.Since(start)
}

// BenchmarkHookInProcess is the same round trip without the process start: 'replay hook' run
// in the benchmark's process, which shows where a hook's time goes (-cpuprofile).
func BenchmarkHookInProcess(b *testing.B) {
	dir, ws, db := benchHookTask(b)
	b.Setenv("HOME", dir)
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		times = append(times, hookInProcess(b, benchReadPayload(benchHookSession, ws, i), "--db", db))
	}
	b.StopTimer()
	reportPercentiles(b, times)
}

// BenchmarkProcessStart is the floor under BenchmarkHookRoundTrip: starting the replay binary
// to print its version, on the same machine at the same time.
func BenchmarkProcessStart(b *testing.B) {
	bin := testenv.ReplayBinary(b)
	times := make([]time.Duration, 0, b.N)
	for range b.N {
		start := time.Now()
		if out, err := exec.Command(bin, "--version").CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
		times = append(times, time.Since(start))
	}
	reportPercentiles(b, times)
}
