package serve

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tasklog/tasklog/session/serve/wire"
)

// TestWireHook: a hook handed over by package wire is recorded and answered as one handed over
// by serve's Client: the scoped rule is delivered once, the second call of the same tool use
// gets the same neutral reply, and errors come back as the protocol's codes.
func TestWireHook(t *testing.T) {
	ws := workspace(t)
	s, _ := start(t, Options{})
	ctx, cancel := context.WithTimeout(context.Background(), slow)
	defer cancel()

	first, err := wire.Hook(ctx, s.Socket(), "test", "claude-code", preToolUse(ws, "s-wire", "toolu_1"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(first, "API handlers return JSON errors") || !strings.HasSuffix(first, "\n") {
		t.Fatalf("first reply %q: want the scoped rule, one line", first)
	}
	again, err := wire.Hook(ctx, s.Socket(), "test", "claude-code", preToolUse(ws, "s-wire", "toolu_1"))
	if err != nil {
		t.Fatal(err)
	}
	c := dial(t, s)
	viaClient, err := c.Hook(ctx, "claude-code", preToolUse(ws, "s-wire", "toolu_1"))
	if err != nil {
		t.Fatal(err)
	}
	if again != viaClient.Reply || strings.Contains(again, "API handlers") {
		t.Fatalf("the same tool use again: wire %q, Client %q; want the same reply, no rule", again, viaClient.Reply)
	}

	// A pretty-printed payload travels on one line.
	pretty := "{\n  \"session_id\": \"s-wire\", \"cwd\": \"" + ws + "\",\n  \"hook_event_name\": \"Stop\"\n}\n"
	if _, err := wire.Hook(ctx, s.Socket(), "test", "claude-code", []byte(pretty)); err != nil {
		t.Fatalf("pretty-printed payload: %v", err)
	}

	var werr *wire.Error
	if _, err := wire.Hook(ctx, s.Socket(), "test", "claude-code", []byte(`{"no":"hook"}`)); !errors.As(err, &werr) || werr.Code != CodeBadRequest {
		t.Errorf("a payload of no agent: %v, want %s", err, CodeBadRequest)
	}
	if _, err := wire.Hook(ctx, s.Socket(), "test", "claude-code", []byte(`{"session_id":`)); !errors.Is(err, wire.ErrNotJSON) {
		t.Errorf("a payload that is not JSON: %v, want ErrNotJSON", err)
	}
}

// TestWireUnreachable: no socket and a stale socket tell the caller to go elsewhere; a socket in
// a shared folder that others may write is not connected to.
func TestWireUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	payload := []byte(`{"session_id":"s","hook_event_name":"Stop"}`)

	missing := filepath.Join(t.TempDir(), "tasklog.db.sock")
	if _, err := wire.Hook(ctx, missing, "test", "claude-code", payload); !wire.NothingListens(err) {
		t.Errorf("no socket: %v, want NothingListens", err)
	}

	stale := filepath.Join(t.TempDir(), "stale.sock")
	l, err := net.Listen("unix", stale)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close()
	if _, err := wire.Hook(ctx, stale, "test", "claude-code", payload); !wire.NothingListens(err) {
		t.Errorf("a stale socket: %v, want NothingListens", err)
	}

	t.Setenv("TMPDIR", t.TempDir())
	shared := wire.SocketPath(filepath.Join(t.TempDir(), strings.Repeat("d", 100), "tasklog.db"))
	if err := os.MkdirAll(filepath.Dir(shared), 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(filepath.Dir(shared), 0o777)
	sl, err := net.Listen("unix", shared)
	if err != nil {
		t.Fatal(err)
	}
	defer sl.Close()
	if _, err := wire.Hook(ctx, shared, "test", "claude-code", payload); !errors.Is(err, wire.ErrUntrustedSocket) {
		t.Errorf("a socket in a folder of mode 0777: %v, want ErrUntrustedSocket", err)
	}
}

// TestWireDeadline: a server that accepts and never answers ends the call at its deadline.
func TestWireDeadline(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "mute.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = wire.Hook(ctx, sock, "test", "claude-code", []byte(`{"session_id":"s","hook_event_name":"Stop"}`))
	if !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("a mute server: %v, want the deadline exceeded", err)
	}
}

// TestWireDeadlineMargin: the server is told to give up on a hook an eighth of the client's
// time before the client does, so that it records no delivery after the client stopped
// waiting; HookAgain says so in the request.
func TestWireDeadlineMargin(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "mute.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	reqs := make(chan Request, 2)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			r := bufio.NewReader(c)
			r.ReadBytes('\n') // hello
			line, _ := r.ReadBytes('\n')
			var req Request
			json.Unmarshal(line, &req)
			reqs <- req
			c.Close()
		}
	}()
	for _, again := range []bool{false, true} {
		ctx, cancel := context.WithTimeout(context.Background(), 8*time.Second)
		call := wire.Hook
		if again {
			call = wire.HookAgain
		}
		call(ctx, sock, "test", "claude-code", []byte(`{"session_id":"s","hook_event_name":"Stop"}`))
		cancel()
		req := <-reqs
		if req.DeadlineMS <= 0 || req.DeadlineMS > 7000 || req.Again != again {
			t.Errorf("again %v: the server was told deadline_ms %d, again %v; want at most 7000 of the client's 8000", again, req.DeadlineMS, req.Again)
		}
	}
}
