package web

import (
	"math/rand"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session/web/webtest"
	"github.com/tasklog/tasklog/store"
)

// benchStore holds tasks tasks of n events each: one recorded through a session (a prompt, then
// tool calls into six folders with a decision after every fifth, over six rule files, three of
// them scoped), the others copies of its log under their own ids, an hour apart.
func benchStore(b testing.TB, tasks, n int) (store.Store, []uuid.UUID) {
	b.Helper()
	db := openDB(b)
	ids := events.NewIDSource(rand.New(rand.NewSource(50)))
	start := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	first := uuid.MustParse("50000000-0000-4000-8000-000000000000")
	webtest.MonorepoTask(b, db, first, n, start, ids)
	return db, append([]uuid.UUID{first}, webtest.Copies(b, db, first, tasks-1, ids)...)
}

// BenchmarkPages is the server side of the web app on a store of 50 tasks of 10,000 events:
// the list of tasks, one task's report page (built and rendered, with the live script), and the
// rules (every task's audit, each rule counted from it). Cold is a server's first request
// (each log read through; the list reads the audits it has no time for in the background, after
// the page); warm a later one, when no log grew (the list and the rules keep what they read of
// each task by its length, the task page is kept by its log's length). task/cold is a task's
// first page, task/warm the same page again; part/warm what a click on a cell of its grid loads.
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
	// A cell of the grid clicked: the evidence of one request, from the task's page kept.
	b.Run("part/warm", func(b *testing.B) {
		page(b, "/task/"+tasks[len(tasks)-1].String()+"/part?at=10000&t=1", false)
	})
	b.Run("rules/cold", func(b *testing.B) { page(b, "/rules", true) })
	b.Run("rules/warm", func(b *testing.B) { page(b, "/rules", false) })
}
