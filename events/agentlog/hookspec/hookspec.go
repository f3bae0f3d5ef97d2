// Package hookspec holds what tells an agent's hook payload apart and answers it when nothing
// else can, as plain data over a decoded JSON object: the clues that recognise a dialect, its
// neutral reply and the events that end its sessions. It imports only the standard library's
// strings package, so the hook program (replay-hook), which links no JSON decoder of the
// standard library, reads the same facts as agentlog's parser.
package hookspec

import "strings"

// Spec is one agent's hook dialect, as far as a payload can tell it without parsing it.
type Spec struct {
	// Agent is the agent's name ("claude-code", "cline", …).
	Agent string
	// Precedence orders the dialects tried on a payload, lowest first; 0 means the dialect is
	// never recognised from a payload alone, only from the agent the hook was installed for.
	Precedence int
	// Clues recognise the dialect: a payload matching any of them is this agent's.
	Clues []Clue
	// HintDecides makes a payload no dialect recognises this agent's when its hook was
	// installed for this agent (Codex and VS Code's Copilot share Claude Code's shape).
	HintDecides bool
	// Default makes this the dialect of a payload nothing else decides.
	Default bool
	// Neutral is the reply that changes nothing ("" for no output at all); NeutralByEvent
	// overrides it for some events.
	Neutral        string
	NeutralByEvent map[string]string
	// SessionEnds are the event names that end a session in this dialect: the hook gives them
	// the shorter budget.
	SessionEnds []string
}

// Clue is one pattern of a payload: every condition set must hold.
type Clue struct {
	// Has are keys present with a value other than null.
	Has []string
	// Lacks are keys absent or null.
	Lacks []string
	// Key names a key holding a string: equal to Equals when set, containing Contains when
	// set, else not empty.
	Key, Equals, Contains string
	// LowerCamel names a key holding a string that begins with a lower-case letter (Cursor's
	// sessionStart against Claude Code's SessionStart).
	LowerCamel string
	// NotHint is an agent the hook must not have been installed for.
	NotHint string
}

// Match reports whether the payload v, installed for hint, matches the clue.
func (c Clue) Match(hint string, v map[string]any) bool {
	for _, k := range c.Has {
		if v[k] == nil {
			return false
		}
	}
	for _, k := range c.Lacks {
		if v[k] != nil {
			return false
		}
	}
	if c.Key != "" {
		s, _ := v[c.Key].(string)
		switch {
		case c.Equals != "" && s != c.Equals:
			return false
		case c.Contains != "" && !strings.Contains(s, c.Contains):
			return false
		case c.Equals == "" && c.Contains == "" && s == "":
			return false
		}
	}
	if c.LowerCamel != "" {
		s, _ := v[c.LowerCamel].(string)
		if s == "" || s[0] < 'a' || s[0] > 'z' {
			return false
		}
	}
	return c.NotHint == "" || hint != c.NotHint
}

// Recognises reports whether any of the spec's clues matches.
func (s *Spec) Recognises(hint string, v map[string]any) bool {
	for _, c := range s.Clues {
		if c.Match(hint, v) {
			return true
		}
	}
	return false
}

// NeutralReply is the spec's reply that changes nothing, for event; nil for no output.
func (s *Spec) NeutralReply(event string) []byte {
	r, ok := s.NeutralByEvent[event]
	if !ok {
		r = s.Neutral
	}
	if r == "" {
		return nil
	}
	return []byte(r)
}

// Ordered returns the specs in the order Detect tries them: by Precedence, then by name.
func Ordered(specs []Spec) []Spec {
	out := append([]Spec(nil), specs...)
	for i := 1; i < len(out); i++ { // an insertion sort: the hook program links no sort package
		for j := i; j > 0 && before(&out[j], &out[j-1]); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Detect is the agent whose dialect the payload v is, among specs in Ordered order: the first
// recognising it, else hint when its spec lets the hint decide, else the default dialect.
func Detect(ordered []Spec, hint string, v map[string]any) string {
	for i := range ordered {
		if ordered[i].Precedence > 0 && ordered[i].Recognises(hint, v) {
			return ordered[i].Agent
		}
	}
	def := ""
	for i := range ordered {
		if ordered[i].HintDecides && ordered[i].Agent == hint {
			return hint
		}
		if ordered[i].Default && def == "" {
			def = ordered[i].Agent
		}
	}
	return def
}

// Find is the spec of agent, or nil.
func Find(specs []Spec, agent string) *Spec {
	for i := range specs {
		if specs[i].Agent == agent {
			return &specs[i]
		}
	}
	return nil
}

func before(a, b *Spec) bool {
	if a.Precedence != b.Precedence {
		return a.Precedence < b.Precedence
	}
	return a.Agent < b.Agent
}
