package otelexport

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultQueueSize is how many spans a Queue holds waiting for the collector.
const DefaultQueueSize = 2048

// batchSize is the most spans one export request carries.
const batchSize = 512

// BatchDelay is how long a Queue gathers spans before it sends them, unless batchSize spans
// wait: one request carries the spans of many hooks, sent between them rather than right
// beside each one (on a machine of 2 cores, sending at each hook made a whole hook 8 to 12 %
// slower at the median).
const BatchDelay = time.Second

// Sender sends spans; *Exporter is one.
type Sender interface {
	Export(ctx context.Context, spans []Span) error
}

// Queue hands spans to a Sender from a goroutine of its own, gathered for BatchDelay. Enqueue
// never waits: spans that do not fit are dropped and counted, so a collector that is down or
// never answers costs the caller (a hook) nothing.
type Queue struct {
	send    Sender
	size    int
	delay   time.Duration
	onError func(error)

	mu      sync.Mutex
	spans   []Span
	closed  bool
	wake    chan struct{}
	full    chan struct{} // batchSize spans wait
	closing chan struct{} // closed by Close
	done    chan struct{}
	dropped atomic.Int64
	sent    atomic.Int64
	failed  atomic.Int64
}

// NewQueue starts a queue of size spans (0: DefaultQueueSize) in front of send; onError, when
// set, is told of each failed export (from the queue's goroutine).
func NewQueue(send Sender, size int, onError func(error)) *Queue {
	return newQueue(send, size, BatchDelay, onError)
}

func newQueue(send Sender, size int, delay time.Duration, onError func(error)) *Queue {
	if size <= 0 {
		size = DefaultQueueSize
	}
	q := &Queue{send: send, size: size, delay: delay, onError: onError, wake: make(chan struct{}, 1),
		full: make(chan struct{}, 1), closing: make(chan struct{}), done: make(chan struct{})}
	go q.run()
	return q
}

// Enqueue adds spans to the queue without waiting; those past its size are dropped.
func (q *Queue) Enqueue(spans []Span) {
	if len(spans) == 0 {
		return
	}
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		q.dropped.Add(int64(len(spans)))
		return
	}
	room := q.size - len(q.spans)
	if room < len(spans) {
		q.dropped.Add(int64(len(spans) - max(room, 0)))
		spans = spans[:max(room, 0)]
	}
	q.spans = append(q.spans, spans...)
	if len(q.spans) >= batchSize {
		// Under q.mu, as run's drain of it: the signal is never stale.
		select {
		case q.full <- struct{}{}:
		default:
		}
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Dropped counts the spans dropped because the queue was full (or closed).
func (q *Queue) Dropped() int64 { return q.dropped.Load() }

// Sent counts the spans the collector accepted.
func (q *Queue) Sent() int64 { return q.sent.Load() }

// Failed counts the spans whose export failed.
func (q *Queue) Failed() int64 { return q.failed.Load() }

// Len is how many spans wait.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.spans)
}

func (q *Queue) run() {
	defer close(q.done)
	for {
		q.mu.Lock()
		n := len(q.spans)
		closed := q.closed
		q.mu.Unlock()
		if n == 0 {
			if closed {
				return
			}
			<-q.wake
			continue
		}
		if n < batchSize && !closed {
			q.gather()
		}
		q.mu.Lock()
		n = min(len(q.spans), batchSize)
		batch := q.spans[:n:n]
		q.spans = q.spans[n:]
		if len(q.spans) < batchSize {
			select {
			case <-q.full: // said of spans this batch takes
			default:
			}
		}
		q.mu.Unlock()
		q.export(batch)
	}
}

// gather waits for more spans to send with those that wait: for q.delay, until batchSize spans
// wait, or until the queue closes.
func (q *Queue) gather() {
	t := time.NewTimer(q.delay)
	defer t.Stop()
	select {
	case <-t.C:
	case <-q.full:
	case <-q.closing:
	}
}

// exportTimeout bounds one export from the queue, on top of the exporter's own timeout.
const exportTimeout = 15 * time.Second

func (q *Queue) export(batch []Span) {
	ctx, cancel := context.WithTimeout(context.Background(), exportTimeout)
	defer cancel()
	if err := q.send.Export(ctx, batch); err != nil {
		q.failed.Add(int64(len(batch)))
		if q.onError != nil {
			q.onError(err)
		}
		return
	}
	q.sent.Add(int64(len(batch)))
}

// Close sends what waits, until ctx ends, and stops the queue; spans still waiting then are
// dropped.
func (q *Queue) Close(ctx context.Context) error {
	q.mu.Lock()
	if !q.closed {
		close(q.closing)
	}
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
	select {
	case <-q.done:
		return nil
	case <-ctx.Done():
		q.mu.Lock()
		q.dropped.Add(int64(len(q.spans)))
		q.spans = nil
		q.mu.Unlock()
		return ctx.Err()
	}
}
