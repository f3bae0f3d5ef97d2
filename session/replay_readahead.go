package session

import (
	"iter"
	"sync"

	"github.com/tasklog/tasklog/events"
)

// The reader hands over at most readAheadBatch values, or readAheadBytes of their size, at a
// time, and may be readAheadDepth batches ahead of the loop: a few hundred kilobytes of events
// or lines, and a few megabytes at most, whatever the log's size.
const (
	readAheadBatch = 256
	readAheadBytes = 1 << 20
	readAheadDepth = 2
)

// readResult is one step of a stream.
type readResult[T any] struct {
	v   T
	err error
}

// readAhead runs the stream seq on a goroutine of its own, a few batches ahead of the loop that
// ranges over the result, so that reading and decoding the log (or the lines of a file)
// overlaps folding and checking it. size is about how many bytes a value holds. The values and
// errors come in the same order; an error ends the stream as it does seq. Leaving the loop early
// stops the reader before readAhead's iterator returns, so seq's source is not read after it.
// The batches are reused, so the loop must not keep a pointer to the value it is given (a copy
// is fine).
func readAhead[T any](seq iter.Seq2[T, error], size func(T) int) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		full := make(chan []readResult[T], readAheadDepth)
		free := make(chan []readResult[T], readAheadDepth+2)
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(full)
			batch := make([]readResult[T], 0, readAheadBatch)
			bytes := 0
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
					batch = make([]readResult[T], 0, readAheadBatch)
				}
				bytes = 0
				return true
			}
			for v, err := range seq {
				batch = append(batch, readResult[T]{v, err})
				bytes += size(v)
				if (len(batch) == cap(batch) || bytes >= readAheadBytes || err != nil) && !send() {
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
				if !yield(r.v, r.err) {
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

// eventBytes is about what an event read ahead holds.
func eventBytes(ev events.Event) int { return 128 + len(ev.Data) }
