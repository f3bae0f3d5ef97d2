package session

import (
	"fmt"

	"github.com/tasklog/tasklog/events"
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

// flush writes the blobs read so far, then the batch of events, which may reference them.
func (im *importer) flush() error {
	if err := im.flushBlobs(); err != nil {
		return err
	}
	if len(im.batch) == 0 {
		return nil
	}
	t, batch := im.batchTask, im.batch
	res, err := im.db.Append(im.ctx, t.id, t.written, batch...)
	if err != nil {
		im.writeFailed = true
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
	im.batch, im.batchBytes = im.batch[:0], 0
	// The batch's events are no longer needed; drop their data so the next batch starts small.
	clear(im.batch[:cap(im.batch)])
	return nil
}

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
	if _, err := im.db.PutBlobs(im.blobBatch); err != nil {
		im.writeFailed = true
		return fmt.Errorf("%s: store blobs: %w", im.name, err)
	}
	clear(im.blobBatch)
	im.blobBatch, im.blobBytes = im.blobBatch[:0], 0
	return nil
}
