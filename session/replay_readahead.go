package session

import (
	"iter"
	"sync"

	"github.com/tasklog/tasklog/events"
)

// readAheadBatch is how many events the reader hands over at a time, and readAheadDepth how
// many batches it may be ahead of the fold: a few hundred kilobytes of envelopes at most.
const (
	readAheadBatch = 256
	readAheadDepth = 2
)

// readResult is one step of an event stream.
type readResult struct {
	ev  events.Event
	err error
}

// readAhead runs the stream evs on a goroutine of its own, a few batches ahead of the loop that
// ranges over the result, so that reading and decoding the log overlaps folding it. The events
// and errors come in the same order; an error ends the stream as it does evs. Leaving the loop
// early stops the reader before readAhead's iterator returns. The batches are reused, so the
// loop must not keep a pointer to the event it is given (a copy is fine).
func readAhead(evs iter.Seq2[events.Event, error]) iter.Seq2[events.Event, error] {
	return func(yield func(events.Event, error) bool) {
		full := make(chan []readResult, readAheadDepth)
		free := make(chan []readResult, readAheadDepth+2)
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(full)
			batch := make([]readResult, 0, readAheadBatch)
			send := func() bool {
				select {
				case full <- batch:
				case <-done:
					return false
				}
				select {
				case batch = <-free:
					batch = batch[:0]
				default:
					batch = make([]readResult, 0, readAheadBatch)
				}
				return true
			}
			for ev, err := range evs {
				batch = append(batch, readResult{ev, err})
				if (len(batch) == cap(batch) || err != nil) && !send() {
					return
				}
				if err != nil {
					return
				}
			}
			if len(batch) > 0 {
				send()
			}
		}()
		defer wg.Wait()
		defer close(done)
		for batch := range full {
			for _, r := range batch {
				if !yield(r.ev, r.err) {
					return
				}
			}
			clear(batch) // keep no chunk alive through a free batch
			select {
			case free <- batch:
			default:
			}
		}
	}
}
