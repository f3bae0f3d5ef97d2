package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/tasklog/tasklog/rules"
)

// lintOutput is `replay lint --json`.
type lintOutput struct {
	EngineVersion string                    `json:"engine_version"`
	Roots         []string                  `json:"roots"`
	Rules         int                       `json:"rules"`
	Listed        int                       `json:"listed"`
	Complete      bool                      `json:"complete"`
	Counts        map[rules.FindingKind]int `json:"counts"`
	Findings      []rules.Finding           `json:"findings"`
}

// cmdLint reports what is wrong with a workspace's rules without any session: one line per
// finding; exit 0 when there is none, 1 when there are some, 2 on an error.
func cmdLint(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("lint", "[--workspace DIR]... [--home DIR]", stderr).readsNoLog().withJSON()
	var workspaces rulesRepeated
	fs.Var(&workspaces, "workspace", "workspace root `DIR` (repeatable for a multi-root workspace; default: the current folder)")
	home := fs.String("home", "", "home `DIR` to read global rules from (default: none)")
	remote := fs.String("remote-rules", "", "JSON `FILE` with an array of {name, contents, alwaysEnabled}")
	maxEntries := fs.Int("max-entries", rules.DefaultLintEntries, "list at most `N` files and folders of the workspace to find rules that never apply")
	if _, code := fs.parseOrExit(args, 0, 0); code >= 0 {
		return code
	}
	if len(workspaces) == 0 {
		workspaces = append(workspaces, ".")
	}
	ws, err := rulesWorkspace(workspaces, *home, *remote)
	if err != nil {
		fmt.Fprintln(stderr, "replay lint:", err)
		return exitUsage
	}
	rep, err := rules.Lint(ws, rules.LintOptions{MaxEntries: *maxEntries})
	if err != nil {
		fmt.Fprintln(stderr, "replay lint:", err)
		return exitUsage
	}
	if fs.json {
		out := lintOutput{EngineVersion: rules.EngineVersion, Rules: rep.Rules, Listed: rep.Listed, Complete: rep.Complete,
			Counts: map[rules.FindingKind]int{}, Findings: rep.Findings}
		for _, r := range ws.Roots {
			out.Roots = append(out.Roots, r.Name)
		}
		for _, f := range rep.Findings {
			out.Counts[f.Kind]++
		}
		if out.Findings == nil {
			out.Findings = []rules.Finding{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintln(stderr, "replay lint:", err)
			return exitUsage
		}
	} else {
		w := safeWriter{stdout}
		for _, f := range rep.Findings {
			fmt.Fprintln(w, lintLine(f, ws.Roots))
		}
		fmt.Fprintln(safeWriter{stderr}, lintSummary(rep))
	}
	if len(rep.Findings) > 0 {
		return exitFailed
	}
	return exitOK
}

// lintLine is a finding on one line; with one root, its paths are written relative to it.
func lintLine(f rules.Finding, roots []rules.Root) string {
	if len(roots) != 1 || f.Root != roots[0].Name {
		return f.String()
	}
	f.File = f.Path
	f.Message = strings.ReplaceAll(f.Message, roots[0].Name+"/", "")
	return f.String()
}

func lintSummary(rep rules.LintReport) string {
	listed := fmt.Sprintf("%d entries listed", rep.Listed)
	if rep.Listed == 1 {
		listed = "1 entry listed"
	}
	if !rep.Complete {
		listed += ", not all"
	}
	if len(rep.Findings) == 0 {
		return fmt.Sprintf("no findings: %s, %s", plural(rep.Rules, "rule"), listed)
	}
	errors := 0
	for _, f := range rep.Findings {
		if f.Severity == rules.SeverityError {
			errors++
		}
	}
	return fmt.Sprintf("%s (%s) in %s, %s", plural(len(rep.Findings), "finding"), plural(errors, "error"), plural(rep.Rules, "rule"), listed)
}
