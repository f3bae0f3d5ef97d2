package rules

import (
	"fmt"
	"io/fs"
	"strings"
)

// lintMaxDepth bounds the folder depth the listing for never-applicable enters; a folder
// deeper is not listed, as a dependency folder is not.
const lintMaxDepth = 64

// unlisted reports whether the listing for never-applicable does not enter the folder: the
// folders the search for AGENTS.md skips for holding dependencies, build output, version
// control or caches (node_modules, .git, target, .venv, …), which can be enormous. A tool's
// own folder (.github, .vscode, .cursor) is listed: rules do point into it. A pattern that
// points into an unlisted folder ("node_modules/**", "**/dist/**") is taken as applicable.
func unlisted(name string) bool {
	if skippedDirs[name] {
		return true
	}
	why, ok := internalDirs[name]
	return ok && why != "a tool's own folder"
}

// listStats says how far the listing went.
type listStats struct {
	listed   int
	complete bool
}

// neverApplicable lists the roots' files and folders (at most max entries, stopping early
// once every condition has a match) and reports every usable, unshadowed rule with a paths
// condition that nothing listed matches: it can apply to no request about the workspace as
// it is. A condition without a usable pattern is reported whatever the listing saw (and
// without roots, only such a condition is).
func (rs *RuleSet) neverApplicable(roots []Root, max int) ([]Finding, listStats) {
	ix := rs.index
	done := make([]bool, ix.places+1) // by the place of the condition's first pattern
	pending := 0
	for _, r := range rs.rules {
		if r.Unusable != "" || r.ShadowedBy != "" {
			continue
		}
		for i := range r.Conditions {
			if r.Conditions[i].Key == CondPaths && len(r.Conditions[i].patterns) > 0 {
				pending++
			}
		}
	}
	tw := treeWalk{rs: rs, done: done, pending: pending, max: max}
	for _, root := range roots {
		if tw.pending == 0 || tw.stopped {
			break
		}
		tw.root = root
		tw.walk(".", 1)
	}
	// Without a root there is nothing to list, and nothing to call never applicable but the
	// conditions no path could meet.
	st := listStats{listed: tw.listed, complete: len(roots) > 0 && (!tw.stopped || tw.pending == 0)}
	var out []Finding
	unchecked := 0
	for ri, r := range rs.rules {
		if r.Unusable != "" || r.ShadowedBy != "" {
			continue
		}
		reported := false
		for ci := range r.Conditions {
			c := &r.Conditions[ci]
			if c.Key != CondPaths {
				continue
			}
			fd := ruleLint{r: r}.finding(FindNeverApplicable, SeverityWarning, 0, "")
			switch {
			case len(c.Values) == 0:
				fd.Message = fmt.Sprintf("%s lists no pattern, so the rule never applies", c.From)
			case len(c.patterns) == 0:
				fd.Message = fmt.Sprintf("no pattern of its %s (%s) can match a path inside a workspace root, so the rule never applies",
					c.From, quoteAll(c.Values))
			case done[ix.base[ri][ci]]:
				continue
			case !st.complete:
				if !reported {
					unchecked++
					reported = true
				}
				continue
			default:
				fd.Message = fmt.Sprintf("no file or folder of the workspace matches its %s (%s): it applies to no request about the workspace as it is (%d entries listed, without %s)",
					c.From, quoteAll(c.Values), st.listed, unlistedText)
			}
			out = append(out, fd)
		}
	}
	if unchecked > 0 && len(roots) > 0 {
		r, verb := roots[0], "were"
		if unchecked == 1 {
			verb = "was"
		}
		out = append(out, Finding{Kind: FindLimit, Severity: SeverityWarning, File: r.Name, Root: r.Name, Path: ".",
			Message: fmt.Sprintf("the listing of the workspace stopped at the %d entries it lists at most: %s whose patterns matched nothing listed so far %s not checked for never-applicable; raise the bound (--max-entries) to check them",
				max, countOf(unchecked, "rule"), verb)})
	}
	return out, st
}

// countOf is n and the noun, plural unless n is 1.
func countOf(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

const unlistedText = ".git, node_modules and other dependency, build and cache folders"

func quoteAll(vals []string) string {
	q := make([]string, len(vals))
	for i, v := range vals {
		q[i] = fmt.Sprintf("%q", v)
	}
	return strings.Join(q, ", ")
}

// treeWalk lists one root after another, matching every entry against the rule set's
// patterns as a candidate path.
type treeWalk struct {
	rs      *RuleSet
	root    Root
	done    []bool
	pending int
	max     int
	listed  int
	stopped bool  // at the entry bound
	b       bound // the root's real path, for the check that a listed folder stays inside it
}

// walk lists folder dir; false when it cannot be read.
func (tw *treeWalk) walk(dir string, depth int) bool {
	entries, err := listDir(tw.root.FS, dir, &tw.b) // as discovery lists: sorted, never blocking on a pipe
	if err != nil {
		return false
	}
	for _, e := range entries {
		if tw.pending == 0 || tw.stopped {
			return true
		}
		if tw.listed >= tw.max {
			tw.stopped = true
			return true
		}
		tw.listed++
		p := e.Name()
		if dir != "." {
			p = dir + "/" + p
		}
		switch {
		case e.Type()&fs.ModeSymlink != 0:
			// Not followed (a loop, or a way out of the root): the link itself is a path, and
			// a pattern pointing below it is taken as applicable.
			tw.match(p, false)
			tw.match(p+"/", true)
		case !e.IsDir():
			tw.match(p, false)
		case unlisted(e.Name()) || depth >= lintMaxDepth:
			tw.match(p+"/", true)
		default:
			tw.match(p+"/", false)
			if !tw.walk(p, depth+1) {
				// What it holds is unknown: a pattern pointing below it is taken as applicable.
				tw.match(p+"/", true)
			}
		}
	}
	return true
}

// match marks the conditions a pattern of which matches path p; below accepts a pattern that
// may match only something below the folder p, for a folder that is not listed.
func (tw *treeWalk) match(p string, below bool) {
	c := prepareCandidate(p)
	c.root = tw.root.Name
	ix := tw.rs.index
	for _, h := range tw.rs.matchCandidate(&c) {
		if h.below && !below {
			continue
		}
		if k := ix.base[h.rule][h.cond]; !tw.done[k] {
			tw.done[k] = true
			tw.pending--
		}
	}
}
