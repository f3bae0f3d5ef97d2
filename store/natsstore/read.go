package natsstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/oklog/ulid/v2"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

// readChunk is the most events one direct get returns, and readChunkBytes about the most bytes:
// the server counts the events a request of a wildcard filter leaves pending, which costs as
// much as the task has events, so a chunk must be large for a long task to be read in linear
// time.
const (
	readChunk      = 8192
	readChunkBytes = 8 << 20
)

// maxReadTries is how many times a read of a chunk is sent before its lack of an answer fails
// the read. Any replica may answer it, and one cut off from the rest (a network partition, a
// stopped process) still receives its share of the requests until the cluster notices, and
// answers none of them: another try goes to another replica, most likely.
const maxReadTries = 4

// answeredBatch is directBatch asked again until a replica answers with messages: a request
// that gets no answer is sent again, maxReadTries times at the most (another replica may
// answer), and an answer without messages, from a replica behind the head the leader reported,
// is asked for again until the timeout, when it fails with the error behind returns. A done ctx
// stops it with ctx.Err().
func (s *Store) answeredBatch(ctx context.Context, filter string, sseq uint64, noHdr bool, behind func() error) ([]storedMsg, uint64, error) {
	var deadline time.Time // set while a replica's answer is behind the leader's head
	tries := 0             // requests that got no answer
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		msgs, last, err := s.directBatch(ctx, filter, sseq, readChunk, noHdr)
		if err != nil {
			if tries++; tries < maxReadTries && retryable(err) {
				continue
			}
			return nil, 0, err
		}
		tries = 0
		if len(msgs) > 0 {
			return msgs, last, nil
		}
		if deadline.IsZero() {
			deadline = time.Now().Add(s.timeout)
		} else if time.Now().After(deadline) {
			return nil, 0, behind()
		}
		time.Sleep(retryWait)
	}
}

// Head returns the end of task's log, read from the stream leader, or store.ErrTaskNotFound.
func (s *Store) Head(task uuid.UUID) (store.Head, error) {
	if err := s.check(); err != nil {
		return store.Head{}, err
	}
	h, err := s.readHead(context.Background(), task)
	if err != nil {
		return store.Head{}, s.errorf(fmt.Sprintf("head of task %s", task), err)
	}
	if h.seq == 0 {
		return store.Head{}, fmt.Errorf("task %s: %w", task, store.ErrTaskNotFound)
	}
	return store.Head{Seq: h.seq, Hash: h.hash, LastTurn: h.turn}, nil
}

// Events streams task's events in order from sequence fromSeq (0 and 1 both mean the
// beginning), as store.DB.Events does: in chunks, with no server call outstanding while the
// loop body runs, so the body may append to the task; the stream ends at the head it read
// first, so events appended after it began are not streamed. A gap,
// a value that does not decode or an event on the wrong subject ends the stream with an error
// (errors.Is store.ErrCorrupt); an unknown task yields store.ErrTaskNotFound.
func (s *Store) Events(ctx context.Context, task uuid.UUID, fromSeq uint64) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		err := s.scan(ctx, task, max(fromSeq, 1), func(ev events.Event) bool { return yield(ev, nil) })
		if err != nil {
			yield(events.Event{}, err)
		}
	}
}

// scan reads task's events from seq from on, up to the head read from the leader when it
// begins, and hands each to fn until fn returns false. The chunks come without headers (the
// server rewrites a message's headers for every message it sends, which costs more than all
// the rest of a read).
func (s *Store) scan(ctx context.Context, task uuid.UUID, from uint64, fn func(ev events.Event) bool) error {
	if err := s.check(); err != nil {
		return err
	}
	fail := func(err error) error { return s.errorf(fmt.Sprintf("read task %s", task), err) }
	h, err := s.readHead(ctx, task)
	if err != nil {
		return fail(err)
	}
	if h.seq == 0 {
		return fmt.Errorf("task %s: %w", task, store.ErrTaskNotFound)
	}
	if from > h.seq {
		return nil
	}
	sseq, err := s.findStreamSeq(ctx, task, from, h)
	if err != nil {
		return err
	}
	next := from
	filter := s.taskFilter(task)
	for {
		msgs, lastSeq, err := s.answeredBatch(ctx, filter, sseq, true, func() error {
			return fmt.Errorf("seq %d: the replicas answering reads stayed behind the stream leader's head %d for %v", next, h.seq, s.timeout)
		})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fail(err)
		}
		// Without headers the chunk says nothing of where its messages are in the stream: the
		// next chunk starts after its last event, found by its subject.
		var last events.Event
		for i, m := range msgs {
			if err := ctx.Err(); err != nil {
				return err
			}
			if len(m.Data) == 0 {
				// A spilled event: read its message again, headers and all.
				pos := sseq
				switch {
				case i > 0 && s.layout == Layout1:
					if pos, err = s.streamSeqOf(ctx, task, last); err != nil {
						return err
					}
					pos++
				case i > 0:
					if pos, err = s.findStreamSeq(ctx, task, next, h); err != nil {
						return err
					}
				}
				if m, err = s.fullMessage(ctx, task, next, filter, pos); err != nil {
					return err
				}
			}
			ev, err := decodeMsg(task, next, m, s.stream)
			if err != nil {
				return err
			}
			if !fn(ev) {
				return nil
			}
			next++
			last = ev
			if next > h.seq {
				return nil
			}
		}
		if lastSeq > 0 {
			sseq = lastSeq + 1
			continue
		}
		if sseq, err = s.streamSeqOf(ctx, task, last); err != nil {
			return err
		}
		sseq++
	}
}

// streamSeqOf returns the stream sequence of task's event ev, from the subject its id names.
func (s *Store) streamSeqOf(ctx context.Context, task uuid.UUID, ev events.Event) (uint64, error) {
	m, ok, err := s.eventByID(ctx, task, ev.ID)
	switch {
	case err != nil:
		return 0, s.errorf(fmt.Sprintf("read task %s", task), err)
	case !ok:
		return 0, fmt.Errorf("task %s: seq %d: %w: event %s is not on the subject its id names", task, ev.Seq, store.ErrCorrupt, ev.ID)
	}
	return m.Seq, nil
}

// fullMessage reads the first message on filter at stream sequence pos or later, with its
// headers, and the event's bytes, fetched if they were spilled.
func (s *Store) fullMessage(ctx context.Context, task uuid.UUID, seq uint64, filter string, pos uint64) (storedMsg, error) {
	m, ok, err := s.getNext(ctx, filter, pos)
	switch {
	case err != nil:
		return storedMsg{}, s.errorf(fmt.Sprintf("read task %s", task), err)
	case !ok:
		return storedMsg{}, fmt.Errorf("task %s: seq %d: %w: missing", task, seq, store.ErrCorrupt)
	}
	if m.Data, err = s.payload(ctx, m); err != nil {
		return storedMsg{}, fmt.Errorf("task %s: seq %d: %w", task, seq, err)
	}
	return m, nil
}

// decodeMsg decodes a message of task's log expected to hold event seq.
func decodeMsg(task uuid.UUID, seq uint64, m storedMsg, stream string) (events.Event, error) {
	data, err := canonical(m.Seq, m.Data)
	if err != nil {
		return events.Event{}, fmt.Errorf("task %s: seq %d (stream %s): %w", task, seq, stream, err)
	}
	var ev events.Event
	if err := ev.UnmarshalBinary(data); err != nil {
		return events.Event{}, fmt.Errorf("task %s: seq %d (stream %s): %w: %w", task, seq, stream, store.ErrCorrupt, err)
	}
	if ev.Task != task || ev.Seq != seq {
		return events.Event{}, fmt.Errorf("task %s: seq %d: %w: the message there in stream %s holds task %s seq %d",
			task, seq, store.ErrCorrupt, stream, ev.Task, ev.Seq)
	}
	return ev, nil
}

// eventOf decodes the event a message of task's subjects holds (read from the blob store when
// it was spilled); a value that does not decode is ErrCorrupt, named by its stream sequence.
func (s *Store) eventOf(ctx context.Context, task uuid.UUID, m storedMsg) (events.Event, error) {
	data, err := s.payload(ctx, m)
	if err != nil {
		return events.Event{}, fmt.Errorf("task %s: %w", task, err)
	}
	var ev events.Event
	if err := ev.UnmarshalBinary(data); err != nil {
		return events.Event{}, fmt.Errorf("task %s: stream seq %d: %w: %w", task, m.Seq, store.ErrCorrupt, err)
	}
	return ev, nil
}

// findStreamSeq returns the stream sequence of task's event seq (1 ≤ seq ≤ h.seq), or one at
// or before it on the task's filter: the first event is found at once, others by a binary
// search over the stream, reading from the leader.
func (s *Store) findStreamSeq(ctx context.Context, task uuid.UUID, seq uint64, h head) (uint64, error) {
	if seq <= 1 {
		return 1, nil
	}
	if seq == h.seq {
		return h.sseq, nil
	}
	filter := s.taskFilter(task)
	// The answer is in [lo, hi]: each of the task's events has a stream position of its own,
	// in order, so event seq is at least seq messages in and h.seq-seq messages before the head.
	lo, hi := seq, h.sseq-(h.seq-seq)
	for lo < hi {
		mid := lo + (hi-lo)/2
		m, ok, err := s.getNext(ctx, filter, mid)
		if err != nil {
			return 0, s.errorf(fmt.Sprintf("read task %s", task), err)
		}
		if !ok {
			return 0, fmt.Errorf("task %s: %w: no event at or after stream seq %d, before the head at %d", task, store.ErrCorrupt, mid, h.sseq)
		}
		ev, err := s.eventOf(ctx, task, m)
		if err != nil {
			return 0, err
		}
		switch {
		case ev.Seq == seq:
			return m.Seq, nil
		case ev.Seq < seq:
			lo = m.Seq + 1
		default:
			hi = mid
		}
	}
	return lo, nil
}

// Tasks lists every task with at least one event, sorted by task id.
func (s *Store) Tasks() ([]store.TaskInfo, error) {
	if err := s.check(); err != nil {
		return nil, err
	}
	ctx := context.Background()
	ids, err := s.markedTasks(ctx)
	if err != nil {
		return nil, s.errorf("list tasks", err)
	}
	out := make([]store.TaskInfo, 0, len(ids))
	for _, task := range ids {
		h, err := s.readHead(ctx, task)
		if err != nil {
			return nil, s.errorf("list tasks", err)
		}
		if h.seq == 0 {
			continue // marked, but its first append failed
		}
		out = append(out, store.TaskInfo{Task: task, Events: h.seq, LastTurn: h.turn})
	}
	return out, nil
}

// markedTasks returns the tasks with a marker message, sorted.
func (s *Store) markedTasks(ctx context.Context) ([]uuid.UUID, error) {
	// Layout 1 lists tasks by their marker messages, layouts 2 and 3 by their log subjects: a
	// log subject holds an event as soon as it exists.
	prefix := s.stream + ".task."
	if s.layout != Layout1 {
		prefix = s.logPrefix()
	}
	var ids []uuid.UUID
	for offset := 0; ; {
		body, _ := json.Marshal(map[string]any{"subjects_filter": prefix + "*", "offset": offset})
		reply, err := s.request(ctx, natsMsg("$JS.API.STREAM.INFO."+s.stream, body))
		if err != nil {
			return nil, err
		}
		var resp struct {
			State struct {
				NumSubjects int               `json:"num_subjects"`
				Subjects    map[string]uint64 `json:"subjects"`
			} `json:"state"`
			Total  int       `json:"total"`
			Limit  int       `json:"limit"`
			Error  *apiError `json:"error"`
			Offset int       `json:"offset"`
		}
		if err := json.Unmarshal(reply.Data, &resp); err != nil {
			return nil, fmt.Errorf("stream info does not decode: %w", err)
		}
		if resp.Error != nil {
			return nil, resp.Error
		}
		for subj := range resp.State.Subjects {
			var id uuid.UUID
			var err error
			if s.layout == Layout1 {
				id, err = uuid.Parse(strings.TrimPrefix(subj, prefix))
			} else {
				id, err = s.taskOfLogSubject(subj)
			}
			if err != nil {
				return nil, fmt.Errorf("%w: marker subject %q does not name a task", store.ErrCorrupt, subj)
			}
			ids = append(ids, id)
		}
		offset += len(resp.State.Subjects)
		if len(resp.State.Subjects) == 0 || offset >= resp.Total {
			break
		}
	}
	slices.SortFunc(ids, func(a, b uuid.UUID) int { return strings.Compare(a.String(), b.String()) })
	return ids, nil
}

// Verify walks task's log from the first event and checks it is the chain that was written,
// with store.ChainVerifier (the check store.DB.Verify makes), and that each event is where its
// id says: in layout 1 on the subject its id names; in layouts 2 and 3 on the task's log
// subject, with the id markers of the task naming the same ids in the same order, at the same
// sequences (layout 2) or each stored just before its event (layout 3). The first problem is a
// *store.VerifyError.
func (s *Store) Verify(ctx context.Context, task uuid.UUID) error {
	if err := s.check(); err != nil {
		return err
	}
	fail := func(err error) error { return s.errorf(fmt.Sprintf("verify task %s", task), err) }
	head, ok, err := s.getLast(ctx, s.taskFilter(task))
	if err != nil {
		return fail(err)
	}
	if !ok {
		return fmt.Errorf("task %s: %w", task, store.ErrTaskNotFound)
	}
	c := store.NewChainVerifier(task)
	var ids []ulid.ULID // layouts 2 and 3: the events' ids, in order
	var at []uint64     // and their stream sequences
	var problem error
	err = s.scanRaw(ctx, task, s.taskFilter(task), head.Seq, func(m storedMsg) bool {
		data, err := s.payload(ctx, m)
		if err != nil {
			if !errors.Is(err, store.ErrCorrupt) {
				problem = fail(err)
				return false
			}
			problem = &store.VerifyError{Task: task, Seq: c.Next(), Problem: err.Error()}
			return false
		}
		var ev events.Event
		if err := ev.UnmarshalBinary(data); err != nil {
			problem = &store.VerifyError{Task: task, Seq: c.Next(), Problem: fmt.Sprintf("the stored bytes do not decode (%v): the record is damaged", err)}
			return false
		}
		if err := c.Check(&ev); err != nil {
			problem = err
			return false
		}
		want := s.taskFilter(task)
		if s.layout == Layout1 {
			want = s.idSubject(task, ev.ID)
		}
		if m.Subject != want {
			problem = &store.VerifyError{Task: task, Seq: ev.Seq, Problem: fmt.Sprintf("the event is on subject %s, not %s: it was published by other code", m.Subject, want)}
			return false
		}
		if s.layout != Layout1 {
			ids = append(ids, ev.ID)
			at = append(at, m.Seq)
		}
		return true
	})
	switch {
	case problem != nil:
		return problem
	case err != nil:
		return err
	case c.Next() == 1:
		return fmt.Errorf("task %s: %w", task, store.ErrTaskNotFound)
	case s.layout == Layout1:
		return nil
	}
	// A marker past the log's head belongs to an append stored since.
	last, ok, err := s.getLast(ctx, s.idFilter(task))
	if err != nil {
		return fail(err)
	}
	if !ok {
		return &store.VerifyError{Task: task, Seq: 1, Problem: fmt.Sprintf("event %s has no id marker: a late retry of it could be stored twice", ids[0])}
	}
	return s.verifyMarkers(ctx, task, min(last.Seq, head.Seq), ids, at)
}

// verifyMarkers checks that the id markers of task stored up to stream sequence upTo name
// the events ids, stored at stream sequences at, in order: marker k names the id of event k
// and holds k (layout 2), or is stored just before event k and holds nothing (layout 3). An
// event without its marker could be stored twice; a marker without its event was not written
// by this package.
func (s *Store) verifyMarkers(ctx context.Context, task uuid.UUID, upTo uint64, ids []ulid.ULID, at []uint64) error {
	var problem error
	n := 0
	err := s.scanRaw(ctx, task, s.idFilter(task), upTo, func(m storedMsg) bool {
		seq := uint64(n + 1)
		if n >= len(ids) {
			problem = &store.VerifyError{Task: task, Seq: seq, Problem: fmt.Sprintf("the id marker %s names no event of the log, which ends at seq %d: it was published by other code", m.Subject, len(ids))}
			return false
		}
		want := s.idSubject(task, ids[n])
		if s.layout == Layout3 {
			if m.Subject != want || len(m.Data) != 0 || m.Seq+1 != at[n] {
				problem = &store.VerifyError{Task: task, Seq: seq, Problem: fmt.Sprintf("the id marker there is %s at stream seq %d holding %d bytes, not %s at stream seq %d holding none: an event's id is not recorded with it", m.Subject, m.Seq, len(m.Data), want, at[n]-1)}
				return false
			}
			n++
			return true
		}
		if m.Subject != want || string(m.Data) != strconv.FormatUint(seq, 10) {
			problem = &store.VerifyError{Task: task, Seq: seq, Problem: fmt.Sprintf("the id marker there is %s holding %q, not %s holding %d: an event's id is not recorded with it", m.Subject, m.Data, want, seq)}
			return false
		}
		n++
		return true
	})
	switch {
	case problem != nil:
		return problem
	case err != nil && !errors.Is(err, store.ErrTaskNotFound):
		return err
	case n < len(ids):
		return &store.VerifyError{Task: task, Seq: uint64(n + 1), Problem: fmt.Sprintf("event %s has no id marker: a late retry of it could be stored twice", ids[n])}
	}
	return nil
}

// scanRaw hands every message of filter (one of task's), in stream order, to fn, without
// decoding, up to stream sequence upTo.
func (s *Store) scanRaw(ctx context.Context, task uuid.UUID, filter string, upTo uint64, fn func(m storedMsg) bool) error {
	fail := func(err error) error { return s.errorf(fmt.Sprintf("verify task %s", task), err) }
	sseq := uint64(1)
	for sseq <= upTo {
		msgs, _, err := s.answeredBatch(ctx, filter, sseq, false, func() error {
			return fmt.Errorf("seq %d of the stream: the replicas answering reads stayed behind the stream leader for %v", sseq, s.timeout)
		})
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fail(err)
		}
		for _, m := range msgs {
			if err := ctx.Err(); err != nil {
				return err
			}
			if m.Seq > upTo {
				return nil
			}
			if !fn(m) {
				return nil
			}
			sseq = m.Seq + 1
		}
	}
	return nil
}

// HasEvents reports whether task's log holds any event with one of the ids, as
// store.DB.HasEvents does: each id is its own subject, so it is a read of that subject's last
// message from the leader, one per id until one is found, and nothing is written.
func (s *Store) HasEvents(task uuid.UUID, ids ...ulid.ULID) (bool, error) {
	if err := s.check(); err != nil {
		return false, err
	}
	for _, id := range ids {
		_, ok, err := s.getLast(context.Background(), s.idSubject(task, id))
		if err != nil {
			return false, s.errorf(fmt.Sprintf("look up event %s of task %s", id, task), err)
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}
