package events

import "fmt"

// A decision is most of a log's bytes (its context's evidence and its rules' matches), and
// every reader of a past decision decodes it: an explanation, a what-if's recorded side, the
// web app's pages. decision reads it as decodeFast reads the other payloads, without reflection,
// and with the same promise: what it accepts, encoding/json reads the same way; anything else
// (a key spelled otherwise or given twice, a null, a negative count, an escape it is not sure
// of) goes to encoding/json.

// decision reads a Decision into v. It never uses the Decoder's memory: a caller keeps the
// decisions it reads (the base of the next delta, an explanation), which a Decoder's reused
// payloads do not allow. Without withContext, the context's paths are read without their
// evidence, which is checked as decodeStrict would read it but not built (each Sources stays
// nil).
func (s *fastScanner) decision(v *Decision, withContext bool) bool {
	contextPath := (*fastScanner).contextPathOnly
	if withContext {
		contextPath = (*fastScanner).contextPath
	}
	return s.object(func(k []byte) bool {
		switch string(k) {
		case "turn":
			return s.once(0) && s.int(&v.Turn)
		case "snapshot":
			return s.once(1) && s.uint(&v.Snapshot, 64)
		case "base":
			return s.once(2) && s.uint(&v.Base, 64)
		case "engine":
			return s.once(3) && s.str(&v.Engine)
		case "mode":
			return s.once(4) && s.str(&v.Mode)
		case "provider":
			return s.once(5) && s.str(&v.Provider)
		case "model":
			return s.once(6) && s.str(&v.Model)
		case "os":
			return s.once(7) && s.str(&v.OS)
		case "context":
			return s.once(8) && objects(s, &v.Context, contextPath)
		case "gone":
			return s.once(9) && objects(s, &v.Gone, (*fastScanner).pathRef)
		case "dropped":
			return s.once(10) && objects(s, &v.Dropped, (*fastScanner).count)
		case "included":
			return s.once(11) && objects(s, &v.Included, (*fastScanner).outcome)
		case "excluded":
			return s.once(12) && objects(s, &v.Excluded, (*fastScanner).outcome)
		case "removed":
			return s.once(13) && s.strs(&v.Removed)
		case "diagnostics":
			return s.once(14) && objects(s, &v.Diagnostics, (*fastScanner).diagnostic)
		}
		return false
	})
}

// sourcesShape is the shape of a context path's evidence.
var sourcesShape = decisionShape.fields["context"].shape.elem.fields["sources"].shape

// contextPathOnly is contextPath without building the path's evidence: it is checked against
// its shape (see shaped), and Sources stays nil.
func (s *fastScanner) contextPathOnly(v *ContextPath, k []byte) bool {
	if string(k) != "sources" {
		return s.contextPath(v, k)
	}
	if !s.once(2) {
		return false
	}
	seen := s.seen
	ok := s.shaped(sourcesShape, 3)
	s.seen = seen
	return ok
}

func (s *fastScanner) contextPath(v *ContextPath, k []byte) bool {
	switch string(k) {
	case "path":
		return s.once(0) && s.str(&v.Path)
	case "root":
		return s.once(1) && s.str(&v.Root)
	case "sources":
		return s.once(2) && objects(s, &v.Sources, (*fastScanner).source)
	}
	return false
}

func (s *fastScanner) source(v *Source, k []byte) bool {
	switch string(k) {
	case "kind":
		return s.once(0) && s.str(&v.Kind)
	case "seq":
		return s.once(1) && s.uint(&v.Seq, 64)
	case "turn":
		return s.once(2) && s.int(&v.Turn)
	case "detail":
		return s.once(3) && s.str(&v.Detail)
	}
	return false
}

func (s *fastScanner) pathRef(v *PathRef, k []byte) bool {
	return s.key(k, "path", 0) && s.str(&v.Path) || s.key(k, "root", 1) && s.str(&v.Root)
}

func (s *fastScanner) count(v *Count, k []byte) bool {
	return s.key(k, "name", 0) && s.str(&v.Name) || s.key(k, "n", 1) && s.int(&v.N)
}

func (s *fastScanner) outcome(v *RuleOutcome, k []byte) bool {
	switch string(k) {
	case "id":
		return s.once(0) && s.str(&v.ID)
	case "name":
		return s.once(1) && s.str(&v.Name)
	case "category":
		return s.once(2) && s.str(&v.Category)
	case "source":
		return s.once(3) && s.str(&v.Source)
	case "path":
		return s.once(4) && s.str(&v.Path)
	case "reason":
		return s.once(5) && s.str(&v.Reason)
	case "detail":
		return s.once(6) && s.str(&v.Detail)
	case "matched":
		return s.once(7) && objects(s, &v.Matches, (*fastScanner).match)
	case "shadowed_by":
		return s.once(8) && s.str(&v.ShadowedBy)
	}
	return false
}

func (s *fastScanner) match(v *Match, k []byte) bool {
	switch string(k) {
	case "condition":
		return s.once(0) && s.str(&v.Condition)
	case "pattern":
		return s.once(1) && s.str(&v.Pattern)
	case "path":
		return s.once(2) && s.str(&v.Path)
	case "root":
		return s.once(3) && s.str(&v.Root)
	}
	return false
}

func (s *fastScanner) diagnostic(v *Diagnostic, k []byte) bool {
	switch string(k) {
	case "rule":
		return s.once(0) && s.str(&v.Rule)
	case "file":
		return s.once(1) && s.str(&v.File)
	case "line":
		return s.once(2) && s.int(&v.Line)
	case "severity":
		return s.once(3) && s.str(&v.Severity)
	case "code":
		return s.once(4) && s.str(&v.Code)
	case "message":
		return s.once(5) && s.str(&v.Message)
	}
	return false
}

// DecisionOutcomes decodes a decision event as Payload does, but leaves out the evidence of its
// context's paths (each path's Sources is nil): what a reader of the rules' outcomes needs (an
// audit, a what-if, the counts of the rules), without building most of a decision's bytes.
// The paths and the gone paths are kept, so that Decision.Apply still checks a delta against
// its base. The outcomes are those the event records: a decision written against the one
// before holds only what changed (see Decision.Apply). A decision of another schema version,
// or one the fast reader leaves to encoding/json, is decoded whole and its evidence dropped.
func DecisionOutcomes(e Event) (*Decision, error) {
	if e.Type != TypeDecision {
		return nil, fmt.Errorf("event %s: %w: not a decision", e, ErrInvalid)
	}
	if e.V == schemas[TypeDecision].current {
		s := fastScanner{b: e.Data}
		v := new(Decision)
		if s.decision(v, false) && s.end() {
			if err := v.validate(); err != nil {
				return nil, fmt.Errorf("event %s: %w: %v", e, ErrInvalid, err)
			}
			return v, nil
		}
	}
	p, err := e.Payload()
	if err != nil {
		return nil, err
	}
	d := p.(*Decision)
	for i := range d.Context {
		d.Context[i].Sources = nil
	}
	return d, nil
}
