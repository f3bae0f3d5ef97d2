package session

import (
	"encoding/binary"
	"errors"
	"fmt"
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
	// index is the chunk's place among the file's chunks; sum is its lines' sum and reparsed
	// tells that they were reparsed, both set by the worker that parses it (see chunkSums).
	index    int
	sum      uint64
	reparsed bool
	// mib is the chunk's share of the bytes read ahead (see parseAhead), in MiB.
	mib int
}

// chunkFull reports whether a chunk of lines lines and size bytes takes no more: a chunk holds
// readAheadBatch lines, or fewer once they pass readAheadBytes.
func chunkFull(lines, size int) bool { return lines >= readAheadBatch || size >= readAheadBytes }

// chunkSums are the sums of the chunks of lines an import's first pass read, in the file's
// order. The first pass records them; the second, with again set, takes only the lines the
// first one checked: a chunk whose sum is the one the first pass took at its place is parsed
// with ReparseLine, without checking again what depends on the lines' bytes alone (the strict
// JSON of each line, its payload's schema, its hash); a chunk whose sum differs, or that the
// first pass did not read, is an error at its first line, and so is a file that ends before
// the chunks the first pass read (see short): the file changed in between. A chunk's bounds
// depend only on its lines (chunkFull), so the same file gives the same chunks twice, read
// ahead or one line after the other.
//
// A sum is a 64-bit hash/maphash of the lines' bytes, with a seed drawn for the import that
// never leaves the process: a file changed between the passes keeps a chunk's sum by a chance
// of one in 2^64, which nobody can aim for without the seed (maphash is not a cryptographic
// hash, and is not used as one: the seed is the secret). The sums cost 8 bytes a chunk.
type chunkSums struct {
	seed  maphash.Seed
	again bool
	sums  []uint64
	// reparsed counts the chunks the second pass reparsed.
	reparsed int
	// name is the file's, for the error of a chunk that changed.
	name string
}

// errChanged is the error of a second pass that meets lines the first did not check.
var errChanged = errors.New("the file is not as the first read checked it")

// short is the error of a second pass that read fewer chunks than the first, nil otherwise.
func (cs *chunkSums) short() error {
	if cs.reparsed < len(cs.sums) {
		return fmt.Errorf("%s: %w: it ends before the lines the first read checked do", cs.name, errChanged)
	}
	return nil
}

func newChunkSums(name string) chunkSums { return chunkSums{seed: maphash.MakeSeed(), name: name} }

// checked reports whether, in the second pass, the chunk at index with sum holds the bytes of
// the lines the first pass read there.
func (cs *chunkSums) checked(index int, sum uint64) bool {
	return cs.again && index < len(cs.sums) && cs.sums[index] == sum
}

// done takes note of a chunk whose lines were all handed out: its sum in the first pass,
// whether it was reparsed in the second.
func (cs *chunkSums) done(sum uint64, reparsed bool) {
	switch {
	case cs == nil:
	case !cs.again:
		cs.sums = append(cs.sums, sum)
	case reparsed:
		cs.reparsed++
	}
}

// lineSum sums the lines of a chunk as they are added: their bytes and where each ends.
type lineSum struct {
	h     maphash.Hash
	ends  []byte
	lines int
	size  int
}

func (ls *lineSum) start(seed maphash.Seed) {
	ls.h.SetSeed(seed) // resets it
	ls.ends, ls.lines, ls.size = ls.ends[:0], 0, 0
}

func (ls *lineSum) add(raw []byte) {
	ls.h.Write(raw)
	ls.lines++
	ls.size += len(raw)
	ls.ends = binary.LittleEndian.AppendUint64(ls.ends, uint64(ls.size))
}

func (ls *lineSum) sum() uint64 {
	ls.h.Write(ls.ends)
	return ls.h.Sum64()
}

// sumLines is the sum of a chunk's lines with seed.
func (c *lineChunk) sumLines(seed maphash.Seed) uint64 {
	var ls lineSum
	ls.start(seed)
	start := 0
	for _, end := range c.ends {
		ls.add(c.buf[start:end])
		start = end
	}
	return ls.sum()
}

// fileLines ranges over the lines lr reads, one after the other, reading no further than the
// line it hands out; io.EOF ends it, another error is its last step. With sums, it records the
// sums of the chunks parseAhead would have read (a first pass).
func fileLines(lr *events.LineReader, sums *chunkSums) iter.Seq2[events.Line, error] {
	return func(yield func(events.Line, error) bool) {
		var ls lineSum
		if sums != nil {
			ls.start(sums.seed)
		}
		for {
			raw, no, err := lr.Raw()
			if errors.Is(err, io.EOF) {
				if sums != nil && ls.lines > 0 {
					sums.done(ls.sum(), false)
				}
				return
			}
			if err != nil {
				yield(events.Line{}, err)
				return
			}
			l, err := lr.Parse(raw, no)
			if !yield(l, err) || err != nil {
				return
			}
			if sums == nil {
				continue
			}
			if ls.add(raw); chunkFull(ls.lines, ls.size) {
				sums.done(ls.sum(), false)
				ls.start(sums.seed)
			}
		}
	}
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
			sums.done(c.sum, c.reparsed)
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
	for !chunkFull(len(c.ends), len(c.buf)) {
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
	if sums != nil && len(c.ends) > 0 {
		c.sum = c.sumLines(sums.seed)
		c.reparsed = sums.checked(c.index, c.sum)
		switch {
		case c.reparsed:
			parse = lr.Reparse
		case sums.again && c.err != nil:
			// The read failed within the chunk: its error, which parseAhead hands on after the
			// chunk's lines (none here), is the fault, not a change.
			return
		case sums.again:
			err := fmt.Errorf("%s:%d: %w: the lines from this one on differ", sums.name, c.nos[0], errChanged)
			c.lines = []readResult[events.Line]{{err: err}}
			return
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
