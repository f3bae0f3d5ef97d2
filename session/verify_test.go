package session

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"reflect"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/store"
)

// verifiedTask records a short hook task with three decisions and their deliveries.
func verifiedTask(t *testing.T) (store.Store, uuid.UUID) {
	t.Helper()
	db := openDB(t)
	a := openAgent(t, db, agentlog.ClaudeCode)
	for i, p := range []string{"/ws/src/api/routes.ts", "/ws/docs/a.md", "/ws/src/api/b.ts"} {
		deliverAfter(t, a, fmt.Sprint(i), p)
	}
	return db, a.Task()
}

// copyLog writes task's log into a new store through Append, which seals it again, changing
// each event with change first: a log whose chain is sound, whatever its events say.
func copyLog(t *testing.T, from store.Store, task uuid.UUID, change func(ev *events.Event)) store.Store {
	t.Helper()
	ctx := context.Background()
	to := openDB(t)
	for ev, err := range from.Events(ctx, task, 1) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == events.TypeRulesSnapshot {
			p, err := ev.Payload()
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range p.(*events.RulesSnapshot).Files {
				b, err := from.Blob(f.Blob)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := to.PutBlobs([][]byte{b}); err != nil {
					t.Fatal(err)
				}
			}
		}
		change(&ev)
		if _, err := to.Append(ctx, task, ev.Seq-1, ev); err != nil {
			t.Fatal(err)
		}
	}
	return to
}

// Verify replays beside the chain check: a sound log reproduces; a decision rewritten in a log
// whose chain was sealed again over it is found by the replay.
func TestVerifyReplaysTheDecisions(t *testing.T) {
	ctx := context.Background()
	db, task := verifiedTask(t)
	rep, err := Verify(ctx, db, task)
	if err != nil || !rep.OK() || rep.Decisions != 3 || rep.Deliveries == 0 {
		t.Fatalf("Verify = %+v, %v; want three decisions and their deliveries reproduced", rep, err)
	}
	forged := copyLog(t, db, task, func(ev *events.Event) {
		if ev.Type != events.TypeDecision || ev.Seq != rep.Events-1 && ev.Seq != rep.Events {
			return
		}
		// The engine version of the last decision, which is written in full or as a delta.
		ev.Data = []byte(strings.Replace(string(ev.Data), `"engine":"`, `"engine":"forged-`, 1))
	})
	if err := forged.Verify(ctx, task); err != nil {
		t.Fatalf("the copy's chain: %v", err)
	}
	rep, err = Verify(ctx, forged, task)
	if err != nil || rep.OK() || !strings.Contains(fmt.Sprint(rep.Changes), "engine forged-") {
		t.Fatalf("Verify of a forged decision = %+v, %v; want the changed engine reported", rep, err)
	}
}

// sideBySide hides a store's VerifyEvents: Verify then checks the chain and replays side by
// side, each reading the log.
type sideBySide struct{ store.Store }

// oneRead is a bbolt store as Verify meets it: the replay reads the events the chain check
// hands on (store.DB.VerifyEvents).
type oneRead struct{ *store.DB }

// verifyPaths are the two ways Verify reads a log, wrapping the store a test made.
var verifyPaths = []struct {
	name string
	wrap func(store.Store) store.Store
}{
	{"read once", func(db store.Store) store.Store { return oneRead{db.(*store.DB)} }},
	{"read twice", func(db store.Store) store.Store { return sideBySide{db} }},
}

// Both ways of reading give the same report, of a sound log and of a forged one.
func TestVerifyReadOnceAsTwice(t *testing.T) {
	ctx := context.Background()
	db, task := verifiedTask(t)
	forged := copyLog(t, db, task, func(ev *events.Event) {
		if ev.Type == events.TypeDecision {
			ev.Data = []byte(strings.Replace(string(ev.Data), `"engine":"`, `"engine":"forged-`, 1))
		}
	})
	for _, tt := range []struct {
		log   store.Store
		sound bool
	}{{db, true}, {forged, false}} {
		once, err1 := Verify(ctx, verifyPaths[0].wrap(tt.log), task)
		twice, err2 := Verify(ctx, verifyPaths[1].wrap(tt.log), task)
		if err1 != nil || err2 != nil || !reflect.DeepEqual(once, twice) {
			t.Fatalf("read once: %+v, %v\nread twice: %+v, %v", once, err1, twice, err2)
		}
		if once.OK() != tt.sound || once.Decisions == 0 {
			t.Fatalf("sound log %v: Verify = %+v; want OK %v over its decisions", tt.sound, once, tt.sound)
		}
	}
}

// brokenChain is a store whose chain check fails at seq 2, after handing on seq 1.
type brokenChain struct{ store.Store }

func (b brokenChain) Verify(ctx context.Context, task uuid.UUID) error {
	return &store.VerifyError{Task: task, Seq: 2, Problem: "hash mismatch"}
}

func (b brokenChain) VerifyEvents(ctx context.Context, task uuid.UUID, each func(events.Event) error) error {
	for ev, err := range b.Events(ctx, task, 1) {
		if err != nil {
			return err
		}
		if ev.Seq == 2 {
			break
		}
		if err := each(ev); err != nil {
			return err
		}
	}
	return b.Verify(ctx, task)
}

// failingBlobs is a store that does not hold a rules snapshot's blobs.
type failingBlobs struct{ store.Store }

func (failingBlobs) Blob(string) ([]byte, error) {
	return nil, fmt.Errorf("blob unreadable: %w", store.ErrBlobNotFound)
}

// failingBlobsOnce is failingBlobs read once.
type failingBlobsOnce struct{ *store.DB }

func (failingBlobsOnce) Blob(string) ([]byte, error) {
	return nil, fmt.Errorf("blob unreadable: %w", store.ErrBlobNotFound)
}

// failingBlobsBroken cannot read a blob, which stops the replay at the first decision, and
// its chain breaks after that: the chain's verdict still comes first.
type failingBlobsBroken struct {
	brokenChain
	at uint64
}

func (failingBlobsBroken) Blob(string) ([]byte, error) {
	return nil, fmt.Errorf("blob unreadable: %w", store.ErrBlobNotFound)
}

func (b failingBlobsBroken) Verify(ctx context.Context, task uuid.UUID) error {
	return &store.VerifyError{Task: task, Seq: b.at, Problem: "hash mismatch"}
}

func (b failingBlobsBroken) VerifyEvents(ctx context.Context, task uuid.UUID, each func(events.Event) error) error {
	for ev, err := range b.Events(ctx, task, 1) {
		if err != nil {
			return err
		}
		if ev.Seq == b.at {
			return b.Verify(ctx, task)
		}
		if err := each(ev); err != nil {
			return err
		}
	}
	return nil
}

// The chain's verdict comes first, whichever way the log is read; a replay that fails over a
// sound chain is a ReplayError.
func TestVerifyChainFirst(t *testing.T) {
	ctx := context.Background()
	db, task := verifiedTask(t)
	head, err := db.Head(task)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		db   ChainChecker
	}{
		{"read twice", sideBySide{brokenChain{db}}},
		{"read once", brokenChain{db}},
		{"read once, replay stopped before the break", failingBlobsBroken{brokenChain{db}, head.Seq}},
	} {
		rep, err := Verify(ctx, tt.db, task)
		var ve *store.VerifyError
		if !errors.Is(err, store.ErrChainBroken) || !errors.As(err, &ve) || ve.Seq < 2 || rep.Decisions != 0 {
			t.Errorf("%s: Verify over a broken chain = %+v, %v; want the chain's error and no report", tt.name, rep, err)
		}
	}
	for _, bad := range []ChainChecker{failingBlobs{db}, failingBlobsOnce{db.(*store.DB)}} {
		_, err = Verify(ctx, bad, task)
		var re *ReplayError
		if !errors.As(err, &re) || !strings.Contains(err.Error(), "blob unreadable") || errors.Is(err, store.ErrChainBroken) {
			t.Fatalf("Verify with unreadable blobs (%T) = %v; want a ReplayError", bad, err)
		}
	}
	for _, p := range verifyPaths {
		if _, err := Verify(ctx, p.wrap(db), uuid.New()); !errors.Is(err, store.ErrTaskNotFound) {
			t.Fatalf("%s: Verify of an unknown task = %v, want ErrTaskNotFound", p.name, err)
		}
	}
}

// blobFault is a bbolt store whose blobs cannot be read, with err.
type blobFault struct {
	*store.DB
	err error
}

func (b blobFault) Blob(sum string) ([]byte, error) {
	return nil, fmt.Errorf("blob %s: %w", sum, b.err)
}

// A blob the store could not be read for (a server that did not answer) is no verdict on the
// log: a *ReadError, never a *ReplayError, read once or twice; a blob the store does not hold
// is one.
func TestVerifyReadFaultIsNoVerdict(t *testing.T) {
	ctx := context.Background()
	db, task := verifiedTask(t)
	for _, tc := range []struct {
		err     error
		verdict bool
	}{
		{context.DeadlineExceeded, false},
		{store.ErrClosed, false},
		{store.ErrBlobNotFound, true},
		{store.ErrCorrupt, true},
	} {
		faulty := blobFault{db.(*store.DB), tc.err}
		for _, path := range []struct {
			name string
			db   ChainChecker
		}{{"read once", faulty}, {"read twice", sideBySide{faulty}}} {
			_, err := Verify(ctx, path.db, task)
			_, replayErr := errors.AsType[*ReplayError](err)
			_, readErr := errors.AsType[*ReadError](err)
			if !errors.Is(err, tc.err) || replayErr != tc.verdict || readErr == tc.verdict {
				t.Errorf("%s, blob error %v: Verify error %T %v; want a *ReplayError %v, a *ReadError %v", path.name, tc.err, err, err, tc.verdict, !tc.verdict)
			}
		}
	}
}

// eventsFault is a store whose reads of a task's events (not its chain check's) fail after the
// second event, with err.
type eventsFault struct {
	store.Store
	err error
}

func (e eventsFault) Events(ctx context.Context, task uuid.UUID, from uint64) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		for ev, err := range e.Store.Events(ctx, task, from) {
			if err == nil && ev.Seq > 2 {
				err = e.err
			}
			if !yield(ev, err) || err != nil {
				return
			}
		}
	}
}

// The replay's own read of the log failing where the chain check read it soundly (a store read
// twice, such as NATS) is no verdict either.
func TestVerifyEventReadFaultIsNoVerdict(t *testing.T) {
	db, task := verifiedTask(t)
	_, err := Verify(context.Background(), eventsFault{db, fmt.Errorf("read task: %w", context.DeadlineExceeded)}, task)
	if _, ok := errors.AsType[*ReadError](err); !ok || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Verify = %T %v, want a *ReadError of the deadline", err, err)
	}
}

// chainSlow is a store whose chain check does not answer in time.
type chainSlow struct{ store.Store }

func (chainSlow) Verify(context.Context, uuid.UUID) error {
	return fmt.Errorf("verify task: %w", context.DeadlineExceeded)
}

// The chain check's own read failing is no verdict either: a *ReadError, where a broken chain
// is the chain's error.
func TestVerifyChainReadFaultIsNoVerdict(t *testing.T) {
	db, task := verifiedTask(t)
	_, err := Verify(context.Background(), chainSlow{db}, task)
	if _, ok := errors.AsType[*ReadError](err); !ok || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Verify = %T %v, want a *ReadError of the deadline", err, err)
	}
	if _, err := Verify(context.Background(), brokenChain{db}, task); !errors.Is(err, store.ErrChainBroken) || errors.As(err, new(*ReadError)) {
		t.Fatalf("Verify of a broken chain = %v, want the chain's error", err)
	}
}
