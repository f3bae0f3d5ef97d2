package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Decision records which rules a prompt included and why, together with everything needed to
// recompute it: the context it evaluated, the rules snapshot it used and the engine version.
type Decision struct {
	// Turn is the decision's ordinal in the task, from 1.
	Turn int `json:"turn"`
	// Snapshot is the sequence number of the rules_snapshot event whose files were evaluated.
	Snapshot uint64 `json:"snapshot"`
	// Engine is the rule engine version that decided.
	Engine string `json:"engine"`
	// Mode, Provider, Model and OS are the non-path parts of the evaluation context.
	Mode     string `json:"mode,omitempty"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	OS       string `json:"os,omitempty"`
	// Context is the candidate paths, sorted, each with its evidence.
	Context []ContextPath `json:"context"`
	// Dropped counts candidate paths left out of the context, by reason.
	Dropped []Count `json:"dropped,omitempty"`
	// Included lists the rules that went into the prompt, sorted by id.
	Included []RuleOutcome `json:"included"`
	// Excluded lists every other rule, sorted by id, each with its reason.
	Excluded []RuleOutcome `json:"excluded"`
	// Diagnostics are the anomalies found in the rule files, sorted.
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
}

// ContextPath is one candidate path of a decision's context.
type ContextPath struct {
	Path    string   `json:"path"`
	Root    string   `json:"root,omitempty"`
	Sources []Source `json:"sources"`
}

// Source is one piece of evidence for a context path.
type Source struct {
	Kind   string `json:"kind"`
	Seq    uint64 `json:"seq"`
	Turn   int    `json:"turn"`
	Detail string `json:"detail,omitempty"`
}

// Count is a named counter.
type Count struct {
	Name string `json:"name"`
	N    int    `json:"n"`
}

// RuleOutcome is what a decision concluded about one rule.
type RuleOutcome struct {
	ID         string  `json:"id"`
	Name       string  `json:"name"`
	Category   string  `json:"category"`
	Source     string  `json:"source,omitempty"`
	Path       string  `json:"path,omitempty"`
	Reason     string  `json:"reason"`
	Detail     string  `json:"detail,omitempty"`
	Matches    []Match `json:"matched,omitempty"`
	ShadowedBy string  `json:"shadowed_by,omitempty"`
}

// Match is a condition that passed: which pattern matched which candidate path. The evidence
// for the path is in the decision's Context (see Decision.SourcesOf), recorded once.
type Match struct {
	Condition string `json:"condition"`
	Pattern   string `json:"pattern,omitempty"`
	Path      string `json:"path,omitempty"`
	Root      string `json:"root,omitempty"`
}

// SourcesOf is the evidence the decision's context holds for a path of a root.
func SourcesOf(context []ContextPath, root, path string) []Source {
	for _, p := range context {
		if p.Path == path && p.Root == root {
			return p.Sources
		}
	}
	return nil
}

// Diagnostic is an anomaly in a rule file.
type Diagnostic struct {
	Rule     string `json:"rule,omitempty"`
	File     string `json:"file,omitempty"`
	Line     int    `json:"line,omitempty"`
	Severity string `json:"severity,omitempty"`
	Code     string `json:"code,omitempty"`
	Message  string `json:"message"`
}

// EventType implements Payload.
func (*Decision) EventType() Type { return TypeDecision }

func (p *Decision) validate() error {
	if p.Turn < 1 {
		return errors.New("turn must be at least 1")
	}
	if p.Context == nil {
		p.Context = []ContextPath{}
	}
	if p.Included == nil {
		p.Included = []RuleOutcome{}
	}
	if p.Excluded == nil {
		p.Excluded = []RuleOutcome{}
	}
	return nil
}

// DecisionHead is the part of a decision a fold needs.
type DecisionHead struct {
	Turn     int    `json:"turn"`
	Snapshot uint64 `json:"snapshot"`
}

// Head reads a decision event's turn and snapshot without decoding its outcomes and context,
// which are most of its bytes and which a fold never looks at. A decision of another schema
// version goes through the full, upgrading decode.
func Head(e Event) (DecisionHead, error) {
	if e.Type != TypeDecision {
		return DecisionHead{}, fmt.Errorf("event %s: %w: not a decision", e, ErrInvalid)
	}
	if e.V != schemas[TypeDecision].current {
		p, err := e.Payload()
		if err != nil {
			return DecisionHead{}, err
		}
		d := p.(*Decision)
		return DecisionHead{Turn: d.Turn, Snapshot: d.Snapshot}, nil
	}
	h, err := readHead(e.Data)
	if err != nil {
		return DecisionHead{}, fmt.Errorf("event %s: payload: %w: %v", e, ErrInvalid, err)
	}
	if h.Turn < 1 {
		return DecisionHead{}, fmt.Errorf("event %s: %w: turn must be at least 1", e, ErrInvalid)
	}
	return h, nil
}

// readHead reads "turn" and "snapshot", which the canonical encoding writes first, and stops
// there; a payload with its keys in another order is decoded whole.
func readHead(data []byte) (DecisionHead, error) {
	var h DecisionHead
	dec := json.NewDecoder(bytes.NewReader(data))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return h, fmt.Errorf("not a JSON object")
	}
	for _, want := range []string{"turn", "snapshot"} {
		key, err := dec.Token()
		if err != nil || key != want {
			return h, json.Unmarshal(data, &h)
		}
		dst := any(&h.Turn)
		if want == "snapshot" {
			dst = &h.Snapshot
		}
		if err := dec.Decode(dst); err != nil {
			return h, err
		}
	}
	return h, nil
}
