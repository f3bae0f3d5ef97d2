package web

import (
	"context"
	_ "embed"
	"html/template"
	"io"
	"net/url"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/audit"
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/internal/termsafe"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

//go:embed list.html.tmpl
var listTemplate string

// listPage is parsed when first rendered, not when a process that never serves a page (a hook)
// starts.
var listPage = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("list").Funcs(template.FuncMap{"choice": newChoiceBox}).Parse(listTemplate))
})

// choiceBox is one filter's control: its name in the query, its label, the value set and the
// values to choose from.
type choiceBox struct {
	Name, Label, Current string
	Choices              []Choice
	// Missing is whether the value set is none of the choices (no task has it).
	Missing bool
}

func newChoiceBox(name, label, current string, choices []Choice) choiceBox {
	b := choiceBox{Name: name, Label: label, Current: current, Choices: choices, Missing: current != ""}
	for _, c := range choices {
		if c.Value == current {
			b.Missing = false
		}
	}
	return b
}

// Task is one line of the list of tasks. Its text comes from the log, escaped (termsafe).
type Task struct {
	ID string
	// Project is the last element of the first workspace root (else of the working directory);
	// Root the whole path.
	Project, Root string
	// Agent is the runtime task_started recorded, with its version; AgentName the runtime's
	// name alone, as the agent filter takes it ("claude-code", "codex").
	Agent, AgentName string
	// Machine and User are where task_started says the task was recorded ("" when it says
	// nothing: a task recorded before they were kept).
	Machine, User string
	// Title is the first prompt, on one line and cut to 80 characters.
	Title string
	// Prompts counts the user messages, Requests the decisions, Delivered the rules hooks
	// delivered (a rule delivered twice counts twice), Events the log's events.
	Prompts, Requests, Delivered int
	Events                       uint64
	// Findings counts the audit's findings about the task (replay audit, from the log alone:
	// the never_applicable check, which lists the workspace, is left to the task's page).
	Findings int
	// AuditFailed says why the audit could not be read, when it could not ("" when it was).
	AuditFailed string
	// AuditPending is whether the audit of the task at this length is still being read (the
	// list page counts it in the background when it would take long).
	AuditPending bool
	// missed counts, by rule id (as the log has it), the requests at which the agent missed
	// the rule while it applied (the audit's missed_by_agent).
	missed map[string]int
	// uses are the rules' counts from the audit's rows (nil until it is read, or when the log
	// could not be read).
	uses *taskRuleUses
	// Last is the time of the last event that has one; Updated it as the page shows it.
	Last    time.Time
	Updated string
}

// titleRunes is how much of the first prompt a task's title keeps.
const titleRunes = 80

// Tasks reads every task of the store, newest first (the last event's time, then the id), with
// its audit's findings.
func Tasks(ctx context.Context, db store.Store) ([]Task, error) {
	var c *Cache
	tasks, err := c.tasks(ctx, db)
	if err != nil {
		return nil, err
	}
	c.audits(ctx, db, tasks, nil)
	return tasks, nil
}

// taskAudit is what the list and the rules pages show of a task's audit, at the log's length
// events.
type taskAudit struct {
	events   uint64
	findings int
	failed   string
	missed   map[string]int
	// uses are the rules' counts for the rules page, nil when the log could not be read.
	uses *taskRuleUses
}

// auditTask reads the audit of a task from its log alone.
func auditTask(ctx context.Context, db store.Store, task uuid.UUID, events uint64) taskAudit {
	a := taskAudit{events: events}
	rep, err := session.Audit(ctx, db, task, session.AuditOptions{})
	if err != nil {
		a.failed = termsafe.Escape(err.Error())
		// The rules' counts need the log alone: a store missing a rule file's contents fails
		// the audit's findings, not its rows.
		if rows, err := session.AuditRequests(ctx, db, task); err == nil {
			uses := countRules(rows)
			a.uses = &uses
		}
		return a
	}
	a.findings = len(rep.Findings)
	for _, f := range rep.Findings {
		if f.Kind == audit.MissedByAgent {
			if a.missed == nil {
				a.missed = map[string]int{}
			}
			a.missed[f.ID] += f.Requests
		}
	}
	uses := countRules(rep.Requests)
	a.uses = &uses
	return a
}

func (a taskAudit) fill(t *Task) {
	t.Findings, t.AuditFailed, t.missed, t.uses, t.AuditPending = a.findings, a.failed, a.missed, a.uses, false
}

func readTask(ctx context.Context, db store.Store, info store.TaskInfo) (Task, error) {
	t := Task{ID: info.Task.String(), Events: info.Events}
	for ev, err := range db.Events(ctx, info.Task, 1) {
		if err != nil {
			return t, err
		}
		if !ev.Time.IsZero() {
			t.Last = ev.Time
		}
		switch ev.Type {
		case events.TypeDecision:
			t.Requests++
		case events.TypeTaskStarted, events.TypeUserMessage, events.TypeDelivery:
			p, err := ev.Payload()
			if err != nil {
				return t, err
			}
			switch p := p.(type) {
			case *events.TaskStarted:
				t.Agent = strings.TrimSpace(p.Runtime.Name + " " + p.Runtime.Version)
				t.AgentName, t.Machine, t.User = p.Runtime.Name, p.Machine, p.User
				t.Root = p.Cwd
				if len(p.Roots) > 0 {
					t.Root = p.Roots[0]
				}
				if t.Root != "" {
					t.Project = filepath.Base(t.Root)
				}
			case *events.UserMessage:
				t.Prompts++
				if t.Title == "" {
					t.Title = cut(strings.Join(strings.Fields(p.Text), " "), titleRunes)
				}
			case *events.Delivery:
				t.Delivered += len(p.Rules)
			}
		}
	}
	for _, f := range []*string{&t.Project, &t.Root, &t.Agent, &t.AgentName, &t.Machine, &t.User, &t.Title} {
		*f = termsafe.Escape(*f)
	}
	if !t.Last.IsZero() {
		t.Updated = t.Last.UTC().Format("2006-01-02 15:04:05")
	}
	return t, nil
}

// Filter narrows the list of tasks: each field set keeps the tasks that have that value
// (Agent is the runtime's name alone, "codex"), and Query the tasks whose title, project, root,
// agent or id holds it, ignoring case. It is the list's URL query:
// /?agent=codex&machine=build-1&q=banner.
type Filter struct {
	Project, Agent, Machine, User, Query string
}

// FilterOf reads a filter from a URL query (project, agent, machine, user, q). Its values are
// escaped as the tasks' text is (termsafe): they are compared with it and shown on the page.
func FilterOf(q url.Values) Filter {
	return Filter{Project: termsafe.Escape(q.Get("project")), Agent: termsafe.Escape(q.Get("agent")),
		Machine: termsafe.Escape(q.Get("machine")), User: termsafe.Escape(q.Get("user")),
		Query: termsafe.Escape(strings.TrimSpace(q.Get("q")))}
}

// IsZero reports whether the filter keeps every task.
func (f Filter) IsZero() bool { return f == Filter{} }

// Keep reports whether the filter keeps t.
func (f Filter) Keep(t Task) bool {
	for _, c := range []struct{ want, have string }{
		{f.Project, t.Project}, {f.Agent, t.AgentName}, {f.Machine, t.Machine}, {f.User, t.User},
	} {
		if c.want != "" && c.want != c.have {
			return false
		}
	}
	if f.Query == "" {
		return true
	}
	q := strings.ToLower(f.Query)
	for _, s := range []string{t.Title, t.Project, t.Root, t.Agent, t.ID, t.Machine, t.User} {
		if strings.Contains(strings.ToLower(s), q) {
			return true
		}
	}
	return false
}

// Choice is a value a filter can take, with how many tasks have it.
type Choice struct {
	Value string
	Tasks int
}

// List is the list page: the tasks the filter kept, out of All, and the values each filter can
// take (over every task, sorted).
type List struct {
	Filter                            Filter
	Tasks                             []Task
	All                               int
	Projects, Agents, Machines, Users []Choice
	// Findings is whether any task kept has an audit finding (the column shows then), Pending
	// how many tasks kept have their audit still being read.
	Findings bool
	Pending  int
}

// NewList filters tasks and gathers the choices of the filters.
func NewList(tasks []Task, f Filter) List {
	l := List{Filter: f, All: len(tasks)}
	counts := [4]map[string]int{{}, {}, {}, {}}
	for _, t := range tasks {
		for i, v := range []string{t.Project, t.AgentName, t.Machine, t.User} {
			if v != "" {
				counts[i][v]++
			}
		}
		if f.Keep(t) {
			l.Tasks = append(l.Tasks, t)
			if t.AuditPending {
				l.Pending++
			}
			if t.Findings > 0 || t.AuditPending {
				l.Findings = true
			}
		}
	}
	choices := func(m map[string]int) []Choice {
		out := make([]Choice, 0, len(m))
		for v, n := range m {
			out = append(out, Choice{v, n})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Value < out[j].Value })
		return out
	}
	l.Projects, l.Agents, l.Machines, l.Users = choices(counts[0]), choices(counts[1]), choices(counts[2]), choices(counts[3])
	return l
}

// RenderList writes the list page.
func RenderList(w io.Writer, l List) error { return listPage().Execute(w, l) }

// cut shortens s to max runes, the last one an ellipsis when it was longer.
func cut(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}
