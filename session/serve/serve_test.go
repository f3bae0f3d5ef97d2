package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// workspace is a project with a rule scoped to src/api (in Cline's folder, which Claude Code
// does not read itself) and an always rule in AGENTS.md.
func workspace(t testing.TB) string {
	t.Helper()
	ws := filepath.Join(t.TempDir(), "shop")
	files := map[string]string{
		".clinerules/api.md": "---\npaths: [\"src/api/**\"]\n---\nAPI handlers return JSON errors with a code.\n",
		"AGENTS.md":          "Run npm test before you finish.\n",
		"src/api/routes.ts":  "export const routes = []\n",
	}
	for name, content := range files {
		p := filepath.Join(ws, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return ws
}

// openTask opens agent's session sess-1 with ws as its root and working folder and returns
// the task's id.
func openTask(t testing.TB, c *Client, agent, ws string) string {
	t.Helper()
	open, err := c.Open(context.Background(), agent, "sess-1", []string{ws}, ws)
	if err != nil {
		t.Fatal(err)
	}
	return open.Task
}

// piReadRoutes is pi's read of src/api/routes.ts in session sess-1, which brings in the rule
// scoped to src/api.
var piReadRoutes = Record{Key: "pi/sess-1/tool/call_1", Trigger: true, Type: "tool_call", Data: json.RawMessage(`{"tool":"read","id":"call_1","params":{"path":"src/api/routes.ts"}}`)}

// start runs a server on a new database and returns it with the database's path.
func start(t testing.TB, opts Options) (*Server, string) {
	t.Helper()
	return startSync(t, opts, false)
}

// startSync is start with the database's commits synced to disk when durable is set.
func startSync(t testing.TB, opts Options, durable bool) (*Server, string) {
	t.Helper()
	db := filepath.Join(t.TempDir(), "tasklog.db")
	opts.NoSync = !durable
	return serveAt(t, db, opts), db
}

// serveAt runs a server on the database db until the test ends.
func serveAt(t testing.TB, db string, opts Options) *Server {
	t.Helper()
	s, err := Listen(db, opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	t.Cleanup(func() {
		s.Shutdown()
		<-s.Done()
	})
	return s
}

func dial(t testing.TB, s *Server) *Client {
	t.Helper()
	c, err := Dial(context.Background(), s.Socket(), "test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// slow bounds what a test waits for (a server's answer, the database let go, the server gone):
// room for a machine many times slower than usual. A test waits on the condition and meets the
// bound only when it fails.
const slow = time.Minute

func preToolUse(ws, session, id string) []byte {
	return fmt.Appendf(nil, `{"session_id":%q,"cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":%q}`,
		session, ws, filepath.Join(ws, "src/api/routes.ts"), id)
}

// logOf reads a task's events once the server has let go of the database.
func logOf(t *testing.T, s *Server, db string, task uuid.UUID) []events.Event {
	t.Helper()
	s.Shutdown()
	<-s.Done()
	d, err := store.Open(db, &store.Options{ReadOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var out []events.Event
	for ev, err := range d.Events(context.Background(), task, 1) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
	return out
}

func count(evs []events.Event, typ events.Type) int {
	n := 0
	for _, ev := range evs {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

// TestRuntimeSession drives a task as a runtime in another language would: open, record with
// keys (twice: the second is not written again), decide, deliver (once), explain.
func TestRuntimeSession(t *testing.T) {
	ws := workspace(t)
	s, db := start(t, Options{})
	c := dial(t, s)
	ctx := context.Background()
	task := openTask(t, c, "pi", ws)
	msg := Record{Key: "pi/sess-1/input/1", Trigger: true, Type: "user_message", Data: json.RawMessage(`{"text":"fix the routes"}`)}
	read := piReadRoutes
	for i, want := range []bool{true, false} {
		rec, err := c.Record(ctx, task, msg, read)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Fresh[0] != want || rec.Fresh[1] != want {
			t.Fatalf("record #%d: fresh %v, want %v", i+1, rec.Fresh, want)
		}
	}
	dec, err := c.Decide(ctx, task)
	if err != nil {
		t.Fatal(err)
	}
	if !hasRule(dec.Included, "api") {
		t.Fatalf("decision includes %+v, want the api rule", dec.Included)
	}
	del, err := c.Deliver(ctx, task, "tool_result", events.ChannelTool, "pi/sess-1/tool/call_1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(del.Text, "API handlers return JSON errors") {
		t.Fatalf("delivered %q", del.Text)
	}
	again, err := c.Deliver(ctx, task, "tool_result", events.ChannelTool, "pi/sess-1/tool/call_2")
	if err != nil || again.Text != "" {
		t.Fatalf("second delivery: %q, %v; want nothing new", again.Text, err)
	}
	x, err := c.Explain(ctx, task, del.Turn, "api")
	if err != nil {
		t.Fatal(err)
	}
	if !x.Included || x.Deliveries != 1 {
		t.Fatalf("explain: %+v", x)
	}
	evs := logOf(t, s, db, uuid.MustParse(task))
	if count(evs, events.TypeToolCall) != 1 || count(evs, events.TypeUserMessage) != 1 || count(evs, events.TypeDelivery) != 1 {
		t.Fatalf("log: %v", evs)
	}
}

func hasRule(rs []RuleInfo, name string) bool {
	for _, r := range rs {
		if r.Name == name {
			return true
		}
	}
	return false
}

// TestErrors: each kind of bad request gets its code, and the connection goes on.
func TestErrors(t *testing.T) {
	s, _ := start(t, Options{})
	c := dial(t, s)
	ctx := context.Background()
	missing := uuid.New().String()
	tests := []struct {
		name string
		req  Request
		code string
	}{
		{"unknown op", Request{Op: "fly"}, CodeBadRequest},
		{"unknown task", Request{Op: OpDecide, Task: missing}, CodeNotFound},
		{"task not a uuid", Request{Op: OpDecide, Task: "nope"}, CodeBadRequest},
		{"record without key", Request{Op: OpRecord, Task: missing, Events: []Record{{Type: "user_message", Data: json.RawMessage(`{}`)}}}, CodeBadRequest},
		{"record a reserved type", Request{Op: OpRecord, Agent: "pi", Session: "x", Events: []Record{{Key: "k", Type: "decision", Data: json.RawMessage(`{}`)}}}, CodeBadRequest},
		{"explain an unknown task", Request{Op: OpExplain, Task: missing, Turn: 1}, CodeNotFound},
		{"hook payload of no agent", Request{Op: OpHook, Agent: "claude-code", Payload: json.RawMessage(`{"x":1}`)}, CodeBadRequest},
		{"hello again, other version", Request{Op: OpHello, Version: 99}, CodeVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := tt.req
			err := c.Call(ctx, &req, nil)
			var e *Error
			if !errors.As(err, &e) || e.Code != tt.code {
				t.Fatalf("error %v, want code %s", err, tt.code)
			}
		})
	}
}

// rawConn is a client that writes whatever it is given.
type rawConn struct {
	net.Conn
	r *bufio.Reader
}

func rawDial(t *testing.T, s *Server) *rawConn {
	t.Helper()
	nc, err := net.Dial("unix", s.Socket())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(slow))
	return &rawConn{Conn: nc, r: bufio.NewReader(nc)}
}

func (rc *rawConn) response(t *testing.T) Response {
	t.Helper()
	line, err := rc.r.ReadBytes('\n')
	if err != nil {
		t.Fatalf("no response: %v", err)
	}
	var resp Response
	if err := json.Unmarshal(line, &resp); err != nil {
		t.Fatalf("response %q: %v", line, err)
	}
	return resp
}

// TestHostileClients: garbage, a request before hello, half a message, a message of 100 MB.
// Each gets an error (or is dropped), and a well-behaved client is served all along.
func TestHostileClients(t *testing.T) {
	ws := workspace(t)
	s, _ := start(t, Options{})
	good := dial(t, s)
	ctx := context.Background()
	n := 0
	served := func() {
		t.Helper()
		n++
		if _, err := good.Hook(ctx, "claude-code", preToolUse(ws, "s-good", fmt.Sprint("toolu_", n))); err != nil {
			t.Fatalf("the good client was not served: %v", err)
		}
	}
	served()

	t.Run("garbage", func(t *testing.T) {
		rc := rawDial(t, s)
		fmt.Fprintf(rc, "\x00\x01 not json at all }\n")
		if r := rc.response(t); r.Error == nil || r.Error.Code != CodeBadRequest {
			t.Fatalf("response %+v, want bad_request", r)
		}
		fmt.Fprintf(rc, `{"id":7,"op":"hello","version":1}`+"\n")
		if r := rc.response(t); r.Error != nil || r.ID != 7 {
			t.Fatalf("after garbage, hello got %+v", r)
		}
		served()
	})
	t.Run("no hello", func(t *testing.T) {
		rc := rawDial(t, s)
		fmt.Fprintf(rc, `{"id":3,"op":"decide","task":"%s"}`+"\n", uuid.New())
		if r := rc.response(t); r.Error == nil || r.Error.Code != CodeBadRequest || r.ID != 3 {
			t.Fatalf("response %+v, want bad_request for id 3", r)
		}
	})
	t.Run("half a message", func(t *testing.T) {
		rc := rawDial(t, s)
		fmt.Fprint(rc, `{"id":1,"op":"hel`)
		served()
		rc.Close()
		served()
	})
	t.Run("100 MB", func(t *testing.T) {
		rc := rawDial(t, s)
		go func() {
			chunk := []byte(strings.Repeat("a", 1<<20))
			rc.Write([]byte(`{"id":1,"op":"hello","version":1,"client":"`))
			for range 100 {
				if _, err := rc.Write(chunk); err != nil {
					return
				}
			}
			rc.Write([]byte("\"}\n"))
		}()
		served()
		if r := rc.response(t); r.Error == nil || r.Error.Code != CodeTooLarge {
			t.Fatalf("response %+v, want too_large", r)
		}
		served()
	})
}

// TestTwoTasks: two agent sessions in one workspace, each with parallel hooks, at once.
func TestTwoTasks(t *testing.T) {
	ws := workspace(t)
	s, db := start(t, Options{})
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	delivered := map[string]int{}
	for _, sess := range []string{"s-a", "s-b"} {
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c, err := Dial(ctx, s.Socket(), "test")
				if err != nil {
					t.Error(err)
					return
				}
				defer c.Close()
				res, err := c.Hook(ctx, "claude-code", preToolUse(ws, sess, fmt.Sprint("toolu_", i)))
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				delivered[sess] += strings.Count(res.Reply, "API handlers return JSON errors")
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	for _, sess := range []string{"s-a", "s-b"} {
		if delivered[sess] != 1 {
			t.Errorf("session %s: the scoped rule reached the model %d times, want once", sess, delivered[sess])
		}
	}
	s.Shutdown()
	<-s.Done()
	d, err := store.Open(db, &store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tasks, err := d.Tasks()
	if err != nil || len(tasks) != 2 {
		t.Fatalf("tasks %v, %v; want 2", tasks, err)
	}
}

// TestShutdownWhileHooking: hooks keep arriving while the server shuts down. Each is answered
// or told the server is going (shutting_down, or the connection is refused): none is left
// hanging, and every answered one is in the log exactly once.
func TestShutdownWhileHooking(t *testing.T) {
	ws := workspace(t)
	s, db := start(t, Options{})
	ctx := context.Background()
	var wg sync.WaitGroup
	var mu sync.Mutex
	answered, refused := 0, 0
	var once sync.Once
	for i := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(ctx, slow)
			defer cancel()
			c, err := Dial(cctx, s.Socket(), "test")
			if err == nil {
				_, err = c.Hook(cctx, "claude-code", preToolUse(ws, "s-stop", fmt.Sprint("toolu_", i)))
				c.Close()
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				answered++
				// The first answer starts the shutdown: the others arrive during it.
				once.Do(func() { go s.Shutdown() })
			case Unreachable(err) && !errors.Is(err, context.DeadlineExceeded):
				refused++
			default:
				t.Errorf("hook %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	<-s.Done()
	if answered+refused != 64 || answered == 0 {
		t.Fatalf("%d answered, %d refused", answered, refused)
	}
	d, err := store.Open(db, &store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tasks, _ := d.Tasks()
	calls := 0
	for ev, err := range d.Events(ctx, tasks[0].Task, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == events.TypeToolCall {
			calls++
		}
	}
	if calls < answered || calls > 64 {
		t.Fatalf("%d tool calls in the log, %d hooks answered", calls, answered)
	}
}

// TestOneServerPerDatabase: a second server on the same database is refused; a socket left by
// a server that died is replaced.
func TestOneServerPerDatabase(t *testing.T) {
	s, db := start(t, Options{})
	if _, err := Listen(db, Options{}); !errors.Is(err, ErrRunning) {
		t.Fatalf("second server: %v, want ErrRunning", err)
	}
	s.Shutdown()
	<-s.Done()

	// A dead server's socket: the file is there, nobody listens.
	l, err := net.Listen("unix", s.Socket())
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	if _, err := os.Stat(s.Socket()); err != nil {
		t.Fatalf("the stale socket should be there: %v", err)
	}
	s2, err := Listen(db, Options{NoSync: true})
	if err != nil {
		t.Fatalf("over a stale socket: %v", err)
	}
	go s2.Serve()
	defer func() { s2.Shutdown(); <-s2.Done() }()
	st, err := os.Stat(s2.Socket())
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode %v, %v; want owner-only 0600", st.Mode(), err)
	}
	c := dial(t, s2)
	if c.Server.PID != os.Getpid() || c.Server.Version != Version {
		t.Fatalf("hello: %+v", c.Server)
	}
}

// TestIdleExit: a server nobody connects to exits by itself, and lets go of the database
// between requests.
func TestIdleExit(t *testing.T) {
	db := filepath.Join(t.TempDir(), "tasklog.db")
	s, err := Listen(db, Options{Idle: 200 * time.Millisecond, Hold: 50 * time.Millisecond, NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	go func() { done <- s.Serve() }()
	c, err := Dial(context.Background(), s.Socket(), "test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Open(context.Background(), "pi", "s", []string{}, ""); err != nil {
		t.Fatal(err)
	}
	// Held for 50ms after the request, then free for another process.
	d, err := store.Open(db, &store.Options{Timeout: slow})
	if err != nil {
		t.Fatalf("the server did not let go of the database: %v", err)
	}
	d.Close()
	c.Close()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(slow):
		t.Fatal("the idle server did not exit")
	}
	if _, err := os.Stat(s.Socket()); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("socket left behind: %v", err)
	}
}

// TestLongPathSocket: a database whose socket path would be too long gets one in a private
// folder of the temporary directory, and a folder there that others may enter is refused.
func TestLongPathSocket(t *testing.T) {
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	db := filepath.Join(t.TempDir(), strings.Repeat("d", 100), "tasklog.db")
	os.MkdirAll(filepath.Dir(db), 0o755)
	sock := SocketPath(db)
	if filepath.Dir(filepath.Dir(sock)) != tmp {
		t.Fatalf("socket %s, want one under %s", sock, tmp)
	}
	s, err := Listen(db, Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	go s.Serve()
	dial(t, s)
	s.Shutdown()
	<-s.Done()
	if err := os.Chmod(filepath.Dir(sock), 0o777); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(db, Options{}); err == nil || !strings.Contains(err.Error(), "not a private folder") {
		t.Fatalf("Listen in a shared folder: %v", err)
	}
}

// TestHookSeesRuleFileChanges: the server watches a task's roots between hooks; a rule file
// created after the task's first hook, then edited in place, reaches the model as edited.
func TestHookSeesRuleFileChanges(t *testing.T) {
	ws := workspace(t)
	s, _ := start(t, Options{})
	ctx := context.Background()
	c := dial(t, s)
	if res, err := c.Hook(ctx, "claude-code", preToolUse(ws, "s1", "toolu_1")); err != nil || !strings.Contains(res.Reply, "API handlers") {
		t.Fatalf("first hook: %+v, %v", res, err)
	}
	rule := filepath.Join(ws, ".clinerules", "db.md")
	for _, body := range []string{"Queries use prepared statements.", "Queries use prepared statements and a timeout."} {
		if err := os.WriteFile(rule, []byte("---\npaths: [\"src/db/**\"]\n---\n"+body+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	read := fmt.Appendf(nil, `{"session_id":"s1","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":"toolu_2"}`,
		ws, filepath.Join(ws, "src/db/users.ts"))
	if res, err := c.Hook(ctx, "claude-code", read); err != nil || !strings.Contains(res.Reply, "prepared statements and a timeout") {
		t.Fatalf("hook after the new rule: %+v, %v", res, err)
	}
}

// TestParkedSessions: when the server lets go of the database between hooks, its sessions are
// parked, not closed; the next hook carries the task's session on (nothing is opened again)
// while the log is where the session left it, and opens the task again when another process
// appended to it meanwhile.
func TestParkedSessions(t *testing.T) {
	ws := workspace(t)
	s, dbPath := start(t, Options{Hold: 30 * time.Millisecond})
	ctx := context.Background()
	read := func(id, path string) []byte {
		return fmt.Appendf(nil, `{"session_id":"s1","cwd":%q,"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":%q},"tool_use_id":%q}`,
			ws, filepath.Join(ws, path), id)
	}
	hook := func(id, path string) string {
		t.Helper()
		c := dial(t, s)
		defer c.Close()
		res, err := c.Hook(ctx, "claude-code", read(id, path))
		if err != nil {
			t.Fatalf("hook %s: %v", id, err)
		}
		return res.Reply
	}
	opened := func() int {
		s.tasks.mu.Lock()
		defer s.tasks.mu.Unlock()
		return s.tasks.opened
	}
	if reply := hook("toolu_1", "src/api/routes.ts"); !strings.Contains(reply, "API handlers") {
		t.Fatalf("first hook: %q", reply)
	}
	waitReleased(t, s)
	if reply := hook("toolu_2", "src/api/users.ts"); reply != "" || opened() != 1 {
		t.Fatalf("after a release: reply %q, %d sessions opened; want none and 1", reply, opened())
	}
	waitReleased(t, s)
	// Another process appends to the task while the server does not hold the database.
	db, err := store.Open(dbPath, &store.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	task := agentlog.TaskID(agentlog.ClaudeCode, "s1")
	a, err := session.OpenAgent(ctx, db, task, session.AgentOptions{Agent: agentlog.ClaudeCode})
	if err != nil {
		t.Fatal(err)
	}
	h, err := agentlog.ParseHook(agentlog.ClaudeCode, read("toolu_3", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Hook(ctx, h, true); err != nil {
		t.Fatal(err)
	}
	a.Close()
	db.Close()
	if reply := hook("toolu_4", "src/api/orders.ts"); reply != "" || opened() != 2 {
		t.Fatalf("after another process wrote: reply %q, %d sessions opened; want none and 2", reply, opened())
	}
	s.Shutdown()
	<-s.Done()
	db, err = store.Open(dbPath, &store.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Verify(ctx, task); err != nil {
		t.Error(err)
	}
	calls := 0
	for ev, err := range db.Events(ctx, task, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == events.TypeToolCall {
			calls++
		}
	}
	if calls != 4 {
		t.Errorf("%d tool calls in the log, want 4", calls)
	}
}

// waitReleased waits for the server to let go of its database (for slow at most).
func waitReleased(t *testing.T, s *Server) {
	t.Helper()
	for deadline := time.Now().Add(slow); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		s.dbmu.Lock()
		held := s.db != nil
		s.dbmu.Unlock()
		if !held {
			return
		}
	}
	t.Fatal("the server still holds the database")
}

// TestParkKeepsTheRecentSessions: while the server does not hold the database only the
// maxParked most recently used sessions stay open (each holds inotify instances); the others are
// closed, and opened again by their next hook.
func TestParkKeepsTheRecentSessions(t *testing.T) {
	ws := workspace(t)
	s, _ := start(t, Options{Hold: 30 * time.Millisecond})
	ctx := context.Background()
	c := dial(t, s)
	hook := func(sess string, n int) {
		t.Helper()
		if _, err := c.Hook(ctx, "claude-code", preToolUse(ws, sess, fmt.Sprintf("toolu_%s_%d", sess, n))); err != nil {
			t.Fatal(err)
		}
	}
	opened := func() int {
		s.tasks.mu.Lock()
		defer s.tasks.mu.Unlock()
		return s.tasks.opened
	}
	const tasks = maxParked + 3
	for i := range tasks {
		hook(fmt.Sprint("s", i), 0)
	}
	waitReleased(t, s)
	hook(fmt.Sprint("s", tasks-1), 1) // the most recent: parked
	if got := opened(); got != tasks {
		t.Errorf("the most recently used task's hook opened a session: %d opened, want %d", got, tasks)
	}
	hook("s0", 1) // the oldest: closed when the database was let go
	if got := opened(); got != tasks+1 {
		t.Errorf("the oldest task's hook: %d sessions opened, want %d", got, tasks+1)
	}
}
