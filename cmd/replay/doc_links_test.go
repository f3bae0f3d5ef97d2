package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
)

// docLink is a Markdown link: [text](target), or [text](target "title").
var docLink = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)

// docHeading is a Markdown heading line; docFence opens or closes a fenced block.
var (
	docHeading = regexp.MustCompile(`^#{1,6}\s+(.*)$`)
	docFence   = regexp.MustCompile("^\\s{0,3}(```|~~~)")
)

// headingAnchors are the anchors GitHub gives the headings of a Markdown page: each heading
// lowercased, without punctuation but hyphens and underscores, its spaces made hyphens, and a
// -1, -2 … after a repeat. Code blocks hold no headings.
func headingAnchors(page string) map[string]bool {
	anchors := map[string]bool{}
	seen := map[string]int{}
	fence := false
	for _, line := range strings.Split(page, "\n") {
		if docFence.MatchString(line) {
			fence = !fence
			continue
		}
		m := docHeading.FindStringSubmatch(line)
		if fence || m == nil {
			continue
		}
		title := strings.TrimSpace(strings.TrimRight(m[1], "# "))
		var b strings.Builder
		for _, r := range strings.ToLower(title) {
			switch {
			case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
				b.WriteRune(r)
			case r == ' ':
				b.WriteRune('-')
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			anchors[fmt.Sprintf("%s-%d", a, n)] = true
		} else {
			anchors[a] = true
		}
		seen[a]++
	}
	return anchors
}

// TestDocLinks: every link of the README and docs/ to a file of the repository names one that
// exists, and every link to a heading (page.md#anchor, #anchor) names a heading of that page.
func TestDocLinks(t *testing.T) {
	root := testenv.RepoRoot(t)
	pages := manualPages(t, root)
	anchorsOf := map[string]map[string]bool{}
	for _, page := range pages {
		anchorsOf[page.path] = headingAnchors(page.text)
	}
	checked := 0
	for _, page := range pages {
		rel := page.rel
		fence := false
		for n, line := range strings.Split(page.text, "\n") {
			if docFence.MatchString(line) {
				fence = !fence
			}
			if fence {
				continue
			}
			for _, m := range docLink.FindAllStringSubmatch(line, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				file, anchor, _ := strings.Cut(target, "#")
				path := page.path
				if file != "" {
					path = filepath.Join(filepath.Dir(page.path), filepath.FromSlash(file))
					if _, err := os.Stat(path); err != nil {
						t.Errorf("%s:%d: link %s: no such file", rel, n+1, target)
						continue
					}
				}
				checked++
				if anchor == "" || !strings.HasSuffix(path, ".md") {
					continue
				}
				a, ok := anchorsOf[path]
				if !ok { // a page outside the manual
					b, err := os.ReadFile(path)
					if err != nil {
						t.Fatal(err)
					}
					a = headingAnchors(string(b))
					anchorsOf[path] = a
				}
				if !a[anchor] {
					t.Errorf("%s:%d: link %s: no heading of %s has the anchor #%s", rel, n+1, target, filepath.Base(path), anchor)
				}
			}
		}
	}
	if checked < 50 {
		t.Fatalf("%d links checked: the pages were not read", checked)
	}
}

// The anchors are GitHub's.
func TestHeadingAnchors(t *testing.T) {
	a := headingAnchors("# Inside the agents: hooks\n```\n# not a heading\n```\n~~~\n# nor this\n~~~\n#hashtag\n## `replay audit`\n## Repeat\n### Repeat\n## Ça, va (bien)?\n## Closed ##\n")
	for _, want := range []string{"inside-the-agents-hooks", "replay-audit", "repeat", "repeat-1", "ça-va-bien", "closed"} {
		if !a[want] {
			t.Errorf("no anchor %q in %v", want, a)
		}
	}
	for _, not := range []string{"not-a-heading", "nor-this", "hashtag"} {
		if a[not] {
			t.Errorf("%q is no heading", not)
		}
	}
	if m := docLink.FindStringSubmatch(`see [the page](rules.md#engine-versions "Engine versions")`); m == nil || m[1] != "rules.md#engine-versions" {
		t.Errorf("a link with a title: %q", m)
	}
}
