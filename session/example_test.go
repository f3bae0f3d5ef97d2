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
		"apps/web/src/Header.tsx": {Data: []byte("export function Header() {}\n")},
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
	// prompt 1, request 1 (turn 1): frontend (cline:/home/me/shop/.clinerules/frontend.md) was included: matched — paths "apps/web/**" matched apps/web/src/Header.tsx
	//   paths apps/web/** matched apps/web/src/Header.tsx, from prose at seq 2, prompt 1, request 1
}

// A runtime that builds one prompt at a time hands its last decision back to DecideInto, which
// fills the same arrays again.
func ExampleSession_DecideInto() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "tasklog-example")
	defer os.RemoveAll(dir)
	db, _ := store.Open(filepath.Join(dir, "tasklog.db"), nil)
	defer db.Close()
	workspace := fstest.MapFS{
		".clinerules/frontend.md": {Data: []byte("---\npaths: [\"apps/web/**\"]\n---\nUse the design tokens.\n")},
		".clinerules/api.md":      {Data: []byte("---\npaths: [\"services/api/**\"]\n---\nVersion every endpoint.\n")},
		"apps/web/src/Header.tsx": {Data: []byte("export function Header() {}\n")},
		"services/api/cart.go":    {Data: []byte("package api\n")},
	}
	s, err := session.Open(ctx, db, uuid.Nil, session.Options{
		Roots:   []session.Root{{Path: "/home/me/shop", FS: workspace}},
		Runtime: events.Runtime{Name: "my-agent", Version: "0.1"},
	})
	if err != nil {
		panic(err)
	}
	// doc: begin
	var d session.Decision
	for _, message := range []string{"Fix apps/web/src/Header.tsx", "Now services/api/cart.go"} {
		s.UserMessage(ctx, message)
		if err := s.DecideInto(ctx, &d); err != nil { // d's arrays are filled again
			panic(err)
		}
		for _, a := range d.Applied {
			fmt.Printf("turn %d: %s\n", d.Turn, a.Name)
		}
	}
	// doc: end
	// Output:
	// turn 1: .clinerules/frontend.md
	// turn 2: .clinerules/api.md
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

// The manual's walk through of embedding tasklog in a runtime (docs/embedding.md), run: the body
// of embed between the doc markers is the page's code block, byte for byte (TestDocGoBlocks).
func Example_embedding() {
	dir, _ := os.MkdirTemp("", "tasklog-example")
	defer os.RemoveAll(dir)
	shop, home := filepath.Join(dir, "shop"), filepath.Join(dir, "home")
	for name, body := range map[string]string{
		".clinerules/general.md":   "Run the tests before you finish.\n",
		".clinerules/frontend.md":  "---\npaths: [\"apps/web/**\"]\n---\nUse the design tokens.\n",
		".tasklog/rules/no-any.md": "---\ncondition: ':\\s*any\\b'\nscope: text\n---\nDo not type values as any.\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(shop, name)), 0o755)
		os.WriteFile(filepath.Join(shop, name), []byte(body), 0o644)
	}
	os.MkdirAll(home, 0o755)

	callModel := func(prompt string) []string { // the model streams its answer in pieces
		fmt.Printf("prompt: %q\n", prompt)
		return []string{"let count: an", "y = 0"}
	}
	notifyUser := func(msg string) { fmt.Println("user sees:", msg) }
	inject := func(body string) { fmt.Printf("injected: %q\n", body) }
	err := embed(context.Background(), dir, shop, home, uuid.New(), callModel, notifyUser, inject)
	if err != nil {
		fmt.Println(err)
	}
	// Output:
	// user sees: conditional rule applied: .clinerules/frontend.md
	// prompt: "You are a coding agent.\n\n.clinerules/frontend.md\nUse the design tokens.\n\n.clinerules/general.md\nRun the tests before you finish."
	// injected: "Do not type values as any."
	// frontend included: true — paths "apps/web/**" matched apps/web/src/Header.tsx
}

func embed(ctx context.Context, dir, shop, home string, taskID uuid.UUID,
	callModel func(prompt string) []string, notifyUser, inject func(string)) error {
	// doc: begin
	db, err := store.Open(filepath.Join(dir, "tasklog.db"), nil) // durable: fsync per commit, group-committed
	if err != nil {
		return err
	}
	defer db.Close()
	s, err := session.Open(ctx, db, taskID, session.Options{
		Roots:   []session.Root{session.DirRoot(shop)}, // os.DirFS(shop), watched for rule changes
		Home:    os.DirFS(home),                        // global rules; nil for none
		Runtime: events.Runtime{Name: "my-agent", Version: "1.4.0"},
	})
	if err != nil {
		return err
	}
	defer s.Close() // when the task ends: stop watching its folders (the database stays open)

	// Record what happens, as it happens (each call returns the event's seq and an error).
	s.UserMessage(ctx, "Add a cart badge to apps/web/src/Header.tsx")
	s.Mention(ctx, "/apps/web/src/Header.tsx", "apps/web/src/Header.tsx")

	// At prompt-build time: decide, and put the rules into the system prompt. d.Prompt is Cline's
	// "<path>\n<body>" blocks; d.Tagged has the rules in the prompt, with their bodies, in
	// <generic-rules> and the on-request rules (a description only), by name and description, in
	// <domain-rules> for the model to read through rule://NAME.
	d, err := s.Decide(ctx)
	if err != nil {
		return err
	}
	for _, a := range d.Applied { // a.Name is the rule file's path, as Cline shows it
		notifyUser("conditional rule applied: " + a.Name)
	}
	systemPrompt := "You are a coding agent.\n\n" + d.Prompt

	// Stream-triggered rules: feed the model's output to Watch as it streams.
	for _, delta := range callModel(systemPrompt) {
		fired, err := s.Watch(ctx, session.StreamText, delta)
		if err != nil {
			return err
		}
		for _, f := range fired {
			inject(f.Rule.Body) // into the conversation before the model goes on
		}
	}

	// The model answers; record its tool calls and the files it wrote.
	s.ToolCall(ctx, "write_to_file", "call_7", json.RawMessage(`{"path":"apps/web/src/Badge.tsx"}`))
	s.FileWrite(ctx, "apps/web/src/Badge.tsx", events.OpCreate)

	// Later, from the log alone: why was frontend.md in the prompt at turn 1? (Printed whole,
	// x explains in sentences, with the events that put each path into the context.)
	x, err := s.Explain(ctx, 1, "frontend")
	if err != nil {
		return err
	}
	fmt.Println(x.Rule.Name, "included:", x.Included, "—", x.Rule.Detail)
	// doc: end
	return nil
}
