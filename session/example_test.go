package session_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"testing/fstest"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// A runtime's whole turn: record what happened, decide at prompt-build time, render, explain.
func ExampleSession_Decide() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "tasklog-example")
	defer os.RemoveAll(dir)
	db, _ := store.Open(filepath.Join(dir, "tasklog.db"), nil)
	defer db.Close()

	workspace := fstest.MapFS{
		".clinerules/general.md":  {Data: []byte("Run the tests before you finish.\n")},
		".clinerules/frontend.md": {Data: []byte("---\npaths: [\"apps/web/**\"]\n---\nUse the design tokens.\n")},
	}
	s, err := session.Open(ctx, db, uuid.Nil, session.Options{
		Roots:   []session.Root{{Path: "/home/me/shop", FS: workspace}},
		Runtime: events.Runtime{Name: "my-agent", Version: "0.1"},
	})
	if err != nil {
		panic(err)
	}
	s.UserMessage(ctx, "Add a cart badge to apps/web/src/Header.tsx")
	d, err := s.Decide(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(d.Prompt)
	for _, a := range d.Applied {
		fmt.Println("conditional rule applied:", a.Name)
	}
	x, _ := s.Explain(ctx, d.Turn, "frontend")
	fmt.Print(x)
	// Output:
	// .clinerules/frontend.md
	// Use the design tokens.
	//
	// .clinerules/general.md
	// Run the tests before you finish.
	// conditional rule applied: .clinerules/frontend.md
	// turn 1: frontend (cline:/home/me/shop/.clinerules/frontend.md) was included: matched — paths "apps/web/**" matched apps/web/src/Header.tsx
	//   paths apps/web/** matched apps/web/src/Header.tsx, from prose at seq 2, turn 1
}

// Replay recomputes every recorded decision from the log; with other rules it is a what-if.
func ExampleReplay() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "tasklog-example")
	defer os.RemoveAll(dir)
	db, _ := store.Open(filepath.Join(dir, "tasklog.db"), &store.Options{NoSync: true})
	defer db.Close()
	workspace := fstest.MapFS{".clinerules/api.md": {Data: []byte("---\npaths: [\"services/api/**\"]\n---\nValidate input.\n")}}
	s, _ := session.Open(ctx, db, uuid.Nil, session.Options{
		Roots: []session.Root{{Path: "/ws", FS: workspace}},
		Now:   func() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) },
		IDs:   events.NewIDSource(rand.New(rand.NewSource(1))),
	})
	s.ToolCall(ctx, "read_file", "call_1", json.RawMessage(`{"path":"services/api/users.ts"}`))
	s.Decide(ctx)

	rep, _ := session.Replay(ctx, db, s.Task(), session.ReplayOptions{})
	fmt.Println("reproduced:", rep.OK(), rep.Decisions)
	// Output:
	// reproduced: true 1
}

// Watch feeds the model's streamed output to the stream-triggered rules; a rule whose
// condition matches is recorded and returned, once per task unless it says once: false.
func ExampleSession_Watch() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "tasklog-example")
	defer os.RemoveAll(dir)
	db, _ := store.Open(filepath.Join(dir, "tasklog.db"), &store.Options{NoSync: true})
	defer db.Close()
	workspace := fstest.MapFS{".tasklog/rules/no-any.md": {Data: []byte(
		"---\ncondition: ':\\s*any\\b'\nscope: text\n---\nDo not type values as any.\n")}}
	s, _ := session.Open(ctx, db, uuid.Nil, session.Options{Roots: []session.Root{{Path: "/ws", FS: workspace}}})
	s.Decide(ctx)

	for _, delta := range []string{"function parse(input: an", "y) {", " let rest: any"} {
		fired, _ := s.Watch(ctx, session.StreamText, delta)
		for _, f := range fired {
			fmt.Printf("inject %s (matched %q): %s", f.Rule.Name, f.Match, f.Rule.Body)
		}
	}
	// Output:
	// inject no-any (matched ": any"): Do not type values as any.
}
