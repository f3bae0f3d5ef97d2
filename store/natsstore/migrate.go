package natsstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// ErrNotCurrentLayout is Migrate's error for a destination stream that is not of the current
// layout.
var ErrNotCurrentLayout = errors.New("the destination stream is not of the current layout")

// Migrated says what Migrate copied.
type Migrated struct {
	// Tasks is the number of tasks of the source, Events how many of their events were
	// appended to the destination (events it held already are not counted).
	Tasks, Events int
	// Objects is the number of blobs and snapshots copied.
	Objects int
}

// Migrate copies every task of src into dst, a stream of the current layout, with its blobs
// and snapshots: each event is appended at its own sequence and must come out with the hash it
// has in src, so the copy is the same chain, byte for byte (dst.Verify checks it). src is only
// read; it may be of any layout. A task dst holds already in part is continued after the
// events it holds, once their last is found to be src's event at that sequence, so a Migrate
// that failed part-way is completed by running it again. Appends to src while Migrate runs may
// be missed: stop the writers first, or run it again afterwards.
func Migrate(ctx context.Context, dst, src *Store, progress func(Migrated)) (Migrated, error) {
	var m Migrated
	if dst.layout != LayoutCurrent {
		return m, fmt.Errorf("migrate to %s: %w (it is of layout %d): name a stream that does not exist, and it is created in layout %d",
			dst.Path(), ErrNotCurrentLayout, dst.layout, LayoutCurrent)
	}
	if dst.stream == src.stream && dst.url == src.url {
		return m, fmt.Errorf("migrate %s: the source and the destination are the same stream", src.Path())
	}
	n, err := copyObjects(ctx, dst, src, src.blobs, dst.blobs)
	m.Objects += n
	if err != nil {
		return m, fmt.Errorf("migrate the blobs of %s to %s: %w", src.Path(), dst.Path(), err)
	}
	tasks, err := src.Tasks()
	if err != nil {
		return m, err
	}
	for _, ti := range tasks {
		n, err := migrateTask(ctx, dst, src, ti)
		m.Events += n
		if err != nil {
			return m, err
		}
		m.Tasks++
		if progress != nil {
			progress(m)
		}
	}
	n, err = copyObjects(ctx, dst, src, src.snaps, dst.snaps)
	m.Objects += n
	if err != nil {
		return m, fmt.Errorf("migrate the snapshots of %s to %s: %w", src.Path(), dst.Path(), err)
	}
	return m, nil
}

// migrateTask appends task ti's events of src that dst lacks, in chunks of one atomic batch.
func migrateTask(ctx context.Context, dst, src *Store, ti store.TaskInfo) (int, error) {
	task := ti.Task
	var have uint64
	switch h, err := dst.Head(task); {
	case errors.Is(err, store.ErrTaskNotFound):
	case err != nil:
		return 0, err
	default:
		have = h.Seq
		if have > ti.Events {
			return 0, fmt.Errorf("migrate task %s: %s holds %d events of it, more than the %d of %s: it is not a copy of it",
				task, dst.Path(), have, ti.Events, src.Path())
		}
	}
	var chain events.Hash // the hash of src's event at have, once read
	if have > 0 {
		for ev, err := range src.Events(ctx, task, have) {
			if err != nil {
				return 0, err
			}
			chain = ev.Hash
			break
		}
		h, err := dst.Head(task)
		if err != nil {
			return 0, err
		}
		if h.Hash != chain {
			return 0, fmt.Errorf("migrate task %s: %w: event %d of it in %s differs from the one in %s: it is not a copy of it",
				task, store.ErrCorrupt, have, dst.Path(), src.Path())
		}
	}
	copied := 0
	chunk := make([]events.Event, 0, dst.maxEvents())
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		a, err := dst.Append(ctx, task, have, chunk...)
		if err != nil {
			return fmt.Errorf("migrate task %s: %w", task, err)
		}
		for i := range chunk {
			if a.Events[i].Hash != chunk[i].Hash || !bytes.Equal(a.Events[i].AppendBinary(nil), chunk[i].AppendBinary(nil)) {
				return fmt.Errorf("migrate task %s: %w: event %d came out of %s differently from how %s holds it",
					task, store.ErrCorrupt, chunk[i].Seq, dst.Path(), src.Path())
			}
		}
		have += uint64(len(chunk))
		copied += len(chunk)
		chunk = chunk[:0]
		return nil
	}
	if have < ti.Events {
		for ev, err := range src.Events(ctx, task, have+1) {
			if err != nil {
				return copied, err
			}
			chunk = append(chunk, ev)
			if len(chunk) == cap(chunk) {
				if err := flush(); err != nil {
					return copied, err
				}
			}
		}
	}
	return copied, flush()
}

// copyObjects copies every object of from that to lacks, and returns how many it copied.
func copyObjects(ctx context.Context, dst, src *Store, from, to jetstream.ObjectStore) (int, error) {
	list, err := from.List(ctx)
	if errors.Is(err, jetstream.ErrNoObjectsFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, info := range list {
		if _, err := to.GetInfo(ctx, info.Name); err == nil {
			continue
		} else if !errors.Is(err, jetstream.ErrObjectNotFound) {
			return n, err
		}
		data, err := from.GetBytes(ctx, info.Name)
		if err != nil {
			return n, fmt.Errorf("read object %s of %s: %w", info.Name, src.Path(), err)
		}
		if _, err := dst.putObject(ctx, to, info.Name, data); err != nil {
			return n, fmt.Errorf("write object %s to %s: %w", info.Name, dst.Path(), err)
		}
		n++
	}
	return n, nil
}
