package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/tasklog/tasklog/events/agentlog"
)

// BenchmarkNATSHookInProcess is BenchmarkHookInProcess on a NATS store: the same 10,000-event
// task, imported into a stream of an in-process server on 127.0.0.1 that syncs every write;
// each hook connects, opens the stream, reopens the task, records, decides and delivers.
// first-ms is the first hook, which folds the imported task without a snapshot.
func BenchmarkNATSHookInProcess(b *testing.B) {
	dir, ws, db := benchHookTask(b)
	b.Setenv("HOME", dir)
	b.Setenv("TASKLOG_SERVE", "off")
	b.Setenv("XDG_DATA_HOME", filepath.Join(dir, "data"))
	ns := natsServer(b, filepath.Join(dir, "nats"), 0)
	url := ns.ClientURL() + "/BENCH"
	task := agentlog.TaskID(agentlog.ClaudeCode, benchHookSession).String()
	export := filepath.Join(dir, "task.jsonl")
	if code, _, stderr := replayHere("export", task, "--db", db, "-o", export); code != exitOK {
		b.Fatalf("export: %s", stderr)
	}
	if code, _, stderr := replayHere("import", export, "--store", url); code != exitOK {
		b.Fatalf("import: %s", stderr)
	}
	hook := func(i int) time.Duration {
		payload := fmt.Sprintf(`{"session_id":%q,"cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":"toolu_bench_%d"}`,
			benchHookSession, ws, filepath.Join(ws, "src", fmt.Sprintf("f%d.ts", i%50)), i)
		start := time.Now()
		old := hookStdin
		hookStdin = strings.NewReader(payload)
		var out, errb strings.Builder
		code := run([]string{"hook", "claude-code", "--store", url}, &out, &errb)
		hookStdin = old
		if code != 0 || errb.Len() > 0 {
			b.Fatalf("hook: exit %d, %s", code, errb.String())
		}
		return time.Since(start)
	}
	// The import wrote no projection snapshots: the first hook folds the whole task and
	// writes them, as the seeding of the bbolt benchmark does.
	first := hook(-1)
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		times = append(times, hook(i))
	}
	b.StopTimer()
	b.ReportMetric(float64(first.Microseconds())/1000, "first-ms")
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(times[(len(times)*99)/100].Microseconds())/1000, "p99-ms")
}
