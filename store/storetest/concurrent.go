package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// testConcurrent has many goroutines append at once, to one task and to many: every
// acknowledged event is stored exactly once where its acknowledgement said, each writer's
// batches in its order and whole, and every log is a sound chain.
func testConcurrent(t *testing.T, open func(t *testing.T) store.Store) {
	tests := []struct {
		name      string
		writers   int
		tasks     int // writer w appends its n-th batch to task (w+n) % tasks
		batches   int // per writer
		batchSize int
	}{
		{"many writers on one task, retrying on conflicts", 8, 1, 12, 1},
		{"many writers on one task, in batches", 6, 1, 8, 4},
		{"each writer on its own task", 8, 8, 20, 1},
		{"many writers on a few tasks", 16, 3, 10, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := open(t)
			tasks := make([]uuid.UUID, tt.tasks)
			for i := range tasks {
				tasks[i] = uuid.New()
			}
			w := newWorkload(t, tt.writers, tt.batches, tt.batchSize)
			var wg sync.WaitGroup
			for i := range tt.writers {
				wg.Go(func() {
					for n, batch := range w.batches[i] {
						task := tasks[(i+n)%len(tasks)]
						a, err := appendRetrying(s, task, batch)
						if err == nil {
							err = sameIDs(a.Events, batch)
						}
						if err != nil {
							t.Errorf("writer %d batch %d: %v", i, n, err)
							return
						}
						w.acked(task, a)
					}
				})
			}
			wg.Wait()
			w.check(t, s, tasks)
		})
	}
	t.Run("one batch sent by many writers at once is stored once", func(t *testing.T) {
		s := open(t)
		task := uuid.New()
		batch := messages(t, 3, "sent by everyone")
		const writers = 8
		answers := make([]store.Appended, writers)
		errs := make([]error, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i := range writers {
			wg.Go(func() {
				<-start
				answers[i], errs[i] = s.Append(context.Background(), task, 0, batch...)
			})
		}
		close(start)
		wg.Wait()
		written := 0
		for i := range writers {
			if errs[i] != nil {
				t.Fatalf("writer %d: %v; a repeat must be answered as a duplicate", i, errs[i])
			}
			if !answers[i].Duplicate {
				written++
			}
			if answers[i].First != 1 || answers[i].Last != 3 {
				t.Errorf("writer %d: seq %d..%d, want 1..3", i, answers[i].First, answers[i].Last)
			}
		}
		if written != 1 {
			t.Errorf("%d writers were told they wrote the batch, want exactly 1", written)
		}
		checkLog(t, s, task, sealed(task, store.Head{}, batch))
	})
}

// appendRetrying appends batch at the head, re-reading the head after every conflict, as a
// session does.
func appendRetrying(s store.Store, task uuid.UUID, batch []events.Event) (store.Appended, error) {
	var expected uint64
	if h, err := s.Head(task); err == nil {
		expected = h.Seq
	} else if !errors.Is(err, store.ErrTaskNotFound) {
		return store.Appended{}, err
	}
	for tries := 0; ; tries++ {
		a, err := s.Append(context.Background(), task, expected, batch...)
		var vc *store.VersionConflictError
		switch {
		case err == nil:
			if a.Duplicate {
				return a, fmt.Errorf("a first append was answered as a duplicate at seq %d", a.First)
			}
			return a, nil
		case !errors.As(err, &vc):
			return a, err
		case vc.Actual == expected:
			return a, fmt.Errorf("conflict at the expected version itself: %w", err)
		case tries > 10_000:
			return a, fmt.Errorf("still conflicting after %d tries: %w", tries, err)
		}
		expected = vc.Actual
	}
}

// sameIDs says how the events an append returned differ from the batch sent, if they do.
func sameIDs(got, sent []events.Event) error {
	if len(got) != len(sent) {
		return fmt.Errorf("the append returned %d events for a batch of %d", len(got), len(sent))
	}
	for i := range got {
		if got[i].ID != sent[i].ID {
			return fmt.Errorf("the append returned event %s as #%d of the batch, which sent %s", got[i].ID, i, sent[i].ID)
		}
	}
	return nil
}

// workload is what the writers of a concurrent test send and what they were told.
type workload struct {
	batches [][][]events.Event // writer, batch, event
	// origin says which writer sent an event, and its position in that writer's sending order.
	origin map[ulid.ULID][2]int

	mu sync.Mutex
	// acks are where each acknowledged event was stored, as the acknowledgement said.
	acks map[uuid.UUID]map[uint64]ulid.ULID
	// firsts are the seqs that start an acknowledged batch, with its length.
	firsts map[uuid.UUID]map[uint64]int
}

func newWorkload(t *testing.T, writers, batches, size int) *workload {
	w := &workload{origin: map[ulid.ULID][2]int{}, acks: map[uuid.UUID]map[uint64]ulid.ULID{},
		firsts: map[uuid.UUID]map[uint64]int{}}
	w.batches = make([][][]events.Event, writers)
	for i := range writers {
		w.batches[i] = make([][]events.Event, batches)
		for n := range batches {
			w.batches[i][n] = messages(t, size, fmt.Sprintf("writer %d batch %d", i, n))
			for k, ev := range w.batches[i][n] {
				w.origin[ev.ID] = [2]int{i, n*size + k}
			}
		}
	}
	return w
}

func (w *workload) acked(task uuid.UUID, a store.Appended) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.acks[task] == nil {
		w.acks[task], w.firsts[task] = map[uint64]ulid.ULID{}, map[uint64]int{}
	}
	for _, ev := range a.Events {
		w.acks[task][ev.Seq] = ev.ID
	}
	w.firsts[task][a.First] = len(a.Events)
}

// check reads every task back: each holds exactly the events acknowledged for it, at the
// acknowledged positions, each writer's in its order, each batch unbroken, in a sound chain.
func (w *workload) check(t *testing.T, s store.Store, tasks []uuid.UUID) {
	t.Helper()
	total := 0
	for _, task := range tasks {
		got := readAll(t, s, task, 1)
		if len(got) != len(w.acks[task]) {
			t.Errorf("task %s holds %d events, %d were acknowledged", task, len(got), len(w.acks[task]))
		}
		chain := store.NewChainVerifier(task)
		last := map[int]int{}
		for i := range got {
			ev := &got[i]
			if err := chain.Check(ev); err != nil {
				t.Fatalf("the log read back is not a sound chain: %v", err)
			}
			if id, ok := w.acks[task][ev.Seq]; !ok || id != ev.ID {
				t.Fatalf("task %s seq %d holds event %s, but %s was acknowledged there", task, ev.Seq, ev.ID, id)
			}
			o := w.origin[ev.ID]
			if prev, ok := last[o[0]]; ok && o[1] <= prev {
				t.Errorf("task %s seq %d: writer %d's event #%d after its event #%d", task, ev.Seq, o[0], o[1], prev)
			}
			last[o[0]] = o[1]
		}
		for first, n := range w.firsts[task] {
			for k := range n {
				if seq := first + uint64(k); seq > uint64(len(got)) || w.origin[got[seq-1].ID][0] != w.origin[got[first-1].ID][0] {
					t.Fatalf("task %s: the batch acknowledged at seq %d is broken at seq %d", task, first, seq)
				}
			}
		}
		if err := s.Verify(context.Background(), task); err != nil {
			t.Errorf("Verify: %v", err)
		}
		total += len(got)
	}
	want := 0
	for _, bs := range w.batches {
		for _, b := range bs {
			want += len(b)
		}
	}
	if total != want {
		t.Errorf("%d events stored in all, %d sent", total, want)
	}
}
