package web

import (
	"context"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/store"
)

// Cache keeps what the list and the rules pages read of each task, by the number of events its
// log held then: a log only grows, so a task whose count has not moved is not read again. A nil
// *Cache reads everything each time. It is safe for concurrent use.
type Cache struct {
	mu    sync.Mutex
	lines map[uuid.UUID]Task
	// read are the tasks' audits; auditing whether a goroutine reads those missing.
	read     map[uuid.UUID]taskAudit
	auditing bool
	// serving counts the pages being built and sent; idle is signalled when it falls to 0. The
	// background reader of audits waits for it before each task, so that a page a reader asked
	// for does not share the CPU with it.
	serving int
	idle    sync.Cond
	// stopReader stops the audit the background reader is reading, when a page begins: it is
	// read again once the page is sent.
	stopReader context.CancelFunc
	// pages are the task pages built last, the most recent last (at most keptPages).
	pages []cachedPage
}

// keptPages is how many tasks' pages the cache keeps: the pages open in a few browser tabs.
const keptPages = 4

type cachedPage struct {
	task uuid.UUID
	*taskPage
}

// page is the task's page built at the log's length events, or nil.
func (c *Cache) page(task uuid.UUID, events uint64) *taskPage {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.pages {
		if p.task == task && uint64(p.page.Events) == events {
			return p.taskPage
		}
	}
	return nil
}

// keepPage keeps p as the task's page, in place of the one before.
func (c *Cache) keepPage(task uuid.UUID, p *taskPage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	kept := c.pages[:0]
	for _, q := range c.pages {
		if q.task != task {
			kept = append(kept, q)
		}
	}
	if len(kept) >= keptPages {
		kept = append(kept[:0], kept[1:]...)
	}
	c.pages = append(kept, cachedPage{task, p})
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	c := &Cache{lines: map[uuid.UUID]Task{}, read: map[uuid.UUID]taskAudit{}}
	c.idle.L = &c.mu
	return c
}

// serve marks a page being served until the function it returns is called.
func (c *Cache) serve() (done func()) {
	c.mu.Lock()
	c.serving++
	if c.stopReader != nil {
		c.stopReader()
	}
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		if c.serving--; c.serving == 0 {
			c.idle.Broadcast()
		}
		c.mu.Unlock()
	}
}

// whenIdle waits until no page is being served, then returns a context that the next page to
// begin cancels.
func (c *Cache) whenIdle() (context.Context, context.CancelFunc) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.serving > 0 {
		c.idle.Wait()
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.stopReader = cancel
	return ctx, cancel
}

// tasks is Tasks through the cache.
func (c *Cache) tasks(ctx context.Context, db store.Store) ([]Task, error) {
	infos, err := db.Tasks()
	if err != nil {
		return nil, err
	}
	out := make([]Task, len(infos))
	var stale []int // the tasks to read: new, or grown since they were read
	for i, info := range infos {
		if c != nil {
			c.mu.Lock()
			t, ok := c.lines[info.Task]
			c.mu.Unlock()
			if ok && t.Events == info.Events {
				out[i] = t
				continue
			}
		}
		stale = append(stale, i)
	}
	// A server's first list reads every log through, most of it decompressing records: the
	// logs are read side by side, one reader a CPU.
	if err := eachParallel(ctx, len(stale), func(k int) error {
		i := stale[k]
		t, err := readTask(ctx, db, infos[i])
		if err != nil {
			return err
		}
		out[i] = t
		if c != nil {
			c.mu.Lock()
			c.lines[infos[i].Task] = t
			c.mu.Unlock()
		}
		return nil
	}); err != nil {
		return nil, err
	}
	sort.SliceStable(out, func(i, j int) bool {
		if !out[i].Last.Equal(out[j].Last) {
			return out[i].Last.After(out[j].Last)
		}
		return out[i].ID < out[j].ID
	})
	return out, nil
}

// audits fills in the tasks' audits: those kept at the task's length, then those it reads
// while budget (when not nil) says there is time; the others it marks pending and returns.
// Without a budget (a page that needs every audit, or the background reader's one task) the
// audits are read side by side, one reader a CPU, as the list reads the logs.
func (c *Cache) audits(ctx context.Context, db store.Store, tasks []Task, budget func() bool) []Task {
	var pending []Task
	type toRead struct {
		i  int
		id uuid.UUID
	}
	var reads []toRead // the tasks whose audits are read together, without a budget
	for i := range tasks {
		t := &tasks[i]
		id, err := parseTask(t.ID)
		if err != nil {
			continue
		}
		if c != nil {
			c.mu.Lock()
			a, ok := c.read[id]
			c.mu.Unlock()
			if ok && a.events == t.Events {
				a.fill(t)
				continue
			}
		}
		if budget == nil {
			reads = append(reads, toRead{i, id})
			continue
		}
		if !budget() {
			t.AuditPending = true
			pending = append(pending, *t)
			continue
		}
		if !c.audit(ctx, db, t, id) {
			pending = append(pending, *t)
		}
	}
	// No reader returns an error: a failed audit is kept as one (taskAudit.failed), and one a
	// done ctx stopped, or never began, is pending.
	read := make([]bool, len(reads))
	eachParallel(ctx, len(reads), func(k int) error {
		read[k] = c.audit(ctx, db, &tasks[reads[k].i], reads[k].id)
		return nil
	})
	for k, r := range reads {
		if !read[k] {
			tasks[r.i].AuditPending = true
			pending = append(pending, tasks[r.i])
		}
	}
	return pending
}

// audit reads the audit of t and fills it in, kept in the cache, and reports whether it did:
// it did not when ctx stopped it (then it is left to be read again).
func (c *Cache) audit(ctx context.Context, db store.Store, t *Task, id uuid.UUID) bool {
	a := auditTask(ctx, db, id, t.Events)
	if ctx.Err() != nil {
		t.AuditPending = true
		return false
	}
	a.fill(t)
	if c != nil {
		c.mu.Lock()
		c.read[id] = a
		c.mu.Unlock()
	}
	return true
}

// busy reports whether audits are being read in the background.
func (c *Cache) busy() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.auditing
}

// auditLater reads the audits of tasks in the background, one at a time and each when no page
// is being served (a page that begins stops the audit being read, which is read again after
// it), unless a reader is already at work (the next list page hands it what is still missing).
func (c *Cache) auditLater(src Source, tasks []Task) {
	c.mu.Lock()
	if c.auditing || len(tasks) == 0 {
		c.mu.Unlock()
		return
	}
	c.auditing = true
	c.mu.Unlock()
	go func() {
		defer func() {
			c.mu.Lock()
			c.auditing = false
			c.mu.Unlock()
		}()
		for i := 0; i < len(tasks); {
			ctx, cancel := c.whenIdle()
			src.View(ctx, func(db store.Store) error {
				c.audits(ctx, db, tasks[i:i+1], nil)
				return nil
			})
			c.mu.Lock()
			c.stopReader = nil
			c.mu.Unlock()
			if ctx.Err() == nil {
				i++ // else a page stopped it: read it again once the page is sent
			}
			cancel()
		}
	}()
}

// eachParallel calls fn for 0 to n-1, on as many goroutines as there are CPUs, and returns the
// error of the lowest index that failed; after a failure, the calls not yet begun are skipped.
func eachParallel(ctx context.Context, n int, fn func(i int) error) error {
	workers := min(n, runtime.GOMAXPROCS(0))
	if workers <= 1 {
		for i := range n {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := fn(i); err != nil {
				return err
			}
		}
		return nil
	}
	errs := make([]error, n)
	var next atomic.Int64
	var failed atomic.Bool
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for {
				// An index taken is called: every index below a failing one is, so the lowest
				// failure is the one reported.
				if failed.Load() || ctx.Err() != nil {
					return
				}
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if errs[i] = fn(i); errs[i] != nil {
					failed.Store(true)
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return ctx.Err()
}
