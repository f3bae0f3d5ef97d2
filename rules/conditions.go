package rules

import (
	"fmt"
	"slices"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
)

// The condition keys an evaluator is registered for.
const (
	CondPaths    = "paths"    // a candidate path matches a pattern
	CondMode     = "mode"     // the agent's mode is one of the values ("act", "plan")
	CondProvider = "provider" // the model provider is one of the values
	CondModel    = "model"    // the model id matches one of the value globs
	CondOS       = "os"       // the operating system is one of the values
)

// MatchMentioned is the Condition of the match of a manual rule whose file the user mentioned
// (a Cursor attachment of the rule, an @path of its file): Pattern is the rule's file, Path the
// context path that is that file, Sources the path's evidence. No evaluator is registered for it.
const MatchMentioned = "mentioned"

// MaxMatchesPerRule bounds the matches a result records, so that one "**/*" rule over a
// hundred candidate paths does not bloat every recorded decision.
const MaxMatchesPerRule = 32

// Match is one piece of evidence that a condition held.
type Match struct {
	// Condition is the condition key ("paths", "mode", ...).
	Condition string `json:"condition"`
	// Pattern is the value of the condition that matched, as written.
	Pattern string `json:"pattern"`
	// Path is the candidate path that matched (paths only).
	Path string `json:"path,omitempty"`
	// Root is the workspace root of Path.
	Root string `json:"root,omitempty"`
	// Below is set when Path is a directory and the pattern matches a path below it rather
	// than the directory itself.
	Below bool `json:"below,omitempty"`
	// Sources is the evidence for Path, as the context recorded it. It shares the context's
	// backing array (or, from EvaluateAfter, an earlier context's with the same evidence):
	// treat it as read-only.
	Sources []Source `json:"sources,omitempty"`
}

// evalState is what evaluators see: the context, prepared once per evaluation.
type evalState struct {
	ctx        *EvaluationContext
	candidates []candidate
	ruleHits   []hit // the current rule's path hits
	condIdx    int   // the current condition's position in its rule
	scratch    *scratch
	last       []Match // the current rule's matches in the last decision, if any
	// lend lends arrays for new matches (see RuleSet.EvaluateLent); nil makes new ones.
	lend func(n int) []Match
	// v1 decides as EngineV1 did (see RuleSet.EvaluateLentAs).
	v1 bool
}

// hasCandidates reports whether some candidate may be matched by a condition of that root.
func (st *evalState) hasCandidates(root string) bool {
	for i := range st.candidates {
		if r := st.candidates[i].root; root == "" || r == "" || r == root {
			return true
		}
	}
	return false
}

// evaluator decides one condition. It returns whether the condition held, the evidence, and
// a human sentence for a failure.
type evaluator func(c *Condition, st *evalState, out []Match) (bool, []Match, string)

// evaluators is the registry of conditionals, AND-ed by [RuleSet.Evaluate]. A key without an
// evaluator never becomes a Condition (it is reported as unknown at load time).
var evaluators = map[string]evaluator{
	CondPaths:    evalPaths,
	CondMode:     evalMode,
	CondProvider: evalProvider,
	CondModel:    evalModel,
	CondOS:       evalOS,
}

// evalPaths reads the hits the evaluation collected for this condition through the pattern
// index (see collectHits), in pattern then candidate order.
func evalPaths(c *Condition, st *evalState, out []Match) (bool, []Match, string) {
	if len(c.patterns) == 0 {
		return false, out, "the rule lists no usable pattern, so it never applies"
	}
	n := 0 // the condition's hits: the matches are made in one allocation
	for _, h := range st.ruleHits {
		if int(h.cond) == st.condIdx {
			n++
		}
	}
	out = slices.Grow(out, min(n, max(MaxMatchesPerRule-len(out), 0)))
	any := false
	for _, h := range st.ruleHits {
		if int(h.cond) != st.condIdx {
			continue
		}
		any = true
		if len(out) < MaxMatchesPerRule {
			cp := &st.ctx.Paths[st.candidates[h.cand].index]
			out = append(out, Match{Condition: CondPaths, Pattern: c.patterns[h.pat].Raw, Path: cp.Path, Root: cp.Root, Below: h.below, Sources: cp.Sources})
		}
	}
	if any {
		return true, out, ""
	}
	if !st.hasCandidates(c.Root) {
		return false, out, "no candidate path in the context"
	}
	return false, out, c.noMatch
}

func evalMode(c *Condition, st *evalState, out []Match) (bool, []Match, string) {
	return evalOneOf(c, st.ctx.Mode, out, strings.EqualFold)
}

func evalProvider(c *Condition, st *evalState, out []Match) (bool, []Match, string) {
	return evalOneOf(c, st.ctx.Provider, out, strings.EqualFold)
}

func evalOS(c *Condition, st *evalState, out []Match) (bool, []Match, string) {
	return evalOneOf(c, st.ctx.OS, out, func(v, have string) bool { return normalizeOS(v) == normalizeOS(have) })
}

// evalModel matches model globs case-insensitively against the whole id and against its
// last "/" segment, so "claude-*" matches "anthropic/claude-sonnet-4-5".
func evalModel(c *Condition, st *evalState, out []Match) (bool, []Match, string) {
	have := strings.ToLower(st.ctx.Model)
	short := have
	if i := strings.LastIndexByte(have, '/'); i >= 0 {
		short = have[i+1:]
	}
	return evalOneOf(c, st.ctx.Model, out, func(v, _ string) bool {
		v = strings.ToLower(strings.TrimSpace(v))
		if v == have || v == short {
			return true
		}
		ok, err := doublestar.Match(v, have)
		if err == nil && !ok && short != have {
			ok, _ = doublestar.Match(v, short)
		}
		return ok
	})
}

func evalOneOf(c *Condition, have string, out []Match, eq func(v, have string) bool) (bool, []Match, string) {
	if have == "" {
		return false, out, fmt.Sprintf("%s is unknown; the rule requires %s", c.Key, strings.Join(c.Values, " or "))
	}
	for _, v := range c.Values {
		if eq(v, have) {
			return true, append(out, Match{Condition: c.Key, Pattern: v, Path: ""}), ""
		}
	}
	if len(c.Values) == 0 {
		return false, out, fmt.Sprintf("%s lists no value, so the rule never applies", c.Key)
	}
	return false, out, fmt.Sprintf("%s is %q; the rule requires %s", c.Key, have, strings.Join(c.Values, " or "))
}

func normalizeOS(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	switch s {
	case "mac", "macos", "osx", "darwin":
		return "darwin"
	case "win", "win32", "win64", "windows":
		return "windows"
	}
	return s
}

// compileConditionValues turns a frontmatter value into condition operands: a string (when
// commaOK, split at top-level commas) or a list of strings. ok is false for a wrong type.
func compileConditionValues(v any, commaOK bool) (vals []string, wasString, ok bool) {
	switch x := v.(type) {
	case string:
		if !commaOK {
			return nil, true, false
		}
		for _, part := range splitTopLevel(x, ',') {
			vals = append(vals, strings.TrimSpace(part))
		}
		return vals, true, true
	case []any:
		for _, e := range x {
			s, isStr := e.(string)
			if !isStr {
				return nil, false, false
			}
			vals = append(vals, s)
		}
		return vals, false, true
	}
	return nil, false, false
}

// sortConditions puts conditions in evaluation order: cheap ones first, paths last.
func sortConditions(cs []Condition) {
	order := func(k string) int {
		return slices.Index([]string{CondMode, CondProvider, CondModel, CondOS, CondPaths}, k)
	}
	slices.SortStableFunc(cs, func(a, b Condition) int { return order(a.Key) - order(b.Key) })
}
