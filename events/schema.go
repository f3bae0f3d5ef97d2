package events

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
)

// An upgrade turns the payload of one schema version into the next version's.
type upgrade func(data []byte) ([]byte, error)

// schema describes one event type: its current version, a constructor for its payload and the
// upgrades from each older version to the next.
type schema struct {
	current  int
	new      func() Payload
	upgrades map[int]upgrade // from version v to v+1
}

// schemas is fixed at compile time: changing the schema is a code change, never runtime state.
var schemas = map[Type]*schema{
	TypeTaskStarted:        {current: 1, new: func() Payload { return &TaskStarted{} }},
	TypeUserMessage:        {current: 1, new: func() Payload { return &UserMessage{} }},
	TypeMention:            {current: 2, new: func() Payload { return &Mention{} }, upgrades: map[int]upgrade{1: upgradeMentionV1}},
	TypeToolCall:           toolCallSchema,
	TypeTabSnapshot:        {current: 1, new: func() Payload { return &TabSnapshot{} }},
	TypeFileWrite:          {current: 1, new: func() Payload { return &FileWrite{} }},
	TypeSettingsChanged:    {current: 1, new: func() Payload { return &SettingsChanged{} }},
	TypeRuleToggled:        {current: 1, new: func() Payload { return &RuleToggled{} }},
	TypeRulesSnapshot:      {current: 1, new: func() Payload { return &RulesSnapshot{} }},
	TypeDecision:           {current: 2, new: func() Payload { return &Decision{} }, upgrades: map[int]upgrade{1: upgradeDecisionV1}},
	TypeRuleTriggered:      {current: 1, new: func() Payload { return &RuleTriggered{} }},
	TypeDelivery:           {current: 1, new: func() Payload { return &Delivery{} }},
	TypeInstructionsLoaded: {current: 1, new: func() Payload { return &InstructionsLoaded{} }},
	TypeCompaction:         {current: 1, new: func() Payload { return &Compaction{} }},
	TypeAgentStopped:       {current: 1, new: func() Payload { return &AgentStopped{} }},
}

// toolCallSchema is the schema of the type most events have, looked up without hashing its name.
var toolCallSchema = &schema{current: 1, new: func() Payload { return &ToolCall{} }}

// schemaOf returns the schema of t.
func schemaOf(t Type) (*schema, bool) {
	if t == TypeToolCall {
		return toolCallSchema, true
	}
	s, ok := schemas[t]
	return s, ok
}

// Types lists the known event types in a fixed order.
func Types() []Type {
	return []Type{TypeTaskStarted, TypeUserMessage, TypeMention, TypeToolCall, TypeTabSnapshot,
		TypeFileWrite, TypeSettingsChanged, TypeRuleToggled, TypeRulesSnapshot, TypeDecision,
		TypeRuleTriggered, TypeDelivery, TypeInstructionsLoaded, TypeCompaction, TypeAgentStopped}
}

func (s *schema) upgrade(t Type, v int, data []byte) ([]byte, error) {
	if v > s.current {
		return nil, fmt.Errorf("%w: %s v%d (this build knows v%d); upgrade tasklog", ErrNewerVersion, t, v, s.current)
	}
	if v < 1 {
		return nil, fmt.Errorf("%w: %s has schema version %d", ErrInvalid, t, v)
	}
	for ; v < s.current; v++ {
		up, ok := s.upgrades[v]
		if !ok {
			return nil, fmt.Errorf("%w: no upgrade of %s from v%d", ErrInvalid, t, v)
		}
		var err error
		if data, err = up(data); err != nil {
			return nil, fmt.Errorf("upgrade %s v%d to v%d: %w", t, v, v+1, err)
		}
	}
	return data, nil
}

// upgradeMentionV1 upgrades a v1 mention, {"path"} holding the already resolved path, to v2,
// which keeps the spelling the user wrote apart from the resolution.
func upgradeMentionV1(data []byte) ([]byte, error) {
	var v1 struct {
		Path string `json:"path"`
	}
	if err := decodeStrict(data, &v1); err != nil {
		return nil, err
	}
	return canonicalJSON(&Mention{Path: v1.Path, Resolved: v1.Path})
}

// upgradeDecisionV1 upgrades a v1 decision, which is always written in full, to v2, which may be
// written against the decision before it (Decision.Base): a v1 payload is a full v2 one.
func upgradeDecisionV1(data []byte) ([]byte, error) { return data, nil }

// decodeStrict decodes one JSON value, rejecting unknown fields and trailing data.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON value")
	}
	return nil
}

// decisionBufs hold the buffers decisions are encoded into; one that grew past
// maxPooledDecision is left to the collector.
var decisionBufs = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxPooledDecision = 1 << 20

// canonicalJSON encodes v compactly, with object keys of maps sorted (encoding/json does that),
// raw JSON fields canonicalized and no HTML escaping, so equal payloads have equal bytes.
func canonicalJSON(v any) ([]byte, error) {
	if p, ok := v.(*Decision); ok {
		// Encoded into a buffer kept for the next one, then copied at its size: a decision
		// written against the one before is often a hundred bytes, a full one many kilobytes.
		buf := decisionBufs.Get().(*[]byte)
		b := p.appendJSON((*buf)[:0])
		out := bytes.Clone(b)
		if cap(b) <= maxPooledDecision {
			*buf = b
			decisionBufs.Put(buf)
		}
		return out, nil
	}
	if p, ok := v.(*ToolCall); ok {
		params, err := Canonicalize(p.Params)
		if err != nil {
			return nil, fmt.Errorf("params: %w", err)
		}
		c := *p
		c.Params = params
		v = &c
	}
	if p, ok := v.(*TaskStarted); ok && len(p.Config) > 0 {
		cfg, err := Canonicalize(p.Config)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		c := *p
		c.Config = cfg
		v = &c
	}
	return marshalNoEscape(v)
}

// Canonicalize rewrites a JSON value in tasklog's canonical form: compact, object keys sorted,
// numbers kept as written, no HTML escaping.
func Canonicalize(raw []byte) ([]byte, error) {
	v, err := DecodeJSON(raw)
	if err != nil {
		return nil, err
	}
	return marshalNoEscape(v)
}

// DecodeJSON decodes exactly one JSON value into maps, slices and scalars, keeping numbers as
// written (json.Number), so that re-encoding loses nothing.
func DecodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, fmt.Errorf("trailing data after the JSON value")
	}
	return v, nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
