package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session/serve"
	"github.com/tasklog/tasklog/store"
)

// dyingServer listens on the database's socket as a server that records each hook payload it
// is handed, delivery included, and dies before it replies (the connection closes). With
// takeOver, a real server takes its place before the connection closes, and holds the
// database open. It returns the replies the dying server would have sent, one per hook.
func dyingServer(t *testing.T, db string, takeOver bool) func() []string {
	t.Helper()
	l, err := net.Listen("unix", serve.SocketPath(db))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	var mu sync.Mutex
	var replies []string
	go func() {
		for {
			nc, err := l.Accept()
			if err != nil {
				return
			}
			sc := bufio.NewScanner(nc)
			sc.Buffer(nil, serve.MaxMessage)
			for sc.Scan() {
				var req serve.Request
				if json.Unmarshal(sc.Bytes(), &req) != nil {
					break
				}
				if req.Op == serve.OpHello {
					nc.Write([]byte(`{"id":1,"result":{}}` + "\n"))
					continue
				}
				reply, err := recordForDeath(db, req)
				if err != nil {
					t.Errorf("the dying server could not record the hook: %v", err)
				}
				mu.Lock()
				replies = append(replies, reply)
				mu.Unlock()
				if takeOver {
					l.Close()
					takeOverServer(t, db)
				}
				break
			}
			nc.Close()
		}
	}()
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), replies...)
	}
}

// takeOverServer starts a server for db that opens the database at once and keeps it open
// until the test ends.
func takeOverServer(t *testing.T, db string) {
	srv, err := serve.Listen(db, serve.Options{Hold: -1, Idle: -1, NoSync: true})
	if err != nil {
		t.Errorf("the server taking over: %v", err)
		return
	}
	go srv.Serve()
	t.Cleanup(func() {
		srv.Shutdown()
		<-srv.Done()
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := serve.Dial(ctx, srv.Socket(), "test")
	if err != nil {
		t.Errorf("the server taking over: %v", err)
		return
	}
	defer c.Close()
	// Any request on a task opens the database; this one has no task to find.
	if err := c.Call(ctx, &serve.Request{Op: serve.OpDecide, Task: uuid.NewString()}, nil); !errors.Is(err, serve.ErrNotFound) {
		t.Errorf("the server taking over, opening the database: %v", err)
	}
}

// recordForDeath records a hook request as a server would, and returns the reply it would
// have sent.
func recordForDeath(db string, req serve.Request) (string, error) {
	h, err := agentlog.ParseHook(agentlog.Agent(req.Agent), req.Payload)
	if err != nil {
		return "", err
	}
	st, err := store.Open(db, nil)
	if err != nil {
		return "", err
	}
	defer st.Close()
	text, err := recordAndDeliver(context.Background(), st, h, nil, false)
	return string(h.Reply(text)), err
}

// TestHookPrintsWhatADyingServerDelivered: the server records the hook's delivery and dies
// before it replies; the hook, handling the payload again with the database itself, prints the
// delivery the log holds, so that no delivery is recorded that no hook printed. When another
// server took over the database meanwhile, the hook asks that one to print it again. replay
// hook and replay-hook (which runs replay hook) alike.
func TestHookPrintsWhatADyingServerDelivered(t *testing.T) {
	payloadFile := filepath.Join("..", "..", "events", "agentlog", "testdata", "hooks", "claude-code", "04-PreToolUse.json")
	client := "" // replay-hook, built for the first case that runs it
	for _, tc := range []struct {
		via      string
		takeOver bool
	}{{"replay hook", false}, {"replay hook", true}, {"replay-hook", false}, {"replay-hook", true}} {
		if tc.via == "replay-hook" && client == "" {
			_, client = testenv.Binaries(t)
		}
		name := tc.via
		if tc.takeOver {
			name += " another server takes over"
		}
		t.Run(name, func(t *testing.T) {
			ws, home := hookWorkspace(t)
			privateRuntime(t)
			db := filepath.Join(t.TempDir(), "tasklog.db")
			replies := dyingServer(t, db, tc.takeOver)
			payload := hookPayload(t, payloadFile, ws)
			// When another server takes over, the hook waits for the database it holds until
			// its budget is nearly spent: a budget of its own, shorter than the tests' usual
			// minute and still many times what the hook needs, keeps the test from idling.
			var extra []string
			if tc.takeOver {
				extra = []string{"--budget", "15s"}
			}
			var out string
			if tc.via == "replay hook" {
				t.Setenv("TASKLOG_SERVE", "")
				var code int
				if out, _, code = runHook(t, "claude-code", db, payload, extra...); code != 0 {
					t.Fatalf("exit %d", code)
				}
			} else {
				r := clientProcess(client, "claude-code", db, payload, []string{"HOME=" + home, "TASKLOG_SERVE=on", "XDG_RUNTIME_DIR=" + os.Getenv("XDG_RUNTIME_DIR")}, extra...)
				if r.code != 0 {
					t.Fatalf("replay-hook: %+v", r)
				}
				out = r.stdout
			}
			got := replies()
			if len(got) != 1 {
				t.Fatalf("the server was handed %d hooks, want 1", len(got))
			}
			if got[0] == "" || out != got[0] {
				t.Fatalf("the hook printed %q; the server recorded the delivery of %q", out, got[0])
			}
			if tc.takeOver {
				return // the server holds the database
			}
			if n := testenv.CountType(testenv.TaskEvents(t, db), events.TypeDelivery); n != 1 {
				t.Fatalf("%d deliveries recorded, want 1", n)
			}
		})
	}
}
