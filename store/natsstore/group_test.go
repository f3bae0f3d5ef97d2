package natsstore

import (
	"context"
	"testing"

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
