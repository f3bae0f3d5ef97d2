package session

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/projections"
	"github.com/tasklog/tasklog/rules"
)

// LogReader is what a replay reads: the log and the blobs its rules snapshots reference.
// *store.DB is one. A replay reads the log a little ahead on a goroutine of its own while it
// reads blobs, so a LogReader must be safe for concurrent use, as every store.Store is.
type LogReader interface {
	EventReader
	BlobReader
}

// ReplayOptions turn a replay into a what-if. The zero value replays exactly what the log
// recorded.
type ReplayOptions struct {
	// Workspace, when set, replaces every recorded rules snapshot with the rule files read
	// from it once, before the replay starts.
	Workspace *rules.Workspace
	// Config, when set, replaces the engine configuration task_started recorded.
	Config *projections.Config
	// Progress, when set, is called after each event with its sequence number.
	Progress func(seq uint64)
}

// Change is one way a recomputed decision differs from the recorded one.
type Change struct {
	// Turn and Seq locate the decision.
	Turn int    `json:"turn"`
	Seq  uint64 `json:"seq"`
	// Rule is the rule's name ("" for a change that concerns no single rule).
	Rule string `json:"rule,omitempty"`
	// ID is the rule's id.
	ID string `json:"id,omitempty"`
	// Recorded and Now say what the log holds and what the replay computed: "included",
	// "excluded: no_match", a context, an engine version.
	Recorded string `json:"recorded"`
	Now      string `json:"now"`
	// Why is the recomputed reason, in words.
	Why string `json:"why,omitempty"`
}

// String is the change as one line a person can act on.
func (c Change) String() string {
	if c.Rule == "" {
		return fmt.Sprintf("turn %d: %s, now %s", c.Turn, c.Recorded, c.Now)
	}
	s := fmt.Sprintf("turn %d: rule %s was %s, now %s", c.Turn, c.Rule, c.Recorded, c.Now)
	if c.Why != "" {
		s += ": " + c.Why
	}
	return s
}

// Report is the result of replaying a task.
type Report struct {
	Task      uuid.UUID `json:"task"`
	Events    uint64    `json:"events"`
	Decisions int       `json:"decisions"`
	// Changed counts the decisions whose recomputation differs, and in an exact replay the
	// deliveries that differ from what their decisions give.
	Changed int `json:"changed"`
	// Changes lists every difference, in log order.
	Changes []Change `json:"changes"`
	// Deliveries counts the deliveries derived again from their decisions (an exact replay
	// only: under other rules or settings deliveries are not compared).
	Deliveries int `json:"deliveries"`
}

// OK reports whether every decision was recomputed identically.
func (r Report) OK() bool { return r.Changed == 0 }

// Tally says how many of what the replay compared differ: "1 of 5 decisions", or where it
// compared deliveries too, "6 of 7 decisions and deliveries".
func (r Report) Tally() string {
	if r.Deliveries == 0 {
		noun := "decisions"
		if r.Decisions == 1 {
			noun = "decision"
		}
		return fmt.Sprintf("%d of %d %s", r.Changed, r.Decisions, noun)
	}
	return fmt.Sprintf("%d of %d decisions and deliveries", r.Changed, r.Decisions+r.Deliveries)
}

// Replay folds a task's log again and, at every recorded decision, recomputes the decision from
// the events before it, the rules snapshot it referenced (or opts.Workspace) and the recorded
// configuration (or opts.Config), and compares. It does not check the hash chain; the store's
// Verify does.
func Replay(ctx context.Context, lr LogReader, task uuid.UUID, opts ReplayOptions) (Report, error) {
	return replay(lr, task, opts, lr.Events(ctx, task, 1))
}

// replay is Replay of the events evs, task's log from its first event; lr serves the rules
// snapshots' blobs.
func replay(lr LogReader, task uuid.UUID, opts ReplayOptions, evs iter.Seq2[events.Event, error]) (Report, error) {
	rep := Report{Task: task, Changes: []Change{}}
	var override []rules.File
	if opts.Workspace != nil {
		var err error
		if override, err = rules.Collect(*opts.Workspace); err != nil {
			return rep, fmt.Errorf("read what-if rules: %w", err)
		}
	}
	st := projections.New()
	r := replayer{lr: lr, override: override, useOverride: opts.Workspace != nil,
		outcomesOnly: opts.Workspace != nil || opts.Config != nil}
	exact := opts.Workspace == nil && opts.Config == nil
	// The decisions and deliveries are checked on a goroutine of their own, in the log's
	// order, while this loop folds the events after them; reading and decoding the log
	// overlaps both.
	c := startChecks(&r)
	defer c.end() // the checks' goroutine ends however the fold does
	for ev, err := range readAhead(evs, eventBytes) {
		if err != nil {
			return c.stop(rep, readFault(err))
		}
		rep.Events = ev.Seq
		if opts.Progress != nil {
			opts.Progress(ev.Seq)
		}
		if ev.Type == events.TypeTaskStarted && opts.Config != nil {
			if ev, err = withConfig(ev, *opts.Config); err != nil {
				return c.stop(rep, err)
			}
		}
		switch ev.Type {
		case events.TypeDecision:
			d, err := r.prepare(st, ev)
			if err != nil {
				return c.stop(rep, err)
			}
			if !c.send(d) {
				return c.stop(rep, nil)
			}
		case events.TypeDelivery, events.TypeInstructionsLoaded, events.TypeCompaction:
			// What reached the model changes only with these; a delivery is derived again
			// from its decision in an exact replay.
			d := check{ev: ev, delivery: ev.Type == events.TypeDelivery && exact}
			if d.delivery {
				d.agent = agentlog.Agent(st.Runtime().Name)
			}
			if !c.send(d) {
				return c.stop(rep, nil)
			}
		}
		if err := st.Apply(ev); err != nil {
			return c.stop(rep, err)
		}
	}
	return c.stop(rep, nil)
}

// withConfig returns a copy of a task_started event with another engine configuration; the log
// itself is never changed.
func withConfig(ev events.Event, cfg projections.Config) (events.Event, error) {
	p, err := ev.Payload()
	if err != nil {
		return ev, err
	}
	ts := *p.(*events.TaskStarted)
	if ts.Config, err = json.Marshal(cfg); err != nil {
		return ev, err
	}
	alt, err := events.New(&ts)
	if err != nil {
		return ev, err
	}
	ev.Data = alt.Data
	return ev, nil
}

// loadedRules is the rule set of the snapshot decisions last referenced. A replay reads the log
// in order and a decision uses the latest snapshot, so an older one is never needed again.
type loadedRules struct {
	key uint64
	rs  *rules.RuleSet
}

// replayer is what a replay carries from one decision to the next.
type replayer struct {
	lr LogReader
	// override, when useOverride is set, replaces every snapshot's rules; with outcomesOnly, a
	// decision whose every rule keeps its outcome is not a change (a what-if).
	override                  []rules.File
	useOverride, outcomesOnly bool
	cache                     loadedRules
	// The fields below are the checks' (see startChecks), the ones above the fold's.
	//
	// recorded follows the log's decisions in full; in a what-if, without the evidence of
	// their context (chain.nextOutcomes).
	recorded chain
	// deliveries follows what reached the model.
	deliveries *deliveryCheck
	// buf holds a recomputed decision's bytes, reused from one decision to the next, and delta
	// the decision as it is written against the one before, before it is encoded.
	buf   []byte
	delta events.Decision
	// lastContext is the context of the last decision the fold prepared; spareContexts hands
	// it, from the checks, the arrays of contexts nothing reads any more (see prepare).
	lastContext   rules.EvaluationContext
	spareContexts chan []rules.ContextPath
	// lastRules is the evaluation of the last decision recomputed, spareResults the results
	// array of the one before it: the next evaluation takes what did not change from the one
	// and is written in the other (see rules.RuleSet.EvaluateAfter).
	lastRules    rules.Decision
	spareResults []rules.Result
	// matches lends the arrays of the matches an evaluation replaced to the next (nothing else
	// holds them: a record copies what it keeps).
	matches matchArrays
}

// emptied empties s for reuse, its whole array, dropping what its elements point to.
func emptied[T any](s []T) []T {
	clear(s[:cap(s)])
	return s[:0]
}

// prepare is the part of recomputing the decision ev that reads the fold st, which moves on
// once it returns: the decision's head, the rule set of its snapshot (loaded when the snapshot
// changed) and its evaluation context, with the toggles.
func (r *replayer) prepare(st *projections.Task, ev events.Event) (check, error) {
	// The head is enough to recompute; the recorded decision is decoded only when the
	// recomputation's bytes differ (or in a what-if), which keeps a clean verify from decoding
	// every decision.
	head, err := events.Head(ev)
	if err != nil {
		return check{}, err
	}
	key := head.Snapshot
	if r.useOverride {
		key = 0
	}
	rs := r.cache.rs
	if rs == nil || r.cache.key != key {
		files := r.override
		if !r.useOverride {
			seq, snap := st.LastSnapshot()
			if seq != head.Snapshot {
				return check{}, fmt.Errorf("%s: decision references rules snapshot at seq %d, but the latest before it is at seq %d",
					ev, head.Snapshot, seq)
			}
			if files, err = LoadSnapshot(r.lr, snap); err != nil {
				return check{}, fmt.Errorf("%s: %w", ev, err)
			}
		}
		rs = rules.Load(files)
		r.cache = loadedRules{key: key, rs: rs}
	}
	// The last decision's context is never changed (its record copied what it needed): the
	// new one shares the evidence of the paths that did not change, and is written in the
	// array of a context before it that the checks are done with, when there is one.
	var spare []rules.ContextPath
	select {
	case spare = <-r.spareContexts:
	default:
	}
	ec, dropped := st.NextAfter(r.lastContext, spare)
	r.lastContext = ec
	return check{ev: ev, head: head, rs: rs, ec: ec, dropped: dropped, toggles: st.Toggles()}, nil
}

// recompute recomputes one decision from what prepare read. The recomputation is written as the
// recorded one is (in full, or against the decision before it) and compared byte for byte; a
// what-if compares the rules' outcomes alone.
func (r *replayer) recompute(d check) ([]Change, error) {
	ev, head, ec := d.ev, d.head, d.ec
	recorded := &r.recorded
	var err error
	r.matches.begin(true)
	// Decided as the engine that recorded it decided; a what-if with other rule files decides
	// as today's engine.
	engine := head.Engine
	if r.useOverride {
		engine = rules.EngineVersion
	}
	rd := d.rs.EvaluateLentAs(engine, r.lastRules, r.spareResults, r.matches.lend, ec, d.toggles)
	r.matches.written(r.lastRules.Results, rd.Results)
	// The record copies what it keeps of rd: its results array is the next one's spare.
	r.spareResults = emptied(r.lastRules.Results)
	r.lastRules = rd
	now := recordAfter(recorded.full, head.Turn, head.Snapshot, ec, d.dropped, rd, recordSpares{})
	if err := recorded.checkBase(ev, head.Base); err != nil {
		return nil, err
	}
	if r.outcomesOnly {
		// A what-if compares the rules' outcomes alone, not the bytes: the recorded decisions
		// are rebuilt without the evidence of their context, most of their bytes (so a delta
		// written against such a base never has the recorded bytes). Under other rules or settings
		// a detail (the pattern a miss names, the evidence of a path) may differ while every
		// rule keeps its outcome: for a what-if that turn did not change.
		was, err := recorded.nextOutcomes(ev)
		if err != nil {
			return nil, err
		}
		changes := slices.DeleteFunc(outcomeChanges(*was, now), func(c Change) bool { return c.Rule == "" })
		return atSeq(changes, ev.Seq), nil
	}
	written, ok := &now, true
	if head.Base != 0 {
		written, ok = &r.delta, events.WrittenInto(&r.delta, recorded.full, &now, head.Base)
	}
	if ok {
		r.buf, err = events.AppendData(r.buf[:0], written)
		r.delta = events.Decision{} // what it shares with now is not kept alive by it
		if err != nil {
			return nil, err
		}
		if bytes.Equal(r.buf, ev.Data) {
			recorded.seq, recorded.full = ev.Seq, &now
			return nil, nil
		}
	}
	full, err := recorded.next(ev)
	if err != nil {
		return nil, err
	}
	// Written the same way, equal decisions have equal bytes; a delta written otherwise (one
	// that repeats an unchanged outcome, say) is compared in full.
	if same, err := sameInFull(full, &now); err != nil || same {
		return nil, err
	}
	changes := compare(*full, now)
	if len(changes) == 0 {
		changes = []Change{{Turn: full.Turn, Recorded: "decision as recorded",
			Now: "differs in its evidence or diagnostics (same rules, same reasons)"}}
	}
	return atSeq(changes, ev.Seq), nil
}

// atSeq sets the sequence number of the decision every change is about; no changes is nil.
func atSeq(changes []Change, seq uint64) []Change {
	if len(changes) == 0 {
		return nil
	}
	for i := range changes {
		changes[i].Seq = seq
	}
	return changes
}

// sameInFull reports whether two full decisions encode to the same bytes.
func sameInFull(a, b *events.Decision) (bool, error) {
	ea, err := events.New(a)
	if err != nil {
		return false, err
	}
	eb, err := events.New(b)
	if err != nil {
		return false, err
	}
	return bytes.Equal(ea.Data, eb.Data), nil
}

// compare lists how two decisions of the same turn differ, rule by rule, in rule id order.
func compare(was, now events.Decision) []Change {
	var out []Change
	if was.Engine != now.Engine {
		out = append(out, Change{Turn: was.Turn, Recorded: "engine " + was.Engine, Now: "engine " + now.Engine})
	}
	out = append(out, outcomeChanges(was, now)...)
	if len(out) == 0 && !slices.EqualFunc(was.Context, now.Context, sameContextPath) {
		// Only a changed configuration moves the context; report it even if no rule changed.
		out = append(out, Change{Turn: was.Turn, Recorded: "context " + pathList(was.Context),
			Now: "context " + pathList(now.Context)})
	}
	return out
}

// outcomeChanges lists the rules whose outcome differs between two full decisions, by id.
func outcomeChanges(was, now events.Decision) []Change {
	var out []Change
	before, after := outcomes(was), outcomes(now)
	ids := make([]string, 0, len(before)+len(after))
	for id := range before {
		ids = append(ids, id)
	}
	for id := range after {
		if _, ok := before[id]; !ok {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	for _, id := range ids {
		b, a := before[id], after[id]
		if b.state == a.state {
			continue
		}
		o := a.RuleOutcome
		if a.state == "" {
			o = b.RuleOutcome
		}
		out = append(out, Change{Turn: was.Turn, Rule: o.Name, ID: id, Recorded: orGone(b.state),
			Now: orGone(a.state), Why: a.Detail})
	}
	return out
}

type outcome struct {
	events.RuleOutcome
	state string
}

func outcomes(d events.Decision) map[string]outcome {
	m := make(map[string]outcome, len(d.Included)+len(d.Excluded))
	for _, o := range d.Included {
		m[o.ID] = outcome{o, "included"}
	}
	for _, o := range d.Excluded {
		m[o.ID] = outcome{o, "excluded (" + o.Reason + ")"}
	}
	return m
}

func orGone(state string) string {
	if state == "" {
		return "absent"
	}
	return state
}

func sameContextPath(a, b events.ContextPath) bool { return a.Path == b.Path && a.Root == b.Root }

func pathList(ps []events.ContextPath) string {
	s := make([]string, len(ps))
	for i, p := range ps {
		s[i] = p.Path
	}
	return "[" + strings.Join(s, " ") + "]"
}
