package otelexport

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/audit"
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
)

// Options say what a trace may hold beyond the default.
type Options struct {
	// UserPrompts puts the text of the user's prompts on the prompt spans
	// (tasklog.prompt.text). Off by default: a prompt span carries only its size.
	UserPrompts bool
}

// Mapper folds a task's log, in order, into spans. Add returns the spans an event completes, so
// a live exporter sends each as soon as it is whole; Close ends the spans still open. The fold
// reads nothing but the events: no clock, no files.
type Mapper struct {
	task uuid.UUID
	opts Options
	// silent, while set, folds events without returning spans: a live exporter catching up on
	// a log whose earlier spans were sent by another process. It decodes only what the spans
	// to come need, and that only when they come (catchUp), so catching up on a long log
	// costs little more than reading it.
	silent bool
	// behind holds, while silent, the events not decoded yet that the next spans may need:
	// the current prompt's user message and its notes, and the decisions since the last one
	// written in full.
	behind struct {
		prompt    *events.Event
		notes     []events.Event
		decisions []events.Event
	}

	root     *Span
	rootDone bool
	prompt   *Span
	reqs     session.Requests
	full     *events.Decision // the last decision, in full
	fullSeq  uint64
	last     time.Time            // the latest event's time
	decided  map[uint64]time.Time // decision seq -> its time, for findings
	pending  []Event              // events of the root span before it is opened
}

// NewMapper starts the fold of a task's log.
func NewMapper(task uuid.UUID, opts Options) *Mapper {
	return &Mapper{task: task, opts: opts, decided: map[uint64]time.Time{}}
}

// Map is the whole fold: the spans of a log, with the audit's findings as events of the task's
// span, every span ended. Spans are in the order they complete; the root comes last.
func Map(task uuid.UUID, log []events.Event, findings []audit.Finding, opts Options) ([]Span, error) {
	m := NewMapper(task, opts)
	var out []Span
	for _, ev := range log {
		spans, err := m.Add(ev)
		if err != nil {
			return nil, err
		}
		out = append(out, spans...)
	}
	m.AddFindings(findings)
	return append(out, m.Close()...), nil
}

// SetSilent folds the following events without returning their spans (true) or returns them
// again (false).
func (m *Mapper) SetSilent(silent bool) {
	if m.silent && !silent {
		m.catchUp()
	}
	m.silent = silent
}

// skim folds an event while silent, decoding as little as it can: a task's start and an
// agent's stop (rare and small) are folded as usual; a prompt, its notes and the decisions are
// kept for catchUp.
func (m *Mapper) skim(ev events.Event) error {
	switch ev.Type {
	case events.TypeTaskStarted, events.TypeAgentStopped:
		if ev.Type == events.TypeAgentStopped {
			m.catchUp()
		}
		_, err := m.add(ev)
		return err
	case events.TypeUserMessage:
		m.reqs.Add(ev)
		m.behind.prompt, m.behind.notes = &ev, nil
		m.prompt = nil
	case events.TypeInstructionsLoaded, events.TypeToolCall, events.TypeCompaction:
		m.behind.notes = append(m.behind.notes, ev)
	case events.TypeDecision:
		h, err := events.Head(ev)
		if err != nil {
			return fmt.Errorf("trace of task %s: %w", m.task, err)
		}
		if h.Base == 0 {
			m.behind.decisions = m.behind.decisions[:0]
		}
		m.behind.decisions = append(m.behind.decisions, ev)
		m.decided[ev.Seq] = ev.Time
		m.reqs.Add(ev)
	}
	return nil
}

// catchUp decodes what skim kept: the current prompt's span with its notes, and the last
// decision in full.
func (m *Mapper) catchUp() {
	b := &m.behind
	if b.prompt != nil {
		m.openPrompt(*b.prompt)
	}
	for _, ev := range b.notes {
		m.add(ev)
	}
	for _, ev := range b.decisions {
		if pl, err := ev.Payload(); err == nil {
			if full, err := pl.(*events.Decision).Apply(m.full); err == nil {
				m.full, m.fullSeq = full, ev.Seq
			}
		}
	}
	b.prompt, b.notes, b.decisions = nil, nil, nil
}

func (m *Mapper) ids(kind string, seq uint64) (string, string) {
	id := spanID(m.task, kind, seq)
	return hexID(m.task[:]), hexID(id[:])
}

// rootID is the id of the task's span.
func (m *Mapper) rootID() string {
	_, id := m.ids(kindRoot, 0)
	return id
}

// parent is the span the current request's spans hang from: the prompt's, else the task's.
func (m *Mapper) parent() *Span {
	if m.prompt != nil {
		return m.prompt
	}
	return m.ensureRoot(m.last)
}

// ensureRoot opens the task's span at t when the log did not start with task_started.
func (m *Mapper) ensureRoot(t time.Time) *Span {
	if m.root == nil {
		trace, id := m.ids(kindRoot, 0)
		m.root = &Span{TraceID: trace, SpanID: id, Name: "invoke_agent", Start: t,
			Attrs: []Attr{{KeyOperationName, "invoke_agent"}, {KeyConversationID, m.task.String()}, {KeyTask, m.task.String()}}}
		m.root.Events = m.pending
		m.pending = nil
	}
	return m.root
}

// Add folds one event and returns the spans it completes.
func (m *Mapper) Add(ev events.Event) ([]Span, error) {
	if m.silent {
		err := m.skim(ev)
		if ev.Time.After(m.last) {
			m.last = ev.Time
		}
		return nil, err
	}
	out, err := m.add(ev)
	if ev.Time.After(m.last) {
		m.last = ev.Time
	}
	return out, err
}

func (m *Mapper) add(ev events.Event) ([]Span, error) {
	switch ev.Type {
	case events.TypeTaskStarted, events.TypeUserMessage, events.TypeDecision, events.TypeDelivery,
		events.TypeInstructionsLoaded, events.TypeToolCall, events.TypeCompaction, events.TypeAgentStopped:
	default:
		return nil, nil
	}
	pl, err := ev.Payload()
	if err != nil {
		return nil, fmt.Errorf("trace of task %s: %w", m.task, err)
	}
	switch p := pl.(type) {
	case *events.TaskStarted:
		m.taskStarted(ev, p)
	case *events.UserMessage:
		out := m.endPrompt(m.last)
		m.reqs.Add(ev)
		m.promptSpan(ev, p)
		return out, nil
	case *events.Decision:
		full, err := p.Apply(m.full)
		if err != nil {
			return nil, fmt.Errorf("trace of task %s: %s: %w", m.task, ev, err)
		}
		m.full, m.fullSeq = full, ev.Seq
		m.decided[ev.Seq] = ev.Time
		return []Span{m.decision(ev, full, m.reqs.Add(ev))}, nil
	case *events.Delivery:
		return []Span{m.delivery(ev, p)}, nil
	case *events.InstructionsLoaded:
		m.note(Event{Name: "tasklog.agent.loaded", Time: ev.Time, Attrs: sorted([]Attr{
			{KeyLoadPath, p.Path}, {KeyLoadMemory, p.MemoryType}, {KeyLoadReason, p.Reason}, {KeySeq, int64(ev.Seq)}})})
	case *events.ToolCall:
		m.note(Event{Name: "tasklog.tool_call", Time: ev.Time, Attrs: sorted([]Attr{
			{KeyToolName, p.Tool}, {KeySeq, int64(ev.Seq)}})})
	case *events.Compaction:
		m.note(Event{Name: "tasklog.compaction", Time: ev.Time, Attrs: sorted([]Attr{
			{KeyCompaction, p.Trigger}, {KeySeq, int64(ev.Seq)}})})
	case *events.AgentStopped:
		out := m.endPrompt(ev.Time)
		if p.Scope == events.StopTask {
			m.ensureRoot(ev.Time).Attrs = append(m.root.Attrs, Attr{KeyStopReason, p.Reason})
			out = append(out, m.endRoot(ev.Time)...)
		}
		return out, nil
	}
	return nil, nil
}

// openPrompt opens the span of a prompt skim kept, counted already.
func (m *Mapper) openPrompt(ev events.Event) {
	if pl, err := ev.Payload(); err == nil {
		m.promptSpan(ev, pl.(*events.UserMessage))
	}
}

// promptSpan opens the span of the prompt the fold counted last.
func (m *Mapper) promptSpan(ev events.Event, p *events.UserMessage) {
	trace, id := m.ids(kindPrompt, ev.Seq)
	n := m.reqs.Prompts()
	m.prompt = &Span{TraceID: trace, SpanID: id, Parent: m.ensureRoot(ev.Time).SpanID,
		Name: fmt.Sprintf("prompt %d", n), Start: ev.Time,
		Attrs: []Attr{{KeyPrompt, int64(n)}, {KeyPromptBytes, int64(len(p.Text))}, {KeySeq, int64(ev.Seq)}}}
	if m.opts.UserPrompts {
		m.prompt.Attrs = append(m.prompt.Attrs, Attr{KeyPromptText, p.Text})
	}
}

func (m *Mapper) taskStarted(ev events.Event, p *events.TaskStarted) {
	r := m.ensureRoot(ev.Time)
	r.Start = ev.Time
	conv := p.Session
	if conv == "" {
		conv = m.task.String()
	}
	r.Name = "invoke_agent " + orWord(p.Runtime.Name, "agent")
	r.Attrs = []Attr{{KeyOperationName, "invoke_agent"}, {KeyConversationID, conv}, {KeyTask, m.task.String()}}
	if p.Runtime.Name != "" {
		r.Attrs = append(r.Attrs, Attr{KeyAgentName, p.Runtime.Name})
	}
}

// note adds an event to the current prompt's span, else to the task's.
func (m *Mapper) note(e Event) {
	if m.prompt != nil {
		m.prompt.Events = append(m.prompt.Events, e)
		return
	}
	if m.root == nil {
		m.pending = append(m.pending, e)
		return
	}
	m.root.Events = append(m.root.Events, e)
}

func (m *Mapper) decision(ev events.Event, d *events.Decision, pos session.Position) Span {
	trace, id := m.ids(kindDecision, ev.Seq)
	attrs := []Attr{{KeyOperationName, "tasklog.decide"}, {KeyPrompt, int64(pos.Prompt)}, {KeyRequest, int64(pos.Request)},
		{KeyTurn, int64(d.Turn)}, {KeySeq, int64(ev.Seq)}, {KeyEngine, d.Engine},
		{KeyIncluded, ruleNames(d.Included)}, {KeyExcluded, int64(len(d.Excluded))}, {KeyContextPaths, int64(len(d.Context))}}
	if d.Model != "" {
		attrs = append(attrs, Attr{KeyRequestModel, d.Model})
	}
	if d.Provider != "" {
		attrs = append(attrs, Attr{KeyProviderName, d.Provider})
	}
	s := Span{TraceID: trace, SpanID: id, Parent: m.parent().SpanID, Name: "decide", Start: ev.Time, End: ev.Time, Attrs: sorted(attrs)}
	for _, o := range d.Included {
		s.Events = append(s.Events, ruleEvent(ev.Time, d, o, "included"))
	}
	for _, o := range d.Excluded {
		s.Events = append(s.Events, ruleEvent(ev.Time, d, o, "excluded"))
	}
	return s
}

// ruleEvent is one rule's outcome: its reason, the pattern that matched which path, and the
// events that put the path in the context.
func ruleEvent(t time.Time, d *events.Decision, o events.RuleOutcome, decision string) Event {
	attrs := []Attr{{KeyRuleID, o.ID}, {KeyRuleName, o.Name}, {KeyRuleDecision, decision}, {KeyRuleReason, o.Reason}}
	if o.Path != "" {
		attrs = append(attrs, Attr{KeyRuleFile, o.Path})
	}
	if len(o.Matches) > 0 {
		mt := o.Matches[0]
		if mt.Pattern != "" {
			attrs = append(attrs, Attr{KeyRulePattern, mt.Pattern})
		}
		if mt.Path != "" {
			attrs = append(attrs, Attr{KeyRulePath, mt.Path})
			var seqs []int64
			for _, src := range events.SourcesOf(d.Context, mt.Root, mt.Path) {
				seqs = append(seqs, int64(src.Seq))
			}
			if len(seqs) > 0 {
				attrs = append(attrs, Attr{KeyRuleEvidence, seqs})
			}
		}
	}
	return Event{Name: "tasklog.rule", Time: t, Attrs: sorted(attrs)}
}

func (m *Mapper) delivery(ev events.Event, p *events.Delivery) Span {
	trace, id := m.ids(kindDelivery, ev.Seq)
	_, parent := m.ids(kindDecision, p.Decision)
	names := make([]string, len(p.Rules))
	for i, r := range p.Rules {
		names[i] = r.Name
	}
	return Span{TraceID: trace, SpanID: id, Parent: parent, Name: "deliver " + p.Channel, Start: ev.Time, End: ev.Time,
		Attrs: sorted([]Attr{{KeyOperationName, "tasklog.deliver"}, {KeyChannel, p.Channel}, {KeyHook, p.Hook}, {KeyForm, p.Form},
			{KeyBytes, int64(p.Bytes)}, {KeySHA256, p.SHA256}, {KeyDelivered, names}, {KeyDecisionSeq, int64(p.Decision)},
			{KeySeq, int64(ev.Seq)}})}
}

// AddFindings adds the audit's findings as events of the task's span, each at the time of the
// request it was first seen at (the task's start for a finding about the rule files alone).
func (m *Mapper) AddFindings(fs []audit.Finding) {
	r := m.ensureRoot(m.last)
	for _, f := range fs {
		t := r.Start
		attrs := []Attr{{KeyFindingKind, string(f.Kind)}, {KeyFindingSev, string(f.Severity)}, {KeyFindingRule, f.Rule},
			{KeyRuleID, f.ID}, {KeyFindingText, f.Evidence}}
		if f.At != nil {
			if dt, ok := m.decided[f.At.Seq]; ok {
				t = dt
			}
			attrs = append(attrs, Attr{KeyFindingPrompt, int64(f.At.Prompt)}, Attr{KeyRequest, int64(f.At.Request)},
				Attr{KeyDecisionSeq, int64(f.At.Seq)})
		}
		r.Events = append(r.Events, Event{Name: "tasklog.audit.finding", Time: t, Attrs: sorted(attrs)})
	}
}

func (m *Mapper) endPrompt(t time.Time) []Span {
	if m.prompt == nil {
		return nil
	}
	s := *m.prompt
	m.prompt = nil
	s.End = maxTime(s.Start, t)
	s.Attrs = sorted(s.Attrs)
	return []Span{s}
}

func (m *Mapper) endRoot(t time.Time) []Span {
	if m.root == nil || m.rootDone {
		return nil
	}
	m.rootDone = true
	s := *m.root
	s.End = maxTime(s.Start, t)
	s.Attrs = sorted(s.Attrs)
	return []Span{s}
}

// Close ends the spans still open at the latest event's time and returns them: the current
// prompt's, then the task's. Spans closed before are not returned again.
func (m *Mapper) Close() []Span {
	m.catchUp()
	out := m.endPrompt(m.last)
	if m.root == nil && len(m.pending) == 0 {
		return out
	}
	m.ensureRoot(m.last)
	return append(out, m.endRoot(m.last)...)
}

func ruleNames(os []events.RuleOutcome) []string {
	names := make([]string, len(os))
	for i, o := range os {
		names[i] = o.Name
	}
	return names
}

// sorted sorts attributes by key, dropping empty strings (an attribute without a value says
// nothing).
func sorted(attrs []Attr) []Attr {
	attrs = slices.DeleteFunc(attrs, func(a Attr) bool { s, ok := a.Value.(string); return ok && s == "" })
	slices.SortStableFunc(attrs, func(a, b Attr) int { return strings.Compare(a.Key, b.Key) })
	return attrs
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func orWord(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}
