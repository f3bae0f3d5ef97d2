package main

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// What each agent reads, checked against its documentation or source:
//   - Claude Code: settings.json "hooks", matcher groups; the matcher filters the tool for
//     Pre/PostToolUse(Failure), the source, reason, load reason or trigger for SessionStart, SessionEnd,
//     InstructionsLoaded and PreCompact, and is ignored for UserPromptSubmit and Stop.
//   - Codex: hooks.json beside its config.toml, Claude's shape (`timeout` in seconds); it reads
//     a matcher for Pre/PostToolUse and SessionStart only, and cuts SessionEnd to 3 s.
//   - Cline: executable files named after the event (its CLI also accepts an extension; its VS
//     Code extension only the bare name, which is what install writes).
//   - Cursor: .cursor/hooks.json, {"version": 1, "hooks": {"event": [{"command", "timeout"}]}}.
//   - VS Code (Copilot): .github/hooks/*.json in VS Code's own shape ({"type", "command",
//     "timeout"} per event), and Claude's settings files.
//   - Qwen Code: settings.json "hooks" ($QWEN_HOME, default ~/.qwen, for the user; .qwen/ for a
//     project), Claude's matcher groups; a hook is a command, or an HTTP POST to loopback
//     ({"type": "http", "url", "headers", "timeout"}). Its MCP servers are in the same file.
//   - pi: no command hooks; extensions in .pi/extensions/NAME/index.ts (project) and
//     ~/.pi/agent/extensions/NAME/index.ts ($PI_CODING_AGENT_DIR), loaded by themselves.

// hookTimeout is the budget, in seconds, install gives every hook.
const hookTimeout = 10

var claudeEvents = []hookEvent{
	{"SessionStart", true, hookTimeout},
	{"InstructionsLoaded", true, hookTimeout},
	{"UserPromptSubmit", false, hookTimeout},
	{"PreToolUse", true, hookTimeout},
	{"PostToolUse", true, hookTimeout},
	{"PostToolUseFailure", true, hookTimeout},
	{"PreCompact", true, hookTimeout},
	{"Stop", false, hookTimeout},
	{"SessionEnd", true, hookTimeout},
}

var codexEvents = []hookEvent{
	{"SessionStart", true, hookTimeout},
	{"UserPromptSubmit", false, hookTimeout},
	{"PreToolUse", true, hookTimeout},
	{"PostToolUse", true, hookTimeout},
	{"PreCompact", false, hookTimeout},
	{"Stop", false, hookTimeout},
	{"SessionEnd", false, 3},
}

// qwenEvents leave out PreToolUse: Qwen Code 0.24.4 reads its additionalContext and drops it,
// and the call is recorded by PostToolUse all the same, which delivers with the result.
var qwenEvents = []hookEvent{
	{"SessionStart", true, hookTimeout},
	{"InstructionsLoaded", true, hookTimeout},
	{"UserPromptSubmit", false, hookTimeout},
	{"PostToolUse", true, hookTimeout},
	{"PostToolUseFailure", true, hookTimeout},
	{"PreCompact", true, hookTimeout},
	{"Stop", false, hookTimeout},
	{"SessionEnd", true, hookTimeout},
}

var cursorEvents = []hookEvent{
	{"sessionStart", false, hookTimeout},
	{"beforeSubmitPrompt", false, hookTimeout},
	{"preToolUse", false, hookTimeout},
	{"postToolUse", false, hookTimeout},
	{"preCompact", false, hookTimeout},
	{"stop", false, hookTimeout},
	{"sessionEnd", false, hookTimeout},
}

var vscodeEvents = []hookEvent{
	{"SessionStart", false, hookTimeout},
	{"UserPromptSubmit", false, hookTimeout},
	{"PreToolUse", false, hookTimeout},
	{"PostToolUse", false, hookTimeout},
	{"PreCompact", false, hookTimeout},
	{"Stop", false, hookTimeout},
}

var clineEvents = []string{
	"TaskStart", "TaskResume", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact",
	"TaskComplete", "TaskCancel", "TaskError", "SessionShutdown",
}

// installAgents are the agents install knows, in the order usage lists them.
var installAgents = []string{"claude-code", "codex", "cline", "cursor", "copilot", "qwen", "pi"}

// errCopilotUser is returned for `install copilot --user`: VS Code has no user hook file of its
// own and reads Claude's, where `replay install claude-code --user` puts the hooks.
var errCopilotUser = errors.New("VS Code reads user hooks from ~/.claude/settings.json, Claude Code's file: " +
	"run 'replay install claude-code --user' (the hook recognises VS Code's payloads)")

// scope is where install writes: a project folder, or the user's home.
type scope struct {
	user       bool
	root       string // the project folder or the home folder, absolute
	shown      string // the project folder as the user gave it
	codexHome  string // $CODEX_HOME, absolute, or "" for ~/.codex
	qwenHome   string // $QWEN_HOME, absolute, or "" for ~/.qwen
	clineMCP   string // Cline CLI's MCP settings file, absolute, or "" for ~/.cline's
	piAgentDir string // $PI_CODING_AGENT_DIR, absolute, or "" for ~/.pi/agent
}

// file returns a file's path under the scope root and how it is printed.
func (s scope) file(rel string) (path, show string) {
	path = filepath.Join(s.root, filepath.FromSlash(rel))
	if s.user {
		return path, "~/" + rel
	}
	return path, filepath.Join(s.shown, filepath.FromSlash(rel))
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
func hookTargets(agent string, s scope, cmd hookCommand) ([]target, error) {
	jsonFile := func(rel string, edit jsonEdit) []target {
		path, show := s.file(rel)
		return []target{jsonTarget{path: path, show: show, edit: edit, prune: s.prune(rel)}}
	}
	switch agent {
	case "claude-code":
		return jsonFile(".claude/settings.json", hookEdit{claudeEvents, cmd, claudeShape{}, 0}), nil
	case "codex":
		edit := hookEdit{codexEvents, cmd, claudeShape{}, 0}
		if s.user && s.codexHome != "" {
			path := filepath.Join(s.codexHome, "hooks.json")
			return []target{jsonTarget{path: path, show: path, edit: edit}}, nil
		}
		return jsonFile(".codex/hooks.json", edit), nil
	case "cursor":
		return jsonFile(".cursor/hooks.json", hookEdit{cursorEvents, cmd, flatShape(cursorEntry), 1}), nil
	case "copilot":
		if s.user {
			return nil, errCopilotUser
		}
		return jsonFile(".github/hooks/tasklog.json", hookEdit{vscodeEvents, cmd, flatShape(vscodeEntry), 0}), nil
	case "qwen":
		return []target{qwenSettings(s, hookEdit{qwenEvents, cmd, claudeShape{}, 0})}, nil
	case "pi":
		return piTargets(s, cmd.exe, cmd.db, s.piAgentDir)
	case "cline":
		rel := ".clinerules/hooks"
		if s.user {
			rel = "Documents/Cline/Hooks"
		}
		dir, show := s.file(rel)
		prune := s.prune(rel + "/x") // the hooks folder and the ones above it
		return []target{clineScripts{dir: dir, show: show, events: clineEvents, cmd: cmd, prune: prune}}, nil
	}
	return nil, fmt.Errorf("unknown agent %q (want one of %s)", agent, strings.Join(installAgents, ", "))
}

func cursorEntry(ev hookEvent, cmd hookCommand) *object {
	return newObject("command", cmd.line, "timeout", ev.timeout)
}

func vscodeEntry(ev hookEvent, cmd hookCommand) *object {
	return newObject("type", "command", "command", cmd.line, "timeout", ev.timeout)
}

// qwenSettings is Qwen Code's settings file in a scope, changed by edit: its hooks and its MCP
// servers live in the same file.
func qwenSettings(s scope, edit jsonEdit) jsonTarget {
	if s.user && s.qwenHome != "" {
		path := filepath.Join(s.qwenHome, "settings.json")
		return jsonTarget{path: path, show: path, edit: edit}
	}
	path, show := s.file(".qwen/settings.json")
	return jsonTarget{path: path, show: show, edit: edit, prune: s.prune(".qwen/settings.json")}
}
