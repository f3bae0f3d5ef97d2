// Package session is the API an agent runtime embeds: it opens a task's log, records what
// happens in the task, decides which rules go into each prompt, records that decision with its
// reasons, and explains any past decision from the log alone.
//
// A Session ties the store (the durable log), the projections (the folded task state) and the
// rule engine together. Everything a decision depends on enters the log first — the rule files'
// contents as a rules_snapshot whose contents are content-addressed blobs, the configuration in
// task_started — so the decision can be recomputed later, byte for byte (see Verify).
package session

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/projections"
	"github.com/tasklog/tasklog/rules"
	"github.com/tasklog/tasklog/store"
)

// Sentinel errors callers test with errors.Is.
var (
	// ErrNoDecision is returned by Explain for a turn that has no recorded decision.
	ErrNoDecision = errors.New("no decision at that turn")
	// ErrNoRule is returned by Explain for a rule the decision does not mention.
	ErrNoRule = errors.New("rule not in that decision")
	// ErrReserved is returned when a caller records an event type only the session writes.
	ErrReserved = errors.New("event type is written by the session itself")
	// ErrRootMismatch is returned when a task is reopened with workspace roots other than the
	// ones its log recorded.
	ErrRootMismatch = errors.New("workspace roots differ from the task's log")
)

// snapshotBytes is how many bytes of events may pass before the projection snapshot is written
// again, however few the events: decisions are ~10 KB each, and reopening a task reads every
// event after its snapshot, so a tail of decisions alone would cost more to read than to fold.
const snapshotBytes = 128 << 10

// snapshotName is the name the projection snapshot is stored under.
var snapshotName = fmt.Sprintf("projection/v%d", projections.Version)

// Root is one workspace root: the absolute path the log records and the file system the rule
// files are read from.
type Root struct {
	// Path is the root as the runtime names it ("/home/me/proj", "C:/src/app").
	Path string
	// FS reads the root's files; nil means the root has no rule files to read.
	FS fs.FS
	// Dir, when set, is the folder FS reads on this machine (FS is os.DirFS(Dir)): decisions
	// then watch the root for changes (on Linux) instead of checking every rule file each
	// time. See DirRoot.
	Dir string
}

// DirRoot is the root of a folder on this machine, recorded under its own path: FS reads it
// and decisions watch it.
func DirRoot(dir string) Root {
	return Root{Path: filepath.ToSlash(dir), FS: os.DirFS(dir), Dir: dir}
}

// Options configure Open. The zero value is usable for a task that needs no rule files.
type Options struct {
	// Roots are the workspace roots. A new task records them in task_started; a reopened task
	// must be given the same paths (the file systems may differ: that is what replay's what-if
	// does).
	Roots []Root
	// Home reads the user's global rules (~/Documents/Cline/Rules, ~/.codeium/windsurf, …);
	// nil for none.
	Home fs.FS
	// Remote are the organization's remote rules.
	Remote []rules.RemoteRule
	// MaxFilesPerFolder caps the files taken from one rules folder; 0 means
	// rules.DefaultMaxFilesPerFolder. What was read is recorded in the rules snapshot, so replay
	// needs no cap.
	MaxFilesPerFolder int
	// Runtime names the embedding runtime, recorded in task_started.
	Runtime events.Runtime
	// OS is recorded in task_started for the os conditional; empty leaves it unknown.
	OS string
	// Config is the engine configuration recorded in a new task's task_started; nil means the
	// defaults. A reopened task keeps the configuration its log recorded.
	Config *projections.Config
	// Now is the clock events are stamped with; nil means time.Now.
	Now func() time.Time
	// IDs makes event ids; nil means a new monotonic source on crypto/rand.
	IDs *events.IDSource
	// Started, when set, is the task_started event a new task begins with, as an importer
	// built it (with its own time and origin); Roots, Runtime, OS and Config are then ignored
	// for the new task's first event.
	Started *events.Event
}

// Session is an open task. It is safe for concurrent use by many goroutines; appends are
// serialized in the order they reach the session.
type Session struct {
	db   store.Store
	task uuid.UUID
	opts Options

	mu    sync.Mutex
	state *projections.Task
	head  uint64
	// headHash is the hash of the event at head (Reattach compares it).
	headHash events.Hash
	// sinceSnapshot counts events folded since the projection snapshot was last written, and
	// bytesSinceSnapshot their payloads' bytes.
	sinceSnapshot      int
	bytesSinceSnapshot int
	// snapshotBuf is the memory of the last projection snapshot written, for the next one's.
	snapshotBuf []byte
	// rules caches the rule set of the latest snapshot, keyed by that snapshot's sequence.
	rules    *rules.RuleSet
	rulesSeq uint64
	// last is the full form of the decision this session last wrote, at seq lastSeq: the
	// next decision is written against it. lastPrivate tells that only the decision DecideInto
	// wrote it into holds it; lastOwns, that its Included and Excluded arrays are its own, not
	// the record's before it. spareRecord are arrays for the next record, those of a record
	// nobody holds any more (see decideLocked).
	last        *events.Decision
	lastSeq     uint64
	lastPrivate bool
	lastOwns    [2]bool
	spareRecord recordSpares
	// deltas is what was written since the last decision written in full.
	deltas deltaChain
	// files are the rule files the last decision collected, recorded in the snapshot at
	// filesSeq.
	files    []rules.File
	filesSeq uint64
	// evaluated is the last recorded evaluation (see evaluate).
	evaluated evaluated
	// spare is a results array for the next evaluation that reuses the last one's outcomes
	// (see spareResults), spareContext a paths array for the next context, spareApplied an
	// array for its list of conditional rules applied, and changed the indexes of the paths
	// whose evidence changed (see resourced).
	spare        []rules.Result
	spareContext []rules.ContextPath
	spareApplied []rules.AppliedRule
	changed      []int
	// foldMore, when set, folds each event the session appends, after the projection, into what a
	// session built on this one keeps beside it (AgentSession's Deliveries fold).
	foldMore func(events.Event) error
	// matches keeps the matches arrays the evaluations made that nobody else holds (matchArrays).
	matches matchArrays
	// decisionBuf is the memory the next decision's bytes are encoded into (newDecisionEvent),
	// delta the decision as it is written against the one before, until it is encoded, and
	// batch the array of the events a decision appends (see decideLocked).
	decisionBuf []byte
	delta       events.Decision
	batch       []events.Event
	// rendered is the last rendering of the prompt sections (see render).
	rendered rendered
	// reader remembers the rule files it read, so a decision reads again only what changed;
	// ws is the workspace it reads them in (setRoots).
	reader *rules.Reader
	ws     rules.Workspace
	// watch is what Watch keeps between calls (watch.go).
	watch watchState
	// stale is set when the projection went ahead of the log (see ErrStale): every append
	// returns it, and no snapshot is written.
	stale error
}

// ErrStale is returned by every write of a session whose projection went ahead of the log: it
// folded a hook's events to decide on them in the same commit, and that commit failed. Nothing
// of it was written; the task must be opened again.
var ErrStale = errors.New("the session folded events its log does not hold: open the task again")

// Open opens the task's log in db, creating it with a task_started event when it has none. A
// zero task id makes a new task with a random id. Reopening resumes from the latest projection
// snapshot plus the events after it.
func Open(ctx context.Context, db store.Store, task uuid.UUID, opts Options) (*Session, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.IDs == nil {
		opts.IDs = events.NewIDSource(nil)
	}
	if task == uuid.Nil {
		task = uuid.New()
	}
	s := &Session{db: db, task: task, opts: opts, reader: &rules.Reader{}}
	s.setRoots(opts.Roots)
	head, err := db.Head(task)
	switch {
	case errors.Is(err, store.ErrTaskNotFound):
		return s, s.start(ctx)
	case err != nil:
		return nil, fmt.Errorf("open task %s: %w", task, err)
	}
	if err := s.resume(ctx, head); err != nil {
		return nil, fmt.Errorf("open task %s: %w", task, err)
	}
	if err := s.checkRoots(); err != nil {
		return nil, fmt.Errorf("open task %s: %w", task, err)
	}
	return s, nil
}

func (s *Session) start(ctx context.Context) error {
	s.state = projections.New()
	if st := s.opts.Started; st != nil {
		if st.Type != events.TypeTaskStarted {
			return fmt.Errorf("start task: Options.Started is a %s event", st.Type)
		}
		_, err := s.appendEvents(ctx, []events.Event{{Type: st.Type, V: st.V, Data: st.Data, Time: st.Time, Origin: st.Origin}}, 0)
		return err
	}
	roots := make([]string, len(s.opts.Roots))
	for i, r := range s.opts.Roots {
		roots[i] = r.Path
	}
	ts := &events.TaskStarted{Roots: roots, Runtime: s.opts.Runtime, OS: s.opts.OS}
	if s.opts.Config != nil {
		raw, err := json.Marshal(s.opts.Config)
		if err != nil {
			return fmt.Errorf("encode engine configuration: %w", err)
		}
		ts.Config = raw
	}
	_, err := s.append(ctx, ts)
	return err
}

// resume restores the projection from its snapshot, when there is a usable one, and folds the
// events after it, up to head or later: another writer may append after head was read, and the
// read then takes in its events too (a later head of the same chain, which the session takes).
// Fewer events than head is a broken chain.
func (s *Session) resume(ctx context.Context, h store.Head) error {
	head := h.Seq
	s.headHash = h.Hash
	from := uint64(1)
	s.state = projections.New()
	if seq, data, err := s.db.Snapshot(s.task, snapshotName); err == nil && seq <= head {
		if st, err := projections.Restore(data); err == nil && st.LastSeq() == seq {
			s.state, from = st, seq+1
		}
	} else if err != nil && !errors.Is(err, store.ErrNoSnapshot) {
		return err
	}
	for ev, err := range s.db.Events(ctx, s.task, from) {
		if err != nil {
			return err
		}
		if err := s.state.Apply(ev); err != nil {
			return err
		}
		if ev.Seq == head && ev.Hash != h.Hash {
			return fmt.Errorf("%w: event %d's hash differs from the head's", store.ErrChainBroken, head)
		}
		if ev.Seq > head {
			s.headHash = ev.Hash // appended by another writer since head was read
		}
		s.sinceSnapshot++
		s.bytesSinceSnapshot += len(ev.Data)
	}
	s.head = s.state.LastSeq()
	if s.head < head {
		return fmt.Errorf("%w: log has %d events, folded %d", store.ErrChainBroken, head, s.head)
	}
	return nil
}

func (s *Session) checkRoots() error {
	if len(s.opts.Roots) == 0 {
		return nil
	}
	recorded := s.state.Roots()
	if len(recorded) != len(s.opts.Roots) {
		return fmt.Errorf("%w: recorded %q, given %d roots", ErrRootMismatch, recorded, len(s.opts.Roots))
	}
	for i, r := range s.opts.Roots {
		if r.Path != recorded[i] {
			return fmt.Errorf("%w: root %d is %q in the log, %q given", ErrRootMismatch, i, recorded[i], r.Path)
		}
	}
	return nil
}

// Task is the task's id.
func (s *Session) Task() uuid.UUID { return s.task }

// Close stops the session's watches of its workspace roots. The store stays open, and the
// session stays usable: a later decision watches again.
func (s *Session) Close() error {
	s.reader.Close()
	return nil
}

// Reattach carries the session on with db, the same log opened again, for a runtime that
// closes its store between uses (so that other processes can open the file) and keeps its
// sessions, their projection and their watched folders. It checks that the task's head in db is
// the one the session knows, sequence number and hash: when another writer appended meanwhile,
// or db is another log, the session stays as it was and the error wraps
// store.ErrVersionConflict (or the store's error reading the head): open the task again.
func (s *Session) Reattach(db store.Store) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stale != nil {
		return s.stale
	}
	h, err := db.Head(s.task)
	if err != nil {
		return fmt.Errorf("task %s: reattach: %w", s.task, err)
	}
	if h.Seq != s.head || h.Hash != s.headHash {
		return fmt.Errorf("task %s: reattach: the log's head is seq %d, the session's seq %d: %w",
			s.task, h.Seq, s.head, store.ErrVersionConflict)
	}
	s.db = db
	return nil
}

// Version is the sequence number of the last event in the task's log, as this session knows it.
func (s *Session) Version() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.head
}

// Turn is the turn the next decision will have.
func (s *Session) Turn() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Turn()
}

// Context is the evaluation context the next decision would see.
func (s *Session) Context() rules.EvaluationContext {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Context()
}

// append writes payloads as one atomic batch, stamped with the session's clock.
func (s *Session) append(ctx context.Context, payloads ...events.Payload) (store.Appended, error) {
	evs := make([]events.Event, len(payloads))
	for i, p := range payloads {
		ev, err := events.New(p)
		if err != nil {
			return store.Appended{}, err
		}
		evs[i] = ev
	}
	return s.appendEvents(ctx, evs, 0)
}

// appendEvents writes prepared events (type, version, data, and optionally time and origin) as
// one atomic batch, folds them, and writes a projection snapshot when enough events have
// passed. The caller must hold s.mu (or be the only user, as in Open).
//
// The first folded events are in the projection already (decideLocked's pre): they are not
// folded again, and when the append fails the session is stale.
func (s *Session) appendEvents(ctx context.Context, evs []events.Event, folded int) (store.Appended, error) {
	if s.stale != nil {
		return store.Appended{}, s.stale
	}
	now := s.opts.Now().UTC()
	turn := s.state.Turn()
	for i := range evs {
		ev := &evs[i]
		if ev.Time.IsZero() {
			ev.Time = now
		}
		if ev.ID == (ulid.ULID{}) { // an idempotency key's id is kept
			id, err := s.opts.IDs.New(ev.Time)
			if err != nil {
				return store.Appended{}, err
			}
			ev.ID = id
		}
		ev.Task, ev.Turn = s.task, turn
		if ev.Type == events.TypeDecision { // what follows a decision is in the next turn
			turn++
		}
	}
	res, err := s.db.Append(ctx, s.task, s.head, evs...)
	if err == nil && res.Duplicate && folded > 0 {
		err = fmt.Errorf("%w: the batch is in the log already", store.ErrDuplicateID)
	}
	if err != nil {
		err = fmt.Errorf("task %s: append %s: %w", s.task, evs[0].Type, err)
		if folded > 0 {
			s.stale = fmt.Errorf("%w: %w", ErrStale, err)
			return res, s.stale
		}
		return res, err
	}
	for _, ev := range res.Events[folded:] {
		if err := s.foldEvent(ev); err != nil {
			// The event is durable but the fold refused it: the log is the truth, so the
			// session stops here rather than diverge from it.
			return res, err
		}
	}
	s.advanced(res.Events)
	return res, nil
}

// foldEvent folds an event of the log into the projection, then into what foldMore keeps. The
// caller holds s.mu.
func (s *Session) foldEvent(ev events.Event) error {
	err := s.state.Apply(ev)
	if err == nil && s.foldMore != nil {
		err = s.foldMore(ev)
	}
	if err != nil {
		return fmt.Errorf("task %s: fold %s: %w", s.task, ev, err)
	}
	return nil
}

// advanced moves the session's head to the last of evs, appended and folded, counts them
// toward the next projection snapshot and writes it when due. The caller holds s.mu.
func (s *Session) advanced(evs []events.Event) {
	last := evs[len(evs)-1]
	s.head, s.headHash = last.Seq, last.Hash
	s.sinceSnapshot += len(evs)
	for _, ev := range evs {
		s.bytesSinceSnapshot += len(ev.Data)
	}
	s.snapshotDue()
}

// snapshotDue writes the projection snapshot when enough events or bytes passed since the last
// one. A snapshot is a cache of the fold, and the events are in the log already: failing to
// write it loses nothing and fails nothing (a hook whose delivery is in the log must still
// deliver it). It is tried again after the next append (AgentSession.Close reports a failure).
func (s *Session) snapshotDue() {
	if every := s.state.Config().SnapshotEvery; every > 0 && (s.sinceSnapshot >= every || s.bytesSinceSnapshot >= snapshotBytes) {
		_ = s.writeSnapshot()
	}
}

// maxKeptSnapshot bounds the memory a session keeps for its next projection snapshot: a
// snapshot is bounded as the projection is, tens of kilobytes in practice.
const maxKeptSnapshot = 1 << 20

func (s *Session) writeSnapshot() error {
	if s.stale != nil {
		return nil // the projection is not the log's
	}
	data, err := s.state.AppendMarshal(s.snapshotBuf[:0])
	if err != nil {
		return fmt.Errorf("task %s: snapshot projection: %w", s.task, err)
	}
	// The store keeps no reference to the bytes: the next snapshot is encoded in them.
	s.snapshotBuf = nil
	if cap(data) <= maxKeptSnapshot {
		s.snapshotBuf = data[:0]
	}
	if err := s.db.PutSnapshot(s.task, snapshotName, s.state.LastSeq(), data); err != nil {
		return fmt.Errorf("task %s: write projection snapshot: %w", s.task, err)
	}
	s.sinceSnapshot, s.bytesSinceSnapshot = 0, 0
	return nil
}
