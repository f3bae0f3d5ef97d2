package session

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/audit"
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/rules"
)

// WhyAnswer is one rule at one request in plain sentences: whether tasklog applied it and why,
// whether the agent loaded it, whether tasklog delivered it, and the audit's findings there.
type WhyAnswer struct {
	Task     string   `json:"task"`
	Position Position `json:"position"`
	Turn     int      `json:"turn"`
	Seq      uint64   `json:"seq"`
	// Entry is the rule's row of the audit at this request.
	Entry AuditEntry `json:"entry"`
	// Decision, Agent and Delivery are the sentences: why tasklog applied the rule or not,
	// what the agent loaded, what tasklog delivered.
	Decision []string `json:"decision"`
	Agent    string   `json:"agent"`
	Delivery string   `json:"delivery"`
	// Findings are the audit's findings about the rule at this request.
	Findings []audit.Finding `json:"findings"`
	// Workspace says where the workspace's files came from.
	Workspace AuditWorkspace `json:"workspace"`
}

// whyPaths is how many matching workspace paths an answer names.
const whyPaths = 5

// Why explains one rule, by id or name, at the request of a turn.
func Why(ctx context.Context, lr LogReader, task uuid.UUID, turn int, rule string, opts AuditOptions) (*WhyAnswer, error) {
	rec, err := DecisionAt(ctx, lr, task, turn)
	if err != nil {
		return nil, err
	}
	x, err := explainIn(rec, rule)
	if errors.Is(err, ErrNoRule) {
		return nil, agentFileOf(ctx, lr, task, rule, err)
	}
	if err != nil {
		return nil, err
	}
	rep, a, err := runAudit(ctx, lr, task, opts)
	if err != nil {
		return nil, err
	}
	w := &WhyAnswer{Task: task.String(), Position: rec.Position, Turn: turn, Seq: rec.Seq, Workspace: rep.Workspace,
		Findings: []audit.Finding{}}
	for _, e := range rep.Requests[turn-1].Rules {
		if e.ID == x.Rule.ID {
			w.Entry = e
		}
	}
	w.Decision = a.whyDecision(x, rec)
	if m := a.whyMode(x.Rule, rec); m != "" {
		w.Decision = append(w.Decision, m)
	}
	w.Agent = a.whyAgent(x.Rule, turn)
	w.Delivery = a.whyDelivery(x.Rule, rec, w.Entry)
	for _, f := range rep.Findings {
		if f.ID != x.Rule.ID {
			continue
		}
		if f.At == nil || slices.Contains(w.Entry.Findings, f.Kind) || f.Kind == audit.Broken || f.Kind == audit.NeverApplicable {
			w.Findings = append(w.Findings, f)
		}
	}
	return w, nil
}

// whyDecision says why tasklog applied the rule or not.
func (a *auditor) whyDecision(x Explanation, rec Recorded) []string {
	o := x.Rule
	var out []string
	if x.Included {
		out = append(out, fmt.Sprintf("tasklog applied it (%s): %s.", o.Reason, o.Detail))
		for _, m := range o.Matches {
			if m.Pattern == "" {
				continue
			}
			s := fmt.Sprintf("Its pattern %q matched %s", m.Pattern, m.Path)
			if m.Condition == rules.MatchMentioned {
				s = "Its file " + m.Path + " was mentioned"
			}
			for i, src := range events.SourcesOf(x.Context, m.Root, m.Path) {
				sep := ", put into the context by "
				if i > 0 {
					sep = "; "
				}
				s += sep + rec.Requests.Source(src)
			}
			out = append(out, s+".")
		}
		return out
	}
	r := ruleByID(a.rules.As(rec.Decision.Engine), o.ID)
	var conds [][]string
	if r != nil {
		conds = pathConditions(r)
	}
	switch o.Reason {
	case rules.ReasonNoEvidence:
		out = append(out, "tasklog did not apply it: no evidence yet, the context had no candidate path.")
	case rules.ReasonNoMatch:
		paths := make([]string, len(x.Context))
		for i, p := range x.Context {
			paths[i] = p.Path
		}
		out = append(out, fmt.Sprintf("tasklog did not apply it: no candidate path matched (%s); the candidate paths were %s.",
			o.Detail, strings.Join(paths, ", ")))
	case rules.ReasonToggledOff:
		out = append(out, "tasklog did not apply it: the rule is toggled off.")
	case rules.ReasonShadowed:
		out = append(out, fmt.Sprintf("tasklog did not apply it: it is shadowed by %s, a rule of the same name with higher precedence.", o.ShadowedBy))
	case rules.ReasonConditionFailed:
		out = append(out, fmt.Sprintf("tasklog did not apply it: a condition is false (%s).", o.Detail))
	default:
		out = append(out, fmt.Sprintf("tasklog did not apply it (%s): %s.", o.Reason, o.Detail))
	}
	// A condition that lists no pattern holds for no path: the reason says so.
	noPatterns := slices.ContainsFunc(conds, func(pats []string) bool { return len(pats) == 0 })
	if len(conds) == 0 || noPatterns || !slices.Contains([]string{rules.ReasonNoEvidence, rules.ReasonNoMatch}, o.Reason) {
		return out
	}
	if !a.listed {
		return append(out, "Which workspace files would match was not checked: no workspace to list.")
	}
	// A path must meet every paths condition: a nested folder's rule names its folder's files
	// that its own globs match.
	match, outside, reachable := a.matchingEvery(conds, whyPaths)
	if len(outside) > 0 {
		out = append(out, fmt.Sprintf("Its pattern %s lies outside every workspace root: no path can match it.", strings.Join(outside, ", ")))
	}
	if len(match) == 0 && reachable {
		return append(out, "Its patterns match nothing in the workspace (listed now, not from the log): a path under them would apply it once the agent touches it.")
	}
	if len(match) == 0 {
		return out
	}
	return append(out, fmt.Sprintf("A path the patterns match would apply it, in the workspace now: %s.", strings.Join(match, ", ")))
}

// whyMode says which mode the agent was in, where it recorded one (Cline's Plan and Act, Claude
// Code's plan permission mode), and whether the rule names a mode: a rule without a mode
// condition applies alike in both, so a rule missed in Plan mode was not filtered out by it.
func (a *auditor) whyMode(o events.RuleOutcome, rec Recorded) string {
	mode := rec.Decision.Mode
	if mode == "" {
		return ""
	}
	if r := ruleByID(a.rules.As(rec.Decision.Engine), o.ID); r != nil {
		for _, c := range r.Conditions {
			if c.Key == rules.CondMode {
				return fmt.Sprintf("The agent was in %s mode; the rule's mode condition lists %s.", mode, strings.Join(c.Values, ", "))
			}
		}
	}
	return fmt.Sprintf("The agent was in %s mode; the rule has no mode condition, so the mode did not decide it.", mode)
}

// whyAgent says whether the agent loaded the rule by itself by the request of turn.
func (a *auditor) whyAgent(o events.RuleOutcome, turn int) string {
	agent := orWord(a.l.agent, "the agent")
	if !a.reportsLoads {
		return fmt.Sprintf("Whether %s loaded it is unknown: %s reports no loads.", agent, agent)
	}
	ld, loaded := a.loaded(o, turn)
	switch {
	case loaded:
		return fmt.Sprintf("%s loaded it by itself (%s, instructions_loaded at seq %d).", agent, orWord(ld.p.Reason, "a load"), ld.seq)
	case ld.p != nil:
		return fmt.Sprintf("%s had not loaded it yet: it loaded it later (%s, instructions_loaded at seq %d).", agent, orWord(ld.p.Reason, "a load"), ld.seq)
	}
	return fmt.Sprintf("%s did not report loading it.", agent)
}

// whyDelivery says whether tasklog delivered the rule into the request, or holds it there from
// an earlier delivery, or why not.
func (a *auditor) whyDelivery(o events.RuleOutcome, rec Recorded, e AuditEntry) string {
	compacted := a.lastCompactionBefore(rec.Seq)
	var here, earlier, later *auditDelivery
	for i := range a.l.deliveries {
		d := &a.l.deliveries[i]
		if !slices.ContainsFunc(d.del.Rules, func(r events.DeliveredRule) bool { return r.ID == o.ID }) {
			continue
		}
		switch {
		case d.del.Decision == rec.Seq && here == nil:
			here = d
		case d.del.Decision < rec.Seq:
			earlier = d
		case d.del.Decision > rec.Seq && later == nil:
			later = d
		}
	}
	into := func(d *auditDelivery) string {
		p, _ := rec.Requests.OfDecision(d.del.Decision)
		return p.String()
	}
	switch {
	case here != nil:
		return fmt.Sprintf("tasklog delivered it into this request: %s, %s hook through the %s channel, at seq %d.",
			here.del.Form, here.del.Hook, here.del.Channel, here.seq)
	case earlier != nil && earlier.seq > compacted:
		return fmt.Sprintf("tasklog delivered it before, at seq %d into %s; no compaction has taken it out since.", earlier.seq, into(earlier))
	case earlier != nil:
		return fmt.Sprintf("tasklog delivered it at seq %d into %s, but a compaction (seq %d) took it out of the model's context since.",
			earlier.seq, into(earlier), compacted)
	case later != nil:
		return fmt.Sprintf("tasklog had not delivered it by this request; it did later, at seq %d into %s.", later.seq, into(later))
	}
	switch {
	case e.Decision != AuditApplies:
		return "tasklog did not deliver it: it does not apply here."
	case agentlog.LoadsNatively(agentlog.Agent(a.l.agent), events.RuleSource(o.Source), o.Path):
		return fmt.Sprintf("tasklog did not deliver it: %s loads %s rules by itself, so tasklog leaves them to it.", a.l.agent, o.Source)
	case len(a.l.deliveries) == 0:
		return "tasklog did not deliver it: no hook delivered rules in this task."
	}
	return "tasklog did not deliver it: no hook that reaches the model ran after this decision."
}

// String is the answer in sentences.
func (w *WhyAnswer) String() string {
	var b strings.Builder
	e := w.Entry
	fmt.Fprintf(&b, "%s (turn %d): %s (%s)\n", w.Position, w.Turn, e.Rule, orWord(e.Path, e.ID))
	for _, s := range w.Decision {
		fmt.Fprintf(&b, "  %s\n", s)
	}
	fmt.Fprintf(&b, "  %s\n", w.Agent)
	fmt.Fprintf(&b, "  %s\n", w.Delivery)
	switch {
	case e.Held == nil:
		b.WriteString("  Whether the model had its text in this request is unknown.\n")
	case *e.Held:
		b.WriteString("  The model had its text in this request.\n")
	default:
		b.WriteString("  The model did not have its text in this request.\n")
	}
	for _, f := range w.Findings {
		fmt.Fprintf(&b, "  %s: %s\n", f.Severity, f)
	}
	return b.String()
}

// agentFileOf adds to err, a rule the decision does not mention, the files of that name the
// agent reported loading by itself (a GEMINI.md, an @ import): no rule tasklog reads, so Why can
// say only that, and when, the agent loaded them. A file is of that name when its path without
// the extension is the name, or ends with "/" and the name.
func agentFileOf(ctx context.Context, er EventReader, task uuid.UUID, rule string, err error) error {
	l, rerr := readAudit(ctx, er, task)
	if rerr != nil || rule == "" {
		return err
	}
	var seen []string
	for _, ld := range l.loads {
		stem := strings.TrimSuffix(ld.p.Path, path.Ext(ld.p.Path))
		if stem != rule && !strings.HasSuffix(stem, "/"+rule) {
			continue
		}
		seen = append(seen, fmt.Sprintf("%s (%s, instructions_loaded at seq %d)", ld.p.Path, orWord(ld.p.Reason, "a load"), ld.seq))
	}
	if len(seen) == 0 {
		return err
	}
	return fmt.Errorf("%w; %s reported loading, by itself, %s: no rule file tasklog reads, so it decided nothing about it",
		err, orWord(l.agent, "the agent"), strings.Join(seen, ", "))
}
