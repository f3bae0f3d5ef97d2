package otelexport

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// importLog imports a JSON Lines export from testdata into a new database.
func importLog(t testing.TB, name string) (store.Store, uuid.UUID) {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "tasklog.db"), &store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	imp, err := session.Import(context.Background(), db, f, name, session.ImportOptions{})
	if err != nil || len(imp) != 1 {
		t.Fatalf("import %s: %v (%d tasks)", name, err, len(imp))
	}
	return db, imp[0].Task
}

func readLog(t testing.TB, db store.Store, task uuid.UUID) []events.Event {
	t.Helper()
	var log []events.Event
	for ev, err := range db.Events(context.Background(), task, 1) {
		if err != nil {
			t.Fatal(err)
		}
		log = append(log, ev)
	}
	return log
}

// TestTraceGolden pins the span tree of a recorded Claude Code session (the audit scenario of
// testdata/audit/claude-code, through its hooks) with a golden file, rewritten by -update.
func TestTraceGolden(t *testing.T) {
	for _, tt := range []struct {
		golden string
		opts   Options
	}{
		{"claude-code.trace.json", Options{}},
		{"claude-code.prompts.trace.json", Options{UserPrompts: true}},
	} {
		t.Run(tt.golden, func(t *testing.T) {
			db, task := importLog(t, "claude-code.jsonl")
			spans, err := Trace(context.Background(), db, task, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.MarshalIndent(spans, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			path := filepath.Join("testdata", tt.golden)
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s differs; rerun with -update and review the diff.\ngot:\n%s", path, got)
			}
		})
	}
}

// TestTraceShape checks what the golden file holds, so a wrong -update cannot pass unseen: one
// trace, the task's span the root with the agent's session id, a span per decision under its
// prompt with every rule as an event, each delivery under its decision, no rule text and no
// prompt text unless asked for, and no child starting before its parent.
func TestTraceShape(t *testing.T) {
	db, task := importLog(t, "claude-code.jsonl")
	log := readLog(t, db, task)
	spans, err := Trace(context.Background(), db, task, Options{})
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]Span{}
	var roots, decisions, deliveries []Span
	for _, s := range spans {
		if s.TraceID != hexID(task[:]) {
			t.Errorf("span %s: trace %s, want the task's id", s.Name, s.TraceID)
		}
		if _, dup := byID[s.SpanID]; dup {
			t.Errorf("span id %s twice", s.SpanID)
		}
		byID[s.SpanID] = s
		switch {
		case s.Parent == "":
			roots = append(roots, s)
		case s.Name == "decide":
			decisions = append(decisions, s)
		case s.Name == "deliver prompt" || s.Name == "deliver tool":
			deliveries = append(deliveries, s)
		}
	}
	if len(roots) != 1 || roots[0].Name != "invoke_agent claude-code" {
		t.Fatalf("roots %v, want one invoke_agent claude-code", roots)
	}
	if got := attr(roots[0].Attrs, KeyConversationID); got != "a0d17000-5e55-4b7a-a76c-2bafc4c82781" {
		t.Errorf("gen_ai.conversation.id %v, want the agent's session id", got)
	}
	var want struct{ decisions, deliveries int }
	for _, ev := range log {
		switch ev.Type {
		case events.TypeDecision:
			want.decisions++
		case events.TypeDelivery:
			want.deliveries++
		}
	}
	if len(decisions) != want.decisions || len(deliveries) != want.deliveries {
		t.Fatalf("%d decide spans and %d deliver spans, want %d and %d", len(decisions), len(deliveries), want.decisions, want.deliveries)
	}
	recs, err := session.Decisions(context.Background(), db, task)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range decisions {
		rec := recs[i]
		if n := len(rec.Decision.Included) + len(rec.Decision.Excluded); len(d.Events) != n {
			t.Errorf("decision seq %d: %d rule events, want %d", rec.Seq, len(d.Events), n)
		}
		for _, e := range d.Events {
			if attr(e.Attrs, KeyRuleReason) == nil || attr(e.Attrs, KeyRuleID) == nil {
				t.Errorf("decision seq %d: rule event without id or reason: %v", rec.Seq, e.Attrs)
			}
		}
		if p := byID[d.Parent]; p.Name != "prompt 1" {
			t.Errorf("decision seq %d under %q, want prompt 1", rec.Seq, p.Name)
		}
	}
	for _, d := range deliveries {
		if p := byID[d.Parent]; p.Name != "decide" {
			t.Errorf("delivery under %q, want a decide span", p.Name)
		}
		if attr(d.Attrs, KeySHA256) == nil || attr(d.Attrs, KeyBytes) == nil || attr(d.Attrs, KeyChannel) == nil {
			t.Errorf("delivery attrs %v lack channel, bytes or sha256", d.Attrs)
		}
	}
	for _, s := range spans {
		if s.End.Before(s.Start) {
			t.Errorf("span %s ends before it starts", s.Name)
		}
		if p, ok := byID[s.Parent]; ok && s.Start.Before(p.Start) {
			t.Errorf("span %s starts before its parent %s", s.Name, p.Name)
		}
	}
	all, _ := json.Marshal(spans)
	for _, secret := range []string{"Add a health endpoint", "Every change comes with a test"} {
		if bytes.Contains(all, []byte(secret)) {
			t.Errorf("the trace holds %q: no prompt or rule text without opting in", secret)
		}
	}
	withPrompts, err := Trace(context.Background(), db, task, Options{UserPrompts: true})
	if err != nil {
		t.Fatal(err)
	}
	all, _ = json.Marshal(withPrompts)
	if !bytes.Contains(all, []byte("Add a health endpoint")) {
		t.Error("UserPrompts: the prompt's text is not in the trace")
	}
}

// TestMapperLiveEqualsWhole folds the log one event at a time, as the server does, silent up
// to a point (a server that started in the middle of a task): the spans it returns after that
// point, and the ones Close ends, are the whole fold's spans after it.
func TestMapperLiveEqualsWhole(t *testing.T) {
	db, task := importLog(t, "claude-code.jsonl")
	log := readLog(t, db, task)
	whole, err := Map(task, log, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for cut := 0; cut <= len(log); cut++ {
		m := NewMapper(task, Options{})
		var got []Span
		for i, ev := range log {
			m.SetSilent(i < cut)
			s, err := m.Add(ev)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, s...)
		}
		got = append(got, m.Close()...)
		for _, s := range got {
			i := slices.IndexFunc(whole, func(w Span) bool { return w.SpanID == s.SpanID })
			if i < 0 {
				t.Fatalf("cut %d: span %s not in the whole fold", cut, s.Name)
			}
			a, _ := json.Marshal(s)
			b, _ := json.Marshal(whole[i])
			if !bytes.Equal(a, b) {
				t.Errorf("cut %d: span %s differs:\n%s\n%s", cut, s.Name, a, b)
			}
		}
		if cut == 0 && len(got) != len(whole) {
			t.Errorf("live fold gave %d spans, the whole %d", len(got), len(whole))
		}
	}
}

func attr(attrs []Attr, key string) any {
	for _, a := range attrs {
		if a.Key == key {
			return a.Value
		}
	}
	return nil
}

// collect is a Sender that keeps what it is sent.
type collect struct {
	mu       sync.Mutex
	spans    []Span
	requests []int // the spans of each request
}

func (c *collect) Export(_ context.Context, spans []Span) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spans = append(c.spans, spans...)
	c.requests = append(c.requests, len(spans))
	return nil
}

func (c *collect) sent() []int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.requests)
}

// TestLiveCatchUp: a server that meets a task in the middle (before > 0) folds its log in the
// background, silently up to before; what the next requests append waits for it, and nothing
// is lost or sent twice: the spans sent are the ones a fold silent up to before gives.
func TestLiveCatchUp(t *testing.T) {
	db, task := importLog(t, "claude-code.jsonl")
	log := readLog(t, db, task)
	ctx := context.Background()
	for _, before := range []uint64{1, 5, 8, 11} {
		c := &collect{}
		live := NewLive(NewQueue(c, 0, nil), Options{})
		n := uint64(len(log))
		// Three requests: the first the server sees of the task, then two more.
		for _, r := range [][2]uint64{{before, before + 1}, {before + 1, before + 3}, {before + 3, n}} {
			if err := live.Appended(ctx, db, task, r[0], r[1]); err != nil {
				t.Fatal(err)
			}
		}
		if err := live.Close(ctx); err != nil {
			t.Fatal(err)
		}
		m := NewMapper(task, Options{})
		var want []Span
		for _, ev := range log {
			m.SetSilent(ev.Seq <= before)
			s, err := m.Add(ev)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, s...)
		}
		m.SetSilent(false)
		want = append(want, m.Close()...)
		got, _ := json.Marshal(c.spans)
		exp, _ := json.Marshal(want)
		if !bytes.Equal(got, exp) {
			t.Errorf("before %d: sent\n%s\nwant\n%s", before, got, exp)
		}
	}
}
