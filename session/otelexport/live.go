package otelexport

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/session"
)

// maxLiveTasks bounds the tasks a Live keeps a fold of; the one longest unused is let go
// (its open spans are ended and sent).
const maxLiveTasks = 256

// catchUpTimeout bounds the reading of a task's log a Live catches up on.
const catchUpTimeout = time.Minute

// Live exports tasks as their logs grow: the resident server tells it, after each request,
// which events the request appended (Appended). It folds them and queues the spans they
// complete; the network is the queue's business, never the request's.
type Live struct {
	q    *Queue
	opts Options

	mu    sync.Mutex
	tasks map[uuid.UUID]*liveTask
	order []uuid.UUID // least recently used first
	// catching counts the catch-ups running in the background (Close waits for them).
	catching sync.WaitGroup
	closed   bool
}

type liveTask struct {
	m    *Mapper
	next uint64 // the next seq to fold
	// busy is set while a background catch-up folds the log into m: only it touches m then,
	// and target is the head it must reach.
	busy   bool
	target uint64
}

// NewLive exports through q with the mapping's options.
func NewLive(q *Queue, opts Options) *Live {
	return &Live{q: q, opts: opts, tasks: map[uuid.UUID]*liveTask{}}
}

// Appended folds the events after seq before, up to after, of a task's log, read from er, and
// queues the spans they complete. A task it has not seen that already had events (before > 0:
// a server started in the middle of a session) is caught up in the background, from the log's
// start and silently up to before, so the request does not wait for its whole log to be read;
// what later requests append is folded when the catch-up is done.
func (l *Live) Appended(ctx context.Context, er session.EventReader, task uuid.UUID, before, after uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	t := l.tasks[task]
	if t == nil {
		t = &liveTask{m: NewMapper(task, l.opts), next: 1}
		l.tasks[task] = t
		if before > 0 {
			t.busy, t.target = true, after
			l.catching.Add(1)
			go l.catchUp(er, task, t, before)
		}
	}
	l.touch(task)
	if t.busy {
		t.target = max(t.target, after)
		return nil
	}
	spans, err := l.fold(ctx, er, task, t, before, after)
	if t.m.rootDone {
		l.forget(task, t)
	}
	l.q.Enqueue(spans)
	l.evict()
	return err
}

// fold folds a task's events from t.next up to after, silently up to before.
func (l *Live) fold(ctx context.Context, er session.EventReader, task uuid.UUID, t *liveTask, before, after uint64) ([]Span, error) {
	var spans []Span
	for ev, err := range er.Events(ctx, task, t.next) {
		if err != nil {
			return spans, fmt.Errorf("live trace of task %s: %w", task, err)
		}
		if ev.Seq > after {
			break
		}
		t.m.SetSilent(ev.Seq <= before)
		s, err := t.m.Add(ev)
		t.next = ev.Seq + 1
		if err != nil {
			return spans, err
		}
		spans = append(spans, s...)
		if t.next > after {
			break
		}
	}
	t.m.SetSilent(false)
	return spans, nil
}

// forget lets go of a task that ended (the agent ended its session: nothing more is coming)
// or whose catch-up failed. l.mu is held.
func (l *Live) forget(task uuid.UUID, t *liveTask) {
	if l.tasks[task] == t {
		delete(l.tasks, task)
		l.order = slices.DeleteFunc(l.order, func(u uuid.UUID) bool { return u == task })
	}
}

// catchUp folds a task's log from its start in the background, silently up to before, then
// what requests appended meanwhile (t.target). A read that fails (the server let go of the
// database) lets go of the task: the next request starts its catch-up again.
func (l *Live) catchUp(er session.EventReader, task uuid.UUID, t *liveTask, before uint64) {
	defer l.catching.Done()
	ctx, cancel := context.WithTimeout(context.Background(), catchUpTimeout)
	defer cancel()
	for {
		l.mu.Lock()
		target := t.target
		l.mu.Unlock()
		spans, err := l.fold(ctx, er, task, t, before, target)
		l.q.Enqueue(spans)
		l.mu.Lock()
		if err != nil || t.m.rootDone {
			l.forget(task, t)
			t.busy = false
			l.mu.Unlock()
			return
		}
		if t.target <= target || l.tasks[task] != t {
			t.busy = false
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
	}
}

func (l *Live) touch(task uuid.UUID) {
	l.order = slices.DeleteFunc(l.order, func(u uuid.UUID) bool { return u == task })
	l.order = append(l.order, task)
}

// evict lets go of the tasks used longest ago past maxLiveTasks; a task being caught up is
// left for later.
func (l *Live) evict() {
	for i := 0; len(l.order) > maxLiveTasks && i < len(l.order); {
		old := l.order[i]
		t := l.tasks[old]
		if t != nil && t.busy {
			i++
			continue
		}
		l.order = slices.Delete(l.order, i, i+1)
		if t != nil {
			l.q.Enqueue(t.m.Close())
		}
		delete(l.tasks, old)
	}
}

// Close waits for the catch-ups, ends the spans of every task still open (they are sent as
// they are, ended at their latest event), then closes the queue, sending what waits until ctx
// ends.
func (l *Live) Close(ctx context.Context) error {
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	done := make(chan struct{})
	go func() {
		l.catching.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return l.q.Close(ctx)
	}
	l.mu.Lock()
	for _, task := range l.order {
		l.q.Enqueue(l.tasks[task].m.Close())
	}
	l.tasks, l.order = map[uuid.UUID]*liveTask{}, nil
	l.mu.Unlock()
	return l.q.Close(ctx)
}
