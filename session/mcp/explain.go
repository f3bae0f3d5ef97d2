package mcp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// ExplainIn is the explain tool's input: the decision, by turn or by prompt and request.
type ExplainIn struct {
	Turn    int    `json:"turn,omitempty" jsonschema:"the decision to explain by its ordinal in the task (1 is the first request); or give prompt"`
	Prompt  *int   `json:"prompt,omitempty" jsonschema:"the prompt (user message) to explain, at its last request unless request is given; 0 is before the first prompt"`
	Request int    `json:"request,omitempty" jsonschema:"with prompt: the request of that prompt, from 1"`
	Rule    string `json:"rule,omitempty" jsonschema:"explain only this rule, by name or id"`
	Task    string `json:"task,omitempty" jsonschema:"a task id or unique prefix (default: the current task)"`
}

// Evidence is a context path with the events that put it there.
type Evidence struct {
	Path     string   `json:"path"`
	Root     string   `json:"root,omitempty"`
	Evidence []string `json:"evidence" jsonschema:"the events that put the path into the context: kind, seq, prompt and request"`
}

// Outcome is a recorded rule outcome, its matched paths with their evidence.
type Outcome struct {
	Name       string     `json:"name"`
	ID         string     `json:"id"`
	Category   string     `json:"category"`
	Reason     string     `json:"reason"`
	Detail     string     `json:"detail,omitempty"`
	Matched    []Evidence `json:"matched,omitempty" jsonschema:"the paths the rule's patterns matched, with their evidence"`
	Patterns   []string   `json:"patterns,omitempty" jsonschema:"the patterns that matched, in the order of matched"`
	ShadowedBy string     `json:"shadowed_by,omitempty"`
}

// ExplainOut is the explain tool's answer: a recorded decision with the evidence of its paths.
type ExplainOut struct {
	Task     string         `json:"task"`
	Turn     int            `json:"turn"`
	Prompt   int            `json:"prompt" jsonschema:"the prompt (user message) the decision served; 0 before the first"`
	Request  int            `json:"request" jsonschema:"the decision's model request within its prompt, from 1"`
	Seq      uint64         `json:"seq" jsonschema:"the decision event's sequence number"`
	Engine   string         `json:"engine"`
	Context  []Evidence     `json:"context" jsonschema:"the candidate paths of the decision"`
	Included []Outcome      `json:"included"`
	Excluded []Outcome      `json:"excluded"`
	Omitted  map[string]int `json:"omitted,omitempty" jsonschema:"how many entries each list left out to bound the answer, by list; name a rule in rule to see it"`
	// Deliveries are those of replay explain --json: the decision's, or with rule those that
	// carried the rule up to this decision's own.
	Deliveries []Delivery `json:"deliveries,omitempty" jsonschema:"the deliveries of the decision: which rules an agent's hook put in front of the model, through which channel and hook, in full or by name; with rule, those that carried it up to this decision"`
}

// Delivery is a delivery event as replay explain --json prints it.
type Delivery struct {
	Seq      uint64   `json:"seq"`
	Prompt   int      `json:"prompt" jsonschema:"the prompt of the request the rules were delivered into"`
	Request  int      `json:"request" jsonschema:"the request the rules were delivered into"`
	Agent    string   `json:"agent"`
	Hook     string   `json:"hook"`
	Channel  string   `json:"channel"`
	Form     string   `json:"form"`
	Rules    []string `json:"rules" jsonschema:"the names of the rules delivered"`
	Bytes    int      `json:"bytes"`
	Decision uint64   `json:"decision" jsonschema:"the seq of the decision that chose the rules"`
}

func deliveries(ns []session.DeliveryNote) []Delivery {
	var out []Delivery
	for _, n := range ns {
		d := n.Delivery
		names := make([]string, len(d.Rules))
		for i, r := range d.Rules {
			names[i] = r.Name
		}
		out = append(out, Delivery{Seq: n.Seq, Prompt: n.Position.Prompt, Request: n.Position.Request, Agent: d.Agent,
			Hook: d.Hook, Channel: d.Channel, Form: d.Form, Rules: names, Bytes: d.Bytes, Decision: d.Decision})
	}
	return out
}

// turnOf is the turn the input names, by turn or by prompt and request.
func turnOf(ctx context.Context, db store.Store, task uuid.UUID, turn int, prompt *int, request int) (int, error) {
	if prompt == nil {
		if turn < 1 {
			return 0, fmt.Errorf("give turn (1 or more) or prompt")
		}
		return turn, nil
	}
	if turn != 0 {
		return 0, fmt.Errorf("give turn or prompt, not both")
	}
	reqs, err := session.RequestsOf(ctx, db, task)
	if err != nil {
		return 0, err
	}
	p := session.Position{Prompt: *prompt, Request: request}
	if t, ok := reqs.Turn(p); ok {
		return t, nil
	}
	what := fmt.Sprintf("prompt %d", *prompt)
	if request > 0 {
		what = p.String()
	}
	return 0, fmt.Errorf("task %s has no decision at %s; %s", task, what, reqs.Describe())
}

func (s *server) explain(ctx context.Context, _ *sdk.CallToolRequest, in ExplainIn) (*sdk.CallToolResult, ExplainOut, error) {
	var out ExplainOut
	var text string
	err := s.withDB(func(db store.Store) error {
		task, err := s.taskFor(db, in.Task)
		if err != nil {
			return err
		}
		if in.Turn, err = turnOf(ctx, db, task, in.Turn, in.Prompt, in.Request); err != nil {
			return err
		}
		rec, err := session.DecisionAt(ctx, db, task, in.Turn)
		if errors.Is(err, session.ErrNoDecision) {
			return fmt.Errorf("task %s has no decision at turn %d; %s", task, in.Turn, turnsOf(ctx, db, task))
		} else if err != nil {
			return err
		}
		out = explainAnswer(task, rec)
		if in.Rule == "" {
			dels, err := rec.Deliveries(ctx, db, task)
			if err != nil {
				return err
			}
			out.Deliveries = deliveries(dels)
			text = explainText(out)
			return nil
		}
		x, err := session.Explain(ctx, db, task, in.Turn, in.Rule)
		if errors.Is(err, session.ErrNoRule) {
			return fmt.Errorf("turn %d of task %s decided about no rule %q; the rules are: %s", in.Turn, task, in.Rule,
				bounded(outcomeNames(rec.Decision), namesShown))
		} else if err != nil {
			return err
		}
		out.Included, out.Excluded, out.Omitted = []Outcome{}, []Outcome{}, nil
		o := outcomeOf(x.Rule, rec.Decision.Context, rec.Requests)
		if x.Included {
			out.Included = append(out.Included, o)
		} else {
			out.Excluded = append(out.Excluded, o)
		}
		out.Deliveries = deliveries(x.Deliveries)
		text = x.String()
		return nil
	})
	if err != nil {
		return nil, out, err
	}
	return textResult(text), out, nil
}

// explainAnswer is a recorded decision as explain answers it, the excluded rules bounded.
func explainAnswer(task uuid.UUID, rec session.Recorded) ExplainOut {
	d := rec.Decision
	out := ExplainOut{Task: task.String(), Turn: d.Turn, Prompt: rec.Position.Prompt, Request: rec.Position.Request, Seq: rec.Seq, Engine: d.Engine,
		Context: []Evidence{}, Included: []Outcome{}, Excluded: []Outcome{}}
	for _, p := range d.Context {
		out.Context = keep(out.Context, evidenceOf(p.Path, p.Root, p.Sources, rec.Requests), &out.Omitted, "context")
	}
	for _, o := range d.Included {
		out.Included = keep(out.Included, outcomeOf(o, d.Context, rec.Requests), &out.Omitted, "included")
	}
	for _, o := range d.Excluded {
		out.Excluded = keep(out.Excluded, outcomeOf(o, d.Context, rec.Requests), &out.Omitted, "excluded")
	}
	return out
}

func evidenceOf(path, root string, sources []events.Source, reqs *session.Requests) Evidence {
	e := Evidence{Path: path, Root: root, Evidence: make([]string, len(sources))}
	for i, src := range sources {
		e.Evidence[i] = reqs.Source(src)
	}
	return e
}

func outcomeOf(o events.RuleOutcome, context []events.ContextPath, reqs *session.Requests) Outcome {
	out := Outcome{Name: o.Name, ID: o.ID, Category: o.Category, Reason: o.Reason, Detail: o.Detail, ShadowedBy: o.ShadowedBy}
	for _, m := range o.Matches {
		if m.Path == "" {
			continue
		}
		out.Matched = append(out.Matched, evidenceOf(m.Path, m.Root, events.SourcesOf(context, m.Root, m.Path), reqs))
		out.Patterns = append(out.Patterns, m.Pattern)
	}
	return out
}

func outcomeNames(d events.Decision) []string {
	var names []string
	for _, o := range d.Included {
		names = append(names, o.Name)
	}
	for _, o := range d.Excluded {
		names = append(names, o.Name)
	}
	return names
}

// turnsOf says which turns of a task have a decision.
func turnsOf(ctx context.Context, db store.Store, task uuid.UUID) string {
	var turns []int
	for ev, err := range db.Events(ctx, task, 1) {
		if err != nil {
			return "its log is unreadable: " + err.Error()
		}
		if ev.Type == events.TypeDecision {
			turns = append(turns, ev.Turn)
		}
	}
	switch {
	case len(turns) == 0:
		return "it has no decision yet"
	case turns[len(turns)-1]-turns[0] == len(turns)-1:
		return fmt.Sprintf("it has decisions at turns %d to %d", turns[0], turns[len(turns)-1])
	}
	names := make([]string, len(turns))
	for i, t := range turns {
		names[i] = fmt.Sprint(t)
	}
	return "it has decisions at turns " + bounded(names, namesShown)
}

// explainText is a decision in a few lines: the context, each included rule with why, and the
// excluded rules by reason.
func explainText(out ExplainOut) string {
	var b strings.Builder
	fmt.Fprintf(&b, "prompt %d, request %d (turn %d) of task %s (decision at seq %d): %d rules included, %d excluded\n",
		out.Prompt, out.Request, out.Turn, out.Task, out.Seq, len(out.Included)+out.Omitted["included"], len(out.Excluded)+out.Omitted["excluded"])
	paths := make([]string, len(out.Context))
	for i, p := range out.Context {
		paths[i] = p.Path
	}
	fmt.Fprintf(&b, "context: %s\n", bounded(paths, namesShown))
	for _, o := range out.Included {
		fmt.Fprintf(&b, "+ %s: %s", o.Name, o.Reason)
		if o.Detail != "" {
			fmt.Fprintf(&b, " — %s", o.Detail)
		}
		b.WriteString("\n")
	}
	byReason := map[string][]string{}
	var reasons []string
	for _, o := range out.Excluded {
		if byReason[o.Reason] == nil {
			reasons = append(reasons, o.Reason)
		}
		byReason[o.Reason] = append(byReason[o.Reason], o.Name)
	}
	for _, r := range reasons {
		fmt.Fprintf(&b, "- %s: %s\n", r, bounded(byReason[r], namesShown))
	}
	for _, d := range out.Deliveries {
		fmt.Fprintf(&b, "delivered at seq %d into prompt %d, request %d: %s via %s (%s hook, %s), %d bytes: %s\n",
			d.Seq, d.Prompt, d.Request, d.Agent, d.Channel, d.Hook, d.Form, d.Bytes, strings.Join(d.Rules, ", "))
	}
	for _, list := range slices.Sorted(maps.Keys(out.Omitted)) {
		fmt.Fprintf(&b, "(%d more left out of %s)\n", out.Omitted[list], list)
	}
	return b.String()
}
