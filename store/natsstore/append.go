package natsstore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
	"github.com/oklog/ulid/v2"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
	"github.com/tasklog/tasklog/store/payloadcodec"
)

// maxBatch is the most messages one atomic batch holds: JetStream's default max_batch_size.
const maxBatch = 1000

// retryWait is the pause before an append retries a write the server could not take yet.
const retryWait = 20 * time.Millisecond

// Append atomically adds evs to the end of task's log if its head is at expectedVersion, with
// the semantics of store.DB.Append: sequence numbers, hash chain, idempotency by event id (see
// the package doc for how), and *store.VersionConflictError when the head has moved. A batch of
// up to 1000 events is atomic; a larger one is written in atomic chunks of 1000 (see
// appendChunks), which is where this store is weaker than store.DB. If ctx is done before the events are sent Append returns
// ctx.Err() and writes nothing; once they are sent it waits for the outcome, and when the
// server does not answer within Options.Timeout it reads the log back to learn it: an error
// never hides a write it can see, and one that says the outcome is unknown means a retry of the
// same Append is safe.
func (s *Store) Append(ctx context.Context, task uuid.UUID, expectedVersion uint64, evs ...events.Event) (store.Appended, error) {
	if err := s.begin(); err != nil {
		return store.Appended{}, err
	}
	defer s.appends.Done()
	s.busy.Add(1)
	defer s.busy.Add(-1)
	if err := store.CheckBatch(task, evs); err != nil {
		return store.Appended{}, err
	}
	if err := ctx.Err(); err != nil {
		return store.Appended{}, err
	}
	// evs is only read: seal makes the copies that are stored and returned.
	var a store.Appended
	var err error
	if len(evs) <= s.maxEvents() {
		a, err = s.appendLoop(ctx, task, expectedVersion, evs)
	} else {
		a, err = s.appendChunks(ctx, task, expectedVersion, evs)
	}
	if err != nil && !isStoreError(err) {
		return store.Appended{}, s.errorf(fmt.Sprintf("append to task %s", task), err)
	}
	return a, err
}

// appendChunks appends a batch larger than one atomic batch as consecutive chunks of maxBatch
// events, each atomic. A failure part-way leaves whole chunks stored and says how many; a retry
// of the same append finds them (each a repeat at its position) and writes the rest.
func (s *Store) appendChunks(ctx context.Context, task uuid.UUID, expected uint64, evs []events.Event) (store.Appended, error) {
	out := store.Appended{Events: make([]events.Event, 0, len(evs)), Duplicate: true}
	base := expected
	size := s.maxEvents()
	for off := 0; off < len(evs); off += size {
		chunk := evs[off:min(off+size, len(evs))]
		a, err := s.appendLoop(ctx, task, base+uint64(off), chunk)
		if err == nil && off == 0 {
			// A repeat is answered at its stored position, whatever the expected version.
			base = a.First - 1
		}
		if err == nil && a.First != base+uint64(off)+1 {
			err = fmt.Errorf("append to task %s: %w: events #%d.. of the batch are stored at seq %d, not next to the batch's other events",
				task, store.ErrDuplicateID, off, a.First)
		}
		if err != nil {
			if off > 0 {
				return store.Appended{}, fmt.Errorf("%w (the first %d of the batch's %d events are stored, in chunks of %d; appending the same batch again completes it)",
					err, off, len(evs), size)
			}
			return store.Appended{}, err
		}
		out.Events = append(out.Events, a.Events...)
		out.Duplicate = out.Duplicate && a.Duplicate
	}
	out.First, out.Last = base+1, base+uint64(len(evs))
	return out, nil
}

// isStoreError reports whether err is an answer of the log (conflict, duplicate, ...) rather
// than a failure to reach it, which gets the server and stream added.
func isStoreError(err error) bool {
	return errors.Is(err, store.ErrVersionConflict) || errors.Is(err, store.ErrDuplicateID) ||
		errors.Is(err, store.ErrCorrupt) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) ||
		errors.Is(err, store.ErrClosed)
}

// appendLoop tries the append until it is stored or refused for good, or the timeout passes.
//
// The whole of it, retries included, is bounded by the timeout: every call it makes runs under
// opCtx, which the caller's ctx does not cancel, as once a write is sent its outcome is waited
// for.
func (s *Store) appendLoop(ctx context.Context, task uuid.UUID, expected uint64, evs []events.Event) (store.Appended, error) {
	deadline := time.Now().Add(s.timeout)
	opCtx, cancel := context.WithDeadline(context.WithoutCancel(ctx), deadline)
	defer cancel()
	checkCtx := ctx
	ctx = opCtx
	fresh := false // whether h was read from the server in this call
	h, cached := s.cachedHead(task)
	var lastErr error
	sent := false // whether a write was sent whose outcome is not known
	for attempt := 0; ; attempt++ {
		if attempt > 0 && time.Now().After(deadline) {
			if sent {
				return store.Appended{}, fmt.Errorf("gave up after %v: %w; the append may or may not be stored, appending the same events again is safe", s.timeout, lastErr)
			}
			return store.Appended{}, fmt.Errorf("gave up after %v: %w", s.timeout, lastErr)
		}
		if !cached || (!fresh && h.seq != expected) {
			var err error
			if h, err = s.readHead(ctx, task); err != nil {
				lastErr = err
				if !retryable(err) {
					return store.Appended{}, err
				}
				time.Sleep(retryWait)
				continue
			}
			cached, fresh = true, true
		}
		if h.seq != expected {
			return s.refused(ctx, task, expected, h, evs, errors.New("the head moved"))
		}
		if expected == 0 && s.layout == Layout1 {
			if err := s.mark(ctx, task); err != nil {
				lastErr = err
				if !retryable(err) {
					return store.Appended{}, err
				}
				time.Sleep(retryWait)
				continue
			}
		}
		if attempt == 0 {
			if err := checkCtx.Err(); err != nil {
				return store.Appended{}, err
			}
		}
		sealed := seal(task, h, evs)
		ack, err := s.publish(ctx, task, h, sealed)
		switch {
		case err == nil && !ack.Duplicate:
			last := &sealed[len(sealed)-1]
			s.setHead(task, head{seq: last.Seq, hash: last.Hash, turn: last.Turn, sseq: ack.Seq})
			return store.Appended{First: sealed[0].Seq, Last: last.Seq, Events: sealed}, nil
		case err == nil: // a duplicate by message id
			return s.refused(ctx, task, expected, h, evs, errors.New("the server took it for a repeat of an earlier message"))
		}
		lastErr = err
		switch apiCode(err) {
		case codeWrongLastSeq, codeStoreFailed, codeBatchDuplicate, codeDuplicateConflict:
			// Someone else wrote to the task, or ids of the batch are stored: find out which.
			cur, rerr := s.readHead(ctx, task)
			if rerr != nil {
				lastErr = rerr
				time.Sleep(retryWait)
				cached = false
				continue
			}
			return s.refused(ctx, task, expected, cur, evs, err)
		case codeWrongLastSeqConstant, codeBatchTooMany, codeBatchIncomplete:
			// Another write to the task is in flight, or the server is busy: try again.
			cached = false
			time.Sleep(retryWait)
			continue
		}
		if !retryable(err) {
			return store.Appended{}, err
		}
		// No answer: the write may or may not be stored. Read back to learn which.
		sent = true
		cur, rerr := s.readHead(ctx, task)
		if rerr == nil && cur.seq != h.seq {
			return s.refused(ctx, task, expected, cur, evs, err)
		}
		if rerr == nil {
			h, cached, fresh = cur, true, true
		} else {
			cached = false
		}
		time.Sleep(retryWait)
	}
}

// retryable reports whether err may go away on its own: no answer, no responders (a stream
// leader being elected), a connection being re-established.
func retryable(err error) bool {
	return errors.Is(err, errTimeout) || errors.Is(err, nats.ErrNoResponders) || errors.Is(err, nats.ErrTimeout) ||
		errors.Is(err, nats.ErrConnectionReconnecting) || errors.Is(err, nats.ErrDisconnected) ||
		apiCode(err) == 10008 /* cluster not available */ || apiCode(err) == 10009 /* not leader */
}

// seal returns copies of evs as they are stored after h: task, sequence numbers and hash chain.
func seal(task uuid.UUID, h head, evs []events.Event) []events.Event {
	out := make([]events.Event, len(evs))
	prev := h.hash
	for i := range evs {
		ev := evs[i]
		ev.Task = task
		ev.Seq = h.seq + 1 + uint64(i)
		ev.Seal(prev)
		prev = ev.Hash
		out[i] = ev
	}
	return out
}

// publish writes the sealed events after h: one message, or one atomic batch, possibly shared
// with the appends of other goroutines to other tasks (see submit).
func (s *Store) publish(ctx context.Context, task uuid.UUID, h head, sealed []events.Event) (pubAck, error) {
	msgs, err := s.prepare(ctx, task, h, sealed)
	if err != nil {
		return pubAck{}, err
	}
	return s.submit(&pubRequest{ctx: ctx, task: task, msgs: msgs, done: make(chan pubResult, 1), lead: make(chan struct{}, 1)})
}

// prepare makes the messages of the sealed events after h. In layout 1, each event on its
// own subject with its message id, the first with the expected last subject sequence of the
// task's filter. In layout 2, first each event's id marker, holding the event's task sequence,
// with an expected last subject sequence of 0 (the id is stored once, however late the retry),
// then the events on the task's log subject, each with its message id, the first with the log's
// expected last subject sequence: the last message is the log's new head. In layout 3, each
// event's id marker, with no payload and an expected last subject sequence of 0, then at once
// the event on the task's log subject, without a message id, the first event with the log's
// expected last subject sequence: the marker is stored just before its event, which is how it
// names it.
func (s *Store) prepare(ctx context.Context, task uuid.UUID, h head, sealed []events.Event) ([]*nats.Msg, error) {
	msgs := make([]*nats.Msg, 0, len(sealed)*s.msgsPerEvent())
	if s.layout == Layout2 {
		for i := range sealed {
			ev := &sealed[i]
			m := nats.NewMsg(s.idSubject(task, ev.ID))
			m.Data = strconv.AppendUint(nil, ev.Seq, 10)
			m.Header.Set("Nats-Expected-Last-Subject-Sequence", "0")
			msgs = append(msgs, m)
		}
	}
	for i := range sealed {
		ev := &sealed[i]
		subject := s.taskFilter(task)
		if s.layout == Layout1 {
			subject = s.idSubject(task, ev.ID)
		}
		if s.layout == Layout3 {
			mk := nats.NewMsg(s.idSubject(task, ev.ID))
			mk.Header.Set("Nats-Expected-Last-Subject-Sequence", "0")
			msgs = append(msgs, mk)
		}
		m := nats.NewMsg(subject)
		m.Data = ev.AppendBinary(make([]byte, 0, 128+len(ev.Data)))
		if !s.noCompress {
			m.Data = payloadcodec.Encode(nil, m.Data)
		}
		if len(m.Data) > s.spillLimit() {
			sum, err := s.spill(ctx, m.Data)
			if err != nil {
				return nil, err
			}
			m.Data = nil
			m.Header.Set(spillHeader, sum)
		}
		if s.layout != Layout3 {
			m.Header.Set("Nats-Msg-Id", task.String()+"."+ev.ID.String())
		}
		if i == 0 {
			m.Header.Set("Nats-Expected-Last-Subject-Sequence", strconv.FormatUint(h.sseq, 10))
			if s.layout == Layout1 {
				m.Header.Set("Nats-Expected-Last-Subject-Sequence-Subject", s.taskFilter(task))
			}
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

// send publishes msgs: a lone message as it is, several as one atomic batch, and waits for the
// outcome until ctx's deadline (or the timeout).
func (s *Store) send(ctx context.Context, msgs []*nats.Msg) (pubAck, error) {
	if len(msgs) == 1 {
		for _, h := range []string{"Nats-Batch-Id", "Nats-Batch-Sequence", "Nats-Batch-Commit"} {
			msgs[0].Header.Del(h)
		}
		return s.ackOf(s.request(ctx, msgs[0]))
	}
	b := s.newBatch()
	b.add(msgs)
	return b.commit(ctx)
}

// ackOf decodes the server's answer to a publish.
func (s *Store) ackOf(reply *nats.Msg, err error) (pubAck, error) {
	if err != nil {
		return pubAck{}, err
	}
	var ack pubAck
	if err := json.Unmarshal(reply.Data, &ack); err != nil {
		return pubAck{}, fmt.Errorf("the server's acknowledgement does not decode: %w", err)
	}
	if ack.Error != nil {
		return pubAck{}, ack.Error
	}
	return ack, nil
}

// refused answers an append the log did not take as is: the head h is not the expected one, or
// the server refused the write. If ids of the batch are stored, the answer is the one
// store.DB.Append gives for them; otherwise it is a version conflict, or, with the head where
// it was expected, a retry is due (errRetry).
func (s *Store) refused(ctx context.Context, task uuid.UUID, expected uint64, h head, evs []events.Event, cause error) (store.Appended, error) {
	a, err, found := s.duplicate(ctx, task, evs)
	if found {
		return a, err
	}
	if h.seq != expected {
		return store.Appended{}, &store.VersionConflictError{Task: task, Expected: expected, Actual: h.seq}
	}
	// Refused with the head where it was expected and none of the ids stored: something else
	// went wrong, which the caller should see.
	return store.Appended{}, fmt.Errorf("the server refused the append of %d events at head %d though neither the head moved nor any id is stored: %w", len(evs), h.seq, cause)
}

// duplicate looks the batch's ids up in the task, exactly as store.DB.Append does: found is
// false when none is stored; otherwise the answer is a repeat (Duplicate) or ErrDuplicateID.
func (s *Store) duplicate(ctx context.Context, task uuid.UUID, evs []events.Event) (a store.Appended, err error, found bool) {
	stored := make([]events.Event, len(evs))
	raws := make([][]byte, len(evs))
	var first uint64
	missing := 0
	for i := range evs {
		ev := &evs[i]
		m, ok, err := s.eventByID(ctx, task, ev.ID)
		if err != nil {
			return store.Appended{}, fmt.Errorf("reading event %s back: %w", ev.ID, err), true
		}
		if !ok {
			missing++
			continue
		}
		if raws[i], err = s.payload(ctx, m); err != nil {
			return store.Appended{}, fmt.Errorf("task %s: event %s: %w", task, ev.ID, err), true
		}
		if err := stored[i].UnmarshalBinary(raws[i]); err != nil {
			return store.Appended{}, fmt.Errorf("task %s: event %s: %w: %w", task, ev.ID, store.ErrCorrupt, err), true
		}
		seq := stored[i].Seq
		if stored[i].Task != task || stored[i].ID != ev.ID {
			return store.Appended{}, fmt.Errorf("task %s: %w: the message of event %s holds task %s event %s",
				task, store.ErrCorrupt, ev.ID, stored[i].Task, stored[i].ID), true
		}
		found = true
		switch {
		case i == 0:
			first = seq
		case seq != first+uint64(i):
			return store.Appended{}, fmt.Errorf("append to task %s: %w: event %s (#%d of the batch) is stored at seq %d, not next to the batch's other events",
				task, store.ErrDuplicateID, ev.ID, i, seq), true
		}
	}
	if !found {
		return store.Appended{}, nil, false
	}
	if missing > 0 {
		return store.Appended{}, fmt.Errorf("append to task %s: %w: %d of the batch's %d events are already stored and %d are not; a batch is idempotent only as a whole",
			task, store.ErrDuplicateID, len(evs)-missing, len(evs), missing), true
	}
	for i := range evs {
		// Same position, same link: the encodings are equal exactly when the caller's content is.
		want := evs[i]
		want.Task, want.Seq, want.Prev, want.Hash = task, stored[i].Seq, stored[i].Prev, stored[i].Hash
		if !bytes.Equal(want.AppendBinary(nil), raws[i]) {
			return store.Appended{}, fmt.Errorf("append to task %s: %w: event %s is stored at seq %d with different content",
				task, store.ErrDuplicateID, want.ID, stored[i].Seq), true
		}
	}
	return store.Appended{First: stored[0].Seq, Last: stored[len(stored)-1].Seq, Events: stored, Duplicate: true}, nil, true
}

// eventByID reads the message of task's event id from the stream leader; ok is false when the
// task holds no such id. In layout 2 it is found through the id's marker, which names the
// event's task sequence; in layout 3 it is the message stored just after the id's marker.
func (s *Store) eventByID(ctx context.Context, task uuid.UUID, id ulid.ULID) (storedMsg, bool, error) {
	m, ok, err := s.getLast(ctx, s.idSubject(task, id))
	if err != nil || !ok || s.layout == Layout1 {
		return m, ok, err
	}
	if s.layout == Layout3 {
		ev, ok, err := s.getNext(ctx, s.taskFilter(task), m.Seq+1)
		if err == nil && (!ok || ev.Seq != m.Seq+1) {
			err = fmt.Errorf("task %s: %w: the message after the marker of event %s (stream seq %d) is not an event of the task", task, store.ErrCorrupt, id, m.Seq)
		}
		return ev, err == nil, err
	}
	seq, err := strconv.ParseUint(string(m.Data), 10, 64)
	if err != nil || seq == 0 {
		return storedMsg{}, false, fmt.Errorf("task %s: %w: the marker of event %s at stream seq %d names no sequence", task, store.ErrCorrupt, id, m.Seq)
	}
	// The marker and its event were stored together: a head read after the marker holds it.
	h, err := s.readHead(ctx, task)
	if err != nil {
		return storedMsg{}, false, err
	}
	if seq > h.seq {
		return storedMsg{}, false, fmt.Errorf("task %s: %w: the marker of event %s names seq %d, past the head %d", task, store.ErrCorrupt, id, seq, h.seq)
	}
	pos, err := s.findStreamSeq(ctx, task, seq, h)
	if err != nil {
		return storedMsg{}, false, err
	}
	ev, ok, err := s.getNext(ctx, s.taskFilter(task), pos)
	if err == nil && !ok {
		err = fmt.Errorf("task %s: %w: no event at seq %d, which the marker of event %s names", task, store.ErrCorrupt, seq, id)
	}
	return ev, err == nil, err
}

// mark publishes task's marker message, once per task and Store: the task list is made of them.
func (s *Store) mark(ctx context.Context, task uuid.UUID) error {
	s.mu.Lock()
	done := s.marked[task]
	s.mu.Unlock()
	if done {
		return nil
	}
	m := nats.NewMsg(s.markerSubject(task))
	m.Header.Set("Nats-Msg-Id", "task."+task.String())
	// A second marker is refused (one message per subject): the task is marked already.
	_, err := s.ackOf(s.request(context.WithoutCancel(ctx), m))
	var ae *apiError
	if err != nil && !(errors.As(err, &ae) && ae.ErrCode == codeStoreFailed) {
		return err
	}
	s.mu.Lock()
	if len(s.marked) >= maxCachedHeads {
		clear(s.marked)
	}
	s.marked[task] = true
	s.mu.Unlock()
	return nil
}

// cachedHead returns the head this Store last saw of task.
func (s *Store) cachedHead(task uuid.UUID) (head, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	h, ok := s.heads[task]
	return h, ok
}

// setHead records task's head.
func (s *Store) setHead(task uuid.UUID, h head) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.heads[task]; ok && old.sseq > h.sseq {
		return
	}
	if len(s.heads) >= maxCachedHeads {
		clear(s.heads)
	}
	s.heads[task] = h
}

// readHead reads task's head from the stream leader; a task with no events has the zero head.
func (s *Store) readHead(ctx context.Context, task uuid.UUID) (head, error) {
	m, ok, err := s.getLast(ctx, s.taskFilter(task))
	if err != nil || !ok {
		return head{}, err
	}
	ev, err := s.eventOf(ctx, task, m)
	if err != nil {
		return head{}, err
	}
	if ev.Task != task || ev.Seq == 0 {
		return head{}, fmt.Errorf("task %s: stream seq %d: %w: the last event says it is task %s seq %d", task, m.Seq, store.ErrCorrupt, ev.Task, ev.Seq)
	}
	h := head{seq: ev.Seq, hash: ev.Hash, turn: ev.Turn, sseq: m.Seq}
	s.setHead(task, h)
	return h, nil
}
