package install

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/tasklog/tasklog/events/agentlog"
)

// Where each agent reads its MCP servers is its agentlog.Dialect's MCPConfig.

// mcpServerName is the key install keeps its server under in every agent's settings.
const mcpServerName = "tasklog"

// mcpLaunch is how an agent starts the tasklog MCP server: this replay binary's `mcp` verb,
// serving the project folder (the folder the agent starts it in for a user install) and the
// database baked in when --db or --store was given (else the server takes the hooks' default).
type mcpLaunch struct {
	command string
	args    []string
}

func newMCPLaunch(exe, workspace, db string) mcpLaunch {
	args := []string{"mcp"}
	if workspace != "" {
		args = append(args, "--workspace", workspace)
	}
	if db != "" {
		args = append(args, storeFlag(db), db)
	}
	return mcpLaunch{command: exe, args: args}
}

// oursMCP reports whether a configured server runs a replay binary's `mcp` verb: install
// updates such an entry and uninstall removes it; any other entry of the same name is the user's.
func oursMCP(command string, args []string) bool {
	return strings.Contains(filepath.Base(command), "replay") && len(args) > 0 && args[0] == "mcp"
}

// ErrMCPExists is returned when an agent's settings hold a server named tasklog that install
// did not write.
var ErrMCPExists = errors.New("a server named " + mcpServerName + " exists and was not written by replay install")

// mcpTargets returns the settings an agent reads its MCP servers from, in a scope.
func mcpTargets(d *agentlog.Dialect, s scope, exe, db string) ([]target, error) {
	c := d.MCP
	if c.Format == agentlog.NoMCP {
		return nil, nil // see Notes
	}
	workspace := s.root
	if s.user {
		workspace = "" // the server serves the folder the agent starts it in
	}
	launch := newMCPLaunch(exe, workspace, db)
	rel := c.Project
	if s.user {
		rel = c.User
		if rel == "" {
			return nil, noUser(c.NoUser)
		}
	} else if rel == "" {
		return nil, nil // per user only: see Notes
	}
	path, show := s.file(rel)
	prune := s.prune(rel)
	if s.user {
		path, show = s.userFile(rel, c.UserDir, c.UserDirEnv)
		if c.UserFile != nil {
			if p := c.UserFile(s.env); p != "" {
				path, show = p, p
			}
		}
	}
	if c.Format == agentlog.MCPTOML {
		return []target{codexConfig{path: path, show: show, launch: launch, prune: prune}}, nil
	}
	entry := claudeMCPEntry
	switch c.Entry {
	case agentlog.MCPTypedStdio:
		entry = vscodeMCPEntry
	case agentlog.MCPEnabled:
		entry = clineMCPEntry
	}
	edit := mcpEdit{c.Key, launch, entry}
	ts := []target{jsonTarget{path: path, show: show, edit: edit, prune: prune}}
	if s.user {
		for _, f := range c.AlsoUser {
			if s.exists(f.Folder) {
				path, show := s.file(f.File)
				ts = append(ts, jsonTarget{path: path, show: show, edit: edit})
			}
		}
	}
	return ts, nil
}

func claudeMCPEntry(l mcpLaunch) *object {
	return newObject("command", l.command, "args", stringsJSON(l.args))
}

func vscodeMCPEntry(l mcpLaunch) *object {
	return newObject("type", "stdio", "command", l.command, "args", stringsJSON(l.args))
}

func clineMCPEntry(l mcpLaunch) *object {
	return newObject("command", l.command, "args", stringsJSON(l.args), "disabled", false)
}

func stringsJSON(ss []string) []any {
	a := make([]any, len(ss))
	for i, s := range ss {
		a[i] = s
	}
	return a
}

// mcpEdit keeps the tasklog server in a JSON settings document's servers object (key).
type mcpEdit struct {
	key    string
	launch mcpLaunch
	entry  func(mcpLaunch) *object
}

// servers returns the document's servers object, creating it when asked.
func (m mcpEdit) servers(root *object, create bool) (*object, error) {
	v, ok := root.get(m.key)
	if !ok {
		if !create {
			return nil, nil
		}
		o := &object{}
		root.set(m.key, o)
		return o, nil
	}
	o, ok := v.(*object)
	if !ok {
		return nil, fmt.Errorf("%q is %s, not an object", m.key, jsonKind(v))
	}
	return o, nil
}

// oursMCPEntry reports whether a server entry is one install wrote.
func oursMCPEntry(v any) bool {
	o, ok := v.(*object)
	if !ok {
		return false
	}
	cmd, isCmd := commandOf(o)
	a, _ := o.get("args")
	arr, _ := a.([]any)
	args := make([]string, 0, len(arr))
	for _, e := range arr {
		s, ok := e.(string)
		if !ok {
			return false
		}
		args = append(args, s)
	}
	return isCmd && oursMCP(cmd, args)
}

func (m mcpEdit) install(root *object) ([]string, error) {
	servers, err := m.servers(root, true)
	if err != nil {
		return nil, err
	}
	want := m.entry(m.launch)
	name := m.key + "." + mcpServerName
	old, exists := servers.get(mcpServerName)
	if !exists {
		servers.set(mcpServerName, want)
		return []string{name + ": added"}, nil
	}
	if !oursMCPEntry(old) {
		return nil, fmt.Errorf("%w (%s): it is not overwritten. Rename or remove it, and install again", ErrMCPExists, name)
	}
	// Install's own keys are set in place; any the user added (env, autoApprove, …) stay.
	o := old.(*object)
	changed := false
	for _, mb := range want.members {
		if v, ok := o.get(mb.key); !ok || !equalJSON(v, mb.value) {
			o.set(mb.key, mb.value)
			changed = true
		}
	}
	if !changed {
		return nil, nil
	}
	return []string{name + ": updated"}, nil
}

func (m mcpEdit) uninstall(root *object) ([]string, error) {
	servers, err := m.servers(root, false)
	if servers == nil || err != nil {
		return nil, err
	}
	if v, ok := servers.get(mcpServerName); !ok || !oursMCPEntry(v) {
		return nil, nil
	}
	servers.del(mcpServerName)
	if servers.len() == 0 {
		root.del(m.key)
	}
	return []string{m.key + "." + mcpServerName + ": removed"}, nil
}

func (m mcpEdit) bare(root *object) bool { return root.len() == 0 }
