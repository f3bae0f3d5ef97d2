package rules

import (
	"fmt"
	"strings"
)

// categorize reads the provider's keys and settles the rule's category and conditions, each
// provider as its own tool reads them. The common keys (description, mode, provider, model,
// os, condition) are read for every provider.
func (b *builder) categorize() {
	r := b.r
	if d, _, ok := b.stringField("description"); ok {
		r.Description = strings.TrimSpace(d)
	}
	b.commonConditions()
	stream := b.streamTrigger()
	r.Category = b.providerCategory()
	if stream {
		// A stream condition outranks every other category, as in the agent that defined it.
		r.Category = CategoryStream
	}
	b.reportUnread()
}

func (b *builder) addPaths(c *Condition) {
	if c != nil {
		b.r.Conditions = append(b.r.Conditions, *c)
	}
}

func (b *builder) providerCategory() Category {
	switch b.class.kind {
	case kindLegacy, kindMain:
		return CategoryAlways
	case kindMemory:
		if b.class.dir == "" {
			return CategoryAlways
		}
		pattern := b.class.dir + "/**"
		b.r.Conditions = append(b.r.Conditions, Condition{Key: CondPaths, From: FromLocation, Values: []string{pattern},
			Root: b.f.Root, patterns: []*Pattern{b.pats(pattern)}})
		return CategoryScoped
	}
	if s := sourceOf(b.f.Provider); s != nil && s.category != nil {
		return s.category(b)
	}
	return CategoryAlways
}

// copilotCategory reads applyTo as VS Code does: a file without one is attached by hand only,
// one that applies to every file is in every request.
func (b *builder) copilotCategory() Category {
	c := b.pathCondition("applyTo", true, true)
	if c == nil {
		b.diag(0, SeverityInfo, DiagManualOnly, "no applyTo: GitHub Copilot attaches this file only when it is added by hand")
	}
	if c != nil && everyRequest(c.Values) {
		// VS Code puts an instruction file that applies to "**" into every request, also one
		// whose context holds no file.
		return CategoryAlways
	}
	return b.scopedOr(c, CategoryManual)
}

func (b *builder) scopedOr(c *Condition, otherwise Category) Category {
	if c == nil {
		return otherwise
	}
	b.addPaths(c)
	return CategoryScoped
}

// cursorCategory follows Cursor's rule types: alwaysApply wins (Always), then globs (Auto
// Attached), then a description (Agent Requested), else Manual. For a Windsurf file without a
// trigger (lenient) the last resort is always-on instead, as Windsurf's plain files are.
func (b *builder) cursorCategory(lenient bool) Category {
	always, alwaysSet := b.boolField("alwaysApply")
	globs := b.pathCondition("globs", true, true)
	if always {
		if globs != nil {
			f, _ := b.fm.Lookup("globs")
			b.diag(f.Line, SeverityInfo, DiagIgnoredKey, "globs is ignored: alwaysApply: true applies the rule to every request")
		}
		return CategoryAlways
	}
	if globs != nil {
		b.addPaths(globs)
		return CategoryScoped
	}
	if b.r.Description != "" && (!lenient || alwaysSet) {
		return CategoryOnRequest
	}
	if lenient {
		return CategoryAlways
	}
	b.diag(0, SeverityInfo, DiagManualOnly, "no alwaysApply, globs or description: Cursor applies this rule only when it is @-mentioned")
	return CategoryManual
}

func (b *builder) windsurfCategory() Category {
	trig, line, ok := b.stringField("trigger")
	if !ok {
		return b.cursorCategory(true)
	}
	trig = strings.TrimSpace(trig)
	if g, has := b.fm.Lookup("globs"); has && trig != "glob" && g.Value != nil {
		b.read["globs"] = true
		b.diag(g.Line, SeverityInfo, DiagIgnoredKey, "globs is ignored: Windsurf reads it only with trigger: glob")
	}
	switch trig {
	case "always_on":
		return CategoryAlways
	case "manual":
		return CategoryManual
	case "model_decision":
		if b.r.Description == "" {
			b.diag(line, SeverityWarning, DiagBadTrigger, "trigger: model_decision without a description: the model has nothing to decide by")
		}
		return CategoryOnRequest
	case "glob":
		c := b.pathCondition("globs", true, false)
		if c == nil {
			b.diag(line, SeverityWarning, DiagEmptyList, "trigger: glob without globs: the rule never applies")
			c = &Condition{Key: CondPaths, From: "globs"}
		}
		b.addPaths(c)
		return CategoryScoped
	}
	b.diag(line, SeverityWarning, DiagBadTrigger, fmt.Sprintf("trigger %q is not always_on, manual, model_decision or glob; read the Cursor-style keys instead", trig))
	return b.cursorCategory(true)
}

// tasklogCategory reads every tool's keys, since tasklog's own folder is where people merge
// rules from several tools: alwaysApply, then a Windsurf trigger, then patterns (paths, globs
// and applyTo together), then a description (on request), else always.
func (b *builder) tasklogCategory() Category {
	if always, _ := b.boolField("alwaysApply"); always {
		return CategoryAlways
	}
	if trig, _, ok := b.stringField("trigger"); ok {
		switch strings.TrimSpace(trig) {
		case "always_on":
			return CategoryAlways
		case "manual":
			return CategoryManual
		case "model_decision":
			return CategoryOnRequest
		}
	}
	var merged *Condition
	for _, key := range []string{"paths", "globs", "applyTo"} {
		c := b.pathCondition(key, true, key != "paths")
		if c == nil {
			continue
		}
		if merged == nil {
			merged = c
			continue
		}
		merged.From += "+" + key
		merged.Values = append(merged.Values, c.Values...)
		merged.patterns = append(merged.patterns, c.patterns...)
	}
	if merged != nil {
		b.addPaths(merged)
		return CategoryScoped
	}
	if b.r.Description != "" {
		return CategoryOnRequest
	}
	return CategoryAlways
}

// everyRequest reports whether a Copilot applyTo lists "**" or "**/*" (after a leading "./"):
// a pattern VS Code reads as "every request", not as "a file of the context matches".
func everyRequest(values []string) bool {
	for _, v := range values {
		v = strings.TrimSpace(v)
		for strings.HasPrefix(v, "./") {
			v = v[2:]
		}
		if v == "**" || v == "**/*" {
			return true
		}
	}
	return false
}

// legacy reads a single legacy file (.cursorrules, .windsurfrules, global_rules.md, and the
// .clinerules file as engines before rules/3 read it): its tool sends the file as written, so
// the whole text is the body, a --- block included, and the rule is always on. Keys in such a
// block are not read; a diagnostic says so, once, at the block's first key.
func (b *builder) legacy(text string) {
	b.r.Body = strings.TrimSpace(normalizeText(text))
	b.r.Category = CategoryAlways
	if !b.fm.Present && !b.fm.Failed {
		return
	}
	line := 0
	var keys []string
	for _, f := range b.fm.Fields {
		if line == 0 {
			line = f.Line
		}
		keys = append(keys, f.Key)
	}
	what := "its --- block"
	if len(keys) > 0 {
		what = "its keys (" + strings.Join(keys, ", ") + ")"
	}
	b.diag(line, SeverityInfo, DiagLegacyFrontmatter, fmt.Sprintf("%s is a legacy single file, which %s sends as written: %s are not read, and the whole text, the --- block included, is the body",
		b.f.Path, titleOf(b.f.Provider), what))
}

// nestedCursorCategory reads a rule of a nested .cursor/rules folder (apps/api/.cursor/rules):
// it applies only when a context path lies inside apps/api, and then by its own alwaysApply,
// globs and description. Its globs are anchored at apps/api, the folder that holds .cursor,
// as a project's root rules are anchored at the root: "src/**/*.ts" there stands for
// "apps/api/src/**/*.ts".
func (b *builder) nestedCursorCategory() Category {
	pattern := b.class.dir + "/**" // b.anchor is class.dir too (see build)
	b.r.Conditions = append(b.r.Conditions, Condition{Key: CondPaths, From: FromLocation, Values: []string{pattern},
		Root: b.f.Root, patterns: []*Pattern{b.pats(pattern)}})
	cat := b.cursorCategory(false)
	if cat == CategoryAlways {
		return CategoryScoped // always, inside its folder
	}
	return cat
}

// anchorPattern makes a pattern written relative to folder dir relative to the root: dir and
// the pattern joined, after the pattern's leading "./" and its negation. A leading "**.ext"
// becomes "**/*.ext" first, since after dir/ it would no longer be leading. Absolute and
// empty patterns are left as they are (they are diagnosed as written).
func anchorPattern(dir, raw string) string {
	s := strings.TrimSpace(raw)
	for strings.HasPrefix(s, "./") {
		s = strings.TrimLeft(s[2:], "/")
	}
	bangs := len(s) - len(strings.TrimLeft(s, "!"))
	neg, s := s[:bangs], s[bangs:]
	if s == "" || strings.HasPrefix(s, "/") || strings.HasPrefix(s, "(") {
		return raw
	}
	if strings.HasPrefix(s, "**.") {
		s = "**/*" + s[2:]
	}
	return neg + dir + "/" + s
}
