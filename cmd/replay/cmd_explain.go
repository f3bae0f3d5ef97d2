package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// explainJSON is the contract scripts rely on: {"task", "turn", "prompt", "request", "context",
// "included", "excluded", "deliveries"}, each rule with its reason and what matched.
type explainJSON struct {
	Task        string               `json:"task"`
	Turn        int                  `json:"turn"`
	Prompt      int                  `json:"prompt"`
	Request     int                  `json:"request"`
	Seq         uint64               `json:"seq"`
	Engine      string               `json:"engine"`
	Context     []events.ContextPath `json:"context"`
	Included    []explainOutcome     `json:"included"`
	Excluded    []explainOutcome     `json:"excluded"`
	Diagnostics []events.Diagnostic  `json:"diagnostics,omitempty"`
	// Deliveries are the deliveries of the decision (with --rule: those that carried the rule,
	// up to this decision's own); absent for a task no hook drove.
	Deliveries []explainDelivery `json:"deliveries,omitempty"`
}

// explainDelivery is a delivery event with where it is in the log and the request it was
// delivered into.
type explainDelivery struct {
	Seq     uint64 `json:"seq"`
	Turn    int    `json:"turn"`
	Prompt  int    `json:"prompt"`
	Request int    `json:"request"`
	events.Delivery
}

func deliveriesJSON(ns []session.DeliveryNote) []explainDelivery {
	var out []explainDelivery
	for _, n := range ns {
		out = append(out, explainDelivery{n.Seq, n.Turn, n.Position.Prompt, n.Position.Request, n.Delivery})
	}
	return out
}

// explainOutcome is a recorded rule outcome whose matches carry the evidence for their path,
// which the log keeps once, in the decision's context.
type explainOutcome struct {
	events.RuleOutcome
	Matches []explainMatch `json:"matched,omitempty"`
}

type explainMatch struct {
	events.Match
	Sources []events.Source `json:"sources,omitempty"`
}

func withSources(os []events.RuleOutcome, context []events.ContextPath) []explainOutcome {
	out := make([]explainOutcome, len(os))
	for i, o := range os {
		out[i].RuleOutcome = o
		for _, m := range o.Matches {
			out[i].Matches = append(out[i].Matches, explainMatch{m, events.SourcesOf(context, m.Root, m.Path)})
		}
	}
	return out
}

func cmdExplain(args []string, stdout, stderr io.Writer) int {
	f := newFlags("explain", "[TASK] --prompt N | --turn N [--rule NAME]", stderr).withJSON()
	var at momentFlags
	at.register(f)
	rule := f.String("rule", "", "explain only this rule (name or id)")
	pos, code := f.parseOrExit(args, 0, 1)
	if code >= 0 {
		return code
	}
	if code := at.check("explain", stderr); code >= 0 {
		return code
	}
	db, task, err := f.openTaskOrLatest(pos, "explain", stderr)
	if err != nil {
		return fail(stderr, err)
	}
	defer db.Close()
	ctx := context.Background()
	turn, code := at.resolve(ctx, "explain", db, task, stderr)
	if code >= 0 {
		return code
	}
	// A turn without a decision and a rule the decision does not name are usage errors (exit
	// 2): the question was wrong, no check failed.
	rec, err := session.DecisionAt(ctx, db, task, turn)
	if errors.Is(err, session.ErrNoDecision) {
		fmt.Fprintf(stderr, "replay explain: %s\n", noDecisionAt(ctx, db, task, turn))
		return exitUsage
	} else if err != nil {
		return fail(stderr, err)
	}
	d := rec.Decision
	var dels []session.DeliveryNote
	if *rule != "" {
		x, err := session.Explain(ctx, db, task, turn, *rule)
		if errors.Is(err, session.ErrNoRule) {
			fmt.Fprintf(safeWriter{stderr}, "replay explain: %v\n", err)
			return exitUsage
		} else if err != nil {
			return fail(stderr, err)
		}
		d.Included, d.Excluded, dels = nil, nil, x.Deliveries
		if x.Included {
			d.Included = []events.RuleOutcome{x.Rule}
		} else {
			d.Excluded = []events.RuleOutcome{x.Rule}
		}
		if !f.json {
			fmt.Fprint(safeWriter{stdout}, x)
			return exitOK
		}
	} else if dels, err = rec.Deliveries(ctx, db, task); err != nil {
		return fail(stderr, err)
	}
	if f.json {
		out := explainJSON{Task: task.String(), Turn: d.Turn, Prompt: rec.Position.Prompt, Request: rec.Position.Request, Seq: rec.Seq, Engine: d.Engine, Context: d.Context,
			Included: withSources(d.Included, d.Context), Excluded: withSources(d.Excluded, d.Context),
			Diagnostics: d.Diagnostics, Deliveries: deliveriesJSON(dels)}
		if err := printJSON(stdout, out); err != nil {
			return fail(stderr, err)
		}
		return exitOK
	}
	printDecision(safeWriter{stdout}, rec, dels)
	return exitOK
}

// noDecisionAt says that a task has no decision at a turn, and at which turns it has them.
func noDecisionAt(ctx context.Context, db store.Store, task uuid.UUID, turn int) string {
	msg := fmt.Sprintf("task %s has no decision at turn %d", task, turn)
	ds, err := session.Decisions(ctx, db, task)
	switch {
	case err != nil:
		return msg
	case len(ds) == 0:
		return msg + "; it has no decisions at all"
	case len(ds) == 1:
		return fmt.Sprintf("%s; its one decision is at turn %d", msg, ds[0].Decision.Turn)
	}
	return fmt.Sprintf("%s; its %d decisions are at turns %d to %d", msg, len(ds), ds[0].Decision.Turn, ds[len(ds)-1].Decision.Turn)
}

// printDecision explains a whole decision: the context with its evidence, then every rule (an
// included one with the deliveries of this decision that carried it), then the deliveries.
func printDecision(w io.Writer, rec session.Recorded, dels []session.DeliveryNote) {
	d := rec.Decision
	fmt.Fprintf(w, "%s, turn %d (decision at seq %d, engine %s)\n", rec.Position, d.Turn, rec.Seq, d.Engine)
	if len(d.Context) == 0 {
		fmt.Fprintln(w, "context: no candidate paths")
	} else {
		fmt.Fprintln(w, "context:")
		for _, p := range d.Context {
			fmt.Fprintf(w, "  %s", p.Path)
			for i, s := range p.Sources {
				sep := "  ← "
				if i > 0 {
					sep = "; "
				}
				fmt.Fprintf(w, "%s%s", sep, rec.Requests.Source(s))
			}
			fmt.Fprintln(w)
		}
	}
	for _, o := range d.Included {
		fmt.Fprint(w, session.Explanation{Turn: d.Turn, Position: rec.Position, Seq: rec.Seq, Included: true, Rule: o,
			Context: d.Context, Deliveries: carrying(dels, o.ID), Requests: rec.Requests})
	}
	for _, o := range d.Excluded {
		fmt.Fprint(w, session.Explanation{Turn: d.Turn, Position: rec.Position, Seq: rec.Seq, Rule: o, Requests: rec.Requests})
	}
	for _, dg := range d.Diagnostics {
		loc := dg.File
		if dg.Line > 0 {
			loc = fmt.Sprintf("%s:%d", dg.File, dg.Line)
		}
		fmt.Fprintf(w, "diagnostic: %s: %s\n", loc, dg.Message)
	}
	for _, n := range dels {
		dl := n.Delivery
		names := make([]string, len(dl.Rules))
		for i, r := range dl.Rules {
			names[i] = r.Name
		}
		fmt.Fprintf(w, "delivery at seq %d: %s via %s (%s hook, %s), %s, %d bytes: %s\n",
			n.Seq, dl.Agent, dl.Channel, dl.Hook, dl.Form, plural(len(names), "rule"), dl.Bytes, strings.Join(names, ", "))
	}
}

// carrying keeps the deliveries that carried the rule.
func carrying(dels []session.DeliveryNote, ruleID string) []session.DeliveryNote {
	var out []session.DeliveryNote
	for _, n := range dels {
		for _, r := range n.Delivery.Rules {
			if r.ID == ruleID {
				out = append(out, n)
				break
			}
		}
	}
	return out
}
