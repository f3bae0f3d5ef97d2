package session

import (
	"context"
	"errors"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// ChainChecker is a LogReader that also checks a task's hash chain, as every store.Store does
// (store.DB.Verify).
type ChainChecker interface {
	LogReader
	Verify(ctx context.Context, task uuid.UUID) error
}

// ReplayError is Verify's error when the chain is sound but the replay could not run to the
// end (a payload that does not decode, a rules snapshot whose blob is missing).
type ReplayError struct{ Err error }

// Error is the replay's error.
func (e *ReplayError) Error() string { return e.Err.Error() }

// Unwrap returns the replay's error.
func (e *ReplayError) Unwrap() error { return e.Err }

// ReadError is an error of the store, not of the log: the store could not be read (a server
// that did not answer in time, a store closed meanwhile: the chain check's read, a rule file's
// blob, or events the chain check read soundly), so nothing was found wrong, and reading again
// may succeed. Verify returns it, never a *ReplayError, for such an error.
type ReadError struct{ Err error }

// Error is the store's error.
func (e *ReadError) Error() string { return e.Err.Error() }

// Unwrap returns the store's error.
func (e *ReadError) Unwrap() error { return e.Err }

// readFault is an error of reading a task's log or its blobs as Verify meets it: as it is when it
// says the log is damaged or absent (a broken chain, damaged bytes, a task or blob the store does
// not hold), when it is the chain check's error handed on in the events (verifyOnce), or already
// a *ReadError; else a *ReadError: the store did not answer in time, or was closed.
func readFault(err error) error {
	if _, ok := errors.AsType[*chainError](err); ok {
		return err
	}
	if _, ok := errors.AsType[*ReadError](err); ok {
		return err
	}
	for _, verdict := range []error{store.ErrChainBroken, store.ErrCorrupt, store.ErrTaskNotFound, store.ErrBlobNotFound} {
		if errors.Is(err, verdict) {
			return err
		}
	}
	return &ReadError{Err: err}
}

// replayError is the error of a replay that did not run to the end: a *ReadError as it is, any
// other as a *ReplayError.
func replayError(err error) error {
	if _, ok := errors.AsType[*ReadError](err); ok {
		return err
	}
	return &ReplayError{Err: err}
}

// eventVerifier is a ChainChecker that hands each event on once its link is checked
// (store.DB.VerifyEvents), so that one read of the log serves the check and the replay.
type eventVerifier interface {
	ChainChecker
	VerifyEvents(ctx context.Context, task uuid.UUID, each func(events.Event) error) error
}

// VerifyGCPercent is the garbage collector's setting (runtime/debug.SetGCPercent) 'replay
// verify' runs at unless $GOGC chooses one. A verify allocates about 2.4 KB an event (the
// chunks it reads, the decisions it recomputes) on a live heap of a few megabytes; at Go's
// default of 100 the collector runs so often that it takes a quarter or more of a verify's
// CPU. At 400 it runs a fifth as often, for a heap up to five times the live one instead of
// twice. A program that verifies large tasks in a process of its own can do the same.
const VerifyGCPercent = 400

// Verify is what 'replay verify' does with a task: it checks the task's hash chain (the store's
// Verify) and replays every decision and delivery exactly (Replay with no options). A store that
// hands on the events it checks (store.DB) is read once, the replay taking each event after its
// check; with another, the two run side by side, each reading the log. The chain's verdict comes
// first: when the check fails, its error is returned (errors.Is store.ErrChainBroken when the
// chain is broken) and the replay, of a log that is not the one written, is stopped and dropped.
// When the chain is sound and the replay fails, the error is a *ReplayError, or a *ReadError
// when what failed was reading the store. Otherwise the replay's report is returned.
func Verify(ctx context.Context, db ChainChecker, task uuid.UUID) (Report, error) {
	if ev, ok := db.(eventVerifier); ok {
		return verifyOnce(ctx, ev, task)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	chain := make(chan error, 1)
	go func() {
		err := db.Verify(ctx, task)
		if err != nil {
			cancel()
		}
		chain <- err
	}()
	rep, err := Replay(ctx, db, task, ReplayOptions{})
	if cerr := <-chain; cerr != nil {
		return Report{Task: task, Changes: []Change{}}, readFault(cerr)
	}
	if err != nil {
		return rep, replayError(err)
	}
	return rep, nil
}

// chainError is the chain check's error in the events a replay reads from it.
type chainError struct{ err error }

func (e *chainError) Error() string { return e.err.Error() }

// errReplayDone stops a check whose replay stopped reading.
var errReplayDone = errors.New("the replay stopped reading")

// verifyOnce is Verify reading the log once: the replay reads the events the chain check hands
// on, each after its check, so a replayed event is always one the chain holds. When the replay
// stops early, the rest of the chain is checked on its own, for its verdict comes first.
func verifyOnce(ctx context.Context, db eventVerifier, task uuid.UUID) (Report, error) {
	checked := func(yield func(events.Event, error) bool) {
		err := db.VerifyEvents(ctx, task, func(ev events.Event) error {
			if !yield(ev, nil) {
				return errReplayDone
			}
			return nil
		})
		if err != nil && !errors.Is(err, errReplayDone) {
			yield(events.Event{}, &chainError{err})
		}
	}
	rep, err := replay(db, task, ReplayOptions{}, checked)
	if err == nil {
		return rep, nil
	}
	if ce, ok := errors.AsType[*chainError](err); ok {
		return Report{Task: task, Changes: []Change{}}, readFault(ce.err)
	}
	if cerr := db.Verify(ctx, task); cerr != nil {
		return Report{Task: task, Changes: []Change{}}, readFault(cerr)
	}
	return rep, replayError(err)
}
