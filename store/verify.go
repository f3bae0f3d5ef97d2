package store

import (
	"context"
	"fmt"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
)

// Verify walks task's log from the first event and checks it is the chain that was written:
// no gap in the sequence, every event stored under its own sequence and task, its encoding
// sound, its hash the hash of its content, and its Prev the hash of its predecessor. The first
// problem is returned as a *VerifyError (errors.Is ErrChainBroken); nil means the log is sound.
// A log cut short after its last surviving event is a sound chain: to detect that, compare the
// head with one recorded elsewhere.
func (db *DB) Verify(ctx context.Context, task uuid.UUID) error {
	var prev events.Hash
	next := uint64(1)
	hint := firstChunkBytes
	broken := func(seq uint64, format string, args ...any) error {
		return &VerifyError{Task: task, Seq: seq, Problem: fmt.Sprintf(format, args...)}
	}
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		c, err := db.readChunk(task, next, hint)
		if err != nil {
			return err
		}
		hint = cap(c.buf)
		for i, seq := range c.seqs {
			if seq != next {
				return broken(next, "missing: the next stored event is seq %d; events were deleted", seq)
			}
			var ev events.Event
			if err := ev.UnmarshalBinary(c.value(i)); err != nil {
				return broken(seq, "the stored bytes do not decode (%v): the record is damaged", err)
			}
			switch {
			case ev.Seq != seq:
				return broken(seq, "the event stored here says it is seq %d: events were moved or reordered", ev.Seq)
			case ev.Task != task:
				return broken(seq, "the event stored here belongs to task %s: it was copied from another log", ev.Task)
			}
			if h := ev.ComputeHash(); h != ev.Hash {
				return broken(seq, "hash mismatch (stored %s, computed %s): the event was altered after it was written",
					short(ev.Hash), short(h))
			}
			if ev.Prev != prev {
				return broken(seq, "prev link %s does not match the hash %s of seq %d: the chain was spliced",
					short(ev.Prev), short(prev), seq-1)
			}
			prev = ev.Hash
			next = seq + 1
		}
		if len(c.seqs) < chunkSize {
			if next == 1 {
				return fmt.Errorf("task %s: %w", task, ErrTaskNotFound)
			}
			return nil
		}
	}
}

// short is enough of a hash for a person to tell two apart.
func short(h events.Hash) string { return h.String()[:12] + "…" }
