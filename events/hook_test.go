package events

import (
	"errors"
	"strings"
	"testing"
)

func TestHookPayloadsValidate(t *testing.T) {
	sum := strings.Repeat("a", 64)
	ok := func() *Delivery {
		return &Delivery{Decision: 4, Agent: "claude-code", Hook: "PreToolUse", Channel: ChannelTool, Form: FormFull,
			Rules: []DeliveredRule{{ID: "cline:/ws/.clinerules/api.md", Name: "api"}}, Bytes: 10, SHA256: sum}
	}
	for _, tc := range []struct {
		name string
		p    Payload
		bad  bool
	}{
		{"delivery", ok(), false},
		{"delivery without decision", func() Payload { d := ok(); d.Decision = 0; return d }(), true},
		{"delivery on an unknown channel", func() Payload { d := ok(); d.Channel = "email"; return d }(), true},
		{"delivery in an unknown form", func() Payload { d := ok(); d.Form = "half"; return d }(), true},
		{"delivery of nothing", func() Payload { d := ok(); d.Rules = nil; return d }(), true},
		{"delivery with a short digest", func() Payload { d := ok(); d.SHA256 = "ab"; return d }(), true},
		{"instructions loaded", &InstructionsLoaded{Path: "/ws/CLAUDE.md"}, false},
		{"instructions loaded without path", &InstructionsLoaded{}, true},
		{"compaction", &Compaction{}, false},
		{"stop of a turn", &AgentStopped{Scope: StopTurn}, false},
		{"stop of something else", &AgentStopped{Scope: "day"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev, err := New(tc.p)
			if tc.bad {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("New = %v, want ErrInvalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if _, err := ev.Payload(); err != nil {
				t.Fatal(err)
			}
			if s := Summary(ev); s == "" || s == string(ev.Type) {
				t.Errorf("summary %q", s)
			}
		})
	}
}

func TestHookPayloadsDecodeStrictly(t *testing.T) {
	ev := Event{Type: TypeCompaction, V: 1, Data: []byte(`{"trigger":"auto","extra":1}`)}
	if _, err := ev.Payload(); !errors.Is(err, ErrInvalid) {
		t.Fatalf("unknown field: %v, want ErrInvalid", err)
	}
	ev = Event{Type: TypeDelivery, V: 1, Data: []byte(`{"decision":4,"agent":"codex","hook":"Stop","channel":"prompt","form":"full","rules":[{"id":"x","name":"x"}],"bytes":1,"sha256":"` + strings.Repeat("0", 64) + `"}`)}
	p, err := ev.Payload()
	if err != nil {
		t.Fatal(err)
	}
	if got := Summary(ev); got != "codex delivered via prompt (Stop), 1 bytes, decision seq 4: [x]" {
		t.Errorf("summary %q", got)
	}
	_ = p
}
