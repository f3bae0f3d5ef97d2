package session

import (
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"slices"
	"strings"

	"github.com/tasklog/tasklog/audit"
	"github.com/tasklog/tasklog/rules"
)

// frontmatterBroken are the diagnostics of a frontmatter that failed to parse: the engine then
// keeps the file as a rule that applies to every request, with the whole file as its text.
var frontmatterBroken = []string{rules.DiagParseError, rules.DiagNotMapping, rules.DiagUnquotedStar,
	rules.DiagYAMLLimits, rules.DiagNoDelimiters}

// scopeKey finds a key that scopes a rule to paths in a file's first lines.
var scopeKey = regexp.MustCompile(`(?m)^\s*(paths|globs|applyTo)\s*:`)

// broken notes a finding for each rule whose frontmatter failed to parse, saying what that made
// of it; a file that meant to scope itself and now applies always is an error.
func (a *auditor) broken(rs *rules.RuleSet, raw map[string][]byte) {
	for _, r := range rs.Rules() {
		i := slices.IndexFunc(r.Diagnostics, func(d rules.Diagnostic) bool { return slices.Contains(frontmatterBroken, d.Code) })
		if i < 0 {
			continue
		}
		d := r.Diagnostics[i]
		where := d.Code
		if d.Line > 0 {
			where = fmt.Sprintf("%s at line %d", d.Code, d.Line)
		}
		head := raw[r.ID]
		if len(head) > 4096 {
			head = head[:4096]
		}
		became := fmt.Sprintf("the engine kept it as a %s rule", r.Category)
		if r.Category == rules.CategoryAlways {
			became = "the engine kept it as a rule that applies to every request, with the whole file as its text"
		}
		t := findingText{audit.Warning, fmt.Sprintf("its frontmatter did not parse (%s: %s); %s", where, d.Message, became)}
		if m := scopeKey.FindSubmatch(head); m != nil && r.Category == rules.CategoryAlways {
			t = findingText{audit.Error, fmt.Sprintf("A SCOPED RULE TURNED ALWAYS-ON: its frontmatter names %s, but did not parse (%s: %s), so the rule goes into every request, with its frontmatter as text; fix the frontmatter",
				m[1], where, d.Message)}
		}
		a.noteRule(r, audit.Broken, t)
	}
}

// errTooManyFiles stops a workspace listing past its cap.
var errTooManyFiles = errors.New("too many files")

// listWorkspace lists the files and folders ("dir/") of every root of opts the audit may read,
// into a.paths, and says where they came from. The log does not record the workspace's files,
// so they are listed from the live workspace now.
func (a *auditor) listWorkspace(opts AuditOptions) AuditWorkspace {
	var roots []Root
	for _, r := range opts.Workspace {
		if r.FS != nil {
			roots = append(roots, r)
		}
	}
	if len(roots) == 0 {
		return AuditWorkspace{Source: "none", Note: "no workspace to list: the never_applicable check did not run"}
	}
	limit := opts.MaxFiles
	if limit <= 0 {
		limit = DefaultAuditMaxFiles
	}
	var paths []string
	files := 0
	for _, root := range roots {
		err := fs.WalkDir(root.FS, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil || p == "." {
				return nil
			}
			if d.IsDir() {
				if d.Name() == ".git" {
					return fs.SkipDir
				}
				paths = append(paths, p+"/")
				return nil
			}
			if files++; files > limit {
				return errTooManyFiles
			}
			paths = append(paths, p)
			return nil
		})
		if errors.Is(err, errTooManyFiles) {
			return AuditWorkspace{Source: "none", Files: files - 1,
				Note: fmt.Sprintf("the workspace has more than %d files: the never_applicable check did not run", limit)}
		}
	}
	slices.Sort(paths)
	a.paths, a.listed = paths, true
	return AuditWorkspace{Source: "live", Files: files}
}

// matching lists up to n workspace paths the rule's patterns match, and the patterns that lie
// outside every root.
func (a *auditor) matching(pats []string, n int) (paths, outside []string) {
	for _, raw := range pats {
		p := rules.CompilePattern(raw)
		if !p.Usable() {
			outside = append(outside, fmt.Sprintf("%q", raw))
			continue
		}
		for _, path := range a.paths {
			if len(paths) < n && p.Match(path) && !slices.Contains(paths, path) {
				paths = append(paths, path)
			}
		}
	}
	return paths, outside
}

// matchingEvery is matching for the paths conditions of a rule, every one of which a path must
// meet (a nested folder's rule has its folder's and its own globs): up to n workspace paths that
// one of each condition's patterns matches, and the patterns that lie outside every root.
// reachable tells whether a path could meet them all: each has a pattern inside the roots. One
// condition is matching's, in its order (pattern by pattern).
func (a *auditor) matchingEvery(conds [][]string, n int) (paths, outside []string, reachable bool) {
	if len(conds) == 1 {
		paths, outside = a.matching(conds[0], n)
		return paths, outside, len(outside) < len(conds[0])
	}
	reachable = true
	compiled := make([][]*rules.Pattern, len(conds))
	for i, pats := range conds {
		for _, raw := range pats {
			if p := rules.CompilePattern(raw); p.Usable() {
				compiled[i] = append(compiled[i], p)
			} else {
				outside = append(outside, fmt.Sprintf("%q", raw))
			}
		}
		reachable = reachable && len(compiled[i]) > 0
	}
	for _, path := range a.paths {
		if len(paths) == n {
			break
		}
		if !slices.ContainsFunc(compiled, func(ps []*rules.Pattern) bool {
			return !slices.ContainsFunc(ps, func(p *rules.Pattern) bool { return p.Match(path) })
		}) {
			paths = append(paths, path)
		}
	}
	return paths, outside, reachable
}

// pathConditions are the patterns of each paths condition of r, in its order; a condition that
// lists none (no path meets it) has none.
func pathConditions(r *rules.Rule) [][]string {
	var conds [][]string
	for _, c := range r.PathConditions() {
		conds = append(conds, c.Values)
	}
	return conds
}

// neverApplicable notes a finding for each scoped rule whose patterns match no file or folder
// of the listed workspace, or lie outside every root.
func (a *auditor) neverApplicable(rs *rules.RuleSet, ws AuditWorkspace) {
	if !a.listed {
		return
	}
	files := ws.Files
	for _, r := range rs.Rules() {
		if r.Category != rules.CategoryScoped || r.ShadowedBy != "" || r.Unusable != "" {
			continue
		}
		// Every paths condition must hold: a nested folder's rule has its folder's and its own
		// globs, anchored there; the first that matches nothing is the finding.
		for _, pats := range pathConditions(r) {
			if len(pats) == 0 {
				continue // the evaluator says it lists no usable pattern
			}
			if ev, ok := a.matchesNothing(pats, files); ok {
				a.noteRule(r, audit.NeverApplicable, findingText{audit.Warning, ev})
				break
			}
		}
	}
}

// matchesNothing says why the patterns match no file or folder of the listed workspace (of files
// files), when they match none.
func (a *auditor) matchesNothing(pats []string, files int) (string, bool) {
	matched, outside := a.matching(pats, 1)
	if len(matched) > 0 {
		return "", false
	}
	quoted := make([]string, len(pats))
	for i, p := range pats {
		quoted[i] = fmt.Sprintf("%q", p)
	}
	ev := fmt.Sprintf("its patterns %s match no file or folder of the workspace (%d files, listed from the live workspace when the audit ran, not from the log)",
		strings.Join(quoted, ", "), files)
	if len(outside) == len(pats) {
		ev = fmt.Sprintf("its patterns %s lie outside every workspace root (absolute, or leaving the root with ..): no candidate path can match them",
			strings.Join(outside, ", "))
	} else if len(outside) > 0 {
		ev += "; " + strings.Join(outside, ", ") + " lie outside every root"
	}
	return ev, true
}
