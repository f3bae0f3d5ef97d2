//go:build unix

package rules

import (
	"path/filepath"
	"testing"
)

// An import of a named pipe never blocks a collection: the pipe is not read, and the import
// says why.
func TestImportOfANamedPipe(t *testing.T) {
	dir := oldTree(t, map[string]string{"CLAUDE.md": "Before @docs/pipe.md after\n"})
	mkfifo(t, filepath.Join(dir, "docs", "pipe.md"))
	collectWithin(t, dir, func(t *testing.T, rs *RuleSet) {
		if _, ok := diagFor(rs, DiagNotRegular, "/ws/docs/pipe.md"); !ok {
			t.Errorf("no not_regular diagnostic for the pipe: %v", rs.Diagnostics())
		}
		r := ruleByID(t, rs, "claude:/ws/CLAUDE.md")
		if r.Body != "Before @docs/pipe.md after" || !hasCode(r.Diagnostics, DiagImportMissing) {
			t.Errorf("body %q, diagnostics %v", r.Body, r.Diagnostics)
		}
	})
}
