package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// Export writes a task's log as JSON Lines, one event per line, preceded by a blob line for each
// rule file content a rules_snapshot references (so the export replays on another machine).
// Importing the output and exporting again gives the same bytes.
func Export(ctx context.Context, db *store.DB, task uuid.UUID, w io.Writer) error {
	written := map[string]bool{}
	for ev, err := range db.Events(ctx, task, 1) {
		if err != nil {
			return err
		}
		if ev.Type == events.TypeRulesSnapshot {
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
		}
		line, err := events.MarshalJSONLine(ev)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(line, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// ImportOptions configure Import.
type ImportOptions struct {
	// Now stamps lines that carry no time; nil leaves them without one.
	Now func() time.Time
	// IDs makes ids for lines that carry none; nil means a new source on crypto/rand.
	IDs *events.IDSource
}

// Imported describes one task an Import wrote.
type Imported struct {
	Task uuid.UUID
	// Events is the number of events in the file for this task; Appended how many were new
	// (a re-import of the same file appends none).
	Events, Appended int
}

// Import reads a JSON Lines log (export or hand-written authoring format) into db. Lines may
// omit task, id, seq, turn, time and hash; Import assigns them: the task of the first line that
// names one (or a new id), ids from opts.IDs, turns from the decisions before the line. A line
// that carries seq, prev or hash is checked against its position and its predecessor, and a
// broken chain is refused before anything of that task is written. name is used in errors.
func Import(ctx context.Context, db *store.DB, r io.Reader, name string, opts ImportOptions) ([]Imported, error) {
	if opts.IDs == nil {
		opts.IDs = events.NewIDSource(nil)
	}
	lr := events.NewLineReader(r, name)
	type pending struct {
		evs       []events.Event
		decisions int
		prev      events.Hash
	}
	byTask := map[uuid.UUID]*pending{}
	var order []uuid.UUID
	var fileTask uuid.UUID
	var blobs [][]byte
	for {
		l, err := lr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if l.Blob != nil {
			blobs = append(blobs, l.Blob.Content)
			continue
		}
		ev := l.Event
		if !l.HasTask {
			if fileTask == uuid.Nil {
				fileTask = uuid.New()
			}
			ev.Task = fileTask
		} else if fileTask == uuid.Nil {
			fileTask = ev.Task
		}
		p := byTask[ev.Task]
		if p == nil {
			p = &pending{}
			byTask[ev.Task] = p
			order = append(order, ev.Task)
		}
		want := uint64(len(p.evs) + 1)
		if l.HasSeq && ev.Seq != want {
			return nil, fmt.Errorf("%s:%d: %w: seq %d where %d was expected (a line is missing or out of order)",
				name, l.No, events.ErrHashMismatch, ev.Seq, want)
		}
		if l.HasHash && ev.Prev != p.prev {
			return nil, fmt.Errorf("%s:%d: %w: seq %d: prev does not match the hash of seq %d",
				name, l.No, events.ErrHashMismatch, ev.Seq, want-1)
		}
		if !l.HasTurn {
			ev.Turn = p.decisions + 1
		}
		if ev.Type == events.TypeDecision {
			p.decisions++
		}
		if !l.HasTime && opts.Now != nil {
			ev.Time = opts.Now().UTC()
		}
		if !l.HasID {
			if ev.ID, err = opts.IDs.New(ev.Time); err != nil {
				return nil, err
			}
		}
		if !l.HasHash {
			// Later lines of a hand-written file chain to what the store will compute.
			ev.Seq = want
			ev.Seal(p.prev)
		}
		p.prev = ev.Hash
		p.evs = append(p.evs, ev)
	}
	if _, err := db.PutBlobs(blobs); err != nil {
		return nil, fmt.Errorf("%s: store blobs: %w", name, err)
	}
	var out []Imported
	for _, task := range order {
		p := byTask[task]
		res, err := db.Append(ctx, task, 0, p.evs...)
		if err != nil {
			return out, fmt.Errorf("%s: task %s: %w", name, task, err)
		}
		n := len(p.evs)
		if res.Duplicate {
			n = 0
		}
		for i, ev := range res.Events {
			if ev.Hash != p.evs[i].Hash {
				return out, fmt.Errorf("%s: task %s seq %d: %w: stored hash differs from the file's", name, task, ev.Seq, events.ErrHashMismatch)
			}
		}
		out = append(out, Imported{Task: task, Events: len(p.evs), Appended: n})
	}
	return out, nil
}
