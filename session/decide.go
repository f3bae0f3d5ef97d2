package session

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"maps"
	"slices"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/projections"
	"github.com/tasklog/tasklog/rules"
)

// Decision is the result of Decide: which rules go into the prompt, why, and the prompt text.
type Decision struct {
	// Turn is the decision's turn.
	Turn int
	// Seq is the sequence number of the decision event in the log.
	Seq uint64
	// rec is the decision in full, kept by the session as the base of the next one: never
	// handed out, only copied (see Recorded).
	rec *events.Decision
	// Rules is the rule engine's full result, for rendering. Its Results and Applied below are
	// the caller's to reorder or edit; what their elements point to (matches, sources) may be
	// shared with other decisions of the session: read it only.
	Rules rules.Decision
	// Prompt is the rules section in Cline's format (`<path>\n<body>` blocks).
	Prompt string
	// Tagged is the rules section as <generic-rules>/<domain-rules> blocks.
	Tagged string
	// Applied is the "conditional rules applied" list Cline shows its users.
	Applied []rules.AppliedRule
}

// Decide is called when the runtime builds a prompt. It reads the rule files, records a
// rules_snapshot when their contents differ from the last one in the log (contents go to
// content-addressed blobs, written once), evaluates the rules against the context folded from
// the log, and records the decision. The snapshot and the decision are one atomic append: after
// a crash the log holds both or neither.
func (s *Session) Decide(ctx context.Context) (*Decision, error) {
	return s.decide(ctx, nil, nil)
}

// DecideInto is Decide writing the decision into d, a decision of this session or another that
// the caller is done with: its Results and Applied arrays are filled again rather than made
// anew (a decision's own copies, as Decide's are, and as much garbage as a decision otherwise
// makes of its own). A runtime that builds one prompt at a time hands its last decision back.
// Everything d held is replaced; what the caller kept of it (its slices, or a copy of d, whose
// Recorded reads the same record) must no longer be in use.
// On an error d holds nothing to use (its arrays may have been written before the append
// failed), but it can be handed to DecideInto again.
func (s *Session) DecideInto(ctx context.Context, d *Decision) error {
	if d == nil {
		return errors.New("DecideInto: nil decision")
	}
	_, err := s.decide(ctx, d, nil)
	return err
}

// decide is Decide; then, when set, is given the decision before it is written (its Seq is the
// one it will have) and returns events to append after it in the same batch, so that the
// decision and what follows from it are one commit. The events' ids are kept when set.
func (s *Session) decide(ctx context.Context, into *Decision, then func(d *Decision) ([]events.Event, error)) (*Decision, error) {
	files, err := s.reader.Collect(s.ws)
	if err != nil {
		return nil, fmt.Errorf("task %s: read rule files: %w", s.task, err)
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	return s.decideLocked(ctx, files, nil, into, then)
}

// decideLocked is decide with the rule files read and s.mu held. pre are events that go first
// in the decision's batch, folded into the projection already (their Seq set to follow the
// log's head): the decision sees them, and they are written in its commit. If that fails the
// projection is ahead of the log, and the session is stale (ErrStale).
func (s *Session) decideLocked(ctx context.Context, files []rules.File, pre []events.Event, into *Decision,
	then func(d *Decision) ([]events.Event, error)) (*Decision, error) {
	var err error
	var payloads []events.Payload
	snapSeq := s.state.LastSnapshotSeq()
	// The files this session collected last time are in the snapshot it recorded then; the
	// same files again need no comparison with the log.
	if snapSeq == 0 || snapSeq != s.filesSeq || !slices.EqualFunc(files, s.files, sameFile) {
		snap, blobs := snapshotOf(files)
		_, lastFiles := s.state.LastSnapshot()
		if snapSeq == 0 || !slices.Equal(lastFiles, snap.Files) {
			if _, err := s.db.PutBlobs(blobs); err != nil {
				return nil, fmt.Errorf("task %s: store rule contents: %w", s.task, err)
			}
			payloads = append(payloads, snap)
			snapSeq = s.head + uint64(len(pre)) + 1
		}
	}
	rs := s.ruleSet(snapSeq, files)
	version := s.state.ContextVersion()
	// Nothing the context is built from changed since the last evaluation: it is that one's.
	kept := s.evaluated.state == s.state && s.evaluated.version == version
	ec, dropped := s.evaluated.ec, s.evaluated.dropped
	if !kept {
		// The last evaluation's context is never changed (matches and records share its
		// evidence): the new one shares the evidence of the paths that did not change with it.
		ec, dropped = s.state.NextAfter(s.evaluated.ec, take(&s.spareContext))
	}
	// The last evaluation's copy of the toggles, while it is current (the evaluation keeps it).
	toggles := s.evaluated.toggles
	if !s.state.TogglesAre(toggles) {
		toggles = rules.Toggles(s.state.Toggles())
	}
	turn := s.state.Turn()
	// holdsLast: the caller hands back the decision that holds the last record (matchArrays).
	holdsLast := into != nil && s.last != nil && into.rec == s.last
	s.matches.begin(holdsLast)
	ev, rec, reused := s.evaluate(rs, ec, kept, toggles, turn, snapSeq, dropped)
	ev.state, ev.version, ev.dropped = s.state, version, dropped
	rd := ev.rd
	at := len(payloads) // the decision's place in the batch
	// The batch's array is the session's: nothing keeps the events once they are appended (a
	// store keeps no reference to them, and the fold takes them by value).
	evs := slices.Grow(s.batch[:0], at+1)[:at+1]
	defer func() { s.batch = clearedBatch(evs) }()
	for i, p := range payloads {
		if evs[i], err = events.New(p); err != nil {
			return nil, err
		}
	}
	var delta bool
	if evs[at], delta, err = s.encodeDecision(&rec, turn); err != nil {
		return nil, err
	}
	// The caller may reorder or replace the elements of what it gets: the evaluation the next
	// decision may take again (see evaluate) stays as it was recorded.
	d := into
	if d == nil {
		d = new(Decision)
	}
	// Handed back, and nothing else got the last record: once this decision is written,
	// nothing holds that record.
	handedBack := holdsLast && s.lastPrivate
	results, applied := d.Rules.Results, d.Applied
	*d = Decision{Turn: turn, Seq: s.head + uint64(len(pre)+at+1), rec: &rec, Rules: rd}
	d.Applied, d.Rules.Results = refill(applied, ev.applied), refill(results, rd.Results)
	if then != nil {
		more, err := then(d)
		if err != nil {
			return nil, err
		}
		evs = append(evs, more...)
	}
	batch := evs
	if len(pre) > 0 {
		batch = append(pre[:len(pre):len(pre)], evs...)
	}
	res, err := s.appendEvents(ctx, batch, len(pre))
	if err != nil {
		return nil, err
	}
	if want := d.Seq + uint64(len(evs)-at-1); res.Last != want {
		return nil, fmt.Errorf("task %s: the decision's batch ended at seq %d, not %d", s.task, res.Last, want)
	}
	// The record before this one is nobody's when the decision handed back held it: its context
	// array serves the next record, unless this record shares it (the last one taken again
	// whole). A record is private (only the decision it was written into holds it) when it
	// shares no context array, or shares that of a record nobody holds any more. A private
	// record may still share the outcome lists of one a caller holds (its outcomes were that
	// one's): lastOwns tells which lists are its own, and only those serve the next record.
	var prevContext []events.ContextPath
	var prevIn, prevOut []events.RuleOutcome
	if s.last != nil {
		prevContext, prevIn, prevOut = s.last.Context, s.last.Included, s.last.Excluded
	}
	if handedBack {
		// So are the outcome lists it made for itself, unless this record shares them.
		recycle(&s.spareRecord.context, prevContext, rec.Context)
		if s.lastOwns[0] {
			recycle(&s.spareRecord.included, prevIn, rec.Included)
		}
		if s.lastOwns[1] {
			recycle(&s.spareRecord.excluded, prevOut, rec.Excluded)
		}
	}
	// The next decision is written against this one. The caller gets copies (Recorded), so
	// nothing it does can change the base. A list of this record's that is not the last
	// record's array is its own (recordAfter shares the last record's or makes one).
	shares := sameBacking(prevContext, rec.Context)
	s.last, s.lastSeq, s.lastPrivate = &rec, d.Seq, into != nil && (!shares || handedBack)
	s.lastOwns = [2]bool{cap(rec.Included) > 0 && !sameBacking(prevIn, rec.Included), cap(rec.Excluded) > 0 && !sameBacking(prevOut, rec.Excluded)}
	if size := len(evs[at].Data); delta {
		s.deltas.turns++
		s.deltas.bytes += size
	} else {
		s.deltas = deltaChain{full: size}
	}
	s.files, s.filesSeq = files, snapSeq
	s.matches.written(s.evaluated.rd.Results, rd.Results)
	// The last evaluation's results array is nobody's now, unless this one took it again; so
	// are the last context's paths array (the decisions and records copy or share only what its
	// elements point to) and its list of conditional rules applied (each decision has a copy of
	// its own).
	recycle(&s.spare, s.evaluated.rd.Results, rd.Results)
	recycle(&s.spareContext, s.evaluated.ec.Paths, ev.ec.Paths)
	recycle(&s.spareApplied, s.evaluated.applied, ev.applied)
	s.evaluated = ev
	if reused && s.rendered.rs == rs {
		d.Prompt, d.Tagged = s.rendered.prompt, s.rendered.tagged
	} else {
		d.Prompt, d.Tagged = s.render(rs, rd)
	}
	return d, nil
}

// maxKeptBatch bounds the events array a session keeps for its next decision's batch.
const maxKeptBatch = 64

// clearedBatch is evs emptied, for the next decision's batch, or nil when it is large.
func clearedBatch(evs []events.Event) []events.Event {
	if cap(evs) > maxKeptBatch {
		return nil
	}
	clear(evs[:cap(evs)])
	return evs[:0]
}

// refill is slices.Clone(from), in to's array when there is one (grown if it is too short).
func refill[T any](to, from []T) []T {
	if from == nil || to == nil {
		return slices.Clone(from)
	}
	return append(to[:0], from...)
}

// evaluated is the last evaluation a decision of this session recorded, and what it was made
// from: the rule set, the context and the toggles; and the context's dropped counts, with the
// projection and its ContextVersion they were built at, so that the next decision takes them
// again while the version stays.
type evaluated struct {
	state   *projections.Task
	version uint64
	dropped []events.Count
	rs      *rules.RuleSet
	ec      rules.EvaluationContext
	toggles rules.Toggles
	rd      rules.Decision
	applied []rules.AppliedRule
}

// evaluate decides rs against ec and builds the decision's record. Evaluation is pure, so when
// the rule set, the context and the toggles are those of the last decision recorded, so is its
// outcome: that decision's evaluation and record are taken again, with this turn and this
// context's dropped counts. A prompt is mostly built with nothing new since the last one (a
// retry, a follow-up with no tool call between), and this is then most of a decision's work
// and of its garbage. With the same paths and other evidence, the outcomes are the last ones
// too (see resourced). reused reports that the outcomes are the last decision's, so that its
// rendering is too. kept tells that ec is the last evaluation's own, taken again because the
// projection's ContextVersion did not change: it needs no comparison.
func (s *Session) evaluate(rs *rules.RuleSet, ec rules.EvaluationContext, kept bool, toggles rules.Toggles, turn int, snapSeq uint64,
	dropped []events.Count) (ev evaluated, rec events.Decision, reused bool) {
	// s.evaluated and s.last are set together, and a rule set is loaded again whenever the
	// snapshot changes: the same rule set is the same snapshot, and a last decision.
	if last := s.evaluated; last.rs == rs && (kept || sameContext(last.ec, ec)) && maps.Equal(last.toggles, toggles) {
		rec = *s.last
		rec.Turn, rec.Dropped = turn, dropped
		// The last record's slices are shared, never changed: Recorded hands out copies.
		return last, rec, true
	}
	if last := s.evaluated; last.rs == rs && s.last != nil && samePaths(last.ec, ec) && maps.Equal(last.toggles, toggles) &&
		rs.SameMentionEvidence(last.ec, ec) {
		return s.resourced(ec), s.recordResourced(ec, turn, dropped, take(&s.spareRecord.context)), true
	}
	// The last evaluation's matches that did not change are taken again, and the results are
	// written in the spare array (see spareResults), when there is one.
	var last rules.Decision
	if s.evaluated.rs == rs {
		last = s.evaluated.rd
	}
	rd := rs.EvaluateLent(last, take(&s.spare), s.matches.lend, ec, toggles)
	ev = evaluated{rs: rs, ec: ec, toggles: toggles, rd: rd, applied: rd.ConditionalRulesAppliedInto(last, s.evaluated.applied, take(&s.spareApplied))}
	spares := s.spareRecord
	s.spareRecord = recordSpares{}
	return ev, recordAfter(s.last, turn, snapSeq, ec, dropped, rd, spares), false
}

// contextArray is an array of n context paths, spare's when it is large enough; its elements
// are all set by the caller.
func contextArray(spare []events.ContextPath, n int) []events.ContextPath {
	if n > 0 && cap(spare) >= n {
		return spare[:n:n]
	}
	return make([]events.ContextPath, n) // not nil when n is 0: an empty context is recorded as []
}

// samePaths reports whether two evaluation contexts hold the same candidate paths in the same
// order, and are equal in everything else an evaluation reads but the paths' evidence (of which
// only that of a manual rule's own file changes an outcome: see rules.SameMentionEvidence). The
// evidence (which events brought a path) changes at nearly every turn, the paths seldom: a tool
// call on a file already in the context adds a source, nothing else.
func samePaths(a, b rules.EvaluationContext) bool {
	return a.Mode == b.Mode && a.Provider == b.Provider && a.Model == b.Model && a.OS == b.OS &&
		slices.Equal(a.Rules, b.Rules) &&
		slices.EqualFunc(a.Paths, b.Paths, func(p, q rules.ContextPath) bool { return p.Path == q.Path && p.Root == q.Root })
}

// resourced is the last evaluation with ec's evidence: ec has the last context's paths (see
// samePaths) and the rule set and toggles are the same, and an evaluation reads a path's
// evidence only to copy it into the matches of that path, so every outcome is the last one's
// and only the matches of a path whose evidence changed are made again. The paths whose
// evidence changed are found first, in one pass over both contexts (a tool call changes one);
// a match is looked at further only when its path is one of them.
func (s *Session) resourced(ec rules.EvaluationContext) evaluated {
	last := s.evaluated
	ev := last
	ev.ec = ec
	changed := s.changed[:0]
	for i, p := range ec.Paths {
		if !sameSlice(last.ec.Paths[i].Sources, p.Sources) {
			changed = append(changed, i)
		}
	}
	s.changed = changed
	if len(changed) == 0 {
		return ev
	}
	for i := range ev.rd.Results {
		r := &ev.rd.Results[i]
		cloned := false // the last evaluation's matches stay as they were
		for j, m := range r.Matches {
			if m.Condition != rules.CondPaths {
				continue
			}
			k, ok := changedPath(ec.Paths, changed, m)
			if !ok || slices.Equal(m.Sources, ec.Paths[k].Sources) {
				continue
			}
			if !cloned {
				if &ev.rd.Results[0] == &last.rd.Results[0] {
					ev.rd.Results = s.spareResults(last.rd.Results)
					r = &ev.rd.Results[i]
				}
				r.Matches, cloned = s.matches.copyOf(r.Matches), true
			}
			r.Matches[j].Sources = ec.Paths[k].Sources
		}
	}
	return ev
}

// changedPath finds the path of m among the paths whose evidence changed: the indexes changed
// into paths, in order. A few are compared one by one; many are searched for in paths.
func changedPath(paths []rules.ContextPath, changed []int, m rules.Match) (int, bool) {
	if len(changed) <= 8 {
		for _, k := range changed {
			if paths[k].Path == m.Path && paths[k].Root == m.Root {
				return k, true
			}
		}
		return 0, false
	}
	k, ok := slices.BinarySearchFunc(paths, m, func(p rules.ContextPath, m rules.Match) int {
		return cmp.Or(cmp.Compare(p.Path, m.Path), cmp.Compare(p.Root, m.Root))
	})
	if ok {
		_, ok = slices.BinarySearch(changed, k)
	}
	return k, ok
}

// sameSlice reports whether two sources are equal, without comparing them when they are the
// same memory (a context shares the evidence of the paths that did not change with the last
// one, see projections.Task.NextAfter).
func sameSlice(a, b []rules.Source) bool {
	if len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0]) {
		return true
	}
	return slices.Equal(a, b)
}

// spareResults is a copy of results in memory of the session's own: the results array of the
// evaluation recorded before the last one, which nothing holds any more (a caller gets copies
// of it), or a new one. decideLocked hands the last evaluation's array back to it.
func (s *Session) spareResults(results []rules.Result) []rules.Result {
	spare := take(&s.spare)
	if cap(spare) < len(results) {
		return slices.Clone(results)
	}
	return append(spare[:0], results...)
}

// take hands out a spare array of the session (*spare), which is the caller's from then on:
// the session has none until decideLocked hands it one again.
func take[T any](spare *[]T) []T {
	s := *spare
	*spare = nil
	return s
}

// recordResourced is the record of the evaluation resourced makes: the last decision's
// outcomes, which are shared and never changed, with ec's context. The evidence of a path that
// did not change is shared with the last record too.
func (s *Session) recordResourced(ec rules.EvaluationContext, turn int, dropped []events.Count, spare []events.ContextPath) events.Decision {
	rec := *s.last
	rec.Turn, rec.Dropped = turn, dropped
	prev := s.last.Context
	rec.Context = contextArray(spare, len(ec.Paths))
	var srcs []events.Source
	for i, p := range ec.Paths {
		rec.Context[i] = events.ContextPath{Path: p.Path, Root: p.Root}
		if i < len(prev) && prev[i].Path == p.Path && prev[i].Root == p.Root && sameSources(prev[i].Sources, p.Sources) {
			rec.Context[i].Sources = prev[i].Sources
			continue
		}
		start := len(srcs)
		for _, src := range p.Sources {
			srcs = append(srcs, events.Source{Kind: string(src.Kind), Seq: src.Seq, Turn: src.Turn, Detail: src.Detail})
		}
		rec.Context[i].Sources = srcs[start:len(srcs):len(srcs)]
	}
	return rec
}

// sameSources reports whether recorded evidence is the evidence of the context.
func sameSources(rec []events.Source, ec []rules.Source) bool {
	return slices.EqualFunc(rec, ec, func(a events.Source, b rules.Source) bool {
		return a.Kind == string(b.Kind) && a.Seq == b.Seq && a.Turn == b.Turn && a.Detail == b.Detail
	})
}

// sameContext reports whether two evaluation contexts are equal in everything an evaluation
// or its record reads.
func sameContext(a, b rules.EvaluationContext) bool {
	return a.Mode == b.Mode && a.Provider == b.Provider && a.Model == b.Model && a.OS == b.OS &&
		slices.Equal(a.Rules, b.Rules) &&
		slices.EqualFunc(a.Paths, b.Paths, func(p, q rules.ContextPath) bool {
			return p.Path == q.Path && p.Root == q.Root && slices.Equal(p.Sources, q.Sources)
		})
}

// Recorded is the decision in full, as the log records it, in a copy of its own. The log may
// hold it written against the decision of the turn before (see events.Decision); Decisions,
// DecisionAt and Explain rebuild it.
func (d *Decision) Recorded() events.Decision { return *d.rec.Clone() }

// Included ranges over the outcomes of the rules the decision included, in the order the record
// lists them, each a copy of the recorded one, without copying the whole record as Recorded does
// (its context, its every outcome); the copy's Matches are the record's, to read only.
func (d *Decision) Included() iter.Seq[events.RuleOutcome] {
	return func(yield func(events.RuleOutcome) bool) {
		for _, o := range d.rec.Included {
			if !yield(o) {
				return
			}
		}
	}
}

// rendered is the last rendering of the prompt sections, and what it was made from.
type rendered struct {
	rs             *rules.RuleSet
	in             []string // the ids of the included rules, then "\x00", then of the listed ones
	prompt, tagged string
}

// render renders the rules sections of a decision. They depend only on which rules of the rule
// set are included and which are listed, which seldom changes from one turn to the next: the
// last rendering is reused then.
func (s *Session) render(rs *rules.RuleSet, rd rules.Decision) (prompt, tagged string) {
	in := make([]string, 0, len(rd.Results)+1)
	for _, r := range rd.Results {
		if r.Included {
			in = append(in, r.Rule.ID)
		}
	}
	in = append(in, "\x00")
	for _, r := range rd.Results {
		if r.Listed && !r.Included {
			in = append(in, r.Rule.ID)
		}
	}
	if c := s.rendered; c.rs == rs && slices.Equal(c.in, in) {
		return c.prompt, c.tagged
	}
	s.rendered = rendered{rs: rs, in: in, prompt: rd.RenderCline(), tagged: rd.RenderTagged()}
	return s.rendered.prompt, s.rendered.tagged
}

// maxDeltaTurns bounds how many decisions in a row are written against the one before: with
// the bytes of the deltas since the last full decision, which may not pass its own size, it
// bounds what rebuilding a decision reads (at most this many events, and twice the bytes of a
// full decision). A decision is also written in full at turn 1, after the session was opened,
// and when the rules snapshot changed.
//
// A full decision of a large rule set is large (about 1 MB for 1,000 rules and 100 paths, when
// a delta with nothing new is about 100 bytes): writing it every few dozen turns made the
// slowest decisions of such a task.
const maxDeltaTurns = 1024

// deltaChain is what was written since the last decision written in full.
type deltaChain struct {
	full  int // the bytes of the full decision's payload
	turns int // decisions written against the one before since
	bytes int // their payloads' bytes
}

// encodeDecision makes the event of the decision rec of turn: written against the decision
// before it when it can be and the chain of deltas stays within its bounds (see
// maxDeltaTurns), else in full.
func (s *Session) encodeDecision(rec *events.Decision, turn int) (ev events.Event, delta bool, err error) {
	if s.last != nil && s.last.Turn == turn-1 && s.deltas.turns < maxDeltaTurns-1 {
		if events.WrittenInto(&s.delta, s.last, rec, s.lastSeq) {
			ev, err = s.newDecisionEvent(&s.delta)
			s.delta = events.Decision{} // what it shares with rec is not kept alive by it
			if err != nil {
				return ev, false, err
			}
			if s.deltas.bytes+len(ev.Data) <= s.deltas.full {
				return ev, true, nil
			}
		}
	}
	ev, err = s.newDecisionEvent(rec)
	return ev, false, err
}

// maxKeptDecisionBuf bounds the buffer a session keeps for its decisions' bytes: a larger one
// (a decision over thousands of rules) is left to the collector.
const maxKeptDecisionBuf = 1 << 20

// newDecisionEvent is the event of d, its bytes in the session's decision buffer: nothing reads
// the last decision event's bytes once it is appended (a store keeps none, see store.Store),
// so each decision is encoded into the memory of the one before. The caller holds s.mu.
func (s *Session) newDecisionEvent(d *events.Decision) (events.Event, error) {
	ev, err := events.NewInto(s.decisionBuf, d)
	if err != nil {
		return ev, err
	}
	s.decisionBuf = nil
	if cap(ev.Data) <= maxKeptDecisionBuf {
		s.decisionBuf = ev.Data[:0]
	}
	return ev, nil
}

// ruleSet returns the rule set of the snapshot at seq, loading it only when the snapshot
// changed since the last decision of this session.
func (s *Session) ruleSet(seq uint64, files []rules.File) *rules.RuleSet {
	if s.rules == nil || s.rulesSeq != seq {
		s.rules, s.rulesSeq = rules.Load(files), seq
	}
	return s.rules
}

// setRoots sets the session's roots, and the workspace its decisions read the rule files of.
// Only Open and OpenAgent call it, before the session is handed out.
func (s *Session) setRoots(roots []Root) {
	s.opts.Roots = roots
	ws := rules.Workspace{Home: s.opts.Home, Remote: s.opts.Remote, MaxFilesPerFolder: s.opts.MaxFilesPerFolder}
	for _, r := range roots {
		if r.FS != nil {
			ws.Roots = append(ws.Roots, rules.Root{Name: r.Path, FS: r.FS, Dir: r.Dir})
		}
	}
	s.ws = ws
}

// sameFile reports whether two collected files are recorded alike in a snapshot.
func sameFile(a, b rules.File) bool {
	return a.Provider == b.Provider && a.Scope == b.Scope && a.Root == b.Root && a.Path == b.Path &&
		a.Size == b.Size && a.AlwaysEnabled == b.AlwaysEnabled && a.ReadError == b.ReadError &&
		a.Digest != "" && a.Digest == b.Digest
}

// snapshotOf describes rule files as a rules_snapshot payload and returns their contents as
// blobs. Collect returns files in a fixed order, so equal workspaces give equal snapshots.
func snapshotOf(files []rules.File) (*events.RulesSnapshot, [][]byte) {
	snap := &events.RulesSnapshot{Files: make([]events.SnapshotFile, len(files))}
	blobs := make([][]byte, len(files))
	for i, f := range files {
		sum := f.Digest
		if sum == "" {
			sum = rules.Digest(f.Content)
		}
		snap.Files[i] = events.SnapshotFile{Provider: string(f.Provider), Scope: f.Scope, Root: f.Root,
			Path: f.Path, Blob: sum, Size: f.Size, AlwaysEnabled: f.AlwaysEnabled,
			ReadError: f.ReadError}
		blobs[i] = f.Content
	}
	return snap, blobs
}

// BlobReader reads content-addressed blobs; *store.DB is one.
type BlobReader interface {
	Blob(sum string) ([]byte, error)
}

// LoadSnapshot rebuilds the rule files a rules_snapshot recorded from their blobs. A blob the
// store could not be read for (it did not answer in time, it is closed), as against one it does
// not hold or holds damaged, is a *ReadError.
func LoadSnapshot(br BlobReader, files []events.SnapshotFile) ([]rules.File, error) {
	out := make([]rules.File, len(files))
	for i, f := range files {
		content, err := br.Blob(f.Blob)
		if err != nil {
			return nil, readFault(fmt.Errorf("rule file %s: %w", f.Path, err))
		}
		out[i] = rules.File{Provider: rules.Provider(f.Provider), Scope: f.Scope, Root: f.Root, Path: f.Path,
			Content: content, AlwaysEnabled: f.AlwaysEnabled, Size: f.Size, ReadError: f.ReadError, Digest: f.Blob}
	}
	return out, nil
}

// record turns an evaluation into the decision event's payload. It is the one place both
// Decide and Verify build a decision, so a recorded decision and its recomputation can only
// differ when their inputs or the engine do.
func record(turn int, snapshot uint64, ec rules.EvaluationContext, dropped []events.Count, rd rules.Decision) events.Decision {
	return recordAfter(nil, turn, snapshot, ec, dropped, rd, recordSpares{})
}

// sameBacking reports whether two slices, neither of capacity zero, start in the same memory.
func sameBacking[T any](a, b []T) bool {
	return cap(a) > 0 && cap(b) > 0 && &a[:1][0] == &b[:1][0]
}

// recycle makes prev's array, emptied (nothing it points to is kept alive by it), the spare
// array *spare, unless now starts in it: the caller knows nothing else holds prev.
func recycle[T any](spare *[]T, prev, now []T) {
	if cap(prev) > 0 && !sameBacking(prev, now) {
		*spare = emptied(prev)
	}
}

// recordSpares are arrays of a record nobody holds any more, for the next record to be written
// in: its context array and the outcome lists it made for itself.
type recordSpares struct {
	context            []events.ContextPath
	included, excluded []events.RuleOutcome
}

// recordAfter is record for a decision that follows base, a record nothing changes (a
// session's last, or nil): a path's evidence and a rule's matches that are equal to base's
// are base's memory, so that a decision after a tool call costs what changed. What it does not
// share with base it writes in spare's arrays when they are large enough. The record is the
// same either way.
func recordAfter(base *events.Decision, turn int, snapshot uint64, ec rules.EvaluationContext, dropped []events.Count, rd rules.Decision,
	spare recordSpares) events.Decision {
	var prev []events.ContextPath
	var prevIn, prevOut []events.RuleOutcome
	if base != nil {
		prev, prevIn, prevOut = base.Context, base.Included, base.Excluded
	}
	nIncluded, nSources, nMatches := 0, 0, 0
	for _, r := range rd.Results {
		if r.Included {
			nIncluded++
		}
		nMatches += len(r.Matches)
	}
	for _, p := range ec.Paths {
		nSources += len(p.Sources)
	}
	d := events.Decision{Turn: turn, Snapshot: snapshot, Engine: rd.EngineVersion,
		Mode: ec.Mode, Provider: ec.Provider, Model: ec.Model, OS: ec.OS,
		Context: contextArray(spare.context, len(ec.Paths)), Dropped: dropped}
	in := sharedList[events.RuleOutcome]{base: prevIn, size: nIncluded, same: events.RuleOutcome.Equal, spare: spare.included}
	out := sharedList[events.RuleOutcome]{base: prevOut, size: len(rd.Results) - nIncluded, same: events.RuleOutcome.Equal, spare: spare.excluded}
	// One array each for every path's evidence and every rule's matches that base does not
	// have; their sizes are known once base's are found.
	j := 0
	for i, p := range ec.Paths {
		d.Context[i] = events.ContextPath{Path: p.Path, Root: p.Root}
		// Both are sorted by path, then root: walk base alongside.
		for j < len(prev) && cmp.Or(cmp.Compare(prev[j].Path, p.Path), cmp.Compare(prev[j].Root, p.Root)) < 0 {
			j++
		}
		if len(p.Sources) > 0 && j < len(prev) && prev[j].Path == p.Path && prev[j].Root == p.Root && sameSources(prev[j].Sources, p.Sources) {
			d.Context[i].Sources = prev[j].Sources
			nSources -= len(p.Sources)
		}
	}
	srcs := make([]events.Source, 0, nSources)
	for i, p := range ec.Paths {
		if len(p.Sources) == 0 || d.Context[i].Sources != nil {
			continue
		}
		start := len(srcs)
		for _, s := range p.Sources {
			srcs = append(srcs, events.Source{Kind: string(s.Kind), Seq: s.Seq, Turn: s.Turn, Detail: s.Detail})
		}
		d.Context[i].Sources = srcs[start:len(srcs):len(srcs)]
	}
	// A result's matches as base records them, when equal; found in two walks, one to size the
	// array of the others and one to build the outcomes.
	type cursor struct{ in, out int }
	recorded := func(c *cursor, r rules.Result) []events.Match {
		if base == nil || len(r.Matches) == 0 {
			return nil
		}
		if o, ok := outcomeOf(prevIn, &c.in, r.Rule.ID); ok && sameMatches(o.Matches, r.Matches) {
			return o.Matches
		}
		if o, ok := outcomeOf(prevOut, &c.out, r.Rule.ID); ok && sameMatches(o.Matches, r.Matches) {
			return o.Matches
		}
		return nil
	}
	var sizing, building cursor
	for _, r := range rd.Results {
		nMatches -= len(recorded(&sizing, r))
	}
	matches := make([]events.Match, 0, nMatches)
	for _, r := range rd.Results {
		o := events.RuleOutcome{ID: r.Rule.ID, Name: r.Rule.Name, Category: string(r.Rule.Category),
			Source: string(r.Rule.Provider), Path: r.Rule.DisplayPath, Reason: r.Reason, Detail: r.Detail, ShadowedBy: r.ShadowedBy}
		if ms := recorded(&building, r); ms != nil {
			o.Matches = ms
		} else if len(r.Matches) > 0 {
			start := len(matches)
			for _, m := range r.Matches {
				matches = append(matches, events.Match{Condition: m.Condition, Pattern: m.Pattern, Path: m.Path, Root: m.Root})
			}
			o.Matches = matches[start:len(matches):len(matches)]
		}
		if r.Included {
			in.add(o)
		} else {
			out.add(o)
		}
	}
	d.Included, d.Excluded = in.list(), out.list()
	d.Diagnostics = recordDiagnostics(base, rd.Diagnostics)
	return d
}

// sharedList builds a record's list in the array of its base's list while every element added
// is the base's at the same place (same), as most of a decision's outcomes and all its
// diagnostics are the last one's: records are never changed, so they share what did not
// change. Once an element differs the list gets an array of its own, of size elements: spare,
// when it is large enough.
type sharedList[T any] struct {
	base  []T
	size  int
	same  func(a, b T) bool
	spare []T
	n     int // the elements added while the list is base's
	own   []T
}

func (l *sharedList[T]) add(v T) {
	if l.own == nil {
		if l.n < len(l.base) && l.same(l.base[l.n], v) {
			l.n++
			return
		}
		if cap(l.spare) >= l.size {
			l.own = l.spare[:l.n]
		} else {
			l.own = make([]T, l.n, l.size)
		}
		copy(l.own, l.base)
	}
	l.own = append(l.own, v)
}

// list is the elements added; an empty list, not a nil one, when there are none.
func (l *sharedList[T]) list() []T {
	switch {
	case l.own != nil:
		return l.own
	case l.n == 0:
		return []T{}
	}
	return l.base[:l.n:l.n]
}

// recordDiagnostics is the record of a decision's diagnostics, sharing base's (a rule set's
// diagnostics are the same at every decision on it); nil when there are none.
func recordDiagnostics(base *events.Decision, dgs []rules.Diagnostic) []events.Diagnostic {
	if len(dgs) == 0 {
		return nil
	}
	l := sharedList[events.Diagnostic]{size: len(dgs), same: func(a, b events.Diagnostic) bool { return a == b }}
	if base != nil {
		l.base = base.Diagnostics
	}
	for _, dg := range dgs {
		l.add(events.Diagnostic{Rule: dg.RuleID, File: dg.File, Line: dg.Line, Severity: string(dg.Severity), Code: dg.Code, Message: dg.Message})
	}
	return l.list()
}

// outcomeOf finds the outcome of rule id in outcomes sorted by rule id, from *at on, and
// moves *at past the outcomes before it.
func outcomeOf(outcomes []events.RuleOutcome, at *int, id string) (events.RuleOutcome, bool) {
	for *at < len(outcomes) && outcomes[*at].ID < id {
		*at++
	}
	if *at < len(outcomes) && outcomes[*at].ID == id {
		return outcomes[*at], true
	}
	return events.RuleOutcome{}, false
}

// sameMatches reports whether recorded matches are the record of a result's matches.
func sameMatches(rec []events.Match, ms []rules.Match) bool {
	return slices.EqualFunc(rec, ms, func(a events.Match, b rules.Match) bool {
		return a.Condition == b.Condition && a.Pattern == b.Pattern && a.Path == b.Path && a.Root == b.Root
	})
}
