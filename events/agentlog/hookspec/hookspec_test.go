package hookspec

import (
	"bytes"
	"testing"
)

func TestClueMatch(t *testing.T) {
	v := map[string]any{"a": "x", "n": nil, "e": "sessionStart", "E": "SessionStart", "p": "/r/rollout-1"}
	for _, tt := range []struct {
		name string
		c    Clue
		hint string
		want bool
	}{
		{"has", Clue{Has: []string{"a"}}, "", true},
		{"has null", Clue{Has: []string{"n"}}, "", false},
		{"lacks null", Clue{Lacks: []string{"n", "z"}}, "", true},
		{"lacks present", Clue{Lacks: []string{"a"}}, "", false},
		{"equals", Clue{Key: "a", Equals: "x"}, "", true},
		{"equals not", Clue{Key: "a", Equals: "y"}, "", false},
		{"contains", Clue{Key: "p", Contains: "/rollout-"}, "", true},
		{"non-empty", Clue{Key: "a"}, "", true},
		{"empty", Clue{Key: "z"}, "", false},
		{"lower camel", Clue{LowerCamel: "e"}, "", true},
		{"upper camel", Clue{LowerCamel: "E"}, "", false},
		{"not hint", Clue{Has: []string{"a"}, NotHint: "h"}, "h", false},
		{"other hint", Clue{Has: []string{"a"}, NotHint: "h"}, "g", true},
	} {
		if got := tt.c.Match(tt.hint, v); got != tt.want {
			t.Errorf("%s: Match = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestDetect(t *testing.T) {
	specs := Ordered([]Spec{
		{Agent: "base", HintDecides: true, Default: true},
		{Agent: "late", Precedence: 20, Clues: []Clue{{Has: []string{"k"}}}, HintDecides: true},
		{Agent: "early", Precedence: 10, Clues: []Clue{{Has: []string{"k", "j"}}}, Neutral: "{}\n",
			NeutralByEvent: map[string]string{"stop": ""}},
	})
	for _, tt := range []struct {
		hint string
		v    map[string]any
		want string
	}{
		{"base", map[string]any{"k": 1, "j": 1}, "early"},
		{"base", map[string]any{"k": 1}, "late"},
		{"late", map[string]any{}, "late"},
		{"early", map[string]any{}, "base"},
		{"unknown", map[string]any{}, "base"},
	} {
		if got := Detect(specs, tt.hint, tt.v); got != tt.want {
			t.Errorf("Detect(%s, %v) = %s, want %s", tt.hint, tt.v, got, tt.want)
		}
	}
	early := Find(specs, "early")
	if got := early.NeutralReply("x"); !bytes.Equal(got, []byte("{}\n")) {
		t.Errorf("neutral reply %q", got)
	}
	if got := early.NeutralReply("stop"); got != nil {
		t.Errorf("neutral reply of stop %q, want none", got)
	}
	if Find(specs, "none") != nil {
		t.Error("Find found an agent that is not there")
	}
}
