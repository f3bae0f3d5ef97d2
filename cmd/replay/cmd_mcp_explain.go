package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

type mcpExplainIn struct {
	Turn int    `json:"turn" jsonschema:"the turn to explain: 1 is the first prompt"`
	Rule string `json:"rule,omitempty" jsonschema:"explain only this rule, by name or id"`
	Task string `json:"task,omitempty" jsonschema:"a task id or unique prefix (default: the current task)"`
}

// mcpEvidence is a context path with the events that put it there.
type mcpEvidence struct {
	Path     string   `json:"path"`
	Root     string   `json:"root,omitempty"`
	Evidence []string `json:"evidence" jsonschema:"the events that put the path into the context: kind, seq and turn"`
}

// mcpOutcome is a recorded rule outcome, its matched paths with their evidence.
type mcpOutcome struct {
	Name       string        `json:"name"`
	ID         string        `json:"id"`
	Category   string        `json:"category"`
	Reason     string        `json:"reason"`
	Detail     string        `json:"detail,omitempty"`
	Matched    []mcpEvidence `json:"matched,omitempty" jsonschema:"the paths the rule's patterns matched, with their evidence"`
	Patterns   []string      `json:"patterns,omitempty" jsonschema:"the patterns that matched, in the order of matched"`
	ShadowedBy string        `json:"shadowed_by,omitempty"`
}

type mcpExplainOut struct {
	Task     string         `json:"task"`
	Turn     int            `json:"turn"`
	Seq      uint64         `json:"seq" jsonschema:"the decision event's sequence number"`
	Engine   string         `json:"engine"`
	Context  []mcpEvidence  `json:"context" jsonschema:"the candidate paths of the decision"`
	Included []mcpOutcome   `json:"included"`
	Excluded []mcpOutcome   `json:"excluded"`
	Omitted  map[string]int `json:"omitted,omitempty" jsonschema:"how many entries each list left out to bound the answer, by list; name a rule in rule to see it"`
}

func (s *mcpServer) explain(ctx context.Context, _ *mcp.CallToolRequest, in mcpExplainIn) (*mcp.CallToolResult, mcpExplainOut, error) {
	var out mcpExplainOut
	var text string
	err := s.withDB(func(db store.Store) error {
		task, err := s.taskFor(db, in.Task)
		if err != nil {
			return err
		}
		rec, err := session.DecisionAt(ctx, db, task, in.Turn)
		if errors.Is(err, session.ErrNoDecision) {
			return fmt.Errorf("task %s has no decision at turn %d; %s", task, in.Turn, mcpTurnsOf(ctx, db, task))
		} else if err != nil {
			return err
		}
		out = mcpExplainAnswer(task, rec)
		if in.Rule == "" {
			text = mcpExplainText(out)
			return nil
		}
		x, err := session.Explain(ctx, db, task, in.Turn, in.Rule)
		if errors.Is(err, session.ErrNoRule) {
			return fmt.Errorf("turn %d of task %s decided about no rule %q; the rules are: %s", in.Turn, task, in.Rule,
				mcpBounded(mcpOutcomeNames(rec.Decision), mcpNamesShown))
		} else if err != nil {
			return err
		}
		out.Included, out.Excluded, out.Omitted = []mcpOutcome{}, []mcpOutcome{}, nil
		o := mcpOutcomeOf(x.Rule, rec.Decision.Context)
		if x.Included {
			out.Included = append(out.Included, o)
		} else {
			out.Excluded = append(out.Excluded, o)
		}
		text = x.String()
		return nil
	})
	if err != nil {
		return nil, out, err
	}
	return mcpTextResult(text), out, nil
}

// mcpExplainAnswer is a recorded decision as explain answers it, the excluded rules mcpBounded.
func mcpExplainAnswer(task uuid.UUID, rec session.Recorded) mcpExplainOut {
	d := rec.Decision
	out := mcpExplainOut{Task: task.String(), Turn: d.Turn, Seq: rec.Seq, Engine: d.Engine,
		Context: []mcpEvidence{}, Included: []mcpOutcome{}, Excluded: []mcpOutcome{}}
	for _, p := range d.Context {
		out.Context = mcpKeep(out.Context, mcpEvidenceOf(p.Path, p.Root, p.Sources), &out.Omitted, "context")
	}
	for _, o := range d.Included {
		out.Included = mcpKeep(out.Included, mcpOutcomeOf(o, d.Context), &out.Omitted, "included")
	}
	for _, o := range d.Excluded {
		out.Excluded = mcpKeep(out.Excluded, mcpOutcomeOf(o, d.Context), &out.Omitted, "excluded")
	}
	return out
}

func mcpEvidenceOf(path, root string, sources []events.Source) mcpEvidence {
	e := mcpEvidence{Path: path, Root: root, Evidence: make([]string, len(sources))}
	for i, src := range sources {
		e.Evidence[i] = session.SourceString(src)
	}
	return e
}

func mcpOutcomeOf(o events.RuleOutcome, context []events.ContextPath) mcpOutcome {
	out := mcpOutcome{Name: o.Name, ID: o.ID, Category: o.Category, Reason: o.Reason, Detail: o.Detail, ShadowedBy: o.ShadowedBy}
	for _, m := range o.Matches {
		if m.Path == "" {
			continue
		}
		out.Matched = append(out.Matched, mcpEvidenceOf(m.Path, m.Root, events.SourcesOf(context, m.Root, m.Path)))
		out.Patterns = append(out.Patterns, m.Pattern)
	}
	return out
}

func mcpOutcomeNames(d events.Decision) []string {
	var names []string
	for _, o := range d.Included {
		names = append(names, o.Name)
	}
	for _, o := range d.Excluded {
		names = append(names, o.Name)
	}
	return names
}

// mcpTurnsOf says which turns of a task have a decision.
func mcpTurnsOf(ctx context.Context, db store.Store, task uuid.UUID) string {
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
	return "it has decisions at turns " + mcpBounded(names, mcpNamesShown)
}

// mcpExplainText is a decision in a few lines: the context, each included rule with why, and the
// excluded rules by reason.
func mcpExplainText(out mcpExplainOut) string {
	var b strings.Builder
	fmt.Fprintf(&b, "turn %d of task %s (decision at seq %d): %d rules included, %d excluded\n",
		out.Turn, out.Task, out.Seq, len(out.Included)+out.Omitted["included"], len(out.Excluded)+out.Omitted["excluded"])
	paths := make([]string, len(out.Context))
	for i, p := range out.Context {
		paths[i] = p.Path
	}
	fmt.Fprintf(&b, "context: %s\n", mcpBounded(paths, mcpNamesShown))
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
		fmt.Fprintf(&b, "- %s: %s\n", r, mcpBounded(byReason[r], mcpNamesShown))
	}
	for _, list := range slices.Sorted(maps.Keys(out.Omitted)) {
		fmt.Fprintf(&b, "(%d more left out of %s)\n", out.Omitted[list], list)
	}
	return b.String()
}
