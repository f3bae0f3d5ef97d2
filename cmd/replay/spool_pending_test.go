package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSpoolPending: the spool holds a payload to record only when it has a .json file; a
// temporary file being written and payloads moved aside do not count.
func TestSpoolPending(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		want  bool
	}{
		{"no folder", nil, false},
		{"empty", []string{}, false},
		{"being written", []string{".tmp-123"}, false},
		{"moved aside", []string{"1-2.json.bad", "3-4.json.failed"}, false},
		{"one payload", []string{"1-2.json.bad", "00000000000000000005-9.json"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
			db := filepath.Join(t.TempDir(), "tasklog.db")
			if tt.files != nil {
				if err := os.MkdirAll(spoolDir(db), 0o700); err != nil {
					t.Fatal(err)
				}
			}
			for _, f := range tt.files {
				if err := os.WriteFile(filepath.Join(spoolDir(db), f), []byte("{}"), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if got := spoolPending(db); got != tt.want {
				t.Fatalf("spoolPending = %v, want %v", got, tt.want)
			}
		})
	}
}
