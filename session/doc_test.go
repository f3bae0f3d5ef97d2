package session_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDocGoBlocks holds every Go block of the README and of docs/ to code that runs: each must be,
// byte for byte, a region between "// doc: begin" and "// doc: end" in a test file of session,
// session/replaytest, session/mcp or store/location (an Example or a test), with one leading tab
// stripped from each line where the region is inside a function.
func TestDocGoBlocks(t *testing.T) {
	pages, err := filepath.Glob(filepath.Join("..", "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, filepath.Join("..", "README.md"))
	var regions []string
	for _, pattern := range []string{"*_test.go", filepath.Join("replaytest", "*_test.go"),
		filepath.Join("mcp", "*_test.go"), filepath.Join("..", "store", "location", "*_test.go")} {
		files, _ := filepath.Glob(pattern)
		for _, f := range files {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			regions = append(regions, docRegions(string(src))...)
		}
	}
	blocks := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, block := range goBlocks(string(b)) {
			blocks++
			found := false
			for _, r := range regions {
				if r == block {
					found = true
					break
				}
			}
			if !found {
				t.Errorf("%s: a Go block is no doc region of a test in session: make it one, or copy the region over:\n%s", page, block)
			}
		}
	}
	if blocks < 2 {
		t.Errorf("found %d Go blocks in the README and docs/, want the embedding example and the regression test at least", blocks)
	}
}

// goBlocks returns the bodies of the ```go fences of a Markdown text.
func goBlocks(md string) []string {
	var out []string
	for {
		_, rest, ok := strings.Cut(md, "\n```go\n")
		if !ok {
			return out
		}
		body, after, ok := strings.Cut(rest, "\n```\n")
		if !ok {
			return out
		}
		out = append(out, body+"\n")
		md = "\n" + after
	}
}

// docRegions returns the regions between doc markers of a Go file, each line's indentation up to
// the marker's removed.
func docRegions(src string) []string {
	var out []string
	for {
		i := strings.Index(src, "// doc: begin\n")
		if i < 0 {
			return out
		}
		lineStart := strings.LastIndex(src[:i], "\n") + 1
		indent := src[lineStart:i]
		rest := src[i+len("// doc: begin\n"):]
		end := strings.Index(rest, indent+"// doc: end\n")
		if end < 0 {
			return out
		}
		var b strings.Builder
		for _, line := range strings.SplitAfter(rest[:end], "\n") {
			b.WriteString(strings.TrimPrefix(line, indent))
		}
		region := strings.TrimSuffix(b.String(), "\n\n") // a blank line before the end marker
		if !strings.HasSuffix(region, "\n") {
			region += "\n"
		}
		out = append(out, region)
		src = rest[end:]
	}
}
