// Package agenttest is the conformance suite of agent dialects (agentlog.Dialect), as storetest
// is for stores: Run walks one dialect through every check, RunInstall through an installer's
// round trip. agentlog's own test runs it for every registered dialect, cmd/replay's for its
// installer; a new agent passes both before it is done.
package agenttest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/events/agentlog/hookspec"
)

// Run checks the dialect d: that its description is complete, and for an agent with command
// hooks, every payload fixture under fixtures/<agent>/*.json: it parses, as this agent's
// dialect or one the payload names, with a session and uniquely keyed records, the same way
// twice; the payload specs alone (what the hook program reads) tell the same dialect; a session
// ends exactly on the events the spec lists; the reply carrying text reaches the model when the
// event has a channel and is the neutral reply otherwise; the neutral reply is empty or JSON.
func Run(t *testing.T, d *agentlog.Dialect, fixtures string) {
	t.Helper()
	t.Run("description", func(t *testing.T) { checkDescription(t, d) })
	if d.Parse == nil {
		return
	}
	files, err := filepath.Glob(filepath.Join(fixtures, string(d.Agent), "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("%s has command hooks and no payload fixture under %s/%s: capture some", d.Agent, fixtures, d.Agent)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) { checkPayload(t, d, f) })
	}
	t.Run("not a payload", func(t *testing.T) {
		for _, p := range []string{``, `[]`, `"x"`, `{"hook_event_name":`} {
			if _, err := agentlog.ParseHook(d.Agent, []byte(p)); !errors.Is(err, agentlog.ErrHookPayload) {
				t.Errorf("ParseHook(%s, %q) = %v, want ErrHookPayload", d.Agent, p, err)
			}
		}
	})
}

func checkDescription(t *testing.T, d *agentlog.Dialect) {
	if d.Agent == "" || strings.TrimSpace(string(d.Agent)) != string(d.Agent) || strings.ContainsAny(string(d.Agent), " /") {
		t.Errorf("agent name %q: want a bare word", d.Agent)
	}
	if agentlog.DialectOf(d.Agent) != d {
		t.Errorf("%s is not the registered dialect of its name", d.Agent)
	}
	if d.Parse != nil {
		if d.Reply == nil {
			t.Errorf("%s parses hooks and has no Reply", d.Agent)
		}
		if d.Payload.Agent != string(d.Agent) {
			t.Errorf("Payload.Agent = %q, want %q", d.Payload.Agent, d.Agent)
		}
		if d.Payload.Precedence == 0 && !d.Payload.HintDecides && !d.Payload.Default {
			t.Errorf("%s's payloads are never recognised: give clues and a Precedence, or let the hint decide", d.Agent)
		}
		if d.Payload.Precedence > 0 && len(d.Payload.Clues) == 0 {
			t.Errorf("%s has a Precedence and no clues", d.Agent)
		}
		if len(d.Payload.SessionEnds) == 0 {
			t.Errorf("%s names no event that ends a session", d.Agent)
		}
		if d.Hooks.Shape == agentlog.NoHooks {
			t.Errorf("%s parses hooks and install writes none", d.Agent)
		}
	}
	h := d.Hooks
	if h.Shape != agentlog.NoHooks {
		if h.Project == "" {
			t.Errorf("%s's hooks have no project file", d.Agent)
		}
		if h.User == "" && h.NoUser == "" {
			t.Errorf("%s's hooks have no user file and no reason for it (NoUser)", d.Agent)
		}
		if (h.UserDirEnv == "") != (h.UserDir == "") || h.UserDir != "" && !strings.HasPrefix(h.User, h.UserDir) {
			t.Errorf("%s's hooks: UserDirEnv %q moves UserDir %q, which must lead User %q", d.Agent, h.UserDirEnv, h.UserDir, h.User)
		}
		if h.Shape != agentlog.HookExtension && len(h.Events) == 0 {
			t.Errorf("%s subscribes to no hook event", d.Agent)
		}
		seen := map[string]bool{}
		for _, e := range h.Events {
			if e.Name == "" || seen[e.Name] {
				t.Errorf("%s: hook event %q empty or listed twice", d.Agent, e.Name)
			}
			seen[e.Name] = true
		}
	}
	m := d.MCP
	switch m.Format {
	case agentlog.NoMCP:
		if m.Absent == "" {
			t.Errorf("%s has no MCP settings and does not say why (Absent)", d.Agent)
		}
	default:
		if m.Project == "" && m.NoProject == "" {
			t.Errorf("%s's MCP settings: no project file and no reason (NoProject)", d.Agent)
		}
		if m.User == "" && m.NoUser == "" {
			t.Errorf("%s's MCP settings: no user file and no reason (NoUser)", d.Agent)
		}
		if m.Format == agentlog.MCPJSON && m.Key == "" {
			t.Errorf("%s's MCP settings: no key the servers are kept under", d.Agent)
		}
	}
}

func checkPayload(t *testing.T, d *agentlog.Dialect, file string) {
	payload, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	h, err := agentlog.ParseHook(d.Agent, payload)
	if err != nil {
		t.Fatalf("ParseHook(%s): %v", d.Agent, err)
	}
	again, err := agentlog.ParseHook(d.Agent, payload)
	if err != nil || !sameRecords(h, again) {
		t.Errorf("a second parse differs: %v", err)
	}
	got := agentlog.DialectOf(h.Agent)
	if got == nil {
		t.Fatalf("parsed as %s, which no dialect describes", h.Agent)
	}
	var v map[string]any
	if err := json.Unmarshal(payload, &v); err != nil {
		t.Fatalf("fixture is not a JSON object: %v", err)
	}
	if spec := hookspec.Detect(hookspec.Ordered(agentlog.HookSpecs()), string(d.Agent), v); spec != string(h.Agent) {
		t.Errorf("the payload specs tell %s, the parser %s: the hook program would answer in the wrong dialect", spec, h.Agent)
	}
	if h.SessionID == "" || h.Event == "" {
		t.Errorf("session %q, event %q: want both", h.SessionID, h.Event)
	}
	keys := map[string]bool{}
	for _, r := range h.Records {
		if r.Key == "" || keys[r.Key] {
			t.Errorf("record %s: key %q empty or repeated", r.Payload.EventType(), r.Key)
		}
		keys[r.Key] = true
	}
	if ends := slices.Contains(got.Payload.SessionEnds, h.Event); ends != (h.Kind == agentlog.HookSessionEnd) {
		t.Errorf("event %s: listed among the session ends %v: %v, read as a session end: %v",
			h.Event, got.Payload.SessionEnds, ends, h.Kind == agentlog.HookSessionEnd)
	}
	neutral := agentlog.NeutralReply(h.Agent, h.Event)
	if len(neutral) > 0 && !json.Valid(neutral) {
		t.Errorf("neutral reply %q is not JSON", neutral)
	}
	if r := h.Reply(""); !bytes.Equal(r, neutral) {
		t.Errorf("Reply(\"\") = %q, want the neutral reply %q", r, neutral)
	}
	const text = "Rule: \"quoted\" <b>&</b>"
	r := h.Reply(text)
	if h.Channel == "" {
		if !bytes.Equal(r, neutral) {
			t.Errorf("event %s reaches no model and replies %q, want the neutral reply %q", h.Event, r, neutral)
		}
		return
	}
	var decoded any
	if err := json.Unmarshal(r, &decoded); err != nil {
		t.Fatalf("reply %q is not JSON: %v", r, err)
	}
	if !holds(decoded, text) {
		t.Errorf("reply %s does not carry the text %q as it is", r, text)
	}
}

// holds reports whether a decoded JSON value has text as one of its strings.
func holds(v any, text string) bool {
	switch v := v.(type) {
	case string:
		return v == text
	case map[string]any:
		for _, x := range v {
			if holds(x, text) {
				return true
			}
		}
	case []any:
		for _, x := range v {
			if holds(x, text) {
				return true
			}
		}
	}
	return false
}

func sameRecords(a, b *agentlog.Hook) bool {
	if a.Agent != b.Agent || a.Event != b.Event || a.SessionID != b.SessionID || len(a.Records) != len(b.Records) {
		return false
	}
	for i := range a.Records {
		if a.Records[i].Key != b.Records[i].Key {
			return false
		}
	}
	return true
}

// Installer installs and uninstalls an agent's hooks and MCP server, in a project folder or
// (user) under a home folder, and returns what it printed, one line per change.
type Installer func(agent string, project, home string, user, install bool) ([]string, error)

// RunInstall walks dialect d through install's round trip with inst, in a project and for the
// user (where the dialect has user files): install changes something, installing again changes
// nothing, and uninstall gives back every file and folder as they were, byte for byte.
func RunInstall(t *testing.T, d *agentlog.Dialect, inst Installer) {
	t.Helper()
	for _, user := range []bool{false, true} {
		name := "project"
		if user {
			name = "user"
		}
		t.Run(name, func(t *testing.T) {
			project, home := t.TempDir(), t.TempDir()
			seed(t, project)
			seed(t, home)
			before := Snapshot(t, project) + Snapshot(t, home)
			lines, err := inst(string(d.Agent), project, home, user, true)
			if user && err != nil && (d.Hooks.User == "" || d.MCP.Format != agentlog.NoMCP && d.MCP.User == "" && d.MCP.UserFile == nil) {
				return // an agent without user files says why, which is all install can do
			}
			if err != nil {
				t.Fatalf("install: %v", err)
			}
			if len(lines) == 0 {
				t.Fatal("install changed nothing")
			}
			if Snapshot(t, project)+Snapshot(t, home) == before {
				t.Fatalf("install printed %q and changed no file", lines)
			}
			if again, err := inst(string(d.Agent), project, home, user, true); err != nil || len(again) != 0 {
				t.Errorf("install again: %q, %v; want no change", again, err)
			}
			if _, err := inst(string(d.Agent), project, home, user, false); err != nil {
				t.Fatalf("uninstall: %v", err)
			}
			if after := Snapshot(t, project) + Snapshot(t, home); after != before {
				t.Errorf("uninstall left the folders changed:\nbefore:\n%s\nafter:\n%s", before, after)
			}
		})
	}
}

// seed puts a file of the user's in a folder, which the round trip must leave alone.
func seed(t *testing.T, dir string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("the user's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Snapshot is every file and folder under dir with its mode and content, in order.
func Snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		info, err := e.Info()
		if err != nil {
			return err
		}
		b.WriteString(rel + " " + info.Mode().String() + "\n")
		if e.Type().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			b.Write(data)
			b.WriteString("\n")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
