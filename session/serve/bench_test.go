package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/session/serve/wire"
	"github.com/tasklog/tasklog/store"
)

// seed records n events in an agent's session of the workspace (tool calls, a decision every fifth)
// through the Go API, and returns its task.
func seed(b *testing.B, db store.Store, ws string, agent agentlog.Agent, sid string, n int) *session.AgentSession {
	b.Helper()
	ctx := context.Background()
	a, err := session.OpenAgent(ctx, db, agentlog.TaskID(agent, sid), session.AgentOptions{Agent: agent,
		Started: &events.TaskStarted{Roots: []string{ws}, Cwd: ws, Runtime: events.Runtime{Name: string(agent)}}})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; a.Version() < uint64(n); i++ {
		params, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("src/s%d.ts", i%200)})
		id := fmt.Sprintf("seed_%d", i)
		if _, err := a.RecordHook(ctx, []agentlog.Record{{Key: id, Payload: &events.ToolCall{Tool: "read", ID: id, Params: params}}}); err != nil {
			b.Fatal(err)
		}
		if i%5 == 4 {
			if _, err := a.Decide(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	return a
}

func percentiles(b *testing.B, times []time.Duration) {
	slices.Sort(times)
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(times[(len(times)*99)/100].Microseconds())/1000, "p99-ms")
}

// BenchmarkDecide is a decision on a task of 10,000 events: in process (Session.Decide) and
// requested over the socket from a connected client (no process start).
func BenchmarkDecide(b *testing.B) {
	ws := workspace(b)
	ctx := context.Background()
	b.Run("in-process", func(b *testing.B) {
		db, err := store.Open(filepath.Join(b.TempDir(), "tasklog.db"), &store.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		a := seed(b, db, ws, agentlog.Pi, "bench", 10000)
		defer a.Close()
		times := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for range b.N {
			t0 := time.Now()
			if _, err := a.Decide(ctx); err != nil {
				b.Fatal(err)
			}
			times = append(times, time.Since(t0))
		}
		b.StopTimer()
		percentiles(b, times)
	})
	b.Run("socket", func(b *testing.B) {
		s, dbPath := start(b, Options{Hold: -1})
		db, err := store.Open(dbPath, &store.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		a := seed(b, db, ws, agentlog.Pi, "bench", 10000)
		a.Close()
		db.Close()
		c := dial(b, s)
		task := agentlog.TaskID(agentlog.Pi, "bench").String()
		if _, err := c.Decide(ctx, task); err != nil { // opens the task
			b.Fatal(err)
		}
		times := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for range b.N {
			t0 := time.Now()
			if _, err := c.Decide(ctx, task); err != nil {
				b.Fatal(err)
			}
			times = append(times, time.Since(t0))
		}
		b.StopTimer()
		percentiles(b, times)
	})
}

// BenchmarkHookOverSocket is a PreToolUse hook handed to the server by a connected client on a
// task of 10,000 events: record, decide, deliver, reply, without the process start; with the
// database's commits synced to disk (durable, as 'replay serve' runs) and not (nosync), on one
// connection or a connection per hook (dial, as replay-hook makes one); and after a pause of
// 20 ms between hooks (not timed), as an agent's hooks come with its model's work between them.
func BenchmarkHookOverSocket(b *testing.B) {
	for _, bc := range []struct {
		name             string
		durable, perHook bool
		pause            time.Duration
	}{
		{"durable", true, false, 0},
		{"durable-dial", true, true, 0},
		{"nosync", false, false, 0},
		{"durable-dial-paused", true, true, 20 * time.Millisecond},
		{"nosync-paused", false, false, 20 * time.Millisecond},
	} {
		b.Run(bc.name, func(b *testing.B) { benchHookOverSocket(b, bc.durable, bc.perHook, bc.pause) })
	}
}

// benchHookOverSocket runs BenchmarkHookOverSocket: on one connection, or with perHook set a
// connection of its own for each hook, as replay-hook makes (wire.Hook); pause before each.
func benchHookOverSocket(b *testing.B, durable, perHook bool, pause time.Duration) {
	ws := workspace(b)
	ctx := context.Background()
	s, dbPath := startSync(b, Options{Hold: -1}, durable)
	db, err := store.Open(dbPath, &store.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	seed(b, db, ws, agentlog.ClaudeCode, "bench", 10000).Close()
	db.Close()
	c := dial(b, s)
	if _, err := c.Hook(ctx, "claude-code", preToolUse(ws, "bench", "toolu_first")); err != nil {
		b.Fatal(err)
	}
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		time.Sleep(pause)
		t0 := time.Now()
		payload := fmt.Appendf(nil, `{"session_id":"bench","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":"toolu_%d"}`,
			ws, filepath.Join(ws, "src", fmt.Sprintf("f%d.ts", i%50)), i)
		if perHook {
			_, err = wire.Hook(ctx, s.Socket(), "bench", "claude-code", payload)
		} else {
			_, err = c.Hook(ctx, "claude-code", payload)
		}
		if err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t0))
	}
	b.StopTimer()
	percentiles(b, times)
}

// BenchmarkHookOverHTTP is a Qwen Code PostToolUse hook posted over HTTP on loopback, as qwen's
// "type": "http" hooks post it, on a task of 10,000 events: record, decide, deliver, reply,
// with no process start. On one kept-alive connection (as qwen's fetch keeps it), with the
// database's commits synced to disk (durable, as 'replay serve' runs) and not (nosync).
func BenchmarkHookOverHTTP(b *testing.B) {
	for _, bc := range []struct {
		name    string
		durable bool
	}{{"durable", true}, {"nosync", false}} {
		b.Run(bc.name, func(b *testing.B) { benchHookOverHTTP(b, bc.durable) })
	}
}

func benchHookOverHTTP(b *testing.B, durable bool) {
	ws := workspace(b)
	s, dbPath := startSync(b, Options{Hold: -1}, durable)
	db, err := store.Open(dbPath, &store.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	seed(b, db, ws, agentlog.Qwen, "bench", 10000).Close()
	db.Close()
	url := startHTTP(b, s, HTTPOptions{}) + "/hook/qwen"
	client := &http.Client{}
	post := func(i int) {
		payload := fmt.Appendf(nil, `{"session_id":"bench","transcript_path":"/home/dev/.qwen/projects/x/chats/bench.jsonl","cwd":%q,"hook_event_name":"PostToolUse","tool_name":"read_file","tool_input":{"file_path":%q},"tool_response":{"llmContent":"x"},"tool_use_id":"toolu_%d","tool_call_id":"call_%d"}`,
			ws, filepath.Join(ws, "src", fmt.Sprintf("f%d.ts", i%50)), i, i)
		if code, body := postHook(b, client, url, testToken, payload); code != http.StatusOK {
			b.Fatalf("status %d: %s", code, body)
		}
	}
	post(-1) // opens the task
	times := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		t0 := time.Now()
		post(i)
		times = append(times, time.Since(t0))
	}
	b.StopTimer()
	percentiles(b, times)
}
