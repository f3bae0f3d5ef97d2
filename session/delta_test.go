package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/rules"
)

// appendBehind appends a decision of turn 2 to the session's task directly to the store, as
// a second writer or a hand-written import could: the session never sees it.
func appendBehind(t *testing.T, s *Session, d *events.Decision) {
	t.Helper()
	ev, err := events.New(d)
	if err != nil {
		t.Fatal(err)
	}
	ev.Turn, ev.Time = 2, fixedClock()()
	if ev.ID, err = events.NewIDSource(nil).New(ev.Time); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Append(context.Background(), s.Task(), s.Version(), ev); err != nil {
		t.Fatal(err)
	}
}

// baseOf reads what the log holds for the decision at seq: its head.
func baseOf(t *testing.T, s *Session, seq uint64) events.DecisionHead {
	t.Helper()
	for ev, err := range s.db.Events(context.Background(), s.Task(), seq) {
		if err != nil {
			t.Fatal(err)
		}
		h, err := events.Head(ev)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	t.Fatalf("no event at seq %d", seq)
	return events.DecisionHead{}
}

// TestDecisionsWrittenAgainstTheTurnBefore follows a task through the cases that decide how
// a decision is written, and checks that every reader rebuilds exactly what Decide returned.
func TestDecisionsWrittenAgainstTheTurnBefore(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	ws := clineWorkspace()
	s := newSession(t, db, ws, Options{})
	var decided []*Decision
	step := func(want string, record func()) {
		t.Helper()
		record()
		d := decide(t, s)
		decided = append(decided, d)
		h := baseOf(t, s, d.Seq)
		prev := uint64(0)
		if len(decided) > 1 {
			prev = decided[len(decided)-2].Seq
		}
		switch got := map[bool]string{true: "full", false: "delta"}[h.Base == 0]; {
		case got != want:
			t.Errorf("turn %d written %s, want %s", d.Turn, got, want)
		case h.Base != 0 && h.Base != prev:
			t.Errorf("turn %d written against seq %d, want the turn before at seq %d", d.Turn, h.Base, prev)
		}
	}
	tool := func(path string) func() {
		return func() {
			if _, err := s.ToolCall(ctx, "read_file", "", json.RawMessage(fmt.Sprintf(`{"path":%q}`, path))); err != nil {
				t.Fatal(err)
			}
		}
	}
	step("full", tool("apps/web/src/App.tsx"))            // turn 1
	step("delta", tool("services/api/users.ts"))          // a path added
	step("delta", func() {})                              // nothing new: the tool window slides
	step("delta", tool("apps/web/src/App.tsx"))           // evidence of a known path changes
	ws[".clinerules/backend.md"].Data = []byte("Edited.") // the rules change: a new snapshot
	step("full", func() {})
	var err error
	if s, err = Open(ctx, db, s.Task(), Options{Roots: []Root{{Path: "/ws", FS: ws}}, Now: fixedClock()}); err != nil {
		t.Fatal(err)
	}
	step("full", func() {}) // the first decision after opening
	step("delta", func() {})
	// Deltas add up until the next would bring them past the full decision's bytes.
	for h := (events.DecisionHead{Base: 1}); h.Base != 0; h = baseOf(t, s, decided[len(decided)-1].Seq) {
		if s.deltas.turns > 0 && s.deltas.bytes > s.deltas.full {
			t.Fatalf("%d bytes of deltas after a full decision of %d", s.deltas.bytes, s.deltas.full)
		}
		decided = append(decided, decide(t, s))
	}
	step("delta", func() {})
	// After a full decision of many bytes, at most maxDeltaTurns-1 deltas in a row.
	s.deltas.full = 1 << 30
	for s.deltas.turns < maxDeltaTurns-1 {
		decided = append(decided, decide(t, s))
	}
	step("full", func() {})
	step("delta", func() {})

	all, err := Decisions(ctx, db, s.Task())
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(decided) {
		t.Fatalf("Decisions read %d, Decide made %d", len(all), len(decided))
	}
	outcomes, err := DecisionOutcomes(ctx, db, s.Task())
	if err != nil {
		t.Fatal(err)
	}
	for i := range all {
		want := all[i]
		want.Decision.Context, want.Decision.Gone = nil, nil
		if got := outcomes[i]; !reflect.DeepEqual(got.Decision, want.Decision) || got.Seq != want.Seq || got.Position != want.Position {
			t.Errorf("turn %d: DecisionOutcomes read\n%+v\nwant Decisions' less the context\n%+v", want.Decision.Turn, got, want)
		}
	}
	for i, d := range decided {
		if !reflect.DeepEqual(all[i].Decision, d.Recorded()) {
			t.Errorf("turn %d: Decisions rebuilt\n%+v\nDecide returned\n%+v", d.Turn, all[i].Decision, d.Recorded())
		}
		if i > 16 && i%97 != 0 && i < len(decided)-4 {
			continue // DecisionAt reads the log from its start: a sample of the long run is enough
		}
		at, err := DecisionAt(ctx, db, s.Task(), d.Turn)
		if err != nil || !reflect.DeepEqual(at.Decision, d.Recorded()) || at.Seq != d.Seq {
			t.Errorf("turn %d: DecisionAt rebuilt %+v, %v", d.Turn, at, err)
		}
	}
	rep, err := Replay(ctx, db, s.Task(), ReplayOptions{})
	if err != nil || !rep.OK() || rep.Decisions != len(decided) {
		t.Errorf("replay: %+v, %v", rep, err)
	}
}

// TestReadersRefuseABadDelta appends, behind the session's back, a decision written against
// something other than the decision before it, or a delta whose gone path is not in the
// context of the decision it is written against: every reader refuses it by name, those that
// leave out the evidence (DecisionOutcomes, an audit, a what-if) as the others.
func TestReadersRefuseABadDelta(t *testing.T) {
	for _, tc := range []struct {
		name string
		bad  func(first *Decision) (events.Decision, string)
	}{
		{"written against the wrong base", func(first *Decision) (events.Decision, string) {
			bad := first.Recorded()
			bad.Turn, bad.Base = 2, first.Seq-1 // the rules snapshot's seq, not a decision's
			return bad, fmt.Sprintf("written against seq %d, but the decision before it is at seq %d", first.Seq-1, first.Seq)
		}},
		{"a gone path its base lacks", func(first *Decision) (events.Decision, string) {
			bad := first.Recorded()
			bad.Turn, bad.Base = 2, first.Seq
			bad.Context, bad.Included, bad.Excluded, bad.Diagnostics = []events.ContextPath{}, []events.RuleOutcome{}, []events.RuleOutcome{}, nil
			bad.Gone = []events.PathRef{{Path: "not/in/the/base.ts"}}
			return bad, "not/in/the/base.ts"
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := openDB(t)
			s := newSession(t, db, clineWorkspace(), Options{})
			bad, want := tc.bad(decide(t, s))
			appendBehind(t, s, &bad)
			_, errAt := DecisionAt(ctx, db, s.Task(), 2)
			_, errAll := Decisions(ctx, db, s.Task())
			_, errOutcomes := DecisionOutcomes(ctx, db, s.Task())
			_, errAudit := Audit(ctx, db, s.Task(), AuditOptions{})
			_, errReplay := Replay(ctx, db, s.Task(), ReplayOptions{})
			ws := rules.Workspace{Roots: []rules.Root{{Name: "/ws", FS: clineWorkspace()}}}
			_, errWhatIf := Replay(ctx, db, s.Task(), ReplayOptions{Workspace: &ws})
			for name, err := range map[string]error{"DecisionAt": errAt, "Decisions": errAll, "DecisionOutcomes": errOutcomes,
				"Audit": errAudit, "Replay": errReplay, "a what-if": errWhatIf} {
				if !errors.Is(err, events.ErrInvalid) || !strings.Contains(err.Error(), want) {
					t.Errorf("%s: %v, want ErrInvalid saying %q", name, err, want)
				}
			}
		})
	}
}

// TestReplaySeesADriftedDelta alters a decision written against the one before it: replay
// rebuilds the recorded decision and names the rule whose outcome changed.
func TestReplaySeesADriftedDelta(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	s := newSession(t, db, clineWorkspace(), Options{})
	if _, err := s.UserMessage(ctx, "fix apps/web/src/App.tsx"); err != nil {
		t.Fatal(err)
	}
	first := decide(t, s)
	// Turn 2 as the engine would decide it (the same), but recorded with frontend excluded.
	firstRec := first.Recorded()
	drifted := first.Recorded()
	drifted.Turn = 2
	drifted.Included = nil
	for _, o := range first.Recorded().Included {
		if o.Name == "frontend" {
			o.Reason, o.Matches, o.Detail = rules.ReasonNoMatch, nil, "made up"
			drifted.Excluded = append(drifted.Excluded, o)
			continue
		}
		drifted.Included = append(drifted.Included, o)
	}
	slices.SortFunc(drifted.Excluded, func(a, b events.RuleOutcome) int { return strings.Compare(a.ID, b.ID) })
	delta, ok := events.Written(&firstRec, &drifted, first.Seq)
	if !ok {
		t.Fatal("not writable as a delta")
	}
	appendBehind(t, s, delta)
	rep, err := Replay(ctx, db, s.Task(), ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Changed != 1 || len(rep.Changes) != 1 || rep.Changes[0].Rule != "frontend" || rep.Changes[0].Turn != 2 ||
		rep.Changes[0].Recorded != "excluded (no_match)" || rep.Changes[0].Now != "included" {
		t.Errorf("replay reported %+v", rep.Changes)
	}
}

// TestEditingADecisionLeavesTheLogAlone edits every decision Decide returns, in place, as a
// runtime showing the context newest first might: what the log records stays consistent.
func TestEditingADecisionLeavesTheLogAlone(t *testing.T) {
	for _, into := range []bool{false, true} {
		t.Run(fmt.Sprintf("DecideInto %v", into), func(t *testing.T) { editingADecision(t, into) })
	}
}

// editingADecision is TestEditingADecisionLeavesTheLogAlone with each decision from Decide, or
// from DecideInto given the last one back, edited as it was.
func editingADecision(t *testing.T, into bool) {
	ctx := context.Background()
	db := openDB(t)
	s := newSession(t, db, clineWorkspace(), Options{})
	tool := func(path string) {
		if _, err := s.ToolCall(ctx, "read_file", "", json.RawMessage(fmt.Sprintf(`{"path":%q}`, path))); err != nil {
			t.Fatal(err)
		}
	}
	tool("apps/web/a.ts")
	tool("apps/web/b.ts")
	tool("apps/web/c.ts")
	var last Decision
	for turn := 1; turn <= 6; turn++ {
		if turn == 3 {
			tool("services/api/d.ts")
		}
		d := &last
		if !into {
			d = decide(t, s)
		} else if err := s.DecideInto(ctx, d); err != nil {
			t.Fatal(err)
		}
		before, _ := events.New(new(d.Recorded()))
		rec := d.Recorded()
		slices.Reverse(rec.Context)
		for i := range rec.Included {
			rec.Included[i].Matches = nil
		}
		slices.Reverse(d.Rules.Results)
		if after, _ := events.New(new(d.Recorded())); !bytes.Equal(before.Data, after.Data) {
			t.Errorf("turn %d: editing a copy changed the decision", d.Turn)
		}
	}
	if _, err := Decisions(ctx, db, s.Task()); err != nil {
		t.Errorf("Decisions: %v", err)
	}
	if rep, err := Replay(ctx, db, s.Task(), ReplayOptions{}); err != nil || !rep.OK() {
		t.Errorf("replay: %+v, %v", rep.Changes, err)
	}
}

// TestReplayComparesAnUnusualDeltaInFull replays a delta that repeats an unchanged outcome:
// it rebuilds to exactly what the engine computes, so it is no change.
func TestReplayComparesAnUnusualDeltaInFull(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	s := newSession(t, db, clineWorkspace(), Options{})
	if _, err := s.UserMessage(ctx, "fix apps/web/src/App.tsx"); err != nil {
		t.Fatal(err)
	}
	first := decide(t, s)
	firstRec := first.Recorded()
	next := first.Recorded()
	next.Turn = 2
	delta, ok := events.Written(&firstRec, &next, first.Seq)
	if !ok {
		t.Fatal("not writable as a delta")
	}
	delta.Included = append(delta.Included, first.Recorded().Included[0]) // unchanged, repeated
	appendBehind(t, s, delta)
	if rep, err := Replay(ctx, db, s.Task(), ReplayOptions{}); err != nil || !rep.OK() || rep.Decisions != 2 {
		t.Errorf("replay: %+v, %v", rep, err)
	}
}

// TestDecideSeesEveryEditOfAWatchedRoot edits the rules of a folder root between decisions,
// right after each decision read them: every decision sees the edit before it.
func TestDecideSeesEveryEditOfAWatchedRoot(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	write := func(name, content string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".clinerules/a.md", "Rule one.\n")
	s, err := Open(ctx, openDB(t), uuid.Nil, Options{Roots: []Root{DirRoot(dir)}, Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	steps := []struct {
		edit func()
		want string // in the prompt
	}{
		{func() {}, "Rule one."},
		{func() { write(".clinerules/a.md", "Rule 1st.\n") }, "Rule 1st."}, // same size, same second
		{func() { write(".clinerules/b.md", "Rule two.\n") }, "Rule two."},
		{func() { write("AGENTS.md", "Go only.\n") }, "Go only."},
		// A nested AGENTS.md in a new folder applies below it only: it is decided about.
		{func() { write("apps/api/AGENTS.md", "The API.\n") }, "apps/api/AGENTS.md"},
	}
	for i, st := range steps {
		st.edit()
		d := decide(t, s)
		seen := d.Prompt
		for _, o := range append(d.Recorded().Included, d.Recorded().Excluded...) {
			seen += "\n" + o.Path
		}
		if !strings.Contains(seen, st.want) {
			t.Errorf("decision %d: neither prompt nor outcomes name %q:\n%s", i+1, st.want, seen)
		}
	}
	if rep, err := Replay(ctx, s.db, s.Task(), ReplayOptions{}); err != nil || !rep.OK() {
		t.Errorf("replay: %+v, %v", rep, err)
	}
}

// TestPromptFollowsEveryChangeOfItsRules decides while the included rules change and while they
// do not: the prompt is always the rendering of this decision's rules.
func TestPromptFollowsEveryChangeOfItsRules(t *testing.T) {
	ctx := context.Background()
	s := newSession(t, openDB(t), clineWorkspace(), Options{})
	general := "cline:/ws/.clinerules/general.md"
	steps := []struct {
		name   string
		record func() error
		has    string
		lacks  string
	}{
		{"universal rules", func() error { return nil }, "Always write tests.", "Use the design tokens."},
		{"nothing changed", func() error { return nil }, "Always write tests.", "Use the design tokens."},
		{"a paths rule joins", func() error {
			_, err := s.UserMessage(ctx, "edit apps/web/src/App.tsx")
			return err
		}, "Use the design tokens.", ""},
		{"a rule toggled off", func() error {
			_, err := s.Toggle(ctx, general, false)
			return err
		}, "Use the design tokens.", "Always write tests."},
		{"and on again", func() error {
			_, err := s.Toggle(ctx, general, true)
			return err
		}, "Always write tests.", ""},
	}
	for _, st := range steps {
		if err := st.record(); err != nil {
			t.Fatal(err)
		}
		d := decide(t, s)
		if want := d.Rules.RenderCline(); d.Prompt != want {
			t.Errorf("%s: prompt\n%s\nis not this decision's rendering\n%s", st.name, d.Prompt, want)
		}
		if want := d.Rules.RenderTagged(); d.Tagged != want {
			t.Errorf("%s: tagged prompt is not this decision's rendering", st.name)
		}
		if !strings.Contains(d.Prompt, st.has) || (st.lacks != "" && strings.Contains(d.Prompt, st.lacks)) {
			t.Errorf("%s: prompt should have %q and lack %q:\n%s", st.name, st.has, st.lacks, d.Prompt)
		}
	}
}

// TestConcurrentDecisionsSeeEveryEdit decides from two goroutines after each edit of a watched
// root's rule: every decision started after the edit has it in its prompt.
func TestConcurrentDecisionsSeeEveryEdit(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	p := filepath.Join(dir, ".clinerules", "a.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	edit := func(text string) {
		t.Helper()
		if err := os.WriteFile(p, []byte(text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	edit("Rule v0.")
	s, err := Open(ctx, openDB(t), uuid.Nil, Options{Roots: []Root{DirRoot(dir)}, Now: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	decide(t, s)
	var stale atomic.Int64
	for i := 1; i <= 100; i++ {
		want := fmt.Sprintf("Rule v%d.", i)
		edit(want)
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				d, err := s.Decide(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if !strings.Contains(d.Prompt, want) {
					stale.Add(1)
				}
			})
		}
		wg.Wait()
	}
	if n := stale.Load(); n > 0 {
		t.Errorf("%d of 200 decisions started after an edit did not see it", n)
	}
}

// TestUnchangedInputsDecideAsAFreshEvaluation decides again and again with nothing new between
// some decisions (their evaluation is taken again) and with the tabs, the settings, a toggle
// and the rules changing between others: every decision returns and records exactly what a
// fresh evaluation of its inputs gives, and editing what one returns changes no later one.
func TestUnchangedInputsDecideAsAFreshEvaluation(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	ws := clineWorkspace()
	s := newSession(t, db, ws, Options{})
	if _, err := s.Tabs(ctx, []string{"apps/web/src/App.tsx", "services/api/users.ts"}, nil); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name   string
		change func() error
	}{
		{"first", func() error { return nil }},
		{"nothing new", func() error { return nil }},
		{"nothing new again", func() error { return nil }},
		{"a tab closed", func() error { _, err := s.Tabs(ctx, []string{"apps/web/src/App.tsx"}, nil); return err }},
		{"nothing new after it", func() error { return nil }},
		{"plan mode", func() error { _, err := s.Settings(ctx, "plan", "", ""); return err }},
		{"frontend off", func() error { _, err := s.Toggle(ctx, "cline:/ws/.clinerules/frontend.md", false); return err }},
		{"nothing new with it off", func() error { return nil }},
		{"a rule edited", func() error { ws[".clinerules/general.md"].Data = []byte("Edited.\n"); return nil }},
		{"nothing new after the edit", func() error { return nil }},
	}
	var prompts []string
	for _, st := range steps {
		if err := st.change(); err != nil {
			t.Fatal(err)
		}
		ec, toggles := s.Context(), rules.Toggles(s.state.Toggles())
		d := decide(t, s)
		fresh := s.rules.Evaluate(ec, toggles) // the rule set of this decision's snapshot
		if !reflect.DeepEqual(d.Rules.Results, fresh.Results) {
			t.Errorf("%s: Decide returned results other than a fresh evaluation", st.name)
		}
		if !reflect.DeepEqual(d.Applied, fresh.ConditionalRulesApplied()) {
			t.Errorf("%s: applied %+v, want %+v", st.name, d.Applied, fresh.ConditionalRulesApplied())
		}
		if want := record(d.Turn, d.Recorded().Snapshot, ec, d.Recorded().Dropped, fresh); !reflect.DeepEqual(d.Recorded(), want) {
			t.Errorf("%s: recorded\n%+v\nwant\n%+v", st.name, d.Recorded(), want)
		}
		if d.Prompt != fresh.RenderCline() {
			t.Errorf("%s: prompt %q, want %q", st.name, d.Prompt, fresh.RenderCline())
		}
		prompts = append(prompts, d.Prompt)
		// A runtime may reorder or blank what it got; the next decision must not see it.
		slices.Reverse(d.Rules.Results)
		for i := range d.Applied {
			d.Applied[i] = rules.AppliedRule{}
		}
	}
	if prompts[0] != prompts[2] || prompts[2] == prompts[3] {
		t.Errorf("prompts do not follow the tabs: %q", prompts[:4])
	}
	if rep, err := Replay(ctx, db, s.Task(), ReplayOptions{}); err != nil || !rep.OK() || rep.Decisions != len(steps) {
		t.Errorf("replay: %+v, %v", rep, err)
	}
}

// DecideInto gives what Decide gives, in the arrays of the decision handed back, and the
// session's next decision is its own whatever the caller did with them: two sessions on the same
// events, one deciding with Decide, one with DecideInto.
func TestDecideIntoReusesTheCallersArrays(t *testing.T) {
	ctx := context.Background()
	plain := newSession(t, openDB(t), clineWorkspace(), Options{})
	into := newSession(t, openDB(t), clineWorkspace(), Options{})
	tool := func(path string) {
		for _, s := range []*Session{plain, into} {
			if _, err := s.ToolCall(ctx, "read_file", "", json.RawMessage(fmt.Sprintf(`{"path":%q}`, path))); err != nil {
				t.Fatal(err)
			}
		}
	}
	var got Decision
	decideBoth := func() {
		t.Helper()
		want := decide(t, plain)
		if err := into.DecideInto(ctx, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Rules, want.Rules) || !reflect.DeepEqual(got.Applied, want.Applied) ||
			got.Prompt != want.Prompt || got.Tagged != want.Tagged || got.Turn != want.Turn || got.Seq != want.Seq {
			t.Fatalf("DecideInto gave\n%s\n%s\nDecide gave\n%s\n%s", mustJSON(t, got.Rules), mustJSON(t, got.Applied),
				mustJSON(t, want.Rules), mustJSON(t, want.Applied))
		}
	}
	tool("apps/web/a.ts")
	decideBoth()
	if len(got.Rules.Results) == 0 || len(got.Applied) == 0 {
		t.Fatalf("%d results, %d applied: the test needs both", len(got.Rules.Results), len(got.Applied))
	}
	results, applied := &got.Rules.Results[0], &got.Applied[0]
	// The caller edits what it got, then hands it back: after nothing new, and after a tool call.
	for _, next := range []string{"", "apps/web/b.ts"} {
		slices.Reverse(got.Rules.Results)
		got.Applied[0].Name = "edited"
		if next != "" {
			tool(next)
		}
		decideBoth()
		if &got.Rules.Results[0] != results || &got.Applied[0] != applied {
			t.Fatal("DecideInto made new arrays where the ones handed back were large enough")
		}
	}
	if err := into.DecideInto(ctx, nil); err == nil {
		t.Fatal("DecideInto(nil) did not fail")
	}
}

// A session that writes its decisions into the one handed back writes the next records in the
// context arrays and outcome lists of records nobody holds any more, and never in one a caller still holds: a
// decision of Decide, or one of DecideInto not handed back. Its log is that of a session that
// decides with Decide, event data for event data.
func TestDecideIntoRecyclesOnlyWhatNobodyHolds(t *testing.T) {
	ctx := context.Background()
	plainDB, intoDB := openDB(t), openDB(t)
	plain := newSession(t, plainDB, clineWorkspace(), Options{})
	into := newSession(t, intoDB, clineWorkspace(), Options{})
	tool := func(path string) {
		t.Helper()
		for _, s := range []*Session{plain, into} {
			if _, err := s.ToolCall(ctx, "read_file", "", json.RawMessage(fmt.Sprintf(`{"path":%q}`, path))); err != nil {
				t.Fatal(err)
			}
		}
	}
	type held struct {
		d   *Decision
		rec events.Decision
	}
	var holds []held
	hold := func(d *Decision) { holds = append(holds, held{d, d.Recorded()}) }
	var x Decision
	seen := map[*events.ContextPath]int{}         // the context arrays of the records, by step
	seenOutcomes := map[*events.RuleOutcome]int{} // their outcome lists' arrays
	recycled, recycledOutcomes := 0, 0
	// "" is a decision with nothing new: right after a read of a path the context holds, the
	// last record is taken again whole, its context array with it (steps 2 and 17, after the
	// decisions the caller holds).
	app, a, b, docs, index := "apps/web/src/App.tsx", "services/api/a.ts", "services/api/b.ts", "docs/README.md", "apps/web/src/pages/index.tsx"
	// From step 30: reads that match no rule, until the scoped rules' evidence has aged out and
	// only the always rules are included; at step 33 a decision the caller holds, then one
	// written into the decision handed back whose outcomes are the same (its lists are the held
	// record's arrays, which it must never recycle), then decisions whose outcomes change.
	paths := []string{app, app, "", a, app, b, "", "", a, docs, index, app, b, app, a, app, app, "", docs, app, a, "", index, app, b, app, app, "", a, b,
		"docs/a.md", "docs/b.md", "docs/c.md", "docs/d.md", "docs/e.md", "services/api/c.ts", "services/api/d.ts", app, "docs/f.md"}
	for i, p := range paths {
		if p != "" {
			tool(p)
		}
		decide(t, plain)
		switch {
		case i == 1 || i == 33:
			hold(decide(t, into)) // handed out: its record is the caller's
		case i == 16:
			var y Decision // written into, never handed back
			if err := into.DecideInto(ctx, &y); err != nil {
				t.Fatal(err)
			}
			hold(&y)
		default:
			if err := into.DecideInto(ctx, &x); err != nil {
				t.Fatal(err)
			}
		}
		if c := into.last.Context; len(c) > 0 {
			if at, ok := seen[&c[0]]; ok && at < i-1 {
				recycled++
			}
			seen[&c[0]] = i
		}
		for _, list := range [][]events.RuleOutcome{into.last.Included, into.last.Excluded} {
			if len(list) > 0 {
				if at, ok := seenOutcomes[&list[0]]; ok && at < i-1 {
					recycledOutcomes++
				}
				seenOutcomes[&list[0]] = i
			}
		}
	}
	for _, h := range holds {
		if got := h.d.Recorded(); !reflect.DeepEqual(got, h.rec) {
			t.Errorf("turn %d: a decision the caller holds changed:\n%+v\nwas\n%+v", h.d.Turn, got, h.rec)
		}
	}
	if recycled == 0 {
		t.Error("no record was written in the context array of a record before: the test does not test recycling")
	}
	if recycledOutcomes == 0 {
		t.Error("no record's outcomes were written in the array of a record before: the test does not test their recycling")
	}
	if got, want := eventData(t, intoDB, into.Task()), eventData(t, plainDB, plain.Task()); !slices.Equal(got, want) {
		t.Errorf("DecideInto wrote\n%s\nDecide\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
