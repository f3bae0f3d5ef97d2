package rules

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rogpeppe/go-internal/txtar"
)

// TestScenarios runs every testdata/scenarios/*.txtar archive: workspace files under ws/
// (and ws2/ for a second root), home files under home/, a context.json, optional
// toggles.json and remote.json, and the expected decision in the "want" section, which
// go test ./rules -update rewrites.
func TestScenarios(t *testing.T) {
	paths, err := filepath.Glob("testdata/scenarios/*.txtar")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(p)
			if err != nil {
				t.Fatal(err)
			}
			got := runScenario(t, ar)
			wantIdx := -1
			for i, f := range ar.Files {
				if f.Name == "want" {
					wantIdx = i
				}
			}
			if *update {
				if wantIdx < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "want"})
					wantIdx = len(ar.Files) - 1
				}
				ar.Files[wantIdx].Data = []byte(got)
				if err := os.WriteFile(p, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if wantIdx < 0 {
				t.Fatal("no want section; run go test ./rules -update")
			}
			if want := string(ar.Files[wantIdx].Data); want != got {
				t.Errorf("decision differs; review and run go test ./rules -update\n%s", diffLines(want, got))
			}
		})
	}
}

func runScenario(t *testing.T, ar *txtar.Archive) string {
	t.Helper()
	roots := map[string]fstest.MapFS{}
	home := fstest.MapFS{}
	var ctx EvaluationContext
	var toggles Toggles
	var remote []RemoteRule
	var resolve []string
	for _, f := range ar.Files {
		switch {
		case f.Name == "want":
		case f.Name == "context.json":
			mustJSON(t, f.Data, &ctx)
		case f.Name == "toggles.json":
			mustJSON(t, f.Data, &toggles)
		case f.Name == "remote.json":
			mustJSON(t, f.Data, &remote)
		case f.Name == "resolve":
			resolve = strings.Fields(string(f.Data))
		case strings.HasPrefix(f.Name, "home/"):
			home[strings.TrimPrefix(f.Name, "home/")] = &fstest.MapFile{Data: f.Data}
		default:
			root, rel, ok := strings.Cut(f.Name, "/")
			if !ok {
				t.Fatalf("file %q is outside ws/, ws2/ and home/", f.Name)
			}
			if roots[root] == nil {
				roots[root] = fstest.MapFS{}
			}
			roots[root][rel] = &fstest.MapFile{Data: f.Data}
		}
	}
	ws := Workspace{Home: home, Remote: remote}
	for _, name := range []string{"ws", "ws2"} {
		if fsys, ok := roots[name]; ok {
			ws.Roots = append(ws.Roots, Root{Name: "/" + name, FS: fsys})
		}
	}
	files, err := Collect(ws)
	if err != nil {
		t.Fatal(err)
	}
	rs := Load(files)
	d := rs.Evaluate(ctx, toggles)
	// Determinism: a second load and evaluation gives the same bytes.
	j1, _ := json.Marshal(d)
	j2, _ := json.Marshal(Load(files).Evaluate(ctx, toggles))
	if !bytes.Equal(j1, j2) {
		t.Fatal("two evaluations of the same files differ")
	}
	var sb strings.Builder
	sb.WriteString("# results\n")
	for _, r := range d.Results {
		state := "excluded"
		switch {
		case r.Included:
			state = "INCLUDED"
		case r.Listed:
			state = "listed"
		}
		fmt.Fprintf(&sb, "%s [%s] %s %s: %s\n", r.Rule.ID, r.Rule.Category, state, r.Reason, r.Detail)
		for _, m := range r.Matches {
			fmt.Fprintf(&sb, "\tmatch %s %q %s", m.Condition, m.Pattern, m.Path)
			if m.Below {
				sb.WriteString(" (below)")
			}
			for _, s := range m.Sources {
				fmt.Fprintf(&sb, " <%s seq=%d turn=%d>", s.Kind, s.Seq, s.Turn)
			}
			sb.WriteString("\n")
		}
	}
	if len(d.Diagnostics) > 0 {
		sb.WriteString("# diagnostics\n")
		for _, dg := range d.Diagnostics {
			sb.WriteString(dg.String() + "\n")
		}
	}
	applied, _ := json.Marshal(d.ConditionalRulesApplied())
	fmt.Fprintf(&sb, "# conditional rules applied\n%s\n", applied)
	fmt.Fprintf(&sb, "# cline\n%s\n# tagged\n%s", d.RenderCline(), d.RenderTagged())
	for _, uri := range resolve {
		r, err := rs.Resolve(uri)
		if err != nil {
			fmt.Fprintf(&sb, "# resolve %s\nerror: %v\n", uri, err)
			continue
		}
		fmt.Fprintf(&sb, "# resolve %s\n%s\n%s\n", uri, r.ID, r.Body)
	}
	if tr := rs.Triggers(); len(tr) > 0 {
		b, _ := json.Marshal(tr)
		fmt.Fprintf(&sb, "# triggers\n%s\n", b)
	}
	return sb.String()
}

func mustJSON(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%v in %s", err, data)
	}
}
