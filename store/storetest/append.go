package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// testAppendSeals appends batch after batch to one task: each gets the next sequence numbers
// and the task's id, is sealed into the chain exactly as computed here, and reads back as
// Append returned it.
func testAppendSeals(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	task := uuid.New()
	steps := []struct {
		name  string
		batch func(t *testing.T) []events.Event
	}{
		{"a new task's first batch starts at seq 1, chained from the zero hash", func(t *testing.T) []events.Event { return messages(t, 3, "first") }},
		{"the next batch continues from the head", func(t *testing.T) []events.Event { return messages(t, 4, "second") }},
		{"a batch of one", func(t *testing.T) []events.Event { return []events.Event{message(t, 2, "alone")} }},
		{"events with an origin keep it", func(t *testing.T) []events.Event {
			return []events.Event{imported(t, 0), imported(t, 1), imported(t, 2)}
		}},
		{"a time in another zone is kept as the same instant", func(t *testing.T) []events.Event {
			ev := message(t, 3, "from elsewhere")
			ev.Time = ev.Time.In(time.FixedZone("elsewhere", -7*3600))
			return []events.Event{ev}
		}},
		{"an event without a time", func(t *testing.T) []events.Event {
			ev := message(t, 3, "untimed")
			ev.Time = time.Time{}
			return []events.Event{ev}
		}},
		{"seq, prev and hash the caller set are ignored", func(t *testing.T) []events.Event {
			evs := messages(t, 2, "presealed")
			for i := range evs {
				evs[i].Seq = 99
				evs[i].Seal(events.Hash{1, 2, 3})
			}
			return evs
		}},
		{"a batch of many events", func(t *testing.T) []events.Event { return messages(t, 600, "bulk") }},
		// An imported agent session or a hook payload can carry megabytes in one event, and an
		// import writes batches of up to 4 MiB of data.
		{"an event of 2 MiB", func(t *testing.T) []events.Event {
			return []events.Event{large(t, 2<<20, "large tool output ")}
		}},
		{"a batch of 4 MiB", func(t *testing.T) []events.Event {
			evs := make([]events.Event, 8)
			for i := range evs {
				evs[i] = large(t, 512<<10, fmt.Sprintf("part %d ", i))
			}
			return evs
		}},
	}
	var want []events.Event
	var head store.Head
	for _, step := range steps {
		t.Run(step.name, func(t *testing.T) {
			batch := step.batch(t)
			given := make([][]byte, len(batch))
			for i := range batch {
				given[i] = batch[i].AppendBinary(nil)
			}
			a := mustAppend(t, s, task, head.Seq, batch...)
			if a.First != head.Seq+1 || a.Last != head.Seq+uint64(len(batch)) || a.Duplicate {
				t.Fatalf("Append = seq %d..%d duplicate %v, want %d..%d, not a duplicate",
					a.First, a.Last, a.Duplicate, head.Seq+1, head.Seq+uint64(len(batch)))
			}
			expect := sealed(task, head, batch)
			sameEvents(t, "the events Append returned", a.Events, expect)
			for i := range batch {
				if string(batch[i].AppendBinary(nil)) != string(given[i]) {
					t.Fatalf("Append changed the caller's event #%d", i)
				}
			}
			want = append(want, expect...)
			checkLog(t, s, task, want)
			last := want[len(want)-1]
			head = store.Head{Seq: last.Seq, Hash: last.Hash, LastTurn: last.Turn}
		})
	}
}

// testAppendKeepsNoData writes over the Data of the events appended once Append returned, as a
// session does that encodes its next decision into the last one's memory: the log still reads
// as appended, large events and small.
func testAppendKeepsNoData(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	task := uuid.New()
	batch := append(messages(t, 5, "kept"), large(t, 256<<10, "large tool output "))
	want := sealed(task, store.Head{}, batch)
	for i := range want {
		want[i].Data = bytes.Clone(want[i].Data)
	}
	mustAppend(t, s, task, 0, batch...)
	for _, ev := range batch {
		for i := range ev.Data {
			ev.Data[i] = 'x'
		}
	}
	checkLog(t, s, task, want)
}

// testExpectedVersion appends at a version other than the head: a *VersionConflictError with
// the actual head, and nothing written.
func testExpectedVersion(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	task := uuid.New()
	logged := mustAppend(t, s, task, 0, messages(t, 3, "logged")...).Events
	tests := []struct {
		name     string
		task     uuid.UUID
		expected uint64
		actual   uint64
	}{
		{"a task with events appended to as new", task, 0, 3},
		{"expected behind the head", task, 2, 3},
		{"expected ahead of the head", task, 4, 3},
		{"expected far ahead of the head", task, 1 << 40, 3},
		{"a new task appended to at a version", uuid.New(), 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Append(context.Background(), tt.task, tt.expected, message(t, 1, "late"))
			var vc *store.VersionConflictError
			if !errors.Is(err, store.ErrVersionConflict) || !errors.As(err, &vc) {
				t.Fatalf("Append at %d = %v, want a *VersionConflictError", tt.expected, err)
			}
			if vc.Task != tt.task || vc.Expected != tt.expected || vc.Actual != tt.actual {
				t.Errorf("conflict = %+v, want task %s expected %d actual %d", *vc, tt.task, tt.expected, tt.actual)
			}
			checkHead(t, s, tt.task, tt.actual)
		})
	}
	t.Run("the head after a conflict accepts the append", func(t *testing.T) {
		next := message(t, 1, "on time")
		a := mustAppend(t, s, task, 3, next)
		checkLog(t, s, task, append(logged, a.Events...))
	})
}

// testIdempotency repeats appends: an exact repeat of stored events is answered with their
// original positions whatever the expected version; any other overlap is ErrDuplicateID and
// writes nothing.
func testIdempotency(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	task, other := uuid.New(), uuid.New()
	e := messages(t, 3, "original")
	first := mustAppend(t, s, task, 0, e[0], e[1])
	mustAppend(t, s, task, 2, e[2])
	mustAppend(t, s, other, 0, message(t, 1, "another task"))
	logged := readAll(t, s, task, 1)

	changed := func(ev events.Event, f func(*events.Event)) events.Event { f(&ev); return ev }
	fresh := message(t, 3, "fresh")
	tests := []struct {
		name     string
		expected uint64
		evs      []events.Event
		first    uint64 // 0: refused with ErrDuplicateID
	}{
		{"the whole batch again at its version", 0, []events.Event{e[0], e[1]}, 1},
		{"the whole batch again at the head", 3, []events.Event{e[0], e[1]}, 1},
		{"the whole batch again at a version never seen", 7, []events.Event{e[0], e[1]}, 1},
		{"the sealed events Append returned", 2, first.Events, 1},
		{"one event of a batch", 3, []events.Event{e[1]}, 2},
		{"the last event alone", 1, []events.Event{e[2]}, 3},
		{"events of two appends together", 0, []events.Event{e[1], e[2]}, 2},
		{"the same instant in another zone", 0, []events.Event{changed(e[0], func(ev *events.Event) {
			ev.Time = ev.Time.In(time.FixedZone("elsewhere", 5*3600))
		})}, 1},
		{"stored events not next to each other", 3, []events.Event{e[0], e[2]}, 0},
		{"stored events in another order", 3, []events.Event{e[1], e[0]}, 0},
		{"a stored event then a new one", 3, []events.Event{e[2], fresh}, 0},
		{"a new event then a stored one", 3, []events.Event{fresh, e[2]}, 0},
		{"a stored id with other data", 3, []events.Event{changed(e[0], func(ev *events.Event) { ev.Data = []byte(`{"text":"edited"}`) })}, 0},
		{"a stored id with another turn", 3, []events.Event{changed(e[0], func(ev *events.Event) { ev.Turn = 9 })}, 0},
		{"a stored id with another type", 3, []events.Event{changed(e[0], func(ev *events.Event) { ev.Type = events.TypeMention })}, 0},
		{"a stored id with another time", 3, []events.Event{changed(e[0], func(ev *events.Event) { ev.Time = ev.Time.Add(time.Nanosecond) })}, 0},
		{"a stored id with another schema version", 3, []events.Event{changed(e[0], func(ev *events.Event) { ev.V++ })}, 0},
		{"a stored id with an origin added", 3, []events.Event{changed(e[0], func(ev *events.Event) { ev.Origin = &events.Origin{File: "x"} })}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := s.Append(context.Background(), task, tt.expected, tt.evs...)
			if tt.first == 0 {
				if !errors.Is(err, store.ErrDuplicateID) {
					t.Fatalf("Append = %+v, %v; want ErrDuplicateID", a, err)
				}
			} else {
				if err != nil {
					t.Fatalf("Append: %v; want the repeat answered as a duplicate", err)
				}
				last := tt.first + uint64(len(tt.evs)) - 1
				if !a.Duplicate || a.First != tt.first || a.Last != last {
					t.Fatalf("Append = seq %d..%d duplicate %v, want %d..%d duplicate", a.First, a.Last, a.Duplicate, tt.first, last)
				}
				sameEvents(t, "the events of the duplicate answer", a.Events, logged[tt.first-1:last])
			}
			checkLog(t, s, task, logged)
		})
	}
	t.Run("a stored id appended to another task is a new event there", func(t *testing.T) {
		a := mustAppend(t, s, other, 1, e[0])
		if a.Duplicate || a.First != 2 {
			t.Fatalf("Append = seq %d duplicate %v, want seq 2, new", a.First, a.Duplicate)
		}
		checkLog(t, s, task, logged)
	})
}

// testRefused appends batches no log could accept: each is refused with its sentinel and
// nothing of it is written.
func testRefused(t *testing.T, open func(t *testing.T) store.Store) {
	s := open(t)
	task, fresh := uuid.New(), uuid.New()
	logged := mustAppend(t, s, task, 0, messages(t, 2, "logged")...).Events
	noID := message(t, 1, "no id")
	noID.ID = ulid.ULID{}
	noType := message(t, 1, "no type")
	noType.Type = ""
	otherTasks := message(t, 1, "another task's")
	otherTasks.Task = uuid.New()
	ownTask := message(t, 1, "already marked with its own task")
	ownTask.Task = task
	twice := message(t, 1, "twice")
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Unix(1, 0))
	defer cancel2()
	tests := []struct {
		name string
		ctx  context.Context
		task uuid.UUID
		head uint64
		evs  []events.Event
		want error
	}{
		{"an event without an id", nil, task, 2, []events.Event{message(t, 1, "fine"), noID}, store.ErrMissingID},
		{"an event without an id in a new task", nil, fresh, 0, []events.Event{noID}, store.ErrMissingID},
		{"an event without a type", nil, task, 2, []events.Event{noType}, store.ErrInvalidEvent},
		{"an event marked with another task", nil, task, 2, []events.Event{message(t, 1, "fine"), otherTasks}, store.ErrInvalidEvent},
		{"no events", nil, task, 2, nil, store.ErrInvalidEvent},
		{"the nil task", nil, uuid.Nil, 0, []events.Event{message(t, 1, "nowhere")}, store.ErrInvalidEvent},
		{"an id twice in one batch", nil, fresh, 0, []events.Event{twice, message(t, 1, "between"), twice}, store.ErrDuplicateID},
		{"an id twice in one batch after the head", nil, task, 2, []events.Event{twice, twice}, store.ErrDuplicateID},
		{"a stored id twice in one batch", nil, task, 2, []events.Event{logged[0], logged[0]}, store.ErrDuplicateID},
		{"a context cancelled before the append", cancelled, fresh, 0, []events.Event{message(t, 1, "never")}, context.Canceled},
		{"a context past its deadline", expired, task, 2, []events.Event{message(t, 1, "too late")}, context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			if a, err := s.Append(ctx, tt.task, tt.head, tt.evs...); !errors.Is(err, tt.want) {
				t.Fatalf("Append = %+v, %v; want %v", a, err, tt.want)
			}
			if tt.task != uuid.Nil {
				checkHead(t, s, tt.task, tt.head)
			}
		})
	}
	t.Run("an event already marked with its own task is accepted", func(t *testing.T) {
		a := mustAppend(t, s, task, 2, ownTask)
		checkLog(t, s, task, append(logged, sealed(task, store.Head{Seq: 2, Hash: logged[1].Hash}, []events.Event{ownTask})...))
		if a.First != 3 {
			t.Errorf("appended at seq %d, want 3", a.First)
		}
	})
	t.Run("nothing was written to any task", func(t *testing.T) {
		tasks, err := s.Tasks()
		if err != nil {
			t.Fatal(err)
		}
		if len(tasks) != 1 || tasks[0].Task != task {
			t.Errorf("Tasks = %+v, want only %s", tasks, task)
		}
	})
}
