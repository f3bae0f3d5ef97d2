package mcp

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tasklog/tasklog/session/serve"
)

// TestMCPBesideServe: 'replay serve' holds the database while it answers the hooks and lets it
// go Hold after their last request; a call of the MCP server waits for it, and says so when the
// file stays held past its timeout.
func TestMCPBesideServe(t *testing.T) {
	tests := []struct {
		name    string
		hold    time.Duration // serve's Hold; negative: until it exits
		timeout time.Duration // the MCP server's wait
		wantErr string
	}{
		{"serve lets go", 300 * time.Millisecond, time.Minute, ""},
		{"serve holds on", -1, 200 * time.Millisecond, "locked by another process"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t)
			srv, err := serve.Listen(f.db, serve.Options{Hold: tt.hold, Idle: -1, NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			go srv.Serve()
			t.Cleanup(func() { srv.Shutdown(); <-srv.Done() })
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, err := serve.Dial(ctx, serve.SocketPath(f.db), "mcp test")
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			// A request that has the server open the database, as a hook's does.
			var x json.RawMessage
			if err := c.Call(ctx, &serve.Request{Op: serve.OpExplain, Task: fixtureTask, Turn: 2, Rule: "backend"}, &x); err != nil {
				t.Fatalf("serve explain: %v", err)
			}

			cfg := f.cfg
			cfg.Task, cfg.Open = fixtureTask, openFile(f.db, tt.timeout)
			var out TimelineOut
			text, isErr := callToolRaw(t, connect(t, cfg), "timeline", map[string]any{"last": 1}, &out)
			switch {
			case tt.wantErr == "" && (isErr || out.Turns != 5):
				t.Errorf("timeline beside serve = %q (%d turns), want the task's 5 turns", text, out.Turns)
			case tt.wantErr != "" && (!isErr || !strings.Contains(text, tt.wantErr)):
				t.Errorf("timeline while serve holds the file = %q, want an error with %q", text, tt.wantErr)
			}
		})
	}
}
