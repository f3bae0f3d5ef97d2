package store

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/tasklog/tasklog/events"
)

func TestAppendAssignsSequenceAndChainsHashes(t *testing.T) {
	db := openTest(t)
	task := uuid.New()
	a := mustAppend(t, db, task, 0, msgs(t, 3, "first")...)
	if a.First != 1 || a.Last != 3 || a.Duplicate || len(a.Events) != 3 {
		t.Fatalf("Append = first %d last %d dup %v, %d events", a.First, a.Last, a.Duplicate, len(a.Events))
	}
	b := mustAppend(t, db, task, 3, msgs(t, 2, "second")...)
	if b.First != 4 || b.Last != 5 {
		t.Fatalf("second Append = %d..%d, want 4..5", b.First, b.Last)
	}
	stored := collect(t, db, task, 1)
	if len(stored) != 5 {
		t.Fatalf("%d events stored, want 5", len(stored))
	}
	var prev events.Hash
	for i, ev := range stored {
		if ev.Seq != uint64(i+1) || ev.Task != task {
			t.Errorf("event %d: seq %d task %s", i, ev.Seq, ev.Task)
		}
		if ev.Prev != prev {
			t.Errorf("seq %d: Prev %s, want %s", ev.Seq, ev.Prev, prev)
		}
		if ev.Hash != ev.ComputeHash() {
			t.Errorf("seq %d: Hash is not the hash of the content", ev.Seq)
		}
		prev = ev.Hash
	}
	for i, ev := range append(a.Events, b.Events...) {
		if ev.Hash != stored[i].Hash || ev.Seq != stored[i].Seq {
			t.Errorf("returned event %d differs from the stored one", i)
		}
	}
	h, err := db.Head(task)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Head{Seq: 5, Hash: prev, LastTurn: stored[4].Turn}); h != want {
		t.Errorf("Head = %+v, want %+v", h, want)
	}
	if err := db.Verify(context.Background(), task); err != nil {
		t.Error(err)
	}
}

func TestAppendVersionConflict(t *testing.T) {
	db := openTest(t)
	task := uuid.New()
	mustAppend(t, db, task, 0, msgs(t, 2, "x")...)
	for _, expected := range []uint64{0, 1, 3} {
		_, err := db.Append(context.Background(), task, expected, msg(t, 1, "late"))
		var vc *VersionConflictError
		if !errors.Is(err, ErrVersionConflict) || !errors.As(err, &vc) {
			t.Fatalf("expected %d: error %v is not a version conflict", expected, err)
		}
		if vc.Actual != 2 || vc.Expected != expected || vc.Task != task {
			t.Errorf("conflict = %+v, want actual 2", vc)
		}
	}
}

func TestAppendRefusesInvalidEvents(t *testing.T) {
	db := openTest(t)
	task := uuid.New()
	noID := msg(t, 1, "x")
	noID.ID = ulid.ULID{}
	noType := msg(t, 1, "x")
	noType.Type = ""
	otherTask := msg(t, 1, "x")
	otherTask.Task = uuid.New()
	twice := msg(t, 1, "x")
	// Kept as nanoseconds since 1970 in 64 bits, 2300 would come back as 1715.
	tooLate := msg(t, 1, "x")
	tooLate.Time = time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		task uuid.UUID
		evs  []events.Event
		want error
	}{
		{"no id", task, []events.Event{msg(t, 1, "ok"), noID}, ErrMissingID},
		{"no type", task, []events.Event{noType}, ErrInvalidEvent},
		{"another task's event", task, []events.Event{otherTask}, ErrInvalidEvent},
		{"no events", task, nil, ErrInvalidEvent},
		{"nil task", uuid.Nil, []events.Event{msg(t, 1, "x")}, ErrInvalidEvent},
		{"id twice in the batch", task, []events.Event{twice, msg(t, 1, "y"), twice}, ErrDuplicateID},
		{"a time the log cannot keep", task, []events.Event{msg(t, 1, "ok"), tooLate}, ErrInvalidEvent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := db.Append(context.Background(), tt.task, 0, tt.evs...); !errors.Is(err, tt.want) {
				t.Errorf("error %v, want %v", err, tt.want)
			}
		})
	}
	if _, err := db.Head(task); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("a refused append wrote something: Head error %v", err)
	}
}

func TestAppendCancelledContextWritesNothing(t *testing.T) {
	db := openTest(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	task := uuid.New()
	if _, err := db.Append(ctx, task, 0, msg(t, 1, "never")); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if _, err := db.Head(task); !errors.Is(err, ErrTaskNotFound) {
		t.Errorf("Head error %v, want ErrTaskNotFound", err)
	}
}

func TestAppendIdempotentByID(t *testing.T) {
	db := openTest(t)
	task, other := uuid.New(), uuid.New()
	e := msgs(t, 3, "orig")
	first := mustAppend(t, db, task, 0, e[0], e[1])
	mustAppend(t, db, task, 2, e[2])
	mustAppend(t, db, other, 0, msg(t, 1, "other task"))

	changed := func(ev events.Event, f func(*events.Event)) events.Event { f(&ev); return ev }
	elsewhere := e[0].Time.In(time.FixedZone("elsewhere", 5*3600))
	fresh := msg(t, 3, "fresh")
	tests := []struct {
		name     string
		task     uuid.UUID
		expected uint64
		evs      []events.Event
		first    uint64 // 0: refused with ErrDuplicateID
	}{
		{"whole batch again", task, 0, []events.Event{e[0], e[1]}, 1},
		{"whole batch, stale version", task, 7, []events.Event{e[0], e[1]}, 1},
		{"the sealed events returned before", task, 2, first.Events, 1},
		{"one event of a batch", task, 3, []events.Event{e[1]}, 2},
		{"across two appends", task, 0, []events.Event{e[1], e[2]}, 2},
		{"same instant in another zone", task, 0, []events.Event{changed(e[0], func(ev *events.Event) { ev.Time = elsewhere })}, 1},
		{"not consecutive", task, 3, []events.Event{e[0], e[2]}, 0},
		{"reordered", task, 3, []events.Event{e[1], e[0]}, 0},
		{"partly stored", task, 3, []events.Event{e[2], fresh}, 0},
		{"partly stored, new first", task, 3, []events.Event{fresh, e[2]}, 0},
		{"different data", task, 3, []events.Event{changed(e[0], func(ev *events.Event) { ev.Data = []byte(`{"text":"edited"}`) })}, 0},
		{"different turn", task, 3, []events.Event{changed(e[0], func(ev *events.Event) { ev.Turn = 9 })}, 0},
		{"different type", task, 3, []events.Event{changed(e[0], func(ev *events.Event) { ev.Type = events.TypeMention })}, 0},
		{"different origin", task, 3, []events.Event{changed(e[0], func(ev *events.Event) { ev.Origin = &events.Origin{File: "x"} })}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := db.Append(context.Background(), tt.task, tt.expected, tt.evs...)
			if tt.first == 0 {
				if !errors.Is(err, ErrDuplicateID) {
					t.Fatalf("error %v, want ErrDuplicateID", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !a.Duplicate || a.First != tt.first || a.Last != tt.first+uint64(len(tt.evs))-1 {
				t.Fatalf("Append = %d..%d duplicate %v, want %d.. duplicate", a.First, a.Last, a.Duplicate, tt.first)
			}
			for i, ev := range a.Events {
				if ev.Seq != tt.first+uint64(i) || ev.ID != tt.evs[i].ID || ev.Hash != ev.ComputeHash() {
					t.Errorf("returned event %d is not the stored one: %+v", i, ev)
				}
			}
		})
	}
	if h, _ := db.Head(task); h.Seq != 3 {
		t.Errorf("head moved to %d; a duplicate or refused append wrote", h.Seq)
	}
	if h, _ := db.Head(other); h.Seq != 1 {
		t.Errorf("other task's head moved to %d", h.Seq)
	}
	if err := db.Verify(context.Background(), task); err != nil {
		t.Error(err)
	}
}

func TestAppendRaceOnOneTask(t *testing.T) {
	db := openTest(t)
	task := uuid.New()
	for round := range uint64(50) {
		var wg sync.WaitGroup
		start := make(chan struct{})
		errs := make([]error, 2)
		for i := range errs {
			ev := msg(t, 1, fmt.Sprintf("round %d writer %d", round, i))
			wg.Go(func() {
				<-start
				_, errs[i] = db.Append(context.Background(), task, round, ev)
			})
		}
		close(start)
		wg.Wait()
		won := 0
		for _, err := range errs {
			var vc *VersionConflictError
			switch {
			case err == nil:
				won++
			case errors.As(err, &vc) && vc.Actual == round+1:
			default:
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if won != 1 {
			t.Fatalf("round %d: %d writers won, want exactly 1", round, won)
		}
	}
	if h, _ := db.Head(task); h.Seq != 50 {
		t.Errorf("head %d, want 50", h.Seq)
	}
	if err := db.Verify(context.Background(), task); err != nil {
		t.Error(err)
	}
}

// Every writer appends to every task, re-reading the head on a conflict; afterwards each task
// must be a sound chain holding every writer's events in that writer's order.
func TestAppendManyWritersManyTasks(t *testing.T) {
	db := openTest(t)
	const writers, perWriter = 16, 40
	tasks := make([]uuid.UUID, 8)
	for i := range tasks {
		tasks[i] = uuid.New()
	}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for n := range perWriter {
				task := tasks[(w+n)%len(tasks)]
				ev := msg(t, 1, fmt.Sprintf("%d/%d", w, n))
				for {
					h, err := db.Head(task)
					if err != nil && !errors.Is(err, ErrTaskNotFound) {
						t.Error(err)
						return
					}
					_, err = db.Append(context.Background(), task, h.Seq, ev)
					if err == nil {
						break
					}
					if !errors.Is(err, ErrVersionConflict) {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	total := 0
	for _, task := range tasks {
		if err := db.Verify(context.Background(), task); err != nil {
			t.Error(err)
		}
		last := make(map[int]int)
		for _, ev := range collect(t, db, task, 1) {
			p, err := ev.Payload()
			if err != nil {
				t.Fatal(err)
			}
			var w, n int
			fmt.Sscanf(p.(*events.UserMessage).Text, "%d/%d", &w, &n)
			if prev, ok := last[w]; ok && n <= prev {
				t.Errorf("task %s: writer %d's event %d after its event %d", task, w, n, prev)
			}
			last[w] = n
			total++
		}
	}
	if total != writers*perWriter {
		t.Errorf("%d events stored, want %d", total, writers*perWriter)
	}
}

// One request's refusal or storage failure must not cost the others of its group commit.
func TestGroupCommitIsolatesRequests(t *testing.T) {
	db := openTest(t)
	a, b, c, d := uuid.New(), uuid.New(), uuid.New(), uuid.New()
	mustAppend(t, db, b, 0, msg(t, 1, "b1"))
	broken := errors.New("disk on fire")
	cTail := msg(t, 1, "c2")
	db.stageHook = func(r *appendRequest, i int) error {
		if r.task == c && i == 1 {
			return broken
		}
		return nil
	}
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	req := func(ctx context.Context, task uuid.UUID, expected uint64, evs ...events.Event) *appendRequest {
		return &appendRequest{ctx: ctx, task: task, expected: expected, evs: evs, wake: make(chan struct{}, 1)}
	}
	bg := context.Background()
	batch := []*appendRequest{
		req(bg, a, 0, msg(t, 1, "a1"), msg(t, 1, "a2")),
		req(bg, b, 0, msg(t, 1, "b conflict")),
		req(bg, c, 0, msg(t, 1, "c1"), cTail),
		req(cancelled, d, 0, msg(t, 1, "d1")),
		req(bg, a, 2, msg(t, 1, "a3")),
	}
	db.commit(batch)
	got := make([]appendResult, len(batch))
	for i, r := range batch {
		<-r.wake
		got[i] = r.res
	}
	if got[0].err != nil || got[0].appended.Last != 2 {
		t.Errorf("a: %+v", got[0])
	}
	if !errors.Is(got[1].err, ErrVersionConflict) {
		t.Errorf("b: %v, want a version conflict", got[1].err)
	}
	if !errors.Is(got[2].err, broken) {
		t.Errorf("c: %v, want the storage error", got[2].err)
	}
	if !errors.Is(got[3].err, context.Canceled) {
		t.Errorf("d: %v, want context.Canceled", got[3].err)
	}
	if got[4].err != nil || got[4].appended.First != 3 {
		t.Errorf("a again: %+v", got[4])
	}
	db.stageHook = nil
	for task, want := range map[uuid.UUID]uint64{a: 3, b: 1, c: 0, d: 0} {
		h, err := db.Head(task)
		if want == 0 {
			if !errors.Is(err, ErrTaskNotFound) {
				t.Errorf("task %s: Head %+v, %v: a failed request wrote", task, h, err)
			}
			continue
		}
		if err != nil || h.Seq != want {
			t.Errorf("task %s: Head %+v, %v, want seq %d", task, h, err, want)
		}
	}
	// The failed request's events can be appended later: nothing of them was half-written.
	mustAppend(t, db, c, 0, msg(t, 1, "c1 again"), cTail)
}

// Idempotency by id holds across a reopen and however many other tasks were appended to since:
// the id index is on disk, beside the log.
func TestAppendIdempotentAfterReopen(t *testing.T) {
	path := t.TempDir() + "/tasks.db"
	db := openAt(t, path, &Options{NoSync: true})
	task := uuid.New()
	batch := msgs(t, 4, "kept")
	mustAppend(t, db, task, 0, batch...)
	db.Close()

	db = openAt(t, path, &Options{NoSync: true})
	check := func(when string) {
		t.Helper()
		if a, err := db.Append(context.Background(), task, 0, batch[1:3]...); err != nil || !a.Duplicate || a.First != 2 {
			t.Errorf("%s: repeat = %+v, %v; want a duplicate at 2", when, a, err)
		}
		if _, err := db.Append(context.Background(), task, 4, batch[3], msg(t, 1, "new")); !errors.Is(err, ErrDuplicateID) {
			t.Errorf("%s: partly stored batch = %v, want ErrDuplicateID", when, err)
		}
		var vc *VersionConflictError
		if _, err := db.Append(context.Background(), task, 1, msg(t, 1, "stale")); !errors.As(err, &vc) || vc.Actual != 4 {
			t.Errorf("%s: stale append = %v, want a conflict at head 4", when, err)
		}
	}
	check("after reopen")
	for range 3 {
		mustAppend(t, db, uuid.New(), 0, msgs(t, 3, "filler")...)
	}
	check("after other tasks' appends")
	if err := db.Verify(context.Background(), task); err != nil {
		t.Error(err)
	}
}

// A batch that fails on its fourth event leaves nothing of the first three behind.
func TestAppendBatchIsAllOrNothing(t *testing.T) {
	db := openTest(t)
	task := uuid.New()
	mustAppend(t, db, task, 0, msgs(t, 2, "before")...)
	broken := errors.New("no space left on device")
	db.stageHook = func(r *appendRequest, i int) error {
		if i == 3 {
			return broken
		}
		return nil
	}
	batch := msgs(t, 5, "batch")
	if _, err := db.Append(context.Background(), task, 2, batch...); !errors.Is(err, broken) {
		t.Fatalf("Append = %v, want the storage error", err)
	}
	db.stageHook = nil
	if h, _ := db.Head(task); h.Seq != 2 {
		t.Errorf("head %d after a failed batch, want 2", h.Seq)
	}
	if got := collect(t, db, task, 1); len(got) != 2 {
		t.Errorf("%d events stored, want 2", len(got))
	}
	// The same batch succeeds afterwards, at the same positions: none of its ids was recorded.
	if a := mustAppend(t, db, task, 2, batch...); a.Duplicate || a.First != 3 || a.Last != 7 {
		t.Errorf("retry = %d..%d duplicate %v", a.First, a.Last, a.Duplicate)
	}
	if err := db.Verify(context.Background(), task); err != nil {
		t.Error(err)
	}
}

// TestAppendsArrivingDuringACommitShareTheNext holds the first commit open until eight more
// writers have queued: they must all go into one second transaction, committed by one of them
// once the first writer has its answer.
func TestAppendsArrivingDuringACommitShareTheNext(t *testing.T) {
	db := openTest(t)
	release := make(chan struct{})
	var once sync.Once
	db.stageHook = func(*appendRequest, int) error {
		once.Do(func() { <-release })
		return nil
	}
	before := db.commits.Load()
	first := make(chan error, 1)
	go func() {
		_, err := db.Append(context.Background(), uuid.New(), 0, msg(t, 1, "first"))
		first <- err
	}()
	for db.commits.Load() == before { // the first writer is committing, inside the hook
		time.Sleep(time.Millisecond)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			_, err := db.Append(context.Background(), uuid.New(), 0, msg(t, 1, "queued"))
			errs <- err
		})
	}
	for {
		db.cmu.Lock()
		n := len(db.queue)
		db.cmu.Unlock()
		if n == 8 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	close(release)
	if err := <-first; err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if got := db.commits.Load() - before; got != 2 {
		t.Errorf("%d transactions for 1 + 8 appends, want 2", got)
	}
	db.cmu.Lock()
	defer db.cmu.Unlock()
	if db.committing || len(db.queue) != 0 {
		t.Errorf("after the appends: committing %v, %d queued", db.committing, len(db.queue))
	}
}

// TestPanicAfterACommitDoesNotWedgeTheDatabase panics in the leader after its transaction
// committed, outside bbolt: the panic reaches the leader's caller, and the next append and
// Close go through instead of waiting for a commit that never ends.
func TestPanicAfterACommitDoesNotWedgeTheDatabase(t *testing.T) {
	db := openTest(t)
	var once sync.Once
	db.committedHook = func() { once.Do(func() { panic("index broke") }) }
	task := uuid.New()
	recovered := func() (p any) {
		defer func() { p = recover() }()
		db.Append(context.Background(), task, 0, msg(t, 1, "first"))
		return nil
	}()
	if recovered != "index broke" {
		t.Fatalf("the leader's caller saw %v, want the panic", recovered)
	}
	done := make(chan error, 1)
	go func() {
		_, err := db.Append(context.Background(), task, 1, msg(t, 1, "second"))
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the next append never returned: the database is wedged")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestPanicAnswersTheWaitersOfItsCommit panics after a group commit led by a writer that had
// waited: the leader's caller gets the panic, the other writer of that commit an error naming
// it, and the database goes on.
func TestPanicAnswersTheWaitersOfItsCommit(t *testing.T) {
	db := openTest(t)
	first, second, third := uuid.New(), uuid.New(), uuid.New()
	queued := func(n int) bool {
		db.cmu.Lock()
		defer db.cmu.Unlock()
		return len(db.queue) == n
	}
	// The first commit waits until the two other writers are queued behind it; the second,
	// theirs, panics once it has committed.
	staging, release := make(chan struct{}), make(chan struct{})
	var commits atomic.Int32
	db.stageHook = func(r *appendRequest, i int) error {
		if r.task == first {
			close(staging)
			<-release
		}
		return nil
	}
	db.committedHook = func() {
		if commits.Add(1) == 2 {
			panic("index broke")
		}
	}
	type outcome struct {
		task uuid.UUID
		err  error
		p    any
	}
	out := make(chan outcome, 3)
	appendTo := func(task uuid.UUID) {
		o := outcome{task: task}
		defer func() {
			o.p = recover()
			out <- o
		}()
		_, o.err = db.Append(context.Background(), task, 0, msg(t, 1, "one"))
	}
	go appendTo(first)
	<-staging
	go appendTo(second)
	for !queued(1) {
		runtime.Gosched()
	}
	go appendTo(third)
	for !queued(2) {
		runtime.Gosched()
	}
	close(release)
	got := map[uuid.UUID]outcome{}
	for range 3 {
		o := <-out
		got[o.task] = o
	}
	if o := got[first]; o.err != nil || o.p != nil {
		t.Errorf("the first writer: %v, %v", o.err, o.p)
	}
	// The oldest writer waiting leads the next commit.
	led, waited := got[second], got[third]
	if led.p != "index broke" || led.err != nil {
		t.Errorf("the leader of the second commit: %v, %v; want the panic", led.err, led.p)
	}
	if waited.p != nil || waited.err == nil || !strings.Contains(waited.err.Error(), "commit failed: index broke") {
		t.Errorf("the writer that waited in the second commit: %v, %v; want an error naming the panic", waited.err, waited.p)
	}
	db.stageHook, db.committedHook = nil, nil
	if _, err := db.Append(context.Background(), first, 1, msg(t, 1, "after")); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

// A repeat staged in the same group commit as the original finds the original's ids and events,
// written earlier in the same transaction.
func TestRepeatInTheSameCommit(t *testing.T) {
	db := openTest(t)
	task := uuid.New()
	e := msgs(t, 2, "once")
	req := func(expected uint64, evs ...events.Event) *appendRequest {
		return &appendRequest{ctx: context.Background(), task: task, expected: expected,
			evs: append([]events.Event(nil), evs...), wake: make(chan struct{}, 1)}
	}
	edited := e[1]
	edited.Data = []byte(`{"text":"edited"}`)
	batch := []*appendRequest{req(0, e...), req(0, e...), req(2, edited), req(2, msg(t, 1, "next"))}
	db.commit(batch)
	got := make([]appendResult, len(batch))
	for i, r := range batch {
		<-r.wake
		got[i] = r.res
	}
	if got[0].err != nil || got[0].appended.Duplicate {
		t.Fatalf("original: %+v", got[0])
	}
	if a := got[1].appended; got[1].err != nil || !a.Duplicate || a.First != 1 || a.Events[1].Hash != got[0].appended.Events[1].Hash {
		t.Errorf("repeat: %+v, %v; want a duplicate of 1..2", a, got[1].err)
	}
	if !errors.Is(got[2].err, ErrDuplicateID) {
		t.Errorf("same id, other content: %v, want ErrDuplicateID", got[2].err)
	}
	if got[3].err != nil || got[3].appended.First != 3 {
		t.Errorf("next: %+v", got[3])
	}
	if err := db.Verify(context.Background(), task); err != nil {
		t.Error(err)
	}
}

// HasEvents finds an appended event by its id, in its own task only, and nothing in a task
// that is not in the log.
func TestHasEvents(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	task, other := uuid.New(), uuid.New()
	a, b, never := msg(t, 1, "a"), msg(t, 1, "b"), msg(t, 1, "never appended")
	if _, err := db.Append(ctx, task, 0, a, b); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		task uuid.UUID
		ids  []ulid.ULID
		want bool
	}{
		{"one stored", task, []ulid.ULID{a.ID}, true},
		{"a stored one among others", task, []ulid.ULID{never.ID, b.ID}, true},
		{"none stored", task, []ulid.ULID{never.ID}, false},
		{"no ids", task, nil, false},
		{"another task's", other, []ulid.ULID{a.ID}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.HasEvents(tt.task, tt.ids...)
			if err != nil || got != tt.want {
				t.Errorf("HasEvents = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

// TestAppendTellsNewFromStoredAnyOrder appends events whose ids come before the task's newest
// (a runtime's clock behind, ids from another source), in requests of one event and in requests
// large enough to be compared with the id index's last first: an id after the last is new
// without a look-up, one before it is looked up, and both kinds are told apart from repeats.
func TestAppendTellsNewFromStoredAnyOrder(t *testing.T) {
	for _, n := range []int{1, lastIDMin + 4} {
		t.Run(fmt.Sprintf("%d a request", n), func(t *testing.T) {
			db := openTest(t)
			task := uuid.New()
			older, stored, newer := msgs(t, n, "older"), msgs(t, n, "stored"), msgs(t, n, "newer") // ids in this order
			mustAppend(t, db, task, 0, stored...)
			head, now := uint64(n), uint64(n)
			late := msgs(t, n, "late")
			tests := []struct {
				name      string
				evs       []events.Event
				first     uint64 // where the batch is, or 0: refused with ErrDuplicateID
				duplicate bool
			}{
				{"older ids, not stored", older, head + 1, false},
				{"those events again", older, head + 1, true},
				{"newer ids", newer, 2*head + 1, false},
				{"the first request again", stored, 1, true},
				{"new, then a stored one", append(slices.Clone(late[:n-1]), stored[n-1]), 0, false},
				{"stored, then new", append([]events.Event{newer[n-1]}, late[1:]...), 0, false},
			}
			for _, tt := range tests {
				if n == 1 && tt.first == 0 {
					continue // one event is stored or not
				}
				a, err := db.Append(context.Background(), task, now, tt.evs...)
				if tt.first == 0 {
					if !errors.Is(err, ErrDuplicateID) {
						t.Fatalf("%s: error %v, want ErrDuplicateID", tt.name, err)
					}
					continue
				}
				if err != nil || a.First != tt.first || a.Duplicate != tt.duplicate {
					t.Fatalf("%s: Append = %d..%d duplicate %v, %v; want %d.. duplicate %v", tt.name, a.First, a.Last, a.Duplicate, err, tt.first, tt.duplicate)
				}
				now = max(now, a.Last)
			}
		})
	}
}
