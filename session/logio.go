package session

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// Errors of Import that callers test with errors.Is.
var (
	// ErrInvalidLog is returned for a file whose log verify would reject: a task that does not
	// begin with task_started, a turn that goes back or skips, a decision that names the wrong
	// snapshot, a rules_snapshot whose rule file contents are nowhere, lines with and without
	// hashes in one task, an event id given twice in one task (which also is
	// store.ErrDuplicateID) or the zero id (also store.ErrMissingID), a task whose id is the nil
	// UUID (also store.ErrInvalidEvent).
	ErrInvalidLog = errors.New("invalid log")
	// ErrIncomplete is returned when an export's closing line does not match the events before
	// it: lines at the end of the file are missing.
	ErrIncomplete = errors.New("export is incomplete")
	// ErrImportConflict is returned when the file's events differ from those the database
	// already holds for the same task at the same positions.
	ErrImportConflict = errors.New("the file's events differ from the stored ones")
)

// Export writes a task's log as JSON Lines, one event per line, preceded by a blob line for each
// rule file content a rules_snapshot references (so the export replays on another machine), and
// ends it with a closing line (task, event count, last hash) so that an import detects a file
// cut short. Importing the output and exporting again gives the same bytes.
func Export(ctx context.Context, db store.Store, task uuid.UUID, w io.Writer) error {
	return export(ctx, db, task, w, nil)
}

// ExportSigned is Export, with a signature line after the closing line: key's Ed25519
// signature of the closing line (see events.Signature), which Import with VerifyKey checks. As
// the closing line's hash chains to every event, the signature covers the whole log: no event
// can be changed, added or removed, and no closing line recomputed, without the key.
func ExportSigned(ctx context.Context, db store.Store, task uuid.UUID, w io.Writer, key ed25519.PrivateKey) error {
	if len(key) != ed25519.PrivateKeySize {
		return fmt.Errorf("sign export of task %s: want an Ed25519 private key", task)
	}
	return export(ctx, db, task, w, key)
}

func export(ctx context.Context, db store.Store, task uuid.UUID, w io.Writer, key ed25519.PrivateKey) error {
	written := map[string]bool{}
	var last events.Event
	for ev, err := range db.Events(ctx, task, 1) {
		if err != nil {
			return err
		}
		if ev.Type == events.TypeRulesSnapshot {
			if err := exportBlobs(db, ev, written, w); err != nil {
				return err
			}
		}
		line, err := events.MarshalJSONLine(ev)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return err
		}
		last = ev
	}
	if last.Seq == 0 {
		return nil
	}
	end := events.End{Task: task, Events: last.Seq, Last: last.Hash}
	line, err := events.MarshalEndLine(end)
	if err != nil {
		return err
	}
	if key != nil {
		sig, err := events.MarshalSignatureLine(end, key)
		if err != nil {
			return err
		}
		line = append(append(line, '\n'), sig...)
	}
	_, err = w.Write(append(line, '\n'))
	return err
}

// exportBlobs writes the blob lines of a rules_snapshot that no earlier line carried.
func exportBlobs(db store.Store, ev events.Event, written map[string]bool, w io.Writer) error {
	p, err := ev.Payload()
	if err != nil {
		return err
	}
	for _, f := range p.(*events.RulesSnapshot).Files {
		if written[f.Blob] {
			continue
		}
		content, err := db.Blob(f.Blob)
		if err != nil {
			return fmt.Errorf("export %s: %w", ev, err)
		}
		line, err := events.MarshalBlobLine(f.Blob, content)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return err
		}
		written[f.Blob] = true
	}
	return nil
}

// ImportOptions configure Import.
type ImportOptions struct {
	// Now stamps lines that carry no time; nil leaves them without one.
	Now func() time.Time
	// IDs makes ids for lines that carry none; nil means a new source on crypto/rand.
	IDs *events.IDSource
	// VerifyKey, when set, makes Import refuse a file unless every task in it ends with a
	// closing line and a signature line made with this key (ExportSigned): a log rewritten,
	// cut or extended after it was signed, or signed by another key, is refused. Without it a
	// signature line is read but not checked.
	VerifyKey ed25519.PublicKey
	// CopyTo creates the file that a reader Import cannot read twice (one that is not an
	// io.Seeker, or whose Seek fails: a pipe) is copied to during the first pass; Import closes
	// and removes it before it returns. nil creates it in os.TempDir().
	CopyTo func() (*os.File, error)
}

// Imported describes one task an Import wrote.
type Imported struct {
	Task uuid.UUID
	// Events is the number of events in the file for this task; Appended how many were new
	// (a re-import of the same file appends none).
	Events, Appended int
	// Closed is set when the file ended the task with an export's closing line, which Import
	// checked: the file held the whole log as it was exported. Without one (a hand-written
	// file, or an export written before exports had closing lines) a file cut at a line
	// boundary cannot be told from a shorter log.
	Closed bool
	// Verified is set when the task's signature line was checked against
	// ImportOptions.VerifyKey.
	Verified bool
}

// Import reads a JSON Lines log (export or hand-written authoring format) into db. Lines may
// omit task, id, seq, turn, time and hash; Import assigns them: the task of the first line that
// names one (or a new id), ids from opts.IDs, turns from the decisions before the line. A file
// may hold several tasks, one after the other. name is used in errors, which name the line.
//
// Import reads the file twice and holds a few megabytes of lines read ahead and one bounded
// batch in memory, whatever the file's size, and besides 8 bytes for every chunk of 256 lines
// (or of a MiB) it reads and 35 to 60 for every event id the task it reads gives. The first
// pass checks everything and writes nothing: every line parses; a line that carries seq, prev
// or hash matches its position and its predecessor; no event id is given twice in a task; each
// task's lines carry hashes all or none; each task folds as verify would fold it (task_started
// first, turns in order, decisions against the snapshot before them, a decision written against
// the one before it rebuilt from it); every rule file content a rules_snapshot references is on
// an earlier line or already stored; a closing line matches the events before it; and events
// the database already holds for the task are the file's (ErrImportConflict otherwise). The
// second pass writes, in batches, and takes only the lines the first checked: each chunk of them
// must have the sum the first pass took (a 64-bit hash with a seed drawn for the import and
// kept secret), and is parsed without checking again what depends on the lines' bytes alone
// (strict JSON, schemas, hashes); it checks each task's log again against the database. So a
// file that would not verify, or that conflicts, leaves nothing behind. Only a failure to write
// (a full disk, a cancelled ctx) or a change between the passes (of the file, or of the task in
// the database) can stop the second pass after some batches: what they wrote is a sound prefix
// of the task's log, and importing the file again completes it.
//
// A reader that can seek (an *os.File of a regular file) is read twice; only one that cannot
// (a pipe, a bufio.Reader) is copied, during the first pass, to the file opts.CopyTo creates.
func Import(ctx context.Context, db store.Store, r io.Reader, name string, opts ImportOptions) ([]Imported, error) {
	if opts.IDs == nil {
		opts.IDs = events.NewIDSource(nil)
	}
	src, err := readTwice(r, opts.CopyTo)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	defer src.close()
	im := newImporter(ctx, db, name, opts)
	defer im.stop()
	err = im.run(src)
	if err != nil && !im.writing {
		return nil, err // the checks failed: nothing was written
	}
	return im.results(), err
}

// run reads src twice: the checking pass, then the writing one.
func (im *importer) run(src twoReads) error {
	if err := im.pass(src.first, src.seekable); err != nil {
		return err
	}
	if err := im.checkSigned(); err != nil {
		return err
	}
	again, err := src.again()
	if err != nil {
		return fmt.Errorf("%s: read again: %w", im.name, err)
	}
	im.startWriting()
	err = im.pass(again, true)
	if err == nil {
		err = im.changed(im.sums.short())
	}
	if err == nil {
		err = im.flush()
	}
	// A write that failed concerns lines before any other error of the pass.
	if werr := im.finishWriting(); werr != nil {
		err = werr
	}
	return err
}

// twoReads gives the bytes of an input twice. The first read is of a file, which can be read
// ahead, when seekable is set (a pipe is read one line after the other, no further than the
// line that fails); the second always is.
type twoReads struct {
	first    io.Reader
	seekable bool
	again    func() (io.Reader, error)
	close    func()
}

// readTwice seeks back a reader that can, and otherwise copies the first read to a temporary
// file (made by copyTo, nil for os.TempDir()) that the second read comes from.
func readTwice(r io.Reader, copyTo func() (*os.File, error)) (twoReads, error) {
	if rs, ok := r.(io.ReadSeeker); ok {
		if start, err := rs.Seek(0, io.SeekCurrent); err == nil {
			again := func() (io.Reader, error) {
				_, err := rs.Seek(start, io.SeekStart)
				return rs, err
			}
			return twoReads{first: rs, seekable: true, again: again, close: func() {}}, nil
		}
	}
	if copyTo == nil {
		copyTo = func() (*os.File, error) { return os.CreateTemp("", "tasklog-import-*.jsonl") }
	}
	f, err := copyTo()
	if err != nil {
		return twoReads{}, fmt.Errorf("copy the input to read it twice: %w", err)
	}
	bw := bufio.NewWriterSize(f, 64<<10)
	again := func() (io.Reader, error) {
		if err := bw.Flush(); err != nil {
			return nil, err
		}
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return nil, err
		}
		return f, nil
	}
	closeFn := func() {
		f.Close()
		os.Remove(f.Name())
	}
	return twoReads{first: io.TeeReader(r, bw), again: again, close: closeFn}, nil
}
