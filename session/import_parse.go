package session

import (
	"encoding/binary"
	"errors"
	"hash/maphash"
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
	// index is the chunk's place among the file's chunks, and sum the hash of its lines and
	// their numbers, taken by the worker that parses it (see chunkSums).
	index int
	sum   uint64
	// mib is the chunk's share of the bytes read ahead (see parseAhead), in MiB.
	mib int
}

// chunkSums are the sums of the chunks of lines an import's first pass read, in the file's
// order. The first pass records them; the second, with again set, parses a chunk whose sum is
// the one the first pass took at its place with ReparseLine, without checking again what only
// depends on the lines' bytes, which the first pass checked (the strict JSON of each line, its
// payload's schema, its hash). A chunk whose sum differs (the file changed in between) is parsed
// and checked as the first pass did. The chunks' bounds depend only on the lines, so the same
// file gives the same chunks twice.
//
// A sum is a 64-bit hash/maphash of the lines with a seed drawn for the import: nobody who
// changes the file between the passes knows the seed, so no change can be made to keep a sum.
// The sums cost 8 bytes for every readAheadBatch lines or readAheadBytes of them.
type chunkSums struct {
	seed  maphash.Seed
	again bool
	sums  []uint64
}

func newChunkSums() chunkSums { return chunkSums{seed: maphash.MakeSeed()} }

// checked reports whether the chunk's lines are, byte for byte and number for number, those the
// first pass parsed at its place.
func (cs *chunkSums) checked(c *lineChunk) bool {
	return cs.again && c.index < len(cs.sums) && cs.sums[c.index] == c.sum
}

// record keeps, in the first pass, the sum of a chunk whose lines were all handed out.
func (cs *chunkSums) record(c *lineChunk) {
	if cs != nil && !cs.again {
		cs.sums = append(cs.sums, c.sum)
	}
}

// sumLines is the hash of a chunk's lines with seed: their bytes, where each ends and its
// number.
func (c *lineChunk) sumLines(seed maphash.Seed) uint64 {
	var h maphash.Hash
	h.SetSeed(seed)
	h.Write(c.buf)
	var b [16]byte
	for i, end := range c.ends {
		binary.LittleEndian.PutUint64(b[:8], uint64(end))
		binary.LittleEndian.PutUint64(b[8:], uint64(c.nos[i]))
		h.Write(b[:])
	}
	return h.Sum64()
}

// parseAhead ranges over the lines lr reads, as fileLines does, with the reading and the
// parsing on goroutines of their own: one reads chunks of lines (readAheadBatch lines, or fewer
// once they pass readAheadBytes), and workers, one a processor, parse the chunks side by side.
// The lines come in the file's order, and the first error ends them as it does fileLines (a line
// that does not parse, or the reader's own error). The chunks ahead of the loop hold at most
// aheadMiB(workers) MiB of lines between them, or a single chunk of one line longer than that:
// a few megabytes, whatever the file's size. Leaving the loop early stops the reader and the
// workers before parseAhead's iterator returns, so the file is not read after it. With sums,
// each chunk's sum is recorded or, in a second pass, compared (see chunkSums).
func parseAhead(lr *events.LineReader, sums *chunkSums) iter.Seq2[events.Line, error] {
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
			for index := 0; ; index++ {
				select {
				case <-done:
					return
				default:
				}
				c := readChunk(lr, free)
				if len(c.ends) == 0 && c.err == nil {
					return
				}
				c.index = index
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
					c.parse(lr, done, sums)
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
			sums.record(c)
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
// when stop is closed: nobody waits for the lines any more. With sums, it takes the chunk's
// sum first, and reparses the lines of a chunk the first pass parsed (see chunkSums).
func (c *lineChunk) parse(lr *events.LineReader, stop chan struct{}, sums *chunkSums) {
	defer close(c.done)
	parse := lr.Parse
	if sums != nil {
		c.sum = c.sumLines(sums.seed)
		if sums.checked(c) {
			parse = lr.Reparse
		}
	}
	c.lines = make([]readResult[events.Line], 0, len(c.ends))
	start := 0
	for i, end := range c.ends {
		select {
		case <-stop:
			return
		default:
		}
		l, err := parse(c.buf[start:end], c.nos[i])
		c.lines = append(c.lines, readResult[events.Line]{l, err})
		if err != nil {
			return
		}
		start = end
	}
}
