package serve

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// sessions are the open agent sessions, one per task, each used by one request at a time: a
// hook's record, decide and deliver run as one step, as they do in a hook process holding the
// database. When the server lets go of the database they are parked, not closed: their
// snapshots are stored, and the next request on a task carries its session on with the
// database opened again when the task's log is where the session left it (Session.Reattach),
// keeping its projection and its watched folders.
type sessions struct {
	s   *Server
	max int

	mu    sync.Mutex
	open  map[uuid.UUID]*entry
	clock uint64
	// opened counts the sessions opened from the log (tests read it).
	opened int
}

type entry struct {
	mu sync.Mutex
	a  *session.AgentSession
	// db is the store a is attached to: a closed one while a is parked.
	db   store.Store
	used uint64
	// gone is set once the entry was closed: a request that waited for it opens the task again.
	gone bool
}

func newSessions(s *Server, max int) *sessions {
	return &sessions{s: s, max: max, open: map[uuid.UUID]*entry{}}
}

// openSpec is what opening a task needs when it is not in the log yet.
type openSpec struct {
	agent   agentlog.Agent
	started *events.TaskStarted
}

// with runs fn on the task's session, opening it first when needed (a task not in the log is
// started from spec, or is not found without one). Requests on one task run one at a time.
func (ss *sessions) with(ctx context.Context, db store.Store, task uuid.UUID, spec openSpec, fn func(a *session.AgentSession) error) error {
	for {
		ss.mu.Lock()
		e := ss.open[task]
		if e == nil {
			e = &entry{}
			ss.open[task] = e
		}
		ss.clock++
		e.used = ss.clock
		ss.mu.Unlock()

		e.mu.Lock()
		if e.gone {
			e.mu.Unlock()
			continue
		}
		if e.a != nil && e.db != db {
			// Parked when the server let go of the database: it carries on if the log is
			// where it left it, else the task is opened again (its snapshots were stored
			// when it was parked).
			if err := e.a.Reattach(db); err != nil {
				e.a.Session.Close()
				e.a = nil
			} else {
				e.db = db
			}
		}
		if e.a == nil {
			a, err := ss.openAgent(ctx, db, task, spec)
			if err != nil {
				e.gone = true
				ss.forget(task, e)
				e.mu.Unlock()
				return err
			}
			e.a, e.db = a, db
		}
		if spec.agent != "" && spec.agent != e.a.Agent() {
			e.mu.Unlock()
			return fmt.Errorf("task %s as %s: %w (%q)", task, spec.agent, session.ErrAgentMismatch, e.a.Agent())
		}
		before := e.a.Version()
		err := fn(e.a)
		if after := e.a.Version(); err == nil && after > before && ss.s.opts.Appended != nil {
			if aerr := ss.s.opts.Appended(ctx, db, task, before, after); aerr != nil {
				ss.s.log.Printf("task %s: after the request: %v", task, aerr)
			}
		}
		if errors.Is(err, store.ErrVersionConflict) || errors.Is(err, session.ErrStale) {
			// The log moved under the session (another process wrote it while the server
			// waited for the database), or the session folded a hook it could not write:
			// open it again next time.
			e.a.Close()
			e.a, e.gone = nil, true
			ss.forget(task, e)
		}
		e.mu.Unlock()
		ss.evict()
		return err
	}
}

func (ss *sessions) openAgent(ctx context.Context, db store.Store, task uuid.UUID, spec openSpec) (*session.AgentSession, error) {
	ss.mu.Lock()
	ss.opened++
	ss.mu.Unlock()
	// The server decides on a task many times: its roots are watched, not checked file by file.
	return session.OpenAgent(ctx, db, task, session.AgentOptions{Agent: spec.agent, Started: spec.started, Home: ss.s.opts.Home, Watch: true})
}

func (ss *sessions) forget(task uuid.UUID, e *entry) {
	ss.mu.Lock()
	if ss.open[task] == e {
		delete(ss.open, task)
	}
	ss.mu.Unlock()
}

// close closes one task's session; false when it was not open.
func (ss *sessions) close(task uuid.UUID) (bool, error) {
	ss.mu.Lock()
	e := ss.open[task]
	delete(ss.open, task)
	ss.mu.Unlock()
	if e == nil {
		return false, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gone = true
	if e.a == nil {
		return false, nil
	}
	var err error
	if e.db == ss.s.current() {
		err = e.a.Close()
	} else {
		e.a.Session.Close() // parked: its snapshots were stored when it was parked
	}
	e.a = nil
	return true, err
}

// maxParked is how many sessions stay open while the server does not hold the database: each
// keeps an inotify instance a root, of the 128 Linux allows a user by default.
const maxParked = 8

// park stores the snapshots of the maxParked most recently used sessions before the server lets
// go of the database, and leaves them open for the next request (see with); it closes the
// others. The caller holds the server's dbmu and no request is under way.
func (ss *sessions) park() error {
	type used struct {
		task uuid.UUID
		e    *entry
		at   uint64
	}
	ss.mu.Lock()
	entries := make([]used, 0, len(ss.open))
	for t, e := range ss.open {
		entries = append(entries, used{t, e, e.used})
	}
	ss.mu.Unlock()
	slices.SortFunc(entries, func(a, b used) int { return cmp.Compare(b.at, a.at) })
	var errs []error
	for i, u := range entries {
		if i >= maxParked {
			_, err := ss.close(u.task)
			errs = append(errs, err)
			continue
		}
		u.e.mu.Lock()
		if u.e.a != nil && !u.e.gone {
			errs = append(errs, u.e.a.Checkpoint())
		}
		u.e.mu.Unlock()
	}
	return errors.Join(errs...)
}

// evict closes the least recently used sessions past the bound.
func (ss *sessions) evict() {
	for {
		ss.mu.Lock()
		if len(ss.open) <= ss.max {
			ss.mu.Unlock()
			return
		}
		var oldest uuid.UUID
		var min uint64
		for t, e := range ss.open {
			if min == 0 || e.used < min {
				oldest, min = t, e.used
			}
		}
		ss.mu.Unlock()
		if _, err := ss.close(oldest); err != nil {
			ss.s.log.Printf("close task %s: %v", oldest, err)
		}
	}
}

// closeAll closes every session, storing their snapshots.
func (ss *sessions) closeAll() error {
	ss.mu.Lock()
	tasks := make([]uuid.UUID, 0, len(ss.open))
	for t := range ss.open {
		tasks = append(tasks, t)
	}
	ss.mu.Unlock()
	var errs []error
	for _, t := range tasks {
		if _, err := ss.close(t); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// goos is the operating system recorded for tasks the server starts without one given.
var goos = runtime.GOOS
