package session

import (
	"context"
	"fmt"
	"sort"

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

// Fired is a stream-triggered rule that matched; its body goes into the conversation.
type Fired struct {
	Rule  *rules.Rule
	Match string
	Seq   uint64
}

// Watch checks the stream-triggered rules of the latest decision's rule set against a delta of
// the model's streamed output. source is StreamText, StreamThinking or "tool:<id>". Each rule
// that matches is recorded as a rule_triggered event and returned. A rule whose policy is to
// fire once fires once per task; the count is folded from the log, so it survives a restart.
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
	buf := append(s.watchBufs[source], delta...)
	if len(buf) > watchWindow {
		buf = append([]byte(nil), buf[len(buf)-watchWindow:]...)
	}
	s.watchBufs[source] = buf
	var fired []Fired
	for _, tr := range s.rules.Triggers() {
		if !scopeAccepts(tr.Scope, source) || (tr.Once && s.state.TriggerCount(tr.RuleID) > 0) {
			continue
		}
		if on, set := s.state.Toggled(tr.RuleID); set && !on {
			continue
		}
		loc := tr.Pattern.FindIndex(buf)
		if loc == nil {
			continue
		}
		match := string(buf[loc[0]:loc[1]])
		res, err := s.append(ctx, &events.RuleTriggered{Rule: tr.RuleID, Name: tr.Name, Source: source, Match: match})
		if err != nil {
			return fired, fmt.Errorf("record trigger of %s: %w", tr.Name, err)
		}
		// Text already matched must not fire the same rule again when it is not once-only.
		s.watchBufs[source] = buf[loc[1]:]
		fired = append(fired, Fired{Rule: ruleByID(s.rules, tr.RuleID), Match: match, Seq: res.Last})
	}
	return fired, nil
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
