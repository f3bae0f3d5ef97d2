package projections

import (
	"encoding/json"
	"testing"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/rules"
)

// logBuilder makes a well-formed log: sequence numbers from 1, turns as the events package
// numbers them.
type logBuilder struct {
	tb   testing.TB
	evs  []events.Event
	turn int
}

func newLog(tb testing.TB, roots []string, config string) *logBuilder {
	b := &logBuilder{tb: tb, turn: 1}
	ts := &events.TaskStarted{Roots: roots, OS: "linux", Runtime: events.Runtime{Name: "test"}}
	if config != "" {
		ts.Config = json.RawMessage(config)
	}
	b.add(ts)
	return b
}

func (b *logBuilder) add(p events.Payload) events.Event {
	b.tb.Helper()
	if d, ok := p.(*events.Decision); ok {
		d.Turn = b.turn
	}
	ev, err := events.New(p)
	if err != nil {
		b.tb.Fatalf("events.New(%T): %v", p, err)
	}
	ev.Seq = uint64(len(b.evs) + 1)
	ev.Turn = b.turn
	b.evs = append(b.evs, ev)
	if _, ok := p.(*events.Decision); ok {
		b.turn++
	}
	return ev
}

func (b *logBuilder) user(text string) { b.add(&events.UserMessage{Text: text}) }
func (b *logBuilder) decide()          { b.add(&events.Decision{Engine: "test"}) }
func (b *logBuilder) tool(name, params string) {
	b.add(&events.ToolCall{Tool: name, Params: json.RawMessage(params)})
}

// fold folds the whole log, failing the test on an error.
func (b *logBuilder) fold() *Task {
	b.tb.Helper()
	t := New()
	for _, ev := range b.evs {
		if err := t.Apply(ev); err != nil {
			b.tb.Fatalf("Apply: %v", err)
		}
	}
	return t
}

// pathsOf lists the context's paths, in order.
func pathsOf(c rules.EvaluationContext) []string {
	out := make([]string, len(c.Paths))
	for i, p := range c.Paths {
		out[i] = p.Path
	}
	return out
}

func contextJSON(tb testing.TB, t *Task) []byte {
	tb.Helper()
	b, err := json.Marshal(struct {
		C rules.EvaluationContext
		D []events.Count
		T int
	}{t.Context(), t.Dropped(), t.Turn()})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}
