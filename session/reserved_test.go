package session

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/events"
)

// The event types the session writes itself, a hook's delivery among them, cannot be recorded
// by a runtime, through Record or RecordEvent, and a refused one leaves the log as it was.
func TestRecordRefusesSessionWrittenTypes(t *testing.T) {
	ctx := context.Background()
	s := newSession(t, openDB(t), clineWorkspace(), Options{})
	before := s.Version()
	for _, p := range []events.Payload{
		&events.TaskStarted{},
		&events.RulesSnapshot{},
		&events.Decision{Turn: 1},
		&events.RuleTriggered{Rule: "cline:/ws/.clinerules/api.md", Name: "api", Source: "cline"},
		&events.Delivery{Decision: 1, Agent: "claude-code", Hook: "PreToolUse", Channel: events.ChannelTool, Form: events.FormFull,
			Rules: []events.DeliveredRule{{ID: "cline:/ws/.clinerules/api.md", Name: "api"}},
			Bytes: 10, SHA256: strings.Repeat("0", 64)},
	} {
		if _, err := s.Record(ctx, p); !errors.Is(err, ErrReserved) {
			t.Errorf("Record(%s) = %v, want ErrReserved", p.EventType(), err)
		}
		ev, err := events.New(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.RecordEvent(ctx, ev); !errors.Is(err, ErrReserved) {
			t.Errorf("RecordEvent(%s) = %v, want ErrReserved", p.EventType(), err)
		}
	}
	if s.Version() != before {
		t.Errorf("the log went from seq %d to %d after refused records", before, s.Version())
	}
	// What a runtime observes is still recorded.
	if _, err := s.Record(ctx, &events.FileWrite{Path: "src/a.go", Op: events.OpEdit}); err != nil {
		t.Errorf("Record(file_write) = %v", err)
	}
}
