package web

import (
	"context"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"sort"
	"sync"

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
// each task's audit, or from its rows alone (session.AuditRequests) when the audit cannot be
// read. With a
// cache, a task whose log has not grown since it was last read is not read again.
func Rules(ctx context.Context, db store.Store, cache *Cache) ([]Rule, error) {
	tasks, err := cache.tasks(ctx, db)
	if err != nil {
		return nil, err
	}
	// A task's audit holds every rule's outcome and delivery at every request: the counts are
	// taken from its rows (see auditTask).
	cache.audits(ctx, db, tasks, nil)
	byID := map[string]*Rule{}
	for _, t := range tasks {
		tr := t.uses
		if tr == nil {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			return nil, fmt.Errorf("task %s: %s", t.ID, t.AuditFailed)
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
			u := *tr.uses[id] // the task's counts are kept by the cache: a copy
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
	uses map[string]*RuleUse
	meta map[string]Rule
}

// countRules counts each rule's outcomes in an audit's rows: every request's rules, each in the
// prompt (and delivered for that request or not) or excluded for its reason. A rule's name and
// path are those of its first outcome.
func countRules(rows []session.AuditRequest) taskRuleUses {
	out := taskRuleUses{uses: map[string]*RuleUse{}, meta: map[string]Rule{}}
	for _, row := range rows {
		at := session.Position{Prompt: row.Prompt, Request: row.Request}
		for _, e := range row.Rules {
			u := out.uses[e.ID]
			if u == nil {
				out.meta[e.ID] = Rule{ID: termsafe.Escape(e.ID), Name: termsafe.Escape(e.Rule), Path: termsafe.Escape(e.Path)}
				u = &RuleUse{}
				out.uses[e.ID] = u
			}
			u.Requests++
			switch {
			case e.Decision == session.AuditApplies:
				u.Applied++
				if u.First == (session.Position{}) {
					u.First = at
				}
				u.Last = at
				if e.Delivered {
					u.Delivered++
				}
			case e.Reason == "shadowed":
				u.Shadowed++
			case e.Reason == "toggled_off":
				u.Off++
			default:
				u.Excluded++
			}
		}
	}
	return out
}

// RenderRules writes the rules page: every rule with its counts, or, with one (only), that
// rule's tasks.
func RenderRules(w io.Writer, rules []Rule, one bool) error {
	return rulesPage().Execute(w, struct {
		Rules []Rule
		One   bool
	}{rules, one})
}
