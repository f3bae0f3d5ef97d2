package rules

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Toggles enable and disable rules by ID; a rule absent from the map is enabled.
type Toggles map[string]bool

// Reason codes of a [Result]. They are stable: recorded decisions and tests compare them.
const (
	ReasonAlways          = "always"           // included: no condition
	ReasonMatched         = "matched"          // included: every condition held
	ReasonMentioned       = "mentioned"        // included: a manual rule the user named
	ReasonOnRequest       = "on_request"       // listed by description; body via rule://
	ReasonManual          = "manual"           // included only when mentioned by name
	ReasonStream          = "stream_triggered" // registered as a stream trigger, not in the prompt
	ReasonNoEvidence      = "no_evidence"      // scoped, and no candidate path in the context
	ReasonNoMatch         = "no_match"         // scoped, and no candidate path matches
	ReasonConditionFailed = "condition_failed" // a mode/provider/model/os condition failed
	ReasonToggledOff      = "toggled_off"      // disabled by a toggle
	ReasonShadowed        = "shadowed"         // a higher-precedence rule has the same name
	ReasonDuplicate       = "duplicate_of"     // an included rule has the same text: it goes into the prompt once
	ReasonEmpty           = "empty"            // no body to include
	ReasonInvalid         = "invalid"          // binary or unreadable
)

// Decision is the outcome of evaluating a rule set against a context.
type Decision struct {
	// EngineVersion is the [EngineVersion] that decided.
	EngineVersion string `json:"engine_version"`
	// Results has one entry per rule, sorted by rule ID.
	Results []Result `json:"results"`
	// Diagnostics are every rule's diagnostics and the set's own, sorted by file and line.
	// The slice is shared with the rule set: treat it as read-only.
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
}

// Result is the decision about one rule, with its reason.
type Result struct {
	// Rule is the rule decided about.
	Rule *Rule
	// Included reports whether the rule's body goes into the prompt.
	Included bool
	// Listed reports whether the rule is listed by name and description (on request).
	Listed bool
	// Reason is a stable code: one of the Reason constants.
	Reason string
	// Detail says the same for a person.
	Detail string
	// Matches is the evidence of the conditions that held, at most [MaxMatchesPerRule].
	Matches []Match
	// ShadowedBy is the ID of the rule that shadows this one, or, for a [ReasonDuplicate]
	// result, of the included rule with the same text.
	ShadowedBy string
}

// MarshalJSON records the rule by ID and name rather than in full: a decision refers to the
// rule set snapshot it was made from.
func (r Result) MarshalJSON() ([]byte, error) {
	type out struct {
		RuleID     string   `json:"rule_id"`
		Name       string   `json:"name"`
		Category   Category `json:"category"`
		Included   bool     `json:"included"`
		Listed     bool     `json:"listed,omitempty"`
		Reason     string   `json:"reason"`
		Detail     string   `json:"detail"`
		Matches    []Match  `json:"matches,omitempty"`
		ShadowedBy string   `json:"shadowed_by,omitempty"`
	}
	return json.Marshal(out{r.Rule.ID, r.Rule.Name, r.Rule.Category, r.Included, r.Listed, r.Reason, r.Detail, r.Matches, r.ShadowedBy})
}

// Evaluate decides every rule against the context. It is pure and deterministic: the same
// rule set, context and toggles give the same Decision.
func (rs *RuleSet) Evaluate(ctx EvaluationContext, t Toggles) Decision {
	return rs.EvaluateAfter(Decision{}, nil, ctx, t)
}

// EvaluateAfter is Evaluate for a caller that decides again and again, as a session does after
// every tool call: it gives the same Decision, made with less new memory. last is the
// caller's previous decision, or a zero Decision: a rule's matches that are equal to the ones
// last holds for it are last's (matches are only ever read; a result of another rule set is
// not looked at). into, when it can hold a result for every rule, is the array the results are
// written in: the caller no longer uses what it holds (an into that is last's own array is not
// written in).
func (rs *RuleSet) EvaluateAfter(last Decision, into []Result, ctx EvaluationContext, t Toggles) Decision {
	return rs.EvaluateLent(last, into, nil, ctx, t)
}

// EvaluateLent is EvaluateAfter writing a rule's new matches (those not equal to last's) into
// arrays the caller lends: lend(n) returns an empty array with room for n matches that nothing
// reads any more, or nil when it has none (a new array is made then). An array lent is the
// decision's from then on. A nil lend is EvaluateAfter.
func (rs *RuleSet) EvaluateLent(last Decision, into []Result, lend func(n int) []Match, ctx EvaluationContext, t Toggles) Decision {
	return rs.EvaluateLentAs(EngineVersion, last, into, lend, ctx, t)
}

// EvaluateLentAs is EvaluateLent deciding as the engine version named decided, and naming it in
// the Decision: EngineV1, EngineV2 and EngineV3 read some files otherwise (see As), and EngineV1 also
// includes no manual rule for a mention of its file and has no DiagDuplicateKey diagnostics.
// A version this package does not know decides as EngineVersion, and the Decision names
// EngineVersion. The results of an earlier version may point to rules of its own reading, not
// to those Rules returns.
func (rs *RuleSet) EvaluateLentAs(engine string, last Decision, into []Result, lend func(n int) []Match, ctx EvaluationContext, t Toggles) Decision {
	switch engine {
	case EngineV1, EngineV2, EngineV3:
	default:
		engine = EngineVersion
	}
	if as := rs.As(engine); as != rs {
		return as.EvaluateLentAs(engine, last, into, lend, ctx, t)
	}
	sc := scratchPool.Get().(*scratch)
	defer sc.release()
	// The state and the context it reads live in the scratch: evaluators are function values,
	// through which both would go to the heap at every evaluation.
	sc.ctx = ctx
	st := &sc.state
	*st = evalState{ctx: &sc.ctx, scratch: sc, lend: lend, v1: engine == EngineV1}
	// Candidates are named here and prepared for matching (split into segments) only when the
	// rule set does not remember what they match (see collectHits).
	st.candidates = slices.Grow(sc.candidates[:0], len(ctx.Paths))
	for i, p := range ctx.Paths {
		if p.Path == "" {
			continue
		}
		st.candidates = append(st.candidates, candidate{path: foldSlashes(p.Path), root: p.Root, index: i})
	}
	sc.candidates = st.candidates
	if cap(into) < len(rs.rules) || cap(into) > 0 && cap(last.Results) > 0 && &into[:1][0] == &last.Results[:1][0] {
		into = make([]Result, len(rs.rules))
	}
	d := Decision{EngineVersion: engine, Results: into[:len(rs.rules)]}
	if len(last.Results) != len(rs.rules) {
		last.Results = nil
	}
	hits := rs.collectHits(st)
	for i, r := range rs.rules {
		n := 0
		for n < len(hits) && int(hits[n].rule) == i {
			n++
		}
		st.ruleHits, hits = hits[:n], hits[n:]
		st.last = nil
		if last.Results != nil && last.Results[i].Rule == r {
			st.last = last.Results[i].Matches
		}
		d.Results[i] = rs.decide(r, st, t)
	}
	rs.dedupe(d.Results)
	d.Diagnostics = rs.allDiagnostics
	if st.v1 {
		d.Diagnostics = rs.diagnosticsV1
	}
	return d
}

func (rs *RuleSet) decide(r *Rule, st *evalState, t Toggles) Result {
	res := Result{Rule: r, ShadowedBy: r.ShadowedBy}
	switch {
	case r.Unusable == "empty":
		return res.with(ReasonEmpty, "the rule has no body")
	case r.Unusable != "":
		return res.with(ReasonInvalid, "the file is "+r.Unusable)
	case r.ShadowedBy != "":
		return res.with(ReasonShadowed, "shadowed by "+r.ShadowedBy+", a rule of the same name with higher precedence")
	case !r.AlwaysEnabled && t != nil && isOff(t, r.ID):
		return res.with(ReasonToggledOff, "disabled by its toggle")
	}
	// The conditions' matches are gathered in the scratch, then kept as the last decision's
	// when they are equal, copied otherwise.
	matches := st.scratch.matches[:0]
	defer func() { st.scratch.matches = matches[:0] }()
	pathReason := ""
	for i := range r.Conditions {
		c := &r.Conditions[i]
		st.condIdx = i
		ok, m, why := evaluators[c.Key](c, st, matches)
		matches = m
		if ok {
			continue
		}
		res.Matches = nil
		if c.Key != CondPaths {
			return res.with(ReasonConditionFailed, why)
		}
		pathReason = ReasonNoMatch
		if strings.HasPrefix(why, "no candidate path in") {
			pathReason = ReasonNoEvidence
		}
		return res.with(pathReason, why)
	}
	res.Matches = st.keep(matches)
	switch r.Category {
	case CategoryStream:
		return res.with(ReasonStream, fmt.Sprintf("registered as a stream trigger on %s", r.Trigger.Pattern))
	case CategoryOnRequest:
		res.Listed = true
		return res.with(ReasonOnRequest, "listed by its description; the model reads it through "+r.Address())
	case CategoryManual:
		if slices.Contains(st.ctx.Rules, r.Name) {
			res.Included = true
			return res.with(ReasonMentioned, "mentioned by name")
		}
		res.Matches = nil
		if st.v1 {
			return res.with(ReasonManual, "applies only when mentioned by name")
		}
		if i, ok := mentionedFile(st.ctx.Paths, r); ok {
			p := &st.ctx.Paths[i]
			matches = append(matches, Match{Condition: MatchMentioned, Pattern: r.Path, Path: p.Path, Root: p.Root, Sources: p.Sources})
			res.Included, res.Matches = true, st.keep(matches)
			return res.with(ReasonMentioned, "its file was mentioned")
		}
		return res.with(ReasonManual, "applies only when mentioned, by name or by its file")
	}
	res.Included = true
	if len(r.Conditions) == 0 {
		return res.with(ReasonAlways, "applies to every request")
	}
	return res.with(ReasonMatched, rs.details.describe(r, res.Matches))
}

// mentionedFile finds the context path that is r's own file, in r's root, when an @mention put
// it there (a mention among its sources): a manual rule the user named by its file.
func mentionedFile(paths []ContextPath, r *Rule) (int, bool) {
	if r.Root == "" {
		return 0, false // a rule outside the workspace is no context path
	}
	i, ok := contextPath(paths, r.Root, r.Path)
	if ok && slices.ContainsFunc(paths[i].Sources, func(s Source) bool { return s.Kind == SourceMention }) {
		return i, true
	}
	return 0, false
}

// SameMentionEvidence reports whether a and b hold the same evidence for the files of the set's
// manual rules, which alone can change a manual rule's outcome and matches: a caller that
// knows two contexts to hold the same paths may then take the outcomes of one for the other.
func (rs *RuleSet) SameMentionEvidence(a, b EvaluationContext) bool {
	for _, r := range rs.manual {
		ia, oka := contextPath(a.Paths, r.Root, r.Path)
		ib, okb := contextPath(b.Paths, r.Root, r.Path)
		if oka != okb || oka && !slices.Equal(a.Paths[ia].Sources, b.Paths[ib].Sources) {
			return false
		}
	}
	return true
}

// contextPath finds the path of root in paths, sorted by path.
func contextPath(paths []ContextPath, root, path string) (int, bool) {
	i, _ := slices.BinarySearchFunc(paths, path, func(p ContextPath, path string) int { return cmp.Compare(p.Path, path) })
	for ; i < len(paths) && paths[i].Path == path; i++ {
		if paths[i].Root == root {
			return i, true
		}
	}
	return 0, false
}

// keep returns matches, gathered in the scratch, as memory of their own: the last decision's
// matches of the rule when they are equal, a copy otherwise (in an array lent, when there is one).
func (st *evalState) keep(matches []Match) []Match {
	if len(matches) == 0 {
		return nil
	}
	if slices.EqualFunc(st.last, matches, sameMatch) {
		return st.last
	}
	if st.lend != nil {
		if a := st.lend(len(matches)); cap(a) >= len(matches) {
			return append(a[:0], matches...)
		}
	}
	return slices.Clone(matches)
}

// sameMatch reports whether two matches are equal, their evidence element by element.
func sameMatch(a, b Match) bool {
	return a.Condition == b.Condition && a.Pattern == b.Pattern && a.Path == b.Path && a.Root == b.Root &&
		a.Below == b.Below && slices.Equal(a.Sources, b.Sources)
}

// scratch is what an evaluation needs only while it runs: the candidates and the hits. It is
// kept in scratchPool for the next evaluation, of any rule set, so that a decision does not
// make it anew.
type scratch struct {
	candidates []candidate
	found      [][]memoHit
	known      []bool
	hits       []hit
	start      []int32
	ordered    []hit
	// matches gathers a rule's matches before they are kept (see keep).
	matches []Match
	// state and ctx are the evaluation's (see EvaluateLentAs).
	state evalState
	ctx   EvaluationContext
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// maxScratch bounds the candidates and hits a scratch keeps for the next evaluation: one of a
// huge context is not held on to.
const maxScratch = 1 << 14

// release empties the scratch of what it points to and gives it back to the pool.
func (sc *scratch) release() {
	if cap(sc.candidates) > maxScratch || cap(sc.hits) > maxScratch || cap(sc.ordered) > maxScratch || cap(sc.start) > 4*maxScratch ||
		cap(sc.matches) > maxScratch {
		return
	}
	clear(sc.candidates[:cap(sc.candidates)])
	clear(sc.matches[:cap(sc.matches)])
	clear(sc.found[:cap(sc.found)])
	sc.state, sc.ctx = evalState{}, EvaluationContext{}
	scratchPool.Put(sc)
}

// detailMemo remembers, per rule, what its last description read of its matches and that
// description: from one turn to the next a rule mostly matches the same paths with the same
// patterns.
type detailMemo struct {
	mu   sync.Mutex
	last map[*Rule]described
}

// described is what describeMatches reads of matches, their number and the first
// describedMatches of them, with the description it wrote. It holds no memory of the matches'
// own, so that remembering it costs no copy of them.
type described struct {
	n      int
	head   [describedMatches]describedMatch
	detail string
}

// describedMatch is what describeMatches reads of one match.
type describedMatch struct {
	condition, pattern, path string
	below                    bool
}

// describedMatches is how many matches describeMatches names; the others it counts.
const describedMatches = 3

func describedOf(ms []Match) described {
	d := described{n: len(ms)}
	for i, m := range ms[:min(len(ms), describedMatches)] {
		d.head[i] = describedMatch{m.Condition, m.Pattern, m.Path, m.Below}
	}
	return d
}

func (dm *detailMemo) describe(r *Rule, ms []Match) string {
	key := describedOf(ms)
	dm.mu.Lock()
	defer dm.mu.Unlock()
	if d, ok := dm.last[r]; ok && d.n == key.n && d.head == key.head {
		return d.detail
	}
	if dm.last == nil {
		dm.last = map[*Rule]described{}
	}
	key.detail = describeMatches(ms)
	dm.last[r] = key
	return key.detail
}

func isOff(t Toggles, id string) bool {
	on, ok := t[id]
	return ok && !on
}

func (r Result) with(reason, detail string) Result {
	r.Reason, r.Detail = reason, detail
	return r
}

func describeMatches(ms []Match) string {
	// One buffer, no fmt: this runs for every included rule of every decision.
	b := make([]byte, 0, 64*min(len(ms), describedMatches)+16)
	for i, m := range ms {
		if i == describedMatches && len(ms) > describedMatches {
			b = append(b, "; and "...)
			b = strconv.AppendInt(b, int64(len(ms)-describedMatches), 10)
			b = append(b, " more"...)
			break
		}
		if i > 0 {
			b = append(b, "; "...)
		}
		b = append(b, m.Condition...)
		switch {
		case m.Below:
			b = strconv.AppendQuote(append(b, ' '), m.Pattern)
			b = append(append(b, " could match below "...), m.Path...)
		case m.Path != "":
			b = strconv.AppendQuote(append(b, ' '), m.Pattern)
			b = append(append(b, " matched "...), m.Path...)
		default:
			b = append(append(b, " is "...), m.Pattern...)
		}
	}
	return string(b)
}

// Included returns the results whose rules go into the prompt, in rule ID order.
func (d Decision) Included() []Result {
	var out []Result
	for _, r := range d.Results {
		if r.Included {
			out = append(out, r)
		}
	}
	return out
}
