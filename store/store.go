// Package store keeps tasklog's durable per-task event logs in one embedded bbolt file.
//
// Each task's events live in their own bucket under 8-byte big-endian sequence keys, each stored
// as its hash and what of its canonical binary encoding (package events) the file does not hold
// elsewhere, compressed where that is shorter (see record.go and package payloadcodec), and
// chained by hash over that encoding, with an index of their
// ids beside them, so that opening a task and appending to it cost the same whatever its
// length. Append checks an expected
// version, assigns sequence numbers, seals the chain and is idempotent by event id; concurrent
// appends to any number of tasks are group-committed into shared, fsynced transactions, each
// committed by one of the writers in turn (see commit.go). Reads stream a task from any sequence in chunks without holding a
// transaction while the caller works. Beside the logs the file holds content-addressed blobs and
// projection snapshots. The store never decodes a payload: what an event means is not its concern.
//
//	db, err := store.Open("tasks.db", nil)
//	if err != nil { ... }
//	defer db.Close()
//	res, err := db.Append(ctx, task, head, ev1, ev2)
//	for ev, err := range db.Events(ctx, task, 1) { ... }
package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	bolt "go.etcd.io/bbolt"
	berrors "go.etcd.io/bbolt/errors"
)

const (
	// fileMode keeps task logs private to their owner: they hold users' prompts and code.
	fileMode = 0o600
	// defaultTimeout is how long Open waits for another process to release the file.
	defaultTimeout = time.Second
	// defaultMaxBatch bounds how many appends share one transaction.
	defaultMaxBatch = 256
	// lockPoll is how often bbolt retries a file lock held by another process.
	lockPoll = 50 * time.Millisecond
	// allocSize is how far ahead of its pages the file grows once it is larger than that. bbolt's
	// default, 16 MiB, left a file of 18 MB of pages 34 MB long; 1 MiB costs one more
	// truncate and fsync per MiB written, which a commit's own fsync dwarfs.
	allocSize = 1 << 20
)

// Options configures Open. The zero value (or nil) is a durable, writable store.
type Options struct {
	// Timeout is how long Open waits for another process holding the file to let go before it
	// fails with ErrLocked. Zero means one second; negative means do not wait.
	Timeout time.Duration
	// NoSync skips the fsync after each commit, and the one after the file grows. An
	// acknowledged append can then be lost when the
	// machine (not just the process) crashes. Meant for tests and benchmarks that are not about
	// durability; never for a real log.
	NoSync bool
	// ReadOnly opens the file for reading only; several read-only openers may share it, and
	// every write fails with ErrReadOnly.
	ReadOnly bool
	// MaxBatch is the most appends one group commit takes. Zero means 256.
	MaxBatch int
}

// DB is an open task log file. Its methods are safe for concurrent use.
type DB struct {
	bolt     *bolt.DB
	path     string
	readOnly bool
	maxBatch int

	// cmu guards the commit queue (see submit); idle is signalled when a leader finds the
	// queue empty and no commit is running any more.
	cmu        sync.Mutex
	idle       *sync.Cond
	closed     bool
	committing bool
	queue      []*appendRequest
	// wokeOthers tells that the last commit answered writers besides its leader; only the
	// leader of the moment reads or writes it (see lead).
	wokeOthers bool
	// arena is the memory of the last commit's keys and values, for the next commit's: bbolt
	// copies what a transaction put into its pages when it commits and keeps nothing of it
	// after. Only the leader of the moment uses it, as wokeOthers.
	arena []byte
	// enc is the last commit's buffer for an event's encoding before compression, for the
	// next commit's; the leader's, as arena.
	enc []byte
	// snapshotVal is the memory of the last projection snapshot put, for the next one's: only
	// the write transaction of the moment uses it (see PutSnapshot).
	snapshotVal []byte

	closeOnce sync.Once
	closeErr  error

	// format is the file's layout version: formatV4 once open for writing.
	format string
	// noCompress writes records and blobs uncompressed, as format 2 did (tests only).
	noCompress bool
	// wholeRecords writes records whole, compressed where that is shorter, as format 3 did
	// (tests only).
	wholeRecords bool

	// commits counts write transactions, for the group-commit benchmark.
	commits atomic.Int64

	// committedHook is nil outside tests: it runs after a transaction commits, outside it.
	committedHook func()
	// stageHook is nil outside tests; see writer.hook.
	stageHook func(r *appendRequest, i int) error
}

// Open opens the task log at path, creating it (mode 0600) if it does not exist. The parent
// directory must exist.
func Open(path string, opts *Options) (*DB, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	// bbolt polls the lock every 50ms and gives up one poll early; the extra poll makes the
	// wait the error reports the wait that happened.
	lockWait := o.Timeout + lockPoll
	switch {
	case o.Timeout == 0:
		o.Timeout = defaultTimeout
		lockWait = o.Timeout + lockPoll
	case o.Timeout < 0:
		// bbolt treats zero as "wait forever"; a nanosecond means a single attempt.
		o.Timeout, lockWait = 0, time.Nanosecond
	}
	if o.MaxBatch <= 0 {
		o.MaxBatch = defaultMaxBatch
	}
	if err := checkPath(path, o.ReadOnly); err != nil {
		return nil, fmt.Errorf("open task log %q: %w", path, err)
	}
	if !o.ReadOnly {
		if err := precheck(path); err != nil {
			return nil, openError(path, o.Timeout, err)
		}
	}
	b, err := openBolt(path, &bolt.Options{Timeout: lockWait, ReadOnly: o.ReadOnly, NoSync: o.NoSync, NoGrowSync: o.NoSync})
	if err != nil {
		return nil, openError(path, o.Timeout, err)
	}
	b.AllocSize = allocSize
	db := &DB{bolt: b, path: path, readOnly: o.ReadOnly, maxBatch: o.MaxBatch}
	db.idle = sync.NewCond(&db.cmu)
	if err := db.check(); err != nil {
		b.Close()
		return nil, fmt.Errorf("open task log %q: %w", path, err)
	}
	return db, nil
}

// checkPath turns the common mistakes into clear errors before bbolt sees them.
func checkPath(path string, readOnly bool) error {
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("directory %q: %w; create it first", dir, err)
	}
	if !st.IsDir() {
		return fmt.Errorf("%q is not a directory", dir)
	}
	st, err = os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return fmt.Errorf("%w: it is a directory", ErrNotDatabase)
	case err != nil && readOnly:
		return err
	case err == nil && st.Size() == 0 && readOnly:
		// Open for writing, an empty file becomes a new database; read-only, it cannot.
		return fmt.Errorf("the file is empty (0 bytes), %w; open it for writing to create one there", ErrNotDatabase)
	}
	return nil
}

// describeFile says what a file that is not a bbolt database looks like, from its first bytes.
func describeFile(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	st, err := f.Stat()
	if err != nil {
		return ""
	}
	size := st.Size()
	switch {
	case size == 0:
		return "the file is empty (0 bytes)"
	case bytes.HasPrefix(head, []byte("SQLite format 3\x00")):
		return fmt.Sprintf("the file is an SQLite database (%d bytes)", size)
	case bytes.HasPrefix(head, []byte{0x1f, 0x8b}):
		return fmt.Sprintf("the file is gzip-compressed (%d bytes)", size)
	case looksLikeText(head):
		line, _, _ := bytes.Cut(head, []byte("\n"))
		if len(line) > 40 {
			line = append(line[:40:40], "…"...)
		}
		return fmt.Sprintf("the file is text (%d bytes) starting %q", size, line)
	}
	return fmt.Sprintf("the file (%d bytes) does not start with a bbolt header: its first bytes are %x", size, head[:min(len(head), 16)])
}

// looksLikeText reports whether b is valid UTF-8 without control characters other than space.
func looksLikeText(b []byte) bool {
	if !utf8.Valid(b) && !utf8.Valid(b[:max(0, len(b)-utf8.UTFMax)]) {
		return false
	}
	for _, c := range b {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' {
			return false
		}
	}
	return true
}

// precheck looks at an existing file before it is opened for writing. A writable open reads
// the freelist at once, and on a file cut short that read faults inside bbolt, past recovery of
// the descriptor it holds. The meta pages say how long the file must be; they are read here
// directly, which costs two small reads instead of a read-only open of the whole file. A file
// whose meta pages are both unreadable is left to bbolt, which says so.
func precheck(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || st.Size() == 0 {
		return nil
	}
	pr, _, d := readMeta(f)
	if d != nil {
		return nil
	}
	if need := int64(pr.hwm * pr.pageSize); need > st.Size() {
		return fmt.Errorf("%w: the file is %d bytes but its pages reach %d: it was truncated", ErrCorrupt, st.Size(), need)
	}
	return nil
}

// checkSize fails for a file shorter than the pages its meta page counts.
func (db *DB) checkSize() error {
	st, err := os.Stat(db.path)
	if err != nil {
		return err
	}
	return db.view(func(tx *bolt.Tx) error {
		if need := tx.Size(); need > st.Size() {
			return fmt.Errorf("%w: the file is %d bytes but its pages reach %d: it was truncated", ErrCorrupt, st.Size(), need)
		}
		return nil
	})
}

// openBolt opens the file and turns a bbolt panic or a fault on a damaged mapping into an
// error: a bad file must never take the process down.
func openBolt(path string, opts *bolt.Options) (b *bolt.DB, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			b, err = nil, fmt.Errorf("%w: %v", ErrCorrupt, r)
		}
	}()
	return bolt.Open(path, fileMode, opts)
}

// openError says what went wrong opening the file and what to do about it.
func openError(path string, timeout time.Duration, err error) error {
	switch {
	case errors.Is(err, berrors.ErrTimeout):
		return fmt.Errorf("open task log %q: %w (waited %v); close the other tasklog or open with a longer timeout",
			path, ErrLocked, timeout)
	case errors.Is(err, berrors.ErrInvalid):
		if what := describeFile(path); what != "" {
			return fmt.Errorf("open task log %q: %s, %w", path, what, ErrNotDatabase)
		}
		return fmt.Errorf("open task log %q: %w: %v", path, ErrNotDatabase, err)
	case errors.Is(err, berrors.ErrVersionMismatch), errors.Is(err, berrors.ErrChecksum):
		return fmt.Errorf("open task log %q: %w: %v", path, ErrNotDatabase, err)
	case errors.Is(err, ErrCorrupt):
		return fmt.Errorf("open task log %q: %w", path, err)
	}
	if st, serr := os.Stat(path); serr == nil && st.Size() > 0 && st.Size() < 2*int64(os.Getpagesize()) {
		if what := describeFile(path); what != "" {
			return fmt.Errorf("open task log %q: %s, %w (%v)", path, what, ErrNotDatabase, err)
		}
		return fmt.Errorf("open task log %q: %w: %v", path, ErrNotDatabase, err)
	}
	return fmt.Errorf("open task log %q: %w", path, err)
}

// check makes sure the file is a whole task log of a format this code knows, lays out the
// buckets of a new one and, open for writing, upgrades an older format in place.
func (db *DB) check() error {
	if err := db.checkSize(); err != nil {
		return err
	}
	err := db.view(func(tx *bolt.Tx) (err error) {
		db.format, err = checkFormat(tx)
		return err
	})
	switch {
	case db.readOnly && errors.Is(err, errNoFormat):
		// An empty database opened read-only: reads find nothing, which is the truth.
		return nil
	case db.readOnly || err != nil && !errors.Is(err, errNoFormat):
		return err
	case db.format == string(formatV1):
		if err := db.upgrade(); err != nil {
			return err
		}
		db.format = string(formatV2)
		return db.markFormat4()
	case db.format == string(formatV2), db.format == string(formatV3):
		return db.markFormat4()
	case err == nil:
		return nil
	}
	db.format = string(formatV4)
	return db.update(func(tx *bolt.Tx) error {
		if _, err := checkFormat(tx); !errors.Is(err, errNoFormat) {
			return err
		}
		for _, name := range [][]byte{bucketMeta, bucketBlobs, bucketSnapshots} {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return tx.Bucket(bucketMeta).Put(keyFormat, formatV4)
	})
}

// markFormat4 marks a file of format 2 or 3 as format 4 before anything in the form of format 4
// is written to it: its records stay as they are, readable beside the new ones.
func (db *DB) markFormat4() error {
	err := db.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyFormat, formatV4)
	})
	if err != nil {
		return fmt.Errorf("mark the file format 4: %w", err)
	}
	db.format = string(formatV4)
	return nil
}

// Format is the version of the file's layout: "4" for a file this version has written to
// (records that leave out what the file holds elsewhere, kept compressed where that saves room,
// and blobs kept compressed likewise), "3", "2" or "1" for a file of an older version opened
// read-only, "" for a new file opened read-only. Opened for writing, a file of format 1, 2 or 3
// becomes format 4; its records are kept as they are.
func (db *DB) Format() string { return db.format }

// errNoFormat marks a database with no buckets at all: a new file.
var errNoFormat = errors.New("new database")

// checkFormat returns the file's format, if it is one this code reads.
func checkFormat(tx *bolt.Tx) (string, error) {
	meta := tx.Bucket(bucketMeta)
	if meta == nil {
		if k, _ := tx.Cursor().First(); k != nil {
			return "", fmt.Errorf("%w: a bbolt database of something else (it has a bucket %q)", ErrNotDatabase, k)
		}
		return "", errNoFormat
	}
	switch f := meta.Get(keyFormat); string(f) {
	case string(formatV1), string(formatV2), string(formatV3), string(formatV4):
		return string(f), nil
	default:
		return "", fmt.Errorf("%w: unknown format %q; a newer tasklog wrote it", ErrNotDatabase, f)
	}
}

// Path is the file the database was opened from.
func (db *DB) Path() string { return db.path }

// Close waits for every pending append to be committed or refused, then closes the file.
// Calling it again returns nil.
func (db *DB) Close() error {
	db.closeOnce.Do(func() {
		db.cmu.Lock()
		db.closed = true
		for db.committing {
			db.idle.Wait()
		}
		db.cmu.Unlock()
		db.closeErr = db.bolt.Close()
	})
	return db.closeErr
}

// view runs fn in a read transaction, turning a panic or fault inside bbolt into ErrCorrupt.
func (db *DB) view(fn func(*bolt.Tx) error) error { return db.viewTask(uuid.Nil, fn) }

// viewTask is view for a transaction about task: a panic is reported with the damaged page
// found on the way to task's buckets or inside them.
func (db *DB) viewTask(task uuid.UUID, fn func(*bolt.Tx) error) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = db.corruptError(task, r)
		}
	}()
	return boltError(db.bolt.View(fn))
}

// update runs fn in a write transaction and commits it; a panic or fault becomes ErrCorrupt and
// the transaction is rolled back.
func (db *DB) update(fn func(*bolt.Tx) error) error { return db.updateTask(uuid.Nil, fn) }

// updateTask is update for a transaction about task (see viewTask).
func (db *DB) updateTask(task uuid.UUID, fn func(*bolt.Tx) error) (err error) {
	if db.readOnly {
		return ErrReadOnly
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			err = db.corruptError(task, r)
		}
	}()
	return boltError(db.bolt.Update(fn))
}

// panicPage finds a page number in one of bbolt's panic messages.
var panicPage = regexp.MustCompile(`(?:page type: |pgid \(|pgId \(|page )(\d+)`)

// corruptError describes a panic bbolt raised reading damaged pages: the file, the task and the
// page, as far as they are known, wrapping ErrCorrupt.
func (db *DB) corruptError(task uuid.UUID, r any) error {
	where := ""
	if task != uuid.Nil {
		where = fmt.Sprintf(" task %s:", task)
	}
	if d := damagedPage(db.path, task); d != nil {
		return fmt.Errorf("task log %q:%s %w: %s (bbolt: %v)", db.path, where, ErrCorrupt, d, r)
	}
	if m := panicPage.FindStringSubmatch(fmt.Sprint(r)); m != nil {
		return fmt.Errorf("task log %q:%s %w: page %s: %v", db.path, where, ErrCorrupt, m[1], r)
	}
	return fmt.Errorf("task log %q:%s %w: %v (no damaged page found on the way to the task's buckets)", db.path, where, ErrCorrupt, r)
}

// boltError maps bbolt's errors onto this package's sentinels where a caller would test them.
func boltError(err error) error {
	switch {
	case errors.Is(err, berrors.ErrDatabaseNotOpen):
		return ErrClosed
	case errors.Is(err, berrors.ErrDatabaseReadOnly):
		return ErrReadOnly
	}
	return err
}
