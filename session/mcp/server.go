// Package mcp serves the rules of a workspace and the decisions of a task over the Model
// Context Protocol: the rule:// resources and the tools rules_for, explain, whatif, timeline,
// audit and why, each a file of this package over the query functions of package session.
//
// A server holds no log open between calls: each call opens the log read-only and closes it,
// so that an agent's hooks write between calls. Serve speaks the protocol on a pair of streams
// (an agent's stdin and stdout); New gives the server for any transport of the MCP Go SDK.
package mcp

import (
	"context"
	"errors"
	"io"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasklog/tasklog/rules"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// Config is what the server needs to answer: where the rules and the log are, and which task
// is the current one.
type Config struct {
	// Store names the log in messages: the file's absolute path, or the server's URL.
	Store string
	// Open opens the log read-only for one call. When the log does not exist yet it returns an
	// error that wraps ErrNoLog.
	Open func() (store.Store, error)
	// ListTasks is the command line that lists the tasks of the log at path, named in the error
	// for a task not found; nil names none.
	ListTasks func(path string) string
	// Folders are where the rule files are read from.
	Folders session.Folders
	// Task is the current task, by id or unique prefix.
	Task string
	// Agent and Session name the agent session whose task is the current one, when Task is
	// not set: its id is agentlog.TaskID(Agent, Session).
	Agent   string
	Session string
}

// server answers the MCP requests. Every call reads the rule files as they are and opens
// the log anew; between calls it keeps only what the rule files held, to read again only those
// that changed.
type server struct {
	cfg    Config
	reader *rules.Reader
}

const instructions = `tasklog decides which of the workspace's rule files go into the prompt and records why.
Read a rule with resources/read rule://NAME (the prompt lists on-request rules by name and description only).
rules_for(paths): the rules that apply to those paths now, with the pattern that matched.
explain(prompt|turn, rule?): why a rule was or was not in the prompt at a prompt or turn of this task.
whatif(rule_file, content): the past turns of this task whose rules would change if that rule file read so.
timeline(last?, cursor?): the latest turns of this task, one line each.
audit(prompt?|turn?): did the agent get each rule: tasklog's decision, the agent's own loads and the deliveries side by side, and the findings.
why(rule, prompt?|turn?): one rule at one request, in sentences.`

// New builds the server: the rule:// resources and the tools. release stops
// watching the workspace's folders.
func New(cfg Config) (srv *sdk.Server, release func()) {
	s := &server{cfg: cfg, reader: &rules.Reader{}}
	srv = sdk.NewServer(&sdk.Implementation{Name: "tasklog", Title: "tasklog rules", Version: rules.EngineVersion},
		&sdk.ServerOptions{Instructions: instructions, HasResources: true, HasTools: true, PageSize: pageSize})
	s.addResources(srv)
	s.addTools(srv)
	return srv, s.reader.Close
}

// Serve answers the MCP requests read from in on out until in ends (and every request read has
// its answer) or ctx is done. A line of in that is not a JSON-RPC message, or is longer than the
// SDK reads, is answered with an error and the server goes on (see frames.go).
func Serve(ctx context.Context, cfg Config, in io.Reader, out io.Writer) error {
	w := &lockedWriter{w: out}
	t := &sdk.IOTransport{Reader: frames(in, w, maxFrame), Writer: w, MaxLineLength: 2 * maxFrame}
	srv, release := New(cfg)
	defer release()
	if err := srv.Run(ctx, t); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}
