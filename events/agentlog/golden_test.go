package agentlog

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	testsamples "github.com/tasklog/tasklog/session/replaytest/samples"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// samplesDir is the real samples folder joined with elem; the test skips with one line when it
// is missing.
func samplesDir(t testing.TB, elem ...string) string {
	t.Helper()
	return testsamples.Dir(t, elem...)
}

// sample is one real session under samples/sessions and what was checked by hand against it.
type sample struct {
	agent   Agent
	path    string // relative to samples/sessions
	checked string
}

var samples = []sample{
	{Cline, "cline/gmfstu__Online-Card-Architecture__exported_task_1769064454592__ui_messages.json", `
Checked against ui_messages.json, api_conversation_history.json and task_metadata.json:
- root /workspaces/Online-Card-Architecture from the first request's "# Current Working
  Directory (…)"; OS linux and version 3.51.0 from environment_history.
- one user_message (row 0, say:text); the two resumptions (ask:resume_task row 136,
  ask:resume_completed_task row 206) are skipped, not users.
- 36 api_req_started rows → 36 turns.
- 35 tool rows → 35 tool calls, ids from the api history (row 5 → toolu_017vp8D23tar3WyRFjEbCbCm,
  the first of four parallel read_file uses; the three others were "not executed" and are counted
  as api:tool_use_not_executed = 3).
- readFile rows keep the absolute path the ui put in "content" out of any write.
- newFileCreated ModifyCardSystem.cs (row 135) was interrupted: the next request is the
  [TASK RESUMPTION] with no result, metadata has no cline_edited entry before the rewrite, so its
  tool call is failed and there is no file_write; the rewrite at row 146 is a write.
- 16 file writes: 12 newFileCreated + 4 editedExistingFile minus the interrupted one; each
  matches a cline_edited entry of task_metadata.json.
- Open Tabs grow from 17 entries and include ../../home/codespace/… which resolves to
  /home/codespace/…; Visible Files follow the file just written.`},
	{ClaudeCode, "claude-code/DRMacIver__claude-reliability__snapshot-tests__tests__coverage-test-fix__transcript.jsonl", `
- root /tmp/tmpw6sk2trg, version 2.1.14; line 0 (queue-operation) skipped.
- one user_message (line 1); the two "Stop hook feedback" lines (15, 25, isMeta) are skipped.
- 14 turns = the 14 distinct message.id values; multi-line messages (2-3, 5-6, 9-11, 16-17,
  21-22, 26-27) are one turn each. 13 tool_use blocks → 13 tool calls with their toolu_ ids.
- 3 Edit calls with successful results → 3 file_write edit (math_utils.py, test_math_utils.py,
  .gitignore); the last Bash (line 35) has is_error and a string toolUseResult → failed.`},
	{ClaudeCode, "claude-code/marot__spotter__test__fixtures__transcripts__short.jsonl", `
- one user_message "mix phx.server doesnt seem to start"; "[Request interrupted by user for
  tool use]" (line 12) is skipped as user:interrupt; progress and local_command lines skipped.
- one turn (message msg_01MKH…, lines 4-7 and 9); Bash and Glob were rejected (is_error) → failed.`},
	{ClaudeCode, "claude-code/marot__spotter__test__fixtures__transcripts__tool_heavy.jsonl", `
- user_messages: "start phoenix in background", "/mcp" (the <command-name> line 20), and the
  xterm.js question; the caveat (19, isMeta) and <local-command-stdout> (21) are not users.
- turns 4 (message ids 0167…, 01NU…, 01Lb…, 019B…); WebSearch, Glob, Read, WebFetch, Bash calls
  succeed; no writes.`},
	{Pi, "pi/badlogic__pi-mono__packages__coding-agent__test__fixtures__large-session.jsonl", `
- root /Users/badlogic/workspaces/pi-mono from the header; settings anthropic/claude-sonnet-4-5
  from the header, then openai/gpt-5.1-codex for the aborted request of line 2, then back.
- 88 user messages (every role user line; "/mode" and "/them" are what the user typed).
- 453 assistant messages → 453 turns; 103 thinking_level_change lines skipped.
- 391 toolCall blocks → 391 tool calls; 131 file_writes = the edit/write calls whose
  toolResult has isError false (counted with a script); the 18 edits of line 32 belong to a
  response with stopReason "error", have no result and are failed calls, not writes.
- relative paths resolve against the header cwd (packages/coding-agent/… →
  /Users/badlogic/workspaces/pi-mono/packages/coding-agent/…). No @mentions in this session.`},
	{Codex, "codex/jnarowski__agentcmd__packages__agent-cli-sdk__tests__fixtures__codex__full__rollout-2025-09-25T15-12-14-019982b8-3422-79e0-8b3b-05abaf4f3c3e.jsonl", `
- root /Users/jnarowski/Dev/spectora/src/spectora-labs-monorepo-v2, version 0.40.0.
- the user turn appears twice (response_item line 2, event_msg line 3): one user_message from the
  event_msg, the other counted as duplicate; environment_context (line 1) is not a user.
- the IDE preamble became a tab snapshot: active apps/spectora-labs/src/lib/prisma/db.ts, 5 open
  tabs; the user_message is only the text after "## My request for Codex:".
- mentions: @packages/services, @packages/services-prisma., @packages/services/src/createService.ts.
  and @packages/services/tsconfig, with the trailing punctuation dropped.
- 34 shell calls, all exit_code 0, cwd "." = the root so no Cwd; no apply_patch, so no writes.
- turns: one per model request, i.e. per reasoning/function_call run after an input (35).`},
}

func TestSamples(t *testing.T) {
	root := samplesDir(t, "sessions")
	for _, sm := range samples {
		name := strings.TrimSuffix(filepath.Base(sm.path), filepath.Ext(sm.path))
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(root, sm.path)
			got, err := summarize(sm.agent, path, root)
			if err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", "golden", string(sm.agent)+"__"+shortName(name)+".txt"), got)
		})
	}
}

func shortName(name string) string {
	if len(name) > 60 {
		name = name[:60]
	}
	return name
}

// summarize imports path and renders the report and the first items.
func summarize(agent Agent, path, root string) (string, error) {
	const first = 40
	var b strings.Builder
	var items []string
	rep, err := Import(agent, path, Options{}, func(it Item) error {
		if len(items) >= first {
			return nil
		}
		if it.Turn {
			items = append(items, "  TURN")
			return nil
		}
		e := it.Event
		data := string(e.Data)
		if len(data) > 400 {
			data = data[:400] + "…"
		}
		items = append(items, fmt.Sprintf("  %-16s rec=%-4d %s %s", e.Type, e.Origin.Record, e.Time.Format(time.RFC3339Nano), data))
		return nil
	})
	if err != nil {
		return "", err
	}
	rel := func(p string) string {
		if r, err := filepath.Rel(root, p); err == nil {
			return filepath.ToSlash(r)
		}
		return p
	}
	fmt.Fprintf(&b, "agent: %s\n", rep.Agent)
	for _, f := range rep.Files {
		fmt.Fprintf(&b, "file: %s\n", rel(f))
	}
	fmt.Fprintf(&b, "records: %d\nturns: %d\npaths: %d\nevents:\n", rep.Records, rep.Turns, rep.Paths)
	for _, c := range rep.Events {
		fmt.Fprintf(&b, "  %s %d\n", c.Name, c.N)
	}
	b.WriteString("skipped:\n")
	for _, c := range rep.Skipped {
		fmt.Fprintf(&b, "  %s %d\n", c.Name, c.N)
	}
	b.WriteString("warnings:\n")
	for _, w := range rep.Warnings {
		fmt.Fprintf(&b, "  %s\n", strings.ReplaceAll(w, root+string(filepath.Separator), ""))
	}
	fmt.Fprintf(&b, "first %d items:\n%s\n", first, strings.Join(items, "\n"))
	return b.String(), nil
}

// checkGolden compares got with the golden file, or rewrites the file under -update.
func checkGolden(t *testing.T, golden, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./events/agentlog -update)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs; rerun with -update and review the diff\n%s", golden, firstDiff(string(want), got))
	}
}

func firstDiff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(w) || i < len(g); i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n- %s\n+ %s", i+1, a, b)
		}
	}
	return ""
}
