package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxFrame bounds one JSON-RPC message on stdin, its newline included: the SDK's own bound.
// A longer line is answered with an error and the rest of it discarded unread into memory.
const maxFrame = sdk.DefaultMaxLineLength

// idScan is how much of an over-long line is kept to find the request's id in.
const idScan = 64 << 10

// The SDK's stdio transport ends the session, and with it the server, on the first line that
// is not a JSON-RPC message or is longer than its bound; requests sent before it then get no
// answer. frames stands between stdin and the SDK: it hands the SDK only well-formed
// messages, one a line, and answers every other line itself with a JSON-RPC error, so that one
// bad frame costs one error reply and the server goes on.

// lockedWriter serializes whole writes: the SDK writes each message in one Write, and the
// errors frames answers must not land in the middle of one. Each response written settles
// its request in pending.
type lockedWriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending pendingCalls
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n, err := l.w.Write(p)
	if msg, derr := jsonrpc.DecodeMessage(bytes.TrimSpace(p)); derr == nil {
		if r, ok := msg.(*jsonrpc.Response); ok {
			l.pending.settle(r.ID)
		}
	}
	return n, err
}

// pendingCalls counts the requests handed to the SDK that it has not answered yet, so that the
// end of stdin ends the session only once every request read before it has its answer (a
// client may write its requests and close its end at once).
type pendingCalls struct {
	mu    sync.Mutex
	ids   map[string]bool
	empty chan struct{} // closed while nothing is pending; nil when never waited on
}

func idKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

func (p *pendingCalls) add(id jsonrpc.ID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ids == nil {
		p.ids = map[string]bool{}
	}
	p.ids[idKey(id)] = true
}

func (p *pendingCalls) settle(id jsonrpc.ID) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.ids, idKey(id))
	if len(p.ids) == 0 && p.empty != nil {
		close(p.empty)
		p.empty = nil
	}
}

// wait returns once no request is pending, or after d.
func (p *pendingCalls) wait(d time.Duration) {
	p.mu.Lock()
	if len(p.ids) == 0 {
		p.mu.Unlock()
		return
	}
	if p.empty == nil {
		p.empty = make(chan struct{})
	}
	ch := p.empty
	p.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(d):
	}
}

// drainWait bounds how long the end of stdin waits for the answers still owed: a request the
// SDK never answers must not keep the server up for good.
const drainWait = 5 * time.Minute

// Close leaves the writer open: it is the process's stdout.
func (l *lockedWriter) Close() error { return nil }

// frames returns what the SDK should read instead of r: the well-formed messages of r, each
// on its line. The other lines are answered on w. Reading r ends at its end (EOF for the SDK,
// once every request handed to it has been answered on w) or when the SDK closes the returned
// reader.
func frames(r io.Reader, w *lockedWriter, max int) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		err := copyFrames(r, &pendingWriter{pw, &w.pending}, w, max)
		if err == nil {
			w.pending.wait(drainWait)
		}
		pw.CloseWithError(err)
	}()
	return pr
}

// pendingWriter hands messages to the SDK, counting the requests among them as pending.
type pendingWriter struct {
	w       io.Writer
	pending *pendingCalls
}

func (p *pendingWriter) Write(line []byte) (int, error) {
	if msg, err := jsonrpc.DecodeMessage(bytes.TrimSpace(line)); err == nil {
		if r, ok := msg.(*jsonrpc.Request); ok && r.IsCall() {
			p.pending.add(r.ID)
		}
	}
	return p.w.Write(line)
}

// copyFrames copies the well-formed messages of r to to, one a line, answering the others on
// answers. It returns nil at the end of r.
func copyFrames(r io.Reader, to, answers io.Writer, max int) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var line, head []byte
	over := false
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case over:
		case len(line)+len(chunk) > max:
			over = true
			head = append([]byte(nil), line[:min(len(line), idScan)]...)
			if room := idScan - len(head); room > 0 {
				head = append(head, chunk[:min(len(chunk), room)]...)
			}
			line = nil
		default:
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		var ferr error
		if over {
			ferr = answerError(answers, requestID(head), jsonrpc.CodeInvalidRequest,
				"the message is longer than the "+sizeText(max)+" one message may hold; it was discarded")
			over, head = false, nil
		} else {
			ferr = passFrame(line, to, answers)
		}
		if cap(line) > 1<<20 {
			line = nil // what a large message took goes back
		} else {
			line = line[:0]
		}
		if ferr != nil {
			return ferr
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// passFrame hands one line to the SDK when it is a JSON-RPC message (or a batch of them) and
// answers it with an error otherwise. Blank lines are skipped, as the SDK skips them.
func passFrame(line []byte, to, answers io.Writer) error {
	msg := bytes.TrimSpace(line)
	if len(msg) == 0 {
		return nil
	}
	if !json.Valid(msg) {
		return answerError(answers, nil, jsonrpc.CodeParseError, "the line is not JSON")
	}
	if id, why := invalidMessage(msg); why != "" {
		return answerError(answers, id, jsonrpc.CodeInvalidRequest, why)
	}
	if _, err := to.Write(append(msg, '\n')); err != nil {
		return err
	}
	return nil
}

// invalidMessage says why msg, valid JSON, is not a JSON-RPC message or batch the SDK reads
// (and the request's id, when it has one); "" when it is one.
func invalidMessage(msg []byte) (id json.RawMessage, why string) {
	if msg[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(msg, &batch); err != nil || len(batch) == 0 {
			return nil, "an empty batch"
		}
		for _, m := range batch {
			if why, _ := notAMessage(m); why != "" {
				return nil, "a message of the batch is not a JSON-RPC 2.0 message: " + why
			}
		}
		return nil, ""
	}
	if why, response := notAMessage(msg); why != "" {
		if response {
			return nil, "not a JSON-RPC 2.0 message: " + why // a response's id is the other side's: never answered
		}
		return requestID(msg), "not a JSON-RPC 2.0 message: " + why
	}
	return nil, ""
}

// notAMessage says why msg is not a JSON-RPC 2.0 request, notification or response ("" when it
// is one), and whether it is shaped as a response (an id and no method), whose id is not one of
// the client's requests. The SDK reads an object with an id and no method as a response even
// when it has neither a result nor an error, and drops it unanswered; such an object is no
// response. An "error" of null is taken as none, as lenient clients write it.
func notAMessage(msg []byte) (why string, response bool) {
	m, err := jsonrpc.DecodeMessage(msg)
	if err != nil {
		return err.Error(), false
	}
	if _, ok := m.(*jsonrpc.Response); !ok {
		return "", false
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(msg, &members); err != nil {
		return err.Error(), true
	}
	_, result := members["result"]
	e, failed := members["error"]
	failed = failed && string(bytes.TrimSpace(e)) != "null"
	switch {
	case !result && !failed:
		return "it has an id but neither a method, a result nor an error", true
	case result && failed:
		return "a response has a result or an error, not both", true
	}
	return "", true
}

// requestID finds the "id" member of a JSON object that may be cut short; nil when there is
// none before the cut, or it is not a string or a number.
func requestID(msg []byte) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		if key == "id" {
			switch v, err := dec.Token(); v.(type) {
			case json.Number:
				if err == nil {
					return json.RawMessage(v.(json.Number))
				}
			case string:
				if err == nil {
					raw, _ := json.Marshal(v)
					return raw
				}
			}
			return nil
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil
		}
	}
	return nil
}

// answerError writes a JSON-RPC error response for id (null when nil).
func answerError(w io.Writer, id json.RawMessage, code int, message string) error {
	if id == nil {
		id = json.RawMessage("null")
	}
	data, err := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   jsonrpc.Error   `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: int64(code), Message: message}})
	if err != nil {
		return err
	}
	_, err = w.Write(append(data, '\n'))
	return err
}

// sizeText writes a bound in MiB when it is whole MiB.
func sizeText(n int) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}
