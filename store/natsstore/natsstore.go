// Package natsstore keeps tasklog's event logs in a NATS JetStream stream, so that the hooks
// and tools of many machines append to and replay one log. A *Store implements store.Store
// with the semantics documented on the methods of *store.DB, which the conformance suite in
// package store/storetest checks against both.
//
// # Mapping
//
// One stream (TASKLOG unless the URL names another) holds every task, in one of three layouts,
// which the stream names in its metadata (LayoutMetadataKey; see Layout1, Layout2 and Layout3).
// A Store reads and writes a stream in the stream's layout; Migrate copies a stream into a new
// one of the current layout, 3.
//
// In layout 3, a task's log is one literal subject, STREAM.TASK, TASK spelled in 22 characters
// (subjectToken): each event is a message there whose payload is the event's binary encoding,
// compressed as bbolt keeps it, as in layout 2 below. Each event's id is a marker message on
// STREAM.TASK.ID (ID spelled the same way), with no payload, stored just before its event: an
// append is one atomic batch of, for each event, its marker, expected first on its subject, and
// the event, the first with the log's expected last subject sequence. The events carry no
// Nats-Msg-Id (the markers keep an id from being stored twice, however soon or late the retry)
// and the batch's id is 16 characters. It is layout 2 with what each event costs the stream cut
// from 758 to 598 bytes on a realistic mix (see TestMessageCost for where they go).
//
// In layout 2, a task's log is one literal subject, STREAM.log.TASK: each event is a message
// there whose payload is the event's binary encoding (events.Event.AppendBinary), compressed
// as bbolt keeps it (package payloadcodec): the bytes bbolt stores, hash chain included, sealed
// by events.Event.Seal exactly as bbolt seals it. The
// task's own sequence number and hash are inside the stored event, so the head of a task is the
// last message on its subject, decoded. Each event's id is a marker message on
// STREAM.id.TASK.ID holding the event's task sequence. An append is one atomic batch (Nats-Batch-Id,
// Nats-Batch-Sequence, Nats-Batch-Commit; JetStream 2.12 and later, enabled by the stream's
// allow_atomic): first the markers, each with Nats-Expected-Last-Subject-Sequence 0 (no
// message on the id's subject yet), then the events, the first with
// Nats-Expected-Last-Subject-Sequence set to the stream sequence of the task's head. The server
// stores all of it or none: it refuses the batch if anything was stored on the task since (the
// optimistic concurrency of an expected version, mapped from the task's count to a stream
// sequence), or if any id is stored already, however long ago. Both checks are on literal
// subjects, so an append costs the same however long its task.
//
// In layout 1 (streams made before layouts were named), each event is one message on its own
// subject, STREAM.ev.TASK.ID; the stream keeps at most one message per subject and refuses new
// ones past it (max_msgs_per_subject 1, discard new per subject), which keeps an id from being
// stored twice. A task's log is the filter STREAM.ev.TASK.*, and the expected sequence is set
// with Nats-Expected-Last-Subject-Sequence-Subject to that filter, which the server resolves by
// visiting every event subject of the task. A single event is one message, several one atomic
// batch.
//
// JetStream bounds an atomic batch to 1000 messages by default (max_batch_size), so a larger
// Append is written as consecutive atomic chunks of 1000 events in layout 1 and 500 in layouts
// 2 and 3 (two messages an event): a failure part-way leaves whole chunks stored, and the error says
// so; appending the same batch again completes it. That is the one promise of store.DB this
// store keeps only in part: keep batches to one chunk to have it whole.
//
// Appends from many goroutines of one Store share publishes as bbolt's share commits: while a
// shared publish is under way, or once 16 or more appends are, they queue, and one writer at a
// time sends the queue, one append per task, as one atomic batch (at least 16 messages; fewer go
// side by side). On a single server that syncs every write the batch is synced once; the server
// also stages it in a file store of its own, created and removed around the commit, a fixed cost
// of several synced disk writes. The server checks every append's expected subject sequence inside
// the batch; if it refuses the batch, each append is sent again alone and gets its own answer.
//
// Idempotency by event id comes in three layers. In layouts 1 and 2 every event's message
// carries Nats-Msg-Id TASK.ID, so a retry within the stream's duplicate window (two minutes) is
// recognised by the server. An id's subject takes one message only (the marker expected first
// on it in layouts 2 and 3, the one message per subject in layout 1), so no id is ever stored
// twice in a task, however late the retry. Whenever the server refuses a write, Append reads
// the batch's ids back (the last message of each id's subject, and in layouts 2 and 3 the event
// its marker names) and
// answers as store.DB.Append does: the original positions with Duplicate set for an exact
// repeat, store.ErrDuplicateID for any other overlap, otherwise a version conflict. The same id
// in two tasks is two subjects, as ids are unique per task only.
//
// Tasks are listed by their log subjects in layouts 2 and 3; in layout 1 through a marker message,
// STREAM.task.TASK, published once before a task's first append: a marker whose task has no
// events (the append failed) is not listed. Blobs are
// kept in the object store STREAM_blobs under their hex SHA-256 sum, projection snapshots in the
// object store STREAM_snapshots under TASK/NAME.
//
// # Durability
//
// An append is acknowledged once the server has stored it. A single nats-server syncs its files
// to disk only every two minutes by default (sync_interval), so an acknowledged append can be
// lost when the machine fails: run it with sync_interval: always in its jetstream block (the
// in-process test server sets SyncAlways), so that every acknowledged message is fsynced first
// and every atomic batch once, at its commit. Or run a cluster and set Options.Replicas to 3:
// an append is then acknowledged once a majority of the servers hold it in their Raft logs, so
// it survives the loss of any one machine (with sync_interval: always as well, each server
// syncs its Raft log before it acknowledges). Open creates the stream with Replicas replicas,
// file storage, the default (synchronous) persist mode, deletes and purges denied, and discard
// new: a stream that is full refuses appends, it never drops old events. Open does not change
// an existing stream, and refuses one that lacks what Append relies on.
//
// # Limits
//
// A message holds one event. An event whose encoding exceeds the server's max_payload (1 MiB by
// default) is spilled: its bytes go to the object store STREAM_blobs under "event-" and their
// SHA-256 sum, and its message, on its subject as always, names the sum in the Tasklog-Spilled
// header; reads fetch the bytes and check them against it. Every event is a subject, which the
// server indexes in memory: a stream of millions of events costs the server memory for as many
// subjects. In layout 1 the server checks an append's expected last subject sequence on the
// task's filter by visiting the subject of every event of the task, so an append costs more the
// longer its task (BenchmarkAppendLongTask); layouts 2 and 3 do not. But every append of
// layouts 2 and 3 is an atomic batch, which a single server stages in a file store of its own
// (see group.go): on a single server syncing every write, an append of one event costs several
// milliseconds there against a fraction of one in layout 1. A cluster stages batches in memory.
//
// Reads of a task go to any replica (direct get, in chunks of up to 8192 events, without
// headers) and are checked against the head read from the stream leader, so a lagging replica
// never makes an acknowledged event look missing. Verify reads the messages with their headers,
// to check each event is where its id says (in layouts 2 and 3, that the task's markers name
// its events' ids in order), and is slower. Reading from a sequence
// other than the first finds its place by a binary search over the stream (a few dozen reads).
// Tasks reads the head of every task. Each call, an Append with its retries included, is
// bounded by Options.Timeout: a server that is down fails it within that time.
package natsstore

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/oklog/ulid/v2"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// DefaultStream is the stream name used when the URL names none.
const DefaultStream = "TASKLOG"

// defaultTimeout bounds every server call when Options.Timeout is zero.
const defaultTimeout = 5 * time.Second

// maxCachedHeads bounds the head cache; past it the cache starts afresh.
const maxCachedHeads = 4096

// Options configures Open. The zero value (or nil) connects to the URL with a five second
// timeout and creates a stream of one replica if none exists.
type Options struct {
	// Timeout bounds every server call; zero means five seconds. A server that is down fails
	// the call within it.
	Timeout time.Duration
	// Replicas is the number of replicas of the stream (and of the blob and snapshot stores)
	// when Open creates them; zero means the URL's ?replicas=N, else 1.
	Replicas int
	// Duplicates is the window in which the server recognises a repeated Nats-Msg-Id, set
	// when Open creates the stream; zero means two minutes. Idempotency does not depend on it
	// (see the package doc): a shorter window only moves more repeats onto the read-back path.
	Duplicates time.Duration
	// Conn, when set, is used instead of dialling the URL's server (tests use it to reach an
	// in-process server). The caller keeps ownership: Close does not close it.
	Conn *nats.Conn

	// layout, when set (by tests), is the layout Open creates a stream with instead of
	// LayoutCurrent.
	layout int
}

// Store is a task log kept in a JetStream stream. Its methods are safe for concurrent use.
type Store struct {
	url     string // the server's URL, without the stream
	stream  string
	layout  int  // the stream's layout: Layout1, Layout2 or Layout3
	s2      bool // the stream's message blocks are compressed on the servers' disks
	timeout time.Duration
	nc      *nats.Conn
	ownConn bool
	js      jetstream.JetStream

	blobs, snaps jetstream.ObjectStore
	// noCompress publishes records and puts blobs uncompressed, as before they were kept
	// compressed (tests only).
	noCompress bool

	// gmu guards the publish queue (see submit).
	gmu    sync.Mutex
	direct int // appends being sent on their own
	// busy counts the Append calls under way, sealing, queued or being sent: how many
	// appends a shared publish may still gather (see submit).
	busy       atomic.Int64
	publishing bool
	queue      []*pubRequest

	// maxInline, when set (by tests), is the largest event encoding kept in its message.
	maxInline int

	mu      sync.Mutex
	closed  bool
	appends sync.WaitGroup // appends under way, which Close waits for
	heads   map[uuid.UUID]head
	// marked holds the tasks known to have a marker message.
	marked map[uuid.UUID]bool
}

// head is a task's last event as far as this Store knows: its task sequence, hash and turn,
// and the stream sequence it is stored at.
type head struct {
	seq  uint64
	hash events.Hash
	turn int
	sseq uint64
}

var (
	_ store.Store       = (*Store)(nil)
	_ store.EventLookup = (*Store)(nil)
)

// IsURL reports whether s names a NATS store: it starts with nats://.
func IsURL(s string) bool { return strings.HasPrefix(s, "nats://") }

// URL is a NATS store's URL, nats://HOST:PORT[,HOST:PORT...][/STREAM][?replicas=N][&layout=N],
// taken apart.
type URL struct {
	// Server is the server's URL, without the stream or the query.
	Server string
	// Stream is the stream's name, DefaultStream when the URL names none (NamesStream false).
	Stream      string
	NamesStream bool
	// Replicas is ?replicas=N, from 1 to 5: the replicas of the stream and its blob and
	// snapshot stores when Open creates them; 0 when the URL says nothing.
	Replicas int
	// Layout is ?layout=N, Layout1, Layout2 or Layout3: the layout Open creates the stream in, and the
	// one an existing stream must be of; 0 when the URL says nothing (LayoutCurrent, and any
	// existing stream).
	Layout int
}

// ParseURL takes a NATS store's URL apart; errors name the URL.
func ParseURL(raw string) (URL, error) {
	if !IsURL(raw) {
		return URL{}, fmt.Errorf("%q is not a NATS store URL: it must start with nats://", raw)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return URL{}, fmt.Errorf("NATS store URL %q: %w", raw, err)
	}
	if u.Host == "" {
		return URL{}, fmt.Errorf("NATS store URL %q names no server", raw)
	}
	p := URL{Stream: strings.Trim(u.Path, "/")}
	p.NamesStream = p.Stream != ""
	if !p.NamesStream {
		p.Stream = DefaultStream
	}
	for _, c := range p.Stream {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return URL{}, fmt.Errorf("NATS store URL %q: stream name %q may hold only letters, digits, '_' and '-'", raw, p.Stream)
		}
	}
	if v := u.Query().Get("replicas"); v != "" {
		if p.Replicas, err = strconv.Atoi(v); err != nil || p.Replicas < 1 || p.Replicas > 5 {
			return URL{}, fmt.Errorf("NATS store URL %q: replicas=%s is not a number from 1 to 5", raw, v)
		}
	}
	if v := u.Query().Get("layout"); v != "" {
		if p.Layout, err = strconv.Atoi(v); err != nil || p.Layout < Layout1 || p.Layout > Layout3 {
			return URL{}, fmt.Errorf("NATS store URL %q: layout=%s is not %d, %d or %d", raw, v, Layout1, Layout2, Layout3)
		}
	}
	u.Path, u.RawPath, u.RawQuery, u.Fragment = "", "", "", ""
	p.Server = u.String()
	return p, nil
}

// Open connects to the server of rawURL (nats://HOST:PORT[,HOST:PORT...][/STREAM][?replicas=N]
// [&layout=N], stream TASKLOG by default) and opens the stream with its blob and snapshot
// stores, creating any that does not exist (with Options.Replicas replicas, else the URL's,
// else one; in the URL's layout, else LayoutCurrent). An existing stream is used in the layout
// its metadata names; a URL asking for another is refused.
// A server that cannot be reached fails Open within Options.Timeout.
func Open(rawURL string, opts *Options) (*Store, error) {
	u, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	server, stream := u.Server, u.Stream
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Timeout <= 0 {
		o.Timeout = defaultTimeout
	}
	if o.Replicas <= 0 {
		o.Replicas = max(u.Replicas, 1)
	}
	if o.layout == 0 {
		o.layout = u.Layout
	}
	s := &Store{url: server, stream: stream, timeout: o.Timeout, nc: o.Conn,
		heads: make(map[uuid.UUID]head), marked: make(map[uuid.UUID]bool)}
	if s.nc == nil {
		s.nc, err = nats.Connect(server, nats.Name("tasklog"), nats.Timeout(o.Timeout),
			nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Millisecond),
			// A server that stops answering (cut off, or stopped) is left for another of the
			// URL's within a few timeouts, not the client's default of minutes.
			nats.PingInterval(o.Timeout), nats.MaxPingsOutstanding(2),
			// Calls report their own errors; the client's default handler would print
			// asynchronous ones (a connection lost and being re-established) to stderr.
			nats.ErrorHandler(func(*nats.Conn, *nats.Subscription, error) {}))
		if err != nil {
			return nil, fmt.Errorf("open NATS store %s: connect to %s: %w", s.Path(), server, err)
		}
		s.ownConn = true
	}
	if o.Duplicates <= 0 {
		o.Duplicates = 2 * time.Minute
	}
	if err := s.setup(&o); err != nil {
		if s.ownConn {
			s.nc.Close()
		}
		return nil, s.errorf("open", err)
	}
	return s, nil
}

// setup opens or creates the stream and the object stores.
func (s *Store) setup(o *Options) error {
	replicas := o.Replicas
	js, err := jetstream.New(s.nc, jetstream.WithDefaultTimeout(s.timeout))
	if err != nil {
		return err
	}
	s.js = js
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	layout := o.layout
	if layout == 0 {
		layout = LayoutCurrent
	}
	if err := s.ensureStream(ctx, replicas, o.Duplicates, layout); err != nil {
		return err
	}
	if o.layout != 0 && s.layout != o.layout {
		return fmt.Errorf("the stream is of layout %d, not of layout %d as asked: a stream keeps the layout it was created in ('replay migrate' copies it into a new stream of layout %d)",
			s.layout, o.layout, LayoutCurrent)
	}
	if s.blobs, err = s.ensureObjectStore(ctx, s.stream+"_blobs", replicas); err != nil {
		return err
	}
	s.snaps, err = s.ensureObjectStore(ctx, s.stream+"_snapshots", replicas)
	return err
}

// streamConfig is the configuration of a new stream: compressed on the servers' disks (S2, each
// message block as the server seals it), appended to in atomic batches, never deleted from. A
// stream made without compression (by an earlier version, or by its operator) is used as it is.
func streamConfig(name string, replicas int, dups time.Duration, layout int) jetstream.StreamConfig {
	cfg := jetstream.StreamConfig{
		Name:               name,
		Description:        "tasklog event logs",
		Subjects:           []string{name + ".>"},
		Storage:            jetstream.FileStorage,
		Compression:        jetstream.S2Compression,
		Replicas:           replicas,
		Retention:          jetstream.LimitsPolicy,
		Discard:            jetstream.DiscardNew,
		Duplicates:         dups,
		AllowDirect:        true,
		AllowAtomicPublish: true,
		DenyDelete:         true,
		DenyPurge:          true,
		Metadata:           map[string]string{LayoutMetadataKey: strconv.Itoa(layout)},
	}
	if layout == Layout1 {
		cfg.MaxMsgsPerSubject, cfg.DiscardNewPerSubject = 1, true
	}
	return cfg
}

// ensureStream creates the stream in layout, or checks an existing one keeps the promises
// Append needs, and takes its layout from the stream's metadata.
func (s *Store) ensureStream(ctx context.Context, replicas int, dups time.Duration, layout int) error {
	want := streamConfig(s.stream, replicas, dups, layout)
	st, err := s.js.Stream(ctx, s.stream)
	if errors.Is(err, jetstream.ErrStreamNotFound) {
		st, err = s.js.CreateStream(ctx, want)
		if errors.Is(err, jetstream.ErrStreamNameAlreadyInUse) {
			// Another process created it meanwhile.
			st, err = s.js.Stream(ctx, s.stream)
		}
	}
	if err != nil {
		return fmt.Errorf("stream: %w", err)
	}
	cfg := st.CachedInfo().Config
	s.s2 = cfg.Compression == jetstream.S2Compression
	if s.layout, err = streamLayout(cfg); err != nil {
		return err
	}
	switch {
	case cfg.Discard != jetstream.DiscardNew:
		return errors.New("the stream exists but was not created by tasklog: it must discard new messages when full")
	case !cfg.AllowAtomicPublish:
		return errors.New("the stream exists but does not allow atomic batch publish (allow_atomic); the server must be 2.12 or later")
	case !cfg.AllowDirect:
		return errors.New("the stream exists but does not allow direct get")
	}
	return nil
}

// streamLayout returns the layout of a stream tasklog made, from its metadata: a stream that
// names none is of layout 1 if it keeps one message per subject, as that layout needs.
func streamLayout(cfg jetstream.StreamConfig) (int, error) {
	perSubject := cfg.MaxMsgsPerSubject == 1 && cfg.DiscardNewPerSubject
	switch v, ok := cfg.Metadata[LayoutMetadataKey]; {
	case !ok && !perSubject:
		return 0, errors.New("the stream exists but was not created by tasklog: it names no layout (metadata " + LayoutMetadataKey + ") and does not keep one message per subject")
	case !ok || v == "1":
		if !perSubject {
			return 0, errors.New("the stream is of layout 1 but does not keep one message per subject, which that layout needs")
		}
		return Layout1, nil
	case v == "2":
		return Layout2, nil
	case v == "3":
		return Layout3, nil
	default:
		return 0, fmt.Errorf("the stream is of layout %q (metadata %s), which this version of tasklog does not know: use a newer replay", v, LayoutMetadataKey)
	}
}

// ensureObjectStore opens the named object store, creating it if it does not exist.
func (s *Store) ensureObjectStore(ctx context.Context, name string, replicas int) (jetstream.ObjectStore, error) {
	os, err := s.js.ObjectStore(ctx, name)
	if errors.Is(err, jetstream.ErrBucketNotFound) {
		os, err = s.js.CreateObjectStore(ctx, jetstream.ObjectStoreConfig{
			Bucket: name, Storage: jetstream.FileStorage, Replicas: replicas, Compression: true,
		})
		if err != nil {
			if os2, err2 := s.js.ObjectStore(ctx, name); err2 == nil {
				return os2, nil
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("object store %s: %w", name, err)
	}
	return os, nil
}

// Path returns the server URL and the stream, nats://HOST:PORT/STREAM.
func (s *Store) Path() string { return s.url + "/" + s.stream }

// errorf wraps err with the operation, the server and the stream.
func (s *Store) errorf(op string, err error) error {
	return fmt.Errorf("%s: NATS store %s (server %s, stream %s): %w", op, s.Path(), s.url, s.stream, err)
}

// check fails with store.ErrClosed after Close.
func (s *Store) check() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.ErrClosed
	}
	return nil
}

// begin is check for an append, which Close waits for: end must be called when it is done.
func (s *Store) begin() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return store.ErrClosed
	}
	s.appends.Add(1)
	return nil
}

// Close waits for the appends under way to be stored or refused (each is bounded by
// Options.Timeout), then releases the connection if Open made it; every method fails with
// store.ErrClosed afterwards. Calling it again returns nil.
func (s *Store) Close() error {
	s.mu.Lock()
	already := s.closed
	s.closed = true
	s.mu.Unlock()
	if already {
		return nil
	}
	s.appends.Wait()
	if s.ownConn {
		// Drain lets replies in flight arrive; Close stops at once if that takes too long.
		done := make(chan struct{})
		s.nc.SetClosedHandler(func(*nats.Conn) { close(done) })
		if err := s.nc.Drain(); err != nil {
			s.nc.Close()
			return nil
		}
		select {
		case <-done:
		case <-time.After(s.timeout):
			s.nc.Close()
		}
	}
	return nil
}

// Subjects of the stream.

// idSubject is the subject that holds event id of task: in layout 1 the event itself, in
// layouts 2 and 3 its id marker.
func (s *Store) idSubject(task uuid.UUID, id ulid.ULID) string {
	switch s.layout {
	case Layout1:
		return s.stream + ".ev." + task.String() + "." + id.String()
	case Layout2:
		return s.stream + ".id." + task.String() + "." + id.String()
	}
	return s.stream + "." + subjectToken(task) + "." + subjectToken(id)
}

// taskFilter matches every event of task: in layouts 2 and 3 a literal subject, the task's
// log.
func (s *Store) taskFilter(task uuid.UUID) string {
	switch s.layout {
	case Layout1:
		return s.stream + ".ev." + task.String() + ".*"
	case Layout2:
		return s.stream + ".log." + task.String()
	}
	return s.stream + "." + subjectToken(task)
}

// idFilter matches the id markers of task's events (layouts 2 and 3).
func (s *Store) idFilter(task uuid.UUID) string {
	if s.layout == Layout2 {
		return s.stream + ".id." + task.String() + ".*"
	}
	return s.stream + "." + subjectToken(task) + ".*"
}

// logPrefix is what the subject of every task's log starts with, the task following it
// (layouts 2 and 3).
func (s *Store) logPrefix() string {
	if s.layout == Layout2 {
		return s.stream + ".log."
	}
	return s.stream + "."
}

// subjectToken spells a task or event id of layout 3's subjects: the unpadded URL-safe base64
// of its 16 bytes, 22 characters (letters, digits, '-' and '_', which a subject's token may
// hold), where the usual forms take 36 (a UUID) and 26 (a ULID).
func subjectToken(id [16]byte) string { return base64.RawURLEncoding.EncodeToString(id[:]) }

// parseSubjectToken reads a task id spelled by subjectToken.
func parseSubjectToken(tok string) (uuid.UUID, error) {
	var id uuid.UUID
	if len(tok) != base64.RawURLEncoding.EncodedLen(len(id)) {
		return id, fmt.Errorf("%q is not %d characters", tok, base64.RawURLEncoding.EncodedLen(len(id)))
	}
	if _, err := base64.RawURLEncoding.Decode(id[:], []byte(tok)); err != nil {
		return id, err
	}
	return id, nil
}

// taskOfLogSubject returns the task whose log is subject, one of the stream's log subjects.
func (s *Store) taskOfLogSubject(subject string) (uuid.UUID, error) {
	tok := strings.TrimPrefix(subject, s.logPrefix())
	if s.layout == Layout2 {
		return uuid.Parse(tok)
	}
	return parseSubjectToken(tok)
}

// markerSubject is the subject of task's marker message (layout 1).
func (s *Store) markerSubject(task uuid.UUID) string {
	return s.stream + ".task." + task.String()
}

// Layout returns the layout of the store's stream, Layout1, Layout2 or Layout3.
func (s *Store) Layout() int { return s.layout }

// BlocksCompressed reports whether the servers keep the stream's message blocks compressed on
// disk (S2), as a stream this version creates; a stream made before is kept as it was made.
func (s *Store) BlocksCompressed() bool { return s.s2 }
