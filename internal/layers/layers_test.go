package layers

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// imports lists every package of the module with the packages of the module it imports (its
// own code, not its tests'), from 'go list'.
func imports(t *testing.T) map[string][]string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not found on PATH: the import graph is read with 'go list'")
	}
	cmd := exec.Command(gobin, "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, Module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	watchSources(t, gobin)
	return parseList(out)
}

// watchSources looks at every Go file of the module and its folder, so that 'go test' caches
// this test's result only until one of them changes: go list, which reads them, is a process
// the test cache does not see into.
func watchSources(t *testing.T, gobin string) {
	t.Helper()
	out, err := exec.Command(gobin, "list", "-f", `{{.Dir}}{{range .GoFiles}} {{$.Dir}}/{{.}}{{end}}`, Module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, name := range strings.Fields(string(out)) {
		if _, err := os.Stat(name); err != nil {
			t.Fatal(err)
		}
	}
}

// parseList reads lines of "PACKAGE IMPORT..." into each package's imports within the module,
// every path relative to Module.
func parseList(out []byte) map[string][]string {
	graph := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 {
			continue
		}
		pkg, ok := relative(fields[0])
		if !ok {
			continue
		}
		graph[pkg] = []string{}
		for _, imp := range fields[1:] {
			if rel, ok := relative(imp); ok {
				graph[pkg] = append(graph[pkg], rel)
			}
		}
	}
	return graph
}

// relative is path relative to Module, when it is a package of the module.
func relative(path string) (string, bool) {
	return strings.CutPrefix(path, Module+"/")
}

// violations names every import that runs from a lower floor up to a higher one, and every
// package the table does not place, sorted.
func violations(graph map[string][]string) []string {
	var out []string
	for pkg, imps := range graph {
		from, ok := Floor(pkg)
		if !ok {
			out = append(out, fmt.Sprintf("%s is on no floor: add it to layers.Floors", pkg))
			continue
		}
		for _, imp := range imps {
			to, ok := Floor(imp)
			if ok && to > from {
				out = append(out, fmt.Sprintf("%s (floor %d) imports %s (floor %d): an import runs up from a lower package to a higher one",
					pkg, from, imp, to))
			}
		}
	}
	slices.Sort(out)
	return out
}

// TestImportsPointDown: no package of the module imports one of a higher floor.
func TestImportsPointDown(t *testing.T) {
	graph := imports(t)
	for _, want := range []string{"events", "session", "cmd/replay"} {
		if _, ok := graph[want]; !ok {
			t.Fatalf("go list did not list %s: the graph read is not the module's", want)
		}
	}
	for _, v := range violations(graph) {
		t.Error(v)
	}
}

// TestViolations: the check names an import that runs up, and a package the table misses.
func TestViolations(t *testing.T) {
	tests := []struct {
		name string
		list string
		want []string
	}{
		{"down only", "m/session m/store m/events fmt\nm/store m/events\nm/events\n", nil},
		{"same floor", "m/projections m/rules m/events\nm/rules\n", nil},
		{"store imports session", "m/store m/events m/session\n",
			[]string{"store (floor 1) imports session (floor 2): an import runs up from a lower package to a higher one"}},
		{"session imports its server", "m/session m/session/serve\n",
			[]string{"session (floor 2) imports session/serve (floor 3): an import runs up from a lower package to a higher one"}},
		{"events imports a store", "m/events m/store/natsstore\n",
			[]string{"events (floor 0) imports store/natsstore (floor 1): an import runs up from a lower package to a higher one"}},
		{"a package on no floor", "m/tools/gen m/events\n", []string{"tools/gen is on no floor: add it to layers.Floors"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			list := strings.ReplaceAll(tt.list, "m/", Module+"/")
			if got := violations(parseList([]byte(list))); !slices.Equal(got, tt.want) {
				t.Errorf("violations =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestFloor: the most specific entry places a package.
func TestFloor(t *testing.T) {
	tests := []struct {
		path  string
		floor int
		ok    bool
	}{
		{"events", 0, true},
		{"events/agentlog", 1, true},
		{"store/natsstore", 1, true},
		{"session", 2, true},
		{"session/serve/wire", 3, true},
		{"internal/jsonlite", 0, true},
		{"internal/layers", 3, true},
		{"cmd/replay", 4, true},
		{"sessions", 0, false},
		{"tools", 0, false},
	}
	for _, tt := range tests {
		if floor, ok := Floor(tt.path); floor != tt.floor || ok != tt.ok {
			t.Errorf("Floor(%q) = %d, %v; want %d, %v", tt.path, floor, ok, tt.floor, tt.ok)
		}
	}
}

// TestFloorsDocumented holds docs/concepts.md's table of floors to Floors: each entry is named,
// as `entry`, in the row of its floor, and the table has a row for every floor.
func TestFloorsDocumented(t *testing.T) {
	page, err := os.ReadFile("../../docs/concepts.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[int]string{}
	for _, line := range strings.Split(string(page), "\n") {
		var floor int
		if _, err := fmt.Sscanf(line, "| %d |", &floor); err == nil {
			rows[floor] = line
		}
	}
	if len(rows) != len(Floors) {
		t.Fatalf("docs/concepts.md has %d rows of floors, Floors %d", len(rows), len(Floors))
	}
	for floor, entries := range Floors {
		for _, e := range entries {
			if !strings.Contains(rows[floor], "`"+e+"`") {
				t.Errorf("docs/concepts.md: floor %d does not name `%s`: %s", floor, e, rows[floor])
			}
		}
	}
}
