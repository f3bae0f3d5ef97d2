package otelexport

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
)

// maxLiveTasks bounds the tasks a Live keeps a fold of; the one longest unused is let go
// (its open spans are ended and sent).
const maxLiveTasks = 256

// Live exports tasks as their logs grow: the resident server tells it, after each request,
// which events the request appended (Appended). It folds them and queues the spans they
// complete; the network is the queue's business, never the request's.
type Live struct {
	q    *Queue
	opts Options

	mu    sync.Mutex
	tasks map[uuid.UUID]*liveTask
	order []uuid.UUID // least recently used first
}

type liveTask struct {
	m    *Mapper
	next uint64 // the next seq to fold
}

// NewLive exports through q with the mapping's options.
func NewLive(q *Queue, opts Options) *Live {
	return &Live{q: q, opts: opts, tasks: map[uuid.UUID]*liveTask{}}
}

// Appended folds the events after seq before, up to after, of a task's log, read from er, and
// queues the spans they complete. A task it has not seen is folded from its start, silently up
// to before: those spans were the concern of whoever appended them.
func (l *Live) Appended(ctx context.Context, er session.EventReader, task uuid.UUID, before, after uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.tasks[task]
	if t == nil {
		t = &liveTask{m: NewMapper(task, l.opts), next: 1}
		l.tasks[task] = t
	}
	l.touch(task)
	var spans []Span
	for ev, err := range er.Events(ctx, task, t.next) {
		if err != nil {
			return fmt.Errorf("live trace of task %s: %w", task, err)
		}
		if ev.Seq > after {
			break
		}
		t.m.SetSilent(ev.Seq <= before)
		s, err := t.m.Add(ev)
		t.next = ev.Seq + 1
		if err != nil {
			return err
		}
		spans = append(spans, s...)
		if ev.Type == events.TypeAgentStopped && t.m.rootDone {
			delete(l.tasks, task)
			l.order = slices.DeleteFunc(l.order, func(u uuid.UUID) bool { return u == task })
			break
		}
	}
	l.q.Enqueue(spans)
	l.evict()
	return nil
}

func (l *Live) touch(task uuid.UUID) {
	l.order = slices.DeleteFunc(l.order, func(u uuid.UUID) bool { return u == task })
	l.order = append(l.order, task)
}

func (l *Live) evict() {
	for len(l.order) > maxLiveTasks {
		old := l.order[0]
		l.order = l.order[1:]
		if t := l.tasks[old]; t != nil {
			l.q.Enqueue(t.m.Close())
		}
		delete(l.tasks, old)
	}
}

// Close ends the spans of every task still open (they are sent as they are, ended at their
// latest event), then closes the queue, sending what waits until ctx ends.
func (l *Live) Close(ctx context.Context) error {
	l.mu.Lock()
	for _, task := range l.order {
		l.q.Enqueue(l.tasks[task].m.Close())
	}
	l.tasks, l.order = map[uuid.UUID]*liveTask{}, nil
	l.mu.Unlock()
	return l.q.Close(ctx)
}
