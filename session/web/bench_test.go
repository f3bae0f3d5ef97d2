package web

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// benchStore holds tasks tasks of n events each: one recorded through a session (a prompt, then
// tool calls into six folders with a decision after every fifth, over six rule files, three of
// them scoped), the others copies of its log under their own ids, an hour apart.
func benchStore(b testing.TB, tasks, n int) (store.Store, []uuid.UUID) {
	b.Helper()
	ctx := context.Background()
	db := openDB(b)
	ws := fstest.MapFS{
		".clinerules/general.md":  {Data: []byte("Run the tests before you finish.\n")},
		".clinerules/frontend.md": {Data: []byte("---\npaths: [\"apps/web/**\"]\n---\nUse the design tokens.\n")},
		".clinerules/backend.md":  {Data: []byte("---\npaths: [\"services/api/**\"]\n---\nValidate input.\n")},
		".clinerules/billing.md":  {Data: []byte("---\npaths: [\"services/billing/**\"]\n---\nMoney is integer cents.\n")},
		"AGENTS.md":               {Data: []byte("Be brief.\n")},
		".cursor/rules/docs.mdc":  {Data: []byte("---\nglobs: docs/**\n---\nPresent tense.\n")},
	}
	ids := events.NewIDSource(rand.New(rand.NewSource(50)))
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	first := uuid.MustParse("50000000-0000-4000-8000-000000000000")
	s, err := session.Open(ctx, db, first, session.Options{
		Roots:   []session.Root{{Path: "/work/monorepo", FS: ws}},
		Runtime: events.Runtime{Name: "my-agent", Version: "1.0"},
		Now:     func() time.Time { return start },
		IDs:     ids,
	})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.UserMessage(ctx, "Tidy up every package of the monorepo."); err != nil {
		b.Fatal(err)
	}
	folders := []string{"apps/web/src", "services/api", "services/billing", "docs", "infra", "lib"}
	for i := 0; s.Version() < uint64(n); i++ {
		params, _ := json.Marshal(map[string]string{"path": fmt.Sprintf("%s/f%d.ts", folders[(i/40)%len(folders)], i%200)})
		if _, err := s.ToolCall(ctx, "read_file", fmt.Sprintf("call_%d", i), params); err != nil {
			b.Fatal(err)
		}
		if i%5 == 4 {
			if _, err := s.Decide(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	s.Close()
	var log []events.Event
	for ev, err := range db.Events(ctx, first, 1) {
		if err != nil {
			b.Fatal(err)
		}
		log = append(log, ev)
	}
	out := []uuid.UUID{first}
	for k := 1; k < tasks; k++ {
		task := uuid.MustParse(fmt.Sprintf("50000000-0000-4000-8000-%012d", k))
		batch := make([]events.Event, 0, 1000)
		var version uint64
		flush := func() {
			a, err := db.Append(ctx, task, version, batch...)
			if err != nil {
				b.Fatal(err)
			}
			version = a.Last
			batch = batch[:0]
		}
		for _, ev := range log {
			ev.Task, ev.Seq, ev.Prev, ev.Hash = task, 0, events.Hash{}, events.Hash{}
			ev.Time = ev.Time.Add(time.Duration(k) * time.Hour)
			if ev.ID, err = ids.New(ev.Time); err != nil {
				b.Fatal(err)
			}
			if batch = append(batch, ev); len(batch) == cap(batch) {
				flush()
			}
		}
		if len(batch) > 0 {
			flush()
		}
		out = append(out, task)
	}
	return db, out
}

// BenchmarkPages is the server side of the web app on a store of 50 tasks of 10,000 events:
// the list of tasks, one task's report page (built and rendered, with the live script), and the
// rules (every task's decisions and deliveries, and audits). Cold is a server's first request
// (each log read through; the list reads the audits it has no time for in the background, after
// the page); warm a later one, when no log grew (the list and the rules keep what they read of
// each task by its length, the task page is kept by its log's length). task/cold is a task's
// first page, task/warm the same page again.
func BenchmarkPages(b *testing.B) {
	db, tasks := benchStore(b, 50, 10_000)
	page := func(b *testing.B, path string, cold bool) {
		var size int
		hd, h := newHandler(&storeSource{db: db}, Options{})
		// settle waits, off the clock, for the audits the list left to the background: the
		// next request then finds them read (warm), and no reader takes the CPU from it.
		settle := func() {
			b.StopTimer()
			for hd.cache.busy() {
				time.Sleep(10 * time.Millisecond)
			}
			b.StartTimer()
		}
		get := func() {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("GET", path, nil)
			req.Host = "127.0.0.1:8080"
			h.ServeHTTP(rec, req)
			if rec.Code != http.StatusOK {
				b.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body.String())
			}
			size = rec.Body.Len()
		}
		if !cold {
			get()
			settle()
			get()
		}
		for b.Loop() {
			if cold {
				hd, h = newHandler(&storeSource{db: db}, Options{})
			}
			get()
			settle()
		}
		b.ReportMetric(float64(size), "bytes/page")
	}
	b.Run("list/cold", func(b *testing.B) { page(b, "/", true) })
	b.Run("list/warm", func(b *testing.B) { page(b, "/", false) })
	b.Run("task/cold", func(b *testing.B) { page(b, "/task/"+tasks[len(tasks)-1].String(), true) })
	b.Run("task/warm", func(b *testing.B) { page(b, "/task/"+tasks[len(tasks)-1].String(), false) })
	b.Run("rules/cold", func(b *testing.B) { page(b, "/rules", true) })
	b.Run("rules/warm", func(b *testing.B) { page(b, "/rules", false) })
}
