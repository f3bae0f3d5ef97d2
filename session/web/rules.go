package web

import (
	"context"
	_ "embed"
	"html/template"
	"io"
	"sort"
	"sync"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/internal/termsafe"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

//go:embed rules.html.tmpl
var rulesTemplate string

// rulesPage is parsed when first rendered, as listPage is.
var rulesPage = sync.OnceValue(func() *template.Template { return template.Must(template.New("rules").Parse(rulesTemplate)) })

// Counts are how a rule fared over requests: in the prompt (Applied), delivered by a hook,
// shadowed by another rule, toggled off, or excluded for another reason; and Missed, at how
// many requests it applied while the agent had not loaded it (the audit's missed_by_agent).
type Counts struct {
	Requests, Applied, Delivered, Shadowed, Off, Excluded, Missed int
}

func (c *Counts) add(o Counts) {
	c.Requests += o.Requests
	c.Applied += o.Applied
	c.Delivered += o.Delivered
	c.Shadowed += o.Shadowed
	c.Off += o.Off
	c.Excluded += o.Excluded
	c.Missed += o.Missed
}

// RuleUse is one task's use of a rule: its counts, and the first and last request it was in
// the prompt at.
type RuleUse struct {
	Task Task
	Counts
	First, Last session.Position
}

// Rule is one rule over the tasks of the store: its counts in all, and task by task (newest
// first). Its text comes from the log, escaped (termsafe).
type Rule struct {
	ID, Name, Path string
	Counts
	Uses []RuleUse
}

// Rules gathers each rule's outcomes and deliveries over every task, sorted by id: counted from
// each task's audit, or from its decisions and deliveries when the audit cannot be read. With a
// cache, a task whose log has not grown since it was last read is not read again.
func Rules(ctx context.Context, db store.Store, cache *Cache) ([]Rule, error) {
	tasks, err := cache.tasks(ctx, db)
	if err != nil {
		return nil, err
	}
	// A task's audit holds every rule's outcome and delivery at every request: the counts are
	// taken from it, and the log is read again only for a task whose audit could not be read.
	cache.audits(ctx, db, tasks, nil)
	byID := map[string]*Rule{}
	for _, t := range tasks {
		tr := t.uses
		if tr == nil {
			counted, err := cache.rules(ctx, db, t)
			if err != nil {
				return nil, err
			}
			tr = &counted
		}
		ids := make([]string, 0, len(tr.uses))
		for id := range tr.uses {
			ids = append(ids, id)
		}
		sort.Strings(ids)
		for _, id := range ids {
			r := byID[id]
			if r == nil {
				m := tr.meta[id]
				r = &m
				byID[id] = r
			}
			u := tr.uses[id]
			u.Task = t
			u.Missed = t.missed[id] // the audit names rules by their id as the log has it
			r.Uses = append(r.Uses, u)
			r.Counts.add(u.Counts)
		}
	}
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := make([]Rule, 0, len(ids))
	for _, id := range ids {
		out = append(out, *byID[id])
	}
	return out, nil
}

// taskRuleUses are one task's rules: their use, and their id, name and path, by id.
type taskRuleUses struct {
	uses map[string]RuleUse
	meta map[string]Rule
}

// ruleTally gathers one task's rule uses, one rule's outcome at one request at a time.
type ruleTally struct {
	out  taskRuleUses
	uses map[string]*RuleUse
}

func newRuleTally() *ruleTally {
	return &ruleTally{out: taskRuleUses{uses: map[string]RuleUse{}, meta: map[string]Rule{}}, uses: map[string]*RuleUse{}}
}

// add counts a rule's outcome o at the request at: in the prompt (and then whether a delivery
// for that decision carried it), or excluded for its reason. The rule's name and path are those
// of its first outcome.
func (t *ruleTally) add(o events.RuleOutcome, included, delivered bool, at session.Position) {
	u := t.uses[o.ID]
	if u == nil {
		t.out.meta[o.ID] = Rule{ID: termsafe.Escape(o.ID), Name: termsafe.Escape(o.Name), Path: termsafe.Escape(o.Path)}
		u = &RuleUse{}
		t.uses[o.ID] = u
	}
	u.Requests++
	if included {
		u.Applied++
		if u.First == (session.Position{}) {
			u.First = at
		}
		u.Last = at
		if delivered {
			u.Delivered++
		}
		return
	}
	switch o.Reason {
	case "shadowed":
		u.Shadowed++
	case "toggled_off":
		u.Off++
	default:
		u.Excluded++
	}
}

func (t *ruleTally) result() taskRuleUses {
	for id, u := range t.uses {
		t.out.uses[id] = *u
	}
	return t.out
}

// auditRules counts each rule's outcomes in a task's audit: every request's rules, each in the
// prompt or excluded, and delivered for that request or not.
func auditRules(rep *session.AuditReport) taskRuleUses {
	t := newRuleTally()
	for _, row := range rep.Requests {
		at := session.Position{Prompt: row.Prompt, Request: row.Request}
		for _, e := range row.Rules {
			o := events.RuleOutcome{ID: e.ID, Name: e.Rule, Path: e.Path, Reason: e.Reason}
			t.add(o, e.Decision == session.AuditApplies, e.Delivered, at)
		}
	}
	return t.result()
}

// taskRules counts each rule's outcomes in one task's decisions, read from its log: for a task
// whose audit could not be read (auditRules counts the others).
func taskRules(ctx context.Context, db store.Store, t Task) (taskRuleUses, error) {
	id, err := parseTask(t.ID)
	if err != nil {
		return taskRuleUses{}, err
	}
	// delivered holds the rules each decision's deliveries carried: decision seq → rule id.
	delivered := map[uint64]map[string]bool{}
	for ev, err := range db.Events(ctx, id, 1) {
		if err != nil {
			return taskRuleUses{}, err
		}
		if ev.Type != events.TypeDelivery {
			continue
		}
		p, err := ev.Payload()
		if err != nil {
			return taskRuleUses{}, err
		}
		d := p.(*events.Delivery)
		if delivered[d.Decision] == nil {
			delivered[d.Decision] = map[string]bool{}
		}
		for _, r := range d.Rules {
			delivered[d.Decision][r.ID] = true
		}
	}
	ds, err := session.DecisionOutcomes(ctx, db, id)
	if err != nil {
		return taskRuleUses{}, err
	}
	tally := newRuleTally()
	for _, rec := range ds {
		// In the audit's order, so that a rule's name and path are taken from the same outcome.
		for _, o := range session.OutcomesByPath(&rec.Decision) {
			tally.add(o.RuleOutcome, o.Included, delivered[rec.Seq][o.ID], rec.Position)
		}
	}
	return tally.result(), nil
}

// RenderRules writes the rules page: every rule with its counts, or, with one (only), that
// rule's tasks.
func RenderRules(w io.Writer, rules []Rule, one bool) error {
	return rulesPage().Execute(w, struct {
		Rules []Rule
		One   bool
	}{rules, one})
}
