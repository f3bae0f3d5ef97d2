package mcp

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasklog/tasklog/rules"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// WhatifIn is the whatif tool's input: a rule file and the content it would have.
type WhatifIn struct {
	RuleFile string `json:"rule_file" jsonschema:"the rule file, new or existing: relative to the workspace root (.clinerules/api.md), absolute, or ~/… for a global rule"`
	Content  string `json:"content" jsonschema:"the file's content as it would read, frontmatter included"`
	Task     string `json:"task,omitempty" jsonschema:"a task id or unique prefix (default: the current task)"`
}

// WhatifOut is the whatif tool's answer: the past decisions of the task the file would change.
type WhatifOut struct {
	Task      string           `json:"task"`
	RuleFile  string           `json:"rule_file" jsonschema:"the file as the rules name it"`
	Rules     []string         `json:"rules" jsonschema:"the ids of the rules the file becomes"`
	Decisions int              `json:"decisions" jsonschema:"the decisions of the task replayed"`
	Changed   int              `json:"changed" jsonschema:"how many of them would change"`
	Changes   []session.Change `json:"changes" jsonschema:"each rule whose outcome would change, by turn"`
	Drift     int              `json:"drift,omitempty" jsonschema:"changes the rule files as they are now already make to the recorded decisions; left out, as they are not this file's"`
	Omitted   int              `json:"omitted,omitempty" jsonschema:"changes left out to bound the answer"`
}

func (s *server) whatif(ctx context.Context, _ *sdk.CallToolRequest, in WhatifIn) (*sdk.CallToolResult, WhatifOut, error) {
	var out WhatifOut
	if len(in.Content) > rules.MaxFileSize {
		return nil, out, fmt.Errorf("content: %d bytes, a rule file is read up to %d", len(in.Content), rules.MaxFileSize)
	}
	err := s.withDB(func(db store.Store) error {
		task, err := s.taskFor(db, in.Task)
		if err != nil {
			return err
		}
		out.Task = task.String()
		recorded, err := session.RecordedRoots(ctx, db, task)
		if err != nil {
			return err
		}
		ws, err := s.cfg.Folders.RulesWorkspaceOf(recorded)
		if err != nil {
			return err
		}
		target, err := locateRuleFile(in.RuleFile, ws, s.cfg.Folders.RootDirs(recorded))
		if err != nil {
			return err
		}
		out.RuleFile = target.String()
		files, err := s.reader.Collect(ws)
		if err != nil {
			return fmt.Errorf("read the rule files: %w", err)
		}
		rep, err := session.WhatIf(ctx, db, task, ws, files, target, []byte(in.Content))
		var nr *session.NotRuleFileError
		if errors.As(err, &nr) {
			return fmt.Errorf("%s is not in a folder rules are read from (.clinerules/, .cursor/rules/, .claude/rules/, .windsurf/rules/, .github/instructions/, AGENTS.md, …); the rule files are: %s",
				target, bounded(nr.RuleFiles, namesShown))
		} else if err != nil {
			return err
		}
		out.Rules, out.Decisions, out.Changed, out.Drift = rep.Rules, rep.Decisions, rep.Changed, rep.Drift
		out.Changes = rep.Changes[:min(len(rep.Changes), pageSize)]
		out.Omitted = len(rep.Changes) - len(out.Changes)
		return nil
	})
	if err != nil {
		return nil, out, err
	}
	return textResult(whatifText(out)), out, nil
}

// locateRuleFile places the rule_file argument: ~/… in the home folder, an absolute path in the
// root whose folder (or recorded name) holds it, a relative path in the primary root.
func locateRuleFile(name string, ws rules.Workspace, dirs [][2]string) (session.RuleFile, error) {
	clean := func(p string) (string, error) {
		p = path.Clean(strings.ReplaceAll(p, `\`, "/"))
		if p == "." || p == ".." || strings.HasPrefix(p, "../") || !fs.ValidPath(p) {
			return "", fmt.Errorf("rule_file %q: not a file inside the workspace", name)
		}
		return p, nil
	}
	switch {
	case name == "":
		return session.RuleFile{}, errors.New("rule_file: give the rule file's path")
	case strings.HasPrefix(name, "~/"):
		if ws.Home == nil {
			return session.RuleFile{}, fmt.Errorf("rule_file %q: the server reads no global rules (start it with --home)", name)
		}
		p, err := clean(name[2:])
		return session.RuleFile{Scope: rules.ScopeGlobal, Path: p}, err
	case path.IsAbs(filepath.ToSlash(name)) || filepath.IsAbs(name):
		abs := path.Clean(filepath.ToSlash(name))
		for _, d := range dirs {
			for _, prefix := range []string{d[1], d[0]} {
				if rel, ok := strings.CutPrefix(abs, strings.TrimSuffix(prefix, "/")+"/"); ok {
					p, err := clean(rel)
					return session.RuleFile{Scope: rules.ScopeWorkspace, Root: d[0], Path: p}, err
				}
			}
		}
		names := make([]string, len(dirs))
		for i, d := range dirs {
			names[i] = d[1]
		}
		return session.RuleFile{}, fmt.Errorf("rule_file %q is outside the workspace roots (%s)", name, strings.Join(names, ", "))
	}
	if len(ws.Roots) == 0 {
		return session.RuleFile{}, fmt.Errorf("rule_file %q: the workspace has no root", name)
	}
	p, err := clean(strings.TrimPrefix(name, "./"))
	return session.RuleFile{Scope: rules.ScopeWorkspace, Root: ws.Roots[0].Name, Path: p}, err
}

// whatifText is the answer in a few lines: how many turns change, then each change.
func whatifText(out WhatifOut) string {
	var b strings.Builder
	if out.Changed == 0 {
		fmt.Fprintf(&b, "no change: all %d decisions of task %s would be the same if %s read so\n", out.Decisions, out.Task, out.RuleFile)
	} else {
		fmt.Fprintf(&b, "%d of %d decisions of task %s would change if %s read so:\n", out.Changed, out.Decisions, out.Task, out.RuleFile)
	}
	for _, c := range out.Changes {
		fmt.Fprintf(&b, "%s\n", c)
	}
	if out.Omitted > 0 {
		fmt.Fprintf(&b, "and %d more changes\n", out.Omitted)
	}
	if out.Drift > 0 {
		fmt.Fprintf(&b, "(%d other changes come from the rule files as they are now, not from this one, and are left out)\n", out.Drift)
	}
	return b.String()
}
