package main

import (
	"bytes"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session/otelexport"
	"github.com/tasklog/tasklog/session/otelexport/otlptest"
)

// otelScenario copies the claude-code audit scenario's workspace and returns it, its home, a
// database path and the payloads (written for the copy) in order.
func otelScenario(t *testing.T) (ws, home, db string, payloads [][]byte) {
	t.Helper()
	src := filepath.Join(testenv.RepoRoot(t), "testdata", "audit", "claude-code")
	dir := t.TempDir()
	ws, home, db = filepath.Join(dir, "shop"), filepath.Join(dir, "home"), filepath.Join(dir, "tasklog.db")
	if err := os.CopyFS(ws, os.DirFS(filepath.Join(src, "shop"))); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(src, "payloads", "*.json"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		payloads = append(payloads, bytes.ReplaceAll(b, []byte("/home/dev/shop"), []byte(ws)))
	}
	return ws, home, db, payloads
}

// otelTask is the scenario's task: its Claude Code session.
var otelTask = agentlog.TaskID(agentlog.ClaudeCode, "a0d17000-5e55-4b7a-a76c-2bafc4c82781").String()

// exportedJSON is 'replay otel export --json' of the scenario's task.
func exportedJSON(t *testing.T, db string) []otelexport.Span { return exportedJSONOf(t, db, otelTask) }

// exportedJSONOf is 'replay otel export --json' of a task.
func exportedJSONOf(t *testing.T, db, task string) []otelexport.Span {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run([]string{"otel", "export", "--json", "--db", db, task}, &out, &errb); code != 0 {
		t.Fatalf("otel export --json: exit %d: %s", code, errb.String())
	}
	var spans []otelexport.Span
	if err := json.Unmarshal(out.Bytes(), &spans); err != nil {
		t.Fatalf("otel export --json: %v\n%s", err, out.String())
	}
	return spans
}

// sameTree checks that the received spans are the expected ones: ids, parents, names, times,
// attribute and event counts; roots' events are left out when skipRootEvents (a live export
// has no audit findings).
func sameTree(t *testing.T, got []otlptest.Span, want []otelexport.Span, skipRootEvents bool) {
	t.Helper()
	byID := map[string]otlptest.Span{}
	for _, g := range got {
		if _, dup := byID[g.SpanID]; dup {
			t.Errorf("span %s (%s) received twice", g.SpanID, g.Name)
		}
		byID[g.SpanID] = g
	}
	if len(got) != len(want) {
		t.Errorf("received %d spans, want %d", len(got), len(want))
	}
	for _, w := range want {
		g, ok := byID[w.SpanID]
		if !ok {
			t.Errorf("span %s (%s) not received", w.SpanID, w.Name)
			continue
		}
		if g.TraceID != w.TraceID || g.Name != w.Name || g.Parent != w.Parent || !g.Start.Equal(w.Start) || !g.End.Equal(w.End) {
			t.Errorf("span %s: received %s parent %s %s..%s, want %s parent %s %s..%s", w.SpanID,
				g.Name, g.Parent, g.Start, g.End, w.Name, w.Parent, w.Start, w.End)
		}
		if w.Parent == "" && skipRootEvents {
			continue
		}
		if len(g.Events) != len(w.Events) {
			t.Errorf("span %s: %d events, want %d", w.Name, len(g.Events), len(w.Events))
		}
	}
}

// TestOtelServeLive runs the claude-code scenario's hooks through a 'replay serve
// --otel-endpoint' of an OTLP receiver: the server exports every decision, delivery and prompt
// as the hooks arrive, and the task's span when it stops; the trace is the one 'replay otel
// export' sends afterwards, span for span (without the audit's findings, which only the
// after-the-fact export has). Then 'replay otel export' sends the recorded task to a second
// receiver: every span, with the recorded times.
func TestOtelServeLive(t *testing.T) {
	bin := testenv.ReplayBinary(t)
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	_, home, db, payloads := otelScenario(t)
	srv, srvOut := startOtelServe(t, bin, db, home, rcv.URL())
	env := []string{"HOME=" + home, "TASKLOG_SERVE=on"}
	for i, p := range payloads {
		if r := hookProcess(bin, "claude-code", db, p, env); r.code != 0 || r.stderr != "" {
			t.Fatalf("payload %d: %+v", i+1, r)
		}
	}
	if out, err := exec.Command(bin, "serve", "--stop", "--db", db).CombinedOutput(); err != nil {
		t.Fatalf("serve --stop: %v\n%s", err, out)
	}
	if err := srv.Wait(); err != nil {
		t.Fatalf("serve: %v\n%s", err, srvOut.String())
	}
	if !strings.Contains(srvOut.String(), "OpenTelemetry export on") || !strings.Contains(srvOut.String(), " 0 failed, 0 dropped") {
		t.Errorf("the server's log does not report the export, or reports failures:\n%s", srvOut.String())
	}
	want := exportedJSON(t, db)
	sameTree(t, rcv.Spans(), want, true)
	for _, s := range rcv.Spans() {
		if s.Parent == "" && s.Attrs["gen_ai.conversation.id"] != "a0d17000-5e55-4b7a-a76c-2bafc4c82781" {
			t.Errorf("root span: gen_ai.conversation.id %q, want the agent's session id", s.Attrs["gen_ai.conversation.id"])
		}
	}

	after := otlptest.NewReceiver()
	defer after.Close()
	var out, errb bytes.Buffer
	if code := run([]string{"otel", "export", "--db", db, "--otel-endpoint", after.URL(), otelTask}, &out, &errb); code != 0 {
		t.Fatalf("otel export: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), " spans sent, trace ") {
		t.Errorf("otel export printed %q", out.String())
	}
	sameTree(t, after.Spans(), want, false)
}

// TestOtelServeHungCollector runs the scenario's hooks through a server whose collector
// accepts connections and never answers: every hook answers as without export, with the same
// replies; the log holds every event and verifies; the server stops all the same and its log
// counts the spans it could not send.
func TestOtelServeHungCollector(t *testing.T) {
	bin := testenv.ReplayBinary(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close() // the kernel accepts; nothing ever answers
	replies := func(endpoint string) (out []string, db string, srvLog string) {
		_, home, db, payloads := otelScenario(t)
		srv, srvOut := startOtelServe(t, bin, db, home, endpoint)
		for i, p := range payloads {
			r := hookProcess(bin, "claude-code", db, p, []string{"HOME=" + home, "TASKLOG_SERVE=on"})
			if r.code != 0 || r.stderr != "" {
				t.Fatalf("payload %d: %+v", i+1, r)
			}
			out = append(out, r.stdout)
		}
		if out, err := exec.Command(bin, "serve", "--stop", "--db", db).CombinedOutput(); err != nil {
			t.Fatalf("serve --stop: %v\n%s", err, out)
		}
		if err := srv.Wait(); err != nil {
			t.Fatalf("serve: %v\n%s", err, srvOut.String())
		}
		return out, db, srvOut.String()
	}
	want, _, _ := replies("")
	got, db, srvLog := replies("http://" + ln.Addr().String())
	for i := range want {
		// The workspace's path differs between the two runs; the replies do not otherwise.
		if len(got[i]) != len(want[i]) {
			t.Errorf("payload %d: reply %q with a hung collector, %q without export", i+1, got[i], want[i])
		}
	}
	if !strings.Contains(srvLog, "OpenTelemetry export: 0 spans sent") {
		t.Errorf("the server's log does not count the unsent spans:\n%s", srvLog)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"verify", "--db", db, otelTask}, &out, &errb); code != 0 {
		t.Fatalf("verify: exit %d\n%s%s", code, out.String(), errb.String())
	}
	out.Reset()
	if code := run([]string{"log", "--db", db, "--json", otelTask}, &out, &errb); code != 0 {
		t.Fatalf("log: %s", errb.String())
	}
	if n := strings.Count(out.String(), "\n"); n != 15 {
		t.Errorf("the log holds %d events, want the scenario's 15", n)
	}
}

// BenchmarkServeHookOtel is BenchmarkServeHookRoundTrip's warm hook (process start,
// PreToolUse on a task of 10,000 events, through a running server) with the server's
// OpenTelemetry export off, on to a receiver that answers, and on to a collector that accepts
// connections and never answers. The three servers take hooks in turn, so the machine's load
// falls on each alike; it reports each one's median and 99th percentile per hook.
func BenchmarkServeHookOtel(b *testing.B) {
	bin := testenv.ReplayBinary(b)
	modes := []string{"off", "receiver", "hung"}
	rcv := otlptest.NewReceiver()
	defer rcv.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close() // the kernel accepts; nothing ever answers
	endpoints := map[string]string{"receiver": rcv.URL(), "hung": "http://" + ln.Addr().String()}
	const sid = "bench-otel"
	type server struct{ dir, ws, db string }
	servers := map[string]server{}
	for _, mode := range modes {
		dir := b.TempDir()
		ws := filepath.Join(dir, "shop")
		writeFiles(b, ws, map[string]string{
			".clinerules/api.md": "---\npaths: [\"src/api/**\"]\n---\nAPI handlers return JSON errors with a code.\n",
			"AGENTS.md":          "Run npm test before you finish.\n",
			"src/api/routes.ts":  "export const routes = []\n",
		})
		db := filepath.Join(dir, "tasklog.db")
		seedHookTask(b, db, ws, sid, 10000)
		args := []string{"serve", "--db", db, "--idle", "5m"}
		if ep := endpoints[mode]; ep != "" {
			args = append(args, "--otel-endpoint", ep)
		}
		srv := exec.Command(bin, args...)
		srv.Env = append(os.Environ(), "HOME="+dir)
		if err := srv.Start(); err != nil {
			b.Fatal(err)
		}
		defer func() {
			exec.Command(bin, "serve", "--stop", "--db", db).Run()
			srv.Wait()
		}()
		waitServer(b, db)
		servers[mode] = server{dir, ws, db}
	}
	hook := func(mode string, i int) hookResult {
		s := servers[mode]
		r := hookProcess(bin, "claude-code", s.db, benchReadPayload(sid, s.ws, i), []string{"HOME=" + s.dir, "TASKLOG_SERVE=on"})
		if r.code != 0 || r.stderr != "" {
			b.Fatalf("hook: %+v", r)
		}
		return r
	}
	for _, mode := range modes {
		hook(mode, -1) // the export's first fold of the task
	}
	times := map[string][]time.Duration{}
	b.ResetTimer()
	for i := range b.N {
		for _, mode := range modes {
			times[mode] = append(times[mode], hook(mode, i).took)
		}
	}
	b.StopTimer()
	for _, mode := range modes {
		reportNamedPercentiles(b, mode+"-", times[mode])
	}
}

// startOtelServe starts 'replay serve' for db with HOME home, exporting to endpoint ("" for no
// export), and waits until it answers; its output collects in the buffer, and the test's end
// kills it if it still runs.
func startOtelServe(t *testing.T, bin, db, home, endpoint string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	args := []string{"serve", "--db", db, "--idle", "2m"}
	if endpoint != "" {
		args = append(args, "--otel-endpoint", endpoint)
	}
	srv := exec.Command(bin, args...)
	srv.Env = append(os.Environ(), "HOME="+home)
	var out bytes.Buffer
	srv.Stdout, srv.Stderr = &out, &out
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	waitServer(t, db)
	return srv, &out
}
