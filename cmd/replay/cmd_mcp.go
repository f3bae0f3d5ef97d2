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

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/rules"
)

// mcpConfig is what the server needs to answer: where the rules and the log are, and which task
// is the current one.
type mcpConfig struct {
	db      string
	loc     storeLoc // the store when it is a NATS stream (--store, $TASKLOG_STORE); else db is the file
	timeout time.Duration
	wf      workspaceFlags
	// task is --task: the current task, by id or unique prefix.
	task string
	// agent and session name the agent session whose task is the current one, when task is
	// not set: its id is agentlog.TaskID(agent, session).
	agent   string
	session string
}

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
	var cfg mcpConfig
	cfg.wf.register(f)
	f.StringVar(&cfg.task, "task", "", "the current `TASK` (an id or a unique prefix)")
	f.StringVar(&cfg.agent, "agent", "claude-code", "the `AGENT` whose session names the current task")
	f.StringVar(&cfg.session, "session", os.Getenv("CLAUDE_CODE_SESSION_ID"),
		"the agent's session `ID`; $CLAUDE_CODE_SESSION_ID sets the default")
	if _, code := f.parseOrExit(args, 0, 0); code >= 0 {
		return code
	}
	cfg.db, cfg.timeout, cfg.loc = f.db, f.storeTimeout(), f.loc
	if _, err := agentlog.ParseHookAgent(cfg.agent); err != nil {
		return fail(stderr, fmt.Errorf("--agent: %w", err))
	}
	if cfg.wf.workspace == "" && len(cfg.wf.roots) == 0 {
		cfg.wf.workspace = "."
	}
	if cfg.wf.workspace != "" {
		abs, err := filepath.Abs(cfg.wf.workspace)
		if err != nil {
			return fail(stderr, err)
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return fail(stderr, fmt.Errorf("--workspace %q is not a folder", cfg.wf.workspace))
		}
		cfg.wf.workspace = abs
	}
	if _, err := cfg.baseWorkspace(); err != nil {
		return fail(stderr, err)
	}
	if abs, err := filepath.Abs(cfg.db); err == nil && !cfg.loc.isNATS() {
		cfg.db = abs
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A bad line on stdin is answered with an error by mcpFrames and never reaches the SDK,
	// which would end the session on it (see cmd_mcp_frames.go); the SDK's own bound stays, with
	// room, behind it.
	out := &lockedWriter{w: stdout}
	t := &mcp.IOTransport{Reader: mcpFrames(os.Stdin, out, mcpMaxFrame), Writer: out, MaxLineLength: 2 * mcpMaxFrame}
	srv, release := newMCPServer(cfg)
	defer release()
	if err := srv.Run(ctx, t); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		fmt.Fprintf(stderr, "replay mcp: %v\n", err)
		return exitUsage
	}
	return exitOK
}

// mcpServer answers the MCP requests. Every call reads the rule files as they are and opens
// the log anew; between calls it keeps only what the rule files held, to read again only those
// that changed.
type mcpServer struct {
	cfg    mcpConfig
	reader *rules.Reader
}

const mcpInstructions = `tasklog decides which of the workspace's rule files go into the prompt and records why.
Read a rule with resources/read rule://NAME (the prompt lists on-request rules by name and description only).
rules_for(paths): the rules that apply to those paths now, with the pattern that matched.
explain(prompt|turn, rule?): why a rule was or was not in the prompt at a prompt or turn of this task.
whatif(rule_file, content): the past turns of this task whose rules would change if that rule file read so.
timeline(last?, cursor?): the latest turns of this task, one line each.
audit(prompt?|turn?): did the agent get each rule: tasklog's decision, the agent's own loads and the deliveries side by side, and the findings.
why(rule, prompt?|turn?): one rule at one request, in sentences.`

// newMCPServer builds the server: the rule:// resources and the tools. release stops
// watching the workspace's folders.
func newMCPServer(cfg mcpConfig) (srv *mcp.Server, release func()) {
	s := &mcpServer{cfg: cfg, reader: &rules.Reader{}}
	srv = mcp.NewServer(&mcp.Implementation{Name: "tasklog", Title: "tasklog rules", Version: rules.EngineVersion},
		&mcp.ServerOptions{Instructions: mcpInstructions, HasResources: true, HasTools: true, PageSize: mcpPageSize})
	s.addResources(srv)
	s.addTools(srv)
	return srv, s.reader.Close
}
