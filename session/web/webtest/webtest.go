// Package webtest records the tasks the web app's tests and benchmarks show, for the tests of
// session/web and of the command line alike.
package webtest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// MonorepoTask records task in db until it holds about n events: a prompt, then reads into six
// folders of a monorepo over six rule files (three of them scoped), a decision after every
// fifth read. Every event is stamped at, and its ids come from ids.
func MonorepoTask(tb testing.TB, db store.Store, task uuid.UUID, n int, at time.Time, ids *events.IDSource) {
	tb.Helper()
	ctx := context.Background()
	ws := fstest.MapFS{
		".clinerules/general.md":  {Data: []byte("Run the tests before you finish.\n")},
		".clinerules/frontend.md": {Data: []byte("---\npaths: [\"apps/web/**\"]\n---\nUse the design tokens.\n")},
		".clinerules/backend.md":  {Data: []byte("---\npaths: [\"services/api/**\"]\n---\nValidate input.\n")},
		".clinerules/billing.md":  {Data: []byte("---\npaths: [\"services/billing/**\"]\n---\nMoney is integer cents.\n")},
		"AGENTS.md":               {Data: []byte("Be brief.\n")},
		".cursor/rules/docs.mdc":  {Data: []byte("---\nglobs: docs/**\n---\nPresent tense.\n")},
	}
	s, err := session.Open(ctx, db, task, session.Options{
		Roots:   []session.Root{{Path: "/work/monorepo", FS: ws}},
		Runtime: events.Runtime{Name: "my-agent", Version: "1.0"},
		Now:     func() time.Time { return at },
		IDs:     ids,
	})
	if err != nil {
		tb.Fatal(err)
	}
	defer s.Close()
	if _, err := s.UserMessage(ctx, "Tidy up every package of the monorepo."); err != nil {
		tb.Fatal(err)
	}
	folders := []string{"apps/web/src", "services/api", "services/billing", "docs", "infra", "lib"}
	for i := 0; s.Version() < uint64(n); i++ {
		params, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("%s/f%d.ts", folders[(i/40)%len(folders)], i%200)})
		if _, err := s.ToolCall(ctx, "read_file", fmt.Sprintf("call_%d", i), params); err != nil {
			tb.Fatal(err)
		}
		if i%5 == 4 {
			if _, err := s.Decide(ctx); err != nil {
				tb.Fatal(err)
			}
		}
	}
}

// Copies appends to db k copies of task's log, under the ids 50000000-0000-4000-8000-00000000000N
// for N from 1 to k, each an hour later than the one before, with ids of their own from ids,
// 1,000 events a commit. It returns the copies' ids.
func Copies(tb testing.TB, db store.Store, task uuid.UUID, k int, ids *events.IDSource) []uuid.UUID {
	tb.Helper()
	ctx := context.Background()
	var log []events.Event
	for ev, err := range db.Events(ctx, task, 1) {
		if err != nil {
			tb.Fatal(err)
		}
		log = append(log, ev)
	}
	out := make([]uuid.UUID, 0, k)
	for n := 1; n <= k; n++ {
		id := uuid.MustParse(fmt.Sprintf("50000000-0000-4000-8000-%012d", n))
		batch := make([]events.Event, 0, 1000)
		var version uint64
		flush := func() {
			a, err := db.Append(ctx, id, version, batch...)
			if err != nil {
				tb.Fatal(err)
			}
			version = a.Last
			batch = batch[:0]
		}
		for _, ev := range log {
			ev.Task, ev.Seq, ev.Prev, ev.Hash = id, 0, events.Hash{}, events.Hash{}
			ev.Time = ev.Time.Add(time.Duration(n) * time.Hour)
			var err error
			if ev.ID, err = ids.New(ev.Time); err != nil {
				tb.Fatal(err)
			}
			if batch = append(batch, ev); len(batch) == cap(batch) {
				flush()
			}
		}
		if len(batch) > 0 {
			flush()
		}
		out = append(out, id)
	}
	return out
}
