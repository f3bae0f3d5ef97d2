package rules

import (
	"fmt"
	"regexp"
	"strings"
)

// metadataKeys are common descriptive keys: read by no evaluator, but not anomalies worth a
// warning either.
var metadataKeys = map[string]bool{"title": true, "name": true, "author": true, "version": true,
	"tags": true, "category": true}

// builder normalizes one file into a Rule.
type builder struct {
	r     *Rule
	f     *File
	class fileClass
	fm    *Frontmatter
	pats  func(string) *Pattern
	read  map[string]bool // keys consumed
	// anchor, when set, is the folder the file's patterns are written relative to (a nested
	// .cursor/rules folder's): they are anchored there (see anchorPattern).
	anchor string
}

func (b *builder) diag(line int, sev Severity, code, msg string) {
	b.r.Diagnostics = append(b.r.Diagnostics, Diagnostic{RuleID: b.r.ID, File: b.f.label(), Line: line,
		Severity: sev, Code: code, Message: msg})
}

func (b *builder) field(key string) (Field, bool) {
	f, ok := b.fm.Lookup(key)
	if ok {
		b.read[key] = true
	}
	return f, ok
}

func (b *builder) stringField(key string) (string, int, bool) {
	f, ok := b.field(key)
	if !ok || f.Value == nil {
		return "", f.Line, false
	}
	switch v := f.Value.(type) {
	case string:
		return v, f.Line, true
	case bool, int, float64:
		return fmt.Sprint(v), f.Line, true
	}
	b.diag(f.Line, SeverityWarning, DiagWrongType, fmt.Sprintf("%s should be text; the key is ignored", key))
	return "", f.Line, false
}

func (b *builder) boolField(key string) (val, present bool) {
	f, ok := b.field(key)
	if !ok || f.Value == nil {
		return false, false
	}
	switch v := f.Value.(type) {
	case bool:
		return v, true
	case string:
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "true", "yes":
			return true, true
		case "false", "no", "":
			return false, true
		}
	}
	b.diag(f.Line, SeverityWarning, DiagWrongType, fmt.Sprintf("%s should be true or false; the key is ignored", key))
	return false, false
}

// pathCondition reads a pattern key. It returns nil when the key is absent or ignored.
func (b *builder) pathCondition(key string, commaOK, emptyIsAbsent bool) *Condition {
	f, ok := b.field(key)
	if !ok || f.Value == nil {
		return nil
	}
	if s, isStr := f.Value.(string); isStr && strings.TrimSpace(s) == "" {
		return nil
	}
	vals, wasString, ok := compileConditionValues(f.Value, commaOK)
	if !ok {
		what := "a list of patterns"
		if commaOK {
			what = "a pattern, a comma-separated string of patterns, or a list"
		}
		b.diag(f.Line, SeverityWarning, DiagWrongType, fmt.Sprintf("%s should be %s; the key is ignored and the rule applies as if it were absent", key, what))
		return nil
	}
	if wasString && len(vals) > 1 {
		b.diag(f.Line, SeverityInfo, DiagCommaString, fmt.Sprintf("%s is one comma-separated string; read as %d patterns", key, len(vals)))
	}
	c := &Condition{Key: CondPaths, From: key}
	for _, v := range vals {
		if b.anchor != "" {
			v = anchorPattern(b.anchor, v)
		}
		p := b.pats(v)
		for _, pr := range p.problems {
			b.diag(f.Line, pr.Severity, pr.Code, key+": "+pr.Message)
		}
		if strings.TrimSpace(v) == "" {
			continue
		}
		c.Values = append(c.Values, v)
		if p.Usable() {
			c.patterns = append(c.patterns, p)
		}
	}
	if len(vals) == 0 {
		if emptyIsAbsent {
			return nil
		}
		b.diag(f.Line, SeverityWarning, DiagEmptyList, fmt.Sprintf("%s: [] lists no pattern, so the rule never applies", key))
	}
	return c
}

// commonConditions reads the conditionals Cline planned (mode, provider, model, os).
func (b *builder) commonConditions() {
	for _, key := range []string{CondMode, CondProvider, CondModel, CondOS} {
		f, ok := b.field(key)
		if !ok || f.Value == nil {
			continue
		}
		vals, _, ok := compileConditionValues(f.Value, true)
		if !ok {
			b.diag(f.Line, SeverityWarning, DiagWrongType, fmt.Sprintf("%s should be a value or a list of values; the condition is ignored", key))
			continue
		}
		var kept []string
		for _, v := range vals {
			if v = strings.TrimSpace(v); v != "" {
				kept = append(kept, v)
			}
		}
		if len(kept) == 0 {
			b.diag(f.Line, SeverityWarning, DiagEmptyList, fmt.Sprintf("%s lists no value, so the rule never applies", key))
		}
		b.r.Conditions = append(b.r.Conditions, Condition{Key: key, From: key, Values: kept})
	}
}

var triggerScopes = map[string]bool{"text": true, "thinking": true, "tool": true, "": true}

// streamTrigger reads condition (or ttsr_trigger) into a stream trigger.
func (b *builder) streamTrigger() bool {
	key := "condition"
	f, ok := b.field(key)
	if !ok {
		key = "ttsr_trigger"
		f, ok = b.field(key)
	}
	if ttsr, has := b.fm.Lookup("ttsr_trigger"); has && key == "condition" {
		b.read["ttsr_trigger"] = true
		b.diag(ttsr.Line, SeverityInfo, DiagIgnoredKey, "ttsr_trigger is ignored: condition is set")
	}
	if !ok || f.Value == nil {
		return false
	}
	vals, _, ok := compileConditionValues(f.Value, false)
	if s, isStr := f.Value.(string); isStr {
		vals, ok = []string{s}, true
	}
	if !ok || len(vals) == 0 {
		b.diag(f.Line, SeverityWarning, DiagWrongType, key+" should be a regular expression or a list of them; the key is ignored")
		return false
	}
	expr := strings.Join(vals, "|")
	if len(vals) > 1 {
		expr = "(?:" + strings.Join(vals, ")|(?:") + ")"
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		b.diag(f.Line, SeverityWarning, DiagBadRegexp, fmt.Sprintf("%s does not compile (%v); the rule is not stream-triggered", key, err))
		return false
	}
	t := &Trigger{RuleID: b.r.ID, Name: b.r.Name, Pattern: re}
	if s, line, ok := b.stringField("scope"); ok {
		if !triggerScopes[s] {
			b.diag(line, SeverityWarning, DiagWrongType, fmt.Sprintf("scope %q is not text, thinking or tool; the trigger watches every stream", s))
		} else {
			t.Scope = s
		}
	}
	// A trigger fires once per task unless the rule says once: false.
	t.Once = true
	if once, ok := b.boolField("once"); ok {
		t.Once = once
	}
	b.r.Trigger = t
	return true
}

// reportUnread reports the keys no part of the normalization read.
func (b *builder) reportUnread() {
	for _, f := range b.fm.Fields {
		if b.read[f.Key] {
			continue
		}
		switch {
		case keyOwner[f.Key] != "":
			b.diag(f.Line, SeverityWarning, DiagForeignKey, b.foreignMessage(f.Key))
		case metadataKeys[f.Key]:
		default:
			b.diag(f.Line, SeverityInfo, DiagUnknownKey, fmt.Sprintf("unknown key %q ignored", f.Key))
		}
	}
}

func (b *builder) foreignMessage(key string) string {
	tool := titleOf(b.f.Provider)
	switch b.class.kind {
	case kindLegacy, kindMain, kindMemory:
		return fmt.Sprintf("%s is %s's key; %s reads no keys in %s, so it is ignored (the file applies by where it is)", key, keyOwner[key], tool, b.f.Path)
	}
	reads := keysOf(b.f.Provider)
	instead := "no such key"
	for _, k := range reads {
		if k == "paths" || k == "globs" || k == "applyTo" {
			instead = k
			break
		}
	}
	return fmt.Sprintf("%s is %s's key, not %s's (which reads %s); it is ignored, as %s ignores it", key, keyOwner[key], tool, instead, tool)
}
