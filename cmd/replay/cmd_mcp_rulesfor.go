package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/uuid"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasklog/tasklog/projections"
	"github.com/tasklog/tasklog/rules"
	"github.com/tasklog/tasklog/store"
)

// mcpMaxPaths is the most paths one rules_for call takes, the context's default cap.
const mcpMaxPaths = 100

type mcpRulesForIn struct {
	Paths []string `json:"paths" jsonschema:"the files or folders the next step is about: relative to the workspace root or absolute; a folder ends in /"`
	Task  string   `json:"task,omitempty" jsonschema:"a task id or unique prefix whose rule toggles and settings apply (default: the current task, when there is one)"`
}

// mcpMatch is a condition of a rule that held, or for a rule that does not apply a pattern
// that did not match.
type mcpMatch struct {
	Condition string `json:"condition"`
	Pattern   string `json:"pattern,omitempty"`
	Path      string `json:"path,omitempty"`
}

// mcpRule is one rule's answer: whether and why it applies.
type mcpRule struct {
	Name        string     `json:"name"`
	ID          string     `json:"id"`
	URI         string     `json:"uri" jsonschema:"read the rule's body here"`
	Category    string     `json:"category"`
	Description string     `json:"description,omitempty"`
	Reason      string     `json:"reason"`
	Detail      string     `json:"detail,omitempty"`
	Matched     []mcpMatch `json:"matched,omitempty"`
	Patterns    []string   `json:"patterns,omitempty" jsonschema:"for a path-scoped rule that does not apply: the patterns no path matched"`
	ShadowedBy  string     `json:"shadowed_by,omitempty"`
}

// mcpPath is a path as the rules see it, or why it was left out.
type mcpPath struct {
	Path    string `json:"path"`
	Root    string `json:"root,omitempty"`
	Dropped string `json:"dropped,omitempty" jsonschema:"why the path was left out: outside_root, dotdot, not_a_path, …"`
}

type mcpRulesForOut struct {
	Task      string         `json:"task,omitempty" jsonschema:"the task whose toggles and settings were used"`
	Paths     []mcpPath      `json:"paths"`
	Apply     []mcpRule      `json:"apply" jsonschema:"the rules that go into the prompt for these paths"`
	OnRequest []mcpRule      `json:"on_request" jsonschema:"rules listed by description only: read one through its uri when it is relevant"`
	NotApply  []mcpRule      `json:"not_applying" jsonschema:"the other rules, with the reason"`
	Omitted   map[string]int `json:"omitted,omitempty" jsonschema:"how many rules each list left out to bound the answer, by list"`
}

func (s *mcpServer) addTools(srv *mcp.Server) {
	mcp.AddTool(srv, &mcp.Tool{Name: "rules_for", Title: "Rules for these paths",
		Description: "Which of the workspace's rules apply now to these paths, with the reason and the pattern that matched; on-request rules are listed with their rule:// address."},
		s.rulesFor)
	mcp.AddTool(srv, &mcp.Tool{Name: "explain", Title: "Explain a turn",
		Description: "Why each rule (or the one named) was or was not in the prompt at a prompt (user message) or turn of the current task: the condition, the pattern, the path and the events that put the path there, and the deliveries of the decision."},
		s.explain)
	mcp.AddTool(srv, &mcp.Tool{Name: "whatif", Title: "What if a rule file read so",
		Description: "Which past turns of the current task would have had other rules if the rule file rule_file (new or existing) held content. Nothing is written."},
		s.whatif)
	mcp.AddTool(srv, &mcp.Tool{Name: "timeline", Title: "The task's latest turns",
		Description: "The latest turns of the current task, one line each (prompt, tool calls, writes, rules decided), newest last; pass next_cursor back as cursor for the turns before."},
		s.timeline)
	s.addAuditTools(srv)
}

func (s *mcpServer) rulesFor(ctx context.Context, _ *mcp.CallToolRequest, in mcpRulesForIn) (*mcp.CallToolResult, mcpRulesForOut, error) {
	var out mcpRulesForOut
	if len(in.Paths) == 0 {
		return nil, out, errors.New("paths: give at least one path")
	}
	if len(in.Paths) > mcpMaxPaths {
		return nil, out, fmt.Errorf("paths: %d given, at most %d", len(in.Paths), mcpMaxPaths)
	}
	ec, toggles, recorded, task, err := s.taskContext(ctx, in.Task)
	if err != nil {
		return nil, out, err
	}
	if task != uuid.Nil {
		out.Task = task.String()
	}
	rs, ws, err := s.ruleSet(recorded)
	if err != nil {
		return nil, out, err
	}
	var roots []string
	for _, r := range ws.Roots {
		roots = append(roots, r.Name)
	}
	ec.Paths, out.Paths = mcpContextPaths(in.Paths, roots, s.cfg.rootDirs(recorded))
	d := rs.Evaluate(ec, toggles)
	out.Apply, out.OnRequest, out.NotApply = []mcpRule{}, []mcpRule{}, []mcpRule{}
	for _, res := range d.Results {
		r := mcpRuleResult(rs, res)
		switch {
		case res.Included:
			out.Apply = mcpKeep(out.Apply, r, &out.Omitted, "apply")
		case res.Listed:
			out.OnRequest = mcpKeep(out.OnRequest, r, &out.Omitted, "on_request")
		default:
			out.NotApply = mcpKeep(out.NotApply, r, &out.Omitted, "not_applying")
		}
	}
	return mcpTextResult(mcpRulesForText(out)), out, nil
}

// taskContext is what rules_for evaluates against besides the paths: the toggles and settings
// of the task named or the current one. Without a current task (or a log), it is empty; a task
// named that does not exist is an error.
func (s *mcpServer) taskContext(ctx context.Context, named string) (rules.EvaluationContext, rules.Toggles, []string, uuid.UUID, error) {
	var ec rules.EvaluationContext
	toggles := rules.Toggles{}
	var recorded []string
	task := uuid.Nil
	if named == "" && s.cfg.task == "" && s.cfg.session == "" {
		return ec, toggles, nil, task, nil
	}
	err := s.withDB(func(db store.Store) error {
		var err error
		if task, err = s.taskFor(db, named); err != nil {
			return err
		}
		st, err := projections.Fold(db.Events(ctx, task, 1))
		if err != nil {
			return err
		}
		ec, _ = st.Next()
		toggles = rules.Toggles(st.Toggles())
		recorded = st.Roots()
		return nil
	})
	if err != nil && named == "" && s.cfg.task == "" && (errors.Is(err, errMCPNoLog) || errors.Is(err, errMCPUnknownTask)) {
		// The agent session's task has no log yet: the rules still answer, without toggles.
		return rules.EvaluationContext{}, rules.Toggles{}, nil, uuid.Nil, nil
	}
	return ec, toggles, recorded, task, err
}

// mcpContextPaths maps the paths asked about to the workspace roots as the context does,
// deduplicated and sorted; those it leaves out say why. An absolute path in a folder a root is
// read from counts as in that root.
func mcpContextPaths(paths, roots []string, dirs [][2]string) ([]rules.ContextPath, []mcpPath) {
	var cps []rules.ContextPath
	var shown []mcpPath
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
			shown = append(shown, mcpPath{Path: p, Dropped: reason})
			continue
		}
		shown = append(shown, mcpPath{Path: rel, Root: root})
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

// mcpRuleResult is a rule's evaluation as rules_for answers it.
func mcpRuleResult(rs *rules.RuleSet, res rules.Result) mcpRule {
	r := res.Rule
	key := r.ID
	if w, err := rs.Resolve(rules.RuleURIScheme + r.Name); err == nil && w == r {
		key = r.Name
	}
	out := mcpRule{Name: r.Name, ID: r.ID, URI: mcpRuleURI(key), Category: string(r.Category), Description: r.Description,
		Reason: res.Reason, Detail: res.Detail, ShadowedBy: res.ShadowedBy}
	for _, m := range res.Matches {
		out.Matched = append(out.Matched, mcpMatch{Condition: m.Condition, Pattern: m.Pattern, Path: m.Path})
	}
	if !res.Included && !res.Listed && r.Category == rules.CategoryScoped {
		out.Patterns = r.Patterns()
	}
	return out
}

// mcpRulesForText is the answer in a few lines: every rule that applies with what matched, the
// on-request rules by address, and the rest by name and reason.
func mcpRulesForText(out mcpRulesForOut) string {
	var b strings.Builder
	var kept []string
	for _, p := range out.Paths {
		if p.Dropped != "" {
			fmt.Fprintf(&b, "left out %s: %s\n", p.Path, p.Dropped)
			continue
		}
		kept = append(kept, p.Path)
	}
	fmt.Fprintf(&b, "%d rules apply to %s", len(out.Apply)+out.Omitted["apply"], strings.Join(kept, ", "))
	if out.Task != "" {
		fmt.Fprintf(&b, " (toggles and settings of task %s)", out.Task)
	}
	b.WriteString(":\n")
	for _, r := range out.Apply {
		fmt.Fprintf(&b, "- %s (%s): %s", r.Name, r.URI, r.Reason)
		if r.Detail != "" {
			fmt.Fprintf(&b, " — %s", r.Detail)
		}
		b.WriteString("\n")
	}
	for _, r := range out.OnRequest {
		fmt.Fprintf(&b, "on request: %s (%s): %s\n", r.Name, r.URI, r.Description)
	}
	if len(out.NotApply) > 0 {
		parts := make([]string, len(out.NotApply))
		for i, r := range out.NotApply {
			parts[i] = r.Name + " (" + r.Reason + ")"
		}
		fmt.Fprintf(&b, "not applying: %s\n", strings.Join(parts, ", "))
	}
	for _, list := range slices.Sorted(maps.Keys(out.Omitted)) {
		fmt.Fprintf(&b, "(%d more rules left out of %s)\n", out.Omitted[list], list)
	}
	return b.String()
}

// mcpKeep appends v to list while the list is shorter than mcpPageSize; past that it counts v
// in (*omitted)[name] instead.
func mcpKeep[T any](list []T, v T, omitted *map[string]int, name string) []T {
	if len(list) < mcpPageSize {
		return append(list, v)
	}
	if *omitted == nil {
		*omitted = map[string]int{}
	}
	(*omitted)[name]++
	return list
}

// mcpTextResult is a tool result whose text is s; the SDK adds the structured output.
func mcpTextResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
