package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
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
	task := openTask(t, c, "pi", ws)
	if _, err := c.Record(ctx, task, piReadRoutes); err != nil {
		t.Fatal(err)
	}
	rc := rawDial(t, s)
	fmt.Fprintf(rc, `{"op":"hello","version":1}`+"\n")
	rc.response(t)
	fmt.Fprintf(rc, `{"id":2,"op":"deliver","task":%q,"hook":"tool_result","channel":"tool","key":"pi/sess-1/tool/call_1","limit":60}`+"\n", task)
	if resp := rc.response(t); resp.Error == nil || resp.Error.Code != CodeBadRequest {
		t.Fatalf("deliver with a limit: %+v, want %s", resp, CodeBadRequest)
	}
	del, err := c.Deliver(ctx, task, "tool_result", events.ChannelTool, "pi/sess-1/tool/call_1")
	if err != nil || !hasRule(del.Rules, "api") {
		t.Fatalf("deliver: %+v, %v", del, err)
	}
	if rep := replayOf(t, s, db, uuid.MustParse(task)); !rep.OK() {
		t.Fatalf("replay of the delivery: %+v", rep)
	}
}

// TestRequestsKeepTheTaskAgent: a request naming another agent than the task's is refused, on
// an open session as on a new one, and delivering in a task opened without an agent is an
// error, not a silent choice of what the model already has.
func TestRequestsKeepTheTaskAgent(t *testing.T) {
	ws := workspace(t)
	s, _ := start(t, Options{})
	c := dial(t, s)
	ctx := context.Background()
	task := openTask(t, c, "claude-code", ws)
	read := Record{Key: "k/1", Trigger: true, Type: "tool_call", Data: json.RawMessage(`{"tool":"Read","id":"1","params":{"file_path":"src/api/routes.ts"}}`)}
	err := c.Call(ctx, &Request{Op: OpRecord, Task: task, Agent: "cline", Events: []Record{read}}, nil)
	if e, ok := err.(*Error); !ok || e.Code != CodeConflict {
		t.Fatalf("record as cline in a claude-code task: %v, want %s", err, CodeConflict)
	}
	if err := c.Call(ctx, &Request{Op: OpClose, Task: task}, nil); err != nil {
		t.Fatal(err)
	}
	err = c.Call(ctx, &Request{Op: OpRecord, Task: task, Agent: "cline", Events: []Record{read}}, nil)
	if e, ok := err.(*Error); !ok || e.Code != CodeConflict {
		t.Fatalf("record as cline in a closed claude-code task: %v, want %s", err, CodeConflict)
	}

	var none OpenResult
	if err := c.Call(ctx, &Request{Op: OpOpen, Task: uuid.NewString(), Roots: []string{ws}, Cwd: ws}, &none); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Record(ctx, none.Task, read); err != nil {
		t.Fatal(err)
	}
	_, err = c.Deliver(ctx, none.Task, "tool_result", events.ChannelTool, "k/1")
	if e, ok := err.(*Error); !ok || e.Code != CodeBadRequest || !strings.Contains(e.Message, "agent") {
		t.Fatalf("deliver in a task opened without an agent: %v, want a %s naming the agent", err, CodeBadRequest)
	}
}

// TestServeDialRefusesASharedSocketFolder: a hook does not talk to whatever listens in a socket
// folder of the temporary directory that others may write to; it is told the server is
// unreachable, and goes to the database itself.
func TestServeDialRefusesASharedSocketFolder(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	db := filepath.Join(t.TempDir(), strings.Repeat("d", 100), "tasklog.db")
	sock := SocketPath(db)
	if err := os.MkdirAll(filepath.Dir(sock), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(sock), 0o777); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := l.Accept(); err == nil {
			accepted <- struct{}{}
			c.Close()
		}
	}()
	c, err := Dial(context.Background(), sock, "test")
	if err == nil {
		c.Close()
	}
	if !errors.Is(err, ErrUntrustedSocket) || !Unreachable(err) {
		t.Fatalf("Dial in a folder of mode 0777: %v, want ErrUntrustedSocket", err)
	}
	select {
	case <-accepted:
		t.Fatal("Dial connected to the socket in the shared folder")
	default:
	}
}

// TestServeCloseUsesTheDatabase: the close op writes the session's snapshots, so it counts as a
// user of the database like the other ops: the database is open while it runs (opened again
// after the hold period let it go) and let go after.
func TestServeCloseUsesTheDatabase(t *testing.T) {
	ws := workspace(t)
	var opened atomic.Int32
	s, _ := start(t, Options{Hold: time.Millisecond, Opened: func(context.Context, store.Store) error {
		opened.Add(1)
		return nil
	}})
	c := dial(t, s)
	ctx := context.Background()
	task := openTask(t, c, "claude-code", ws)
	held := func() bool {
		s.dbmu.Lock()
		defer s.dbmu.Unlock()
		return s.db != nil
	}
	for deadline := time.Now().Add(slow); held() && time.Now().Before(deadline); {
		time.Sleep(5 * time.Millisecond)
	}
	if held() {
		t.Fatal("the database is still held after the hold period")
	}
	before := opened.Load()
	if err := c.Call(ctx, &Request{Op: OpClose, Task: task}, nil); err != nil {
		t.Fatal(err)
	}
	s.dbmu.Lock()
	users := s.users
	s.dbmu.Unlock()
	if opened.Load() != before+1 || users != 0 {
		t.Fatalf("close: database opened %d times more, %d users after; want 1 and 0", opened.Load()-before, users)
	}
}
