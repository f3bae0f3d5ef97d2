package mcp

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/uuid"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasklog/tasklog/rules"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// maxPaths is the most paths one rules_for call takes, the context's default cap.
const maxPaths = 100

// RulesForIn is the rules_for tool's input: the paths the next step is about.
type RulesForIn struct {
	Paths []string `json:"paths" jsonschema:"the files or folders the next step is about: relative to the workspace root or absolute; a folder ends in /"`
	Task  string   `json:"task,omitempty" jsonschema:"a task id or unique prefix whose rule toggles and settings apply (default: the current task, when there is one)"`
}

// Match is a condition of a rule that held, or for a rule that does not apply a pattern
// that did not match.
type Match struct {
	Condition string `json:"condition"`
	Pattern   string `json:"pattern,omitempty"`
	Path      string `json:"path,omitempty"`
}

// RuleAnswer is one rule's answer: whether and why it applies.
type RuleAnswer struct {
	Name        string   `json:"name"`
	ID          string   `json:"id"`
	URI         string   `json:"uri" jsonschema:"read the rule's body here"`
	Category    string   `json:"category"`
	Description string   `json:"description,omitempty"`
	Reason      string   `json:"reason"`
	Detail      string   `json:"detail,omitempty"`
	Matched     []Match  `json:"matched,omitempty"`
	Patterns    []string `json:"patterns,omitempty" jsonschema:"for a path-scoped rule that does not apply: its own patterns, one of which a path must match"`
	Within      []string `json:"within,omitempty" jsonschema:"for a rule of a nested folder (or a subfolder's AGENTS.md) that does not apply: the folder a path must be in as well"`
	ShadowedBy  string   `json:"shadowed_by,omitempty"`
}

// PathAnswer is a path as the rules see it, or why it was left out.
type PathAnswer struct {
	Path    string `json:"path"`
	Root    string `json:"root,omitempty"`
	Dropped string `json:"dropped,omitempty" jsonschema:"why the path was left out: outside_root, dotdot, not_a_path, …"`
}

// RulesForOut is the rules_for tool's answer: the rules that apply to the paths, those listed
// on request and the others, each with its reason.
type RulesForOut struct {
	Task      string         `json:"task,omitempty" jsonschema:"the task whose toggles and settings were used"`
	Paths     []PathAnswer   `json:"paths"`
	Apply     []RuleAnswer   `json:"apply" jsonschema:"the rules that go into the prompt for these paths"`
	OnRequest []RuleAnswer   `json:"on_request" jsonschema:"rules listed by description only: read one through its uri when it is relevant"`
	NotApply  []RuleAnswer   `json:"not_applying" jsonschema:"the other rules, with the reason"`
	Omitted   map[string]int `json:"omitted,omitempty" jsonschema:"how many rules each list left out to bound the answer, by list"`
}

func (s *server) addTools(srv *sdk.Server) {
	sdk.AddTool(srv, &sdk.Tool{Name: "rules_for", Title: "Rules for these paths",
		Description: "Which of the workspace's rules apply now to these paths, with the reason and the pattern that matched; on-request rules are listed with their rule:// address."},
		s.rulesFor)
	sdk.AddTool(srv, &sdk.Tool{Name: "explain", Title: "Explain a turn",
		Description: "Why each rule (or the one named) was or was not in the prompt at a prompt (user message) or turn of the current task: the condition, the pattern, the path and the events that put the path there, and the deliveries of the decision."},
		s.explain)
	sdk.AddTool(srv, &sdk.Tool{Name: "whatif", Title: "What if a rule file read so",
		Description: "Which past turns of the current task would have had other rules if the rule file rule_file (new or existing) held content. Nothing is written."},
		s.whatif)
	sdk.AddTool(srv, &sdk.Tool{Name: "timeline", Title: "The task's latest turns",
		Description: "The latest turns of the current task, one line each (prompt, tool calls, writes, rules decided), newest last; pass next_cursor back as cursor for the turns before."},
		s.timeline)
	s.addAuditTools(srv)
}

func (s *server) rulesFor(ctx context.Context, _ *sdk.CallToolRequest, in RulesForIn) (*sdk.CallToolResult, RulesForOut, error) {
	var out RulesForOut
	if len(in.Paths) == 0 {
		return nil, out, errors.New("paths: give at least one path")
	}
	if len(in.Paths) > maxPaths {
		return nil, out, fmt.Errorf("paths: %d given, at most %d", len(in.Paths), maxPaths)
	}
	ts, task, err := s.taskSettings(ctx, in.Task)
	if err != nil {
		return nil, out, err
	}
	if task != uuid.Nil {
		out.Task = task.String()
	}
	rs, ws, err := s.ruleSet(ts.Roots)
	if err != nil {
		return nil, out, err
	}
	var roots []string
	for _, r := range ws.Roots {
		roots = append(roots, r.Name)
	}
	d, asked := session.RulesFor(rs, ts, in.Paths, roots, s.cfg.Folders.RootDirs(ts.Roots))
	for _, p := range asked {
		out.Paths = append(out.Paths, PathAnswer{Path: p.Path, Root: p.Root, Dropped: p.Dropped})
	}
	out.Apply, out.OnRequest, out.NotApply = []RuleAnswer{}, []RuleAnswer{}, []RuleAnswer{}
	for _, res := range d.Results {
		r := ruleAnswer(res)
		switch {
		case res.Included:
			out.Apply = keep(out.Apply, r, &out.Omitted, "apply")
		case res.Listed:
			out.OnRequest = keep(out.OnRequest, r, &out.Omitted, "on_request")
		default:
			out.NotApply = keep(out.NotApply, r, &out.Omitted, "not_applying")
		}
	}
	return textResult(rulesForText(out)), out, nil
}

// taskSettings is what rules_for evaluates against besides the paths: the toggles and
// settings of the task named or the current one. Without a current task (or a log), it is
// empty; a task named that does not exist is an error.
func (s *server) taskSettings(ctx context.Context, named string) (session.TaskSettings, uuid.UUID, error) {
	var ts session.TaskSettings
	task := uuid.Nil
	if named == "" && s.cfg.Task == "" && s.cfg.Session == "" {
		return ts, task, nil
	}
	err := s.withDB(func(db store.Store) error {
		var err error
		if task, err = s.taskFor(db, named); err != nil {
			return err
		}
		ts, err = session.SettingsOf(ctx, db, task)
		return err
	})
	if err != nil && named == "" && s.cfg.Task == "" && (errors.Is(err, ErrNoLog) || errors.Is(err, ErrUnknownTask)) {
		// The agent session's task has no log yet: the rules still answer, without toggles.
		return session.TaskSettings{}, uuid.Nil, nil
	}
	return ts, task, err
}

// ruleAnswer is a rule's evaluation as rules_for answers it.
func ruleAnswer(res rules.Result) RuleAnswer {
	r := res.Rule
	out := RuleAnswer{Name: r.Name, ID: r.ID, URI: r.Address(), Category: string(r.Category), Description: r.Description,
		Reason: res.Reason, Detail: res.Detail, ShadowedBy: res.ShadowedBy}
	for _, m := range res.Matches {
		out.Matched = append(out.Matched, Match{Condition: m.Condition, Pattern: m.Pattern, Path: m.Path})
	}
	if !res.Included && !res.Listed && r.Category == rules.CategoryScoped {
		// Every paths condition must hold: a nested folder's rule has its folder's and its own.
		for _, c := range r.PathConditions() {
			if c.From == rules.FromLocation {
				out.Within = append(out.Within, c.Values...)
			} else {
				out.Patterns = append(out.Patterns, c.Values...)
			}
		}
	}
	return out
}

// rulesForText is the answer in a few lines: every rule that applies with what matched, the
// on-request rules by address, and the rest by name and reason.
func rulesForText(out RulesForOut) string {
	var b strings.Builder
	var kept []string
	for _, p := range out.Paths {
		if p.Dropped != "" {
			fmt.Fprintf(&b, "left out %s: %s\n", p.Path, p.Dropped)
			continue
		}
		kept = append(kept, p.Path)
	}
	n, apply := len(out.Apply)+out.Omitted["apply"], "rules apply"
	if n == 1 {
		apply = "rule applies"
	}
	about := strings.Join(kept, ", ")
	switch {
	case len(kept) == 0 && len(out.Paths) > 0:
		about = "a request about no path (every path given was left out)"
	case len(kept) == 0:
		about = "a request about no path"
	}
	fmt.Fprintf(&b, "%d %s to %s", n, apply, about)
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

// keep appends v to list while the list is shorter than pageSize; past that it counts v
// in (*omitted)[name] instead.
func keep[T any](list []T, v T, omitted *map[string]int, name string) []T {
	if len(list) < pageSize {
		return append(list, v)
	}
	if *omitted == nil {
		*omitted = map[string]int{}
	}
	(*omitted)[name]++
	return list
}

// textResult is a tool result whose text is s; the SDK adds the structured output.
func textResult(s string) *sdk.CallToolResult {
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: s}}}
}
