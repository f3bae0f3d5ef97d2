package main

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/tasklog/tasklog/store"
)

// BenchmarkLog prints a 400-turn task (803 events) as 'replay log' does: every decision rebuilt
// in full and summarized against the one before, every line escaped.
func BenchmarkLog(b *testing.B) {
	path := filepath.Join(b.TempDir(), "t.db")
	db, err := store.Open(path, &store.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	task := longTask(b, db, 400)
	db.Close()
	args := []string{task.String(), "--db", path}
	b.ResetTimer()
	for b.Loop() {
		if code := cmdLog(args, io.Discard, io.Discard); code != exitOK {
			b.Fatalf("exit %d", code)
		}
	}
}
