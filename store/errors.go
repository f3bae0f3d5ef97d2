package store

import (
	"errors"
	"fmt"

	"github.com/google/uuid"
)

// Sentinel errors callers test with errors.Is.
var (
	// ErrVersionConflict is returned by Append when the task's head is not the expected version:
	// another writer appended first. The error is a *VersionConflictError carrying the head.
	ErrVersionConflict = errors.New("version conflict")
	// ErrDuplicateID is returned by Append when an event id is already stored but the append is
	// not an exact repeat of an earlier one (see Append).
	ErrDuplicateID = errors.New("duplicate event id")
	// ErrMissingID is returned by Append for an event whose ID is zero.
	ErrMissingID = errors.New("event has no id")
	// ErrInvalidEvent is returned by Append for an event it refuses to store: no type, already
	// marked with another task's id, a time its encoding cannot keep (before 1677 or after
	// 2262), or no events (or the nil task) at all.
	ErrInvalidEvent = errors.New("invalid event")
	// ErrTaskNotFound is returned for a task with no events.
	ErrTaskNotFound = errors.New("task not found")
	// ErrBlobNotFound is returned by Blob for a sum that is not stored.
	ErrBlobNotFound = errors.New("blob not found")
	// ErrNoSnapshot is returned by Snapshot when no snapshot of that name is stored.
	ErrNoSnapshot = errors.New("no snapshot")
	// ErrChainBroken is matched by every *VerifyError: the log is not what was written.
	ErrChainBroken = errors.New("hash chain broken")
	// ErrClosed is returned by every method after Close.
	ErrClosed = errors.New("task log is closed")
	// ErrReadOnly is returned by writes to a database opened with Options.ReadOnly.
	ErrReadOnly = errors.New("task log is open read-only")
	// ErrLocked is returned by Open when another process holds the file for writing.
	ErrLocked = errors.New("locked by another process")
	// ErrNotDatabase is returned by Open for a file that is not a task log.
	ErrNotDatabase = errors.New("not a task log database")
	// ErrCorrupt is returned when stored bytes are damaged: a truncated file, a page bbolt cannot
	// read, a value that does not decode.
	ErrCorrupt = errors.New("task log is damaged")
)

// VersionConflictError is the error of an Append whose expected version was not the head.
type VersionConflictError struct {
	// Task is the task appended to.
	Task uuid.UUID
	// Expected is the version the caller expected the head to be at.
	Expected uint64
	// Actual is the head's sequence number when the append was refused.
	Actual uint64
}

// Error says what the caller expected and what it found.
func (e *VersionConflictError) Error() string {
	return fmt.Sprintf("task %s: %v: expected head %d, actual head %d; another writer appended first, re-read and retry",
		e.Task, ErrVersionConflict, e.Expected, e.Actual)
}

// Unwrap makes errors.Is(err, ErrVersionConflict) hold.
func (e *VersionConflictError) Unwrap() error { return ErrVersionConflict }

// VerifyError is the first problem Verify found in a task's log.
type VerifyError struct {
	// Task is the task verified.
	Task uuid.UUID
	// Seq is the sequence number at which the log first differs from a sound chain.
	Seq uint64
	// Problem says what is wrong there, in words a person can act on.
	Problem string
}

// Error names the task, the sequence and the problem.
func (e *VerifyError) Error() string {
	return fmt.Sprintf("task %s: seq %d: %s", e.Task, e.Seq, e.Problem)
}

// Unwrap makes errors.Is(err, ErrChainBroken) hold.
func (e *VerifyError) Unwrap() error { return ErrChainBroken }
