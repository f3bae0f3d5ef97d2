package agentlog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/events"
)

// TestClaudeResumeByVersion: a Claude Code SessionStart with source "resume" records the version
// its transcript names, and is a compaction (tasklog delivers again) before 2.1.261 and when the
// version is unknown, none from 2.1.261 on.
func TestClaudeResumeByVersion(t *testing.T) {
	dir := t.TempDir()
	transcript := func(name string, lines ...string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name, transcript, source string
		wantVersion              string
		wantCompaction           bool
	}{
		{"2.1.197 resumed", transcript("old.jsonl", `{"type":"user","version":"2.1.197"}`, `{"type":"assistant","version":"2.1.197"}`), "resume", "2.1.197", true},
		{"2.1.332 resumed", transcript("new.jsonl", `{"type":"user","version":"2.1.197"}`, `{"type":"assistant","version":"2.1.332"}`, `{"type":"summary"}`), "resume", "2.1.332", false},
		{"2.2.0 resumed", transcript("later.jsonl", `{"version":"2.2.0"}`), "resume", "2.2.0", false},
		{"2.1.260 resumed", transcript("260.jsonl", `{"version":"2.1.260"}`), "resume", "2.1.260", true},
		{"2.1.261 resumed", transcript("261.jsonl", `{"version":"2.1.261"}`), "resume", "2.1.261", false},
		{"2.1.99 resumed", transcript("99.jsonl", `{"version":"2.1.99"}`), "resume", "2.1.99", true},
		{"no transcript", filepath.Join(dir, "missing.jsonl"), "resume", "", true},
		{"a transcript without versions", transcript("bad.jsonl", `not json`, `{"version":"x.y"}`), "resume", "", true},
		{"2.1.332 compacted", filepath.Join(dir, "new.jsonl"), "compact", "2.1.332", true},
		{"2.1.332 started", filepath.Join(dir, "new.jsonl"), "startup", "2.1.332", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			payload, _ := json.Marshal(map[string]any{"session_id": "s", "hook_event_name": "SessionStart", "cwd": "/w",
				"source": tt.source, "transcript_path": tt.transcript})
			h, err := ParseHook(ClaudeCode, payload)
			if err != nil {
				t.Fatal(err)
			}
			version, compaction := "", false
			for i, r := range h.Records {
				switch p := r.Payload.(type) {
				case *events.SettingsChanged:
					version = p.AgentVersion
				case *events.Compaction:
					compaction = true
					if version != tt.wantVersion || tt.wantVersion != "" && i == 0 {
						t.Errorf("the compaction is recorded before the version it depends on: %+v", h.Records)
					}
				}
			}
			if version != tt.wantVersion || compaction != tt.wantCompaction || h.Redeliver != tt.wantCompaction {
				t.Errorf("version %q, compaction %v, redeliver %v; want %q, %v, %v", version, compaction, h.Redeliver,
					tt.wantVersion, tt.wantCompaction, tt.wantCompaction)
			}
		})
	}
}

// TestCompareVersions orders dotted versions by their numbers.
func TestCompareVersions(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		want int
	}{{"2.1.332", "2.1.332", 0}, {"2.1.99", "2.1.332", -1}, {"2.2", "2.1.332", 1}, {"2.1", "2.1.0", 0}, {"10.0.0", "9.9.9", 1}} {
		if got := compareVersions(tt.a, tt.b); got != tt.want {
			t.Errorf("compareVersions(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
