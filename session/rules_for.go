package session

import (
	"context"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/projections"
	"github.com/tasklog/tasklog/rules"
	"github.com/tasklog/tasklog/store"
)

// TaskSettings are what a task's log says the next decision starts from, before its paths:
// the evaluation context the log has built (settings, evidence), the rules the task toggled,
// and the workspace roots it recorded.
type TaskSettings struct {
	// Context is the context of the task's next decision.
	Context rules.EvaluationContext
	// Toggles are the task's rule toggles.
	Toggles rules.Toggles
	// Roots are the workspace roots the task recorded.
	Roots []string
}

// SettingsOf folds task's log into the settings its next decision starts from.
func SettingsOf(ctx context.Context, db store.Store, task uuid.UUID) (TaskSettings, error) {
	st, err := projections.Fold(db.Events(ctx, task, 1))
	if err != nil {
		return TaskSettings{}, err
	}
	ec, _ := st.Next()
	return TaskSettings{Context: ec, Toggles: rules.Toggles(st.Toggles()), Roots: st.Roots()}, nil
}

// PathAsked is a path RulesFor was asked about, as the rules see it, or why it was left out.
type PathAsked struct {
	// Path is the path relative to its root, or as asked when Dropped.
	Path string
	// Root is the workspace root holding Path.
	Root string
	// Dropped says why the path was left out: outside_root, dotdot, not_a_path, ….
	Dropped string
}

// RulesFor evaluates rs for the paths asked about, as if they were the evidence of the next
// decision of a task with settings ts (the zero TaskSettings: no task). roots are the names of
// the workspace roots; dirs pair a root name with the folder it is read from (see
// Folders.RootDirs), so that an absolute path in that folder counts as in that root. Paths are
// mapped to the roots as the context maps them, deduplicated and sorted; asked lists every
// path in the order given, with why it was left out.
func RulesFor(rs *rules.RuleSet, ts TaskSettings, paths, roots []string, dirs [][2]string) (d rules.Decision, asked []PathAsked) {
	ec := ts.Context
	toggles := ts.Toggles
	if toggles == nil {
		toggles = rules.Toggles{}
	}
	ec.Paths, asked = contextPaths(paths, roots, dirs)
	return rs.Evaluate(ec, toggles), asked
}

// contextPaths maps the paths asked about to the workspace roots as the context does,
// deduplicated and sorted; those it leaves out say why.
func contextPaths(paths, roots []string, dirs [][2]string) ([]rules.ContextPath, []PathAsked) {
	var cps []rules.ContextPath
	var shown []PathAsked
	seen := map[string]bool{}
	for _, p := range paths {
		for _, d := range dirs {
			if rel, ok := strings.CutPrefix(filepath.ToSlash(p), strings.TrimSuffix(d[1], "/")+"/"); ok && d[0] != d[1] {
				p = strings.TrimSuffix(d[0], "/") + "/" + rel
				break
			}
		}
		root, rel, reason := projections.Normalize(p, roots, "")
		if reason != "" {
			shown = append(shown, PathAsked{Path: p, Dropped: reason})
			continue
		}
		shown = append(shown, PathAsked{Path: rel, Root: root})
		if seen[root+"\x00"+rel] {
			continue
		}
		seen[root+"\x00"+rel] = true
		cps = append(cps, rules.ContextPath{Path: rel, Root: root,
			Sources: []rules.Source{{Kind: rules.SourceMention, Detail: "rules_for"}}})
	}
	slices.SortFunc(cps, func(a, b rules.ContextPath) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Root, b.Root)
	})
	return cps, shown
}
