package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Where each agent reads its MCP servers, checked against its documentation or source:
//   - Claude Code: a project's .mcp.json, and the user's ~/.claude.json (top-level
//     "mcpServers"; the same file holds Claude Code's own state, which is left alone).
//   - Cursor: .cursor/mcp.json and ~/.cursor/mcp.json, "mcpServers".
//   - VS Code (Copilot): .vscode/mcp.json, "servers", each with "type": "stdio".
//   - Cline: cline_mcp_settings.json, "mcpServers", per user only. The CLI keeps it in
//     $CLINE_MCP_SETTINGS_PATH, else $CLINE_DATA_DIR/settings, else $CLINE_DIR/data/settings
//     (default ~/.cline); the VS Code extension in its global storage folder.
//   - Codex: config.toml ([mcp_servers.NAME] tables), in .codex/ or $CODEX_HOME.
//   - Qwen Code: settings.json "mcpServers" ({"command", "args"}), beside its hooks.

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
		args = append(args, storeFlagFor(db), db)
	}
	return mcpLaunch{command: exe, args: args}
}

// oursMCP reports whether a configured server runs a replay binary's `mcp` verb: install
// updates such an entry and uninstall removes it; any other entry of the same name is the user's.
func oursMCP(command string, args []string) bool {
	return strings.Contains(filepath.Base(command), "replay") && len(args) > 0 && args[0] == "mcp"
}

// errMCPExists is returned when an agent's settings hold a server named tasklog that install
// did not write.
var errMCPExists = errors.New("a server named " + mcpServerName + " exists and was not written by replay install")

// errCopilotUserMCP is returned for the copilot MCP server with --user: VS Code keeps the
// user's servers in its profile, whose place depends on the profile.
var errCopilotUserMCP = errors.New("VS Code keeps the user's MCP servers in its profile: " +
	"install per project (.vscode/mcp.json), or add the server with VS Code's 'MCP: Add Server'")

// errClineProjectMCP is returned for the cline MCP server alone in a project: Cline has no
// project MCP settings.
var errClineProjectMCP = errors.New("Cline reads MCP servers per user only: use 'replay install cline --user --mcp-only'")

// mcpTargets returns the settings an agent reads its MCP servers from, in a scope.
func mcpTargets(agent string, s scope, exe, db string) ([]target, error) {
	workspace := s.root
	if s.user {
		workspace = "" // the server serves the folder the agent starts it in
	}
	launch := newMCPLaunch(exe, workspace, db)
	jsonFile := func(rel string, edit mcpEdit) []target {
		path, show := s.file(rel)
		return []target{jsonTarget{path: path, show: show, edit: edit, prune: s.prune(rel)}}
	}
	switch agent {
	case "claude-code":
		if s.user {
			return jsonFile(".claude.json", mcpEdit{"mcpServers", launch, claudeMCPEntry}), nil
		}
		return jsonFile(".mcp.json", mcpEdit{"mcpServers", launch, claudeMCPEntry}), nil
	case "cursor":
		return jsonFile(".cursor/mcp.json", mcpEdit{"mcpServers", launch, claudeMCPEntry}), nil
	case "copilot":
		if s.user {
			return nil, errCopilotUserMCP
		}
		return jsonFile(".vscode/mcp.json", mcpEdit{"servers", launch, vscodeMCPEntry}), nil
	case "qwen":
		return []target{qwenSettings(s, mcpEdit{"mcpServers", launch, claudeMCPEntry})}, nil
	case "pi":
		return nil, nil // pi has no MCP client: see installNotes
	case "cline":
		if !s.user {
			return nil, nil // Cline reads MCP servers per user only: see installNotes
		}
		return clineMCPTargets(s, launch), nil
	case "codex":
		if s.user {
			dir, show := filepath.Join(s.root, ".codex"), "~/.codex"
			if s.codexHome != "" {
				dir, show = s.codexHome, s.codexHome
			}
			return []target{codexConfig{path: filepath.Join(dir, "config.toml"), show: filepath.Join(show, "config.toml"), launch: launch}}, nil
		}
		path, show := s.file(".codex/config.toml")
		return []target{codexConfig{path: path, show: show, launch: launch, prune: s.prune(".codex/config.toml")}}, nil
	}
	return nil, fmt.Errorf("unknown agent %q (want one of %s)", agent, strings.Join(installAgents, ", "))
}

// clineExtensionStorage are the VS Code extension's global storage folders under the home
// folder (Linux, macOS); its settings file is written only where the folder exists.
var clineExtensionStorage = []string{
	".config/Code/User/globalStorage/saoudrizwan.claude-dev",
	"Library/Application Support/Code/User/globalStorage/saoudrizwan.claude-dev",
}

// clineMCPTargets is the CLI's settings file, and the VS Code extension's where it is installed.
func clineMCPTargets(s scope, launch mcpLaunch) []target {
	edit := mcpEdit{"mcpServers", launch, clineMCPEntry}
	var ts []target
	if s.clineMCP != "" {
		ts = append(ts, jsonTarget{path: s.clineMCP, show: s.clineMCP, edit: edit})
	} else {
		path, show := s.file(".cline/data/settings/cline_mcp_settings.json")
		ts = append(ts, jsonTarget{path: path, show: show, edit: edit})
	}
	for _, dir := range clineExtensionStorage {
		if fi, err := os.Stat(filepath.Join(s.root, filepath.FromSlash(dir))); err == nil && fi.IsDir() {
			path, show := s.file(dir + "/settings/cline_mcp_settings.json")
			ts = append(ts, jsonTarget{path: path, show: show, edit: edit})
		}
	}
	return ts
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
		return nil, fmt.Errorf("%w (%s): it is not overwritten. Rename or remove it, and install again", errMCPExists, name)
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
