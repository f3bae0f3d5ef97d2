package session

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/tasklog/tasklog/events"
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
	res, err := s.append(ctx, p)
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
	if _, err := ev.Payload(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	res, err := s.appendEvents(ctx, []events.Event{{Type: ev.Type, V: ev.V, Data: ev.Data, Time: ev.Time, Origin: ev.Origin}})
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
