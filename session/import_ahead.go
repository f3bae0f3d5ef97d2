package session

import (
	"github.com/tasklog/tasklog/events"
)

// An import reads its lines ahead, on a goroutine of its own, in chunks of at most this many
// lines or bytes of line data; at most aheadChunks chunks wait for the checks, so what the
// reading ahead holds is bounded whatever the file's size.
const (
	aheadLines  = 256
	aheadBytes  = 1 << 20
	aheadChunks = 2
)

// lineSource is where a pass takes its lines: events.LineReader, or linesAhead over one.
type lineSource interface {
	Next() (events.Line, error)
}

// lineChunk is lines read ahead, in the order of the file, and what ended them: the error of
// the line after the last one (io.EOF at the end of the file), or nil when more follow.
type lineChunk struct {
	lines []events.Line
	err   error
}

// linesAhead reads and parses the lines of a file a few chunks ahead of the checks that take
// them, so that on a machine with a free core parsing the lines, checking them and writing them
// overlap. close stops the reading and waits for it: the file is not read after close returns.
type linesAhead struct {
	chunks chan lineChunk
	stop   chan struct{}
	done   chan struct{}
	cur    lineChunk
	i      int
}

// readLinesAhead starts reading lr ahead.
func readLinesAhead(lr *events.LineReader) *linesAhead {
	la := &linesAhead{chunks: make(chan lineChunk, aheadChunks), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(la.done)
		for {
			select {
			case <-la.stop:
				return
			default:
			}
			c := lineChunk{lines: make([]events.Line, 0, aheadLines)}
			for size := 0; c.err == nil && len(c.lines) < aheadLines && size < aheadBytes; {
				l, err := lr.Next()
				if err != nil {
					c.err = err
					break
				}
				c.lines = append(c.lines, l)
				size += lineBytes(l)
			}
			select {
			case la.chunks <- c:
			case <-la.stop:
				return
			}
			if c.err != nil {
				return
			}
		}
	}()
	return la
}

// lineBytes is about what a parsed line holds.
func lineBytes(l events.Line) int {
	n := 256 + len(l.Event.Data)
	if l.Blob != nil {
		n += len(l.Blob.Content)
	}
	return n
}

// Next returns the next line, or the error that ended the lines (io.EOF after the last one).
func (la *linesAhead) Next() (events.Line, error) {
	for la.i == len(la.cur.lines) {
		if la.cur.err != nil {
			return events.Line{}, la.cur.err
		}
		la.cur, la.i = <-la.chunks, 0
	}
	l := la.cur.lines[la.i]
	la.cur.lines[la.i] = events.Line{} // the checks keep what they need of it
	la.i++
	return l, nil
}

// close stops the reading ahead and waits until it has stopped.
func (la *linesAhead) close() {
	close(la.stop)
	<-la.done
}
