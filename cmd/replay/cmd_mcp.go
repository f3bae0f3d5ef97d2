package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session/mcp"
	"github.com/tasklog/tasklog/store"
	"github.com/tasklog/tasklog/store/location"
)

const mcpUsage = `[--workspace DIR] [--root ROOT=DIR]... [--db PATH] [--task TASK]

Serves the rules of the workspace and the decisions of the current task over the Model Context
Protocol, on stdin and stdout:
  resources  rule://NAME for every rule (rule://ID for a shadowed one)
  tools      rules_for, explain, whatif, timeline, audit, why

The current task is --task, else the task the agent's hooks write for this agent session
(--agent and --session, whose default is $CLAUDE_CODE_SESSION_ID), else one a call names.
The database is --db, else $TASKLOG_DB, else the hooks' default. It is opened read-only for
each call and closed after it, so that the hooks can write between calls.`

// mcpLockWait is how long a call waits for the database another process holds.
const mcpLockWait = 3 * time.Second

// cmdMCP serves the MCP server on stdin and stdout until the client closes stdin.
func cmdMCP(args []string, stdout, stderr io.Writer) int {
	f := newFlags("mcp", mcpUsage, stderr)
	// The hooks' database, so that the server reads what the hooks of the same agent write.
	db := f.Lookup("db")
	db.DefValue = defaultHookDB()
	_ = db.Value.Set(db.DefValue)
	// Long enough to outlast 'replay serve' holding the file for its hooks (it lets go half a
	// second after their last request); an agent waits on a tool call far longer.
	timeout := f.Lookup("timeout")
	timeout.DefValue = mcpLockWait.String()
	_ = timeout.Value.Set(timeout.DefValue)
	var wf workspaceFlags
	var cfg mcp.Config
	wf.register(f)
	f.StringVar(&cfg.Task, "task", "", "the current `TASK` (an id or a unique prefix)")
	f.StringVar(&cfg.Agent, "agent", "claude-code", "the `AGENT` whose session names the current task")
	f.StringVar(&cfg.Session, "session", os.Getenv("CLAUDE_CODE_SESSION_ID"),
		"the agent's session `ID`; $CLAUDE_CODE_SESSION_ID sets the default")
	if _, code := f.parseOrExit(args, 0, 0); code >= 0 {
		return code
	}
	if _, err := agentlog.ParseHookAgent(cfg.Agent); err != nil {
		return fail(stderr, fmt.Errorf("--agent: %w", err))
	}
	if wf.Workspace == "" && len(wf.Roots) == 0 {
		wf.Workspace = "."
	}
	if wf.Workspace != "" {
		abs, err := filepath.Abs(wf.Workspace)
		if err != nil {
			return fail(stderr, err)
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return fail(stderr, fmt.Errorf("--workspace %q is not a folder", wf.Workspace))
		}
		wf.Workspace = abs
	}
	if _, err := wf.Unrecorded(); err != nil {
		return fail(stderr, err)
	}
	cfg.Folders = wf.Folders
	loc, opts := f.loc.Abs(), f.readOptions()
	cfg.Store, cfg.ListTasks = loc.String(), tasksCommand
	cfg.Open = func() (store.Store, error) { return openMCP(loc, opts) }
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := mcp.Serve(ctx, cfg, os.Stdin, stdout); err != nil {
		fmt.Fprintf(stderr, "replay mcp: %v\n", err)
		return exitUsage
	}
	return exitOK
}

// openMCP opens the store for one call of the MCP server; a file that does not exist yet is
// mcp.ErrNoLog.
func openMCP(loc location.Location, opts location.Options) (store.Store, error) {
	db, err := loc.Open(opts)
	if errors.Is(err, location.ErrNoLog) {
		return nil, fmt.Errorf("%w: %w", mcp.ErrNoLog, err)
	}
	return db, err
}
