package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing/fstest"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasklog/tasklog/rules"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

type mcpWhatifIn struct {
	RuleFile string `json:"rule_file" jsonschema:"the rule file, new or existing: relative to the workspace root (.clinerules/api.md), absolute, or ~/… for a global rule"`
	Content  string `json:"content" jsonschema:"the file's content as it would read, frontmatter included"`
	Task     string `json:"task,omitempty" jsonschema:"a task id or unique prefix (default: the current task)"`
}

type mcpWhatifOut struct {
	Task      string           `json:"task"`
	RuleFile  string           `json:"rule_file" jsonschema:"the file as the rules name it"`
	Rules     []string         `json:"rules" jsonschema:"the ids of the rules the file becomes"`
	Decisions int              `json:"decisions" jsonschema:"the decisions of the task replayed"`
	Changed   int              `json:"changed" jsonschema:"how many of them would change"`
	Changes   []session.Change `json:"changes" jsonschema:"each rule whose outcome would change, by turn"`
	Drift     int              `json:"drift,omitempty" jsonschema:"changes the rule files as they are now already make to the recorded decisions; left out, as they are not this file's"`
	Omitted   int              `json:"omitted,omitempty" jsonschema:"changes left out to bound the answer"`
}

// mcpRuleFile is where a rule file is: its scope, root and path as [rules.File] names them.
type mcpRuleFile struct {
	scope, root, path string
}

func (f mcpRuleFile) String() string {
	if f.scope == rules.ScopeGlobal {
		return "~/" + f.path
	}
	return path.Join(f.root, f.path)
}

func (s *mcpServer) whatif(ctx context.Context, _ *mcp.CallToolRequest, in mcpWhatifIn) (*mcp.CallToolResult, mcpWhatifOut, error) {
	var out mcpWhatifOut
	if len(in.Content) > rules.MaxFileSize {
		return nil, out, fmt.Errorf("content: %d bytes, a rule file is read up to %d", len(in.Content), rules.MaxFileSize)
	}
	err := s.withDB(func(db store.Store) error {
		task, err := s.taskFor(db, in.Task)
		if err != nil {
			return err
		}
		out.Task = task.String()
		recorded, err := recordedRoots(ctx, db, task)
		if err != nil {
			return err
		}
		ws, err := s.cfg.workspace(recorded)
		if err != nil {
			return err
		}
		target, err := mcpLocateRuleFile(in.RuleFile, ws, s.cfg.rootDirs(recorded))
		if err != nil {
			return err
		}
		out.RuleFile = target.String()
		files, err := s.reader.Collect(ws)
		if err != nil {
			return fmt.Errorf("read the rule files: %w", err)
		}
		return mcpWhatifReplay(ctx, db, task, ws, files, target, []byte(in.Content), &out)
	})
	if err != nil {
		return nil, out, err
	}
	return mcpTextResult(mcpWhatifText(out)), out, nil
}

// mcpWhatifReplay replays the task under the rule files as they are now, and again with the one
// file changed, and keeps the changes that only the second makes.
func mcpWhatifReplay(ctx context.Context, db store.Store, task uuid.UUID, ws rules.Workspace, files []rules.File,
	target mcpRuleFile, content []byte, out *mcpWhatifOut) error {
	before := mcpFrozen(ws, files, nil, nil)
	after := mcpFrozen(ws, files, &target, content)
	discovered, err := rules.Collect(after)
	if err != nil {
		return err
	}
	labels := []string{}
	for _, f := range discovered {
		if f.Scope == target.scope && f.Root == target.root && f.Path == target.path {
			out.Rules = append(out.Rules, string(f.Provider)+":"+target.String())
		}
		if f.Scope != rules.ScopeRemote {
			labels = append(labels, mcpRuleFile{f.Scope, f.Root, f.Path}.String())
		}
	}
	if len(out.Rules) == 0 {
		return fmt.Errorf("%s is not in a folder rules are read from (.clinerules/, .cursor/rules/, .claude/rules/, .windsurf/rules/, .github/instructions/, AGENTS.md, …); the rule files are: %s",
			target, mcpBounded(labels, mcpNamesShown))
	}
	base, err := session.Replay(ctx, db, task, session.ReplayOptions{Workspace: &before})
	if err != nil {
		return err
	}
	rep, err := session.Replay(ctx, db, task, session.ReplayOptions{Workspace: &after})
	if err != nil {
		return err
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
	out.Decisions, out.Drift, out.Changes = rep.Decisions, len(base.Changes), []session.Change{}
	turns := map[int]bool{}
	for _, c := range rep.Changes {
		if drift[key{c.Turn, c.ID, c.Recorded, c.Now}] {
			continue
		}
		turns[c.Turn] = true
		if len(out.Changes) == mcpPageSize {
			out.Omitted++
			continue
		}
		out.Changes = append(out.Changes, c)
	}
	out.Changed = len(turns)
	return nil
}

// mcpFrozen is the workspace holding only the rule files collected from it, read once, with the
// target file's content replaced (or added) when target is set. Replaying both the unchanged and
// the changed copy tells this file's effect from that of every other edit since the task ran.
func mcpFrozen(ws rules.Workspace, files []rules.File, target *mcpRuleFile, content []byte) rules.Workspace {
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
		if target.scope == rules.ScopeWorkspace {
			m, ok = roots[target.root]
		}
		if ok { // mcpLocateRuleFile places a target only in a root of ws
			m[target.path] = &fstest.MapFile{Data: content, Mode: 0o644}
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

// mcpLocateRuleFile places the rule_file argument: ~/… in the home folder, an absolute path in the
// root whose folder (or recorded name) holds it, a relative path in the primary root.
func mcpLocateRuleFile(name string, ws rules.Workspace, dirs [][2]string) (mcpRuleFile, error) {
	clean := func(p string) (string, error) {
		p = path.Clean(strings.ReplaceAll(p, `\`, "/"))
		if p == "." || p == ".." || strings.HasPrefix(p, "../") || !fs.ValidPath(p) {
			return "", fmt.Errorf("rule_file %q: not a file inside the workspace", name)
		}
		return p, nil
	}
	switch {
	case name == "":
		return mcpRuleFile{}, errors.New("rule_file: give the rule file's path")
	case strings.HasPrefix(name, "~/"):
		if ws.Home == nil {
			return mcpRuleFile{}, fmt.Errorf("rule_file %q: the server reads no global rules (start it with --home)", name)
		}
		p, err := clean(name[2:])
		return mcpRuleFile{scope: rules.ScopeGlobal, path: p}, err
	case path.IsAbs(filepath.ToSlash(name)) || filepath.IsAbs(name):
		abs := path.Clean(filepath.ToSlash(name))
		for _, d := range dirs {
			for _, prefix := range []string{d[1], d[0]} {
				if rel, ok := strings.CutPrefix(abs, strings.TrimSuffix(prefix, "/")+"/"); ok {
					p, err := clean(rel)
					return mcpRuleFile{scope: rules.ScopeWorkspace, root: d[0], path: p}, err
				}
			}
		}
		names := make([]string, len(dirs))
		for i, d := range dirs {
			names[i] = d[1]
		}
		return mcpRuleFile{}, fmt.Errorf("rule_file %q is outside the workspace roots (%s)", name, strings.Join(names, ", "))
	}
	if len(ws.Roots) == 0 {
		return mcpRuleFile{}, fmt.Errorf("rule_file %q: the workspace has no root", name)
	}
	p, err := clean(strings.TrimPrefix(name, "./"))
	return mcpRuleFile{scope: rules.ScopeWorkspace, root: ws.Roots[0].Name, path: p}, err
}

// rootDirs pairs each root name the workspace uses with the folder it is read from, the longest
// folder first so that a nested root owns its files.
func (c *mcpConfig) rootDirs(recorded []string) [][2]string {
	var out [][2]string
	if len(recorded) > 0 {
		dirs, _ := c.wf.dirs(recorded)
		for _, r := range recorded {
			if d, ok := dirs[r]; ok {
				abs, _ := filepath.Abs(d)
				out = append(out, [2]string{r, filepath.ToSlash(abs)})
			}
		}
	} else {
		if c.wf.workspace != "" {
			out = append(out, [2]string{filepath.ToSlash(c.wf.workspace), filepath.ToSlash(c.wf.workspace)})
		}
		for _, r := range c.wf.roots {
			if root, dir, ok := strings.Cut(r, "="); ok {
				abs, _ := filepath.Abs(dir)
				out = append(out, [2]string{root, filepath.ToSlash(abs)})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b [2]string) int { return len(b[1]) - len(a[1]) })
	return out
}

// mcpWhatifText is the answer in a few lines: how many turns change, then each change.
func mcpWhatifText(out mcpWhatifOut) string {
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
