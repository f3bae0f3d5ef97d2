package main

import (
	"bufio"
	"context"
	"encoding/json"
	"net"
	"path/filepath"
	"sync"
	"testing"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session/serve"
	"github.com/tasklog/tasklog/store"
)

// dyingServer listens on the database's socket as a server that records each hook payload it
// is handed, delivery included, and dies before it replies (the connection closes). It returns
// the replies it would have sent, one per hook, in order.
func dyingServer(t *testing.T, db string) func() []string {
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
// delivery the log holds, so that no delivery is recorded that no hook printed. replay hook and
// replay-hook (which runs replay hook) alike.
func TestHookPrintsWhatADyingServerDelivered(t *testing.T) {
	payloadFile := filepath.Join("..", "..", "events", "agentlog", "testdata", "hooks", "claude-code", "04-PreToolUse.json")
	for _, via := range []string{"replay hook", "replay-hook"} {
		t.Run(via, func(t *testing.T) {
			ws, home := hookWorkspace(t)
			db := filepath.Join(t.TempDir(), "tasklog.db")
			replies := dyingServer(t, db)
			payload := hookPayload(t, payloadFile, ws)
			var out string
			if via == "replay hook" {
				t.Setenv("TASKLOG_SERVE", "")
				var code int
				if out, _, code = runHook(t, "claude-code", db, payload); code != 0 {
					t.Fatalf("exit %d", code)
				}
			} else {
				_, client := hookClientBinaries(t)
				r := clientProcess(client, "claude-code", db, payload, []string{"HOME=" + home, "TASKLOG_SERVE=on"})
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
			if n := countType(taskEvents(t, db), events.TypeDelivery); n != 1 {
				t.Fatalf("%d deliveries recorded, want 1", n)
			}
		})
	}
}
