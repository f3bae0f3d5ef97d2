package natsstore

import (
	"context"
	"runtime"
	"sync"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
)

// Appends are published by the appending goroutines themselves. While few are under way
// (maxDirect), each goes at once, on its own: a lone writer pays one message, or one atomic
// batch, and the server takes several side by side. Past that, appends queue up and are sent
// by one goroutine at a time, as store.DB commits: the writer that finds no shared publish
// under way leads, and sends the queue, one append per task, as one atomic batch when it holds
// at least minShared messages (otherwise side by side), then hands on to the oldest writer
// still waiting. On a single server that syncs every write an atomic batch is synced once, so
// many writers share the cost of the sync, as they share an fsync in bbolt. The server checks
// each append's expected subject sequence inside the batch and stores all of it or none: when
// it refuses a shared batch, each append in it is sent again on its own, so that each gets its
// own answer.

// maxDirect is how many appends of one Store are sent on their own at the same time.
const maxDirect = 8

// minShared is the fewest messages worth one shared atomic batch. A single server that syncs
// every write pays for an atomic batch a fixed cost (it stages the batch in files of its own
// before the commit) of about as many syncs; below it, the appends are sent side by side.
const minShared = 16

// pubRequest is one append's messages waiting to be published.
type pubRequest struct {
	// ctx bounds the wait for the outcome (see appendLoop).
	ctx  context.Context
	task uuid.UUID
	msgs []*nats.Msg
	// done has room for the one answer, so a leader never blocks on a waiting writer.
	done chan pubResult
	// lead hands the request's writer the next publish.
	lead chan struct{}
}

type pubResult struct {
	ack pubAck
	err error
}

// submit publishes r, alone or with other queued appends, and returns its acknowledgement: for
// a shared batch, the stream sequence of r's last message.
func (s *Store) submit(r *pubRequest) (pubAck, error) {
	s.gmu.Lock()
	if s.direct < maxDirect && len(s.queue) == 0 && !s.publishing {
		s.direct++
		s.gmu.Unlock()
		ack, err := s.send(r.ctx, r.msgs)
		s.gmu.Lock()
		s.direct--
		s.gmu.Unlock()
		return ack, err
	}
	s.queue = append(s.queue, r)
	if s.publishing {
		s.gmu.Unlock()
		select {
		case res := <-r.done:
			return res.ack, res.err
		case <-r.lead:
			// The previous leader handed on: r is the oldest request waiting.
		}
	} else {
		s.publishing = true
		s.gmu.Unlock()
	}
	// The writers the last publish answered are runnable now but may not have run yet; let
	// them queue their next append so it joins this publish.
	runtime.Gosched()
	s.gmu.Lock()
	group := s.takeGroup()
	s.gmu.Unlock()
	s.sendGroup(group)

	s.gmu.Lock()
	if len(s.queue) == 0 {
		s.publishing = false
		s.gmu.Unlock()
	} else {
		next := s.queue[0]
		s.gmu.Unlock()
		next.lead <- struct{}{}
	}
	res := <-r.done
	return res.ack, res.err
}

// takeGroup removes from the queue its oldest request and the later ones that can share an
// atomic batch with it: one per task, at most maxBatch messages in all. s.gmu is held.
func (s *Store) takeGroup() []*pubRequest {
	group := []*pubRequest{s.queue[0]}
	tasks := map[uuid.UUID]bool{s.queue[0].task: true}
	n := len(s.queue[0].msgs)
	rest := s.queue[:0]
	for _, r := range s.queue[1:] {
		if !tasks[r.task] && n+len(r.msgs) <= maxBatch {
			group = append(group, r)
			tasks[r.task] = true
			n += len(r.msgs)
			continue
		}
		rest = append(rest, r)
	}
	clear(s.queue[len(rest):])
	s.queue = rest
	return group
}

// sendGroup publishes a group and answers each of its requests.
func (s *Store) sendGroup(group []*pubRequest) {
	if len(group) == 1 {
		ack, err := s.send(group[0].ctx, group[0].msgs)
		group[0].done <- pubResult{ack, err}
		return
	}
	var all []*nats.Msg
	for _, r := range group {
		all = append(all, r.msgs...)
	}
	if len(all) < minShared {
		s.sendEach(group)
		return
	}
	ack, err := s.send(group[0].ctx, all)
	if apiCode(err) != 0 {
		// Refused as a whole: one of the appends is, maybe only one. Each on its own learns
		// which.
		s.sendEach(group)
		return
	}
	// The batch's messages are at consecutive stream sequences ending at ack.Seq.
	end := ack.Seq - uint64(len(all))
	for _, r := range group {
		end += uint64(len(r.msgs))
		r.done <- pubResult{pubAck{Stream: ack.Stream, Seq: end}, err}
	}
}

// sendEach publishes each request of the group on its own, all at once, and answers each.
func (s *Store) sendEach(group []*pubRequest) {
	var wg sync.WaitGroup
	for _, r := range group {
		wg.Go(func() {
			ack, err := s.send(r.ctx, r.msgs)
			r.done <- pubResult{ack, err}
		})
	}
	wg.Wait()
}
