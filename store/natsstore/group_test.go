package natsstore

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
)

// Appends of many tasks published together are one atomic batch: each learns the stream
// sequence of its own last event. When the server refuses the batch because one append's
// expected subject sequence is stale, every other append is stored all the same, and that one
// is refused.
func TestSharedBatch(t *testing.T) {
	s := openStore(t, startServer(t), nil)
	ctx := context.Background()
	for _, stale := range []int{-1, 7} {
		var group []*pubRequest
		tasks := make([]uuid.UUID, 20)
		for i := range tasks {
			tasks[i] = uuid.New()
			mustAppend(t, s, tasks[i], 0, note(t, 1, "first"))
			h, err := s.readHead(ctx, tasks[i])
			if err != nil {
				t.Fatal(err)
			}
			if i == stale {
				h.sseq-- // as if another writer had appended since
			}
			msgs, err := s.prepare(ctx, tasks[i], h, seal(tasks[i], h, []events.Event{note(t, 2, "second")}))
			if err != nil {
				t.Fatal(err)
			}
			group = append(group, &pubRequest{ctx: ctx, task: tasks[i], msgs: msgs, done: make(chan pubResult, 1)})
		}
		s.sendGroup(group)
		for i, r := range group {
			res := <-r.done
			if i == stale {
				if apiCode(res.err) != codeWrongLastSeq {
					t.Errorf("the stale append: %+v, %v; want wrong last sequence", res.ack, res.err)
				}
				continue
			}
			if res.err != nil {
				t.Fatalf("append %d of the batch: %v", i, res.err)
			}
			h, err := s.readHead(ctx, tasks[i])
			if err != nil {
				t.Fatal(err)
			}
			if h.seq != 2 || h.sseq != res.ack.Seq {
				t.Errorf("append %d: acknowledged at stream seq %d, its event is seq %d at %d", i, res.ack.Seq, h.seq, h.sseq)
			}
		}
	}
}

// Appends that queue while a publish is under way are sent by the next leader as one atomic
// batch, however many arrive: every stored message carries the one batch id, and each append
// is acknowledged at its own event.
func TestQueuedAppendsShareOneBatch(t *testing.T) {
	s := openStore(t, startServer(t), nil)
	const writers = 24
	tasks := make([]uuid.UUID, writers)
	for i := range tasks {
		tasks[i] = uuid.New()
		mustAppend(t, s, tasks[i], 0, note(t, 1, "first"))
	}
	h, err := s.readHead(context.Background(), tasks[writers-1])
	if err != nil {
		t.Fatal(err)
	}
	before := h.sseq // the last message of the first appends
	// As if a publish were under way: every append queues behind it.
	s.gmu.Lock()
	s.publishing = true
	s.gmu.Unlock()
	errs := make(chan error, writers)
	for i := range tasks {
		go func() {
			_, err := s.Append(context.Background(), tasks[i], 1, note(t, 2, "second"))
			errs <- err
		}()
	}
	for deadline := time.Now().Add(slow); ; time.Sleep(time.Millisecond) {
		s.gmu.Lock()
		n := len(s.queue)
		s.gmu.Unlock()
		if n == writers {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d appends queued", n, writers)
		}
	}
	// The publish under way ends and hands on to the oldest waiting writer.
	s.gmu.Lock()
	next := s.queue[0]
	s.gmu.Unlock()
	next.lead <- struct{}{}
	for range writers {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	batches := map[string]int{}
	for _, m := range rawMessages(t, s, s.stream+".>") {
		if m.Sequence > before && (m.Header.Get("Nats-Batch-Sequence") != "" || m.Header.Get("Nats-Batch-Id") != "") {
			batches[m.Header.Get("Nats-Batch-Id")]++
		}
	}
	if len(batches) != 1 {
		t.Fatalf("the queued appends were stored in %d atomic batches (%v), want 1", len(batches), batches)
	}
	for _, task := range tasks {
		// The head the acknowledgement left in the cache, against the one stored.
		acked, _ := s.cachedHead(task)
		stored, err := s.readHead(context.Background(), task)
		if err != nil {
			t.Fatal(err)
		}
		if stored.seq != 2 || acked != stored {
			t.Errorf("task %s: acknowledged as seq %d at stream seq %d, stored as seq %d at %d", task, acked.seq, acked.sseq, stored.seq, stored.sseq)
		}
	}
}
