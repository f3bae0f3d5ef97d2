package mcp_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/session/mcp"
	"github.com/tasklog/tasklog/store"
)

// A runtime serves the rules of its workspace and the decisions of its current task to the
// model over MCP, on the stdio of a process it starts (as 'replay mcp' does).
func ExampleServe() {
	const path = "/home/me/.local/share/tasklog/tasklog.db"
	cfg := mcp.Config{
		Store: path,
		// Each call opens the log read-only and closes it, so that hooks write between calls.
		Open: func() (store.Store, error) {
			if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("%w at %s", mcp.ErrNoLog, path)
			}
			return store.Open(path, &store.Options{ReadOnly: true})
		},
		Folders: session.Folders{Workspace: "/home/me/shop"},
		Agent:   "claude-code",
		Session: os.Getenv("CLAUDE_CODE_SESSION_ID"),
	}
	if err := mcp.Serve(context.Background(), cfg, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
}
