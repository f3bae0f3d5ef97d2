// Package natsstore keeps tasklog's event logs in a NATS JetStream stream, so that many
// machines append to and replay one shared log. A *Store implements store.Store with the
// semantics documented on the methods of *store.DB.
package natsstore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"net/url"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// DefaultStream is the stream name used when the URL names none.
const DefaultStream = "TASKLOG"

// defaultTimeout bounds every server call when Options.Timeout is zero.
const defaultTimeout = 5 * time.Second

// Options configures Open. The zero value (or nil) connects to the URL with a five second
// timeout and creates a stream of one replica if none exists.
type Options struct {
	// Timeout bounds every server call; zero means five seconds. A server that is down fails
	// the call within it.
	Timeout time.Duration
	// Replicas is the number of replicas of the stream (and of the blob and snapshot stores)
	// when Open creates them; zero means 1.
	Replicas int
	// Conn, when set, is used instead of dialling the URL's server (tests use it to reach an
	// in-process server). The caller keeps ownership: Close does not close it.
	Conn *nats.Conn
}

// Store is a task log kept in a JetStream stream. Its methods are safe for concurrent use.
type Store struct {
	url    string
	stream string
}

var _ store.Store = (*Store)(nil)

// errNotImplemented marks methods not written yet.
var errNotImplemented = errors.New("natsstore: not implemented yet")

// IsURL reports whether s names a NATS store: it starts with nats://.
func IsURL(s string) bool { return strings.HasPrefix(s, "nats://") }

// parseURL splits nats://HOST:PORT[/STREAM] into the server URL and the stream name.
func parseURL(raw string) (server, stream string, err error) {
	if !IsURL(raw) {
		return "", "", fmt.Errorf("%q is not a NATS store URL: it must start with nats://", raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", "", fmt.Errorf("NATS store URL %q: %w", raw, err)
	}
	if u.Host == "" {
		return "", "", fmt.Errorf("NATS store URL %q names no server", raw)
	}
	stream = strings.Trim(u.Path, "/")
	if stream == "" {
		stream = DefaultStream
	}
	if strings.ContainsAny(stream, ".*>/ \t") {
		return "", "", fmt.Errorf("NATS store URL %q: stream name %q may not contain '.', '*', '>', '/' or spaces", raw, stream)
	}
	u.Path, u.RawQuery, u.Fragment = "", "", ""
	return u.String(), stream, nil
}

// Open connects to the server of url (nats://HOST:PORT[/STREAM], stream TASKLOG by default)
// and opens the stream, creating it if it does not exist.
func Open(rawURL string, opts *Options) (*Store, error) {
	server, stream, err := parseURL(rawURL)
	if err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("open %s stream %s: %w", server, stream, errNotImplemented)
}

// Path returns the server URL and the stream, nats://HOST:PORT/STREAM.
func (s *Store) Path() string { return s.url + "/" + s.stream }

// Append is store.DB.Append on the stream.
func (s *Store) Append(ctx context.Context, task uuid.UUID, expectedVersion uint64, evs ...events.Event) (store.Appended, error) {
	return store.Appended{}, errNotImplemented
}

// Events is store.DB.Events on the stream.
func (s *Store) Events(ctx context.Context, task uuid.UUID, fromSeq uint64) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) { yield(events.Event{}, errNotImplemented) }
}

// Head returns the end of task's log, or store.ErrTaskNotFound.
func (s *Store) Head(task uuid.UUID) (store.Head, error) { return store.Head{}, errNotImplemented }

// Tasks lists every task with at least one event, sorted by task id.
func (s *Store) Tasks() ([]store.TaskInfo, error) { return nil, errNotImplemented }

// PutBlob stores data under its SHA-256 sum and returns the sum in hex.
func (s *Store) PutBlob(data []byte) (string, error) { return "", errNotImplemented }

// PutBlobs stores several blobs and returns their hex sums in order.
func (s *Store) PutBlobs(blobs [][]byte) ([]string, error) { return nil, errNotImplemented }

// Blob returns the content with the hex SHA-256 sum, or store.ErrBlobNotFound.
func (s *Store) Blob(sum string) ([]byte, error) { return nil, errNotImplemented }

// HasBlob reports whether content with the hex SHA-256 sum is stored.
func (s *Store) HasBlob(sum string) (bool, error) { return false, errNotImplemented }

// PutSnapshot stores a projection's state as of seq under name, replacing any earlier one.
func (s *Store) PutSnapshot(task uuid.UUID, name string, seq uint64, data []byte) error {
	return errNotImplemented
}

// Snapshot returns the named snapshot's sequence number and state, or store.ErrNoSnapshot.
func (s *Store) Snapshot(task uuid.UUID, name string) (uint64, []byte, error) {
	return 0, nil, errNotImplemented
}

// Verify checks task's log is the hash chain that was written.
func (s *Store) Verify(ctx context.Context, task uuid.UUID) error { return errNotImplemented }

// Close releases the connection; every method fails with store.ErrClosed afterwards.
func (s *Store) Close() error { return nil }
