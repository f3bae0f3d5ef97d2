package projections

import (
	"encoding/json"
	"slices"
	"testing"
)

func files(paths ...string) []Target {
	out := make([]Target, len(paths))
	for i, p := range paths {
		out[i] = Target{Path: p}
	}
	return out
}

func shell(paths ...string) []Target {
	out := make([]Target, len(paths))
	for i, p := range paths {
		out[i] = Target{Path: p, Shell: true}
	}
	return out
}

func TestToolTargets(t *testing.T) {
	const patch = "*** Begin Patch\n*** Update File: src/a.ts\n@@\n-x\n+y\n*** Add File: src/new.ts\n+import z from 'lib/z.ts'\n" +
		"*** Delete File: old/gone.ts\n*** Update File: src/b.ts\n*** Move to: src/c.ts\n*** End Patch"
	tests := []struct {
		name   string
		tool   string
		params string
		want   []Target
	}{
		// Cline, shapes from the gmfstu api_conversation_history.
		{"cline read_file", "read_file", `{"path":"ActionSystem.cs","task_progress":"- [ ] Review ActionSystem.cs"}`, files("ActionSystem.cs")},
		{"cline write_to_file absolutePath", "write_to_file",
			`{"absolutePath":"/workspaces/Online-Card-Architecture/BeginTurnGA.cs","content":"using System;"}`,
			files("/workspaces/Online-Card-Architecture/BeginTurnGA.cs")},
		{"cline replace_in_file", "replace_in_file",
			`{"absolutePath":"/workspaces/x/EndTurnSystem.cs","diff":"------- SEARCH\nusing a/b.cs;\n=======\n+++++++ REPLACE"}`,
			files("/workspaces/x/EndTurnSystem.cs")},
		{"vs code read_file filePath", "read_file", `{"filePath":"/w/app/models/user.rb","startLine":1,"endLine":40}`,
			files("/w/app/models/user.rb")},
		{"cline new_rule", "new_rule", `{"path":".clinerules/ts.md","content":"x"}`, files(".clinerules/ts.md")},
		{"cline list_files is a directory", "list_files", `{"path":"/workspaces/Online-Card-Architecture","recursive":false}`,
			files("/workspaces/Online-Card-Architecture/")},
		{"cline search_files", "search_files", `{"path":"src","regex":"foo","file_pattern":"*.ts"}`, files("src/")},
		{"cline list_code_definition_names", "list_code_definition_names", `{"path":"src/"}`, files("src/")},
		{"cline apply_patch", "apply_patch", `{"input":` + quote(patch) + `}`,
			files("src/a.ts", "src/new.ts", "old/gone.ts", "src/b.ts", "src/c.ts")},
		{"cline execute_command", "execute_command", `{"command":"npm test -- src/a.test.ts","requires_approval":false}`,
			shell("src/a.test.ts")},
		{"cline sdk read_files", "read_files", `{"files":[{"path":"a/b.ts","start_line":1},{"path":"c.md"}]}`, files("a/b.ts", "c.md")},

		// Gemini CLI 0.61.0, shapes from its tool declarations and hook payloads.
		{"gemini read_file", "read_file", `{"file_path":"/home/dev/shop/src/api/routes.ts"}`, files("/home/dev/shop/src/api/routes.ts")},
		{"gemini write_file", "write_file", `{"file_path":"src/api/health.ts","content":"import x from 'lib/x.ts'"}`, files("src/api/health.ts")},
		{"gemini replace", "replace", `{"file_path":"src/a.ts","instruction":"rename","old_string":"a","new_string":"b"}`, files("src/a.ts")},
		{"gemini list_directory", "list_directory", `{"dir_path":"src/api"}`, files("src/api/")},
		{"gemini glob", "glob", `{"pattern":"api/**/*.ts","dir_path":"src"}`, files("src/api/")},
		{"gemini grep_search", "grep_search", `{"pattern":"health","dir_path":"src/api","include_pattern":"*.ts"}`, files("src/api/")},
		{"gemini run_shell_command", "run_shell_command", `{"command":"cat routes.ts","description":"show","dir_path":"src/api"}`,
			shell("src/api/routes.ts")},

		// Qwen Code 0.24.4, shapes from its hook payloads (events/agentlog/testdata/hooks/qwen).
		{"qwen read_file", "read_file", `{"file_path":"/home/dev/shop/src/api/routes.ts"}`, files("/home/dev/shop/src/api/routes.ts")},
		{"qwen write_file", "write_file", `{"content":"x","file_path":"/w/src/api/health.ts"}`, files("/w/src/api/health.ts")},
		{"qwen edit", "edit", `{"file_path":"/w/a.ts","new_string":"b","old_string":"a"}`, files("/w/a.ts")},
		{"qwen run_shell_command", "run_shell_command", `{"command":"cat src/a.ts","description":"x"}`, shell("src/a.ts")},
		{"qwen list_directory", "list_directory", `{"path":"/w/src"}`, files("/w/src/")},
		{"qwen glob", "glob", `{"pattern":"src/api/*.ts"}`, files("src/api/")},
		{"qwen grep_search", "grep_search", `{"pattern":"x","path":"src"}`, files("src/")},

		// Cursor, shapes from its hooks page (cursor.com/docs/hooks).
		{"cursor Shell", "Shell", `{"command":"npm test -- src/a.test.ts","working_directory":"/project"}`,
			shell("/project/src/a.test.ts")},

		// Claude Code, shapes from the claude-code samples.
		{"claude Read", "Read", `{"file_path":"/tmp/tmpw6sk2trg/src/math_utils.py"}`, files("/tmp/tmpw6sk2trg/src/math_utils.py")},
		{"claude Write", "Write", `{"file_path":"/p/a.py","content":"import os"}`, files("/p/a.py")},
		{"claude Edit", "Edit", `{"replace_all":false,"file_path":"/tmp/t/.gitignore","old_string":"a","new_string":"b"}`, files("/tmp/t/.gitignore")},
		{"claude MultiEdit", "MultiEdit", `{"file_path":"/p/a.py","edits":[{"old_string":"a","new_string":"b"}]}`, files("/p/a.py")},
		{"claude NotebookEdit", "NotebookEdit", `{"notebook_path":"/p/n.ipynb","new_source":"x"}`, files("/p/n.ipynb")},
		{"claude Glob pattern prefix", "Glob", `{"pattern":"assets/js/**/*.js"}`, files("assets/js/")},
		{"claude Glob no prefix", "Glob", `{"pattern":"**/*.py"}`, nil},
		{"claude Glob literal", "Glob", `{"pattern":".gitignore"}`, files(".gitignore")},
		{"claude Glob with path", "Glob", `{"pattern":"**/*.py","path":"/p/src"}`, files("/p/src/")},
		{"claude Glob path and prefix", "Glob", `{"pattern":"lib/*.py","path":"/p/src"}`, files("/p/src/lib/")},
		{"claude Grep directory", "Grep", `{"pattern":"foo","path":"/p/src","output_mode":"content"}`, files("/p/src/")},
		{"claude Grep file", "Grep", `{"pattern":"foo","path":"/p/src/a.ts"}`, files("/p/src/a.ts")},
		{"claude Grep no path", "Grep", `{"pattern":"foo"}`, nil},
		{"claude Bash", "Bash", `{"command":"tail -5 /tmp/x/tasks/bae407b.output","description":"Check output"}`,
			shell("/tmp/x/tasks/bae407b.output")},
		{"claude Bash no paths", "Bash", `{"command":"git status","description":"Check"}`, nil},

		// Codex, shapes from the codex rollout.
		{"codex shell argv", "shell", `{"command":["bash","-lc","sed -n '1,200p' packages/services/src/types.ts"],"workdir":".","timeout_ms":120000}`,
			shell("packages/services/src/types.ts")},
		{"codex shell workdir", "shell", `{"command":["bash","-lc","cat src/a.ts"],"workdir":"packages/x"}`,
			shell("packages/x/src/a.ts")},
		{"codex shell apply_patch heredoc", "shell",
			`{"command":["bash","-lc",` + quote("apply_patch <<'PATCH'\n"+patch+"\nPATCH") + `],"workdir":"."}`,
			files("src/a.ts", "src/new.ts", "old/gone.ts", "src/b.ts", "src/c.ts")},
		{"codex apply_patch argv", "shell", `{"command":["apply_patch",` + quote("*** Begin Patch\n*** Add File: x/y.go\n+package y\n*** End Patch") + `]}`,
			files("x/y.go")},
		{"codex apply_patch custom tool", "apply_patch", `{"input":` + quote("*** Begin Patch\n*** Update File: /abs/p.go\n*** End Patch") + `}`,
			files("/abs/p.go")},
		{"codex shell_command string", "shell_command", `{"command":"cat a/b.txt"}`, shell("a/b.txt")},
		{"codex exec_command", "exec_command", `{"cmd":"ls src/lib/","yield_time_ms":10}`, shell("src/lib/")},
		{"heredoc body is content", "Bash", `{"command":` + quote("cat > out/a.txt <<'EOF'\nsee lib/inner.go\nEOF\nwc -l out/b.txt") + `}`,
			shell("out/a.txt", "out/b.txt")},

		// pi, shapes from the pi session.
		{"pi read", "read", `{"path":"packages/coding-agent/docs/theme.md"}`, files("packages/coding-agent/docs/theme.md")},
		{"pi edit with @", "edit", `{"path":"@src/a.ts","oldText":"a","newText":"b"}`, files("src/a.ts")},
		{"pi bash", "bash", `{"command":"grep -n \"chalk\\\\.\" packages/coding-agent/src/tui/tui-renderer.ts | head -30"}`,
			shell("packages/coding-agent/src/tui/tui-renderer.ts")},
		{"pi ls", "ls", `{"path":"src"}`, files("src/")},

		// The generic fallback.
		{"generic path keys sorted", "mcp__fs__stat", `{"target_path":"z.ts","path":"a.ts","file":"f.ts","filePath":"c.ts","url":"https://x/y.ts"}`,
			files("f.ts", "c.ts", "a.ts", "z.ts")}, // key order: file, filePath, path, target_path
		{"generic paths array", "mcp__x__y", `{"paths":["a.ts","b.ts",3],"source_paths":["c.ts"]}`, files("a.ts", "b.ts", "c.ts")},
		{"generic ignores nested and non-strings", "other", `{"path":7,"opts":{"path":"x.ts"},"paths":"notarray"}`, nil},
		{"duplicates removed", "read_file", `{"path":"/p/a.ts","absolutePath":"/p/a.ts"}`, files("/p/a.ts")},
		{"not an object", "read_file", `[1,2]`, nil},
		{"invalid json", "read_file", `{`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ToolTargets(tt.tool, json.RawMessage(tt.params))
			if !slices.Equal(got, tt.want) {
				t.Errorf("ToolTargets(%s, %s) =\n %v\nwant\n %v", tt.tool, tt.params, got, tt.want)
			}
		})
	}
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
