package session

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/projections"
)

// Record appends one event a runtime observed and returns its sequence number. The types the
// session writes itself (task_started, rules_snapshot, decision, rule_triggered, and an agent
// session's delivery) are refused with ErrReserved.
func (s *Session) Record(ctx context.Context, p events.Payload) (uint64, error) {
	switch p.EventType() {
	case events.TypeTaskStarted, events.TypeRulesSnapshot, events.TypeDecision, events.TypeRuleTriggered, events.TypeDelivery:
		return 0, fmt.Errorf("record %s: %w", p.EventType(), ErrReserved)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	res, err := s.append(ctx, s.withGuesses(p))
	if err != nil {
		return 0, err
	}
	return res.Last, nil
}

// RecordEvent appends an event an importer prepared: its payload, and its time and origin
// when set (a zero time is stamped with the session's clock). It returns the sequence number.
func (s *Session) RecordEvent(ctx context.Context, ev events.Event) (uint64, error) {
	switch ev.Type {
	case events.TypeTaskStarted, events.TypeRulesSnapshot, events.TypeDecision, events.TypeRuleTriggered, events.TypeDelivery:
		return 0, fmt.Errorf("record %s: %w", ev.Type, ErrReserved)
	}
	p, err := ev.Payload()
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if g := s.withGuesses(p); g != p {
		fresh, err := events.New(g)
		if err != nil {
			return 0, err
		}
		ev.Data = fresh.Data
	}
	res, err := s.appendEvents(ctx, []events.Event{{Type: ev.Type, V: ev.V, Data: ev.Data, Time: ev.Time, Origin: ev.Origin}}, 0)
	if err != nil {
		return 0, err
	}
	return res.Last, nil
}

// UserMessage records the text a human sent.
func (s *Session) UserMessage(ctx context.Context, text string) (uint64, error) {
	return s.Record(ctx, &events.UserMessage{Text: text})
}

// Mention records an @mention: the path as written and, when the runtime resolved it, the
// resolved path (absolute or root-relative).
func (s *Session) Mention(ctx context.Context, path, resolved string) (uint64, error) {
	return s.Record(ctx, &events.Mention{Path: path, Resolved: resolved})
}

// ToolCall records a tool the model called, with its parameters as a JSON object.
func (s *Session) ToolCall(ctx context.Context, tool, id string, params json.RawMessage) (uint64, error) {
	return s.Record(ctx, &events.ToolCall{Tool: tool, ID: id, Params: params})
}

// Tabs records the editor's open and visible tabs, replacing the previous snapshot.
func (s *Session) Tabs(ctx context.Context, open, visible []string) (uint64, error) {
	return s.Record(ctx, &events.TabSnapshot{Open: open, Visible: visible})
}

// FileWrite records a file the agent created, edited or deleted (op is events.OpCreate,
// events.OpEdit or events.OpDelete).
func (s *Session) FileWrite(ctx context.Context, path, op string) (uint64, error) {
	return s.Record(ctx, &events.FileWrite{Path: path, Op: op})
}

// Settings records a change of mode ("act" or "plan"), provider or model; empty fields are
// unchanged.
func (s *Session) Settings(ctx context.Context, mode, provider, model string) (uint64, error) {
	return s.Record(ctx, &events.SettingsChanged{Mode: mode, Provider: provider, Model: model})
}

// Toggle records a user turning the rule with the given id on or off.
func (s *Session) Toggle(ctx context.Context, ruleID string, enabled bool) (uint64, error) {
	return s.Record(ctx, &events.RuleToggled{Rule: ruleID, Enabled: enabled})
}

// The Why of a guess the session checked.
const (
	guessExists      = "exists"
	guessSeen        = "seen"
	guessNotFound    = "not_found"
	guessNoWorkspace = "no_workspace"
	guessMention     = "mention"
)

// withGuesses returns p with the guessed paths of a user message (its prose) or a shell tool
// call (its command line) checked against the workspace, or p itself when there is nothing to
// check or the runtime checked already. A guess is confirmed when it exists in a root (read
// through the root's FS) or other evidence in the projection names it; without any root FS (an
// import without a workspace) every guess is unconfirmed. The caller holds s.mu.
func (s *Session) withGuesses(p events.Payload) events.Payload {
	switch p := p.(type) {
	case *events.UserMessage:
		if p.Guesses != nil {
			return p
		}
		found := projections.GuessPaths(p.Text)
		if len(found) == 0 && len(projections.ExtractPaths(p.Text)) == 0 {
			return p // nothing either way: the event reads the same without the field
		}
		var paths []string
		var mentions []bool
		for _, g := range found {
			paths, mentions = append(paths, g.Path), append(mentions, g.Mention)
		}
		c := *p
		c.Guesses = s.checkGuesses(paths, "")
		for i := range c.Guesses {
			if mentions[i] { // the user named it: no guess
				c.Guesses[i].Confirmed, c.Guesses[i].Why = true, guessMention
			}
		}
		return &c
	case *events.ToolCall:
		if p.Guesses != nil {
			return p
		}
		paths, shell := projections.ShellGuesses(p.Tool, p.Params)
		if !shell {
			return p
		}
		c := *p
		c.Guesses = s.checkGuesses(paths, p.Cwd)
		return &c
	}
	return p
}

func (s *Session) checkGuesses(paths []string, cwd string) []events.Guess {
	out := make([]events.Guess, 0, len(paths))
	workspace := false
	for _, r := range s.opts.Roots {
		workspace = workspace || r.FS != nil
	}
	for _, path := range paths {
		g := events.Guess{Path: path, Why: guessNotFound}
		// Mapped once for both checks. With a workspace there are roots, so a path Locate does
		// not place in one is one the projection dropped too: nothing names it.
		if !workspace {
			g.Why = guessNoWorkspace
			out = append(out, g)
			continue
		}
		root, rel, ok := s.state.Locate(path, cwd)
		switch {
		case !ok:
		case s.existsInRoot(root, rel):
			g.Confirmed, g.Why = true, guessExists
		case s.state.SeenAt(root, rel):
			g.Confirmed, g.Why = true, guessSeen
		}
		out = append(out, g)
	}
	return out
}

// existsInRoot reports whether rel, a path Locate placed in root, names a file or folder of a
// root this session can read.
func (s *Session) existsInRoot(root int, rel string) bool {
	if root >= len(s.opts.Roots) || s.opts.Roots[root].FS == nil {
		return false
	}
	name := strings.TrimSuffix(rel, "/")
	if name == "" || !fs.ValidPath(name) {
		return false
	}
	_, err := fs.Stat(s.opts.Roots[root].FS, name)
	return err == nil
}

// lockedGuesses is withGuesses for a caller that does not hold s.mu.
func (s *Session) lockedGuesses(p events.Payload) events.Payload {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.withGuesses(p)
}
