package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/store"
)

// hookRules is a workspace with a Cline rule scoped to src/api/**, a Claude Code rule for every
// prompt and a long tasklog rule scoped to docs/**.
func hookRules() fs.FS {
	return fstest.MapFS{
		".clinerules/api.md":       {Data: []byte("---\npaths: [\"src/api/**\"]\n---\nAPI handlers return JSON errors.\n")},
		".claude/rules/testing.md": {Data: []byte("Every change comes with a test.\n")},
		".tasklog/rules/docs.md":   {Data: []byte("---\npaths: [\"docs/**\"]\n---\n" + strings.Repeat("Write short sentences. ", 500) + "\n")},
	}
}

func openAgent(t *testing.T, db store.Store, agent agentlog.Agent) *AgentSession {
	t.Helper()
	a, err := OpenAgent(context.Background(), db, agentlog.TaskID(agent, "s1"), AgentOptions{Agent: agent,
		Started: &events.TaskStarted{Roots: []string{"/ws"}, Cwd: "/ws", Runtime: events.Runtime{Name: string(agent)}},
		RootFS:  func(string) fs.FS { return hookRules() }})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func toolRecord(id, path string) agentlog.Record {
	params, _ := json.Marshal(map[string]string{"file_path": path})
	return agentlog.Record{Key: "k\x00" + id, Payload: &events.ToolCall{Tool: "Read", ID: id, Params: params}, Trigger: true}
}

// deliverAfter records a Read of path, decides and delivers; it returns the delivered names.
func deliverAfter(t *testing.T, a *AgentSession, id, path string) []string {
	t.Helper()
	ctx := context.Background()
	fresh, err := a.RecordHook(ctx, []agentlog.Record{toolRecord(id, path)})
	if err != nil {
		t.Fatal(err)
	}
	if !fresh[0] {
		return nil
	}
	d, err := a.Decide(ctx)
	if err != nil {
		t.Fatal(err)
	}
	del, err := a.Deliver(ctx, d, "PreToolUse", events.ChannelTool, "k\x00"+id)
	if err != nil {
		t.Fatal(err)
	}
	if del == nil {
		return nil
	}
	var names []string
	for _, r := range del.Event.Rules {
		names = append(names, r.Name)
	}
	if del.Event.Bytes != len(del.Text) {
		t.Errorf("delivery records %d bytes, text has %d", del.Event.Bytes, len(del.Text))
	}
	return names
}

func TestDeliverOncePerTaskAndAfterCompaction(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	a := openAgent(t, db, agentlog.ClaudeCode)
	// Claude Code loads .claude/rules itself: only the Cline rule is delivered.
	if got := strings.Join(deliverAfter(t, a, "1", "/ws/src/api/routes.ts"), " "); got != "api" {
		t.Fatalf("first delivery = %q, want api", got)
	}
	if got := deliverAfter(t, a, "2", "/ws/src/api/other.ts"); got != nil {
		t.Fatalf("second delivery = %v, want none: api was delivered", got)
	}
	if got := deliverAfter(t, a, "1", "/ws/src/api/routes.ts"); got != nil {
		t.Fatalf("the same hook again delivered %v", got)
	}
	if _, err := a.RecordHook(ctx, []agentlog.Record{{Key: "c", Payload: &events.Compaction{Trigger: "auto"}}}); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(deliverAfter(t, a, "3", "/ws/src/api/routes.ts"), " "); got != "api" {
		t.Fatalf("after the compaction delivered %q, want api again", got)
	}
	a.Close()

	// Reopened (another hook process), the session knows what was delivered.
	b := openAgent(t, db, agentlog.ClaudeCode)
	if got := deliverAfter(t, b, "4", "/ws/src/api/x.ts"); got != nil {
		t.Fatalf("after reopening delivered %v again", got)
	}
	// A long rule goes by name.
	fresh, err := b.RecordHook(ctx, []agentlog.Record{toolRecord("5", "/ws/docs/guide.md")})
	if err != nil || !fresh[0] {
		t.Fatal(fresh, err)
	}
	d, err := b.Decide(ctx)
	if err != nil {
		t.Fatal(err)
	}
	del, err := b.Deliver(ctx, d, "PreToolUse", events.ChannelTool, "k\x005")
	if err != nil || del == nil {
		t.Fatal(del, err)
	}
	if del.Event.Form != events.FormNames || !strings.Contains(del.Text, "rule://docs") || len(del.Text) > agentlog.MaxDelivery {
		t.Fatalf("over the limit: form %s, text %q", del.Event.Form, del.Text)
	}
	// The text is rendered again from the log alone, as it was replied.
	if text, err := DeliveryText(ctx, db, b.Task(), del.Seq); err != nil || text != del.Text {
		t.Fatalf("DeliveryText = %q, %v; want the reply %q", text, err, del.Text)
	}
	b.Close()

	rep, err := Replay(ctx, db, a.Task(), ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK() || rep.Deliveries != 3 {
		t.Fatalf("replay: %+v, want OK with 3 deliveries", rep)
	}
	x, err := Explain(ctx, db, a.Task(), 1, "api")
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Deliveries) != 1 || !strings.Contains(x.String(), "delivered to the model with this decision") {
		t.Fatalf("explain turn 1: %d deliveries\n%s", len(x.Deliveries), x)
	}
}

func TestDeliverSkipsWhatTheAgentLoaded(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	a := openAgent(t, db, agentlog.Codex)
	if _, err := a.RecordHook(ctx, []agentlog.Record{{Key: "i",
		Payload: &events.InstructionsLoaded{Path: "/ws/.clinerules/api.md", Reason: "session_start"}}}); err != nil {
		t.Fatal(err)
	}
	// Codex loads neither family: only the Claude rule is left, the Cline file was reported.
	if got := strings.Join(deliverAfter(t, a, "1", "/ws/src/api/routes.ts"), " "); got != "testing" {
		t.Fatalf("delivered %q, want testing", got)
	}
}

func TestReplayFindsADeliveryThatDoesNotFollow(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	a := openAgent(t, db, agentlog.ClaudeCode)
	if _, err := a.RecordHook(ctx, []agentlog.Record{toolRecord("1", "/ws/src/api/routes.ts")}); err != nil {
		t.Fatal(err)
	}
	d, err := a.Decide(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// A delivery of a rule the decision did not choose to deliver (Claude loads it itself).
	forged := &events.Delivery{Decision: d.Seq, Agent: "claude-code", Hook: "PreToolUse", Channel: events.ChannelTool,
		Form: events.FormFull, Rules: []events.DeliveredRule{{ID: "claude:/ws/.claude/rules/testing.md", Name: "testing"}},
		Bytes: 3, SHA256: strings.Repeat("0", 64)}
	ev, err := events.New(forged)
	if err != nil {
		t.Fatal(err)
	}
	ev.ID = HookEventID("forged")
	if _, err := a.appendOnce(ctx, []events.Event{ev}); err != nil {
		t.Fatal(err)
	}
	rep, err := Replay(ctx, db, a.Task(), ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK() || len(rep.Changes) != 1 || !strings.Contains(rep.Changes[0].String(), "delivered [testing]") {
		t.Fatalf("replay: %+v", rep)
	}
}

func TestRecordHookRefusesReservedTypes(t *testing.T) {
	a := openAgent(t, openDB(t), agentlog.Cline)
	_, err := a.RecordHook(context.Background(), []agentlog.Record{{Key: "x", Payload: &events.Delivery{}}})
	if err == nil {
		t.Fatal("a delivery was recorded as a hook record")
	}
}

// DeliveryText renders a delivery again from three events, the delivery, its decision and
// that decision's rules snapshot, however many came before it.
func TestDeliveryTextOfAFullDelivery(t *testing.T) {
	db := openDB(t)
	ctx := context.Background()
	a := openAgent(t, db, agentlog.Cursor)
	for i := range 40 {
		if _, err := a.RecordHook(ctx, []agentlog.Record{toolRecord(fmt.Sprint(i), fmt.Sprintf("/ws/src/api/f%d.ts", i))}); err != nil {
			t.Fatal(err)
		}
	}
	d, err := a.Decide(ctx)
	if err != nil {
		t.Fatal(err)
	}
	del, err := a.Deliver(ctx, d, "afterFileEdit", events.ChannelTool, "k1")
	if err != nil || del == nil {
		t.Fatal(del, err)
	}
	counted := &eventsCounted{LogReader: db}
	text, err := DeliveryText(ctx, counted, a.Task(), del.Seq)
	if err != nil || text != del.Text {
		t.Fatalf("DeliveryText = %q, %v; want %q", text, err, del.Text)
	}
	if counted.events != 3 || del.Seq < 40 {
		t.Errorf("DeliveryText of seq %d read %d events; want 3", del.Seq, counted.events)
	}
	if _, err := DeliveryText(ctx, db, a.Task(), d.Seq); err == nil {
		t.Fatal("DeliveryText of a decision did not fail")
	}
}

// TestReopenKeepsTheRecordedAgent: a task is its starting agent's whoever reopens it; naming
// another agent is refused, and a task no known agent started delivers nothing but an error.
func TestReopenKeepsTheRecordedAgent(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	a := openAgent(t, db, agentlog.ClaudeCode)
	task := a.Task()
	a.Close()

	_, err := OpenAgent(ctx, db, task, AgentOptions{Agent: agentlog.Cline, RootFS: func(string) fs.FS { return hookRules() }})
	if !errors.Is(err, ErrAgentMismatch) {
		t.Fatalf("reopened as cline: %v, want ErrAgentMismatch", err)
	}
	b, err := OpenAgent(ctx, db, task, AgentOptions{RootFS: func(string) fs.FS { return hookRules() }})
	if err != nil {
		t.Fatal(err)
	}
	if b.Agent() != agentlog.ClaudeCode {
		t.Fatalf("reopened without an agent: agent %q, want the recorded %q", b.Agent(), agentlog.ClaudeCode)
	}
	b.Close()

	c, err := OpenAgent(ctx, db, uuid.New(), AgentOptions{RootFS: func(string) fs.FS { return hookRules() },
		Started: &events.TaskStarted{Roots: []string{"/ws"}, Cwd: "/ws", Runtime: events.Runtime{Name: "some-client"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.RecordHook(ctx, []agentlog.Record{toolRecord("1", "/ws/src/api/x.ts")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.DecideAndDeliver(ctx, "PreToolUse", events.ChannelTool, "k\x001"); !errors.Is(err, ErrNoAgent) {
		t.Fatalf("deliver in a task of no agent: %v, want ErrNoAgent", err)
	}
}

// TestHookRepeatedCompactionIsRecordedOnce: the same SessionStart(source=compact) handled again, by
// the hook or from the spool, neither records a second compaction (which would forget what was
// redelivered) nor writes another decision.
func TestHookRepeatedCompactionIsRecordedOnce(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	a := openAgent(t, db, agentlog.ClaudeCode)
	hook := func(payload string) *agentlog.Hook {
		t.Helper()
		h, err := agentlog.ParseHook(agentlog.ClaudeCode, []byte(payload))
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	read := hook(`{"session_id":"s1","cwd":"/ws","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/ws/src/api/x.ts"},"tool_use_id":"t1"}`)
	if text, err := a.Hook(ctx, read, true); err != nil || !strings.Contains(text, "API handlers") {
		t.Fatalf("first delivery %q, %v", text, err)
	}
	compact := `{"session_id":"s1","cwd":"/ws","hook_event_name":"SessionStart","source":"compact"}`
	redelivered, err := a.Hook(ctx, hook(compact), true)
	if err != nil || !strings.Contains(redelivered, "API handlers") {
		t.Fatalf("after the compaction delivered %q, %v; want the api rule again", redelivered, err)
	}
	head := a.Version()
	// The same hook handled again prints its delivery again, and records nothing.
	if text, err := a.HookAgain(ctx, hook(compact)); err != nil || text != redelivered {
		t.Fatalf("the same compaction again printed %q, %v; want its delivery again", text, err)
	}
	if _, err := a.Hook(ctx, hook(compact), false); err != nil {
		t.Fatal(err)
	}
	if a.Version() != head || a.Deliveries().Compactions() != 1 || a.Deliveries().DeliveredCount() == 0 {
		t.Fatalf("repeated compaction: head %d (was %d), %d compactions, %d delivered; want nothing written",
			a.Version(), head, a.Deliveries().Compactions(), a.Deliveries().DeliveredCount())
	}
	// Another hook process, reopening the task, sees the same.
	a.Close()
	b := openAgent(t, db, agentlog.ClaudeCode)
	defer b.Close()
	if text, err := b.Hook(ctx, hook(compact), true); err != nil || text != "" || b.Version() != head {
		t.Fatalf("reopened, the same compaction delivered %q, %v (head %d, was %d)", text, err, b.Version(), head)
	}
	if text, err := b.HookAgain(ctx, hook(compact)); err != nil || text != redelivered || b.Version() != head {
		t.Fatalf("reopened, the same compaction printed %q, %v (head %d, was %d); want its delivery again, nothing written", text, err, b.Version(), head)
	}
	// A compaction after more work is a new one, and delivers again.
	if _, err := b.Hook(ctx, hook(`{"session_id":"s1","cwd":"/ws","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/ws/src/api/y.ts"},"tool_use_id":"t2"}`), true); err != nil {
		t.Fatal(err)
	}
	if text, err := b.Hook(ctx, hook(compact), true); err != nil || !strings.Contains(text, "API handlers") || b.Deliveries().Compactions() != 2 {
		t.Fatalf("a later compaction delivered %q, %v (%d compactions)", text, err, b.Deliveries().Compactions())
	}
}

// lookupless hides the store's id index: the hook then finds its delivery by reading the log.
type lookupless struct{ store.Store }

// TestHookAgainPrintsItsOwnDelivery runs a hook that delivered a second time, in the same
// session and in another one (a hook handling the payload again after the server that
// recorded the delivery died before replying): it prints the same text, and records nothing.
// The PostToolUse of the same call shares the PreToolUse's key but is another hook: nothing.
func TestHookAgainPrintsItsOwnDelivery(t *testing.T) {
	pre := `{"session_id":"s1","cwd":"/ws","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/ws/src/api/x.ts"},"tool_use_id":"t1"}`
	post := `{"session_id":"s1","cwd":"/ws","hook_event_name":"PostToolUse","tool_name":"Read","tool_input":{"file_path":"/ws/src/api/x.ts"},"tool_use_id":"t1","tool_response":{}}`
	prompt := `{"session_id":"s1","cwd":"/ws","hook_event_name":"UserPromptSubmit","prompt":"fix src/api/y.ts","prompt_id":"p1"}`
	for _, tc := range []struct {
		name string
		wrap func(store.Store) store.Store
	}{
		{"id index", func(db store.Store) store.Store { return db }},
		{"log read", func(db store.Store) store.Store { return lookupless{db} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			db := tc.wrap(openDB(t))
			hook := func(payload string) *agentlog.Hook {
				t.Helper()
				h, err := agentlog.ParseHook(agentlog.ClaudeCode, []byte(payload))
				if err != nil {
					t.Fatal(err)
				}
				return h
			}
			a := openAgent(t, db, agentlog.ClaudeCode)
			first, err := a.Hook(ctx, hook(pre), true)
			if err != nil || !strings.Contains(first, "API handlers") {
				t.Fatalf("first run delivered %q, %v", first, err)
			}
			if text, err := a.Hook(ctx, hook(pre), true); err != nil || text != "" {
				t.Fatalf("a second hook for the same event printed %q, %v; want nothing", text, err)
			}
			if text, err := a.HookAgain(ctx, hook(pre)); err != nil || text != first {
				t.Fatalf("handled again in the same session it printed %q, %v; want %q", text, err, first)
			}
			a.Close()
			b := openAgent(t, db, agentlog.ClaudeCode)
			defer b.Close()
			if text, err := b.HookAgain(ctx, hook(pre)); err != nil || text != first {
				t.Fatalf("handled again in another session it printed %q, %v; want %q", text, err, first)
			}
			if text, err := b.HookAgain(ctx, hook(post)); err != nil || text != "" {
				t.Fatalf("the PostToolUse of the call printed %q, %v; want nothing", text, err)
			}
			// A prompt that delivered nothing new prints nothing when run again.
			if text, err := b.Hook(ctx, hook(prompt), true); err != nil || text != "" {
				t.Fatalf("the prompt delivered %q, %v; want nothing (every rule was delivered)", text, err)
			}
			if text, err := b.HookAgain(ctx, hook(prompt)); err != nil || text != "" {
				t.Fatalf("the prompt handled again printed %q, %v; want nothing", text, err)
			}
			n := 0
			for ev, err := range db.Events(ctx, b.Task(), 1) {
				if err != nil {
					t.Fatal(err)
				}
				if ev.Type == events.TypeDelivery {
					n++
				}
			}
			if n != 1 {
				t.Fatalf("%d deliveries recorded, want 1", n)
			}
		})
	}
}

// eventsCounted is a LogReader that counts the events its readers take.
type eventsCounted struct {
	LogReader
	events int
}

func (c *eventsCounted) Events(ctx context.Context, task uuid.UUID, from uint64) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		for ev, err := range c.LogReader.Events(ctx, task, from) {
			c.events++
			if !yield(ev, err) {
				return
			}
		}
	}
}
