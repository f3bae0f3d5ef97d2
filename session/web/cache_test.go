package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// TestEachParallel: every index is called once when nothing fails; a failure is reported as
// the lowest failing index's error, whatever order the goroutines ran in.
func TestEachParallel(t *testing.T) {
	errAt := func(i int) error { return fmt.Errorf("task %d: %w", i, errBroken) }
	for _, tc := range []struct {
		name string
		n    int
		fail []int // the indexes whose call fails
	}{
		{name: "none", n: 0},
		{name: "one", n: 1},
		{name: "many", n: 200},
		{name: "one fails", n: 200, fail: []int{150}},
		{name: "two fail, the lower is told", n: 200, fail: []int{3, 7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := make([]atomic.Int32, tc.n)
			err := eachParallel(context.Background(), tc.n, func(i int) error {
				calls[i].Add(1)
				for _, f := range tc.fail {
					if i == f {
						return errAt(i)
					}
				}
				return nil
			})
			if len(tc.fail) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				for i := range calls {
					if n := calls[i].Load(); n != 1 {
						t.Errorf("index %d called %d times", i, n)
					}
				}
				return
			}
			if !errors.Is(err, errBroken) {
				t.Fatalf("got %v, want the failure", err)
			}
			// The lowest failing index is always called: the indexes are handed out in order,
			// and nothing is skipped before a failure.
			if want := errAt(tc.fail[0]).Error(); err.Error() != want {
				t.Errorf("got %q, want %q", err, want)
			}
		})
	}
}

var errBroken = errors.New("broken")

// TestEachParallelCanceled: a canceled context stops the calls not yet begun and is the error.
func TestEachParallelCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var calls atomic.Int32
	err := eachParallel(ctx, 100, func(int) error { calls.Add(1); return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if n := calls.Load(); n != 0 {
		t.Errorf("%d calls after the context was canceled", n)
	}
}

// servingSource is a Source whose View notes a read made while a page of cache was being
// served.
type servingSource struct {
	storeSource
	cache            *Cache
	views, whileBusy atomic.Int32
	// pageAt, when not 0, is the read during which a page begins (and ends after it).
	pageAt int32
}

func (s *servingSource) View(ctx context.Context, fn func(store.Store) error) error {
	if s.views.Add(1) == s.pageAt {
		defer s.cache.serve()()
	}
	s.cache.mu.Lock()
	busy := s.cache.serving > 0
	s.cache.mu.Unlock()
	if busy && s.views.Load() != s.pageAt {
		s.whileBusy.Add(1)
	}
	return s.storeSource.View(ctx, fn)
}

// TestAuditsWaitForPages: the background reader of audits reads none while a page is being
// served, and all of them once it is sent.
func TestAuditsWaitForPages(t *testing.T) {
	db, ids := benchStore(t, 3, 200)
	c := NewCache()
	src := &servingSource{storeSource: storeSource{db: db}, cache: c}
	tasks, err := c.tasks(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	done := c.serve()
	c.auditLater(src, tasks)
	for range 1000 {
		runtime.Gosched() // time for a reader that does not wait to read
	}
	if n := src.views.Load(); n != 0 {
		t.Errorf("%d audits read while a page was being served", n)
	}
	done()
	for c.busy() {
		runtime.Gosched()
	}
	if n, busy := src.views.Load(), src.whileBusy.Load(); n != int32(len(ids)) || busy != 0 {
		t.Errorf("%d audits read after the page (%d of them while one was served), want %d", n, busy, len(ids))
	}
	for _, id := range ids {
		if _, ok := c.read[id]; !ok {
			t.Errorf("task %s: no audit read", id)
		}
	}
}

// TestListLeavesAuditsToTheReader: while the background reader of audits is at work, a list
// page reads none itself (it would share the CPU with the reader, to read the same audits).
func TestListLeavesAuditsToTheReader(t *testing.T) {
	db, _ := benchStore(t, 3, 200)
	for _, reading := range []bool{false, true} {
		hd, h := newHandler(&storeSource{db: db}, Options{})
		hd.auditBudget = time.Hour // the page has time for every audit, however busy the machine
		hd.cache.mu.Lock()
		hd.cache.auditing = reading // as if a reader were at work
		hd.cache.mu.Unlock()
		req := httptest.NewRequest("GET", "/", nil)
		req.Host = "127.0.0.1:8080"
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET /: %d %s", rec.Code, rec.Body)
		}
		hd.cache.mu.Lock()
		read := len(hd.cache.read)
		hd.cache.mu.Unlock()
		want := 3 // the three tasks' audits
		if reading {
			want = 0
		}
		if read != want {
			t.Errorf("a reader at work: %v; the page read %d audits itself, want %d", reading, read, want)
		}
	}
}

// TestPageStopsAnAudit: a page that begins while the background reader reads an audit stops it;
// the audit is not kept as failed, and is read again, whole, once the page is sent.
func TestPageStopsAnAudit(t *testing.T) {
	db, ids := benchStore(t, 3, 200)
	c := NewCache()
	src := &servingSource{storeSource: storeSource{db: db}, cache: c, pageAt: 2}
	tasks, err := c.tasks(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	c.auditLater(src, tasks)
	for c.busy() {
		runtime.Gosched()
	}
	if n, want := src.views.Load(), int32(len(ids)+1); n != want {
		t.Errorf("%d reads of audits, want %d: one for each task and one again for the one a page stopped", n, want)
	}
	for _, id := range ids {
		if a, ok := c.read[id]; !ok || a.failed != "" {
			t.Errorf("task %s: audit read %v, failed %q", id, ok, a.failed)
		}
	}
}

// TestAuditsSideBySide: audits read without a budget, side by side, are each kept and filled in
// in their task's place; with the request gone, none is read, kept or called failed: every task
// is pending, in order.
func TestAuditsSideBySide(t *testing.T) {
	db, ids := benchStore(t, 5, 200)
	for _, gone := range []bool{false, true} {
		c := NewCache()
		tasks, err := c.tasks(context.Background(), db)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		if gone {
			cancel()
		}
		pending := c.audits(ctx, db, tasks, nil)
		cancel()
		if gone {
			if len(pending) != len(ids) || len(c.read) != 0 {
				t.Fatalf("request gone: %d pending, %d kept; want %d and 0", len(pending), len(c.read), len(ids))
			}
			for i, p := range pending {
				if p.ID != tasks[i].ID || !p.AuditPending || !tasks[i].AuditPending || p.AuditFailed != "" {
					t.Errorf("pending %d: %s (pending %v, failed %q), want %s pending", i, p.ID, p.AuditPending, p.AuditFailed, tasks[i].ID)
				}
			}
			continue
		}
		if len(pending) != 0 || len(c.read) != len(ids) {
			t.Fatalf("%d pending, %d kept; want 0 and %d", len(pending), len(c.read), len(ids))
		}
		for _, task := range tasks {
			one, err := session.Audit(context.Background(), db, uuid.MustParse(task.ID), session.AuditOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if task.AuditPending || task.AuditFailed != "" || task.uses == nil || task.Findings != len(one.Findings) ||
				!reflect.DeepEqual(*task.uses, countRules(one.Requests)) {
				t.Errorf("task %s: pending %v, failed %q, findings %d (want %d), counts %v", task.ID, task.AuditPending,
					task.AuditFailed, task.Findings, len(one.Findings), task.uses != nil)
			}
		}
	}
}
