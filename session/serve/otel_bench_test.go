package serve

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session/otelexport"
	"github.com/tasklog/tasklog/session/otelexport/otlptest"
	"github.com/tasklog/tasklog/store"
)

// BenchmarkHookOtel is a hook request over the socket (PreToolUse on a task of 10,000 events,
// record, decide, deliver, reply; no fsync) with the server's OpenTelemetry export off, on to
// a receiver that answers, and on to a collector that accepts connections and never answers.
// Modes alternate hook by hook, so the machine's load falls on each alike; it reports each
// mode's median and 99th percentile.
func BenchmarkHookOtel(b *testing.B) {
	modes := []string{"off", "receiver", "hung"}
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close() // the kernel accepts; nothing ever answers
	endpoints := map[string]string{"receiver": rcv.URL(), "hung": "http://" + ln.Addr().String()}
	ctx := context.Background()
	clients := map[string]*Client{}
	var wss = map[string]string{}
	for _, mode := range modes {
		opts := Options{Hold: -1}
		if ep := endpoints[mode]; ep != "" {
			exp, err := otelexport.NewExporter(ctx, otelexport.Config{Endpoint: ep, Getenv: func(string) string { return "" }})
			if err != nil {
				b.Fatal(err)
			}
			q := otelexport.NewQueue(exp, 0, nil)
			live := otelexport.NewLive(q, otelexport.Options{})
			defer func() {
				c, cancel := context.WithCancel(ctx)
				cancel()
				live.Close(c)
			}()
			opts.Appended = func(ctx context.Context, db store.Store, task uuid.UUID, before, after uint64) error {
				return live.Appended(ctx, db, task, before, after)
			}
		}
		s, dbPath := startSync(b, opts, false)
		db, err := store.Open(dbPath, &store.Options{NoSync: true})
		if err != nil {
			b.Fatal(err)
		}
		ws := workspace(b)
		seed(b, db, ws, agentlog.ClaudeCode, "bench", 10000).Close()
		db.Close()
		c := dial(b, s)
		if _, err := c.Hook(ctx, "claude-code", preToolUse(ws, "bench", "toolu_first")); err != nil {
			b.Fatal(err)
		}
		clients[mode], wss[mode] = c, ws
	}
	times := map[string][]time.Duration{}
	b.ResetTimer()
	for i := range b.N {
		for _, mode := range modes {
			ws := wss[mode]
			payload := fmt.Appendf(nil, `{"session_id":"bench","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":"toolu_%d"}`,
				ws, filepath.Join(ws, "src", fmt.Sprintf("f%d.ts", i%50)), i)
			t0 := time.Now()
			if _, err := clients[mode].Hook(ctx, "claude-code", payload); err != nil {
				b.Fatal(err)
			}
			times[mode] = append(times[mode], time.Since(t0))
		}
	}
	b.StopTimer()
	for _, mode := range modes {
		ts := times[mode]
		slices.Sort(ts)
		b.ReportMetric(float64(ts[len(ts)/2].Microseconds())/1000, mode+"-p50-ms")
		b.ReportMetric(float64(ts[(len(ts)*99)/100].Microseconds())/1000, mode+"-p99-ms")
	}
}
