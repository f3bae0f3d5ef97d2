package session

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/rules"
)

// Stream sources Watch keeps apart: a pattern never matches across two of them.
const (
	StreamText     = "text"
	StreamThinking = "thinking"
	// StreamTool is the prefix of a tool call's source; pass "tool:<call id>" so that two calls'
	// arguments are never matched as one string.
	StreamTool = "tool"
)

// watchWindow bounds what Watch keeps of each stream: a pattern can match across deltas within
// this many bytes of history, and memory stays bounded however long the stream runs.
const watchWindow = 4 << 10

// maxWindows bounds how many streams Watch keeps a window for at once; past it the least
// recently fed stream's window is dropped. With watchWindow this caps Watch at 256 KiB.
const maxWindows = 64

// Fired is a stream-triggered rule that matched; its body goes into the conversation.
type Fired struct {
	Rule  *rules.Rule
	Match string
	Seq   uint64
}

// watchState is what Watch keeps between calls: the recent output of each stream and the rules
// that fired in the current turn. Its zero value is ready to use.
type watchState struct {
	windows map[string]*window
	uses    uint64 // counts feeds, for least-recently-used eviction
	// turn is the turn fired describes; 0 until the first Watch has read it from the log.
	turn  int
	fired map[string]bool
	// seen is the head up to which recorded events were looked at for calls that ended.
	seen uint64
}

type window struct {
	buf  []byte
	used uint64
}

// Watch checks the stream-triggered rules of the latest decision's rule set against a delta of
// the model's streamed output. source is StreamText, StreamThinking or "tool:<id>". Each rule
// that matches is recorded as a rule_triggered event and returned.
//
// A rule fires at most once per task (the default, once: true) or, with once: false, at most
// once per turn; both are folded from the log, so a restart does not fire a rule again. A
// stream's window lasts until the turn ends; a tool call's also ends when the call is recorded
// (ToolCall) or EndStream names it, and at most 64 windows are kept (the least recently fed goes).
func (s *Session) Watch(ctx context.Context, source, delta string) ([]Fired, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rules == nil {
		// A reopened session has not decided yet: its rules are the latest snapshot's.
		seq, files := s.state.LastSnapshot()
		if seq == 0 {
			return nil, nil
		}
		loaded, err := LoadSnapshot(s.db, files)
		if err != nil {
			return nil, fmt.Errorf("task %s: load the rules for Watch: %w", s.task, err)
		}
		s.ruleSet(seq, loaded)
	}
	w := &s.watch
	if err := s.syncWatch(ctx); err != nil {
		return nil, err
	}
	win := w.feed(source, delta)
	var fired []Fired
	for _, tr := range s.rules.Triggers() {
		if !scopeAccepts(tr.Scope, source) || w.fired[tr.RuleID] || (tr.Once && s.state.TriggerCount(tr.RuleID) > 0) {
			continue
		}
		if on, set := s.state.Toggled(tr.RuleID); set && !on {
			continue
		}
		loc := tr.Pattern.FindIndex(win.buf)
		if loc == nil {
			continue
		}
		match := string(win.buf[loc[0]:loc[1]])
		res, err := s.append(ctx, &events.RuleTriggered{Rule: tr.RuleID, Name: tr.Name, Source: source, Match: match})
		if err != nil {
			return fired, fmt.Errorf("record trigger of %s: %w", tr.Name, err)
		}
		w.fired[tr.RuleID] = true
		// Text already matched must not fire another rule's repeat from the same bytes.
		win.buf = win.buf[loc[1]:]
		fired = append(fired, Fired{Rule: ruleByID(s.rules, tr.RuleID), Match: match, Seq: res.Last})
	}
	w.seen = s.head
	return fired, nil
}

// EndStream tells Watch that a stream is over: its window is dropped, so a later stream of the
// same name starts empty. A tool call's stream ends by itself when the call is recorded or the
// turn ends; EndStream is for a call that is never recorded, or a stream the runtime closes.
func (s *Session) EndStream(source string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.watch.windows, source)
}

// feed appends delta to the source's window, trimmed to watchWindow, making room for a new
// window by dropping the least recently fed one.
func (w *watchState) feed(source, delta string) *window {
	if w.windows == nil {
		w.windows = map[string]*window{}
	}
	w.uses++
	win := w.windows[source]
	if win == nil {
		if len(w.windows) >= maxWindows {
			w.evict()
		}
		win = &window{}
		w.windows[source] = win
	}
	win.used = w.uses
	buf := append(win.buf, delta...)
	if len(buf) > watchWindow {
		buf = append([]byte(nil), buf[len(buf)-watchWindow:]...)
	}
	win.buf = buf
	return win
}

// evict drops the least recently fed window; uses are distinct, so the choice is deterministic.
func (w *watchState) evict() {
	oldest, at := "", uint64(0)
	for src, win := range w.windows {
		if oldest == "" || win.used < at {
			oldest, at = src, win.used
		}
	}
	delete(w.windows, oldest)
}

// syncWatch brings the watch state up to the log: a new turn empties the windows and the
// rules fired; tool calls recorded since the last Watch end their streams. The first Watch of a
// session reads which rules fired in the current turn from the log.
func (s *Session) syncWatch(ctx context.Context) error {
	w := &s.watch
	turn := s.state.Turn()
	switch {
	case w.turn == 0:
		from, err := s.turnStart(ctx, turn)
		if err != nil {
			return err
		}
		w.turn, w.fired, w.windows = turn, map[string]bool{}, nil
		return s.scanTurn(ctx, from)
	case w.turn != turn:
		w.turn, w.fired, w.windows, w.seen = turn, map[string]bool{}, nil, s.head
		return nil
	case w.seen < s.head && w.hasToolWindows():
		return s.scanTurn(ctx, w.seen+1)
	}
	w.seen = s.head
	return nil
}

func (w *watchState) hasToolWindows() bool {
	for src := range w.windows {
		if strings.HasPrefix(src, StreamTool+":") {
			return true
		}
	}
	return false
}

// scanTurn reads the events of the current turn from seq from on: the rules that fired, and
// the tool calls recorded (whose streams are over).
func (s *Session) scanTurn(ctx context.Context, from uint64) error {
	w := &s.watch
	for ev, err := range s.db.Events(ctx, s.task, from) {
		if err != nil {
			return fmt.Errorf("task %s: read the turn for Watch: %w", s.task, err)
		}
		if ev.Seq > s.head {
			break
		}
		switch ev.Type {
		case events.TypeRuleTriggered, events.TypeToolCall:
		default:
			continue
		}
		p, err := ev.Payload()
		if err != nil {
			return fmt.Errorf("task %s: read %s for Watch: %w", s.task, ev, err)
		}
		switch p := p.(type) {
		case *events.RuleTriggered:
			if ev.Turn == w.turn {
				w.fired[p.Rule] = true
			}
		case *events.ToolCall:
			if p.ID != "" {
				delete(w.windows, StreamTool+":"+p.ID)
			}
		}
	}
	w.seen = s.head
	return nil
}

// turnStart finds the first sequence number of the given turn (turns never decrease along a
// log) by bisection, so a reopened session reads only the current turn.
func (s *Session) turnStart(ctx context.Context, turn int) (uint64, error) {
	lo, hi := uint64(1), s.head+1
	for lo < hi {
		mid := lo + (hi-lo)/2
		at := 0
		for ev, err := range s.db.Events(ctx, s.task, mid) {
			if err != nil {
				return 0, fmt.Errorf("task %s: find turn %d for Watch: %w", s.task, turn, err)
			}
			at = ev.Turn
			break
		}
		if at >= turn {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo, nil
}

func scopeAccepts(scope, source string) bool {
	switch scope {
	case "":
		return true
	case StreamTool:
		return len(source) >= len(StreamTool) && source[:len(StreamTool)] == StreamTool
	}
	return scope == source
}

// ruleByID finds a rule in a set; Rules is sorted by id.
func ruleByID(rs *rules.RuleSet, id string) *rules.Rule {
	all := rs.Rules()
	i := sort.Search(len(all), func(i int) bool { return all[i].ID >= id })
	if i < len(all) && all[i].ID == id {
		return all[i]
	}
	return nil
}
