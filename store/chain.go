package store

import (
	"crypto/sha256"
	"fmt"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
)

// ChainVerifier checks a task's events, given one at a time in log order from the first, are
// the hash chain a Store writes: each event carries the next sequence number and the task's id,
// its Hash is SHA-256 over its binary encoding without the trailing hash, and its Prev is the
// hash of its predecessor (zero for the first). It is the check DB.Verify makes of every event,
// for any Store to share, so that a chain sound in one store is sound in every other. It keeps
// one encoding buffer across events: checking allocates only when an event is larger than any
// before it. A ChainVerifier is not safe for concurrent use.
type ChainVerifier struct {
	task uuid.UUID
	next uint64
	prev events.Hash
	enc  []byte
}

// NewChainVerifier returns a verifier for task's log, expecting its first event next.
func NewChainVerifier(task uuid.UUID) *ChainVerifier {
	return &ChainVerifier{task: task, next: 1}
}

// Next is the sequence number the next event must have: one more than the events checked.
func (c *ChainVerifier) Next() uint64 { return c.next }

// Prev is the hash the next event's Prev must be: the last checked event's hash (zero before
// the first).
func (c *ChainVerifier) Prev() events.Hash { return c.prev }

// Check checks ev is the next event of the chain and, if it is, moves on past it. A problem is
// a *VerifyError (errors.Is ErrChainBroken) at the sequence number expected, and leaves the
// verifier where it was. Check does not keep ev.
func (c *ChainVerifier) Check(ev *events.Event) error {
	seq := c.next
	switch {
	case ev.Seq != seq:
		return c.broken(seq, "the event stored here says it is seq %d: events were deleted, moved or reordered", ev.Seq)
	case ev.Task != c.task:
		return c.broken(seq, "the event stored here belongs to task %s: it was copied from another log", ev.Task)
	}
	// The hash is SHA-256 over the event's encoding without its trailing hash
	// (events.Event.ComputeHash), encoded here into a buffer kept across events.
	c.enc = ev.AppendBinary(c.enc[:0])
	if h := events.Hash(sha256.Sum256(c.enc[:len(c.enc)-len(ev.Hash)])); h != ev.Hash {
		return c.broken(seq, "hash mismatch: stored %s, computed %s: the event was altered after it was written",
			ev.Hash, h)
	}
	if ev.Prev != c.prev {
		return c.broken(seq, "prev link %s does not match the hash %s of seq %d: the chain was spliced",
			ev.Prev, c.prev, seq-1)
	}
	c.prev = ev.Hash
	c.next = seq + 1
	return nil
}

func (c *ChainVerifier) broken(seq uint64, format string, args ...any) error {
	return &VerifyError{Task: c.task, Seq: seq, Problem: fmt.Sprintf(format, args...)}
}
