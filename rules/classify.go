package rules

import (
	"path"
	"strings"
)

// fileKind is what a file is to its provider, read from its path alone so that a recorded
// File re-loads the same way.
type fileKind int

const (
	kindFolder    fileKind = iota // a file in a rules folder: named by its path inside the folder
	kindLegacy                    // a single always-on file (.cursorrules, .windsurfrules, global_rules.md)
	kindMain                      // .github/copilot-instructions.md: always on, frontmatter not read
	kindMemory                    // AGENTS.md / CLAUDE.md: scoped by where it is
	kindClineFile                 // the legacy .clinerules file, read as a file of the folder (before rules/3: kindLegacy)
	kindRemote                    // a remote rule
)

type fileClass struct {
	kind fileKind
	name string
	// dir is the folder the file belongs to ("" at the root): the folder of a subfolder's
	// AGENTS.md or CLAUDE.md, or the folder holding a nested .cursor/rules.
	dir string
}

// classify says what f is to its provider, as the engine versions of reading rd read it: before
// rules/3, the legacy .clinerules file sent as written (kindLegacy), and a CLAUDE.md or
// AGENTS.md in a .claude/rules folder read as a memory file of that folder; before rules/4, the
// root's CLAUDE.local.md read as a rule file, not a memory file.
func classify(f *File, rd reading) fileClass {
	before3 := rd < readingV3
	if f.Scope == ScopeRemote {
		return fileClass{kind: kindRemote, name: f.Path}
	}
	p := f.Path
	base := path.Base(p)
	switch {
	case f.Provider == ProviderCline && p == ".clinerules":
		if before3 {
			return fileClass{kind: kindLegacy, name: "clinerules"}
		}
		return fileClass{kind: kindClineFile, name: "clinerules"}
	case p == ".cursorrules" || p == ".windsurfrules":
		return fileClass{kind: kindLegacy, name: strings.TrimPrefix(p, ".")}
	case p == ".codeium/windsurf/memories/global_rules.md":
		return fileClass{kind: kindLegacy, name: "global_rules"}
	case isRootLocalMemory(f, rd):
		return fileClass{kind: kindMemory, name: "CLAUDE.local"} // Claude Code's personal memory file
	case p == ".github/copilot-instructions.md":
		return fileClass{kind: kindMain, name: "copilot-instructions"}
	case (f.Provider == ProviderAgents || f.Provider == ProviderClaude) && (base == "AGENTS.md" || base == "CLAUDE.md") &&
		(before3 || !strings.HasPrefix(p, ".claude/rules/")): // Claude Code reads its rules folder's files as rules
		dir := path.Dir(p)
		stem := strings.TrimSuffix(base, ".md")
		if dir == "." || dir == ".claude" || dir == ".codex" || f.Scope == ScopeGlobal {
			return fileClass{kind: kindMemory, name: stem}
		}
		return fileClass{kind: kindMemory, name: dir + "/" + stem, dir: dir}
	}
	if f.Provider == ProviderCursor && f.Scope == ScopeWorkspace {
		// A nested rules folder (apps/api/.cursor/rules/x.mdc) belongs to apps/api; its rule is
		// named apps/api/x.
		if dir, rel, ok := strings.Cut(p, "/.cursor/rules/"); ok && !strings.HasPrefix(p, ".cursor/rules/") {
			return fileClass{kind: kindFolder, name: dir + "/" + ruleName(f.Provider, rel), dir: dir}
		}
	}
	rel := p
	for _, pre := range folderPrefixes(f.Provider) {
		if strings.HasPrefix(p, pre) {
			rel = strings.TrimPrefix(p, pre)
			break
		}
	}
	return fileClass{kind: kindFolder, name: ruleName(f.Provider, rel)}
}

// ruleName drops the source's name suffix (".instructions.md" for Copilot), else the last
// extension.
func ruleName(provider Provider, rel string) string {
	if s := sourceOf(provider); s != nil && s.nameSuffix != "" {
		if s, ok := strings.CutSuffix(rel, s.nameSuffix); ok {
			return s
		}
	}
	if ext := path.Ext(rel); ext != "" && len(ext) < len(path.Base(rel)) {
		return strings.TrimSuffix(rel, ext)
	}
	return rel
}

// precedence of a rule: higher wins among rules of the same name. A remote rule that is
// always enabled is mandated by its organization and outranks everything; then provider,
// then scope (workspace over global over remote).
func precedence(f *File) int {
	p := rankOf(f.Provider) * 10
	switch f.Scope {
	case ScopeWorkspace:
		p += 3
	case ScopeGlobal:
		p += 2
	default:
		p++
	}
	if f.Scope == ScopeRemote && f.AlwaysEnabled {
		p += 1000
	}
	return p
}
