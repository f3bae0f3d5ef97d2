package store

import (
	"context"
	"iter"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/tasklog/tasklog/events"
)

// Store is what sessions and the replay tools need of a task log, whatever keeps it: the
// embedded bbolt file of this package (*DB, the default) or a server shared by many machines.
// Every implementation keeps the same promises, which the conformance suite in package
// store/storetest checks (storetest.Run, and storetest.RunReopen for what outlives a close):
// the semantics are those documented on the methods of *DB.
type Store interface {
	// Append adds evs to the end of task's log if its head is at expectedVersion, sealing the
	// hash chain; it is idempotent by event id (see DB.Append). It keeps no reference to the
	// events' Data once it returns: the caller may write over it (a session encodes each
	// decision into the last one's memory). The events it returns may share the Data of evs.
	Append(ctx context.Context, task uuid.UUID, expectedVersion uint64, evs ...events.Event) (Appended, error)
	// Events streams task's log from sequence fromSeq on (see DB.Events).
	Events(ctx context.Context, task uuid.UUID, fromSeq uint64) iter.Seq2[events.Event, error]
	// Head returns the end of task's log, or ErrTaskNotFound.
	Head(task uuid.UUID) (Head, error)
	// Tasks lists every task with at least one event, sorted by task id.
	Tasks() ([]TaskInfo, error)
	// PutBlob stores content under its SHA-256 sum and returns the sum in hex.
	PutBlob(data []byte) (string, error)
	// PutBlobs stores several blobs and returns their hex sums in order.
	PutBlobs(blobs [][]byte) ([]string, error)
	// Blob returns the content with the hex SHA-256 sum, or ErrBlobNotFound.
	Blob(sum string) ([]byte, error)
	// HasBlob reports whether content with the hex SHA-256 sum is stored.
	HasBlob(sum string) (bool, error)
	// PutSnapshot stores a projection's state as of seq under name, replacing any earlier one.
	// It keeps no reference to data once it returns.
	PutSnapshot(task uuid.UUID, name string, seq uint64, data []byte) error
	// Snapshot returns the named snapshot's sequence number and state, or ErrNoSnapshot.
	Snapshot(task uuid.UUID, name string) (seq uint64, data []byte, err error)
	// Verify checks task's log is the hash chain that was written, every event passing a
	// ChainVerifier, plus whatever the store can check of its own keeping (see DB.Verify).
	Verify(ctx context.Context, task uuid.UUID) error
	// Path names where the log is kept, for messages: a file path, or a server URL and stream.
	Path() string
	// Close releases the store; every method fails with ErrClosed afterwards.
	Close() error
}

// EventLookup is the optional fast path of a Store: whether a task's log holds events, asked by
// their ids without writing. A session records a hook whose events are all new, its decision and
// its delivery in one commit only on a store that has it; on one that lacks it, each such hook
// takes two commits (and two fsyncs). storetest.Run checks it on every store that has it, and
// fails a store that lacks it unless its test says so with storetest.Lacks.
type EventLookup interface {
	// HasEvents reports whether task's log holds any event with one of the ids; a task not in
	// the log holds none.
	HasEvents(task uuid.UUID, ids ...ulid.ULID) (bool, error)
}

// *DB is the default Store, with every optional interface.
var (
	_ Store       = (*DB)(nil)
	_ EventLookup = (*DB)(nil)
)
