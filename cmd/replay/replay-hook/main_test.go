package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session/serve/wire"
)

func TestParse(t *testing.T) {
	tests := []struct {
		args   []string
		usual  bool
		db     string
		budget time.Duration
	}{
		{[]string{"claude-code"}, true, "", hookBudget},
		{[]string{"codex", "--db", "/x/t.db"}, true, "/x/t.db", hookBudget},
		{[]string{"--db=/x/t.db", "cline", "-budget", "2s"}, true, "/x/t.db", 2 * time.Second},
		{[]string{"cursor", "--budget=250ms"}, true, "", 250 * time.Millisecond},
		{[]string{"copilot"}, true, "", hookBudget},
		{[]string{"pi"}, false, "", hookBudget},
		{[]string{}, false, "", hookBudget},
		{[]string{"claude-code", "-h"}, false, "", hookBudget},
		{[]string{"claude-code", "--store", "nats://localhost:4222"}, false, "", hookBudget},
		{[]string{"claude-code", "--budget", "-1s"}, false, "", hookBudget},
		{[]string{"claude-code", "--db"}, false, "", hookBudget},
		{[]string{"claude-code", "extra"}, false, "", hookBudget},
		// The --otel-* flags are for the server replay hook starts: the fast path takes them.
		{[]string{"codex", "--otel-endpoint", "http://127.0.0.1:4318", "--db", "/x/t.db"}, true, "/x/t.db", hookBudget},
		{[]string{"codex", "--otel-protocol=grpc", "--otel-service-name", "svc", "--otel-log-user-prompts"}, true, "", hookBudget},
		{[]string{"codex", "--otel-endpoint"}, false, "", hookBudget},
	}
	t.Setenv("TASKLOG_STORE", "")
	for _, tt := range tests {
		c := &call{args: tt.args, budget: hookBudget}
		usual := c.parse()
		if usual != tt.usual || (usual && (c.db != tt.db || c.budget != tt.budget)) {
			t.Errorf("parse(%q) = %v, db %q, budget %v; want %v, %q, %v", tt.args, usual, c.db, c.budget, tt.usual, tt.db, tt.budget)
		}
	}
	t.Setenv("TASKLOG_STORE", "nats://localhost:4222")
	if c := (&call{args: []string{"claude-code"}}); c.parse() {
		t.Error("parse with $TASKLOG_STORE and no --db: usual, want replay hook to pick the store")
	}
	if c := (&call{args: []string{"claude-code", "--db", "/x/t.db"}}); !c.parse() {
		t.Error("parse with $TASKLOG_STORE and --db: unusual, want the file")
	}
}

// TestNeutralReply: the last-resort reply agrees with agentlog.NeutralReply for each agent's
// own payloads.
func TestNeutralReply(t *testing.T) {
	tests := []struct {
		agent   agentlog.Agent
		payload string
	}{
		{agentlog.ClaudeCode, `{"session_id":"s","hook_event_name":"Stop"}`},
		{agentlog.Codex, `{"session_id":"s","hook_event_name":"Stop","turn_id":"t"}`},
		{agentlog.ClaudeCode, `{"taskId":"t","hookName":"TaskComplete","taskComplete":{}}`},
		{agentlog.Cline, `{"taskId":"t","hookName":"TaskComplete","taskComplete":{}}`},
		{agentlog.Cursor, `{"conversation_id":"c","generation_id":"g","hook_event_name":"beforeSubmitPrompt","prompt":"hi"}`},
		{agentlog.ClaudeCode, `{"conversation_id":"c","generation_id":"g","hook_event_name":"beforeSubmitPrompt","prompt":"hi"}`},
		{agentlog.Cursor, `{"conversation_id":"c","generation_id":"g","hook_event_name":"stop","status":"completed"}`},
		{agentlog.Cursor, `{"conversation_id":"c","session_id":"c","hook_event_name":"beforeSubmitPrompt","prompt":"hi"}`},
		{agentlog.ClaudeCode, `{"conversation_id":"c","session_id":"c","hook_event_name":"beforeSubmitPrompt","prompt":"hi"}`},
		{agentlog.Copilot, `{"sessionId":"s","hookEventName":"Stop","cwd":"/w"}`},
		{agentlog.ClaudeCode, `{"sessionId":"s","hookEventName":"Stop","cwd":"/w"}`}, // VS Code through Claude's settings
		{agentlog.Cline, `not json`},
		{agentlog.Cursor, `not json`},
	}
	for _, tt := range tests {
		want, parsed := neutralWant(tt.agent, []byte(tt.payload))
		if !parsed && json.Valid([]byte(tt.payload)) {
			t.Errorf("agentlog does not parse %s: make it a payload of the agent", tt.payload)
		}
		if got := neutralReply(string(tt.agent), []byte(tt.payload)); !bytes.Equal(got, want) {
			t.Errorf("neutralReply(%s, %s) = %q, want %q", tt.agent, tt.payload, got, want)
		}
	}
}

// neutralWant is replay hook's neutral reply (cmd/replay neutralFor).
func neutralWant(hint agentlog.Agent, payload []byte) (reply []byte, parsed bool) {
	if h, err := agentlog.ParseHook(hint, payload); err == nil {
		return agentlog.NeutralReply(h.Agent, h.Event), true
	}
	return agentlog.NeutralReply(hint, ""), false
}

func TestEndsSession(t *testing.T) {
	for payload, want := range map[string]bool{
		`{"hook_event_name":"SessionEnd"}`:   true,
		`{"hook_event_name":"sessionEnd"}`:   true,
		`{"hookName":"TaskCancel"}`:          true,
		`{"hookName":"SessionShutdown"}`:     true,
		`{"hook_event_name":"PreToolUse"}`:   false,
		`{"hookEventName":"Stop"}`:           false,
		`{"hook_event_name":"SessionEnd"`:    false,
		`{"hook_event_name":["SessionEnd"]}`: false,
	} {
		if got := endsSession([]byte(payload)); got != want {
			t.Errorf("endsSession(%s) = %v, want %v", payload, got, want)
		}
	}
}

func TestServerRecordedNothing(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{&wire.Error{Code: "timeout"}, true},
		{&wire.Error{Code: "internal"}, true},
		{&wire.Error{Code: "conflict"}, true},
		{&wire.Error{Code: "busy"}, true},
		{&wire.Error{Code: "bad_request"}, false},
		{&wire.Error{Code: "shutting_down"}, false},
		{&os.PathError{Op: "connect", Path: "x", Err: syscall.ENOENT}, false},
		{&os.PathError{Op: "connect", Path: "x", Err: syscall.ECONNREFUSED}, false},
		{wire.ErrNotJSON, false},
		{wire.ErrUntrustedSocket, false},
		{os.ErrDeadlineExceeded, true},
		{context.DeadlineExceeded, true},
		{errors.New("receive hook: EOF"), true},
	} {
		if got := serverRecordedNothing(tt.err); got != tt.want {
			t.Errorf("serverRecordedNothing(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestNoReplay: with no server and no replay binary to fall back on, the reply is the neutral
// one, the exit status 0 and the fault is in the hook log beside the database.
func TestNoReplay(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	t.Setenv("TASKLOG_SERVE", "")
	db := filepath.Join(t.TempDir(), "tasklog.db")
	var out, errb bytes.Buffer
	code := run([]string{"cline", "--db", db}, strings.NewReader(`{"taskId":"t","hookName":"PreToolUse"}`), &out, &errb)
	if code != 0 || out.String() != `{"cancel":false}`+"\n" {
		t.Fatalf("exit %d, reply %q", code, out.String())
	}
	log, err := os.ReadFile(filepath.Join(filepath.Dir(db), hookLogName))
	if err != nil || !strings.Contains(string(log), "no replay binary") {
		t.Fatalf("hook log %q (%v): want the missing replay named", log, err)
	}
}

// TestReplayFails: a replay hook that crashes half-way through its reply, or outlives the
// budget (its output held open by a process it left behind), gets the neutral reply in its
// place, exit 0, and the fault logged.
func TestReplayFails(t *testing.T) {
	t.Setenv("TASKLOG_SERVE", "off")
	for name, script := range map[string]string{
		"crashes": "#!/bin/sh\nprintf '{\"cancel\":'\nexit 3\n",
		"hangs":   "#!/bin/sh\n/bin/cat >/dev/null\n/bin/sleep 30\n",
	} {
		t.Run(name, func(t *testing.T) {
			bin := t.TempDir()
			if err := os.WriteFile(filepath.Join(bin, "replay"), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", bin)
			db := filepath.Join(t.TempDir(), "tasklog.db")
			var out, errb bytes.Buffer
			code := run([]string{"cline", "--db", db, "--budget", "300ms"}, strings.NewReader(`{"taskId":"t","hookName":"PreToolUse"}`), &out, &errb)
			if code != 0 || out.String() != `{"cancel":false}`+"\n" {
				t.Fatalf("exit %d, reply %q", code, out.String())
			}
			if log, err := os.ReadFile(filepath.Join(filepath.Dir(db), hookLogName)); err != nil || !strings.Contains(string(log), "replay hook") {
				t.Fatalf("hook log %q (%v): want the failed replay hook named", log, err)
			}
		})
	}
}

// TestLinksNoHeavyPackage: every start of the hook program pays a page fault for each page of
// code it touches, so it links neither encoding/json, fmt, crypto nor net (the README says so).
func TestLinksNoHeavyPackage(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		switch {
		case pkg == "encoding/json", pkg == "fmt", pkg == "net", pkg == "crypto", strings.HasPrefix(pkg, "crypto/"):
			t.Errorf("replay-hook links %s", pkg)
		}
	}
}

// TestAgreesWithAgentlog: the agents replay-hook takes are replay hook's (agentlog.HookAgents),
// and a captured payload ends a session for it exactly when agentlog reads it as the end of
// one: its own lists cannot drift from agentlog's, which it does not link.
func TestAgreesWithAgentlog(t *testing.T) {
	var want []string
	for _, a := range agentlog.HookAgents() {
		want = append(want, string(a))
	}
	if !slices.Equal(agents, want) {
		t.Errorf("replay-hook takes %v, replay hook %v", agents, want)
	}
	files, err := filepath.Glob(filepath.Join("..", "..", "..", "events", "agentlog", "testdata", "hooks", "*", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captured hook payloads: %v", err)
	}
	ends := 0
	for _, f := range files {
		payload, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		h, err := agentlog.ParseHook(agentlog.Agent(filepath.Base(filepath.Dir(f))), payload)
		if err != nil {
			continue // a payload agentlog refuses: replay hook answers it
		}
		want := h.Kind == agentlog.HookSessionEnd
		if want {
			ends++
		}
		if got := endsSession(payload); got != want {
			t.Errorf("%s: endsSession = %v, agentlog reads a session end: %v", f, got, want)
		}
	}
	if ends == 0 {
		t.Error("no captured payload ends a session: the check above checked nothing")
	}
}
