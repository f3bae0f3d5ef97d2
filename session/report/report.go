// Package report builds a task's report page from its log (the rules by request, the evidence
// of each cell, the audit, the timeline) and renders it as one HTML page with its style and
// script inside. Text from the log is untrusted: control characters are escaped (termsafe) and
// the template escapes the HTML.
package report

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"io"
	"sort"
	"sync"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/audit"
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/internal/termsafe"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

//go:embed report.html.tmpl
var pageTemplate string

// Cell is one rule at one turn.
type Cell struct {
	State    string // "in", "out", "shadowed", "off", "none"
	Label    string
	Reason   string
	Detail   string
	Matches  []Match
	Category string
	// Delivered are the deliveries of this turn's decision that carried the rule: an included
	// rule a hook put in front of the model at this turn.
	Delivered []Delivery
	// AgentLoaded and Held are the audit's columns ("yes", "no", "?"); Findings its findings.
	AgentLoaded, Held string
	Findings          []string
}

// Delivery is a delivery event as the evidence panel shows it.
type Delivery struct {
	Seq                        uint64
	Agent, Hook, Channel, Form string
	Bytes, Rules               int
}

// Match is a match with the evidence for its path, looked up in the decision's context.
type Match struct {
	events.Match
	Sources []events.Source
}

// Row is one rule's line of the grid: a cell per request.
type Row struct {
	ID, Name, Category, Path string
	Cells                    []Cell
	Turns                    int
}

// Turn is one request of the task, a column of the grid: its decision and the context it saw.
type Turn struct {
	Turn     int
	Position session.Position
	Seq      uint64
	Context  []events.ContextPath
	// Changed is whether any rule's cell differs from the request before (the first always does).
	Changed bool
}

// Prompt is one prompt of the task: the grid's columns it spans and the timeline's events
// that belong to it.
type Prompt struct {
	Prompt      int
	Title       string // its user message, on one line and cut ("" for prompt 0)
	First, Span int    // its requests: the grid's columns First to First+Span-1
	Changed     int    // how many of them changed a rule
	Events      []Event
}

// Event is one event of the timeline.
type Event struct {
	Seq      uint64
	Turn     int
	Position session.Position // the request the event belongs to
	Type     string
	Time     string
	Summary  string
}

// Page is what the report page shows of one task; Build makes it, Render writes it.
type Page struct {
	Task   string
	Events int
	Turns  []Turn
	// Prompts group the grid's requests and the timeline's events by the prompt they belong to.
	Prompts     []Prompt
	Rows        []Row
	Diagnostics []events.Diagnostic
	Timeline    []Event
	// Delivered counts the cells whose rule a hook delivered at that turn.
	Delivered int
	// requests names the requests of the evidence.
	requests *session.Requests
	// Findings and AgentLoads are the audit's (replay audit); Audit its rows, request by
	// request.
	Findings   []audit.Finding
	AgentLoads string
	Audit      []AuditRequest
	// Parts, when set, is the address the page fetches a request's parts from (each cell's
	// evidence, the request's context and its audit table: RenderPart), "&t=" and the
	// request's index appended; the page then holds only the audit table shown first. Empty,
	// the page holds everything and works as a file.
	Parts string
	// TimelineFrom is the first event the timeline shows (0 or 1: all); a page with Parts set
	// fetches the others (RenderTimeline) when asked.
	TimelineFrom uint64
}

// UserPrompts counts the prompts that are user messages (prompt 0 holds what came before the
// first one).
func (d Page) UserPrompts() int {
	n := 0
	for _, p := range d.Prompts {
		if p.Prompt > 0 {
			n++
		}
	}
	return n
}

// sourceName describes a piece of evidence with its request.
func (d Page) sourceName(s events.Source) string { return d.requests.Source(s) }

// Build reads the task's log and gathers its report page. The audit's never_applicable check
// lists the files of each recorded workspace root that is a folder on this machine.
func Build(ctx context.Context, db store.Store, task uuid.UUID) (Page, error) {
	data := Page{Task: task.String()}
	ds, err := session.Decisions(ctx, db, task)
	if err != nil {
		return data, err
	}
	summaries := summaries(ds)
	// dels holds each decision's deliveries by the rules they carried: decision seq → rule id.
	dels := map[uint64]map[string][]Delivery{}
	var reqs session.Requests
	for ev, err := range db.Events(ctx, task, 1) {
		if err != nil {
			return data, err
		}
		if _, ok := summaries[ev.Seq]; ev.Type == events.TypeDecision && !ok {
			// Appended since the decisions were read: the page ends before it, and a live
			// page, its log longer than the page, is brought up to date at once.
			break
		}
		data.Events++
		if ev.Type == events.TypeDelivery {
			if err := addDelivery(dels, ev); err != nil {
				return data, err
			}
		}
		t := ""
		if !ev.Time.IsZero() {
			t = ev.Time.Format("2006-01-02 15:04:05")
		}
		data.Timeline = append(data.Timeline, Event{Seq: ev.Seq, Turn: ev.Turn, Position: reqs.Add(ev), Type: string(ev.Type),
			Time: t, Summary: termsafe.Escape(EventSummary(ev, summaries))})
	}
	data.requests = &reqs
	for i := range ds {
		escapeDecision(&ds[i].Decision)
	}
	rows := map[string]*Row{}
	seenDiag := map[string]bool{}
	for i, rec := range ds {
		d := rec.Decision
		data.Turns = append(data.Turns, Turn{Turn: d.Turn, Position: rec.Position, Seq: rec.Seq, Context: d.Context})
		add := func(o events.RuleOutcome, in bool) {
			r := rows[o.ID]
			if r == nil {
				r = &Row{ID: o.ID, Name: o.Name, Category: o.Category, Path: o.Path, Cells: make([]Cell, len(ds))}
				for j := range r.Cells {
					r.Cells[j] = Cell{State: "none", Label: "·", Reason: "not discovered at this turn"}
				}
				rows[o.ID] = r
			}
			c := Cell{State: "out", Label: "–", Reason: o.Reason, Detail: o.Detail, Category: o.Category}
			for _, m := range o.Matches {
				c.Matches = append(c.Matches, Match{m, events.SourcesOf(d.Context, m.Root, m.Path)})
			}
			switch {
			case in:
				c.State, c.Label = "in", "●"
				r.Turns++
				if c.Delivered = dels[rec.Seq][o.ID]; len(c.Delivered) > 0 {
					c.Label = "◆"
					data.Delivered++
				}
			case o.Reason == "shadowed":
				c.State, c.Label = "shadowed", "◌"
			case o.Reason == "toggled_off":
				c.State, c.Label = "off", "○"
			}
			r.Cells[i] = c
		}
		for _, o := range d.Included {
			add(o, true)
		}
		for _, o := range d.Excluded {
			add(o, false)
		}
		for _, dg := range d.Diagnostics {
			key := dg.File + "\x00" + fmt.Sprint(dg.Line) + "\x00" + dg.Message
			if !seenDiag[key] {
				seenDiag[key] = true
				data.Diagnostics = append(data.Diagnostics, dg)
			}
		}
	}
	if err := addAudit(ctx, db, task, &data, rows); err != nil {
		return data, err
	}
	ids := make([]string, 0, len(rows))
	for id := range rows {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		data.Rows = append(data.Rows, *rows[id])
	}
	groupPrompts(&data)
	return data, nil
}

// groupPrompts marks the requests where a rule changed and groups the requests and the
// timeline's events by prompt, in the order they came.
func groupPrompts(data *Page) {
	for t := range data.Turns {
		changed := t == 0
		for _, r := range data.Rows {
			if changed {
				break
			}
			a, b := r.Cells[t-1], r.Cells[t]
			changed = a.State != b.State || a.Label != b.Label
		}
		data.Turns[t].Changed = changed
	}
	at := map[int]int{} // prompt → index in data.Prompts
	group := func(p int) *Prompt {
		i, ok := at[p]
		if !ok {
			i = len(data.Prompts)
			at[p] = i
			data.Prompts = append(data.Prompts, Prompt{Prompt: p, First: -1})
		}
		return &data.Prompts[i]
	}
	for t, turn := range data.Turns {
		g := group(turn.Position.Prompt)
		if g.First < 0 {
			g.First = t
		}
		g.Span++
		if turn.Changed {
			g.Changed++
		}
	}
	for _, ev := range data.Timeline {
		g := group(ev.Position.Prompt)
		if ev.Type == string(events.TypeUserMessage) && g.Title == "" {
			g.Title = cut(ev.Summary, titleRunes)
		}
		g.Events = append(g.Events, ev)
	}
	sort.SliceStable(data.Prompts, func(i, j int) bool { return data.Prompts[i].Prompt < data.Prompts[j].Prompt })
}

// addDelivery files the delivery event ev under its decision and each rule it carried.
func addDelivery(dels map[uint64]map[string][]Delivery, ev events.Event) error {
	p, err := ev.Payload()
	if err != nil {
		return err
	}
	d := p.(*events.Delivery)
	rd := Delivery{Seq: ev.Seq, Agent: termsafe.Escape(d.Agent), Hook: termsafe.Escape(d.Hook),
		Channel: termsafe.Escape(d.Channel), Form: termsafe.Escape(d.Form), Bytes: d.Bytes, Rules: len(d.Rules)}
	byRule := dels[d.Decision]
	if byRule == nil {
		byRule = map[string][]Delivery{}
		dels[d.Decision] = byRule
	}
	for _, r := range d.Rules {
		// The decision's outcomes are escaped before they are looked up here.
		id := termsafe.Escape(r.ID)
		byRule[id] = append(byRule[id], rd)
	}
	return nil
}

// escapeDecision escapes the control characters in the text of a decision the report shows
// (see termsafe.Escape): the page shows them as text too.
func escapeDecision(d *events.Decision) {
	ctx := make([]events.ContextPath, len(d.Context))
	for i, p := range d.Context {
		p.Path, p.Root = termsafe.Escape(p.Path), termsafe.Escape(p.Root)
		p.Sources = escapeSources(p.Sources)
		ctx[i] = p
	}
	d.Context = ctx
	for _, os := range []*[]events.RuleOutcome{&d.Included, &d.Excluded} {
		out := make([]events.RuleOutcome, len(*os))
		for i, o := range *os {
			o.ID, o.Name, o.Path, o.Detail = termsafe.Escape(o.ID), termsafe.Escape(o.Name), termsafe.Escape(o.Path), termsafe.Escape(o.Detail)
			ms := make([]events.Match, len(o.Matches))
			for j, m := range o.Matches {
				m.Pattern, m.Path, m.Root = termsafe.Escape(m.Pattern), termsafe.Escape(m.Path), termsafe.Escape(m.Root)
				ms[j] = m
			}
			o.Matches = ms
			out[i] = o
		}
		*os = out
	}
	dgs := make([]events.Diagnostic, len(d.Diagnostics))
	for i, dg := range d.Diagnostics {
		dg.File, dg.Message = termsafe.Escape(dg.File), termsafe.Escape(dg.Message)
		dgs[i] = dg
	}
	d.Diagnostics = dgs
}

func escapeSources(srcs []events.Source) []events.Source {
	out := make([]events.Source, len(srcs))
	for i, s := range srcs {
		s.Detail = termsafe.Escape(s.Detail)
		out[i] = s
	}
	return out
}

// cellArgs are what the template of a cell's evidence shows: the rule's row R, the request T.
type cellArgs struct {
	R, T     int
	Row      Row
	Cell     Cell
	Position session.Position
}

// turnArgs are what the template of a request's context shows.
type turnArgs struct {
	T    int
	Turn Turn
}

// parsedPage is the page's template, parsed once with the functions of an empty page; it is
// never executed itself, only cloned (see Page.template).
var parsedPage = sync.OnceValues(func() (*template.Template, error) {
	return template.New("report").Funcs(Page{}.funcs()).Parse(pageTemplate)
})

// template is the page's template with the functions that read d: a clone of the one parsed
// once, which costs a fraction of parsing it again at every render.
func (d Page) template() (*template.Template, error) {
	parsed, err := parsedPage()
	if err != nil {
		return nil, err
	}
	t, err := parsed.Clone()
	if err != nil {
		return nil, err
	}
	return t.Funcs(d.funcs()), nil
}

// funcs are the template's functions that read d.
func (d Page) funcs() template.FuncMap {
	return template.FuncMap{
		"source": d.sourceName,
		"add1":   func(i int) int { return i + 1 },
		"plural": plural,
		"cellOf": func(r, t int, row Row, c Cell) cellArgs {
			return cellArgs{R: r, T: t, Row: row, Cell: c, Position: d.Turns[t].Position}
		},
		"cellClass": d.cellClass,
		"turnOf":    func(t int, turn Turn) turnArgs { return turnArgs{t, turn} },
		"earlier":   func(from uint64) uint64 { return from - 1 },
	}
}

// cellClass is what a grid cell's class says besides "cell": its state, "dlv" when a hook
// delivered the rule at that request, "first" when the request is its prompt's first.
func (d Page) cellClass(t int, c Cell) string {
	class := c.State
	if len(c.Delivered) > 0 {
		class += " dlv"
	}
	if d.Turns[t].Position.Request == 1 {
		class += " first"
	}
	return class
}

// Render writes the page as HTML.
func Render(w io.Writer, data Page) error {
	tmpl, err := data.template()
	if err != nil {
		return err
	}
	return tmpl.Execute(w, data)
}

// RenderTimeline writes the timeline's rows, every event of the page, as a page with Parts set
// fetches them.
func RenderTimeline(w io.Writer, data Page) error {
	data.TimelineFrom = 0
	tmpl, err := data.template()
	if err != nil {
		return err
	}
	return tmpl.ExecuteTemplate(w, "timeline", data)
}

// ErrNoRequest is returned by RenderPart for a request the page does not have.
var ErrNoRequest = errors.New("no such request on the page")

// RenderPart writes what a page with Parts set fetches for its request t (from 0): each rule's
// evidence at it, its context and its audit table, as the page without Parts holds them.
func RenderPart(w io.Writer, data Page, t int) error {
	if t < 0 || t >= len(data.Turns) || t >= len(data.Audit) {
		return fmt.Errorf("request %d of %d: %w", t, len(data.Turns), ErrNoRequest)
	}
	tmpl, err := data.template()
	if err != nil {
		return err
	}
	return tmpl.ExecuteTemplate(w, "part", struct {
		Page  Page
		T     int
		Audit AuditRequest
	}{data, t, data.Audit[t]})
}

// AuditRequest is one request of the report's audit table: replay audit's rows for it.
type AuditRequest struct {
	Index    int // the request's column in the grid
	Position session.Position
	Turn     int
	Seq      uint64
	Rules    []AuditRule
	// Findings counts the findings of its rows.
	Findings int
	// Shown is the request the page shows before a cell is selected: the last.
	Shown bool
}

// AuditRule is one rule file at one request, as replay audit prints it.
type AuditRule struct {
	Rule, Path, Decision, Reason, Detail string
	AgentLoaded, Held                    string // "yes", "no" or "?"
	Delivered                            bool
	Findings                             []string
}

// addAudit puts the audit's columns into the cells, its rows into the audit table and its
// findings into the page. Names, paths and reasons come from the log: control characters are
// escaped here, and the template escapes the HTML.
func addAudit(ctx context.Context, db store.Store, task uuid.UUID, data *Page, rows map[string]*Row) error {
	roots, err := (&session.Folders{}).AuditRoots(ctx, db, task, true)
	if err != nil {
		return err
	}
	rep, err := session.Audit(ctx, db, task, session.AuditOptions{Workspace: roots})
	if err != nil {
		return err
	}
	data.AgentLoads = rep.AgentLoads
	for i, req := range rep.Requests {
		ar := AuditRequest{Index: i, Position: session.Position{Prompt: req.Prompt, Request: req.Request},
			Turn: req.Turn, Seq: req.Seq}
		for _, e := range req.Rules {
			row := AuditRule{Rule: termsafe.Escape(e.Rule), Path: termsafe.Escape(e.Path), Decision: e.Decision,
				Reason: termsafe.Escape(e.Reason), Detail: termsafe.Escape(e.Detail),
				AgentLoaded: audit.YesNo(e.AgentLoaded), Held: audit.YesNo(e.Held), Delivered: e.Delivered}
			for _, k := range e.Findings {
				row.Findings = append(row.Findings, string(k))
			}
			ar.Findings += len(row.Findings)
			ar.Rules = append(ar.Rules, row)
			r := rows[e.ID]
			if r == nil || i >= len(r.Cells) {
				continue
			}
			c := &r.Cells[i]
			c.AgentLoaded, c.Held, c.Findings = row.AgentLoaded, row.Held, row.Findings
		}
		ar.Shown = i == len(rep.Requests)-1
		data.Audit = append(data.Audit, ar)
	}
	for _, f := range rep.Findings {
		f.Evidence, f.Rule, f.Path = termsafe.Escape(f.Evidence), termsafe.Escape(f.Rule), termsafe.Escape(f.Path)
		data.Findings = append(data.Findings, f)
	}
	return nil
}

// titleRunes is how much of a prompt's user message its title keeps.
const titleRunes = 60

// cut shortens s to max runes, the last one an ellipsis when it was longer.
func cut(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}

// plural is "1 turn", "2 turns".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
