package rules

import (
	"errors"
	"fmt"
	"path"
)

// nestedCursor reads the .cursor/rules folder of a subfolder: Cursor reads such nested rules
// folders too, and their rules belong to the folder that holds .cursor (see classify).
func (c *collector) nestedCursor(r Root, dotCursor string) {
	c.arm(dotCursor, watchRules) // a rules folder appearing in it
	c.source(r.FS, ScopeWorkspace, r.Name, source{provider: ProviderCursor, dir: dotCursor + "/rules", accept: hasExt(".mdc", ".md")})
}

// skippedMemory reports an AGENTS.md or CLAUDE.md directly inside a folder the search does
// not enter, with the reason, so that it does not vanish without a word. The root's
// .claude/CLAUDE.md is one of the workspace sources, not skipped, and the root's .clinerules
// folder is Cline's, which reads every file in it as a rule: these too.
func (c *collector) skippedMemory(r Root, dir, why string) {
	if dir == ".clinerules" {
		return
	}
	for _, name := range []string{"AGENTS.md", "CLAUDE.md"} {
		full := path.Join(dir, name)
		if full == ".claude/CLAUDE.md" {
			continue
		}
		c.armName(dir, name)
		if _, err := c.lstat(r.FS, full); err != nil {
			continue
		}
		provider := ProviderAgents
		if name == "CLAUDE.md" {
			provider = ProviderClaude
		}
		c.files = append(c.files, File{Provider: provider, Scope: ScopeWorkspace, Root: r.Name, Path: full,
			ReadError: fmt.Sprintf("%s: not read, because %s", DiagMemorySkipped, why)})
	}
}

// armName watches folder dir of the root being collected for changes to one name in it.
func (c *collector) armName(dir, name string) {
	if c.watch == nil {
		return
	}
	key := dir + "\x00" + name
	if c.named[key] {
		return
	}
	if c.named == nil {
		c.named = map[string]bool{}
	}
	c.named[key] = true
	if err := c.watch.addNamed(dir, name); err != nil && (dir == "." || !errors.Is(err, errNotWatched)) {
		c.whole = false
	}
}
