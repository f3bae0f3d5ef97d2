package session

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/projections"
	"github.com/tasklog/tasklog/store"
)

// importer runs both passes of Import over the same lines with the same checks; only the
// second assigns ids and times and writes.
type importer struct {
	ctx  context.Context
	db   store.Store
	name string
	opts ImportOptions

	writing bool
	// w writes the second pass's batches; once one could not be written (w.failed), an error
	// is the store's, not the file's.
	w        *importWriter
	fileTask uuid.UUID
	tasks    map[uuid.UUID]*importTask
	order    []*importTask
	// current is the task of the last event line; the tasks before it are done.
	current *importTask
	// blobs are the sums of the blob lines read so far (second pass: every line of the file).
	blobs map[[32]byte]bool
	// closed is the task whose closing line is the last line read, which a signature line may follow.
	closed *importTask
	// sums are the first pass's sums of its chunks of lines, which the second compares.
	sums chunkSums

	// Second pass: what waits to be written.
	batch      []events.Event
	batchTask  *importTask
	batchBytes int
	blobBatch  [][]byte
	blobBytes  int
}

// importTask is what the checks keep of one task of the file.
type importTask struct {
	id    uuid.UUID
	first int // the line of its first event
	// hashed tells whether its lines carry hashes (an export) or none do (hand-written).
	hashed bool
	n      uint64      // events so far; the last one's seq
	prev   events.Hash // the last event's hash
	turn   int
	// decisions rebuilds each decision from its base (outcomes and context paths, without the
	// evidence), so that a delta that does not fit the decision before it is refused as replay
	// would refuse it; it keeps one decision.
	decisions chain
	state     *projections.Task
	// ids are the event ids the task's lines gave so far, with the line of each: an id is
	// stored once in a task, so a file that gives one twice is refused before anything is
	// written. The first pass alone keeps them: the second reads only the lines it checked.
	ids     map[ulid.ULID]int
	end     int // the line of its closing line, 0 until one is read
	closing events.End
	signed  int // the line of its signature line, 0 until one is read
	// done is set once another task's line follows the task's: its fold is dropped, so the
	// memory Import holds per task is a few words, whatever the number of tasks.
	done bool

	// stored is the task's head in the database when the pass began; storedNext reads the
	// stored events in order to compare them with the file's.
	stored     uint64
	storedNext func() (events.Event, error, bool)
	storedStop func()

	written  uint64 // second pass: the head after the last batch written
	appended int
}

func newImporter(ctx context.Context, db store.Store, name string, opts ImportOptions) *importer {
	return &importer{ctx: ctx, db: db, name: name, opts: opts, tasks: map[uuid.UUID]*importTask{}, blobs: map[[32]byte]bool{},
		sums: newChunkSums(name)}
}

// startWriting readies the second pass: the same checks from the start, now writing. The task
// a line without one gets and the blobs the file carries are kept from the first pass.
func (im *importer) startWriting() {
	im.stop()
	im.writing = true
	im.sums.again = true
	im.tasks, im.order, im.current = map[uuid.UUID]*importTask{}, nil, nil
	im.w = startImportWriter()
}

// stop releases the readers of stored events and waits for the writes handed over.
func (im *importer) stop() {
	for _, t := range im.order {
		t.release()
	}
	im.finishWriting()
}

// release drops what a task needs only while its lines are read.
func (t *importTask) release() {
	if t.storedStop != nil {
		t.storedStop()
	}
	t.state, t.storedNext, t.storedStop, t.ids, t.decisions.full = nil, nil, nil, nil, nil
}

func (im *importer) results() []Imported {
	out := make([]Imported, 0, len(im.order))
	for _, t := range im.order {
		out = append(out, Imported{Task: t.id, Events: int(t.n), Appended: t.appended, Closed: t.end != 0,
			Verified: t.signed != 0 && im.opts.VerifyKey != nil})
	}
	return out
}

// pass reads every line of r through the checks (and, in the second pass, into the batches).
// With ahead, the lines are read and parsed ahead of the checks on goroutines of their own
// (parseAhead), which have stopped reading r when pass returns; without, one after the other
// (fileLines), so that a pipe is read no further than the line that fails.
func (im *importer) pass(r io.Reader, ahead bool) error {
	lines := parseAhead
	if !ahead {
		lines = fileLines
	}
	for l, err := range lines(events.NewLineReader(r, im.name), &im.sums) {
		if err != nil {
			return im.changed(err)
		}
		closed := im.closed
		im.closed = nil
		switch {
		case l.Blob != nil:
			err = im.blob(l.Blob)
		case l.End != nil:
			err = im.end(l)
		case l.Sig != nil:
			err = im.signature(l, closed)
		default:
			err = im.event(l)
		}
		if err != nil {
			return im.changed(err)
		}
		if err := im.ctx.Err(); err != nil {
			if im.writing && im.current != nil {
				// progress reads what the writer keeps; a write's own error wins in Import.
				im.finishWriting()
				return fmt.Errorf("%s: import stopped: %w; %s", im.name, err, im.progress(im.current))
			}
			return err
		}
	}
	return nil
}

// changed explains an error of the second pass that is no write's. The lines are those the
// first pass checked, or the error is that they are not (errChanged): the file changed in
// between; a conflict with the stored events (ErrImportConflict) means the database did. It
// waits for the writes handed over (a write that failed concerns lines before, and is the error
// then) and says how much of the task was written: the tasks before it in the file are.
func (im *importer) changed(err error) error {
	if err == nil || !im.writing || im.w.failed.Load() {
		return err
	}
	var what string
	switch {
	case errors.Is(err, errChanged):
		what = "the file changed while it was imported; "
	case errors.Is(err, ErrImportConflict):
		what = "the database changed while the file was imported; "
	}
	if werr := im.finishWriting(); werr != nil {
		return werr
	}
	written := "nothing was written"
	switch t := im.current; {
	case t == nil:
	case t.written == 0:
		written = fmt.Sprintf("nothing of task %s was written", t.id)
	default:
		written = fmt.Sprintf("the database holds seq 1 to %d of task %s, a sound prefix; import the file again to complete it", t.written, t.id)
	}
	if len(im.order) > 1 {
		written = "the tasks before it in the file are written whole; " + written
	}
	return fmt.Errorf("%w (%s%s)", err, what, written)
}

func (im *importer) blob(b *events.Blob) error {
	im.blobs[blobKey(b.Sum)] = true
	if !im.writing {
		return nil
	}
	im.blobBatch = append(im.blobBatch, b.Content)
	im.blobBytes += len(b.Content)
	if im.blobBytes >= maxBlobBatchBytes {
		return im.flushBlobs()
	}
	return nil
}

func (im *importer) end(l events.Line) error {
	e := l.End
	t := im.tasks[e.Task]
	switch {
	case t == nil:
		return fmt.Errorf("%s:%d: %w: a closing line for task %s, which no earlier line of the file holds", im.name, l.No, ErrIncomplete, e.Task)
	case t.end != 0:
		return fmt.Errorf("%s:%d: %w: a second closing line for task %s (the first is line %d)", im.name, l.No, ErrInvalidLog, e.Task, t.end)
	case !t.hashed:
		return fmt.Errorf("%s:%d: %w: a closing line for task %s, whose lines carry no hash; only an export, whose lines do, ends with one",
			im.name, l.No, ErrInvalidLog, e.Task)
	case t.n != e.Events:
		return fmt.Errorf("%s:%d: %w: task %s: the closing line counts %d events, the file holds %d: %s",
			im.name, l.No, ErrIncomplete, e.Task, e.Events, t.n, missing(t.n, e.Events))
	case t.prev != e.Last:
		return fmt.Errorf("%s:%d: %w: task %s: the closing line gives the last event's hash as %s, but seq %d in the file hashes to %s",
			im.name, l.No, ErrIncomplete, e.Task, e.Last, t.n, t.prev)
	}
	t.end, t.closing = l.No, *e
	im.closed = t
	return nil
}

// signature checks a signature line, which must follow a closing line, against the key to
// verify with, if any.
func (im *importer) signature(l events.Line, t *importTask) error {
	if t == nil {
		return fmt.Errorf("%s:%d: %w: a signature line that does not follow a closing line", im.name, l.No, ErrInvalidLog)
	}
	if im.opts.VerifyKey != nil {
		if err := l.Sig.Verify(t.closing, im.opts.VerifyKey); err != nil {
			return fmt.Errorf("%s:%d: %w", im.name, l.No, err)
		}
	}
	t.signed = l.No
	return nil
}

// checkSigned refuses, when a key to verify with is set, a file with a task that is not
// signed: every task must end with a closing line and a signature line.
func (im *importer) checkSigned() error {
	if im.opts.VerifyKey == nil {
		return nil
	}
	if len(im.order) == 0 {
		return fmt.Errorf("%s: %w: the file holds no task, so nothing signed", im.name, events.ErrSignature)
	}
	for _, t := range im.order {
		switch {
		case t.end == 0:
			return fmt.Errorf("%s: %w: task %s is not signed: its lines do not end with a closing line and a signature line"+
				" (a hand-written log, or an export cut short); only an export written with 'replay export --sign' verifies",
				im.name, events.ErrSignature, t.id)
		case t.signed == 0:
			return fmt.Errorf("%s:%d: %w: task %s is not signed: no signature line follows its closing line;"+
				" only an export written with 'replay export --sign' verifies", im.name, t.end, events.ErrSignature, t.id)
		}
	}
	return nil
}

// task returns the state of a task, starting it at its first line: the database's head for it
// and a reader of its stored events.
func (im *importer) task(id uuid.UUID, no int) (*importTask, error) {
	if t := im.tasks[id]; t != nil {
		return t, nil
	}
	t := &importTask{id: id, first: no, state: projections.New()}
	if !im.writing {
		t.ids = map[ulid.ULID]int{} // the second pass reads the lines the first checked
	}
	head, err := im.db.Head(id)
	switch {
	case errors.Is(err, store.ErrTaskNotFound):
	case err != nil:
		return nil, fmt.Errorf("%s:%d: task %s: %w", im.name, no, id, err)
	default:
		t.stored = head.Seq
		t.storedNext, t.storedStop = iter.Pull2(im.db.Events(im.ctx, id, 1))
	}
	t.written = t.stored
	im.tasks[id] = t
	im.order = append(im.order, t)
	return t, nil
}

// event checks one event line against its task and, in the second pass, queues it.
func (im *importer) event(l events.Line) error {
	ev := l.Event
	if !l.HasTask {
		if im.fileTask == uuid.Nil {
			im.fileTask = uuid.New()
		}
		ev.Task = im.fileTask
	} else if im.fileTask == uuid.Nil {
		im.fileTask = ev.Task
	}
	t, err := im.task(ev.Task, l.No)
	if err != nil {
		return err
	}
	if t != im.current {
		if t.done {
			return fmt.Errorf("%s:%d: %w: task %s resumes after another task's lines: a file holds its tasks one after the other",
				im.name, l.No, ErrInvalidLog, t.id)
		}
		if im.current != nil {
			im.current.done = true
			im.current.release()
			// The task before is all read: its last batch goes to the writer now, so that a
			// fault in this one finds it written whole.
			if err := im.flush(); err != nil {
				return err
			}
		}
		im.current = t
	}
	if err := im.envelope(t, &ev, l); err != nil {
		return fmt.Errorf("%s:%d: %w", im.name, l.No, err)
	}
	if !im.writing {
		if err := storable(ev, l); err != nil {
			return fmt.Errorf("%s:%d: %w: %w", im.name, l.No, ErrInvalidLog, err)
		}
	}
	if l.HasID && !im.writing {
		if first, twice := t.ids[ev.ID]; twice {
			return fmt.Errorf("%s:%d: %w: %w: id %s is given twice in task %s, here and on line %d",
				im.name, l.No, ErrInvalidLog, store.ErrDuplicateID, ev.ID, t.id, first)
		}
		t.ids[ev.ID] = l.No
	}
	if ev.Seq <= t.stored {
		if err := im.compareStored(t, ev, l); err != nil {
			return err
		}
	}
	// The second pass reads only the lines the first checked (chunkSums), and a line with a
	// hash carries its turn: it needs the fold only for a hand-written line, whose turn is the
	// fold's.
	if !im.writing || !l.HasHash {
		if err := im.fold(t, ev); err != nil {
			return fmt.Errorf("%s:%d: %w", im.name, l.No, err)
		}
	}
	t.n, t.prev, t.turn = ev.Seq, ev.Hash, ev.Turn
	if !im.writing || ev.Seq <= t.stored {
		return nil
	}
	return im.queue(t, ev)
}

// storable refuses, in the first pass, which writes nothing, what a store refuses of the event
// alone (store.CheckEvent: the nil task, the zero id, a time the log cannot keep). A line
// without an id gets one in the second pass.
func storable(ev events.Event, l events.Line) error {
	if !l.HasID {
		ev.ID = ulid.ULID{1}
	}
	return store.CheckEvent(ev.Task, &ev)
}

// envelope checks and completes a line's envelope: seq, the hash chain, the turn, and (second
// pass) time, id and hash.
func (im *importer) envelope(t *importTask, ev *events.Event, l events.Line) error {
	want := t.n + 1
	switch {
	case t.end != 0:
		return fmt.Errorf("%w: task %s has an event after its closing line (line %d)", ErrInvalidLog, t.id, t.end)
	case l.HasSeq && ev.Seq != want:
		return fmt.Errorf("%w: seq %d where %d was expected (a line is missing or out of order)", events.ErrHashMismatch, ev.Seq, want)
	case t.n > 0 && l.HasHash != t.hashed:
		return fmt.Errorf("%w: "+carries(l.HasHash)+": in one task every line carries a hash (an export) or none does (hand-written)",
			ErrInvalidLog, t.first)
	case l.HasHash && ev.Prev != t.prev:
		return fmt.Errorf("%w: seq %d: prev does not match the hash of seq %d", events.ErrHashMismatch, ev.Seq, want-1)
	}
	t.hashed = l.HasHash
	if !l.HasTurn {
		ev.Turn = t.state.Turn()
	}
	if ev.Turn < t.turn {
		return fmt.Errorf("%w: seq %d is in turn %d, after turn %d: turns never go back", ErrInvalidLog, want, ev.Turn, t.turn)
	}
	if !l.HasID && l.HasTime && (ev.Time.Before(time.Unix(0, 0)) || ev.Time.After(ulid.Time(ulid.MaxTime()))) {
		return fmt.Errorf("%w: time %s is outside what an event id can hold (1970 to 10889)", ErrInvalidLog, ev.Time.Format(time.RFC3339))
	}
	ev.Seq = want
	if l.HasHash || !im.writing && !determined(l, im.opts) {
		return nil
	}
	if !l.HasTime && im.opts.Now != nil {
		ev.Time = im.opts.Now().UTC()
	}
	if !l.HasID {
		at := ev.Time
		if at.IsZero() {
			at = time.Unix(0, 0) // a line without time gets an id of no time
		}
		id, err := im.opts.IDs.New(at)
		if err != nil {
			return err
		}
		ev.ID = id
	}
	// Later lines of a hand-written file chain to what the store will compute.
	ev.Seal(t.prev)
	return nil
}

func carries(hash bool) string {
	if hash {
		return "this line carries a hash but line %d, the task's first, does not"
	}
	return "this line carries no hash but line %d, the task's first, does"
}

// missing says which events a closing line counts that the file lacks.
func missing(have, want uint64) string {
	switch {
	case have > want:
		return "the closing line belongs to a shorter log"
	case have+1 == want:
		return fmt.Sprintf("the line of seq %d is missing", want)
	}
	return fmt.Sprintf("the lines of seq %d to %d are missing", have+1, want)
}

// determined reports whether a hand-written line gives everything its stored form depends on,
// so that the first pass can compute its hash.
func determined(l events.Line, opts ImportOptions) bool {
	return l.HasID && (l.HasTime || opts.Now == nil)
}

// fold checks an event as verify's replay would see it.
func (im *importer) fold(t *importTask, ev events.Event) error {
	switch ev.Type {
	case events.TypeRulesSnapshot:
		if err := im.checkBlobs(ev); err != nil {
			return err
		}
	case events.TypeDecision:
		h, err := events.Head(ev)
		if err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidLog, err)
		}
		if snap := t.state.LastSnapshotSeq(); h.Snapshot != snap {
			return fmt.Errorf("%w: decision %s references the rules snapshot at seq %d, but the latest before it is at seq %d",
				ErrInvalidLog, ev, h.Snapshot, snap)
		}
		if im.writing {
			// The second pass reads only the lines the first checked (chunkSums): every
			// decision is written against the one before it and fits it.
			t.decisions.seq = ev.Seq
		} else if _, err := t.decisions.nextOutcomes(ev); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalidLog, err)
		}
	}
	if err := t.state.Apply(ev); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidLog, err)
	}
	return nil
}

// checkBlobs refuses a rules_snapshot whose rule file contents are neither on an earlier line
// nor stored: replaying its decisions would fail.
func (im *importer) checkBlobs(ev events.Event) error {
	p, err := ev.Payload()
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidLog, err)
	}
	for _, f := range p.(*events.RulesSnapshot).Files {
		if im.blobs[blobKey(f.Blob)] {
			continue
		}
		ok, err := im.db.HasBlob(f.Blob)
		if err != nil {
			return fmt.Errorf("%s: rule file %s: %w", ev, f.Path, err)
		}
		if !ok {
			return fmt.Errorf("%w: the rules snapshot at seq %d references rule file %s (blob %s), whose content is on no earlier line and not in the database",
				ErrInvalidLog, ev.Seq, f.Path, f.Blob)
		}
	}
	return nil
}

// blobKey is a blob's sum as a map key; a sum that is not hex is no key of a stored blob.
func blobKey(sum string) [32]byte {
	var k [32]byte
	hex.Decode(k[:], []byte(sum))
	return k
}

// compareStored checks that the event the database holds at ev's position is ev.
func (im *importer) compareStored(t *importTask, ev events.Event, l events.Line) error {
	stored, err, ok := t.storedNext()
	if err != nil {
		return fmt.Errorf("%s:%d: task %s: read stored seq %d: %w", im.name, l.No, t.id, ev.Seq, err)
	}
	if !ok {
		return fmt.Errorf("%s:%d: task %s: the database's log ends before seq %d", im.name, l.No, t.id, ev.Seq)
	}
	var why string
	switch {
	case !l.HasHash && !l.HasID:
		why = "the line carries no id, so each import makes it a new event"
	case !l.HasHash && !l.HasTime && im.opts.Now != nil:
		why = "the line carries no time, so each import stamps it anew"
	case stored.Hash == ev.Hash:
		return nil
	default:
		why = differences(stored, ev)
	}
	return fmt.Errorf("%s:%d: %w: task %s already holds %d events, and seq %d differs: %s",
		im.name, l.No, ErrImportConflict, t.id, t.stored, ev.Seq, why)
}

// differences says how the file's event differs from the stored one, field by field.
func differences(stored, file events.Event) string {
	var d []string
	add := func(field string, s, f any) { d = append(d, fmt.Sprintf("%s %v stored, %v in the file", field, s, f)) }
	if stored.Type != file.Type {
		add("type", stored.Type, file.Type)
	}
	if stored.ID != file.ID {
		add("id", stored.ID, file.ID)
	}
	if stored.Turn != file.Turn {
		add("turn", stored.Turn, file.Turn)
	}
	if !stored.Time.Equal(file.Time) {
		add("time", stored.Time.Format("2006-01-02T15:04:05.999999999Z07:00"), file.Time.Format("2006-01-02T15:04:05.999999999Z07:00"))
	}
	if stored.V != file.V {
		add("version", stored.V, file.V)
	}
	if string(stored.Data) != string(file.Data) {
		add("data", cut(stored.Data), cut(file.Data))
	}
	if (stored.Origin == nil) != (file.Origin == nil) || stored.Origin != nil && *stored.Origin != *file.Origin {
		d = append(d, "origin differs")
	}
	if len(d) == 0 {
		add("hash", stored.Hash, file.Hash)
	}
	out := d[0]
	for _, s := range d[1:] {
		out += "; " + s
	}
	return out
}

// cut shortens data for a message.
func cut(b []byte) string {
	const n = 80
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
