package rules

import (
	"errors"
	"path"
	"strings"
)

// errNotWatched is a folder that is absent or unreadable: not watched, and no loss, since its
// parent's watch reports it appearing or becoming readable.
var errNotWatched = errors.New("folder not watched")

// A root's rule files can be watched instead of re-checked: when Root.Dir names the folder its
// FS reads, a Reader asks the operating system (inotify on Linux) to report changes in every
// folder a collection looked at, and the next collection of that root, when nothing relevant
// was reported, returns the files of the last one without touching the file system. A folder is
// watched before it is read, so a change made after that read is always reported. Elsewhere,
// and when watching fails (too many folders, say) or the search for AGENTS.md and CLAUDE.md
// stops at its limit, a root is collected as without watches, and that Reader does not try
// to watch it again.

// watchKind says which changes in a watched folder matter.
type watchKind uint8

const (
	watchRules  watchKind = 1 << iota // a rules folder (or below one): every change
	watchMemory                       // searched for AGENTS.md and CLAUDE.md
	watchProbe                        // on the way to a provider's rules: the next step's names
	watchNamed                        // one name looked for in the folder (see watcher.addNamed)
)

// probeNames are, per folder, the names on the way to a provider's rule files or folders:
// "." holds ".clinerules", ".github" holds "copilot-instructions.md", and so on.
var probeNames = func() map[string]map[string]bool {
	m := map[string]map[string]bool{}
	for _, s := range workspaceSources {
		p := s.dir
		if p == "" {
			p = s.file
		}
		dir := "."
		for _, name := range strings.Split(p, "/") {
			if m[dir] == nil {
				m[dir] = map[string]bool{}
			}
			m[dir][name] = true
			dir = path.Join(dir, name)
		}
	}
	return m
}()

// relevant reports whether a change to name (a folder when isDir) in a folder watched as kind
// can change what a collection finds.
func relevant(kind watchKind, dir, name string, isDir bool) bool {
	switch {
	case kind == watchNamed:
		return false // decided by the name it was added for
	case kind&watchRules != 0:
		return true
	case kind&watchMemory != 0 && (isDir || name == "AGENTS.md" || name == "CLAUDE.md"):
		return true
	case kind&watchProbe != 0 && probeNames[dir][name]:
		return true
	}
	return false
}

// parents lists the folders on the way to p, from ".": "." and ".github" for
// ".github/instructions".
func parents(p string) []string {
	out := []string{"."}
	dir := path.Dir(p)
	if dir == "." {
		return out
	}
	parts := strings.Split(dir, "/")
	for i := range parts {
		out = append(out, strings.Join(parts[:i+1], "/"))
	}
	return out
}
