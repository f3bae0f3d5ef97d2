package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/tasklog/tasklog/rules"
)

// rulesRepeated is a flag that may be given more than once.
type rulesRepeated []string

func (r *rulesRepeated) String() string     { return strings.Join(*r, ",") }
func (r *rulesRepeated) Set(v string) error { *r = append(*r, v); return nil }

// rulesRow is one rule of `replay rules --json`.
type rulesRow struct {
	ID          string             `json:"id"`
	Name        string             `json:"name"`
	Source      string             `json:"source"`
	Scope       string             `json:"scope"`
	Root        string             `json:"root,omitempty"`
	Path        string             `json:"path"`
	Category    rules.Category     `json:"category"`
	Description string             `json:"description,omitempty"`
	Conditions  []rules.Condition  `json:"conditions,omitempty"`
	Applies     bool               `json:"applies"`
	Listed      bool               `json:"listed,omitempty"`
	Reason      string             `json:"reason"`
	Detail      string             `json:"detail"`
	Matched     []rules.Match      `json:"matched"`
	ShadowedBy  string             `json:"shadowed_by,omitempty"`
	Diagnostics []rules.Diagnostic `json:"diagnostics"`
	Trigger     *rules.Trigger     `json:"trigger,omitempty"`
}

type rulesOutput struct {
	EngineVersion string                  `json:"engine_version"`
	Rules         []rulesRow              `json:"rules"`
	Diagnostics   []rules.Diagnostic      `json:"diagnostics"`
	Applied       []rules.AppliedRule     `json:"conditional_rules_applied"`
	Context       rules.EvaluationContext `json:"context"`
}

// cmdRules lists every rule discovered in a workspace, its source, category, conditions,
// diagnostics and shadowing, and whether it applies to the given paths and why.
func cmdRules(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("rules", "[--workspace DIR]... [--home DIR] [--path P]...", stderr).readsNoLog().withJSON()
	var workspaces, paths, disable, mention rulesRepeated
	fs.Var(&workspaces, "workspace", "workspace root `DIR` (repeatable for a multi-root workspace; default: the current folder)")
	home := fs.String("home", "", "home `DIR` to read global rules from (default: none)")
	fs.Var(&paths, "path", "candidate `PATH` the request is about, relative to the workspace (repeatable; a trailing / marks a directory)")
	fs.Var(&disable, "disable", "disable the rules this `NAME` names: a rule's name (rule:// name), its id, or the file the table shows (repeatable)")
	fs.Var(&mention, "mention", "mention the rule `NAME` (its name, id, or the file the table shows), as a manual rule needs (repeatable)")
	mode := fs.String("mode", "", "agent mode (act or plan)")
	model := fs.String("model", "", "model id")
	provider := fs.String("provider", "", "model provider id")
	osName := fs.String("os", "", "operating system (linux, darwin, windows)")
	remote := fs.String("remote-rules", "", "JSON `FILE` with an array of {name, contents, alwaysEnabled}")
	prompt := fs.Bool("prompt", false, "also print the prompt sections (Cline format and tagged)")
	if _, code := fs.parseOrExit(args, 0, 0); code >= 0 {
		return code
	}
	asJSON := &fs.json
	if len(workspaces) == 0 {
		workspaces = append(workspaces, ".")
	}
	ws, err := rulesWorkspace(workspaces, *home, *remote)
	if err != nil {
		fmt.Fprintln(stderr, "replay rules:", err)
		return exitUsage
	}
	files, err := rules.Collect(ws)
	if err != nil {
		fmt.Fprintln(stderr, "replay rules:", err)
		return exitUsage
	}
	ctx := rules.EvaluationContext{Mode: *mode, Model: *model, Provider: *provider, OS: *osName}
	var outside []string
	ctx.Paths, outside = rulesContextPaths(paths, ws.Roots)
	for _, p := range outside {
		fmt.Fprintf(safeWriter{stderr}, "replay rules: --path %s is outside the workspace (%s): ignored\n", p, rootNames(ws.Roots))
	}
	rs := rules.Load(files)
	multiRoot := len(ws.Roots) > 1
	toggles := rules.Toggles{}
	// namedBy is the rules a --disable or --mention value names (a rule's name, its id, or the
	// file the table shows; a name two rules share names both), said to be none on stderr.
	namedBy := func(flag, given string) []*rules.Rule {
		var named []*rules.Rule
		for _, r := range rs.Rules() {
			if r.ID == given || ruleLabel(r, multiRoot) == given || r.Name == given {
				named = append(named, r)
			}
		}
		if len(named) == 0 {
			fmt.Fprintf(safeWriter{stderr}, "replay rules: --%s %s names no rule of the workspace (a name, an id, or a file the table shows): ignored\n", flag, given)
		}
		return named
	}
	for _, given := range disable {
		for _, r := range namedBy("disable", given) {
			toggles[r.ID] = false
		}
	}
	for _, given := range mention {
		for _, r := range namedBy("mention", given) {
			ctx.Rules = append(ctx.Rules, r.Name)
		}
	}
	slices.Sort(ctx.Rules)
	ctx.Rules = slices.Compact(ctx.Rules)
	d := rs.Evaluate(ctx, toggles)
	if *asJSON {
		return rulesPrintJSON(stdout, stderr, rs, d, ctx)
	}
	w := safeWriter{stdout}
	rulesPrintTable(w, rs, d, multiRoot)
	if *prompt {
		fmt.Fprintf(w, "\n--- prompt (Cline format) ---\n%s\n\n--- prompt (tagged) ---\n%s", d.RenderCline(), d.RenderTagged())
	}
	return exitOK
}

// rulesWorkspace builds the workspace: each root named by its absolute slash path.
func rulesWorkspace(dirs []string, home, remote string) (rules.Workspace, error) {
	var ws rules.Workspace
	for _, dir := range dirs {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return ws, fmt.Errorf("workspace %q: %w", dir, err)
		}
		info, err := os.Stat(abs)
		if err != nil {
			return ws, fmt.Errorf("workspace: %w", err)
		}
		if !info.IsDir() {
			return ws, fmt.Errorf("workspace %q is not a directory", dir)
		}
		ws.Roots = append(ws.Roots, rules.Root{Name: filepath.ToSlash(abs), FS: os.DirFS(abs)})
	}
	if home != "" {
		info, err := os.Stat(home)
		if err != nil {
			return ws, fmt.Errorf("home: %w", err)
		}
		if !info.IsDir() {
			return ws, fmt.Errorf("home %q is not a directory", home)
		}
		ws.Home = os.DirFS(home)
	}
	if remote != "" {
		data, err := os.ReadFile(remote)
		if err != nil {
			return ws, fmt.Errorf("remote rules: %w", err)
		}
		if err := json.Unmarshal(data, &ws.Remote); err != nil {
			return ws, fmt.Errorf("remote rules %q: want a JSON array of {name, contents, alwaysEnabled}: %w", remote, err)
		}
	}
	return ws, nil
}

// rulesContextPaths turns --path values into context paths: backslashes folded, absolute
// paths made relative to the root that holds them, "." and ".." segments resolved,
// deduplicated and sorted. It returns apart, as given, the paths that lie outside every root
// (absolute elsewhere, or climbing out with ".."), which no rule can match.
func rulesContextPaths(paths []string, roots []rules.Root) (out []rules.ContextPath, outside []string) {
	seen := map[string]bool{}
	for _, given := range paths {
		p := strings.ReplaceAll(strings.TrimSpace(given), `\`, "/")
		root := ""
		if len(roots) == 1 {
			root = roots[0].Name
		}
		inRoot := false
		for _, r := range roots {
			if rel, ok := strings.CutPrefix(p, strings.TrimSuffix(r.Name, "/")+"/"); ok {
				p, root, inRoot = rel, r.Name, true
				break
			}
		}
		if p != "" {
			dir := strings.HasSuffix(p, "/")
			p = path.Clean(p)
			if dir && p != "/" {
				p += "/"
			}
		}
		if (!inRoot && path.IsAbs(p)) || p == ".." || strings.HasPrefix(p, "../") {
			outside = append(outside, given)
			continue
		}
		if p == "." || p == "./" {
			p = ""
		}
		if p == "" || seen[root+"\x00"+p] {
			continue
		}
		seen[root+"\x00"+p] = true
		out = append(out, rules.ContextPath{Path: p, Root: root, Sources: []rules.Source{{Kind: rules.SourceProse, Detail: "--path"}}})
	}
	slices.SortFunc(out, func(a, b rules.ContextPath) int {
		if c := strings.Compare(a.Path, b.Path); c != 0 {
			return c
		}
		return strings.Compare(a.Root, b.Root)
	})
	return out, outside
}

// rootNames lists the workspace's roots for a message.
func rootNames(roots []rules.Root) string {
	names := make([]string, len(roots))
	for i, r := range roots {
		names[i] = r.Name
	}
	return strings.Join(names, ", ")
}

// ruleLabel is how the table names a rule: its id less the provider, which the SOURCE column
// shows, and less its workspace root, so a workspace rule reads as its path inside the
// workspace (led by the root's folder name when the workspace has several roots).
func ruleLabel(r *rules.Rule, multiRoot bool) string {
	label := strings.TrimPrefix(r.ID, string(r.Provider)+":")
	if r.Root == "" {
		return label
	}
	rel, ok := strings.CutPrefix(label, strings.TrimSuffix(r.Root, "/")+"/")
	if !ok {
		return label
	}
	if multiRoot {
		return path.Base(r.Root) + "/" + rel
	}
	return rel
}

func rulesPrintJSON(stdout, stderr io.Writer, rs *rules.RuleSet, d rules.Decision, ctx rules.EvaluationContext) int {
	out := rulesOutput{EngineVersion: d.EngineVersion, Rules: []rulesRow{}, Diagnostics: rs.Diagnostics(),
		Applied: d.ConditionalRulesApplied(), Context: ctx}
	if out.Diagnostics == nil {
		out.Diagnostics = []rules.Diagnostic{}
	}
	if out.Applied == nil {
		out.Applied = []rules.AppliedRule{}
	}
	for _, res := range d.Results {
		r := res.Rule
		row := rulesRow{ID: r.ID, Name: r.Name, Source: string(r.Provider), Scope: r.Scope, Root: r.Root, Path: r.Path,
			Category: r.Category, Description: r.Description, Conditions: r.Conditions, Applies: res.Included,
			Listed: res.Listed, Reason: res.Reason, Detail: res.Detail, Matched: res.Matches, ShadowedBy: res.ShadowedBy,
			Diagnostics: r.Diagnostics, Trigger: r.Trigger}
		if row.Matched == nil {
			row.Matched = []rules.Match{}
		}
		if row.Diagnostics == nil {
			row.Diagnostics = []rules.Diagnostic{}
		}
		out.Rules = append(out.Rules, row)
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		fmt.Fprintln(stderr, "replay rules:", err)
		return exitUsage
	}
	return exitOK
}

func rulesPrintTable(w io.Writer, rs *rules.RuleSet, d rules.Decision, multiRoot bool) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RULE\tSOURCE\tCATEGORY\tAPPLIES\tREASON")
	for _, res := range d.Results {
		applies := "no"
		switch {
		case res.Included:
			applies = "yes"
		case res.Listed:
			applies = "listed"
		}
		fmt.Fprintf(tw, "%s\t%s/%s\t%s\t%s\t%s\n", ruleLabel(res.Rule, multiRoot), res.Rule.Provider, res.Rule.Scope, res.Rule.Category, applies, res.Reason)
	}
	tw.Flush()
	fmt.Fprintln(w)
	for _, res := range d.Results {
		r := res.Rule
		fmt.Fprintf(w, "%s (%s): %s\n", ruleLabel(r, multiRoot), r.Address(), res.Detail)
		if !res.Included {
			// Every paths condition must hold: a nested folder's rule has its folder's and its own.
			for _, c := range r.PathConditions() {
				label := "patterns"
				if c.From == rules.FromLocation {
					label = "within"
				}
				fmt.Fprintf(w, "    %s: %s\n", label, strings.Join(c.Values, ", "))
			}
		}
		for _, m := range res.Matches {
			if m.Path == "" {
				fmt.Fprintf(w, "    %s: %s\n", m.Condition, m.Pattern)
				continue
			}
			below := ""
			if m.Below {
				below = " (a path below it could match)"
			}
			fmt.Fprintf(w, "    %s: %q matched %s%s\n", m.Condition, m.Pattern, m.Path, below)
		}
		for _, dg := range r.Diagnostics {
			fmt.Fprintf(w, "    %s\n", dg)
		}
	}
	for _, dg := range rs.Diagnostics() {
		fmt.Fprintln(w, dg)
	}
	fmt.Fprintf(w, "\n%s, %d applied, engine %s\n", plural(len(d.Results), "rule"), len(d.Included()), d.EngineVersion)
}
