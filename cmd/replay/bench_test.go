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

// BenchmarkEscapeControls escapes a line of plain text (the common case) and one with an escape
// sequence in it.
func BenchmarkEscapeControls(b *testing.B) {
	plain := "   2      6  tool_call        read_file path=\"services/api/routes.ts\"\n"
	esc := "   1      2  user_message     \"Fix the \x1b[2J\x1b[31mred\x1b[0m banner in apps/web\"\n"
	for _, bc := range []struct{ name, s string }{{"plain", plain}, {"escape", esc}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.s)))
			for b.Loop() {
				escapeControls(bc.s)
			}
		})
	}
}
