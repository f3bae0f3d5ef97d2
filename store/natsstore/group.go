package natsstore

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"runtime"
	"strconv"
	"sync"

	"github.com/google/uuid"
	"github.com/nats-io/nats.go"
)

// Appends are published by the appending goroutines themselves. While few are under way (fewer
// than minShared Append calls of the Store), each goes at once, on its own: a lone writer pays
// one message, or one atomic batch, and the server takes several side by side (at most
// maxDirect). Past that, every append queues up and they are sent by one goroutine at a time,
// as store.DB commits: the writer that finds no shared publish under way leads. It yields while
// the appends under way are still joining the queue (the writers the last publish answered,
// sealing their next append), then sends the queue, one append per task, as one atomic batch
// when it holds at least minShared messages (otherwise side by side), and hands on to the
// oldest writer still waiting.
//
// On a single server that syncs every write an atomic batch is synced once, so many writers
// share the sync, as they share an fsync in bbolt. But the server stages every atomic batch in
// a file store of its own before the commit and removes it afterwards: three folders, two
// metadata files each written with O_SYNC and followed by a sync of their folder, a sync of the
// staged messages, and a handful of unlinks, on top of the commit's own sync. That fixed cost,
// several milliseconds on a local disk, is what a shared publish saves syncs against: it is
// worth it for many appends only, and then for as many as can be gathered. The server checks
// each append's expected subject sequence inside the batch and stores all of it or none: when
// it refuses a shared batch, each append in it is sent again on its own, so that each gets its
// own answer.

// maxDirect is how many appends of one Store are sent on their own at the same time.
const maxDirect = 8

// minShared is the fewest appends under way, and the fewest messages, worth one shared atomic
// batch: the batch's fixed cost (see above) is that of about a dozen single synced messages on
// a local disk.
const minShared = 16

// maxGather bounds the yields of a leader waiting for appends to join its publish.
const maxGather = 64

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
	if s.direct < maxDirect && len(s.queue) == 0 && !s.publishing && s.busy.Load() < minShared {
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
	s.gather()
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

// gather lets the appends under way join the queue before a shared publish takes it: it yields
// while appends are still on their way to the queue, until two yields in a row bring none.
func (s *Store) gather() {
	last, idle := -1, 0
	for range maxGather {
		runtime.Gosched()
		s.gmu.Lock()
		n := len(s.queue)
		// Everything under way is here when each Append call is queued or being sent on its own.
		all := int64(n+s.direct) >= s.busy.Load()
		s.gmu.Unlock()
		if n == last {
			idle++
		} else {
			idle = 0
		}
		if all || idle == 2 {
			return
		}
		last = n
	}
}

// takeGroup removes from the queue its oldest request and the later ones that can share an
// atomic batch with it: one per task, at most maxBatch messages in all. s.gmu is held.
func (s *Store) takeGroup() []*pubRequest {
	tasks := map[uuid.UUID]bool{}
	var group []*pubRequest
	n := 0
	rest := s.queue[:0]
	for _, r := range s.queue {
		// The oldest goes, whatever its size.
		if !tasks[r.task] && (n == 0 || n+len(r.msgs) <= maxBatch) {
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

// sendGroup publishes a group and answers each of its requests: one atomic batch for at least
// minShared messages, otherwise each request on its own.
func (s *Store) sendGroup(group []*pubRequest) {
	if len(group) == 1 {
		ack, err := s.send(group[0].ctx, group[0].msgs)
		group[0].done <- pubResult{ack, err}
		return
	}
	n := 0
	for _, r := range group {
		n += len(r.msgs)
	}
	if n < minShared {
		s.sendEach(group)
		return
	}
	b := s.newBatch()
	for _, r := range group {
		b.add(r.msgs)
	}
	ack, err := b.commit(group[0].ctx)
	s.answer(group, ack, err)
}

// answer answers each request of a group published as one atomic batch, whose outcome is ack
// and err.
func (s *Store) answer(group []*pubRequest, ack pubAck, err error) {
	if apiCode(err) != 0 {
		// Refused as a whole: one of the appends is, maybe only one. Each on its own learns
		// which.
		s.sendEach(group)
		return
	}
	if err != nil {
		for _, r := range group {
			r.done <- pubResult{err: err}
		}
		return
	}
	// The batch's messages are at consecutive stream sequences ending at ack.Seq.
	end := ack.Seq - uint64(ack.Count)
	for _, r := range group {
		end += uint64(len(r.msgs))
		r.done <- pubResult{pubAck{Stream: ack.Stream, Seq: end}, nil}
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

// batch is an atomic batch being published. Its messages are published as they are added, but
// for the last one, held back to be the commit.
type batch struct {
	s    *Store
	id   string
	n    int       // messages added
	held *nats.Msg // the last message added
	err  error     // the first failed publish: the batch is abandoned
}

// newBatch starts an atomic batch with a fresh id: a random UUID, or in layout 3, where every
// message of the batch carries the id, 96 random bits in 16 characters, which no two batches
// in flight share either.
func (s *Store) newBatch() *batch {
	if s.layout != Layout3 {
		return &batch{s: s, id: uuid.NewString()}
	}
	var r [12]byte
	rand.Read(r[:])
	return &batch{s: s, id: base64.RawURLEncoding.EncodeToString(r[:])}
}

// add publishes msgs into the batch, holding back the last.
func (b *batch) add(msgs []*nats.Msg) {
	for _, m := range msgs {
		if b.held != nil && b.err == nil {
			b.err = b.s.nc.PublishMsg(b.held)
		}
		b.n++
		m.Header.Set("Nats-Batch-Id", b.id)
		m.Header.Set("Nats-Batch-Sequence", strconv.Itoa(b.n))
		m.Header.Del("Nats-Batch-Commit")
		b.held = m
	}
}

// commit publishes the held message as the batch's commit and waits for the outcome until ctx's
// deadline (or the timeout).
func (b *batch) commit(ctx context.Context) (pubAck, error) {
	if b.err != nil {
		return pubAck{}, b.err
	}
	b.held.Header.Set("Nats-Batch-Commit", "1")
	ack, err := b.s.ackOf(b.s.request(ctx, b.held))
	if err == nil && (ack.Batch != b.id || ack.Count != b.n) {
		return pubAck{}, fmt.Errorf("the server acknowledged batch %q of %d messages, not %q of %d", ack.Batch, ack.Count, b.id, b.n)
	}
	return ack, err
}
