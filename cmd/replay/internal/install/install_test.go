package install

import (
	"errors"
	"flag"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/cmd/replay/internal/extension"
	"github.com/tasklog/tasklog/events/agentlog"
)

// The binary and database every test installs, so that golden files do not depend on where
// the test runs.
const (
	testExe = "/opt/tasklog/bin/replay"
	testDB  = "/home/dev/tasks.db"
)

// installCase is one agent's configuration: where install writes in a project, and a file of
// the user's own that install must keep.
type installCase struct {
	agent string
	// user is the user's own configuration before install, by path under the project.
	user map[string]string
}

var installCases = []installCase{
	{"claude-code", map[string]string{".claude/settings.json": `{
  "permissions": {
    "allow": [
      "Bash(npm test)"
    ]
  },
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "Bash",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/local/bin/guard.sh"
          }
        ]
      }
    ]
  },
  "model": "opus"
}
`, ".mcp.json": `{
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-github"
      ]
    }
  }
}
`}},
	{"codex", map[string]string{".codex/config.toml": codexUserConfig, ".codex/hooks.json": `{
	"hooks": {
		"Stop": [
			{
				"hooks": [
					{
						"type": "command",
						"command": "notify-send 'codex finished'",
						"timeout": 5
					}
				]
			}
		]
	}
}`}},
	{"cursor", map[string]string{".cursor/hooks.json": `{
  "version": 1,
  "hooks": {
    "afterFileEdit": [
      {
        "command": "./scripts/format.sh"
      }
    ],
    "stop": [
      {
        "command": "./scripts/audit.sh",
        "timeout": 30
      }
    ]
  }
}
`, ".cursor/mcp.json": `{
  "mcpServers": {
    "browser": {
      "url": "http://localhost:9222/mcp"
    }
  }
}
`}},
	{"copilot", map[string]string{".github/hooks/tasklog.json": `{
  "hooks": {
    "PostToolUse": [
      {
        "type": "command",
        "command": "npx prettier --write .",
        "timeout": 15
      }
    ]
  }
}
`, ".vscode/mcp.json": `{
  "inputs": [
    {
      "type": "promptString",
      "id": "db-password",
      "password": true
    }
  ],
  "servers": {
    "postgres": {
      "type": "stdio",
      "command": "pg-mcp",
      "args": []
    }
  }
}
`}},
	{"gemini", map[string]string{".gemini/settings.json": `{
  "general": {
    "vimMode": true
  },
  "hooks": {
    "BeforeTool": [
      {
        "matcher": "write_file|replace",
        "hooks": [
          {
            "name": "secret-scanner",
            "type": "command",
            "command": "$GEMINI_PROJECT_DIR/.gemini/hooks/block-secrets.sh",
            "timeout": 5000
          }
        ]
      }
    ]
  },
  "mcpServers": {
    "github": {
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-github"
      ],
      "trust": false
    }
  }
}
`}},
	{"qwen", map[string]string{".qwen/settings.json": `{
  "model": {
    "name": "qwen3-coder-plus"
  },
  "hooks": {
    "PostToolUse": [
      {
        "matcher": "write_file",
        "hooks": [
          {
            "type": "command",
            "command": "npx prettier --write ."
          }
        ]
      }
    ]
  },
  "mcpServers": {
    "docs": {
      "command": "docs-mcp",
      "args": []
    }
  }
}
`}},
	{"cline", map[string]string{
		".clinerules/hooks/Notification":  "#!/bin/sh\necho notified >&2\n",
		".clinerules/hooks/PreToolUse.sh": "#!/bin/sh\necho '{\"cancel\": false}'\n",
		".clinerules/api.md":              "---\npaths: [\"src/api/**\"]\n---\nUse the router.\n",
	}},
}

// codexUserConfig is a config.toml of the user's own: install appends its table and leaves
// every other byte alone.
const codexUserConfig = `# my Codex settings
model = "gpt-5-codex"

[mcp_servers.docs]
command = "docs-mcp"
args = ["--port", "0"]

[projects."/home/dev/shop"]
trust_level = "trusted"
`

func testOptions(agent, project string) Options {
	return Options{Agent: agent, Project: project, Exe: testExe, DB: testDB, Extension: piSource}
}

// TestInstallFresh installs each agent's hooks into an empty project (compared with
// testdata/install/AGENT.golden; go test ./cmd/replay/internal/install -update rewrites it), then checks that a
// second install writes nothing and that uninstall leaves the project empty again.
func TestInstallFresh(t *testing.T) {
	for _, tc := range installCases {
		t.Run(tc.agent, func(t *testing.T) {
			dir := t.TempDir()
			opts := testOptions(tc.agent, dir)
			lines := mustInstall(t, opts, true)
			checkGolden(t, tc.agent, lines, dir)

			before := snapshot(t, dir)
			if again := mustInstall(t, opts, true); len(again) != 0 {
				t.Errorf("second install changed %q, want nothing", again)
			}
			before.unchanged(t, dir)

			removed := mustInstall(t, opts, false)
			if len(removed) < len(lines) {
				t.Errorf("uninstall printed %d lines, install %d:\n%s", len(removed), len(lines), strings.Join(removed, "\n"))
			}
			if left := snapshot(t, dir); len(left.files) != 0 || len(left.dirs) != 0 {
				t.Errorf("uninstall left %v %v, want an empty project", left.files, left.dirs)
			}
			if again := mustInstall(t, opts, false); len(again) != 0 {
				t.Errorf("second uninstall changed %q, want nothing", again)
			}
		})
	}
}

// TestInstallOverUserContent installs next to the user's own configuration (golden:
// AGENT-merged.golden): the user's keys and hooks stay, a file's permissions stay, and
// uninstall gives back the original bytes.
func TestInstallOverUserContent(t *testing.T) {
	for _, tc := range installCases {
		t.Run(tc.agent, func(t *testing.T) {
			dir := t.TempDir()
			for rel, content := range tc.user {
				writeTestFile(t, filepath.Join(dir, rel), content, 0o600)
			}
			original := snapshot(t, dir)
			opts := testOptions(tc.agent, dir)
			lines := mustInstall(t, opts, true)
			checkGolden(t, tc.agent+"-merged", lines, dir)
			for rel := range tc.user {
				if fi, err := os.Stat(filepath.Join(dir, rel)); err != nil || fi.Mode().Perm() != 0o600 {
					t.Errorf("%s: mode after install = %v (%v), want -rw-------", rel, fi.Mode(), err)
				}
			}
			merged := snapshot(t, dir)
			if again := mustInstall(t, opts, true); len(again) != 0 {
				t.Errorf("second install changed %q, want nothing", again)
			}
			merged.unchanged(t, dir)

			mustInstall(t, opts, false)
			if got := snapshot(t, dir); !got.equal(original) {
				t.Errorf("after uninstall the project is\n%s\nwant the original\n%s", got, original)
			}
		})
	}
}

// TestInstallRefusesMalformed: a configuration file the agent could not read either is named
// in the error, and nothing anywhere is changed.
func TestInstallRefusesMalformed(t *testing.T) {
	tests := []struct {
		agent, file, content, want string
	}{
		{"claude-code", ".claude/settings.json", `{"hooks": {"PreToolUse": [`, ".claude/settings.json: not valid JSON"},
		{"claude-code", ".claude/settings.json", `{"a": 1} {"b": 2}`, "more than one value"},
		{"claude-code", ".claude/settings.json", `["hooks"]`, "the top level is an array"},
		{"claude-code", ".claude/settings.json", `{"hooks": []}`, `"hooks" is an array, not an object`},
		{"codex", ".codex/hooks.json", `{"hooks": {"Stop": {"command": "x"}}}`, `"hooks.Stop" is an object, not an array`},
		{"cursor", ".cursor/hooks.json", "{\"version\": 1,}", ".cursor/hooks.json: not valid JSON"},
		{"copilot", ".github/hooks/tasklog.json", `{"hooks": "none"}`, `"hooks" is a string`},
		{"gemini", ".gemini/settings.json", `{"hooks": {"AfterTool": {"command": "x"}}}`, `"hooks.AfterTool" is an object, not an array`},
		{"claude-code", ".mcp.json", `{"mcpServers": {"tasklog": `, ".mcp.json: not valid JSON"},
		{"claude-code", ".mcp.json", `{"mcpServers": ["tasklog"]}`, `"mcpServers" is an array, not an object`},
		{"cursor", ".cursor/mcp.json", `{"mcpServers": null}`, `"mcpServers" is null, not an object`},
		{"copilot", ".vscode/mcp.json", `{"servers": {"x": 1},}`, ".vscode/mcp.json: not valid JSON"},
	}
	for _, tt := range tests {
		for _, install := range []bool{true, false} {
			verb := map[bool]string{true: "install", false: "uninstall"}[install]
			t.Run(verb+"/"+tt.agent+"/"+tt.want, func(t *testing.T) {
				dir := t.TempDir()
				writeTestFile(t, filepath.Join(dir, tt.file), tt.content, 0o644)
				before := snapshot(t, dir)
				_, err := Run(testOptions(tt.agent, dir), install)
				if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.file) {
					t.Errorf("err = %v, want one naming %s and saying %q", err, tt.file, tt.want)
				}
				before.unchanged(t, dir)
			})
		}
	}
}

// TestInstallRefusesAServerOfTheUsers: a server named tasklog that install did not write is
// never overwritten: install refuses, names the file, and changes nothing; uninstall leaves it.
func TestInstallRefusesAServerOfTheUsers(t *testing.T) {
	tests := []struct{ agent, file, content string }{
		{"claude-code", ".mcp.json", `{"mcpServers": {"tasklog": {"command": "npx", "args": ["tasklog-mcp"]}}}`},
		{"cursor", ".cursor/mcp.json", `{"mcpServers": {"tasklog": {"url": "http://localhost:7000/mcp"}}}`},
		{"gemini", ".gemini/settings.json", `{"mcpServers": {"tasklog": {"httpUrl": "http://localhost:7000/mcp"}}}`},
		{"copilot", ".vscode/mcp.json", `{"servers": {"tasklog": {"type": "stdio", "command": "/opt/tasklog/bin/replay", "args": ["serve"]}}}`},
		{"codex", ".codex/config.toml", "[mcp_servers.tasklog]\ncommand = \"tasklog-mcp\"\n"},
		{"codex", ".codex/config.toml", "[mcp_servers . \"tasklog\"]\ncommand = \"tasklog-mcp\"\n"},
		{"codex", ".codex/config.toml", "[mcp_servers]\ntasklog = { command = \"tasklog-mcp\" }\n"},
		{"codex", ".codex/config.toml", "mcp_servers.tasklog.command = \"tasklog-mcp\"\n"},
		{"codex", ".codex/config.toml", "[mcp_servers.tasklog.env]\nKEY = \"v\"\n"},
		{"codex", ".codex/config.toml", codexMCPMarker + "\n" + codexMCPHeader + "\ncommand = \"x\"\n\n" +
			codexMCPMarker + "\n" + codexMCPHeader + "\ncommand = \"y\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.agent+"/"+tt.content, func(t *testing.T) {
			dir := t.TempDir()
			writeTestFile(t, filepath.Join(dir, tt.file), tt.content, 0o644)
			before := snapshot(t, dir)
			_, err := Run(testOptions(tt.agent, dir), true)
			if (!errors.Is(err, ErrMCPExists) && !errors.Is(err, errCodexTable)) || !strings.Contains(err.Error(), tt.file) {
				t.Errorf("err = %v, want one naming %s and saying the server is the user's", err, tt.file)
			}
			before.unchanged(t, dir)
			mustInstall(t, testOptions(tt.agent, dir), false)
			before.unchanged(t, dir)
		})
	}
}

// TestInstallUpdatesItsServerInPlace: a server entry install wrote keeps the keys the user added
// to it (env, autoApprove) when install updates it, and loses them with it on uninstall.
func TestInstallUpdatesItsServerInPlace(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, ".cursor", "mcp.json")
	writeTestFile(t, file, `{
  "mcpServers": {
    "tasklog": {
      "command": "/usr/bin/replay",
      "args": ["mcp"],
      "env": {"TASKLOG_DEBUG": "1"}
    }
  }
}
`, 0o644)
	lines := mustInstall(t, testOptions("cursor", dir), true)
	if !slices.Contains(lines, file+": mcpServers.tasklog: updated") {
		t.Errorf("lines %q, want the server updated", lines)
	}
	got, _ := os.ReadFile(file)
	root, err := parseDocument(got)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := parseDocument([]byte(`{"mcpServers": {"tasklog": {"command": "/opt/tasklog/bin/replay",
		"args": ["mcp", "--workspace", "` + dir + `", "--db", "/home/dev/tasks.db"], "env": {"TASKLOG_DEBUG": "1"}}}}`))
	if !equalJSON(root, want) {
		t.Errorf("after install:\n%s", got)
	}
	mustInstall(t, testOptions("cursor", dir), false)
	if _, err := os.Stat(file); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("uninstall left %s: %v", file, err)
	}
}

// TestInstallCodexConfigInPlace: install's table is updated where it stands, between tables of
// the user's, and uninstall takes out exactly its block.
func TestInstallCodexConfigInPlace(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, ".codex", "config.toml")
	opts := testOptions("codex", dir)
	opts.MCPOnly = true
	writeTestFile(t, file, codexUserConfig, 0o644)
	mustInstall(t, opts, true)
	b, _ := os.ReadFile(file)
	tail := "\n[profiles.fast]\nmodel = \"gpt-5-mini\"\n"
	writeTestFile(t, file, string(b)+tail, 0o644) // the user adds a table after install's
	moved := opts
	moved.DB = "/srv/other.db"
	lines := mustInstall(t, moved, true)
	if len(lines) != 1 || lines[0] != file+": mcp_servers.tasklog: updated" {
		t.Errorf("lines %q, want one update of config.toml", lines)
	}
	b, _ = os.ReadFile(file)
	if !strings.Contains(string(b), `"--db", "/srv/other.db"]`+"\n"+tail) || strings.Count(string(b), codexMCPHeader) != 1 {
		t.Errorf("after the update:\n%s", b)
	}
	mustInstall(t, opts, false)
	if b, _ := os.ReadFile(file); string(b) != codexUserConfig+tail {
		t.Errorf("after uninstall:\n%s\nwant\n%s", b, codexUserConfig+tail)
	}
}

// TestCodexConfigEdges: what install makes of config.toml files laid out otherwise.
func TestCodexConfigEdges(t *testing.T) {
	launch := newMCPLaunch(testExe, "/home/dev/my \"shop\"", "")
	block := codexBlock(launch)
	if want := `args = ["mcp", "--workspace", "/home/dev/my \"shop\""]` + "\n"; !strings.HasSuffix(block, want) {
		t.Errorf("block\n%s\nwant it to end with %s", block, want)
	}
	tests := []struct{ name, before, installed, uninstalled string }{
		{"no final newline", `model = "o3"`, "model = \"o3\"\n\n" + block, "model = \"o3\"\n"},
		{"CRLF lines", "model = \"o3\"\r\n", "model = \"o3\"\r\n\n" + block, "model = \"o3\"\r\n"},
		{"the marker alone is a comment", codexMCPMarker + "\n[tui]\nx = 1\n",
			codexMCPMarker + "\n[tui]\nx = 1\n\n" + block, codexMCPMarker + "\n[tui]\nx = 1\n"},
		{"another server's tasklog key", "[mcp_servers.docs.env]\ntasklog = \"1\"\n",
			"[mcp_servers.docs.env]\ntasklog = \"1\"\n\n" + block, "[mcp_servers.docs.env]\ntasklog = \"1\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.toml")
			writeTestFile(t, path, tt.before, 0o644)
			c := codexConfig{path: path, show: "config.toml", launch: launch}
			for _, step := range []struct {
				install bool
				want    string
			}{{true, tt.installed}, {true, tt.installed}, {false, tt.uninstalled}} {
				changes, err := c.plan(step.install)
				if err == nil {
					err = apply(changes)
				}
				if b, _ := os.ReadFile(path); err != nil || string(b) != step.want {
					t.Fatalf("install=%v: %v\n%q\nwant\n%q", step.install, err, b, step.want)
				}
			}
		})
	}
}

// TestInstallOnlyHooksOrOnlyServer: --no-mcp writes the hooks alone, --mcp-only the server alone.
func TestInstallOnlyHooksOrOnlyServer(t *testing.T) {
	for _, agent := range []string{"claude-code", "codex", "cursor", "copilot", "gemini"} {
		t.Run(agent, func(t *testing.T) {
			dir := t.TempDir()
			hooksOnly := testOptions(agent, dir)
			hooksOnly.NoMCP = true
			for _, l := range mustInstall(t, hooksOnly, true) {
				if strings.Contains(l, "mcp") || strings.Contains(l, "config.toml") {
					t.Errorf("--no-mcp changed %q", l)
				}
			}
			serverOnly := testOptions(agent, dir)
			serverOnly.MCPOnly = true
			lines := mustInstall(t, serverOnly, true)
			if len(lines) != 1 || !strings.Contains(lines[0], "tasklog: added") {
				t.Errorf("--mcp-only changed %q, want the server added", lines)
			}
			mustInstall(t, hooksOnly, false)
			files := snapshot(t, dir).files
			if len(files) != 1 {
				t.Errorf("uninstall --no-mcp left %v, want the server's file alone", slices.Sorted(maps.Keys(files)))
			}
			mustInstall(t, serverOnly, false)
			if left := snapshot(t, dir); len(left.files) != 0 || len(left.dirs) != 0 {
				t.Errorf("uninstall --mcp-only left %v %v", left.files, left.dirs)
			}
		})
	}
	opts := testOptions("cline", t.TempDir())
	opts.MCPOnly = true
	if _, err := Run(opts, true); !errors.Is(err, ErrNoProjectMCP) {
		t.Errorf("cline --mcp-only in a project: err = %v, want ErrNoProjectMCP", err)
	}
}

// TestInstallReplacesItsOwnEntries: installing from another binary, or with another database,
// updates the entries in place; uninstall then removes them, whichever binary wrote them.
func TestInstallReplacesItsOwnEntries(t *testing.T) {
	for _, agent := range []string{"claude-code", "codex", "cursor", "copilot", "gemini", "cline"} {
		t.Run(agent, func(t *testing.T) {
			dir := t.TempDir()
			first := testOptions(agent, dir)
			first.DB = ""
			n := len(mustInstall(t, first, true))
			moved := testOptions(agent, dir)
			moved.Exe = "/home/dev/go/bin/replay"
			lines := mustInstall(t, moved, true)
			if len(lines) != n {
				t.Fatalf("reinstall printed %d lines, want %d (one per event)", len(lines), n)
			}
			for _, l := range lines {
				if !strings.HasSuffix(l, ": updated") {
					t.Errorf("reinstall line %q, want an update", l)
				}
			}
			tree := snapshot(t, dir).String()
			if strings.Contains(tree, testExe) || strings.Count(tree, moved.Exe) != n {
				t.Errorf("want %d entries, all running %s:\n%s", n, moved.Exe, tree)
			}
			mustInstall(t, first, false)
			if left := snapshot(t, dir); len(left.files) != 0 {
				t.Errorf("uninstall left %s", left)
			}
		})
	}
}

// TestUninstallKeepsLookalikes: only a replay binary running `hook <this agent>` is install's;
// other agents' tasklog hooks and other programs' `hook` verbs are the user's.
func TestUninstallKeepsLookalikes(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, ".claude", "settings.json")
	user := `{
  "hooks": {
    "PreToolUse": [
      {
        "matcher": "*",
        "hooks": [
          {
            "type": "command",
            "command": "/usr/bin/notify hook claude-code"
          },
          {
            "type": "command",
            "command": "/opt/tasklog/bin/replay hook copilot"
          },
          {
            "type": "command",
            "command": "'/opt/tasklog/bin/replay hook claude-code"
          }
        ]
      }
    ]
  }
}
`
	writeTestFile(t, file, user, 0o644)
	opts := testOptions("claude-code", dir)
	mustInstall(t, opts, true)
	mustInstall(t, opts, false)
	if got, _ := os.ReadFile(file); string(got) != user {
		t.Errorf("uninstall changed the user's hooks:\n%s", got)
	}
}

// TestInstallMovesItsHookOutOfAUserGroup: a tasklog hook the user placed in a group of their
// own is moved into install's own group, and uninstall leaves the user's group as it was
// otherwise.
func TestInstallMovesItsHookOutOfAUserGroup(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, ".claude", "settings.json")
	writeTestFile(t, file, `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
		{"type": "command", "command": "guard.sh"},
		{"type": "command", "command": "replay hook claude-code"}]}]}}`, 0o644)
	opts := testOptions("claude-code", dir)
	lines := mustInstall(t, opts, true)
	if !slices.Contains(lines, file+": PreToolUse: updated") {
		t.Errorf("lines %q, want PreToolUse updated", lines)
	}
	mustInstall(t, opts, false)
	got, _ := os.ReadFile(file)
	root, err := parseDocument(got)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := parseDocument([]byte(`{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
		{"type": "command", "command": "guard.sh"}]}]}}`))
	if !equalJSON(root, want) {
		t.Errorf("after uninstall:\n%s", got)
	}
}

// TestInstallCline covers what is particular to Cline's hook files.
func TestInstallCline(t *testing.T) {
	t.Run("a hook of the user's own is not overwritten", func(t *testing.T) {
		dir := t.TempDir()
		writeTestFile(t, filepath.Join(dir, ".clinerules/hooks/PreToolUse"), "#!/bin/sh\nexit 0\n", 0o755)
		before := snapshot(t, dir)
		_, err := Run(testOptions("cline", dir), true)
		if !errors.Is(err, ErrHookExists) || !strings.Contains(err.Error(), filepath.Join(dir, ".clinerules/hooks/PreToolUse")) {
			t.Errorf("err = %v, want ErrHookExists naming the file", err)
		}
		before.unchanged(t, dir)
		if lines := mustInstall(t, testOptions("cline", dir), false); len(lines) != 0 {
			t.Errorf("uninstall changed %q, want nothing", lines)
		}
		before.unchanged(t, dir)
	})
	t.Run("a script the user edited is theirs", func(t *testing.T) {
		dir := t.TempDir()
		opts := testOptions("cline", dir)
		mustInstall(t, opts, true)
		edited := filepath.Join(dir, ".clinerules/hooks/TaskStart")
		b, _ := os.ReadFile(edited)
		writeTestFile(t, edited, string(b)+"echo more\n", 0o755)
		mustInstall(t, opts, false)
		if _, err := os.Stat(edited); err != nil {
			t.Errorf("uninstall removed the edited script: %v", err)
		}
	})
	t.Run("a script that lost its executable bit is repaired", func(t *testing.T) {
		dir := t.TempDir()
		opts := testOptions("cline", dir)
		mustInstall(t, opts, true)
		script := filepath.Join(dir, ".clinerules/hooks/PostToolUse")
		if err := os.Chmod(script, 0o644); err != nil {
			t.Fatal(err)
		}
		lines := mustInstall(t, opts, true)
		if fi, _ := os.Stat(script); len(lines) != 1 || fi.Mode().Perm() != 0o755 {
			t.Errorf("lines %q, mode %v; want one update and -rwxr-xr-x", lines, fi.Mode())
		}
	})
	t.Run("a .clinerules file has no hooks folder", func(t *testing.T) {
		dir := t.TempDir()
		writeTestFile(t, filepath.Join(dir, ".clinerules"), "Always run the tests.\n", 0o644)
		_, err := Run(testOptions("cline", dir), true)
		if err == nil || !strings.Contains(err.Error(), "is a file") {
			t.Errorf("err = %v, want one saying .clinerules is a file", err)
		}
	})
}

// TestInstallUserScope writes each agent's user configuration under a home folder.
func TestInstallUserScope(t *testing.T) {
	tests := []struct {
		agent, codexHome string
		want             []string // files under home (or under codexHome when set)
	}{
		{"claude-code", "", []string{".claude/settings.json", ".claude.json"}},
		{"codex", "", []string{".codex/hooks.json", ".codex/config.toml"}},
		{"codex", "codex-home", []string{"codex-home/hooks.json", "codex-home/config.toml"}},
		{"cursor", "", []string{".cursor/hooks.json", ".cursor/mcp.json"}},
		{"cline", "", []string{"Documents/Cline/Hooks/PreToolUse", "Documents/Cline/Hooks/TaskStart",
			".cline/data/settings/cline_mcp_settings.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.agent+tt.codexHome, func(t *testing.T) {
			home := t.TempDir()
			opts := Options{Agent: tt.agent, User: true, Exe: testExe, Home: home}
			if tt.codexHome != "" {
				codexHome := filepath.Join(home, tt.codexHome)
				opts.Getenv = func(k string) string {
					if k == "CODEX_HOME" {
						return codexHome
					}
					return ""
				}
			}
			lines := mustInstall(t, opts, true)
			files := snapshot(t, home).files
			for _, w := range tt.want {
				if _, ok := files[w]; !ok {
					t.Errorf("no %s in %v", w, slices.Sorted(maps.Keys(files)))
				}
			}
			for name, content := range files {
				if strings.Contains(content, `"mcp"`) && strings.Contains(content, "--workspace") {
					t.Errorf("%s: a user's server names a workspace:\n%s", name, content)
				}
			}
			if tt.codexHome == "" && !strings.HasPrefix(lines[0], "~/") {
				t.Errorf("line %q, want the file shown under ~/", lines[0])
			}
			mustInstall(t, opts, false)
			if left := snapshot(t, home); len(left.files) != 0 {
				t.Errorf("uninstall left %v", left.files)
			}
		})
	}
	_, err := Run(Options{Agent: "copilot", User: true, Exe: testExe, Home: t.TempDir()}, true)
	if !errors.Is(err, ErrNoUserConfig) {
		t.Errorf("copilot --user: err = %v, want errCopilotUser", err)
	}
	_, err = Run(Options{Agent: "copilot", User: true, MCPOnly: true, Exe: testExe, Home: t.TempDir()}, true)
	if !errors.Is(err, ErrNoUserConfig) {
		t.Errorf("copilot --user --mcp-only: err = %v, want ErrNoUserConfig", err)
	}
}

// TestInstallClaudeUserState: ~/.claude.json is Claude Code's own state as well as the user's
// servers: install adds the server and uninstall takes it out, every other key kept byte for byte.
func TestInstallClaudeUserState(t *testing.T) {
	home := t.TempDir()
	state := `{
  "numStartups": 42,
  "projects": {
    "/home/dev/shop": {
      "mcpServers": {},
      "hasTrustDialogAccepted": true
    }
  },
  "mcpServers": {
    "github": {
      "type": "stdio",
      "command": "npx",
      "args": [
        "-y",
        "@modelcontextprotocol/server-github"
      ],
      "env": {}
    }
  },
  "oauthAccount": {
    "emailAddress": "dev@example.com"
  }
}
`
	file := filepath.Join(home, ".claude.json")
	writeTestFile(t, file, state, 0o600)
	opts := Options{Agent: "claude-code", User: true, MCPOnly: true, Exe: testExe, Home: home}
	if lines := mustInstall(t, opts, true); len(lines) != 1 || lines[0] != "~/.claude.json: mcpServers.tasklog: added" {
		t.Errorf("lines %q", lines)
	}
	b, _ := os.ReadFile(file)
	root, err := parseDocument(b)
	if err != nil {
		t.Fatal(err)
	}
	servers, _ := root.get("mcpServers")
	entry, _ := servers.(*object).get("tasklog")
	want := newObject("command", testExe, "args", []any{"mcp"})
	if !equalJSON(entry, want) {
		t.Errorf("tasklog server in ~/.claude.json:\n%s", b)
	}
	mustInstall(t, opts, false)
	if b, _ := os.ReadFile(file); string(b) != state {
		t.Errorf("after uninstall:\n%s", b)
	}
}

// TestInstallClineSettingsFiles: Cline's MCP settings go where its CLI reads them (moved by its
// environment) and into the VS Code extension's storage where the extension is installed.
func TestInstallClineSettingsFiles(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, tt := range []struct {
		env  func(string) string
		want string
	}{
		{env(), ""},
		{env("CLINE_DIR", "/c"), "/c/data/settings/cline_mcp_settings.json"},
		{env("CLINE_DIR", "/c", "CLINE_DATA_DIR", "/d"), "/d/settings/cline_mcp_settings.json"},
		{env("CLINE_DATA_DIR", "/d", "CLINE_MCP_SETTINGS_PATH", "/m.json"), "/m.json"},
	} {
		if got := agentlog.DialectOf(agentlog.Cline).MCP.UserFile(tt.env); got != tt.want {
			t.Errorf("Cline's MCP.UserFile = %q, want %q", got, tt.want)
		}
	}
	home := t.TempDir()
	ext := filepath.Join(home, ".config/Code/User/globalStorage/saoudrizwan.claude-dev")
	if err := os.MkdirAll(ext, 0o755); err != nil {
		t.Fatal(err)
	}
	settings := filepath.Join(home, "cline-dir", "mcp.json")
	opts := Options{Agent: "cline", User: true, MCPOnly: true, Exe: testExe, Home: home,
		Getenv: env("CLINE_MCP_SETTINGS_PATH", settings)}
	lines := mustInstall(t, opts, true)
	wantLines := []string{
		settings + ": mcpServers.tasklog: added",
		"~/.config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json: mcpServers.tasklog: added",
	}
	if !slices.Equal(lines, wantLines) {
		t.Errorf("lines %q, want %q", lines, wantLines)
	}
	b, _ := os.ReadFile(settings)
	if !strings.Contains(string(b), `"disabled": false`) {
		t.Errorf("Cline's entry has no \"disabled\": false:\n%s", b)
	}
	mustInstall(t, opts, false)
	if left := snapshot(t, home).files; len(left) != 0 {
		t.Errorf("uninstall left %v", left)
	}
}

// TestInstallKeepsSymlinkedSettings: a settings file that is a link (a dotfiles folder) is
// written through the link, which stays a link.
func TestInstallKeepsSymlinkedSettings(t *testing.T) {
	dir := t.TempDir()
	real := filepath.Join(dir, "dotfiles", "claude-settings.json")
	writeTestFile(t, real, "{\n  \"model\": \"opus\"\n}\n", 0o644)
	link := filepath.Join(dir, "project", ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	opts := testOptions("claude-code", filepath.Join(dir, "project"))
	mustInstall(t, opts, true)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Fatalf("settings.json is no longer a link: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(real); !strings.Contains(string(b), "hook claude-code") {
		t.Errorf("the linked file did not get the hooks:\n%s", b)
	}
	mustInstall(t, opts, false)
	if b, _ := os.ReadFile(real); string(b) != "{\n  \"model\": \"opus\"\n}\n" {
		t.Errorf("after uninstall the linked file is\n%s", b)
	}
}

// TestHookCommandQuoting: a binary or database path with spaces or quotes is quoted for the
// shell, and the quoted command is still recognised as install's.
func TestHookCommandQuoting(t *testing.T) {
	tests := []struct{ exe, db, want string }{
		{"/usr/local/bin/replay", "", "/usr/local/bin/replay hook codex"},
		{"/Applications/Task Log/replay", "/data/t.db", "'/Applications/Task Log/replay' hook codex --db /data/t.db"},
		{"/home/o'brien/bin/replay", "/home/o'brien/my tasks.db", `'/home/o'\''brien/bin/replay' hook codex --db '/home/o'\''brien/my tasks.db'`},
		{"/tmp/$HOME/replay", "", "'/tmp/$HOME/replay' hook codex"},
	}
	for _, tt := range tests {
		c := newHookCommand(tt.exe, "codex", tt.db, "")
		if c.line != tt.want {
			t.Errorf("command = %s, want %s", c.line, tt.want)
		}
		words, ok := shellWords(c.line)
		if !ok || words[0] != tt.exe || (tt.db != "" && words[len(words)-1] != tt.db) {
			t.Errorf("shellWords(%s) = %q, %v", c.line, words, ok)
		}
		if !c.ours(c.line) {
			t.Errorf("%s is not recognised as install's", c.line)
		}
	}
	for line, want := range map[string][]string{
		`a "b \"c\" $d" e\ f`: {"a", `b "c" $d`, "e f"},
		"  x\t'y z'  ":        {"x", "y z"},
		`'unterminated`:       nil,
		`"unterminated`:       nil,
	} {
		got, ok := shellWords(line)
		if strings.Join(got, "|") != strings.Join(want, "|") || ok != (want != nil) {
			t.Errorf("shellWords(%q) = %q, %v; want %q", line, got, ok, want)
		}
	}
}

// TestDocumentRoundTrip: a document in the agents' own layout (or with tabs, or without a
// final newline) is written back byte for byte.
func TestDocumentRoundTrip(t *testing.T) {
	docs := []string{
		"{}\n",
		"{\n  \"a\": 1.50,\n  \"b\": [],\n  \"c\": {},\n  \"d\": null,\n  \"e\": [\n    true,\n    \"<x> & ü ✓\"\n  ]\n}\n",
		"{\n\t\"z\": 1,\n\t\"a\": {\n\t\t\"k\": \"v\"\n\t}\n}",
		"{\n    \"four\": [\n        1e3\n    ]\n}\n",
	}
	for _, d := range docs {
		root, err := parseDocument([]byte(d))
		if err != nil {
			t.Fatalf("%q: %v", d, err)
		}
		if got := string(encodeDocument(root, layoutOf([]byte(d)))); got != d {
			t.Errorf("round trip of\n%s\ngave\n%s", d, got)
		}
	}
}

func mustInstall(t *testing.T, opts Options, install bool) []string {
	t.Helper()
	lines, err := Run(opts, install)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

func writeTestFile(t *testing.T, path, content string, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// checkGolden compares what install printed and the files it left with testdata/install/NAME.golden
// (the project folder, which the MCP server's command names, written $PROJECT).
func checkGolden(t *testing.T, name string, lines []string, dir string) {
	t.Helper()
	got := strings.ReplaceAll(strings.Join(lines, "\n"), dir+string(filepath.Separator), "") +
		"\n\n" + strings.ReplaceAll(snapshot(t, dir).String(), dir, "$PROJECT")
	path := filepath.Join("testdata", "install", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/replay/internal/install -update writes it)", err)
	}
	if string(want) != got {
		t.Errorf("install differs from %s (go test ./cmd/replay/internal/install -update rewrites it; review the diff):\n%s", path, got)
	}
}

// tree is a project's files (path → mode and content) and folders, with the identity of each
// file to tell a rewrite from no write at all.
type tree struct {
	files map[string]string
	infos map[string]fs.FileInfo
	dirs  []string
}

func snapshot(t *testing.T, dir string) tree {
	t.Helper()
	tr := tree{files: map[string]string{}, infos: map[string]fs.FileInfo{}}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			tr.dirs = append(tr.dirs, rel)
			return nil
		}
		fi, err := os.Lstat(path)
		if err != nil {
			return err
		}
		b, _ := os.ReadFile(path)
		tr.files[rel] = fi.Mode().String() + "\n" + string(b)
		tr.infos[rel] = fi
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// String lists the files in path order: a header with the path and mode, then the content.
func (tr tree) String() string {
	var b strings.Builder
	paths := slices.Sorted(maps.Keys(tr.files))
	for _, p := range paths {
		mode, content, _ := strings.Cut(tr.files[p], "\n")
		b.WriteString("-- " + p + " (" + mode + ") --\n" + content)
	}
	return b.String()
}

func (tr tree) equal(o tree) bool { return tr.String() == o.String() }

// unchanged fails unless every file is still the very same file (not rewritten) with the same
// content, and no file was added.
func (tr tree) unchanged(t *testing.T, dir string) {
	t.Helper()
	now := snapshot(t, dir)
	if !now.equal(tr) {
		t.Errorf("files changed:\n%s\nwant\n%s", now, tr)
	}
	for p, fi := range tr.infos {
		if n, ok := now.infos[p]; ok && !os.SameFile(fi, n) {
			t.Errorf("%s was rewritten", p)
		}
	}
}

var update = flag.Bool("update", false, "rewrite testdata/install/*.golden")

// piSource is pi's extension, as cmd/replay embeds it.
var piSource = extension.Source("pi")
