// Package install writes and removes tasklog's hooks and MCP server in an agent's configuration,
// as the agent's agentlog.Dialect describes it, changing only its own entries: JSON documents are
// edited in place with their key order and layout kept, Codex's config.toml gets a marked table,
// and a record of every file written lets uninstall give back the bytes, modes and folders it
// found. Nothing is written until every file has been planned without error.
package install

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tasklog/tasklog/events/agentlog"
)

// Options says what install or uninstall does: for which agent, where, and with which
// replay binary and database.
type Options struct {
	Agent   string
	Project string // the project folder as given ("." by default)
	User    bool
	Exe     string              // the replay binary the hooks run, absolute
	DB      string              // the database baked into the command, absolute, or a NATS store's URL; "" for none
	Home    string              // the user's home folder
	Getenv  func(string) string // the environment that moves agents' user files ($CODEX_HOME, …); nil for none
	Records Records             // where install remembers what it changed, for uninstall
	NoMCP   bool                // --no-mcp: the hooks only
	MCPOnly bool                // --mcp-only: the MCP server only
	// Extension is the source of the extension install writes for an agent that loads one
	// (pi's tasklog.ts).
	Extension string
	// HTTPURL and HTTPToken, when set, make the hooks HTTP posts to this URL with the token as
	// a bearer ('replay serve --http'), for an agent whose hooks can be (HookConfig.HTTP).
	HTTPURL, HTTPToken string
}

// ErrNoHTTPHooks is returned for HTTP hooks asked of an agent whose hooks are commands.
var ErrNoHTTPHooks = errors.New("the agent's hooks are commands")

// Notes are what install leaves to the user, printed after the files it changed.
func Notes(opts Options) []string {
	d := agentlog.DialectOf(agentlog.Agent(opts.Agent))
	if d == nil {
		return nil
	}
	var notes []string
	if d.InstallNote != nil && !opts.User && !opts.MCPOnly {
		dir, _ := filepath.Abs(opts.Project)
		notes = append(notes, d.InstallNote(dir, opts.env))
	}
	if opts.HTTPURL != "" && !opts.MCPOnly {
		notes = append(notes, "note: the agent posts its hooks to 'replay serve --http': keep it running. While it is not, "+
			"the agent goes on and nothing is recorded; 'replay install "+opts.Agent+"' without --http goes back to the command hook")
	}
	if d.MCP.Format == agentlog.NoMCP && d.MCP.Absent != "" && !opts.NoMCP {
		does := "the hooks record, decide and deliver by themselves"
		if d.Hooks.Shape == agentlog.HookExtension {
			does = "the extension records, decides and delivers by itself"
		}
		notes = append(notes, "note: "+d.MCP.Absent+": "+does)
	}
	if d.MCP.Format != agentlog.NoMCP && d.MCP.Project == "" && d.MCP.NoProject != "" && !opts.User && !opts.NoMCP {
		notes = append(notes, "note: "+d.MCP.NoProject+": 'replay install "+opts.Agent+" --user' adds the tasklog server")
	}
	return notes
}

// hooksWord is what the agent's hooks are called.
func hooksWord(d *agentlog.Dialect) string {
	if d.Hooks.Shape == agentlog.HookExtension {
		return "extension"
	}
	return "hooks"
}

// env is the environment variable name as install sees it.
func (opts Options) env(name string) string {
	if opts.Getenv == nil {
		return ""
	}
	return opts.Getenv(name)
}

// Run plans every file the agent's hooks and MCP server live in, then writes them; an
// error in any plan changes nothing. It returns one line per file, event or server changed.
func Run(opts Options, install bool) ([]string, error) {
	s, err := opts.scope()
	if err != nil {
		return nil, err
	}
	d, err := installDialect(opts.Agent)
	if err != nil {
		return nil, err
	}
	var targets []target
	if !opts.MCPOnly {
		cmd := newHookCommand(opts.Exe, opts.Agent, opts.DB, opts.Extension)
		if opts.HTTPURL != "" && install {
			if !d.Hooks.HTTP {
				return nil, fmt.Errorf("%w: %s's hooks are commands here; HTTP hooks are installed for %s",
					ErrNoHTTPHooks, opts.Agent, strings.Join(HTTPAgents(), ", "))
			}
			cmd.url, cmd.token = opts.HTTPURL, opts.HTTPToken
		}
		ts, err := hookTargets(d, s, cmd)
		if err != nil {
			return nil, err
		}
		targets = append(targets, ts...)
	}
	if opts.MCPOnly && d.MCP.Format != agentlog.NoMCP && d.MCP.Project == "" && !opts.User {
		return nil, refusal{ErrNoProjectMCP, d.MCP.NoProject + ": use 'replay install " + opts.Agent + " --user --mcp-only'"}
	}
	if opts.MCPOnly && d.MCP.Format == agentlog.NoMCP {
		return nil, fmt.Errorf("%s: install its %s without --mcp-only", d.MCP.Absent, hooksWord(d))
	}
	if !opts.NoMCP {
		ts, err := mcpTargets(d, s, opts.Exe, opts.DB)
		if err != nil {
			return nil, err
		}
		targets = append(targets, ts...)
	}
	var changes []fileChange
	for _, t := range mergeJSONTargets(targets) {
		c, err := t.plan(install)
		if err != nil {
			return nil, err
		}
		changes = append(changes, c...)
	}
	notes, err := applyRecorded(changes, install, opts.Records)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, c := range changes {
		lines = append(lines, c.lines...)
	}
	return append(lines, notes...), nil
}

func (opts Options) scope() (scope, error) {
	if opts.User {
		if opts.Home == "" {
			return scope{}, errors.New("--user: the home folder is unknown ($HOME is not set)")
		}
		return scope{user: true, root: opts.Home, getenv: opts.env}, nil
	}
	root, err := filepath.Abs(opts.Project)
	if err != nil {
		return scope{}, err
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return scope{}, fmt.Errorf("--project %s: not a folder", opts.Project)
	}
	return scope{root: root, shown: opts.Project, getenv: opts.env}, nil
}

// HTTPAgents are the agents whose hooks install can make HTTP posts (HookConfig.HTTP).
func HTTPAgents() []string {
	var out []string
	for _, d := range agentlog.Dialects() {
		if d.Hooks.HTTP {
			out = append(out, string(d.Agent))
		}
	}
	return out
}
