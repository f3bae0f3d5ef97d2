package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// replayOf replays a task once the server has let go of the database.
func replayOf(t *testing.T, s *Server, db string, task uuid.UUID) session.Report {
	t.Helper()
	s.Shutdown()
	<-s.Done()
	d, err := store.Open(db, &store.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rep, err := session.Replay(context.Background(), d, task, session.ReplayOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestDeliverHasNoLimit: the size past which rules go by name is fixed, since replay checks a
// delivery's form against it; a deliver request that names its own limit is refused, and what
// the server delivers replays as recorded.
func TestDeliverHasNoLimit(t *testing.T) {
	ws := workspace(t)
	s, db := start(t, Options{})
	c := dial(t, s)
	ctx := context.Background()
	open, err := c.Open(ctx, "pi", "sess-1", []string{ws}, ws)
	if err != nil {
		t.Fatal(err)
	}
	read := Record{Key: "pi/sess-1/tool/call_1", Trigger: true, Type: "tool_call", Data: json.RawMessage(`{"tool":"read","id":"call_1","params":{"path":"src/api/routes.ts"}}`)}
	if _, err := c.Record(ctx, open.Task, read); err != nil {
		t.Fatal(err)
	}
	rc := rawDial(t, s)
	fmt.Fprintf(rc, `{"op":"hello","version":1}`+"\n")
	rc.response(t)
	fmt.Fprintf(rc, `{"id":2,"op":"deliver","task":%q,"hook":"tool_result","channel":"tool","key":"pi/sess-1/tool/call_1","limit":60}`+"\n", open.Task)
	if resp := rc.response(t); resp.Error == nil || resp.Error.Code != CodeBadRequest {
		t.Fatalf("deliver with a limit: %+v, want %s", resp, CodeBadRequest)
	}
	del, err := c.Deliver(ctx, open.Task, "tool_result", events.ChannelTool, "pi/sess-1/tool/call_1")
	if err != nil || !hasRule(del.Rules, "api") {
		t.Fatalf("deliver: %+v, %v", del, err)
	}
	if rep := replayOf(t, s, db, uuid.MustParse(open.Task)); !rep.OK() {
		t.Fatalf("replay of the delivery: %+v", rep)
	}
}
