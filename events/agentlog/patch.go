package agentlog

import (
	"strings"

	"github.com/tasklog/tasklog/events"
)

// patchFiles reads the file operations of Codex-style patch text ("*** Add File: p",
// "*** Update File: p", "*** Delete File: p", "*** Move to: p"), wherever it sits: a patch
// argument, or a heredoc inside a shell command. Paths are as written.
func patchFiles(text string) []patchOp {
	if !strings.Contains(text, "*** ") {
		return nil
	}
	var out []patchOp
	for line := range strings.Lines(text) {
		line = strings.TrimSpace(line)
		for _, k := range patchKinds {
			if p, ok := strings.CutPrefix(line, k.prefix); ok && strings.TrimSpace(p) != "" {
				out = append(out, patchOp{Path: strings.TrimSpace(p), Op: k.op})
			}
		}
	}
	return out
}

type patchOp struct{ Path, Op string }

var patchKinds = []struct{ prefix, op string }{
	{"*** Add File: ", events.OpCreate},
	{"*** Update File: ", events.OpEdit},
	{"*** Delete File: ", events.OpDelete},
	{"*** Move to: ", events.OpCreate},
}

// patchWrites resolves the operations of patch text against dir.
func (s *sink) patchWrites(text, dir string) []events.FileWrite {
	var out []events.FileWrite
	for _, op := range patchFiles(text) {
		out = append(out, s.write(op.Path, op.Op, dir))
	}
	return out
}
