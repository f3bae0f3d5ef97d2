package agentlog

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// maxLine is the longest JSONL record read; real transcripts hold single lines of several MB
// (whole files in tool results, base64 images).
const maxLine = 256 << 20

// lineReader reads JSONL records one line at a time without holding more than one line.
type lineReader struct {
	r   *bufio.Reader
	buf []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 64<<10)}
}

// next returns the next line without its newline, or io.EOF. The slice is valid until the next
// call.
func (l *lineReader) next() ([]byte, error) {
	l.buf = l.buf[:0]
	for {
		chunk, err := l.r.ReadSlice('\n')
		l.buf = append(l.buf, chunk...)
		if len(l.buf) > maxLine {
			return nil, fmt.Errorf("line longer than %d bytes", maxLine)
		}
		switch {
		case err == nil:
			return bytes.TrimRight(l.buf, "\r\n"), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			if len(l.buf) == 0 {
				return nil, io.EOF
			}
			return bytes.TrimRight(l.buf, "\r\n"), nil
		default:
			return nil, err
		}
	}
}

// firstLine returns the first non-empty line of r.
func firstLine(r io.Reader) ([]byte, error) {
	lr := newLineReader(r)
	for {
		line, err := lr.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, fmt.Errorf("%w: empty file", ErrFormat)
			}
			return nil, err
		}
		if len(bytes.TrimSpace(line)) > 0 {
			return line, nil
		}
	}
}

// arrayReader streams the elements of a top-level JSON array.
type arrayReader struct {
	dec *json.Decoder
	n   int
}

func newArrayReader(r io.Reader) (*arrayReader, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 64<<10))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("%w: not a JSON array: %v", ErrFormat, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("%w: not a JSON array", ErrFormat)
	}
	return &arrayReader{dec: dec}, nil
}

// next decodes the next element into a generic value; io.EOF after the last one.
func (a *arrayReader) next() (any, error) {
	if !a.dec.More() {
		if _, err := a.dec.Token(); err != nil {
			return nil, fmt.Errorf("record %d: %w: %v", a.n, ErrFormat, err)
		}
		return nil, io.EOF
	}
	var v any
	if err := a.dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("record %d: %w: %v", a.n, ErrFormat, err)
	}
	a.n++
	return v, nil
}

// obj is v as a JSON object, or nil.
func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// arr is v as a JSON array, or nil.
func arr(v any) []any {
	a, _ := v.([]any)
	return a
}

// get follows keys through nested objects.
func get(v any, keys ...string) any {
	for _, k := range keys {
		m := obj(v)
		if m == nil {
			return nil
		}
		v = m[k]
	}
	return v
}

// gets is get for a string value.
func gets(v any, keys ...string) string { return str(get(v, keys...)) }

// firstString is the first of v's keys holding a non-empty string.
func firstString(v any, keys ...string) string {
	for _, k := range keys {
		if s := gets(v, k); s != "" {
			return s
		}
	}
	return ""
}

// getb is get for a boolean value.
func getb(v any, keys ...string) bool {
	b, _ := get(v, keys...).(bool)
	return b
}

// decodeLine decodes one JSONL record into a generic value.
func decodeLine(line []byte) (any, error) { return decodeAny(line) }

// textOf concatenates the text of message content: a string, or blocks of type text (or
// input_text/output_text).
func textOf(content any) string {
	if s, ok := content.(string); ok {
		return s
	}
	var b bytes.Buffer
	for _, blk := range arr(content) {
		switch gets(blk, "type") {
		case "text", "input_text", "output_text":
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			b.WriteString(gets(blk, "text"))
		}
	}
	return b.String()
}
