package rules

import (
	"errors"
	"fmt"
	"path"
	"strings"
)

// nestedCursor reads the .cursor/rules folder of a subfolder: Cursor reads such nested rules
// folders too, and their rules belong to the folder that holds .cursor (see classify).
func (c *collector) nestedCursor(r Root, dotCursor string) {
	c.arm(dotCursor, watchRules) // a rules folder appearing in it
	c.source(r.FS, ScopeWorkspace, r.Name, source{provider: ProviderCursor, dir: dotCursor + "/rules", accept: hasExt(".mdc", ".md")})
}

// skippedMemory reports an AGENTS.md or CLAUDE.md directly inside a folder the search does
// not enter, with the reason (skipReason), so that it does not vanish without a word; one that
// a rules source of the root reads (the root's .claude/CLAUDE.md, a file of .clinerules/) is
// that source's rule, not skipped.
func (c *collector) skippedMemory(r Root, dir string) {
	for _, name := range []string{"AGENTS.md", "CLAUDE.md"} {
		full := path.Join(dir, name)
		if sourceReads(full) {
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
			ReadError: fmt.Sprintf("%s: not read, because %s", DiagMemorySkipped, skipReason(path.Base(dir)))})
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

// sourceReads reports whether a workspace rules source reads the root-relative path p.
func sourceReads(p string) bool {
	for _, s := range workspaceSources {
		if s.file == p {
			return true
		}
		rel, ok := strings.CutPrefix(p, s.dir+"/")
		if s.dir != "" && ok && (!s.flat || !strings.Contains(rel, "/")) && s.accept(rel) {
			return true
		}
	}
	return false
}
