package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// testEvents reads a log from every kind of starting point, stops early, and reads what is not
// there.
func testEvents(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	task := uuid.New()
	// Long enough that a store reading in pages of a few hundred events needs several, and
	// interleaved with another task's appends, which must not show.
	other := uuid.New()
	var logged []events.Event
	for len(logged) < 1300 {
		logged = append(logged, mustAppend(t, s, task, uint64(len(logged)), messages(t, 100, "page")...).Events...)
		mustAppend(t, s, other, uint64(len(logged)/100-1), message(t, 1, "between pages"))
	}
	n := uint64(len(logged))
	tests := []struct {
		name  string
		from  uint64
		first uint64 // seq of the first event streamed; 0: none
	}{
		{"from seq 0, the beginning", 0, 1},
		{"from seq 1, the beginning", 1, 1},
		{"from the middle", 517, 517},
		{"from the last event", n, n},
		{"from just past the head: nothing", n + 1, 0},
		{"from far past the head: nothing", n + 1000, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var want []events.Event
			if tt.first != 0 {
				want = logged[tt.first-1:]
			}
			sameEvents(t, "the events streamed", readAll(t, s, task, tt.from), want)
		})
	}
	t.Run("stopping after a few events", func(t *testing.T) {
		var got []events.Event
		for ev, err := range s.Events(context.Background(), task, 10) {
			if err != nil {
				t.Fatal(err)
			}
			if got = append(got, ev); len(got) == 3 {
				break
			}
		}
		sameEvents(t, "the events before the stop", got, logged[9:12])
		sameEvents(t, "a read after the stop", readAll(t, s, task, 1), logged)
	})
	t.Run("the data of a streamed event is the caller's to keep", func(t *testing.T) {
		var kept []events.Event
		for ev, err := range s.Events(context.Background(), task, n-1) {
			if err != nil {
				t.Fatal(err)
			}
			kept = append(kept, ev)
		}
		for _, ev := range readAll(t, s, task, 1) {
			clear(ev.Data)
		}
		sameEvents(t, "events kept across another read", kept, logged[n-2:])
	})
	t.Run("an unknown task yields ErrTaskNotFound", func(t *testing.T) {
		for _, from := range []uint64{0, 1, 5} {
			got := 0
			var err error
			for ev, e := range s.Events(context.Background(), uuid.New(), from) {
				if e != nil {
					err = e
					break
				}
				got++
				_ = ev
			}
			if got != 0 || !errors.Is(err, store.ErrTaskNotFound) {
				t.Errorf("from %d: %d events then %v, want ErrTaskNotFound", from, got, err)
			}
		}
	})
	t.Run("a cancelled context ends the stream with its error", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		got := 0
		var err error
		for _, e := range s.Events(ctx, task, 1) {
			if e != nil {
				err = e
				break
			}
			if got++; got == 2 {
				cancel()
			}
		}
		cancel()
		if !errors.Is(err, context.Canceled) || got >= len(logged) {
			t.Errorf("%d events then %v, want context.Canceled before the end", got, err)
		}
	})
	t.Run("the loop body may append to the task it reads", func(t *testing.T) {
		short := uuid.New()
		logged := mustAppend(t, s, short, 0, messages(t, 3, "short")...).Events
		var got []events.Event
		for ev, err := range s.Events(context.Background(), short, 1) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, ev)
			if ev.Seq == 2 {
				logged = append(logged, mustAppend(t, s, short, 3, message(t, 1, "appended while reading")).Events...)
			}
		}
		// The stream may end at the head it found first, or go on to the event appended since.
		if len(got) != 3 {
			sameEvents(t, "the events streamed", got, logged)
		}
		sameEvents(t, "the events streamed", got, logged[:len(got)])
		checkLog(t, s, short, logged)
	})
}

// testHeadAndTasks follows the head and the task list as tasks are appended to.
func testHeadAndTasks(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	t.Run("a new store lists no tasks", func(t *testing.T) {
		tasks, err := s.Tasks()
		if err != nil || len(tasks) != 0 {
			t.Fatalf("Tasks = %+v, %v; want none", tasks, err)
		}
	})
	t.Run("an unknown task has no head", func(t *testing.T) {
		checkHead(t, s, uuid.New(), 0)
	})
	// Tasks whose ids sort in another order than they are created in.
	ids := []uuid.UUID{
		uuid.MustParse("f0000000-0000-4000-8000-000000000001"),
		uuid.MustParse("00000000-0000-4000-8000-000000000002"),
		uuid.MustParse("80000000-0000-4000-8000-000000000003"),
		uuid.MustParse("0000000f-0000-4000-8000-000000000004"),
	}
	want := map[uuid.UUID]store.TaskInfo{}
	for i, task := range ids {
		evs := messages(t, 5+i*7, "task")
		a := mustAppend(t, s, task, 0, evs...)
		last := a.Events[len(a.Events)-1]
		want[task] = store.TaskInfo{Task: task, Events: a.Last, LastTurn: last.Turn}
		t.Run(fmt.Sprintf("the head of a task of %d events is its last", len(evs)), func(t *testing.T) {
			h, err := s.Head(task)
			if err != nil {
				t.Fatal(err)
			}
			if w := (store.Head{Seq: last.Seq, Hash: last.Hash, LastTurn: last.Turn}); h != w {
				t.Errorf("Head = %+v, want %+v", h, w)
			}
		})
	}
	t.Run("the head moves with the next append", func(t *testing.T) {
		a := mustAppend(t, s, ids[1], want[ids[1]].Events, message(t, 42, "turn 42"))
		want[ids[1]] = store.TaskInfo{Task: ids[1], Events: a.Last, LastTurn: 42}
		h, err := s.Head(ids[1])
		if err != nil || h.Seq != a.Last || h.Hash != a.Events[0].Hash || h.LastTurn != 42 {
			t.Errorf("Head = %+v, %v; want seq %d turn 42 and the new event's hash", h, err, a.Last)
		}
	})
	t.Run("tasks are listed sorted by id with their counts and last turns", func(t *testing.T) {
		got, err := s.Tasks()
		if err != nil {
			t.Fatal(err)
		}
		sorted := slices.Clone(ids)
		slices.SortFunc(sorted, func(a, b uuid.UUID) int { return slices.Compare(a[:], b[:]) })
		var w []store.TaskInfo
		for _, task := range sorted {
			w = append(w, want[task])
		}
		if !slices.Equal(got, w) {
			t.Errorf("Tasks = %+v\nwant %+v", got, w)
		}
	})
}
