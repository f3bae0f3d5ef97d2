package storetest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// testCancelled has writers append with contexts cancelled at random moments, before, during
// and after the write: an append that returns an error wrote nothing, and one that returns
// nil is stored, so the log holds exactly the acknowledged events.
func testCancelled(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	const writers, appends = 4, 40
	tasks := make([]uuid.UUID, writers)
	acked := make([][]events.Event, writers)
	refused := make([]int, writers)
	late := make([]int, writers) // acknowledged, though the cancel came before the answer
	var wg sync.WaitGroup
	for w := range writers {
		tasks[w] = uuid.New()
		batches := make([][]events.Event, appends)
		for i := range batches {
			batches[i] = messages(t, 1+i%3, "maybe cancelled")
		}
		rng := rand.New(rand.NewPCG(uint64(w), 17))
		wg.Go(func() {
			var head store.Head
			for _, batch := range batches {
				ctx, cancel := context.WithCancel(context.Background())
				// From at once to well after a local commit: some appends are refused, some
				// cancelled while they are under way, some done before the cancel.
				time.AfterFunc(time.Duration(rng.IntN(400))*time.Microsecond, cancel)
				a, err := s.Append(ctx, tasks[w], head.Seq, batch...)
				if err == nil && ctx.Err() != nil {
					late[w]++
				}
				cancel()
				switch {
				case err == nil:
					acked[w] = append(acked[w], a.Events...)
					last := a.Events[len(a.Events)-1]
					head = store.Head{Seq: last.Seq, Hash: last.Hash}
				case errors.Is(err, context.Canceled):
					refused[w]++
				case errors.Is(err, store.ErrVersionConflict):
					t.Errorf("writer %d: the task has no other writer, so an append answered with an error was written after all: %v", w, err)
					return
				default:
					t.Errorf("writer %d: Append = %v, want nil or context.Canceled", w, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for w, task := range tasks {
		if len(acked[w]) == 0 {
			_, err := s.Head(task)
			if !errors.Is(err, store.ErrTaskNotFound) {
				t.Errorf("writer %d: every append was refused but Head = %v", w, err)
			}
			continue
		}
		checkLog(t, s, task, acked[w])
	}
	t.Logf("%d appends per writer; refused as cancelled: %v; acknowledged though cancelled meanwhile: %v", appends, refused, late)
}

// testCloseDuringAppends closes the store while writers append: each append is either
// acknowledged or refused with ErrClosed, and Close returns once they are answered.
func testCloseDuringAppends(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	const writers = 8
	started := make(chan struct{}, writers)
	errs := make([]error, writers)
	acked := make([]int, writers)
	var closed atomic.Bool
	var wg sync.WaitGroup
	for w := range writers {
		task := uuid.New()
		wg.Go(func() {
			var head uint64
			for i := 0; ; i++ {
				late := closed.Load()
				a, err := s.Append(context.Background(), task, head, message(t, 1, "until closed"))
				if i == 0 {
					started <- struct{}{}
				}
				switch {
				case err != nil:
					errs[w] = err
					return
				case late:
					errs[w] = fmt.Errorf("an append begun after Close returned was acknowledged at seq %d", a.Last)
					return
				}
				head = a.Last
				acked[w]++
			}
		})
	}
	for range writers {
		<-started
	}
	if err := s.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	closed.Store(true)
	wg.Wait()
	for w, err := range errs {
		if !errors.Is(err, store.ErrClosed) {
			t.Errorf("writer %d: after %d appends, Append = %v, want ErrClosed", w, acked[w], err)
		}
	}
}
