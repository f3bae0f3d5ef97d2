package events

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
)

// Decision records which rules a prompt included and why, together with everything needed to
// recompute it: the context it evaluated, the rules snapshot it used and the engine version.
//
// A decision is written in full, or against the decision of the turn before it (Base), when
// both used the same rules snapshot: it then holds in Context only the paths that are new or
// whose evidence changed, in Included and Excluded only the outcomes that are new or changed,
// in Gone and Removed what left, and no Diagnostics (a snapshot's diagnostics never change).
// A turn's record then costs what changed in it, not the whole context again. [Decision.Apply]
// rebuilds the full decision; every reader of decisions in this module hands out full ones.
type Decision struct {
	// Turn is the decision's ordinal in the task, from 1.
	Turn int `json:"turn"`
	// Snapshot is the sequence number of the rules_snapshot event whose files were evaluated.
	Snapshot uint64 `json:"snapshot"`
	// Base is the sequence number of the decision this one is written against; 0 when it is
	// written in full.
	Base uint64 `json:"base,omitempty"`
	// Engine is the rule engine version that decided.
	Engine string `json:"engine"`
	// Mode, Provider, Model and OS are the non-path parts of the evaluation context.
	Mode     string `json:"mode,omitempty"`
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	OS       string `json:"os,omitempty"`
	// Context is the candidate paths, sorted by path and root, each with its evidence.
	Context []ContextPath `json:"context"`
	// Gone lists, in a decision written against its base, the base's context paths that are
	// no longer in the context.
	Gone []PathRef `json:"gone,omitempty"`
	// Dropped counts candidate paths left out of the context, by reason.
	Dropped []Count `json:"dropped,omitempty"`
	// Included lists the rules that went into the prompt, sorted by id.
	Included []RuleOutcome `json:"included"`
	// Excluded lists every other rule, sorted by id, each with its reason.
	Excluded []RuleOutcome `json:"excluded"`
	// Removed lists, in a decision written against its base, the ids of the base's rules this
	// decision no longer decides about (their files are gone), sorted.
	Removed []string `json:"removed,omitempty"`
	// Diagnostics are the anomalies found in the rule files, sorted.
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
}

// PathRef names one context path.
type PathRef struct {
	Path string `json:"path"`
	Root string `json:"root,omitempty"`
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
	// Base is the decision this one is written against, 0 for a full one.
	Base uint64 `json:"base,omitempty"`
	// Engine is the rule engine version that decided, as recorded.
	Engine string `json:"engine"`
}

// Head reads a decision event's turn, snapshot, base and engine without decoding its outcomes and context,
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
		return DecisionHead{Turn: d.Turn, Snapshot: d.Snapshot, Base: d.Base, Engine: d.Engine}, nil
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

// readHead reads "turn", "snapshot" and "base", which the canonical encoding writes first as
// plain integers, and "engine" after them, and stops there; a payload written otherwise is
// decoded whole.
func readHead(data []byte) (DecisionHead, error) {
	var h DecisionHead
	rest, ok := data, true
	var turn, snap uint64
	rest, turn, ok = headField(rest, `{"turn":`)
	if ok {
		rest, snap, ok = headField(rest, `,"snapshot":`)
	}
	if ok && turn <= math.MaxInt32 {
		h.Turn, h.Snapshot = int(turn), snap
		if r, base, isBase := headField(rest, `,"base":`); isBase {
			h.Base, rest = base, r
		}
		// A full decision omits base; engine comes next. (No other key of a decision is
		// "base", and inside a string the quotes would be escaped.) An engine spelled with an
		// escape is read by the whole decode.
		engine, isEngine := bytes.CutPrefix(rest, []byte(`,"engine":"`))
		if end := bytes.IndexByte(engine, '"'); isEngine && end >= 0 && bytes.IndexByte(engine[:end], '\\') < 0 &&
			(h.Base != 0 || !bytes.Contains(rest, []byte(`"base":`))) {
			h.Engine = string(engine[:end])
			return h, nil
		}
	}
	// A variable of its own: h, handed to encoding/json, would go to the heap on the fast path too.
	var whole DecisionHead
	if err := json.Unmarshal(data, &whole); err != nil {
		return whole, err
	}
	return whole, nil
}

// headField reads `key` and the decimal integer after it.
func headField(b []byte, key string) (rest []byte, n uint64, ok bool) {
	if !bytes.HasPrefix(b, []byte(key)) {
		return b, 0, false
	}
	b = b[len(key):]
	i := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' && i < 19 {
		n = n*10 + uint64(b[i]-'0')
		i++
	}
	// Plain integers only: no sign, fraction, exponent, leading zero or overflow.
	if i == 0 || i >= len(b) || (b[i] != ',' && b[i] != '}') || (i > 1 && b[0] == '0') {
		return b, 0, false
	}
	return b[i:], n, true
}
