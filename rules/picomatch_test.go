package rules

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
)

// deviation explains a pair on which this package answers otherwise than picomatch, each by
// the GLOBS.md row that says to.
func deviation(pattern, path string) string {
	p := strings.TrimSpace(pattern)
	switch {
	case strings.HasSuffix(path, "/") && !strings.HasSuffix(p, "*") && !strings.HasSuffix(p, "]") && !strings.HasSuffix(p, "/"):
		// picomatch accepts a trailing "/" after any final star segment ("*.ts" matches
		// "a.ts/"); GLOBS.md accepts it only after a final *, ** or ].
		return "trailing / only after a final *, ** or ]"
	case p == "[!a]":
		return "[!a] is negation"
	case strings.Contains(p, "("):
		return "parentheses are literal; extglobs unsupported"
	case p == "{1..3}":
		return "ranges unsupported"
	case strings.Contains(p, "[[:"):
		return "POSIX classes unsupported"
	case p == "src/[":
		return "an unbalanced [ is invalid"
	case strings.Contains(path, "😀") && strings.Contains(p, "?"):
		return "? matches one rune"
	}
	return ""
}

// TestAgreesWithPicomatch compares every pattern of the real samples (and the GLOBS.md
// examples) against a set of paths with the answers picomatch 4.0.3 gave (testdata/
// picomatch.tsv, generated with node from picomatch(pattern.trim(), {dot: true})). Every
// disagreement must be one GLOBS.md tells us to make.
func TestAgreesWithPicomatch(t *testing.T) {
	fh, err := os.Open("testdata/picomatch.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	rows, deviations := 0, 0
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") || line == "" {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 3 {
			t.Fatalf("bad row %q", line)
		}
		rows++
		want := cols[2] == "1"
		got := CompilePattern(cols[0]).Match(cols[1])
		if got == want {
			continue
		}
		if why := deviation(cols[0], cols[1]); why != "" {
			deviations++
			continue
		}
		t.Errorf("%q vs %q: %v, picomatch says %v", cols[0], cols[1], got, want)
	}
	t.Logf("%d pairs, %d deliberate deviations", rows, deviations)
}

// TestIndexAgreesWithDirectMatching evaluates every pattern of the picomatch table against
// each path alone and checks the indexed decision against matching the pattern directly.
func TestIndexAgreesWithDirectMatching(t *testing.T) {
	data, err := os.ReadFile("testdata/picomatch.tsv")
	if err != nil {
		t.Fatal(err)
	}
	patterns, paths := map[string]bool{}, map[string]bool{}
	var plist, qlist []string
	for _, line := range strings.Split(string(data), "\n") {
		cols := strings.Split(line, "\t")
		if len(cols) != 3 || strings.HasPrefix(line, "#") {
			continue
		}
		if !patterns[cols[0]] {
			patterns[cols[0]] = true
			plist = append(plist, cols[0])
		}
		if !paths[cols[1]] {
			paths[cols[1]] = true
			qlist = append(qlist, cols[1])
		}
	}
	var files []File
	for i, p := range plist {
		q := strings.ReplaceAll(strings.ReplaceAll(p, `\`, `\\`), `"`, `\"`)
		files = append(files, File{Provider: ProviderCline, Scope: ScopeWorkspace,
			Path:    fmt.Sprintf(".clinerules/r%03d.md", i),
			Content: fmt.Appendf(nil, "---\npaths: [\"%s\"]\n---\nRule %d.", q, i)}) // bodies differ: the same text is included once
	}
	rs := Load(files)
	for _, q := range qlist {
		d := rs.Evaluate(EvaluationContext{Paths: []ContextPath{{Path: q}}}, nil)
		for i, res := range d.Results {
			c := prepareCandidate(q)
			p := res.Rule.Conditions[0].patterns
			want := false
			for _, pp := range p {
				want = want || pp.match(&c) || c.isDir && pp.matchBelow(&c)
			}
			if res.Included != want {
				t.Errorf("rule %d %q vs %q: indexed %v, direct %v", i, res.Rule.Patterns(), q, res.Included, want)
			}
		}
	}
}
