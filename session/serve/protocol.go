// Package serve is tasklog's resident server and its protocol: one process per database owns
// the bbolt file and the open agent sessions, and answers hooks and runtimes in any language
// over a Unix socket beside the database. Messages are JSON objects, one per line; each request
// carries an id its response echoes. The server is a thin shell over package session: every
// operation is a session call (OpenAgent, RecordHook, Decide, Deliver, Explain).
package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/tasklog/tasklog/session/serve/wire"
)

// Version is the protocol version. A client states the version it speaks in its first message
// (hello); the server refuses any other with CodeVersion.
const Version = wire.Version

// MaxMessage is the most bytes one message may hold, its newline included (wire.MaxMessage).
const MaxMessage = wire.MaxMessage

// The operations a request names in "op".
const (
	OpHello    = "hello"    // first message: {"version":1,"client":"name"}
	OpHook     = "hook"     // {"agent":"claude-code","payload":{…},"again":false}: record, decide, deliver; reply
	OpOpen     = "open"     // {"agent":"pi","session":"…"} or {"task":"uuid"}, "roots", "cwd", "os"
	OpRecord   = "record"   // {"task":…,"events":[{"key":…,"trigger":true,"type":…,"data":{…}}]}
	OpDecide   = "decide"   // {"task":…}
	OpDeliver  = "deliver"  // {"task":…,"hook":…,"channel":…,"key":…}: decide and deliver
	OpExplain  = "explain"  // {"task":…,"turn":N,"rule":"id or name"}
	OpClose    = "close"    // {"task":…}: store the session's snapshots and forget it
	OpShutdown = "shutdown" // finish what was accepted and exit
)

// Error codes: what went wrong, for a program to act on. Message says it for a person.
const (
	CodeBadRequest   = "bad_request"   // not JSON, missing or wrong fields, unknown op
	CodeTooLarge     = "too_large"     // longer than MaxMessage; the connection is closed
	CodeVersion      = "version"       // hello with a version this server does not speak
	CodeNotFound     = "not_found"     // no such task, turn or rule
	CodeConflict     = "conflict"      // the log changed under the request (retry), or it disagrees
	CodeShuttingDown = "shutting_down" // the server is exiting: go to the database directly
	CodeTimeout      = "timeout"       // the request's deadline passed
	CodeInternal     = "internal"      // anything else: the database failed, a bug
	CodeBusy         = "busy"          // at a bound of connections or bytes: go to the database directly
)

// Request is one message from a client. Op selects the fields that matter; unknown fields are
// refused.
type Request struct {
	ID int64  `json:"id"`
	Op string `json:"op"`

	// hello
	Version int    `json:"version,omitempty"`
	Client  string `json:"client,omitempty"`

	// DeadlineMS is how long the client waits for the response, in milliseconds; the server
	// gives up on the request after it (0: no deadline).
	DeadlineMS int64 `json:"deadline_ms,omitempty"`

	// hook
	Agent   string          `json:"agent,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
	// Again: the hook is handled a second time because a server may have recorded its
	// delivery without the reply reaching the agent; the reply then carries that delivery
	// again (session.AgentSession.HookAgain).
	Again bool `json:"again,omitempty"`

	// open, and every task operation
	Task    string   `json:"task,omitempty"`
	Session string   `json:"session,omitempty"`
	Roots   []string `json:"roots,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	OS      string   `json:"os,omitempty"`

	// record
	Events []Record `json:"events,omitempty"`

	// deliver
	Hook    string `json:"hook,omitempty"`
	Channel string `json:"channel,omitempty"`
	Key     string `json:"key,omitempty"`

	// explain
	Turn int    `json:"turn,omitempty"`
	Rule string `json:"rule,omitempty"`
}

// Record is one event to record: a line of the JSON Lines authoring format (type, optional v,
// data) plus its idempotency key, and whether its first recording calls for a decision.
type Record struct {
	Key     string          `json:"key"`
	Trigger bool            `json:"trigger,omitempty"`
	Type    string          `json:"type"`
	V       int             `json:"v,omitempty"`
	Data    json.RawMessage `json:"data"`
}

// Response answers the request with the same id: Result on success, Error otherwise.
type Response struct {
	ID     int64           `json:"id"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// Error is a failed request: a code from the list above and a message.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *Error) Error() string { return e.Code + ": " + e.Message }

// Is makes errors.Is(err, &Error{Code: c}) match any error of code c.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Code == e.Code && (t.Message == "" || t.Message == e.Message)
}

// Sentinels for errors.Is on a client's errors.
var (
	ErrShuttingDown = &Error{Code: CodeShuttingDown}
	ErrNotFound     = &Error{Code: CodeNotFound}
	ErrTooLarge     = &Error{Code: CodeTooLarge}
	ErrBadRequest   = &Error{Code: CodeBadRequest}
)

// The results of the operations.
type (
	// HelloResult answers hello.
	HelloResult struct {
		Version int    `json:"version"`
		Server  string `json:"server"`
		PID     int    `json:"pid"`
		DB      string `json:"db"`
	}
	// HookResult answers hook: the reply to print for the agent, byte for byte.
	HookResult struct {
		Reply     string `json:"reply"`
		Task      string `json:"task"`
		Delivered bool   `json:"delivered,omitempty"`
	}
	// OpenResult answers open.
	OpenResult struct {
		Task    string `json:"task"`
		Version uint64 `json:"version"`
		Turn    int    `json:"turn"`
	}
	// RecordResult answers record: per event, whether this request wrote it (false: an event
	// with its key was in the log already), and the task's version after.
	RecordResult struct {
		Fresh   []bool `json:"fresh"`
		Version uint64 `json:"version"`
	}
	// DecideResult answers decide.
	DecideResult struct {
		Seq      uint64     `json:"seq"`
		Turn     int        `json:"turn"`
		Included []RuleInfo `json:"included"`
		Prompt   string     `json:"prompt"`
	}
	// RuleInfo names one rule of a decision or delivery.
	RuleInfo struct {
		ID   string `json:"id"`
		Name string `json:"name"`
		Path string `json:"path,omitempty"`
	}
	// DeliverResult answers deliver: the text to put in front of the model (empty: nothing new
	// to deliver), the decision it came from and the delivery event.
	DeliverResult struct {
		Decision uint64     `json:"decision"`
		Turn     int        `json:"turn"`
		Seq      uint64     `json:"seq,omitempty"`
		Rules    []RuleInfo `json:"rules,omitempty"`
		Text     string     `json:"text"`
	}
	// ExplainResult answers explain: the explanation's text and its main facts.
	ExplainResult struct {
		Turn       int    `json:"turn"`
		Seq        uint64 `json:"seq"`
		Included   bool   `json:"included"`
		Rule       string `json:"rule"`
		Deliveries int    `json:"deliveries"`
		Text       string `json:"text"`
	}
)

// errLineTooLong is readMessage's error for a message over the bound, errNoRoom for one its
// grow refused.
var (
	errLineTooLong = errors.New("message longer than the limit")
	errNoRoom      = errors.New("no room for the message")
)

// readMessage reads one newline-terminated message of at most limit bytes. grow, when set, is
// asked before the message's buffer grows to size bytes, and stops the read (errNoRoom) when
// it says no. A message cut off by the end of the stream is io.ErrUnexpectedEOF; a stream that
// ends between messages is io.EOF.
func readMessage(r *bufio.Reader, limit int, grow func(size int) bool) ([]byte, error) {
	var buf []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(buf)+len(chunk) > limit {
			return nil, errLineTooLong
		}
		if need := len(buf) + len(chunk); need > cap(buf) {
			// Grow by doubling, as append does, but asking grow for what is allocated.
			size := min(max(2*cap(buf), need), limit)
			if grow != nil && !grow(size) {
				return nil, errNoRoom
			}
			buf = append(make([]byte, 0, size), buf...)
		}
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			return bytes.TrimSpace(buf), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(bytes.TrimSpace(buf)) > 0:
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// writeMessage writes v as one line.
func writeMessage(w io.Writer, v any) error {
	b, err := marshal(v)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	_, err = w.Write(b)
	return err
}

// marshal encodes v on one line, ending in a newline, leaving <, > and & as they are (rule
// texts are full of them).
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeRequest decodes one request strictly.
func decodeRequest(msg []byte) (Request, error) {
	var req Request
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		return req, err
	}
	if dec.More() {
		return req, errors.New("more than one JSON value on the line")
	}
	return req, nil
}
