package session

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/store"
)

// countingDB is a store that counts appends and can fail the next append of a decision.
type countingDB struct {
	*store.DB
	appends  int
	failNext bool
}

func (c *countingDB) Append(ctx context.Context, task uuid.UUID, expected uint64, evs ...events.Event) (store.Appended, error) {
	c.appends++
	if c.failNext && slices.ContainsFunc(evs, func(ev events.Event) bool { return ev.Type == events.TypeDecision }) {
		c.failNext = false
		return store.Appended{}, errors.New("disk full")
	}
	return c.DB.Append(ctx, task, expected, evs...)
}

// twoStepDB is a store that cannot look event ids up: hooks record, then decide and deliver.
type twoStepDB struct{ store.Store }

func newCountingDB(t *testing.T) *countingDB {
	return &countingDB{DB: openDB(t).(*store.DB)}
}

// openAgentAt opens the hook tests' Claude Code session on db with a clock that stands still,
// so that two sessions stamp the same times however often they read it.
func openAgentAt(t *testing.T, db store.Store) *AgentSession {
	t.Helper()
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	a, err := OpenAgent(context.Background(), db, agentlog.TaskID(agentlog.ClaudeCode, "s1"), AgentOptions{Agent: agentlog.ClaudeCode,
		Started: &events.TaskStarted{Roots: []string{"/ws"}, Cwd: "/ws", Runtime: events.Runtime{Name: "claude-code"}},
		RootFS:  func(string) fs.FS { return hookRules() },
		Now:     func() time.Time { return clock }})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func readHook(t *testing.T, id, path string) *agentlog.Hook {
	t.Helper()
	h, err := agentlog.ParseHook(agentlog.ClaudeCode, fmt.Appendf(nil,
		`{"session_id":"s1","cwd":"/ws","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":%q}`, path, id))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// logOf is each event of the task's log as type, seq, turn and payload.
func logOf(t *testing.T, db store.Store, task uuid.UUID) []string {
	t.Helper()
	var out []string
	for ev, err := range db.Events(context.Background(), task, 1) {
		if err != nil {
			t.Fatal(err)
		}
		id := ""
		switch ev.Type {
		case events.TypeTaskStarted, events.TypeRulesSnapshot, events.TypeDecision:
		default:
			id = ev.ID.String() // the hook's events and deliveries have ids from their keys
		}
		out = append(out, fmt.Sprintf("%s seq=%d turn=%d time=%s id=%s %s", ev.Type, ev.Seq, ev.Turn, ev.Time.Format(time.RFC3339), id, ev.Data))
	}
	return out
}

// A hook with new events records them, decides and delivers in one append; the same hook again
// writes nothing and delivers nothing; a Post hook after its Pre (the call in the log, a write
// new) records in two steps, as before. The log is, event for event, the one recording and deciding in two commits
// writes.
func TestHookInOneCommit(t *testing.T) {
	ctx := context.Background()
	one := newCountingDB(t)
	a := openAgentAt(t, one)
	two := &twoStepDB{openDB(t)}
	b := openAgentAt(t, two)
	read := func(id, path string) string {
		return fmt.Sprintf(`{"session_id":"s1","cwd":"/ws","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":%q}`, path, id)
	}
	for i, step := range []struct {
		payload string
		appends int    // by the one-commit session
		want    string // in the delivered text; "" for none
	}{
		{read("t1", "/ws/src/api/routes.ts"), 1, "API handlers"},
		{read("t1", "/ws/src/api/routes.ts"), 1, ""}, // the same hook again: the record is in the log
		{read("t2", "/ws/src/api/users.ts"), 1, ""},  // delivered already: a decision, no delivery
		{`{"session_id":"s1","cwd":"/ws","hook_event_name":"UserPromptSubmit","prompt":"tidy up docs/guide.md please"}`, 1, ""},
		{`{"session_id":"s1","cwd":"/ws","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"/ws/src/api/users.ts","old_string":"a","new_string":"b"},"tool_use_id":"t3"}`, 1, ""},
		{`{"session_id":"s1","cwd":"/ws","hook_event_name":"PostToolUse","tool_name":"Edit","tool_input":{"file_path":"/ws/src/api/users.ts","old_string":"a","new_string":"b"},"tool_use_id":"t3","tool_response":{"filePath":"/ws/src/api/users.ts"}}`, 3, ""}, // the batch, then each
	} {
		h, err := agentlog.ParseHook(agentlog.ClaudeCode, []byte(step.payload))
		if err != nil {
			t.Fatal(err)
		}
		before := one.appends
		text, err := a.Hook(ctx, h, true)
		if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if got := one.appends - before; got != step.appends {
			t.Errorf("step %d: %d appends, want %d", i, got, step.appends)
		}
		if step.want == "" && text != "" || !strings.Contains(text, step.want) {
			t.Errorf("step %d: delivered %q, want %q", i, text, step.want)
		}
		h2, _ := agentlog.ParseHook(agentlog.ClaudeCode, []byte(step.payload))
		text2, err := b.Hook(ctx, h2, true)
		if err != nil || text2 != text {
			t.Errorf("step %d: the two-step hook delivered %q, %v; the one-commit hook %q", i, text2, err, text)
		}
	}
	task := agentlog.TaskID(agentlog.ClaudeCode, "s1")
	got, want := logOf(t, one, task), logOf(t, two, task)
	if !slices.Equal(got, want) {
		t.Errorf("one commit wrote\n%s\ntwo commits wrote\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := one.Verify(ctx, task); err != nil {
		t.Error(err)
	}
}

// When the one commit fails, nothing of the hook is in the log, the session refuses further
// writes (ErrStale) and writes no snapshot of what it folded; the task opened again takes the
// hook as new.
func TestHookInOneCommitFailure(t *testing.T) {
	ctx := context.Background()
	db := newCountingDB(t)
	task := agentlog.TaskID(agentlog.ClaudeCode, "s1")
	a := openAgentAt(t, db)
	if _, err := a.Hook(ctx, readHook(t, "t0", "/ws/README.md"), true); err != nil {
		t.Fatal(err)
	}
	head := a.Version()
	db.failNext = true
	if text, err := a.Hook(ctx, readHook(t, "t1", "/ws/src/api/routes.ts"), true); !errors.Is(err, ErrStale) || text != "" {
		t.Fatalf("hook with a failing commit = %q, %v; want ErrStale", text, err)
	}
	if h, err := db.Head(task); err != nil || h.Seq != head {
		t.Fatalf("head %d, %v after the failed commit; want %d", h.Seq, err, head)
	}
	if _, err := a.Hook(ctx, readHook(t, "t2", "/ws/src/api/users.ts"), true); !errors.Is(err, ErrStale) {
		t.Errorf("next hook: %v, want ErrStale", err)
	}
	if _, err := a.Decide(ctx); !errors.Is(err, ErrStale) {
		t.Errorf("Decide: %v, want ErrStale", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{snapshotName, deliveriesSnapshotName} {
		if seq, _, err := db.Snapshot(task, name); err == nil && seq > head {
			t.Errorf("snapshot %s at seq %d, past the log's head %d", name, seq, head)
		}
	}
	b := openAgentAt(t, db)
	defer b.Close()
	if text, err := b.Hook(ctx, readHook(t, "t1", "/ws/src/api/routes.ts"), true); err != nil || !strings.Contains(text, "API handlers") {
		t.Errorf("the hook again after reopening: %q, %v", text, err)
	}
	if err := db.Verify(ctx, task); err != nil {
		t.Error(err)
	}
}

// OpenAgent with Watch watches the roots that are folders here, and only those.
func TestOpenAgentWatch(t *testing.T) {
	dir := t.TempDir()
	for _, watch := range []bool{false, true} {
		a, err := OpenAgent(context.Background(), openDB(t), uuid.New(), AgentOptions{Agent: agentlog.ClaudeCode, Watch: watch,
			Started: &events.TaskStarted{Roots: []string{dir, "/no/such/folder"}, Cwd: dir, Runtime: events.Runtime{Name: "claude-code"}}})
		if err != nil {
			t.Fatal(err)
		}
		roots := a.opts.Roots
		a.Close()
		want := ""
		if watch {
			want = dir
		}
		if roots[0].Dir != want || roots[1].Dir != "" || roots[1].FS != nil {
			t.Errorf("Watch %v: roots %+v; want the folder's Dir %q, none for the missing one", watch, roots, want)
		}
	}
}

// snapshotlessDB is a store whose snapshots cannot be written.
type snapshotlessDB struct{ *store.DB }

func (snapshotlessDB) PutSnapshot(uuid.UUID, string, uint64, []byte) error {
	return errors.New("disk full")
}

// A snapshot is a cache of the fold: a hook whose events and delivery are in the log delivers,
// though the snapshot due after them cannot be written; the agent session's Close reports it.
func TestHookDeliversWhenASnapshotFails(t *testing.T) {
	ctx := context.Background()
	db := snapshotlessDB{openDB(t).(*store.DB)}
	a := openAgentAt(t, db)
	for i := range 140 { // a tool call and a decision each: past SnapshotEvery (256 events)
		if _, err := a.Hook(ctx, readHook(t, fmt.Sprint("r", i), "/ws/README.md"), true); err != nil {
			t.Fatalf("hook %d: %v", i, err)
		}
	}
	if text, err := a.Hook(ctx, readHook(t, "t1", "/ws/src/api/routes.ts"), true); err != nil || !strings.Contains(text, "API handlers") {
		t.Fatalf("delivering hook: %q, %v", text, err)
	}
	if err := a.Close(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Close: %v, want the snapshot's error", err)
	}
	if err := db.Verify(ctx, agentlog.TaskID(agentlog.ClaudeCode, "s1")); err != nil {
		t.Error(err)
	}
}

// Reattach carries a session on with its log opened again, and refuses, changing nothing, a
// log another writer appended to meanwhile or another log of the same length.
func TestReattach(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func(name string) *store.DB {
		t.Helper()
		db, err := store.Open(filepath.Join(dir, name), &store.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		return db
	}
	db := open("a.db")
	a := openAgentAt(t, db)
	if _, err := a.Hook(ctx, readHook(t, "t1", "/ws/src/api/routes.ts"), true); err != nil {
		t.Fatal(err)
	}
	db.Close()

	db = open("a.db")
	if err := a.Reattach(db); err != nil {
		t.Fatalf("reattach to the same log: %v", err)
	}
	if _, err := a.Hook(ctx, readHook(t, "t2", "/ws/src/api/users.ts"), true); err != nil {
		t.Fatalf("hook after reattaching: %v", err)
	}
	head := a.Version()
	b := openAgentAt(t, db) // another writer of the same task
	if _, err := b.Hook(ctx, readHook(t, "t3", "/ws/README.md"), true); err != nil {
		t.Fatal(err)
	}
	b.Close()
	db.Close()

	db = open("a.db")
	defer db.Close()
	if err := a.Reattach(db); !errors.Is(err, store.ErrVersionConflict) {
		t.Errorf("reattach after another writer: %v, want ErrVersionConflict", err)
	}
	other := open("b.db") // the same task, as long, but another log
	defer other.Close()
	c := openAgentAt(t, other)
	for _, call := range [][2]string{{"u1", "/ws/src/api/routes.ts"}, {"u2", "/ws/README.md"}} {
		if _, err := c.Hook(ctx, readHook(t, call[0], call[1]), true); err != nil {
			t.Fatal(err)
		}
	}
	if c.Version() != head {
		t.Fatalf("the other log has %d events, want %d", c.Version(), head)
	}
	if err := a.Reattach(other); !errors.Is(err, store.ErrVersionConflict) {
		t.Errorf("reattach to another log of the same length: %v, want ErrVersionConflict", err)
	}
}

// Hooks that arrive together on one session, each recording and then deciding in two steps,
// deliver a rule once: the delivery a decision writes is in the Deliveries fold before the next
// decision chooses what to deliver. A checkpoint meanwhile reads the fold under the same lock
// (run with -race).
func TestConcurrentHooksDeliverOnce(t *testing.T) {
	ctx := context.Background()
	db := &twoStepDB{openDB(t)}
	a := openAgentAt(t, db)
	const hooks = 8
	errs := make(chan error, hooks+1)
	go func() {
		var err error
		for range hooks {
			err = errors.Join(err, a.Checkpoint())
		}
		errs <- err
	}()
	for i := range hooks {
		h := readHook(t, fmt.Sprintf("t%d", i), fmt.Sprintf("/ws/src/api/h%d.ts", i))
		go func() {
			_, err := a.Hook(ctx, h, true)
			errs <- err
		}()
	}
	for range hooks + 1 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	delivered := map[string]int{}
	for ev, err := range db.Events(ctx, a.Task(), 1) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type != events.TypeDelivery {
			continue
		}
		p, err := ev.Payload()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.(*events.Delivery).Rules {
			delivered[r.ID]++
		}
	}
	if len(delivered) == 0 {
		t.Fatal("no rule was delivered")
	}
	for id, n := range delivered {
		if n != 1 {
			t.Errorf("rule %s delivered %d times, want once", id, n)
		}
	}
}
