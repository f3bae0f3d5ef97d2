package session

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"math/rand"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/projections"
	"github.com/tasklog/tasklog/rules"
	"github.com/tasklog/tasklog/store"
)

// clineWorkspace is the Cline design's scenario: a universal rule and a paths rule.
func clineWorkspace() fstest.MapFS {
	return fstest.MapFS{
		".clinerules/general.md":  {Data: []byte("Always write tests.\n")},
		".clinerules/frontend.md": {Data: []byte("---\npaths:\n  - \"apps/web/**\"\n---\nUse the design tokens.\n")},
		".clinerules/backend.md":  {Data: []byte("---\npaths: [\"services/api/**\"]\n---\nValidate input.\n")},
		".clinerules/broken.md":   {Data: []byte("---\npaths: [apps/web/**\nowner: x\n---\nBroken but kept.\n")},
		// The files the scenarios' users name: a guessed path counts once the workspace has it.
		"apps/web/src/App.tsx":         {Data: []byte("export {}\n")},
		"apps/web/src/pages/index.tsx": {Data: []byte("export {}\n")},
		"docs/README.md":               {Data: []byte("# docs\n")},
	}
}

func openDB(t testing.TB) store.Store {
	t.Helper()
	db, err := store.Open(filepath.Join(t.TempDir(), "tasklog.db"), &store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// fixedClock advances one second per call, so logs are reproducible.
func fixedClock() func() time.Time {
	var mu sync.Mutex
	at := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	return func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		at = at.Add(time.Second)
		return at
	}
}

func newSession(t testing.TB, db store.Store, fsys fs.FS, opts Options) *Session {
	t.Helper()
	if opts.Roots == nil {
		opts.Roots = []Root{{Path: "/ws", FS: fsys}}
	}
	if opts.Now == nil {
		opts.Now = fixedClock()
	}
	if opts.IDs == nil {
		opts.IDs = events.NewIDSource(rand.New(rand.NewSource(7)))
	}
	s, err := Open(context.Background(), db, uuid.Nil, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func decide(t testing.TB, s *Session) *Decision {
	t.Helper()
	d, err := s.Decide(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func names(os []events.RuleOutcome) []string {
	var n []string
	for _, o := range os {
		n = append(n, o.Name)
	}
	slices.Sort(n)
	return n
}

func reasonOf(d *Decision, name string) string {
	for _, o := range append(append([]events.RuleOutcome(nil), d.Recorded().Included...), d.Recorded().Excluded...) {
		if o.Name == name {
			return o.Reason
		}
	}
	return "(absent)"
}

func TestClineScenarios(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		record func(s *Session) error
		want   []string
	}{
		{"no evidence keeps paths rules inactive", func(s *Session) error { return nil },
			[]string{"broken", "general"}},
		{"prose activates on the first turn", func(s *Session) error {
			_, err := s.UserMessage(ctx, "add a page under apps/web/src/pages")
			return err
		}, []string{"broken", "frontend", "general"}},
		{"a mention activates", func(s *Session) error {
			_, err := s.Mention(ctx, "/services/api/users.ts", "services/api/users.ts")
			return err
		}, []string{"backend", "broken", "general"}},
		{"unrelated paths do not", func(s *Session) error {
			_, err := s.UserMessage(ctx, "fix docs/README.md")
			return err
		}, []string{"broken", "general"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t, openDB(t), clineWorkspace(), Options{})
			if err := tt.record(s); err != nil {
				t.Fatal(err)
			}
			d := decide(t, s)
			if got := names(d.Recorded().Included); !slices.Equal(got, tt.want) {
				t.Errorf("included %v, want %v", got, tt.want)
			}
			if !strings.Contains(d.Prompt, "Always write tests.") {
				t.Errorf("prompt lacks the universal rule:\n%s", d.Prompt)
			}
		})
	}
}

func TestMalformedRuleIsIncludedWithDiagnostic(t *testing.T) {
	s := newSession(t, openDB(t), clineWorkspace(), Options{})
	d := decide(t, s)
	if r := reasonOf(d, "broken"); r == "(absent)" || !slices.Contains(names(d.Recorded().Included), "broken") {
		t.Fatalf("broken rule not included (reason %s)", r)
	}
	found := false
	for _, dg := range d.Recorded().Diagnostics {
		found = found || strings.Contains(dg.File, "broken.md")
	}
	if !found {
		t.Errorf("no diagnostic for broken.md: %+v", d.Recorded().Diagnostics)
	}
}

func TestToolTargetActivatesNextTurnAndExpires(t *testing.T) {
	ctx := context.Background()
	cfg := projections.DefaultConfig()
	cfg.ToolTurns = 2
	s := newSession(t, openDB(t), clineWorkspace(), Options{Config: &cfg})
	s.UserMessage(ctx, "look at the API")
	decide(t, s) // turn 1
	if _, err := s.ToolCall(ctx, "read_file", "c1", json.RawMessage(`{"path":"services/api/routes.ts"}`)); err != nil {
		t.Fatal(err)
	}
	var got []string
	for turn := 2; turn <= 5; turn++ {
		d := decide(t, s)
		got = append(got, reasonOf(d, "backend"))
	}
	// turns 2 and 3 are within ToolTurns=2 of the call (recorded in turn 2); turn 4 is not.
	want := []string{"matched", "matched", "no_evidence", "no_evidence"}
	if !slices.Equal(got, want) {
		t.Errorf("backend reasons by turn = %v, want %v", got, want)
	}
}

func TestProseExpiresAtTheNextUserMessage(t *testing.T) {
	ctx := context.Background()
	s := newSession(t, openDB(t), clineWorkspace(), Options{})
	s.UserMessage(ctx, "change apps/web/src/App.tsx")
	if r := reasonOf(decide(t, s), "frontend"); r != "matched" {
		t.Fatalf("turn 1: frontend %s", r)
	}
	if r := reasonOf(decide(t, s), "frontend"); r != "matched" {
		t.Errorf("turn 2, same user turn: frontend %s, want matched", r)
	}
	s.UserMessage(ctx, "thanks!")
	if r := reasonOf(decide(t, s), "frontend"); r == "matched" {
		t.Errorf("after the next user message: frontend still matched")
	}
}

func TestToggledOffRule(t *testing.T) {
	ctx := context.Background()
	s := newSession(t, openDB(t), clineWorkspace(), Options{})
	if _, err := s.Toggle(ctx, "cline:/ws/.clinerules/general.md", false); err != nil {
		t.Fatal(err)
	}
	d := decide(t, s)
	if r := reasonOf(d, "general"); r != "toggled_off" {
		t.Errorf("general: %s, want toggled_off", r)
	}
	s.Toggle(ctx, "cline:/ws/.clinerules/general.md", true)
	if r := reasonOf(decide(t, s), "general"); r != "always" {
		t.Errorf("general after re-enabling: %s, want always", r)
	}
}

func TestRemoteRulesWithFrontmatter(t *testing.T) {
	ctx := context.Background()
	remote := []rules.RemoteRule{
		{Name: "org-security", Contents: "Never log tokens.", AlwaysEnabled: true},
		{Name: "org-infra", Contents: "---\npaths: [\"infra/**\"]\n---\nPlan first."},
	}
	s := newSession(t, openDB(t), fstest.MapFS{}, Options{Remote: remote})
	s.Toggle(ctx, "cline:remote:org-security", false)
	d := decide(t, s)
	if got := names(d.Recorded().Included); !slices.Equal(got, []string{"org-security"}) {
		t.Errorf("turn 1 included %v, want [org-security] (alwaysEnabled ignores its toggle)", got)
	}
	s.FileWrite(ctx, "infra/db/main.tf", events.OpEdit)
	if got := names(decide(t, s).Recorded().Included); !slices.Equal(got, []string{"org-infra", "org-security"}) {
		t.Errorf("turn 2 included %v", got)
	}
}

func TestSnapshotOnlyWhenRulesChange(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	fsys := clineWorkspace()
	s := newSession(t, db, fsys, Options{})
	d1, d2 := decide(t, s), decide(t, s)
	if d1.Recorded().Snapshot != d2.Recorded().Snapshot {
		t.Errorf("unchanged rules got a new snapshot: %d then %d", d1.Recorded().Snapshot, d2.Recorded().Snapshot)
	}
	fsys[".clinerules/general.md"] = &fstest.MapFile{Data: []byte("Changed.\n")}
	d3 := decide(t, s)
	if d3.Recorded().Snapshot == d2.Recorded().Snapshot || d3.Recorded().Snapshot != d3.Seq-1 {
		t.Errorf("changed rules: snapshot seq %d, decision seq %d", d3.Recorded().Snapshot, d3.Seq)
	}
	counts := map[events.Type]int{}
	for ev, err := range db.Events(ctx, s.Task(), 1) {
		if err != nil {
			t.Fatal(err)
		}
		counts[ev.Type]++
	}
	if counts[events.TypeRulesSnapshot] != 2 || counts[events.TypeDecision] != 3 {
		t.Errorf("events by type: %v, want 2 snapshots and 3 decisions", counts)
	}
}

func TestReplayReproducesAndDiffs(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	s := newSession(t, db, clineWorkspace(), Options{})
	s.UserMessage(ctx, "add a page under apps/web")
	decide(t, s)
	s.ToolCall(ctx, "read_file", "c1", json.RawMessage(`{"path":"services/api/a.ts"}`))
	decide(t, s)
	if err := db.Verify(ctx, s.Task()); err != nil {
		t.Fatal(err)
	}
	rep, err := Replay(ctx, db, s.Task(), ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Decisions != 2 {
		t.Fatalf("replay: %+v", rep)
	}
	// What-if: the frontend rule now only covers apps/admin.
	alt := clineWorkspace()
	alt[".clinerules/frontend.md"] = &fstest.MapFile{Data: []byte("---\npaths: [\"apps/admin/**\"]\n---\nx\n")}
	ws := rules.Workspace{Roots: []rules.Root{{Name: "/ws", FS: alt}}}
	rep, err = Replay(ctx, db, s.Task(), ReplayOptions{Workspace: &ws})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Changed != 2 || len(rep.Changes) == 0 {
		t.Fatalf("what-if changed %d decisions: %+v", rep.Changed, rep.Changes)
	}
	first := rep.Changes[0].String()
	if !strings.HasPrefix(first, "turn 1: rule frontend was included, now excluded") {
		t.Errorf("first change = %q", first)
	}
}

func TestReopenResumesFromSnapshot(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	cfg := projections.DefaultConfig()
	cfg.SnapshotEvery = 5
	s := newSession(t, db, clineWorkspace(), Options{Config: &cfg})
	for i := range 12 {
		s.ToolCall(ctx, "read_file", "", json.RawMessage(`{"path":"apps/web/f`+string(rune('a'+i))+`.ts"}`))
	}
	decide(t, s)
	want, _ := json.Marshal(s.Context())
	if _, _, err := db.Snapshot(s.Task(), snapshotName); err != nil {
		t.Fatalf("no projection snapshot written: %v", err)
	}
	again, err := Open(ctx, db, s.Task(), Options{Roots: []Root{{Path: "/ws", FS: clineWorkspace()}}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(again.Context())
	if string(got) != string(want) || again.Version() != s.Version() || again.Turn() != s.Turn() {
		t.Errorf("reopened session differs:\n%s\n%s", got, want)
	}
	if _, err := Open(ctx, db, s.Task(), Options{Roots: []Root{{Path: "/elsewhere"}}}); !errors.Is(err, ErrRootMismatch) {
		t.Errorf("reopen with other roots: %v, want ErrRootMismatch", err)
	}
}

func TestSecondWriterGetsVersionConflict(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	a := newSession(t, db, clineWorkspace(), Options{})
	b, err := Open(ctx, db, a.Task(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.UserMessage(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.UserMessage(ctx, "second"); !errors.Is(err, store.ErrVersionConflict) {
		t.Fatalf("stale writer: err = %v, want ErrVersionConflict", err)
	}
	if err := db.Verify(ctx, a.Task()); err != nil {
		t.Fatal(err)
	}
	if h, _ := db.Head(a.Task()); h.Seq != 2 {
		t.Errorf("log has %d events, want 2 (nothing lost, nothing duplicated)", h.Seq)
	}
}

func TestConcurrentRecording(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	s := newSession(t, db, clineWorkspace(), Options{Now: time.Now})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 25 {
				if _, err := s.ToolCall(ctx, "read_file", "", json.RawMessage(`{"path":"apps/web/x.ts"}`)); err != nil {
					t.Error(g, i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if s.Version() != 201 {
		t.Errorf("version %d, want 201", s.Version())
	}
	if err := db.Verify(ctx, s.Task()); err != nil {
		t.Error(err)
	}
}

func TestExplain(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	s := newSession(t, db, clineWorkspace(), Options{})
	s.UserMessage(ctx, "add a page under apps/web/src/pages")
	decide(t, s)
	x, err := s.Explain(ctx, 1, "frontend")
	if err != nil {
		t.Fatal(err)
	}
	text := x.String()
	for _, want := range []string{"frontend", "included", "apps/web/**", "apps/web/src/pages", "prose at seq 2, prompt 1, request 1"} {
		if !strings.Contains(text, want) {
			t.Errorf("explanation lacks %q:\n%s", want, text)
		}
	}
	x, err = s.Explain(ctx, 1, "backend")
	if err != nil || x.Included || !strings.Contains(x.String(), "candidate paths were: apps/web/src/pages") {
		t.Errorf("backend explanation: %v\n%s", err, x)
	}
	if _, err := s.Explain(ctx, 9, "frontend"); !errors.Is(err, ErrNoDecision) {
		t.Errorf("turn 9: %v, want ErrNoDecision", err)
	}
	if _, err := s.Explain(ctx, 1, "nope"); !errors.Is(err, ErrNoRule) || !strings.Contains(err.Error(), "frontend") {
		t.Errorf("unknown rule: %v", err)
	}
}

func TestReservedTypesAreRefused(t *testing.T) {
	s := newSession(t, openDB(t), clineWorkspace(), Options{})
	for _, p := range []events.Payload{&events.TaskStarted{}, &events.Decision{Turn: 1}, &events.RulesSnapshot{}} {
		if _, err := s.Record(context.Background(), p); !errors.Is(err, ErrReserved) {
			t.Errorf("Record(%s) = %v, want ErrReserved", p.EventType(), err)
		}
	}
}

// A rule file over the size limit is kept truncated, with a diagnostic; the snapshot records its
// real size, so a replay from the log reaches the same decision and the same diagnostic.
func TestOversizedRuleReplays(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	fsys := clineWorkspace()
	fsys[".clinerules/huge.md"] = &fstest.MapFile{Data: []byte(strings.Repeat("Say it once. ", rules.MaxFileSize/12))}
	s := newSession(t, db, fsys, Options{})
	d := decide(t, s)
	tooLarge := false
	for _, dg := range d.Recorded().Diagnostics {
		tooLarge = tooLarge || dg.Code == "too_large"
	}
	if !tooLarge || reasonOf(d, "huge") != "always" {
		t.Fatalf("huge.md: reason %s, diagnostics %+v", reasonOf(d, "huge"), d.Recorded().Diagnostics)
	}
	rep, err := Replay(ctx, db, s.Task(), ReplayOptions{})
	if err != nil || !rep.OK() {
		t.Errorf("replay: %v %+v", err, rep.Changes)
	}
}
