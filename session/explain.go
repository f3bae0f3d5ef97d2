package session

import (
	"cmp"
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/projections"
	"github.com/tasklog/tasklog/rules"
)

// EventReader reads a task's log; *store.DB is one.
type EventReader interface {
	Events(ctx context.Context, task uuid.UUID, from uint64) iter.Seq2[events.Event, error]
}

// Recorded is a decision of the log, in full.
type Recorded struct {
	// Seq is the decision event's sequence number.
	Seq uint64
	// Decision is the decision in full, rebuilt when the log holds it written against the one
	// before it.
	Decision events.Decision
	// Position is the decision's prompt and request.
	Position Position
	// Requests numbers the log's decisions up to this one at least, to name the requests of
	// its evidence.
	Requests *Requests
}

// chain follows a log's decisions in order and rebuilds each in full.
type chain struct {
	seq  uint64           // the last decision's sequence number
	full *events.Decision // its full form
}

// checkBase fails for a decision written against anything but the decision before it.
func (c *chain) checkBase(ev events.Event, base uint64) error {
	if base != 0 && base != c.seq {
		return fmt.Errorf("%s: %w: written against seq %d, but the decision before it is at seq %d",
			ev, events.ErrInvalid, base, c.seq)
	}
	return nil
}

// next decodes the decision event ev, the first decision after the chain's, and rebuilds it.
func (c *chain) next(ev events.Event) (*events.Decision, error) {
	p, err := ev.Payload()
	if err != nil {
		return nil, err
	}
	return c.resolve(ev, p.(*events.Decision))
}

// nextOutcomes is next without the evidence of the decision's context (events.DecisionOutcomes):
// the decision it rebuilds has every outcome and every context path, so a delta is still
// checked against its base (a gone path the base lacks, paths out of order), and each path's
// evidence is the last one read in full, or none.
func (c *chain) nextOutcomes(ev events.Event) (*events.Decision, error) {
	d, err := events.DecisionOutcomes(ev)
	if err != nil {
		return nil, err
	}
	return c.resolve(ev, d)
}

func (c *chain) resolve(ev events.Event, d *events.Decision) (*events.Decision, error) {
	if err := c.checkBase(ev, d.Base); err != nil {
		return nil, err
	}
	full, err := d.Apply(c.full)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ev, err)
	}
	c.seq, c.full = ev.Seq, full
	return full, nil
}

// Decisions reads every decision recorded in a task's log, in order, in full.
func Decisions(ctx context.Context, er EventReader, task uuid.UUID) ([]Recorded, error) {
	return decisions(ctx, er, task, (*chain).next)
}

// DecisionOutcomes is Decisions without each decision's context and gone paths (Context and
// Gone are nil): the rules' outcomes, the diagnostics and the counts, for a reader that does
// not look at the evidence, without decoding most of each
// decision's bytes (events.DecisionOutcomes). A delta is checked against its base as
// Decisions checks it.
func DecisionOutcomes(ctx context.Context, er EventReader, task uuid.UUID) ([]Recorded, error) {
	return decisions(ctx, er, task, func(c *chain, ev events.Event) (*events.Decision, error) {
		d, err := c.nextOutcomes(ev)
		if err != nil {
			return nil, err
		}
		return lessContext(d), nil
	})
}

// lessContext is a copy of d without its context and gone paths; d, which a chain keeps as
// the base of the next delta, is left as it is.
func lessContext(d *events.Decision) *events.Decision {
	out := *d
	out.Context, out.Gone = nil, nil
	return &out
}

// decisions reads every decision recorded in a task's log, in order, each rebuilt by next.
func decisions(ctx context.Context, er EventReader, task uuid.UUID, next func(*chain, events.Event) (*events.Decision, error)) ([]Recorded, error) {
	var out []Recorded
	var c chain
	reqs := &Requests{}
	for ev, err := range er.Events(ctx, task, 1) {
		if err != nil {
			return nil, err
		}
		if ev.Type == events.TypeUserMessage {
			reqs.Add(ev)
		}
		if ev.Type != events.TypeDecision {
			continue
		}
		d, err := next(&c, ev)
		if err != nil {
			return nil, err
		}
		out = append(out, Recorded{Seq: ev.Seq, Decision: *d, Position: reqs.Add(ev), Requests: reqs})
	}
	return out, nil
}

// DecisionAt reads the decision recorded for a turn, in full. Decisions are told apart by their
// head; only the asked one and those it is written against, back to the last one written in
// full, are decoded.
func DecisionAt(ctx context.Context, er EventReader, task uuid.UUID, turn int) (Recorded, error) {
	n := 0
	var pending []events.Event // the decisions since the last full one
	var prev uint64
	reqs := &Requests{}
	for ev, err := range er.Events(ctx, task, 1) {
		if err != nil {
			return Recorded{}, err
		}
		if ev.Type == events.TypeUserMessage {
			reqs.Add(ev)
		}
		if ev.Type != events.TypeDecision {
			continue
		}
		n++
		pos := reqs.Add(ev)
		h, err := events.Head(ev)
		if err != nil {
			return Recorded{}, err
		}
		if err := (&chain{seq: prev}).checkBase(ev, h.Base); err != nil {
			return Recorded{}, err
		}
		if h.Base == 0 {
			pending = pending[:0]
		}
		pending = append(pending, ev)
		prev = ev.Seq
		if h.Turn != turn {
			continue
		}
		var c chain
		var d *events.Decision
		for _, pe := range pending {
			if d, err = c.next(pe); err != nil {
				return Recorded{}, err
			}
		}
		return Recorded{Seq: ev.Seq, Decision: *d, Position: pos, Requests: reqs}, nil
	}
	return Recorded{}, fmt.Errorf("task %s turn %d: %w (the task has %d decisions)", task, turn, ErrNoDecision, n)
}

// Explanation says why one rule was or was not in the prompt at a turn.
type Explanation struct {
	Turn int
	// Position is the turn's prompt and request.
	Position Position
	Seq      uint64
	Included bool
	Rule     events.RuleOutcome
	// Context is the decision's candidate paths with their evidence: where an included rule's
	// matched paths came from, and an excluded rule's nearest miss. A nil Context leaves both out.
	Context []events.ContextPath
	// Unconfirmed counts the guessed paths (from prose or shell commands) the decision left out
	// because the workspace did not confirm them when they were recorded.
	Unconfirmed int `json:"unconfirmed,omitempty"`
	// Deliveries are the deliveries that put the rule in front of the model through an agent's
	// hooks, up to this decision's own (Explain fills them in; empty for a task no hook drove
	// or a rule never delivered, such as one the agent loads itself).
	Deliveries []DeliveryNote
	// Requests names the requests of the evidence; nil names them by turn only.
	Requests *Requests `json:"-"`
}

// DeliveryNote is one delivery of a rule: where it is in the log and what it was.
type DeliveryNote struct {
	Seq  uint64
	Turn int
	// Position is the request the delivery was delivered into: its decision's.
	Position Position
	Delivery events.Delivery
}

// Explain finds the rule, by id or by name, in the decision of a turn. A name several rules
// share (a shadowed rule and its winner) explains the included one first.
func Explain(ctx context.Context, er EventReader, task uuid.UUID, turn int, rule string) (Explanation, error) {
	rec, err := DecisionAt(ctx, er, task, turn)
	if err != nil {
		return Explanation{}, err
	}
	x, err := explainIn(rec, rule)
	if err != nil {
		return x, err
	}
	x.Deliveries, err = deliveriesOf(ctx, er, task, rec.Seq, x.Rule.ID, rec.Requests)
	return x, err
}

// deliveriesOf lists the deliveries that carried the rule, from the start of the log up to the
// decision after the one at seq (a decision's delivery follows it).
func deliveriesOf(ctx context.Context, er EventReader, task uuid.UUID, seq uint64, ruleID string, reqs *Requests) ([]DeliveryNote, error) {
	var out []DeliveryNote
	for ev, err := range er.Events(ctx, task, 1) {
		if err != nil {
			return nil, err
		}
		if ev.Type == events.TypeDecision && ev.Seq > seq {
			break
		}
		if ev.Type != events.TypeDelivery {
			continue
		}
		p, err := ev.Payload()
		if err != nil {
			return nil, err
		}
		d := p.(*events.Delivery)
		for _, r := range d.Rules {
			if r.ID == ruleID {
				pos, _ := reqs.OfDecision(d.Decision)
				out = append(out, DeliveryNote{Seq: ev.Seq, Turn: ev.Turn, Position: pos, Delivery: *d})
				break
			}
		}
	}
	return out, nil
}

// Explain is the package-level Explain on this session's task.
func (s *Session) Explain(ctx context.Context, turn int, rule string) (Explanation, error) {
	return Explain(ctx, s.db, s.task, turn, rule)
}

func explainIn(rec Recorded, rule string) (Explanation, error) {
	d := rec.Decision
	x := Explanation{Turn: d.Turn, Position: rec.Position, Seq: rec.Seq, Context: d.Context, Requests: rec.Requests}
	for _, c := range d.Dropped {
		if c.Name == projections.ReasonUnconfirmed {
			x.Unconfirmed = c.N
		}
	}
	for _, pass := range []func(o events.RuleOutcome) bool{
		func(o events.RuleOutcome) bool { return o.ID == rule },
		func(o events.RuleOutcome) bool { return o.Name == rule },
	} {
		for _, o := range d.Included {
			if pass(o) {
				x.Included, x.Rule = true, o
				return x, nil
			}
		}
		for _, o := range d.Excluded {
			if pass(o) {
				x.Rule = o
				return x, nil
			}
		}
	}
	return x, fmt.Errorf("%s (turn %d): %w: %q; its rules: %s", rec.Position, d.Turn, ErrNoRule, rule, ruleNames(d))
}

// ruleNames lists the rules of a decision for a reader to pick one: by name, sorted, a name
// that several rules share followed by each one's id.
func ruleNames(d events.Decision) string {
	all := slices.Concat(d.Included, d.Excluded)
	count := map[string]int{}
	for _, o := range all {
		count[o.Name]++
	}
	names := make([]string, 0, len(all))
	for _, o := range all {
		if count[o.Name] > 1 {
			names = append(names, fmt.Sprintf("%s (%s)", o.Name, o.ID))
		} else {
			names = append(names, o.Name)
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		return cmp.Or(cmp.Compare(strings.ToLower(a), strings.ToLower(b)), cmp.Compare(a, b))
	})
	return strings.Join(names, ", ")
}

// String explains in sentences: for an included rule, each condition with the pattern, the
// path and the events that put the path into the context; for an excluded one, the reason and
// the paths that were there.
func (x Explanation) String() string {
	var b strings.Builder
	r := x.Rule
	verdict := "excluded"
	if x.Included {
		verdict = "included"
	}
	fmt.Fprintf(&b, "%s: %s (%s) was %s: %s", x.moment(), r.Name, r.ID, verdict, r.Reason)
	if r.Detail != "" {
		fmt.Fprintf(&b, " — %s", r.Detail)
	}
	b.WriteString("\n")
	for _, m := range r.Matches {
		if m.Pattern == "" {
			fmt.Fprintf(&b, "  %s passed\n", m.Condition)
			continue
		}
		if m.Condition == rules.MatchMentioned {
			fmt.Fprintf(&b, "  its file %s was mentioned", m.Path)
		} else {
			fmt.Fprintf(&b, "  %s %s matched %s", m.Condition, m.Pattern, m.Path)
		}
		for i, s := range events.SourcesOf(x.Context, m.Root, m.Path) {
			sep := ", from "
			if i > 0 {
				sep = "; "
			}
			fmt.Fprintf(&b, "%s%s", sep, x.Requests.Source(s))
		}
		b.WriteString("\n")
	}
	for _, n := range x.Deliveries {
		d := n.Delivery
		how := "its text"
		if d.Form == events.FormNames {
			how = "its name and rule:// address"
		}
		when := "with this decision"
		if d.Decision != x.Seq {
			when = fmt.Sprintf("with the decision at seq %d", d.Decision)
		}
		fmt.Fprintf(&b, "  delivered to the model %s: %s via %s (%s hook), %d bytes, at seq %d, into %s\n",
			when, how, d.Channel, d.Hook, d.Bytes, n.Seq, x.Requests.name(n.Position, n.Turn))
	}
	if !x.Included && x.Context != nil && r.Reason != "shadowed" && r.Reason != "toggled_off" {
		if len(x.Context) == 0 {
			b.WriteString("  the context had no candidate paths\n")
		} else {
			paths := make([]string, len(x.Context))
			for i, p := range x.Context {
				paths[i] = p.Path
			}
			fmt.Fprintf(&b, "  candidate paths were: %s\n", strings.Join(paths, ", "))
		}
		if x.Unconfirmed > 0 {
			fmt.Fprintf(&b, "  %d guessed %s left out: the workspace did not confirm %s (unconfirmed)\n",
				x.Unconfirmed, pick(x.Unconfirmed, "path was", "paths were"), pick(x.Unconfirmed, "it", "them"))
		}
	}
	return b.String()
}

// SourceString describes a piece of evidence by its turn: "tool_call write_to_file at seq 41,
// turn 6". [Requests.Source] names the request instead.
func SourceString(s events.Source) string {
	return (*Requests)(nil).Source(s)
}

// Source describes a piece of evidence with the request it leads up to: "tool_call
// write_to_file at seq 41, prompt 2, request 3"; a nil Requests names the turn.
func (r *Requests) Source(s events.Source) string {
	kind := s.Kind
	if s.Detail != "" {
		kind += " " + s.Detail
	}
	return fmt.Sprintf("%s at seq %d, %s", kind, s.Seq, r.turnName(s.Turn))
}

// turnName is a turn's "prompt P, request R", or "turn N" for a nil Requests or an unknown turn.
func (r *Requests) turnName(turn int) string {
	if r != nil {
		if p := r.At(turn); p.Request > 0 {
			return p.String()
		}
	}
	return fmt.Sprintf("turn %d", turn)
}

// name is a known position's "prompt P, request R", else "turn N".
func (r *Requests) name(p Position, turn int) string {
	if r != nil && p.Request > 0 {
		return p.String()
	}
	return fmt.Sprintf("turn %d", turn)
}

// moment names the explanation's decision: "prompt 1, request 2 (turn 2)", or "turn 2" when its
// position is unknown.
func (x Explanation) moment() string {
	if x.Position.Request > 0 {
		return fmt.Sprintf("%s (turn %d)", x.Position, x.Turn)
	}
	return fmt.Sprintf("turn %d", x.Turn)
}

func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
