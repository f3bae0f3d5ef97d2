package session

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/audit"
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/rules"
)

// AuditVersion is the version of the JSON shape of [AuditReport]. It changes when a field
// changes meaning or goes away; a new field does not change it.
const AuditVersion = 1

// AuditOptions say what an audit may look at beside the log.
type AuditOptions struct {
	// Workspace lists the workspace's files for the never_applicable finding. The log does not
	// record the workspace's files, so they are read when the audit runs; nil skips the check
	// (the report says so).
	Workspace []Root
	// MaxFiles caps how many files the listing reads before it gives up on the check; 0 means
	// DefaultAuditMaxFiles.
	MaxFiles int
}

// DefaultAuditMaxFiles is how many workspace files an audit lists at most.
const DefaultAuditMaxFiles = 200_000

// AuditReport answers "did the agent get each rule, and if not, why not?" for every request of
// a task: tasklog's decision, what the agent loaded by itself, what tasklog delivered, and the
// findings. Its JSON is a documented, versioned shape (AuditVersion).
type AuditReport struct {
	Version int    `json:"version"`
	Task    string `json:"task"`
	// Agent is the runtime that recorded the task ("claude-code", "codex", …).
	Agent string `json:"agent"`
	// AgentLoads is "reported" when the agent reports the instruction files it loads (Claude
	// Code's InstructionsLoaded), else "unknown": agent_loaded is then null, never a guess.
	AgentLoads string `json:"agent_loads"`
	// Workspace says where the file list of the never_applicable check came from.
	Workspace AuditWorkspace `json:"workspace"`
	// Requests has one entry per decision, in order.
	Requests []AuditRequest `json:"requests"`
	// Findings are the findings, one per kind and rule (and severity), at the first request
	// each was seen, sorted by audit.Sort.
	Findings []audit.Finding `json:"findings"`
}

// AuditWorkspace describes the file list the never_applicable check used.
type AuditWorkspace struct {
	// Source is "live" (listed from the workspace when the audit ran, not from the log) or
	// "none" (not checked).
	Source string `json:"source"`
	// Files counts the files listed.
	Files int `json:"files"`
	// Note says why the check was skipped, when it was.
	Note string `json:"note,omitempty"`
}

// AuditRequest is one request: every rule the task could see, side by side.
type AuditRequest struct {
	Prompt  int    `json:"prompt"`
	Request int    `json:"request"`
	Turn    int    `json:"turn"`
	Seq     uint64 `json:"seq"`
	// Rules has every rule the decision decided about, sorted by path, then id.
	Rules []AuditEntry `json:"rules"`
}

// AuditEntry is one rule at one request.
type AuditEntry struct {
	// Rule is the rule's name, ID its id, Path its file as the model is shown it.
	Rule     string `json:"rule"`
	ID       string `json:"id"`
	Path     string `json:"path"`
	Category string `json:"category"`
	// Decision is tasklog's: "applies" or "excluded", with its Reason and Detail.
	Decision string `json:"decision"`
	Reason   string `json:"reason"`
	Detail   string `json:"detail,omitempty"`
	// AgentLoaded is whether the agent had loaded the file by itself by this request; nil when
	// the agent reports no loads.
	AgentLoaded *bool `json:"agent_loaded"`
	// Delivered is whether tasklog delivered the rule into this request.
	Delivered bool `json:"delivered"`
	// Held is whether the model has the rule's text in this request, by its own load or a
	// delivery still in its context (none since a compaction); nil when that depends on loads
	// the agent does not report.
	Held *bool `json:"held"`
	// Findings are the kinds of the findings about the rule at this request.
	Findings []audit.Kind `json:"findings"`
}

// Decision words of an AuditEntry.
const (
	AuditApplies  = "applies"
	AuditExcluded = "excluded"
)

// agentsReportingLoads are the agents that report the instruction files they load.
var agentsReportingLoads = []string{string(agentlog.ClaudeCode), string(agentlog.Qwen)}

// auditLog is what an audit reads from the log in one pass.
type auditLog struct {
	agent       string
	decisions   []Recorded
	deliveries  []auditDelivery
	loads       []auditLoad
	compactions []uint64 // seqs, ascending
	snapshot    []events.SnapshotFile
}

type auditDelivery struct {
	seq uint64
	del *events.Delivery
}

type auditLoad struct {
	seq  uint64
	from int // the first turn whose request has the file
	p    *events.InstructionsLoaded
}

// readAudit reads the log once: decisions in full, deliveries, the agent's loads, compactions
// and the last rules snapshot.
func readAudit(ctx context.Context, er EventReader, task uuid.UUID) (*auditLog, error) {
	l := &auditLog{}
	reqs := &Requests{}
	var c chain
	lastCompactTurn := 0
	for ev, err := range er.Events(ctx, task, 1) {
		if err != nil {
			return nil, err
		}
		switch ev.Type {
		case events.TypeUserMessage:
			reqs.Add(ev)
			continue
		case events.TypeDecision:
			// The outcomes, without the paths' evidence an audit does not read (most of the bytes).
			d, err := c.nextOutcomes(ev)
			if err != nil {
				return nil, err
			}
			l.decisions = append(l.decisions, Recorded{Seq: ev.Seq, Decision: *lessContext(d), Position: reqs.Add(ev), Requests: reqs})
			continue
		case events.TypeCompaction:
			l.compactions = append(l.compactions, ev.Seq)
			lastCompactTurn = ev.Turn
			continue
		case events.TypeTaskStarted, events.TypeDelivery, events.TypeInstructionsLoaded, events.TypeRulesSnapshot:
		default:
			continue
		}
		p, err := ev.Payload()
		if err != nil {
			return nil, err
		}
		switch p := p.(type) {
		case *events.TaskStarted:
			l.agent = p.Runtime.Name
		case *events.Delivery:
			l.deliveries = append(l.deliveries, auditDelivery{ev.Seq, p})
		case *events.InstructionsLoaded:
			// A load comes into the model's context with the request after it; one made when
			// the session started (reported late) counts from the start, or the last compaction;
			// one a file access caused (a Read matched the rule's paths, or entered a folder with
			// its own CLAUDE.md) reaches the model with that tool's result, as does what the
			// tool's hook delivered: it counts from the decision of that tool call, the last
			// before it.
			from := ev.Turn
			switch p.Reason {
			case "session_start":
				from = max(1, lastCompactTurn)
			case "path_glob_match", "nested_traversal":
				from = max(1, ev.Turn-1)
			}
			l.loads = append(l.loads, auditLoad{ev.Seq, from, p})
		case *events.RulesSnapshot:
			l.snapshot = p.Files
		}
	}
	return l, nil
}

// Audit answers, for every request of a task, whether each rule applied, whether the agent
// loaded it, whether tasklog delivered it, and lists the findings.
func Audit(ctx context.Context, lr LogReader, task uuid.UUID, opts AuditOptions) (*AuditReport, error) {
	rep, _, err := runAudit(ctx, lr, task, opts)
	return rep, err
}

// AuditRequests is Audit's rows alone: every request with each rule's outcome, and whether the
// agent loaded it and tasklog delivered it. They come from the log alone; Audit also loads the
// task's rule files for its findings, so a store missing a rule file's contents fails Audit and
// not AuditRequests.
func AuditRequests(ctx context.Context, er EventReader, task uuid.UUID) ([]AuditRequest, error) {
	l, err := readAudit(ctx, er, task)
	if err != nil {
		return nil, err
	}
	_, rows := auditRows(l)
	return rows, nil
}

// auditRows makes the auditor of what readAudit read and builds the audit's rows, one a
// decision, noting their findings.
func auditRows(l *auditLog) (*auditor, []AuditRequest) {
	a := newAuditor(l)
	rows := []AuditRequest{}
	for i := range l.decisions {
		rows = append(rows, a.request(i))
	}
	return a, rows
}

// runAudit is Audit, also handing out the auditor for Why.
func runAudit(ctx context.Context, lr LogReader, task uuid.UUID, opts AuditOptions) (*AuditReport, *auditor, error) {
	l, err := readAudit(ctx, lr, task)
	if err != nil {
		return nil, nil, err
	}
	a, rows := auditRows(l)
	rep := &AuditReport{Version: AuditVersion, Task: task.String(), Agent: l.agent, AgentLoads: "unknown",
		Requests: rows, Findings: []audit.Finding{}}
	if a.reportsLoads {
		rep.AgentLoads = "reported"
	}
	rs, raw, err := a.ruleSet(lr)
	if err != nil {
		return nil, nil, err
	}
	a.rules = rs
	a.broken(rs, raw)
	rep.Workspace = a.listWorkspace(opts)
	a.neverApplicable(rs, rep.Workspace)
	rep.Findings = a.findings()
	return rep, a, nil
}

// auditor computes an audit's rows and findings from what readAudit read.
type auditor struct {
	l            *auditLog
	reportsLoads bool
	loadFrom     map[string]auditLoad // by absolute path: the earliest load
	byDecision   map[uint64][]auditDelivery
	// lastDel is the seq of the last delivery of each rule id of a decision before the
	// current row's; next is the index of the next delivery (sorted by decision) to take in.
	lastDel  map[string]auditDelivery
	sorted   []auditDelivery
	next     int
	found    map[findingKey]*audit.Finding
	firstRow map[string]audit.Moment // by rule id: the first request that decided it
	included map[string]int          // by rule id: how many requests included it
	rules    *rules.RuleSet          // the rules of the last snapshot
	paths    []string                // the workspace's files and folders ("dir/"), sorted
	listed   bool                    // paths were listed
}

type findingKey struct {
	kind audit.Kind
	id   string
	sev  audit.Severity
}

func newAuditor(l *auditLog) *auditor {
	a := &auditor{l: l, loadFrom: map[string]auditLoad{}, byDecision: map[uint64][]auditDelivery{},
		lastDel: map[string]auditDelivery{}, found: map[findingKey]*audit.Finding{},
		firstRow: map[string]audit.Moment{}, included: map[string]int{}}
	a.reportsLoads = slices.Contains(agentsReportingLoads, l.agent) || len(l.loads) > 0
	for _, ld := range l.loads {
		for _, key := range loadKeys(ld.p) {
			if was, ok := a.loadFrom[key]; !ok || ld.from < was.from {
				a.loadFrom[key] = ld
			}
		}
	}
	for _, d := range l.deliveries {
		a.byDecision[d.del.Decision] = append(a.byDecision[d.del.Decision], d)
	}
	a.sorted = slices.Clone(l.deliveries)
	slices.SortStableFunc(a.sorted, func(x, y auditDelivery) int { return cmp.Compare(x.del.Decision, y.del.Decision) })
	return a
}

// loadKeys are the rule file names an agent's load answers for: its absolute path, and for a
// file of the user's own memory ("User" in Claude Code, "user" in Qwen Code) each "~/" name its
// path could have under the home folder, which the log does not record: a global rule's id
// names its file as "~/.claude/rules/go.md", the agent as "/home/me/.claude/rules/go.md".
func loadKeys(p *events.InstructionsLoaded) []string {
	keys := []string{p.Path}
	if !strings.EqualFold(p.MemoryType, "user") {
		return keys
	}
	for i := 0; i < len(p.Path); i++ {
		if p.Path[i] == '/' && i+1 < len(p.Path) {
			keys = append(keys, "~/"+p.Path[i+1:])
		}
	}
	return keys
}

// lastCompactionBefore is the seq of the last compaction before seq, 0 for none.
func (a *auditor) lastCompactionBefore(seq uint64) uint64 {
	i, _ := slices.BinarySearch(a.l.compactions, seq)
	if i == 0 {
		return 0
	}
	return a.l.compactions[i-1]
}

// request builds the row of the i-th decision and notes its findings.
func (a *auditor) request(i int) AuditRequest {
	rec := a.l.decisions[i]
	d := rec.Decision
	for a.next < len(a.sorted) && a.sorted[a.next].del.Decision < rec.Seq {
		dl := a.sorted[a.next]
		for _, r := range dl.del.Rules {
			a.lastDel[r.ID] = dl
		}
		a.next++
	}
	compacted := a.lastCompactionBefore(rec.Seq)
	here := map[string]auditDelivery{}
	for _, dl := range a.byDecision[rec.Seq] {
		for _, r := range dl.del.Rules {
			here[r.ID] = dl
		}
	}
	at := audit.Moment{Prompt: rec.Position.Prompt, Request: rec.Position.Request, Turn: d.Turn, Seq: rec.Seq}
	row := AuditRequest{Prompt: at.Prompt, Request: at.Request, Turn: at.Turn, Seq: at.Seq}
	for _, oc := range outcomesByPath(&d) {
		o := oc.RuleOutcome
		e := AuditEntry{Rule: o.Name, ID: o.ID, Path: o.Path, Category: o.Category, Decision: AuditExcluded,
			Reason: o.Reason, Detail: o.Detail, Findings: []audit.Kind{}}
		if oc.included {
			e.Decision = AuditApplies
			a.included[o.ID]++
		}
		if _, ok := a.firstRow[o.ID]; !ok {
			a.firstRow[o.ID] = at
		}
		ld, loaded := a.loaded(o, d.Turn)
		if a.reportsLoads {
			e.AgentLoaded = &loaded
		}
		dl, delivered := here[o.ID]
		e.Delivered = delivered
		if !delivered {
			if prev, ok := a.lastDel[o.ID]; ok && prev.seq > compacted {
				dl, delivered = prev, true
			}
		}
		// A delivery by name gives the model the rule's rule:// address, not its text.
		if held := delivered && dl.del.Form == events.FormFull || loaded; held || a.reportsLoads {
			e.Held = &held
		}
		a.noteEntry(&e, at, o, rec, ld, loaded, dl, delivered)
		row.Rules = append(row.Rules, e)
	}
	if row.Rules == nil {
		row.Rules = []AuditEntry{}
	}
	return row
}

// ruleOutcome is one rule's outcome in a decision, and whether it is one of the decision's
// included outcomes (the rule is in the prompt) or of its excluded ones.
type ruleOutcome struct {
	events.RuleOutcome
	included bool
}

// outcomesByPath lists a decision's outcomes, included and excluded, sorted by the rule's path,
// then its id (equal ones in the decision's order, included first): the order of an audit's
// rows. An outcome is included by its place in the decision, not by its id, so a log that
// names one id twice counts each outcome as it was recorded.
func outcomesByPath(d *events.Decision) []ruleOutcome {
	out := make([]ruleOutcome, 0, len(d.Included)+len(d.Excluded))
	for _, o := range d.Included {
		out = append(out, ruleOutcome{o, true})
	}
	for _, o := range d.Excluded {
		out = append(out, ruleOutcome{o, false})
	}
	slices.SortStableFunc(out, func(x, y ruleOutcome) int { return cmp.Or(cmp.Compare(x.Path, y.Path), cmp.Compare(x.ID, y.ID)) })
	return out
}

// noteEntry notes the findings about one rule at one request: missed by the agent, loaded where
// it does not apply, shadowed, duplicate.
func (a *auditor) noteEntry(e *AuditEntry, at audit.Moment, o events.RuleOutcome, rec Recorded, ld auditLoad, loaded bool,
	dl auditDelivery, delivered bool) {
	applies := e.Decision == AuditApplies
	if applies && a.reportsLoads && !loaded {
		a.note(e, at, o, audit.MissedByAgent, a.missed(o, rec, dl, delivered))
	}
	if loaded && ld.from == at.Turn && !applies && conditionReason(o.Reason) {
		a.note(e, at, o, audit.LoadedNotApplicable, findingText{audit.Error, fmt.Sprintf(
			"the agent loaded %s by itself (%s at seq %d) into this request, but the rule does not apply here: %s — %s",
			ld.p.Path, orWord(ld.p.Reason, "a load"), ld.seq, o.Reason, o.Detail)})
	}
	// A file the agent loaded by itself reaches the model whatever tasklog decided of it.
	switch o.Reason {
	case rules.ReasonShadowed:
		reached := ": its text never reaches the model"
		if loaded {
			reached = ", in tasklog's decision; but " + a.l.agent + " loaded this file by itself, so the model has both texts: rename one file, or delete one"
		}
		a.note(e, at, o, audit.Shadowed, findingText{audit.Warning, "hidden by " + o.ShadowedBy +
			", a rule of the same name with higher precedence" + reached})
	case rules.ReasonDuplicate:
		reached := ": it goes into the prompt once"
		if loaded {
			reached = "; " + a.l.agent + " loaded this file by itself too, so the model has the text twice: keep one file"
		}
		a.note(e, at, o, audit.Duplicate, findingText{audit.Warning, "its text is the same as that of " + o.ShadowedBy +
			", which is included" + reached})
	}
}

// conditionReason reports whether an exclusion reason is the rule's own conditions failing.
func conditionReason(reason string) bool {
	switch reason {
	case rules.ReasonNoEvidence, rules.ReasonNoMatch, rules.ReasonConditionFailed:
		return true
	}
	return false
}

// loaded reports whether the agent had loaded the rule's file by the request of turn.
func (a *auditor) loaded(o events.RuleOutcome, turn int) (auditLoad, bool) {
	file, ok := strings.CutPrefix(o.ID, o.Source+":")
	if !ok {
		return auditLoad{}, false
	}
	ld, ok := a.loadFrom[file]
	return ld, ok && ld.from <= turn
}

type findingText struct {
	sev      audit.Severity
	evidence string
}

// missed explains a rule that applied while the agent had not loaded it: the delivery that put
// it in front of the model, or why tasklog did not deliver it.
func (a *auditor) missed(o events.RuleOutcome, rec Recorded, dl auditDelivery, delivered bool) findingText {
	why := fmt.Sprintf("the rule applies (%s: %s), and %s reported no load of it", o.Reason, o.Detail, orWord(a.l.agent, "the agent"))
	if delivered {
		pos, _ := rec.Requests.OfDecision(dl.del.Decision)
		how := ""
		if dl.del.Form == events.FormNames {
			how = " by name and rule:// address only (its text did not fit in the hook's reply)"
		}
		return findingText{audit.Warning, fmt.Sprintf("%s; tasklog delivered it%s (%s hook, %s channel, seq %d) into %s",
			why, how, dl.del.Hook, dl.del.Channel, dl.seq, pos)}
	}
	switch {
	case agentlog.LoadsNatively(agentlog.Agent(a.l.agent), events.RuleSource(o.Source), o.Path):
		return findingText{audit.Error, fmt.Sprintf("%s; tasklog did not deliver it: %s loads %s rules by itself, so tasklog leaves them to it",
			why, a.l.agent, o.Source)}
	case len(a.l.deliveries) == 0:
		return findingText{audit.Error, why + "; tasklog did not deliver it: no hook delivered rules in this task"}
	}
	for _, later := range a.sorted {
		if later.del.Decision > rec.Seq && slices.ContainsFunc(later.del.Rules, func(r events.DeliveredRule) bool { return r.ID == o.ID }) {
			pos, _ := rec.Requests.OfDecision(later.del.Decision)
			return findingText{audit.Error, fmt.Sprintf("%s; tasklog had not delivered it yet: no hook that reaches the model ran for this request (it was delivered later, at seq %d, into %s)",
				why, later.seq, pos)}
		}
	}
	return findingText{audit.Error, why + "; tasklog did not deliver it: no hook that reaches the model ran after this decision"}
}

// note records a finding at a request: on the entry, and in the report once per kind, rule and
// severity, counting the requests.
func (a *auditor) note(e *AuditEntry, at audit.Moment, o events.RuleOutcome, kind audit.Kind, t findingText) {
	e.Findings = append(e.Findings, kind)
	k := findingKey{kind, o.ID, t.sev}
	if f, ok := a.found[k]; ok {
		f.Requests++
		return
	}
	m := at
	a.found[k] = &audit.Finding{Kind: kind, Severity: t.sev, Rule: o.Name, ID: o.ID, Path: o.Path, At: &m, Requests: 1, Evidence: t.evidence}
}

// noteRule records a finding about a rule file, at the first request that decided the rule.
func (a *auditor) noteRule(r *rules.Rule, kind audit.Kind, t findingText) {
	f := &audit.Finding{Kind: kind, Severity: t.sev, Rule: r.Name, ID: r.ID, Path: r.DisplayPath, Evidence: t.evidence}
	if at, ok := a.firstRow[r.ID]; ok {
		f.At, f.Requests = &at, a.included[r.ID]
	}
	a.found[findingKey{kind, r.ID, t.sev}] = f
}

// findings lists the findings noted, sorted.
func (a *auditor) findings() []audit.Finding {
	out := make([]audit.Finding, 0, len(a.found))
	for _, f := range a.found {
		out = append(out, *f)
	}
	slices.SortFunc(out, func(x, y audit.Finding) int {
		return cmp.Or(cmp.Compare(x.ID, y.ID), cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.Severity, y.Severity))
	})
	audit.Sort(out)
	return out
}

// ruleSet loads the rules of the task's last snapshot, with each file's content by rule id.
func (a *auditor) ruleSet(br BlobReader) (*rules.RuleSet, map[string][]byte, error) {
	files, err := LoadSnapshot(br, a.l.snapshot)
	if err != nil {
		return nil, nil, err
	}
	// The files are read as the engine of the last decision read them.
	rs := rules.Load(files)
	if n := len(a.l.decisions); n > 0 {
		rs = rs.As(a.l.decisions[n-1].Decision.Engine)
	}
	raw := map[string][]byte{}
	for _, r := range rs.Rules() {
		for _, f := range files {
			if f.Root == r.Root && f.Path == r.Path && f.Provider == r.Provider {
				raw[r.ID] = f.Content
			}
		}
	}
	return rs, raw, nil
}

func orWord(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
