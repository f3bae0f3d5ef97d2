package session

import (
	"context"

	"github.com/google/uuid"
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

func (e *ReplayError) Error() string { return e.Err.Error() }

// Unwrap returns the replay's error.
func (e *ReplayError) Unwrap() error { return e.Err }

// Verify is what 'replay verify' does with a task: it checks the task's hash chain (the store's
// Verify) and replays every decision and delivery exactly (Replay with no options), the two side
// by side, as they read the log independently. The chain's verdict comes first: when the check
// fails, its error is returned (errors.Is store.ErrChainBroken when the chain is broken) and the
// replay, of a log that is not the one written, is stopped and dropped. When the chain is sound
// and the replay fails, the error is a *ReplayError. Otherwise the replay's report is returned.
func Verify(ctx context.Context, db ChainChecker, task uuid.UUID) (Report, error) {
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
		return Report{Task: task, Changes: []Change{}}, cerr
	}
	if err != nil {
		return rep, &ReplayError{Err: err}
	}
	return rep, nil
}
