package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// jaegerBinary is the jaeger (v2) program: $TASKLOG_JAEGER, else jaeger on $PATH or in
// $(go env GOPATH)/bin, where .ci/install-jaeger puts it.
func jaegerBinary(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TASKLOG_JAEGER"); p != "" {
		return p
	}
	if p, err := exec.LookPath("jaeger"); err == nil {
		return p
	}
	if out, err := exec.Command("go", "env", "GOPATH").Output(); err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "jaeger")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("jaeger is not installed (bash .ci/install-jaeger builds it; $TASKLOG_JAEGER names one)")
	return ""
}

// jaeger is a Jaeger v2 started by a test on 127.0.0.1: OTLP/HTTP in, in-memory storage, its
// query API out.
type jaeger struct {
	otlp, query string
}

func startJaeger(t *testing.T) jaeger {
	t.Helper()
	bin := jaegerBinary(t)
	ports := freePorts(t, 3)
	otlp, query, grpc := ports[0], ports[1], ports[2]
	dir := t.TempDir()
	conf := fmt.Sprintf(`service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 1000
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:%d
    grpc:
      endpoint: 127.0.0.1:%d
receivers:
  otlp:
    protocols:
      http:
        endpoint: 127.0.0.1:%d
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`, query, grpc, otlp)
	path := filepath.Join(dir, "jaeger.yaml")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", "file:"+path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	j := jaeger{otlp: fmt.Sprintf("http://127.0.0.1:%d", otlp), query: fmt.Sprintf("http://127.0.0.1:%d", query)}
	for deadline := time.Now().Add(testenv.ServerWait); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(j.query + "/api/services")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				// The OTLP receiver starts with the query service; make sure it listens too.
				if c, err := net.Dial("tcp", strings.TrimPrefix(j.otlp, "http://")); err == nil {
					c.Close()
					return j
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("jaeger did not answer within %s: %v\n%s", testenv.ServerWait, err, out.String())
		}
	}
}

// jaegerTrace is a trace as Jaeger's query API (/api/traces) gives it.
type jaegerTrace struct {
	TraceID string `json:"traceID"`
	Spans   []struct {
		SpanID        string `json:"spanID"`
		OperationName string `json:"operationName"`
		References    []struct {
			RefType string `json:"refType"`
			SpanID  string `json:"spanID"`
		} `json:"references"`
		StartTime int64      `json:"startTime"`
		Duration  int64      `json:"duration"`
		Tags      []jaegerKV `json:"tags"`
		Logs      []struct {
			Fields []jaegerKV `json:"fields"`
		} `json:"logs"`
	} `json:"spans"`
}

type jaegerKV struct {
	Key   string `json:"key"`
	Value any    `json:"value"`
}

func kv(kvs []jaegerKV, key string) any {
	for _, x := range kvs {
		if x.Key == key {
			return x.Value
		}
	}
	return nil
}

// findTrace asks Jaeger for the traces of service tasklog whose gen_ai.conversation.id is sid,
// until one holds at least want spans (Jaeger stores what it receives asynchronously).
func (j jaeger) findTrace(t *testing.T, sid string, want int) jaegerTrace {
	t.Helper()
	tags, _ := json.Marshal(map[string]string{"gen_ai.conversation.id": sid})
	q := url.Values{"service": {"tasklog"}, "tags": {string(tags)}, "limit": {"20"},
		"start": {fmt.Sprint(time.Now().Add(-30 * 24 * time.Hour).UnixMicro())}, "end": {fmt.Sprint(time.Now().Add(time.Hour).UnixMicro())}}
	var last string
	for deadline := time.Now().Add(testenv.ServerWait); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(j.query + "/api/traces?" + q.Encode())
		if err != nil {
			last = err.Error()
			continue
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		last = string(body)
		var res struct {
			Data []jaegerTrace `json:"data"`
		}
		if json.Unmarshal(body, &res) == nil && len(res.Data) == 1 && len(res.Data[0].Spans) >= want {
			return res.Data[0]
		}
	}
	t.Fatalf("Jaeger has no trace of %d spans with gen_ai.conversation.id %s; it answered: %.2000s", want, sid, last)
	return jaegerTrace{}
}

// checkJaegerTrace checks a trace as Jaeger shows it against the task's log: one span per
// decision with every rule and its reason as a log, a span per delivery under its decision,
// every reference a span of the trace, no child starting before its parent.
func checkJaegerTrace(t *testing.T, tr jaegerTrace, db store.Store, sid string) {
	t.Helper()
	task := agentlog.TaskID(agentlog.ClaudeCode, sid)
	if tr.TraceID != strings.ReplaceAll(task.String(), "-", "") {
		t.Errorf("trace id %s, want the task's %s", tr.TraceID, task)
	}
	recs, err := session.Decisions(t.Context(), db, task)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]int{}
	for i, s := range tr.Spans {
		byID[s.SpanID] = i
	}
	decides, delivers, roots := 0, 0, 0
	for _, s := range tr.Spans {
		if len(s.References) == 0 {
			roots++
			if s.OperationName != "invoke_agent claude-code" || kv(s.Tags, "gen_ai.conversation.id") != sid {
				t.Errorf("root span %s, conversation %v", s.OperationName, kv(s.Tags, "gen_ai.conversation.id"))
			}
		}
		for _, r := range s.References {
			p, ok := byID[r.SpanID]
			if r.RefType != "CHILD_OF" || !ok {
				t.Errorf("span %s: reference %+v to no span of the trace", s.OperationName, r)
				continue
			}
			if s.StartTime < tr.Spans[p].StartTime {
				t.Errorf("span %s starts before its parent %s", s.OperationName, tr.Spans[p].OperationName)
			}
			switch s.OperationName {
			case "decide":
				if name := tr.Spans[p].OperationName; name != "prompt 1" {
					t.Errorf("decide span under %q, want prompt 1", name)
				}
			case "deliver prompt", "deliver tool":
				if name := tr.Spans[p].OperationName; name != "decide" {
					t.Errorf("%s span under %q, want decide", s.OperationName, name)
				}
			}
		}
		switch s.OperationName {
		case "decide":
			decides++
			seq := kv(s.Tags, "tasklog.seq")
			var rec *session.Recorded
			for i := range recs {
				if fmt.Sprint(recs[i].Seq) == fmt.Sprint(seq) {
					rec = &recs[i]
				}
			}
			if rec == nil {
				t.Errorf("decide span of seq %v: no such decision in the log", seq)
				continue
			}
			if n := len(rec.Decision.Included) + len(rec.Decision.Excluded); len(s.Logs) != n {
				t.Errorf("decision seq %d: %d rule logs in Jaeger, %d rules in the log", rec.Seq, len(s.Logs), n)
			}
			for _, l := range s.Logs {
				if kv(l.Fields, "tasklog.rule.id") == nil || kv(l.Fields, "tasklog.rule.reason") == nil {
					t.Errorf("decision seq %d: a rule log without id or reason: %v", rec.Seq, l.Fields)
				}
			}
		case "deliver prompt", "deliver tool":
			delivers++
			if kv(s.Tags, "tasklog.delivery.sha256") == nil || kv(s.Tags, "tasklog.delivery.bytes") == nil {
				t.Errorf("%s: tags %v lack bytes or sha256", s.OperationName, s.Tags)
			}
		}
	}
	if roots != 1 || decides != len(recs) || delivers == 0 {
		t.Errorf("%d root spans, %d decide spans (the log has %d decisions), %d deliver spans", roots, decides, len(recs), delivers)
	}
}

// TestOtelJaeger records the claude-code scenario's hooks through 'replay serve
// --otel-endpoint' of a real Jaeger and finds the trace through Jaeger's query API by the
// agent's session id; then sends the same log, imported as another session, with 'replay otel
// export' and finds that trace too, with the recorded times.
func TestOtelJaeger(t *testing.T) {
	j := startJaeger(t)
	bin := testenv.ReplayBinary(t)
	_, home, db, payloads := otelScenario(t)
	sid := fmt.Sprintf("jaeger-live-%d", time.Now().UnixNano())
	srv, srvOut := startOtelServe(t, bin, db, home, j.otlp)
	env := []string{"HOME=" + home, "TASKLOG_SERVE=on"}
	for i, p := range payloads {
		p = bytes.ReplaceAll(p, []byte("a0d17000-5e55-4b7a-a76c-2bafc4c82781"), []byte(sid))
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
	want := len(exportedJSONOf(t, db, agentlog.TaskID(agentlog.ClaudeCode, sid).String()))
	d, err := store.Open(db, &store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	checkJaegerTrace(t, j.findTrace(t, sid, want), d, sid)
	d.Close()

	// After the fact: the recorded log of the same scenario, with the times it recorded.
	rec := filepath.Join(t.TempDir(), "recorded.db")
	var out, errb bytes.Buffer
	if code := run([]string{"import", filepath.Join(testenv.RepoRoot(t), "session", "otelexport", "testdata", "claude-code.jsonl"), "--db", rec}, &out, &errb); code != 0 {
		t.Fatalf("import: %s", errb.String())
	}
	if code := run([]string{"otel", "export", "--db", rec, "--otel-endpoint", j.otlp, otelTask}, &out, &errb); code != 0 {
		t.Fatalf("otel export: %s", errb.String())
	}
	spans := exportedJSONOf(t, rec, otelTask)
	const recordedSID = "a0d17000-5e55-4b7a-a76c-2bafc4c82781"
	tr := j.findTrace(t, recordedSID, len(spans))
	d, err = store.Open(rec, &store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	checkJaegerTrace(t, tr, d, recordedSID)
	for _, s := range tr.Spans {
		if len(s.References) > 0 {
			continue
		}
		for _, w := range spans {
			if w.Parent == "" && s.StartTime != w.Start.UnixMicro() {
				t.Errorf("the task's span starts at %s in Jaeger, at %s in the log", time.UnixMicro(s.StartTime).UTC(), w.Start)
			}
		}
	}
}
