package session

import (
	"errors"
	"io"
	"iter"
	"runtime"
	"sync"

	"github.com/tasklog/tasklog/events"
)

// lineChunk is a run of a file's lines read ahead: their bytes, copied out of the reader's
// buffer, parsed by a worker (lines), and done closed once they are.
type lineChunk struct {
	buf   []byte
	ends  []int // where each line's bytes end in buf
	nos   []int // each line's number in the file
	err   error // the reader's error after the lines, if it stopped at one
	lines []readResult[events.Line]
	done  chan struct{}
	// mib is the chunk's share of the bytes read ahead (see parseAhead), in MiB.
	mib int
}

// parseAhead ranges over the lines lr reads, as fileLines does, with the reading and the
// parsing on goroutines of their own: one reads chunks of lines (readAheadBatch lines, or fewer
// once they pass readAheadBytes), and workers, one a processor, parse the chunks side by side.
// The lines come in the file's order, and the first error ends them as it does fileLines (a line
// that does not parse, or the reader's own error). The chunks ahead of the loop hold at most
// aheadMiB(workers) MiB of lines between them, or a single chunk of one line longer than that:
// a few megabytes, whatever the file's size. Leaving the loop early stops the reader and the
// workers before parseAhead's iterator returns, so the file is not read after it.
func parseAhead(lr *events.LineReader) iter.Seq2[events.Line, error] {
	return func(yield func(events.Line, error) bool) {
		workers := min(runtime.GOMAXPROCS(0), 4)
		budget := aheadMiB(workers)
		order := make(chan *lineChunk, budget) // the chunks in the file's order
		work := make(chan *lineChunk, budget)
		free := make(chan []byte, budget)
		// A token a MiB a chunk holds, taken by the reader, given back once its lines are yielded.
		tokens := make(chan struct{}, budget)
		done := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1 + workers)
		go func() {
			defer wg.Done()
			defer close(work)
			defer close(order)
			for {
				select {
				case <-done:
					return
				default:
				}
				c := readChunk(lr, free)
				if len(c.ends) == 0 && c.err == nil {
					return
				}
				c.mib = min(budget, max(1, (len(c.buf)+1<<20-1)>>20))
				for range c.mib {
					select {
					case tokens <- struct{}{}:
					case <-done:
						return
					}
				}
				select {
				case order <- c:
				case <-done:
					return
				}
				select {
				case work <- c:
				case <-done:
					return
				}
				if c.err != nil {
					return
				}
			}
		}()
		for range workers {
			go func() {
				defer wg.Done()
				for c := range work {
					c.parse(lr, done)
				}
			}()
		}
		defer wg.Wait()
		defer close(done)
		for c := range order {
			<-c.done
			for _, r := range c.lines {
				if !yield(r.v, r.err) || r.err != nil {
					return
				}
			}
			if c.err != nil {
				yield(events.Line{}, c.err)
				return
			}
			for range c.mib {
				<-tokens
			}
			if cap(c.buf) <= 2*readAheadBytes { // a buffer a long line grew is not kept
				select {
				case free <- c.buf[:0]:
				default:
				}
			}
		}
	}
}

// aheadMiB is how many MiB of lines parseAhead reads ahead of the loop with workers parsing:
// enough for every worker to have a chunk while the loop takes the next one.
func aheadMiB(workers int) int { return 2*workers + 2 }

// readChunk reads the next lines of lr into a chunk, in a buffer from free when there is one.
func readChunk(lr *events.LineReader, free chan []byte) *lineChunk {
	c := &lineChunk{done: make(chan struct{})}
	select {
	case c.buf = <-free:
	default:
	}
	for len(c.ends) < readAheadBatch && len(c.buf) < readAheadBytes {
		raw, no, err := lr.Raw()
		if err != nil {
			if !errors.Is(err, io.EOF) {
				c.err = err
			}
			break
		}
		c.buf = append(c.buf, raw...)
		c.ends = append(c.ends, len(c.buf))
		c.nos = append(c.nos, no)
	}
	return c
}

// parse parses the chunk's lines, up to the first that fails, and closes done. It gives up
// when stop is closed: nobody waits for the lines any more.
func (c *lineChunk) parse(lr *events.LineReader, stop chan struct{}) {
	defer close(c.done)
	c.lines = make([]readResult[events.Line], 0, len(c.ends))
	start := 0
	for i, end := range c.ends {
		select {
		case <-stop:
			return
		default:
		}
		l, err := lr.Parse(c.buf[start:end], c.nos[i])
		c.lines = append(c.lines, readResult[events.Line]{l, err})
		if err != nil {
			return
		}
		start = end
	}
}
