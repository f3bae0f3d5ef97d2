package agentlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/events"
)

// TestHookGolden maps every payload under testdata/hooks/<agent>/ (captured from the real
// agents, or written from the documentation for Cursor and Copilot) and compares what it
// records and how it answers with its .golden file.
func TestHookGolden(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "hooks", "*", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no hook fixtures: %v", err)
	}
	for _, f := range files {
		hint := Agent(filepath.Base(filepath.Dir(f)))
		name := string(hint) + "/" + strings.TrimSuffix(filepath.Base(f), ".json")
		t.Run(name, func(t *testing.T) {
			payload, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			got := describeHook(t, hint, payload)
			checkGolden(t, strings.TrimSuffix(f, ".json")+".golden", got)
		})
	}
}

// describeHook is the golden text of one payload: the dialect, the task, every record with its
// key and canonical payload, and the replies with and without text.
func describeHook(t *testing.T, hint Agent, payload []byte) string {
	t.Helper()
	h, err := ParseHook(hint, payload)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "agent %s, event %s, kind %s\n", h.Agent, h.Event, h.Kind)
	fmt.Fprintf(&b, "session %s → task %s\n", h.SessionID, h.TaskID())
	fmt.Fprintf(&b, "cwd %s, roots %v, model %q\n", h.Cwd, h.Roots, h.Model)
	fmt.Fprintf(&b, "channel %q, redeliver %v\n", h.Channel, h.Redeliver)
	for _, r := range h.Records {
		ev, err := events.New(r.Payload)
		if err != nil {
			t.Fatalf("record %s: %v", r.Payload.EventType(), err)
		}
		trig := ""
		if r.Trigger {
			trig = " (decides)"
		}
		fmt.Fprintf(&b, "record%s %s %s\n  key %s\n", trig, ev.Type, ev.Data, strings.ReplaceAll(r.Key, "\x00", "|"))
	}
	fmt.Fprintf(&b, "neutral reply: %q\n", NeutralReply(h.Agent, h.Event))
	fmt.Fprintf(&b, "reply with text: %q\n", h.Reply("<tasklog-rules>\nR\n</tasklog-rules>\n"))
	return b.String()
}

func TestParseHookRejects(t *testing.T) {
	for _, tc := range []struct{ name, payload string }{
		{"garbage", "not json at all"},
		{"array", `[1,2]`},
		{"empty", ``},
		{"no session", `{"hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{}}`},
		{"trailing", `{"session_id":"a","hook_event_name":"Stop"} {}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := ParseHook(ClaudeCode, []byte(tc.payload)); !errors.Is(err, ErrHookPayload) {
				t.Fatalf("ParseHook = %v, want ErrHookPayload", err)
			}
		})
	}
}

func TestTaskIDStable(t *testing.T) {
	a := TaskID(ClaudeCode, "23c2d52c-b594-4b7a-a76c-2bafc4c82781")
	if a != TaskID(ClaudeCode, "23c2d52c-b594-4b7a-a76c-2bafc4c82781") {
		t.Fatal("TaskID is not stable")
	}
	if a == TaskID(Codex, "23c2d52c-b594-4b7a-a76c-2bafc4c82781") {
		t.Fatal("two agents with one session id share a task")
	}
	if a.Version() != 5 {
		t.Fatalf("TaskID is UUID version %d, want 5", a.Version())
	}
}

func TestLoadsNatively(t *testing.T) {
	for _, tc := range []struct {
		agent    Agent
		provider events.RuleSource
		path     string
		want     bool
	}{
		{ClaudeCode, "claude", ".claude/rules/api.md", true},
		{ClaudeCode, "cline", ".clinerules/api.md", false},
		{ClaudeCode, "agents", "AGENTS.md", false},
		{Codex, "agents", "AGENTS.md", true},
		{Codex, "agents", "src/api/AGENTS.md", false},
		{Codex, "claude", "CLAUDE.md", false},
		{Codex, "agents", "~/.codex/AGENTS.md", true},
		{Cline, "agents", "~/.codex/AGENTS.md", false},
		{Copilot, "agents", "~/.codex/AGENTS.md", false},
		{CopilotCLI, "agents", "~/.codex/AGENTS.md", false},
		{CopilotCLI, "agents", "AGENTS.md", true},
		{Cline, "cline", ".clinerules/api.md", true},
		{Cline, "cursor", ".cursorrules", true},
		{Cline, "cursor", ".cursor/rules/api.mdc", false},
		{Cursor, "cursor", ".cursor/rules/api.mdc", true},
		{Copilot, "copilot", ".github/instructions/api.instructions.md", true},
		{Copilot, "tasklog", ".tasklog/rules/api.md", false},
	} {
		if got := LoadsNatively(tc.agent, tc.provider, tc.path); got != tc.want {
			t.Errorf("LoadsNatively(%s, %s, %s) = %v, want %v", tc.agent, tc.provider, tc.path, got, tc.want)
		}
	}
}

// FuzzParseHook: no payload makes ParseHook panic, and what it accepts records only valid
// events with keys.
func FuzzParseHook(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "hooks", "*", "*.json"))
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(string(filepath.Base(filepath.Dir(file))), b)
		}
	}
	f.Fuzz(func(t *testing.T, hint string, payload []byte) {
		h, err := ParseHook(Agent(hint), payload)
		if err != nil {
			return
		}
		for _, r := range h.Records {
			if r.Key == "" {
				t.Fatalf("%s record without a key", r.Payload.EventType())
			}
			if _, err := events.New(r.Payload); err != nil {
				t.Fatalf("invalid record: %v", err)
			}
		}
		_ = h.Reply("x")
	})
}

// TestDetectCursor: Cursor's payloads are Cursor's whether or not they carry a session_id (its
// sessionStart and sessionEnd always do); Claude Code's event names keep a payload Claude's.
func TestDetectCursor(t *testing.T) {
	for _, tc := range []struct {
		payload string
		want    Agent
	}{
		{`{"conversation_id":"c","hook_event_name":"stop","status":"completed"}`, Cursor},
		{`{"conversation_id":"c","session_id":"c","hook_event_name":"sessionStart","model":"m"}`, Cursor},
		{`{"conversation_id":"c","session_id":"c","hook_event_name":"postToolUse","tool_name":"Shell"}`, Cursor},
		{`{"conversation_id":"c","session_id":"c","hook_event_name":"PostToolUse","tool_name":"Bash"}`, ClaudeCode},
		{`{"session_id":"s","hook_event_name":"SessionStart"}`, ClaudeCode},
	} {
		for _, hint := range []Agent{Cursor, ClaudeCode} {
			h, err := ParseHook(hint, []byte(tc.payload))
			if err != nil {
				t.Fatal(err)
			}
			if h.Agent != tc.want {
				t.Errorf("ParseHook(%s, %s) reads %s, want %s", hint, tc.payload, h.Agent, tc.want)
			}
		}
	}
}

// TestCursorWrites: a postToolUse of one of Cursor's file tools records the file it changed,
// under whichever path key it names; reads, searches and shell calls record no write.
func TestCursorWrites(t *testing.T) {
	for _, tc := range []struct {
		tool, input string
		want        string // "path op", or "" for no write
	}{
		{"Write", `{"file_path":"/w/a.ts","content":"x"}`, "/w/a.ts edit"},
		{"Write", `{"path":"src/b.ts","content":"x"}`, "/w/src/b.ts edit"},
		{"StrReplace", `{"file_path":"c.ts","old_string":"a","new_string":"b"}`, "/w/c.ts edit"},
		{"Delete", `{"target_file":"old.ts"}`, "/w/old.ts delete"},
		{"Write", `{"content":"x"}`, ""},
		{"Read", `{"file_path":"/w/a.ts"}`, ""},
		{"Grep", `{"pattern":"x","path":"/w"}`, ""},
		{"Shell", `{"command":"rm old.ts","working_directory":"/w"}`, ""},
	} {
		payload := `{"conversation_id":"c","generation_id":"g","hook_event_name":"postToolUse","workspace_roots":["/w"],` +
			`"cwd":"/w","tool_use_id":"t1","tool_name":"` + tc.tool + `","tool_input":` + tc.input + `}`
		h, err := ParseHook(Cursor, []byte(payload))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		for _, r := range h.Records {
			if w, ok := r.Payload.(*events.FileWrite); ok {
				got = w.Path + " " + w.Op
			}
		}
		if got != tc.want {
			t.Errorf("%s %s: write %q, want %q", tc.tool, tc.input, got, tc.want)
		}
	}
}

// TestCopilotCLIWhateverTheHint: Copilot CLI runs VS Code's hook file too (same folder), so its
// payloads are its own whichever agent the hook was installed for.
func TestCopilotCLIWhateverTheHint(t *testing.T) {
	for _, f := range []string{"03-PreToolUse-Read.json", "11-Stop.json", "01-SessionStart.json"} {
		payload, err := os.ReadFile(filepath.Join("testdata", "hooks", "copilot-cli", f))
		if err != nil {
			t.Fatal(err)
		}
		for _, hint := range []Agent{Copilot, ClaudeCode, CopilotCLI} {
			h, err := ParseHook(hint, payload)
			if err != nil || h.Agent != CopilotCLI {
				t.Errorf("%s installed for %s: %v, %v; want copilot-cli", f, hint, h, err)
			}
		}
	}
}
