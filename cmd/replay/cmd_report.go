package main

import (
	"context"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"sort"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/audit"
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

//go:embed report.html.tmpl
var reportTemplate string

// reportCell is one rule at one turn.
type reportCell struct {
	State    string // "in", "out", "shadowed", "off", "none"
	Label    string
	Reason   string
	Detail   string
	Matches  []reportMatch
	Category string
	// Delivered are the deliveries of this turn's decision that carried the rule: an included
	// rule a hook put in front of the model at this turn.
	Delivered []reportDelivery
	// AgentLoaded and Held are the audit's columns ("yes", "no", "?"); Findings its findings.
	AgentLoaded, Held string
	Findings          []string
}

// reportDelivery is a delivery event as the evidence panel shows it.
type reportDelivery struct {
	Seq                        uint64
	Agent, Hook, Channel, Form string
	Bytes, Rules               int
}

// reportMatch is a match with the evidence for its path, looked up in the decision's context.
type reportMatch struct {
	events.Match
	Sources []events.Source
}

type reportRow struct {
	ID, Name, Category, Path string
	Cells                    []reportCell
	Turns                    int
}

type reportTurn struct {
	Turn     int
	Position session.Position
	Seq      uint64
	Context  []events.ContextPath
	// Changed is whether any rule's cell differs from the request before (the first always does).
	Changed bool
}

// reportPrompt is one prompt of the task: the grid's columns it spans and the timeline's events
// that belong to it.
type reportPrompt struct {
	Prompt      int
	Title       string // its user message, on one line and cut ("" for prompt 0)
	First, Span int    // its requests: the grid's columns First to First+Span-1
	Changed     int    // how many of them changed a rule
	Events      []reportEvent
}

type reportEvent struct {
	Seq      uint64
	Turn     int
	Position session.Position // the request the event belongs to
	Type     string
	Time     string
	Summary  string
}

type reportData struct {
	Task   string
	Events int
	Turns  []reportTurn
	// Prompts group the grid's requests and the timeline's events by the prompt they belong to.
	Prompts     []reportPrompt
	Rows        []reportRow
	Diagnostics []events.Diagnostic
	Timeline    []reportEvent
	// Delivered counts the cells whose rule a hook delivered at that turn.
	Delivered int
	// requests names the requests of the evidence.
	requests *session.Requests
	// Findings and AgentLoads are the audit's (replay audit).
	Findings   []audit.Finding
	AgentLoads string
}

// UserPrompts counts the prompts that are user messages (prompt 0 holds what came before the
// first one).
func (d reportData) UserPrompts() int {
	n := 0
	for _, p := range d.Prompts {
		if p.Prompt > 0 {
			n++
		}
	}
	return n
}

// sourceName describes a piece of evidence with its request.
func (d reportData) sourceName(s events.Source) string { return d.requests.Source(s) }

func cmdReport(args []string, stdout, stderr io.Writer) int {
	f := newFlags("report", "[TASK] -o report.html", stderr)
	out := f.String("o", "report.html", "the HTML file to write ('-' for standard output)")
	pos, code := f.parseOrExit(args, 0, 1)
	if code >= 0 {
		return code
	}
	db, task, err := f.openTaskOrLatest(pos, "report", stderr)
	if err != nil {
		return fail(stderr, err)
	}
	defer db.Close()
	data, err := gatherReport(context.Background(), db, task)
	if err != nil {
		return fail(stderr, err)
	}
	if err := writeOutput(*out, stdout, func(w io.Writer) error { return renderReport(w, data) }); err != nil {
		return fail(stderr, err)
	}
	if *out != "-" {
		fmt.Fprintf(stdout, "wrote %s: %s, %s, %s, %s\n", *out, plural(data.UserPrompts(), "prompt"), plural(len(data.Turns), "request"),
			plural(len(data.Rows), "rule"), plural(data.Events, "event"))
	}
	return exitOK
}

func gatherReport(ctx context.Context, db store.Store, task uuid.UUID) (reportData, error) {
	data := reportData{Task: task.String()}
	summaries, err := decisionSummaries(ctx, db, task)
	if err != nil {
		return data, err
	}
	// dels holds each decision's deliveries by the rules they carried: decision seq → rule id.
	dels := map[uint64]map[string][]reportDelivery{}
	var reqs session.Requests
	for ev, err := range db.Events(ctx, task, 1) {
		if err != nil {
			return data, err
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
		data.Timeline = append(data.Timeline, reportEvent{Seq: ev.Seq, Turn: ev.Turn, Position: reqs.Add(ev), Type: string(ev.Type),
			Time: t, Summary: escapeControls(eventSummary(ev, summaries))})
	}
	data.requests = &reqs
	ds, err := session.Decisions(ctx, db, task)
	if err != nil {
		return data, err
	}
	for i := range ds {
		escapeDecision(&ds[i].Decision)
	}
	rows := map[string]*reportRow{}
	seenDiag := map[string]bool{}
	for i, rec := range ds {
		d := rec.Decision
		data.Turns = append(data.Turns, reportTurn{Turn: d.Turn, Position: rec.Position, Seq: rec.Seq, Context: d.Context})
		add := func(o events.RuleOutcome, in bool) {
			r := rows[o.ID]
			if r == nil {
				r = &reportRow{ID: o.ID, Name: o.Name, Category: o.Category, Path: o.Path, Cells: make([]reportCell, len(ds))}
				for j := range r.Cells {
					r.Cells[j] = reportCell{State: "none", Label: "·", Reason: "not discovered at this turn"}
				}
				rows[o.ID] = r
			}
			c := reportCell{State: "out", Label: "–", Reason: o.Reason, Detail: o.Detail, Category: o.Category}
			for _, m := range o.Matches {
				c.Matches = append(c.Matches, reportMatch{m, events.SourcesOf(d.Context, m.Root, m.Path)})
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
func groupPrompts(data *reportData) {
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
	group := func(p int) *reportPrompt {
		i, ok := at[p]
		if !ok {
			i = len(data.Prompts)
			at[p] = i
			data.Prompts = append(data.Prompts, reportPrompt{Prompt: p, First: -1})
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
func addDelivery(dels map[uint64]map[string][]reportDelivery, ev events.Event) error {
	p, err := ev.Payload()
	if err != nil {
		return err
	}
	d := p.(*events.Delivery)
	rd := reportDelivery{Seq: ev.Seq, Agent: escapeControls(d.Agent), Hook: escapeControls(d.Hook),
		Channel: escapeControls(d.Channel), Form: escapeControls(d.Form), Bytes: d.Bytes, Rules: len(d.Rules)}
	byRule := dels[d.Decision]
	if byRule == nil {
		byRule = map[string][]reportDelivery{}
		dels[d.Decision] = byRule
	}
	for _, r := range d.Rules {
		// The decision's outcomes are escaped before they are looked up here.
		id := escapeControls(r.ID)
		byRule[id] = append(byRule[id], rd)
	}
	return nil
}

// escapeDecision escapes the control characters in the text of a decision the report shows
// (see escapeControls): the page shows them as text too.
func escapeDecision(d *events.Decision) {
	ctx := make([]events.ContextPath, len(d.Context))
	for i, p := range d.Context {
		p.Path, p.Root = escapeControls(p.Path), escapeControls(p.Root)
		p.Sources = escapeSources(p.Sources)
		ctx[i] = p
	}
	d.Context = ctx
	for _, os := range []*[]events.RuleOutcome{&d.Included, &d.Excluded} {
		out := make([]events.RuleOutcome, len(*os))
		for i, o := range *os {
			o.ID, o.Name, o.Path, o.Detail = escapeControls(o.ID), escapeControls(o.Name), escapeControls(o.Path), escapeControls(o.Detail)
			ms := make([]events.Match, len(o.Matches))
			for j, m := range o.Matches {
				m.Pattern, m.Path, m.Root = escapeControls(m.Pattern), escapeControls(m.Path), escapeControls(m.Root)
				ms[j] = m
			}
			o.Matches = ms
			out[i] = o
		}
		*os = out
	}
	dgs := make([]events.Diagnostic, len(d.Diagnostics))
	for i, dg := range d.Diagnostics {
		dg.File, dg.Message = escapeControls(dg.File), escapeControls(dg.Message)
		dgs[i] = dg
	}
	d.Diagnostics = dgs
}

// addAudit puts the audit's columns into the cells and its findings into the page.
func addAudit(ctx context.Context, db store.Store, task uuid.UUID, data *reportData, rows map[string]*reportRow) error {
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
		for _, e := range req.Rules {
			r := rows[e.ID]
			if r == nil || i >= len(r.Cells) {
				continue
			}
			c := &r.Cells[i]
			c.AgentLoaded, c.Held = yesNo(e.AgentLoaded), yesNo(e.Held)
			for _, k := range e.Findings {
				c.Findings = append(c.Findings, string(k))
			}
		}
	}
	for _, f := range rep.Findings {
		f.Evidence, f.Rule, f.Path = escapeControls(f.Evidence), escapeControls(f.Rule), escapeControls(f.Path)
		data.Findings = append(data.Findings, f)
	}
	return nil
}

func escapeSources(srcs []events.Source) []events.Source {
	out := make([]events.Source, len(srcs))
	for i, s := range srcs {
		s.Detail = escapeControls(s.Detail)
		out[i] = s
	}
	return out
}

func renderReport(w io.Writer, data reportData) error {
	tmpl, err := template.New("report").Funcs(template.FuncMap{
		"source": data.sourceName,
		"add1":   func(i int) int { return i + 1 },
		"plural": plural,
	}).Parse(reportTemplate)
	if err != nil {
		return err
	}
	return tmpl.Execute(w, data)
}
