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

// TestSpoolWatch: a server keeping its store open hears of a spooled payload once, when it is
// spooled, not again at every request while the payload cannot be recorded; a payload spooled
// later is news again, and so is the stuck one once its folder changes.
func TestSpoolWatch(t *testing.T) {
	t.Setenv("XDG_RUNTIME_DIR", t.TempDir())
	db := filepath.Join(t.TempDir(), "tasklog.db")
	w := &spoolWatch{dbPath: db}
	if w.news() {
		t.Fatal("news of a spool that does not exist")
	}
	put := func(name string) {
		t.Helper()
		if err := os.MkdirAll(spoolDir(db), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(spoolDir(db), name), []byte("{}"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	put("00000000000000000005-9.json")
	if !w.news() {
		t.Fatal("no news of a payload just spooled")
	}
	for i := range 3 {
		if w.news() {
			t.Fatalf("request %d: the same stuck payload is news again", i+1)
		}
	}
	// Another payload changes the folder, whatever the clock's resolution: wait until it does.
	before, _ := os.Stat(spoolDir(db))
	for n := 0; ; n++ {
		put("00000000000000000006-9.json")
		if now, _ := os.Stat(spoolDir(db)); !now.ModTime().Equal(before.ModTime()) {
			break
		}
		os.Remove(filepath.Join(spoolDir(db), "00000000000000000006-9.json"))
		if n > 1000 {
			t.Fatal("the spool folder's modification time never changed")
		}
	}
	if !w.news() {
		t.Fatal("no news of a second payload")
	}
}
