package install

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/store/natsstore"
)

// What each agent reads, and where, is its agentlog.Dialect (events/agentlog/agent_*.go): install
// writes what the dialect's HookConfig and MCPConfig describe, in the shape they name.

// Agents are the agents install knows, in the order usage lists them.
func Agents() []string {
	var out []string
	for _, d := range agentlog.Dialects() {
		if d.Hooks.Shape != agentlog.NoHooks || d.MCP.Format != agentlog.NoMCP {
			out = append(out, string(d.Agent))
		}
	}
	return out
}

// UnknownAgent is the error for an agent install does not know; it wraps
// agentlog.ErrUnknownAgent.
func UnknownAgent(agent string) error {
	return fmt.Errorf("%w %q (want one of %s)", agentlog.ErrUnknownAgent, agent, strings.Join(Agents(), ", "))
}

// storeFlag is the flag that names the store at path: --store for a NATS URL, else --db.
func storeFlag(path string) string {
	if natsstore.IsURL(path) {
		return "--store"
	}
	return "--db"
}

// installDialect is the dialect install writes for agent.
func installDialect(agent string) (*agentlog.Dialect, error) {
	d := agentlog.DialectOf(agentlog.Agent(agent))
	if d == nil {
		return nil, UnknownAgent(agent)
	}
	return d, nil
}

// ErrNoUserConfig is returned for a --user install an agent has no user file for.
var ErrNoUserConfig = errors.New("no user configuration")

// refusal is a sentinel error said in the dialect's words, which are all the user reads.
type refusal struct {
	sentinel error
	msg      string
}

func (e refusal) Error() string        { return e.msg }
func (e refusal) Is(target error) bool { return target == e.sentinel }

// noUser is ErrNoUserConfig, for the reason given.
func noUser(reason string) error { return refusal{ErrNoUserConfig, reason} }

// ErrNoProjectMCP is returned for the MCP server alone in a project of an agent that reads MCP
// servers per user only.
var ErrNoProjectMCP = errors.New("no project MCP settings")

// scope is where install writes: a project folder, or the user's home.
type scope struct {
	user   bool
	root   string // the project folder or the home folder, absolute
	shown  string // the project folder as the user gave it
	getenv func(string) string
}

// env is the scope's environment variable name.
func (s scope) env(name string) string {
	if s.getenv == nil || name == "" {
		return ""
	}
	return s.getenv(name)
}

// file returns a file's path under the scope root and how it is printed.
func (s scope) file(rel string) (path, show string) {
	path = filepath.Join(s.root, filepath.FromSlash(rel))
	if s.user {
		return path, "~/" + rel
	}
	return path, filepath.Join(s.shown, filepath.FromSlash(rel))
}

// userFile is a user file rel, whose leading folder dir an environment variable may move: its
// path and how it is printed.
func (s scope) userFile(rel, dir, env string) (path, show string) {
	if v := s.env(env); v != "" && dir != "" && strings.HasPrefix(rel, dir) {
		if abs, err := filepath.Abs(v); err == nil {
			v = abs
		}
		p := filepath.Join(v, filepath.FromSlash(strings.TrimPrefix(strings.TrimPrefix(rel, dir), "/")))
		return p, p
	}
	return s.file(rel)
}

// prune lists the folders of rel (innermost first) that uninstall may remove once empty: the
// ones a project install creates; a user's home folders are left alone.
func (s scope) prune(rel string) []string {
	if s.user {
		return nil
	}
	var dirs []string
	for d := filepath.Dir(filepath.FromSlash(rel)); d != "."; d = filepath.Dir(d) {
		dirs = append(dirs, filepath.Join(s.root, d))
	}
	return dirs
}

// hookTargets returns the configuration an agent reads its hooks from, in a scope.
func hookTargets(d *agentlog.Dialect, s scope, cmd hookCommand) ([]target, error) {
	h := d.Hooks
	rel := h.Project
	if s.user {
		rel = h.User
		if rel == "" {
			return nil, noUser(h.NoUser)
		}
	}
	path, show := s.file(rel)
	if s.user {
		path, show = s.userFile(rel, h.UserDir, h.UserDirEnv)
	}
	prune := s.prune(rel)
	events := make([]hookEvent, len(h.Events))
	for i, e := range h.Events {
		events[i] = hookEvent{e.Name, e.Matcher, e.Timeout}
	}
	switch h.Shape {
	case agentlog.HookGroups:
		return []target{jsonTarget{path: path, show: show, edit: hookEdit{events, cmd, claudeShape{}, h.Version}, prune: prune}}, nil
	case agentlog.HookList:
		return []target{jsonTarget{path: path, show: show, edit: hookEdit{events, cmd, flatShape(cursorEntry), h.Version}, prune: prune}}, nil
	case agentlog.HookTypedList:
		return []target{jsonTarget{path: path, show: show, edit: hookEdit{events, cmd, flatShape(vscodeEntry), h.Version}, prune: prune}}, nil
	case agentlog.HookScripts:
		names := make([]string, len(h.Events))
		for i, e := range h.Events {
			names[i] = e.Name
		}
		return []target{clineScripts{dir: path, show: show, events: names, cmd: cmd, prune: s.prune(rel + "/x")}}, nil
	case agentlog.HookExtension:
		if natsstore.IsURL(cmd.db) {
			return nil, ErrPiStore
		}
		switch {
		case !s.user:
			prune = s.prune(rel + "/x")
		case h.Extension == "":
			prune = []string{path}
		default:
			prune = nil // a folder of the agent's, shared with its other plugins
		}
		return []target{piExtension{dir: path, show: show, agent: string(d.Agent), file: h.Extension, exe: cmd.exe, db: cmd.db, source: cmd.extension, prune: prune}}, nil
	}
	return nil, fmt.Errorf("%s runs no hook commands install can write", d.Agent)
}

func cursorEntry(ev hookEvent, cmd hookCommand) *object {
	return newObject("command", cmd.line, "timeout", ev.timeout)
}

func vscodeEntry(ev hookEvent, cmd hookCommand) *object {
	return newObject("type", "command", "command", cmd.line, "timeout", ev.timeout)
}

// exists reports whether a folder under the scope root exists.
func (s scope) exists(rel string) bool {
	fi, err := os.Stat(filepath.Join(s.root, filepath.FromSlash(rel)))
	return err == nil && fi.IsDir()
}
