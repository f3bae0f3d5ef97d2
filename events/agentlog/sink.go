package agentlog

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/tasklog/tasklog/events"
)

// sink is the state an import shares across agents: the record being read, the task's root and
// the current working directory, the last tab snapshot and settings (events are emitted only on
// change), and the tool calls waiting for their results.
type sink struct {
	agent Agent
	file  string
	opts  Options
	out   func(Item) error
	t     *tally

	rec    int
	kind   string
	when   time.Time
	mapped bool
	last   time.Time // the time of the last record that had one

	started   bool
	start     events.TaskStarted
	startWhen time.Time
	startRec  int
	root      string
	cwd       string
	home      string

	tabs     *events.TabSnapshot
	settings events.SettingsChanged

	pending []*call
}

// call is a tool call held until its result says whether it succeeded, so the event carries
// Failed and file writes are emitted only for calls that worked.
type call struct {
	id       string
	tc       events.ToolCall
	rec      int
	when     time.Time
	writes   []events.FileWrite
	done     bool
	assumeOK bool // emit the writes even if no result ever arrives
	resRec   int
	resWhen  time.Time
}

func newSink(agent Agent, file string, opts Options, out func(Item) error) *sink {
	return &sink{agent: agent, file: file, opts: opts, out: out, t: newTally(agent, file), startRec: -1}
}

// begin starts record rec of kind; finish counts it as skipped when it produced nothing.
// A record without a time takes the time of the record before it and is counted as untimed.
func (s *sink) begin(rec int, kind string, when time.Time) {
	s.t.records++
	if when.IsZero() && kind != "blank" && kind != "malformed" {
		s.t.untimed++
		when = s.last
	}
	s.last = when
	s.rec, s.kind, s.when, s.mapped = rec, kind, when, false
	if s.startRec < 0 && s.root == "" {
		s.startRec = rec
	}
	if s.startWhen.IsZero() && !when.IsZero() {
		s.startWhen = when
	}
}

func (s *sink) finish() {
	if !s.mapped {
		s.t.skipped[s.kind]++
	}
}

// consumed marks the current record as used even though it produced no event of its own.
func (s *sink) consumed() { s.mapped = true }

func (s *sink) warn(format string, args ...any) {
	s.t.warn("%s: record %d: "+format, append([]any{s.file, s.rec}, args...)...)
}

// setCwd sets the working directory of what follows; the first one becomes the task's root.
func (s *sink) setCwd(raw string) {
	if raw == "" {
		return
	}
	p, ok := resolvePath(raw, s.cwd, s.home)
	if !ok {
		s.warn("working directory %q is not an absolute path", raw)
		return
	}
	s.cwd = p
	if s.home == "" {
		s.home = homeOf(p)
	}
	if s.root == "" && !s.started {
		s.root, s.startRec = p, s.rec
		if s.start.OS == "" {
			s.start.OS = osOf(p)
		}
	}
}

func (s *sink) resolve(p string) (string, bool) { return resolvePath(p, s.cwd, s.home) }

func (s *sink) ensureStarted() error {
	if s.started {
		return nil
	}
	s.started = true
	if s.root != "" {
		s.start.Roots = []string{s.root}
	} else {
		s.start.Roots = []string{}
		s.t.warn("%s: no working directory found; relative paths are left unresolved", s.file)
	}
	s.t.path(s.root)
	return s.emitAt(&s.start, max(s.startRec, 0), s.startWhen)
}

func (s *sink) emitAt(p events.Payload, rec int, when time.Time) error {
	if err := s.ensureStarted(); err != nil {
		return err
	}
	ev, err := events.New(p)
	if err != nil {
		s.t.warn("%s: record %d: %v", s.file, rec, err)
		return nil
	}
	if when.IsZero() {
		when = time.Unix(0, 0) // no record so far had a time: the earliest time there is
	}
	ev.Time = when.UTC()
	ev.Origin = &events.Origin{File: s.file, Record: rec}
	if rec == s.rec {
		s.mapped = true
	}
	s.t.events[ev.Type]++
	return s.out(Item{Event: &ev})
}

// event emits p from the current record.
func (s *sink) event(p events.Payload) error { return s.emitAt(p, s.rec, s.when) }

// turn marks a model request. Tool calls still waiting are emitted first: their results belong
// to the prompt being built.
func (s *sink) turn() error {
	if err := s.drain(true); err != nil {
		return err
	}
	if err := s.ensureStarted(); err != nil {
		return err
	}
	s.mapped = true
	s.t.turns++
	return s.out(Item{Turn: true})
}

func (s *sink) userMessage(text string) error {
	if text == "" {
		return nil
	}
	return s.event(&events.UserMessage{Text: text})
}

// mention emits a mention as written, resolved against the current working directory.
func (s *sink) mention(raw string) error {
	m := events.Mention{Path: raw}
	if p, ok := s.resolve(raw); ok {
		m.Resolved = p
		s.t.path(p)
	}
	return s.event(&m)
}

// tabSnapshot emits the open and visible tabs (as written, resolved here) when they changed.
func (s *sink) tabSnapshot(open, visible []string) error {
	snap := events.TabSnapshot{Open: s.resolveAll(open), Visible: s.resolveAll(visible)}
	if s.tabs != nil && slices.Equal(s.tabs.Open, snap.Open) && slices.Equal(s.tabs.Visible, snap.Visible) {
		s.mapped = true
		return nil
	}
	s.tabs = &snap
	for _, p := range snap.Open {
		s.t.path(p)
	}
	for _, p := range snap.Visible {
		s.t.path(p)
	}
	return s.event(&snap)
}

func (s *sink) resolveAll(ps []string) []string {
	out := make([]string, 0, len(ps))
	for _, p := range ps {
		if r, ok := s.resolve(p); ok {
			out = append(out, r)
		} else {
			out = append(out, cleanRaw(p))
		}
	}
	return out
}

// settingsChanged emits the fields that differ from the last known settings.
func (s *sink) settingsChanged(mode, provider, model string) error {
	var ch events.SettingsChanged
	if mode != "" && mode != s.settings.Mode {
		ch.Mode, s.settings.Mode = mode, mode
	}
	if provider != "" && provider != s.settings.Provider {
		ch.Provider, s.settings.Provider = provider, provider
	}
	if model != "" && model != s.settings.Model {
		ch.Model, s.settings.Model = model, model
	}
	if ch == (events.SettingsChanged{}) {
		return nil
	}
	return s.event(&ch)
}

// toolCall queues a tool call of the current record; writes are the files it changes if it
// succeeds. cwd is where it ran (empty: the current working directory).
func (s *sink) toolCall(tool, id string, params any, cwd string, writes []events.FileWrite) *call {
	raw, err := compactParams(params, s.opts)
	if err != nil {
		s.warn("tool %s: parameters: %v", tool, err)
		raw = json.RawMessage("{}")
	}
	if cwd == "" {
		cwd = s.cwd
	}
	c := &call{id: id, rec: s.rec, when: s.when, writes: writes,
		tc: events.ToolCall{Tool: tool, ID: id, Params: raw}}
	if cwd != s.root {
		c.tc.Cwd = cwd
	}
	s.pending = append(s.pending, c)
	s.mapped = true
	return c
}

// result settles the pending call with id; it reports whether there was one.
func (s *sink) result(id string, failed bool) (bool, error) {
	for _, c := range s.pending {
		if c.id == id && !c.done {
			s.settle(c, failed)
			return true, s.drain(false)
		}
	}
	return false, nil
}

func (s *sink) settle(c *call, failed bool) {
	c.done, c.tc.Failed = true, failed
	c.resRec, c.resWhen = s.rec, s.when
}

// drain emits the pending calls from the oldest while they are settled, or all of them.
func (s *sink) drain(all bool) error {
	for len(s.pending) > 0 && (all || s.pending[0].done) {
		c := s.pending[0]
		s.pending = s.pending[1:]
		if c.tc.Cwd != "" {
			s.t.path(c.tc.Cwd)
		}
		if err := s.emitAt(&c.tc, c.rec, c.when); err != nil {
			return err
		}
		if c.tc.Failed || (!c.done && !c.assumeOK) {
			continue
		}
		rec, when := c.resRec, c.resWhen
		if !c.done {
			rec, when = c.rec, c.when
		}
		for i := range c.writes {
			s.t.path(c.writes[i].Path)
			if err := s.emitAt(&c.writes[i], rec, when); err != nil {
				return err
			}
		}
	}
	return nil
}

// write builds a file write of a path as written, resolved against dir (or the current working
// directory).
func (s *sink) write(raw, op, dir string) events.FileWrite {
	if dir == "" {
		dir = s.cwd
	}
	p, ok := resolvePath(raw, dir, s.home)
	if !ok {
		s.warn("file %q written by a tool could not be resolved", raw)
		p = cleanRaw(raw)
	}
	return events.FileWrite{Path: p, Op: op}
}

// close emits what is still pending and returns the report.
func (s *sink) close() (Report, error) {
	if err := s.drain(true); err != nil {
		return s.t.report(), err
	}
	if err := s.ensureStarted(); err != nil {
		return s.t.report(), err
	}
	return s.t.report(), nil
}

// pendingCall is the unsettled pending call with id, or nil.
func (s *sink) pendingCall(id string) *call {
	for _, c := range s.pending {
		if c.id == id && !c.done {
			return c
		}
	}
	return nil
}
