package session

import (
	"context"
	"errors"
	"fmt"
	"path"
	"testing/fstest"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/rules"
	"github.com/tasklog/tasklog/store"
)

// ErrNotRuleFile is WhatIf's error for a file in no folder rules are read from. The error is a
// *NotRuleFileError naming the rule files there are.
var ErrNotRuleFile = errors.New("not in a folder rules are read from")

// NotRuleFileError is the error of WhatIf for a file no rule is read from.
type NotRuleFileError struct {
	// File is the file asked about.
	File RuleFile
	// RuleFiles are the workspace's and the home folder's rule files, as RuleFile.String
	// names them.
	RuleFiles []string
}

// Error names the file; the rule files are for the caller to list, bounded.
func (e *NotRuleFileError) Error() string {
	return fmt.Sprintf("%s is %v", e.File, ErrNotRuleFile)
}

// Unwrap makes errors.Is(err, ErrNotRuleFile) hold.
func (e *NotRuleFileError) Unwrap() error { return ErrNotRuleFile }

// RuleFile is where a rule file is: its scope, root and path as [rules.File] names them.
type RuleFile struct {
	// Scope is rules.ScopeWorkspace or rules.ScopeGlobal.
	Scope string
	// Root is the workspace root holding the file (for ScopeWorkspace).
	Root string
	// Path is the file's slash-separated path in its root or in the home folder.
	Path string
}

// String is ~/PATH for a global rule file, else ROOT/PATH.
func (f RuleFile) String() string {
	if f.Scope == rules.ScopeGlobal {
		return "~/" + f.Path
	}
	return path.Join(f.Root, f.Path)
}

// WhatIfReport is what WhatIf found.
type WhatIfReport struct {
	// Rules are the ids of the rules the file becomes.
	Rules []string
	// Decisions is how many decisions of the task were replayed.
	Decisions int
	// Changes are the rule outcomes the file would change, by turn; Changed is how many
	// decisions they touch.
	Changes []Change
	Changed int
	// Drift is how many changes the rule files as they are now already make to the recorded
	// decisions: left out of Changes, as they are not the file's.
	Drift int
}

// WhatIf replays task under the rule files of ws as they are now (files, as collected from
// ws), and again with the file target reading content (a new file, or another content for one
// of files), and reports the changes only the second makes. Nothing is written.
func WhatIf(ctx context.Context, db store.Store, task uuid.UUID, ws rules.Workspace, files []rules.File,
	target RuleFile, content []byte) (*WhatIfReport, error) {
	before := frozen(ws, files, nil, nil)
	after := frozen(ws, files, &target, content)
	discovered, err := rules.Collect(after)
	if err != nil {
		return nil, err
	}
	out := &WhatIfReport{}
	labels := []string{}
	for _, f := range discovered {
		if f.Scope == target.Scope && f.Root == target.Root && f.Path == target.Path {
			out.Rules = append(out.Rules, string(f.Provider)+":"+target.String())
		}
		if f.Scope != rules.ScopeRemote {
			labels = append(labels, RuleFile{f.Scope, f.Root, f.Path}.String())
		}
	}
	if len(out.Rules) == 0 {
		return nil, &NotRuleFileError{File: target, RuleFiles: labels}
	}
	base, err := Replay(ctx, db, task, ReplayOptions{Workspace: &before})
	if err != nil {
		return nil, err
	}
	rep, err := Replay(ctx, db, task, ReplayOptions{Workspace: &after})
	if err != nil {
		return nil, err
	}
	// A change the unchanged files make too is not this file's, whatever its wording.
	type key struct {
		turn          int
		id, was, then string
	}
	drift := map[key]bool{}
	for _, c := range base.Changes {
		drift[key{c.Turn, c.ID, c.Recorded, c.Now}] = true
	}
	out.Decisions, out.Drift, out.Changes = rep.Decisions, len(base.Changes), []Change{}
	turns := map[int]bool{}
	for _, c := range rep.Changes {
		if drift[key{c.Turn, c.ID, c.Recorded, c.Now}] {
			continue
		}
		turns[c.Turn] = true
		out.Changes = append(out.Changes, c)
	}
	out.Changed = len(turns)
	return out, nil
}

// frozen is the workspace holding only the rule files collected from it, read once, with the
// target file's content replaced (or added) when target is set. Replaying both the unchanged
// and the changed copy tells this file's effect from that of every other edit since the task
// ran.
func frozen(ws rules.Workspace, files []rules.File, target *RuleFile, content []byte) rules.Workspace {
	roots := map[string]fstest.MapFS{}
	home := fstest.MapFS{}
	for _, r := range ws.Roots {
		roots[r.Name] = fstest.MapFS{}
	}
	for _, f := range files {
		if f.ReadError != "" {
			continue
		}
		switch f.Scope {
		case rules.ScopeWorkspace:
			if m, ok := roots[f.Root]; ok {
				m[f.Path] = &fstest.MapFile{Data: f.Content, Mode: 0o644}
			}
		case rules.ScopeGlobal:
			home[f.Path] = &fstest.MapFile{Data: f.Content, Mode: 0o644}
		}
	}
	if target != nil {
		m, ok := home, true
		if target.Scope == rules.ScopeWorkspace {
			m, ok = roots[target.Root]
		}
		if ok { // a target outside every root of ws has nowhere to go
			m[target.Path] = &fstest.MapFile{Data: content, Mode: 0o644}
		}
	}
	out := rules.Workspace{Remote: ws.Remote}
	for _, r := range ws.Roots {
		out.Roots = append(out.Roots, rules.Root{Name: r.Name, FS: roots[r.Name]})
	}
	if ws.Home != nil {
		out.Home = home
	}
	return out
}
