package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/events"
)

// messageLines is a hand-written log of n user messages, each text size bytes long, with a
// blank line after every tenth.
func messageLines(n, size int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"turn":%d,"type":"user_message","data":{"text":"message %d %s"}}`+"\n", 1+i/50, i, strings.Repeat("x", size))
		if i%10 == 0 {
			b.WriteString("  \n")
		}
	}
	return b.String()
}

// failingReader gives its content, then err.
type failingReader struct {
	r   io.Reader
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if errors.Is(err, io.EOF) {
		return n, f.err
	}
	return n, err
}

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n int
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestParseAhead reads files of lines through parseAhead and through fileLines, one line after
// the other, and requires the same lines and the same error in the same place: chunks of lines
// parsed side by side come back in the file's order, and the first line that does not parse
// (or the reader's error) ends them. Left early, parseAhead stops reading the file.
func TestParseAhead(t *testing.T) {
	broken := errors.New("disk gone")
	tests := []struct {
		name    string
		content string
		readErr error
		stop    int // leave the loop after this many lines (0: read all)
	}{
		{"empty", "", nil, 0},
		{"blank lines only", "\n  \n\n", nil, 0},
		{"less than a chunk", messageLines(5, 10), nil, 0},
		{"many chunks and a tail", messageLines(10*readAheadBatch+7, 10), nil, 0},
		{"chunks that end at their bytes", messageLines(300, 40_000), nil, 0},
		{"a line that does not parse, late", messageLines(3*readAheadBatch, 10) + "{\"type\":\"user_message\",\"data\":{\"txt\":1}}\n" + messageLines(600, 10), nil, 0},
		{"a line that does not parse, first", "not json\n" + messageLines(600, 10), nil, 0},
		{"the reader fails after lines", messageLines(2*readAheadBatch+3, 10), broken, 0},
		{"left early", messageLines(60*readAheadBatch, 10), nil, readAheadBatch + 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			open := func() io.Reader {
				var r io.Reader = strings.NewReader(tt.content)
				if tt.readErr != nil {
					r = &failingReader{r, tt.readErr}
				}
				return r
			}
			want, wantErr := collectLines(fileLines(events.NewLineReader(open(), "log.jsonl"), nil), tt.stop)
			counted := &countingReader{r: open()}
			got, gotErr := collectLines(parseAhead(events.NewLineReader(counted, "log.jsonl"), nil), tt.stop)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("error %v, want %v", gotErr, wantErr)
			}
			if len(got) != len(want) || !reflect.DeepEqual(got, want) {
				t.Fatalf("%d lines, want %d (or they differ)", len(got), len(want))
			}
			// Read after parseAhead returned, counted.n races with a reader still reading
			// (go test -race); it must be the lines handed out and a few chunks ahead (at most
			// 22 of the file's 60), not the file.
			if read := counted.n; tt.stop > 0 && read > len(tt.content)/2 {
				t.Errorf("read %d of %d bytes after leaving at line %d", read, len(tt.content), tt.stop)
			}
		})
	}
}

// TestParseAheadLinesOwnTheirBytes reads the repository's exports (hashed event lines kept
// verbatim, decisions, blob lines, closing lines) over and over through parseAhead, whose
// chunks' buffers are reused for later lines, and requires every line to be the one read one
// line after the other: a line that kept bytes of its chunk would read later lines' bytes.
func TestParseAheadLinesOwnTheirBytes(t *testing.T) {
	var content strings.Builder
	for i := range 40 {
		for _, name := range []string{"monorepo", "multi-root", "remote", "toggle", "cursor-globs"} {
			b, err := os.ReadFile(filepath.Join("..", "testdata", "logs", name+".jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			content.Write(b)
			content.WriteString(strings.Repeat("\n", i%3)) // the chunks' bounds move from one round to the next
		}
	}
	want, wantErr := collectLines(fileLines(events.NewLineReader(strings.NewReader(content.String()), "logs.jsonl"), nil), 0)
	if wantErr != nil {
		t.Fatal(wantErr)
	}
	// Read without sums, then as an import's first pass and its second, which reparses every
	// chunk (their sums are the first pass's).
	sums := newChunkSums("logs.jsonl")
	for _, pass := range []struct {
		name string
		sums *chunkSums
	}{{"without sums", nil}, {"first pass", &sums}, {"second pass", &sums}} {
		t.Run(pass.name, func(t *testing.T) {
			if pass.name == "second pass" {
				sums.again = true
			}
			got, err := collectLines(parseAhead(events.NewLineReader(strings.NewReader(content.String()), "logs.jsonl"), pass.sums), 0)
			if err != nil {
				t.Fatal(err)
			}
			sameLines(t, got, want)
		})
	}
	if len(sums.sums) < 2 || sums.reparsed != len(sums.sums) {
		t.Errorf("the first pass took %d sums and the second reparsed %d chunks; want every chunk of many", len(sums.sums), sums.reparsed)
	}
}

// sameLines requires got to be want, line by line, with lines of every kind among them.
func sameLines(t *testing.T, got, want []events.Line) {
	t.Helper()
	kinds := map[string]int{}
	for i, l := range got {
		switch {
		case l.Blob != nil:
			kinds["blob"]++
		case l.End != nil:
			kinds["end"]++
		case l.HasHash && l.Event.Type == events.TypeDecision:
			kinds["decision"]++
		case l.HasHash:
			kinds["hashed"]++
		}
		if !reflect.DeepEqual(l, want[i]) {
			t.Fatalf("line %d differs from the line read one after the other", l.No)
		}
	}
	if len(got) != len(want) || kinds["blob"] == 0 || kinds["end"] == 0 || kinds["decision"] == 0 || kinds["hashed"] == 0 {
		t.Fatalf("%d lines, want %d; kinds %v, want each of blob, end, decision and hashed", len(got), len(want), kinds)
	}
}

// collectLines is the lines of seq up to its error, or its first stop lines (0: all).
func collectLines(seq iter.Seq2[events.Line, error], stop int) ([]events.Line, error) {
	var out []events.Line
	for l, err := range seq {
		if err != nil {
			return out, err
		}
		out = append(out, l)
		if len(out) == stop {
			break
		}
	}
	return out, nil
}

// The second pass of an import reparses every chunk of lines the first pass checked, whether
// the first read the file ahead (a file) or one line after the other (a pipe): the chunks are
// the same either way. It takes nothing else: a file changed, cut or grown in between fails at
// the first chunk that differs, or at its end, after the chunks before it.
func TestImportReparsesWhatItChecked(t *testing.T) {
	path, _ := writeBigExport(t, 3<<20) // about 2,500 events: ten chunks
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// cut is data up to the end of its line n.
	cut := func(n int) []byte {
		at := 0
		for range n {
			at += bytes.IndexByte(data[at:], '\n') + 1
		}
		return data[:at]
	}
	changed := withLineChanged(t, data, 1500)
	grown := append(append([]byte(nil), data...), cut(3)...) // three more lines (of another export)
	for _, c := range []struct {
		name string
		in   io.Reader
		// want are the chunks the second pass reparses, given the chunks the first one read;
		// fails is what its error says, "" for none.
		want  func(chunks int) int
		fails string
	}{
		{"a file", bytes.NewReader(data), func(n int) int { return n }, ""},
		{"a pipe", nonSeeker{bytes.NewReader(data)}, func(n int) int { return n }, ""},
		{"a file changed at line 1500", &rewritten{r: bytes.NewReader(data), again: changed}, func(int) int { return 1499 / readAheadBatch },
			"big.jsonl:1281: the file is not as the first read checked it: the lines from this one on differ (the file changed while it was imported"},
		{"a file cut after line 1280", &rewritten{r: bytes.NewReader(data), again: cut(1280)}, func(int) int { return 1280 / readAheadBatch },
			"big.jsonl: the file is not as the first read checked it: it ends before the lines the first read checked do"},
		{"a file grown by three lines", &rewritten{r: bytes.NewReader(data), again: grown}, func(n int) int { return n - 1 },
			"the file is not as the first read checked it: the lines from this one on differ (the file changed while it was imported"},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, err := readTwice(c.in, func() (*os.File, error) { return os.CreateTemp(t.TempDir(), "copy-*.jsonl") })
			if err != nil {
				t.Fatal(err)
			}
			defer src.close()
			im := newImporter(context.Background(), openDB(t), "big.jsonl", ImportOptions{})
			defer im.stop()
			err = im.run(src)
			chunks := len(im.sums.sums)
			if chunks < 5 || im.sums.reparsed != c.want(chunks) {
				t.Errorf("the first pass summed %d chunks, the second reparsed %d; want %d", chunks, im.sums.reparsed, c.want(chunks))
			}
			if c.fails == "" && err != nil || c.fails != "" && (err == nil || !strings.Contains(err.Error(), c.fails)) {
				t.Errorf("import: %v; want an error saying %q", err, c.fails)
			}
		})
	}
}

// A pipe whose writer has sent a line that does not parse, and is still writing: the import
// fails at that line without waiting for more (it would wait as long as the writer does).
func TestImportFromAPipeStopsAtTheBadLine(t *testing.T) {
	in := &stalledPipe{r: strings.NewReader("not json\n")}
	_, err := Import(context.Background(), openDB(t), in, "pipe", ImportOptions{
		CopyTo: func() (*os.File, error) { return os.CreateTemp(t.TempDir(), "copy-*.jsonl") }})
	if err == nil || !strings.Contains(err.Error(), "pipe:1:") {
		t.Fatalf("err = %v, want line 1's error", err)
	}
	if in.readPast {
		t.Errorf("the import read the pipe past the line that failed: it would have waited for the writer")
	}
}

// stalledPipe is a pipe that has delivered what r holds and whose writer is still writing: a
// read past it is noted (readPast) and ends the input, where a real pipe would block.
type stalledPipe struct {
	r        *strings.Reader
	readPast bool
}

func (p *stalledPipe) Read(b []byte) (int, error) {
	if p.r.Len() == 0 {
		p.readPast = true
		return 0, io.EOF
	}
	return p.r.Read(b)
}

// A read that fails in the second pass is that error, at a chunk's bound or within a chunk, not
// a change of the file (and no chunk without lines is taken for one).
func TestImportSecondReadFails(t *testing.T) {
	path, _ := writeBigExport(t, 3<<20)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	broken := errors.New("input/output error")
	for _, lines := range []int{2 * readAheadBatch, 2*readAheadBatch + 44} {
		t.Run(fmt.Sprintf("after %d lines", lines), func(t *testing.T) {
			at := 0
			for range lines {
				at += bytes.IndexByte(data[at:], '\n') + 1
			}
			in := &failsAgain{r: bytes.NewReader(data), after: int64(at), err: broken}
			_, err := Import(context.Background(), openDB(t), in, "big.jsonl", ImportOptions{})
			if !errors.Is(err, broken) || errors.Is(err, errChanged) {
				t.Errorf("err = %v, want the read's error", err)
			}
		})
	}
}

// failsAgain reads r, and after it is rewound, fails with err once after bytes are read.
type failsAgain struct {
	r      *bytes.Reader
	after  int64
	err    error
	second bool
}

func (f *failsAgain) Read(p []byte) (int, error) {
	if !f.second {
		return f.r.Read(p)
	}
	pos, _ := f.r.Seek(0, io.SeekCurrent)
	if pos >= f.after {
		return 0, f.err
	}
	return f.r.Read(p[:min(int64(len(p)), f.after-pos)])
}

func (f *failsAgain) Seek(off int64, whence int) (int64, error) {
	if whence == io.SeekStart && off == 0 {
		if pos, _ := f.r.Seek(0, io.SeekCurrent); pos > 0 {
			f.second = true
		}
	}
	return f.r.Seek(off, whence)
}

// A task all read gives its last batch to the writer before the next task's lines are read:
// when the file changes in a later task, the tasks before it are written whole, as the error
// says, though no line of that later task is new to the database. A task all read keeps none of
// its ids or decisions.
func TestImportWritesEachTaskBeforeTheNext(t *testing.T) {
	path, _ := writeBigExport(t, 1<<20) // about 800 events
	big, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db := openDB(t)
	if _, err := Import(context.Background(), db, bytes.NewReader(big), "big.jsonl", ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	small := exportedTask(t)
	file := append(append([]byte(nil), small...), big...)
	again := append(append([]byte(nil), small...), withLineChanged(t, big, 500)...)
	src, err := readTwice(&rewritten{r: bytes.NewReader(file), again: again}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer src.close()
	im := newImporter(context.Background(), db, "f.jsonl", ImportOptions{})
	defer im.stop()
	err = im.run(src)
	if !errors.Is(err, errChanged) || !strings.Contains(err.Error(), "the file changed while it was imported; the tasks before it in the file are written whole") {
		t.Fatalf("err = %v", err)
	}
	first := im.order[0]
	if h, err := db.Head(first.id); err != nil || h.Seq != first.n {
		t.Errorf("the first task's head: %+v, %v; want all its %d events written", h, err, first.n)
	}
	if first.ids != nil || first.decisions.full != nil || first.state != nil {
		t.Errorf("the first task, all read, still holds its ids (%d), decisions or fold", len(first.ids))
	}
}
