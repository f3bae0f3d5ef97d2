package session

import (
	"fmt"
	"sync/atomic"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// The second pass of Import writes events in batches of at most this many events or bytes of
// data (a single larger event is a batch of its own), and blobs in batches of at most
// maxBlobBatchBytes. 1,000 events is also the most a NATS JetStream store writes in one atomic
// batch, so every import batch is all-or-nothing on either store.
const (
	maxImportBatch      = 1000
	maxImportBatchBytes = 4 << 20
	maxBlobBatchBytes   = 4 << 20
)

// importWriter writes the second pass's batches on a goroutine of its own, in the order they
// are handed over, while the checks go on with the lines after them: one batch is written while
// the next fills. After a write fails, the batches handed over later are dropped.
type importWriter struct {
	jobs chan func() error
	done chan struct{}
	// failed is set once a write has failed; err, the first write's error, is read after done.
	failed  atomic.Bool
	err     error
	stopped bool
}

func startImportWriter() *importWriter {
	w := &importWriter{jobs: make(chan func() error), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for job := range w.jobs {
			if w.err != nil {
				continue
			}
			if w.err = job(); w.err != nil {
				w.failed.Store(true)
			}
		}
	}()
	return w
}

// do hands job to the writer, waiting while it writes the batch before. Once a write has
// failed, do writes nothing more and returns that write's error. do is not called after wait.
func (w *importWriter) do(job func() error) error {
	if w.failed.Load() {
		return w.wait()
	}
	w.jobs <- job
	return nil
}

// wait waits until every batch handed over is written and returns the first write's error;
// nothing is written after it.
func (w *importWriter) wait() error {
	if !w.stopped {
		w.stopped = true
		close(w.jobs)
	}
	<-w.done
	return w.err
}

// finishWriting waits for the writes handed over and returns the first one's error, which
// concerns lines before any other error of the pass.
func (im *importer) finishWriting() error {
	if im.w == nil {
		return nil
	}
	return im.w.wait()
}

// queue adds a checked event to the batch, writing the batch when it is full or belongs to
// another task.
func (im *importer) queue(t *importTask, ev events.Event) error {
	if im.batchTask != t || len(im.batch) >= maxImportBatch || im.batchBytes+len(ev.Data) > maxImportBatchBytes {
		if err := im.flush(); err != nil {
			return err
		}
	}
	im.batchTask = t
	im.batch = append(im.batch, ev)
	im.batchBytes += len(ev.Data)
	return nil
}

// flush hands the writer the blobs read so far, then the batch of events, which may reference
// them. The batch is the writer's from then on; the next one starts in an array of its own.
func (im *importer) flush() error {
	if err := im.flushBlobs(); err != nil {
		return err
	}
	if len(im.batch) == 0 {
		return nil
	}
	t, batch := im.batchTask, im.batch
	im.batch, im.batchBytes = make([]events.Event, 0, len(batch)), 0
	// On the store itself (not a wrapper of it, which has an Append of its own), the records'
	// bodies are encoded here while the writer commits the batch before: the commit is left
	// the log's own work. A batch Prepare refuses goes to Append, which refuses it the same
	// way, in the writer's order.
	write := func() (store.Appended, error) { return im.db.Append(im.ctx, t.id, t.written, batch...) }
	if db, ok := im.db.(*store.DB); ok {
		if p, err := store.Prepare(t.id, batch); err == nil {
			write = func() (store.Appended, error) { return db.AppendPrepared(im.ctx, t.written, p) }
		}
	}
	return im.w.do(func() error {
		res, err := write()
		if err != nil {
			return fmt.Errorf("%s: task %s: write seq %d to %d: %w; %s", im.name, t.id, batch[0].Seq, batch[len(batch)-1].Seq, err, im.progress(t))
		}
		for i, ev := range res.Events {
			if ev.Hash != batch[i].Hash {
				return fmt.Errorf("%s: task %s seq %d: %w: stored hash %s differs from the file's %s", im.name, t.id, ev.Seq,
					events.ErrHashMismatch, ev.Hash, batch[i].Hash)
			}
		}
		t.written = res.Last
		if !res.Duplicate {
			t.appended += len(batch)
		}
		return nil
	})
}

// progress says how much of t the database holds; it reads what the writer keeps, so it is
// called on the writer's goroutine or after finishWriting.
func (im *importer) progress(t *importTask) string {
	if t.written == 0 {
		return "nothing of the task was written"
	}
	return fmt.Sprintf("the database holds seq 1 to %d of it, a sound prefix; import the file again to complete it", t.written)
}

func (im *importer) flushBlobs() error {
	if len(im.blobBatch) == 0 {
		return nil
	}
	blobs := im.blobBatch
	im.blobBatch, im.blobBytes = nil, 0
	return im.w.do(func() error {
		if _, err := im.db.PutBlobs(blobs); err != nil {
			return fmt.Errorf("%s: store blobs: %w", im.name, err)
		}
		return nil
	})
}
