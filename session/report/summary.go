package report

import (
	"context"
	"fmt"
	"strings"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// DecisionSummaries describes every decision of a task on one line, by the decision's seq: what
// was in the prompt at that turn, whatever the log's encoding of it (a decision may be stored as
// the changes since the one before), with what changed since the turn before marked.
func DecisionSummaries(ctx context.Context, db store.Store, task uuid.UUID) (map[uint64]string, error) {
	ds, err := session.Decisions(ctx, db, task)
	if err != nil {
		return nil, err
	}
	return summaries(ds), nil
}

// summaries is DecisionSummaries of the decisions read.
func summaries(ds []session.Recorded) map[uint64]string {
	out := make(map[uint64]string, len(ds))
	var prev *events.Decision
	for i := range ds {
		d := &ds[i].Decision
		out[ds[i].Seq] = summarizeDecision(ds[i].Position, d, prev)
		prev = d
	}
	return out
}

// summarizeDecision is one decision's whole outcome: the rules in the prompt, "(new)" after
// those that were not in it at the decision before (prev, nil for the first), the rules that
// left it, how many others were excluded, and the candidate paths with how many are new and how
// many left.
//
//	prompt 1, request 3: in the prompt: backend (new), general · left it: frontend · 1 excluded · 2 paths (1 new, 1 gone)
func summarizeDecision(at session.Position, d, prev *events.Decision) string {
	wasIn := map[string]bool{}
	hadPath := map[string]bool{}
	if prev != nil {
		for _, o := range prev.Included {
			wasIn[o.ID] = true
		}
		for _, p := range prev.Context {
			hadPath[p.Root+"\x00"+p.Path] = true
		}
	}
	in := make([]string, 0, len(d.Included))
	isIn := map[string]bool{}
	for _, o := range d.Included {
		isIn[o.ID] = true
		name := o.Name
		if prev != nil && !wasIn[o.ID] {
			name += " (new)"
		}
		in = append(in, name)
	}
	var left []string
	if prev != nil {
		for _, o := range prev.Included {
			if !isIn[o.ID] {
				left = append(left, o.Name)
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: in the prompt: ", at)
	if len(in) == 0 {
		b.WriteString("no rule")
	}
	b.WriteString(strings.Join(in, ", "))
	if len(left) > 0 {
		b.WriteString(" · left it: " + strings.Join(left, ", "))
	}
	fmt.Fprintf(&b, " · %d excluded · %s", len(d.Excluded), plural(len(d.Context), "path"))
	if prev != nil {
		added, now := 0, map[string]bool{}
		for _, p := range d.Context {
			k := p.Root + "\x00" + p.Path
			now[k] = true
			if !hadPath[k] {
				added++
			}
		}
		gone := 0
		for _, p := range prev.Context {
			if !now[p.Root+"\x00"+p.Path] {
				gone++
			}
		}
		if added > 0 || gone > 0 {
			fmt.Fprintf(&b, " (%d new, %d gone)", added, gone)
		}
	}
	return b.String()
}

// EventSummary is the one-line summary log and report show for an event: a decision's from
// DecisionSummaries, a rules snapshot's count of files, any other from events.Summary.
func EventSummary(ev events.Event, decisions map[uint64]string) string {
	switch ev.Type {
	case events.TypeDecision:
		if s, ok := decisions[ev.Seq]; ok {
			return s
		}
	case events.TypeRulesSnapshot:
		if p, err := ev.Payload(); err == nil {
			return plural(len(p.(*events.RulesSnapshot).Files), "rule file")
		}
	}
	return events.Summary(ev)
}
