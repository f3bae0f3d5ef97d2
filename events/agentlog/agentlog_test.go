package agentlog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestDetectAndDiscover(t *testing.T) {
	dir := t.TempDir()
	clineUIRows := ui(say(1, "text", "hi"))
	write(t, filepath.Join(dir, "tasks", "1769053680585", "ui_messages.json"), clineUIRows)
	write(t, filepath.Join(dir, "export", "x__ui_messages.json"), clineUIRows)
	write(t, filepath.Join(dir, "claude", "s.jsonl"), ccUser("/r", `"hi"`)+"\n")
	write(t, filepath.Join(dir, "claude", "s", "subagents", "agent-a1.jsonl"), ccUser("/r", `"task prompt"`)+"\n")
	write(t, filepath.Join(dir, "pi", "p.jsonl"), piHeader+"\n")
	write(t, filepath.Join(dir, "codex", "rollout.jsonl"), cxMeta+"\n")

	for path, want := range map[string]Agent{
		"tasks/1769053680585":        Cline,
		"export/x__ui_messages.json": Cline,
		"claude/s.jsonl":             ClaudeCode,
		"pi/p.jsonl":                 Pi,
		"codex/rollout.jsonl":        Codex,
	} {
		got, err := Detect(filepath.Join(dir, path))
		if err != nil || got != want {
			t.Errorf("Detect(%s) = %q, %v; want %q", path, got, err, want)
		}
	}

	tests := []struct {
		agent Agent
		want  []string
	}{
		{Cline, []string{"export/x__ui_messages.json", "tasks/1769053680585"}},
		{ClaudeCode, []string{"claude/s.jsonl"}},
	}
	for _, tt := range tests {
		got, err := Discover(tt.agent, dir)
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			got[i] = filepath.ToSlash(strings.TrimPrefix(got[i], dir+string(filepath.Separator)))
		}
		if tt.agent == ClaudeCode {
			got = filterPrefix(got, "claude/")
		}
		equal(t, "Discover "+string(tt.agent), got, tt.want)
	}
	if _, err := Discover("cursor", dir); !errors.Is(err, ErrUnknownAgent) {
		t.Errorf("Discover(cursor) err = %v, want ErrUnknownAgent", err)
	}
}

func filterPrefix(ps []string, prefix string) []string {
	var out []string
	for _, p := range ps {
		if strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	return out
}

func TestImportErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	write(t, bad, "this is not json\n")
	torn := filepath.Join(dir, "torn.jsonl")
	write(t, torn, ccUser("/r", `"hi"`)+"\n"+`{"type":"user","mess`)

	if _, err := Import("cursor", bad, Options{}, nil); !errors.Is(err, ErrUnknownAgent) {
		t.Errorf("unknown agent: err = %v", err)
	}
	_, err := Import(ClaudeCode, bad, Options{}, func(Item) error { return nil })
	if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "bad.jsonl") || !strings.Contains(err.Error(), "record 0") {
		t.Errorf("malformed first line: err = %v, want ErrFormat naming the file and record", err)
	}
	rep, err := Import(ClaudeCode, torn, Options{}, func(Item) error { return nil })
	if err != nil {
		t.Fatalf("torn last line: %v", err)
	}
	if count(rep, "malformed") != 1 || len(rep.Warnings) != 1 || !strings.Contains(rep.Warnings[0], "record 1") {
		t.Errorf("torn last line: report %+v, want one malformed record and a warning naming record 1", rep)
	}
	stop := errors.New("stop")
	if _, err := Import(ClaudeCode, torn, Options{}, func(Item) error { return stop }); !errors.Is(err, stop) {
		t.Errorf("emit error: err = %v, want it returned", err)
	}
	if _, err := Import(Cline, filepath.Join(dir, "missing"), Options{}, nil); err == nil {
		t.Error("missing Cline folder: no error")
	}
}

// TestTimesAndOrigins: event times come from the records, never the clock, and every event
// points back at its record; a record without a time takes the time of the one before it.
func TestTimesAndOrigins(t *testing.T) {
	var items []Item
	rep, err := importJSONL(Pi, "f.jsonl", strings.NewReader(strings.Join([]string{
		piHeader,
		`{"type":"message","message":{"role":"user","content":"no timestamp here"}}`,
		`{"type":"message","message":{"role":"user","content":"ms timestamp","timestamp":1763681640000}}`,
	}, "\n")), Options{}, func(it Item) error { items = append(items, it); return nil })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		e := it.Event
		ts := "zero"
		if !e.Time.IsZero() {
			ts = e.Time.Format("2006-01-02T15:04:05.000Z07:00")
		}
		got = append(got, string(e.Type)+" "+e.Origin.File+"#"+itoa(e.Origin.Record)+" "+ts)
	}
	equal(t, "times", got, []string{
		"task_started f.jsonl#0 2025-11-20T23:33:50.805Z",
		"settings_changed f.jsonl#0 2025-11-20T23:33:50.805Z",
		"user_message f.jsonl#1 2025-11-20T23:33:50.805Z",
		"user_message f.jsonl#2 2025-11-20T23:34:00.000Z",
	})
	if rep.Untimed != 1 {
		t.Errorf("report untimed = %d, want 1", rep.Untimed)
	}
}

// TestUntimedFirstRecords: records before any timestamp take the Unix epoch, never a zero time
// (which no event id can carry), and are counted.
func TestUntimedFirstRecords(t *testing.T) {
	var items []Item
	rep, err := importJSONL(ClaudeCode, "u.jsonl", strings.NewReader(strings.Join([]string{
		`{"type":"user","sessionId":"s","cwd":"/w","message":{"role":"user","content":"first, untimed"}}`,
		`{"type":"user","sessionId":"s","cwd":"/w","message":{"role":"user","content":"second, untimed"}}`,
		`{"type":"user","sessionId":"s","cwd":"/w","timestamp":"2026-01-02T03:04:05Z","message":{"role":"user","content":"timed"}}`,
		`{"type":"user","sessionId":"s","cwd":"/w","message":{"role":"user","content":"after, untimed"}}`,
	}, "\n")), Options{}, func(it Item) error { items = append(items, it); return nil })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, it := range items {
		if it.Event != nil {
			got = append(got, string(it.Event.Type)+" "+it.Event.Time.Format(time.RFC3339))
		}
	}
	equal(t, "times", got, []string{
		"task_started 1970-01-01T00:00:00Z",
		"user_message 1970-01-01T00:00:00Z",
		"user_message 1970-01-01T00:00:00Z",
		"user_message 2026-01-02T03:04:05Z",
		"user_message 2026-01-02T03:04:05Z",
	})
	if rep.Untimed != 3 {
		t.Errorf("report untimed = %d, want 3", rep.Untimed)
	}
}
