package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/projections"
	"github.com/tasklog/tasklog/rules"
	"github.com/tasklog/tasklog/store"
)

// ScriptOptions configure RunScript.
type ScriptOptions struct {
	// Roots maps the roots the script's task_started names to file systems to read rules from.
	Roots func(recorded []string) ([]Root, error)
	// DefaultRoots are the roots of a script that has no task_started line.
	DefaultRoots []string
	// Home and Remote are the global and remote rules, as in Options.
	Home   fs.FS
	Remote []rules.RemoteRule
	// Now stamps lines that carry no time; nil means time.Now.
	Now func() time.Time
	// IDs makes event ids; nil means a new source on crypto/rand.
	IDs *events.IDSource
	// OnDecision, when set, sees every decision the script makes.
	OnDecision func(*Decision)
}

// RunScript drives a session from a script: JSON Lines in the authoring format, the events a
// runtime would record, with {"type":"turn"} lines where the runtime builds a prompt and calls
// Decide. A first task_started line gives the task id (its "task"), roots, runtime, OS and
// configuration. Errors name the script and line.
func RunScript(ctx context.Context, db store.Store, r io.Reader, name string, opts ScriptOptions) (*Session, error) {
	clock := opts.Now
	if clock == nil {
		clock = time.Now
	}
	var at time.Time // the time of the line being run, when it has one
	now := func() time.Time {
		if !at.IsZero() {
			return at
		}
		return clock()
	}
	lr := newScriptReader(r, name)
	first, err := lr.next()
	if err != nil {
		return nil, err
	}
	task, started := uuid.Nil, &events.TaskStarted{Roots: opts.DefaultRoots}
	if first.line != nil && first.line.Event.Type == events.TypeTaskStarted {
		p, err := first.line.Event.Payload()
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, first.no, err)
		}
		started = p.(*events.TaskStarted)
		task, at = first.line.Event.Task, first.line.Event.Time
		first = scriptLine{}
	}
	cfg, err := projections.DecodeConfig(started.Config)
	if err != nil {
		return nil, fmt.Errorf("%s: task_started config: %w", name, err)
	}
	roots := make([]Root, len(started.Roots))
	for i, p := range started.Roots {
		roots[i] = Root{Path: p}
	}
	if opts.Roots != nil {
		if roots, err = opts.Roots(started.Roots); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	s, err := Open(ctx, db, task, Options{Roots: roots, Home: opts.Home, Remote: opts.Remote,
		Runtime: started.Runtime, OS: started.OS, Config: &cfg, Now: now, IDs: opts.IDs})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if s.Version() > 1 {
		return nil, fmt.Errorf("%s: task %s already has %d events; a script records a new task", name, s.Task(), s.Version())
	}
	for l := first; ; {
		if l.no != 0 {
			if err := runLine(ctx, s, l, &at, opts.OnDecision); err != nil {
				return s, fmt.Errorf("%s:%d: %w", name, l.no, err)
			}
		}
		if l, err = lr.next(); errors.Is(err, io.EOF) {
			return s, nil
		} else if err != nil {
			return s, err
		}
	}
}

func runLine(ctx context.Context, s *Session, l scriptLine, at *time.Time, onDecision func(*Decision)) error {
	*at = l.time
	if l.line == nil {
		d, err := s.Decide(ctx)
		if err != nil {
			return err
		}
		if onDecision != nil {
			onDecision(d)
		}
		return nil
	}
	*at = l.line.Event.Time
	p, err := l.line.Event.Payload()
	if err != nil {
		return err
	}
	_, err = s.Record(ctx, p)
	return err
}

// scriptLine is an event line (line set) or a turn line (line nil).
type scriptLine struct {
	no   int
	line *events.Line
	time time.Time
}

type scriptReader struct {
	lr   *events.LineReader
	name string
}

func newScriptReader(r io.Reader, name string) *scriptReader {
	return &scriptReader{lr: events.NewLineReader(r, name), name: name}
}

// next reads a line: {"type":"turn"} (optionally with "time") is a turn, anything else must
// be an event line.
func (sr *scriptReader) next() (scriptLine, error) {
	raw, no, err := sr.lr.Raw()
	if err != nil {
		return scriptLine{}, err
	}
	if turn, ok := parseTurn(raw); ok {
		l := scriptLine{no: no}
		if turn.Time != "" {
			if l.time, err = time.Parse(time.RFC3339Nano, turn.Time); err != nil {
				return scriptLine{}, fmt.Errorf("%s:%d: turn time: %w", sr.name, no, err)
			}
			if !events.KeepsTime(l.time) {
				return scriptLine{}, fmt.Errorf("%s:%d: %w: turn time %q is outside what a log keeps (1677 to 2262)", sr.name, no, events.ErrInvalid, turn.Time)
			}
		}
		return l, nil
	}
	l, err := events.ParseLine(raw)
	if err != nil {
		return scriptLine{}, fmt.Errorf("%s:%d: %w", sr.name, no, err)
	}
	if l.Blob != nil || l.End != nil {
		return scriptLine{}, fmt.Errorf("%s:%d: %w: a blob or closing line belongs to an export, which replay import reads; a script records events",
			sr.name, no, events.ErrInvalid)
	}
	l.No = no
	return scriptLine{no: no, line: &l}, nil
}

type turnLine struct {
	Type string `json:"type"`
	Time string `json:"time"`
}

// parseTurn reads a turn line. A line with other fields is not one; it then goes to the event
// parser, whose error names the field.
func parseTurn(raw []byte) (turnLine, bool) {
	var t turnLine
	if !bytes.Contains(raw, []byte(`"turn"`)) {
		return t, false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return t, dec.Decode(&t) == nil && t.Type == "turn"
}
