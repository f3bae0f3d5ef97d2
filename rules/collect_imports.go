package rules

import (
	"fmt"
	"io/fs"
	"path"
)

// importWalk reads the files that CLAUDE.md files import (see imports.go), breadth first so that
// each file is reached by its shortest chain, reading only files of one place: the root being
// collected, or the home folder.
type importWalk struct {
	c     *collector
	fsys  fs.FS
	scope string
	root  string
	read  int
}

// imports reads, into c.files, the files of the place (scope, root) that the CLAUDE.md files
// of c.files[from:] import, directly or through other imports, up to MaxImportDepth hops. A
// file that is already in the list (a rule file, or read for another import) is not read
// again. Files of another place are read by that place's walk (a "~/" import by the home
// folder's, after every root).
func (c *collector) imports(fsys fs.FS, scope, root string, from int) {
	type step struct {
		k     importKey
		depth int
	}
	var queue []step
	for i := from; i < len(c.files); i++ {
		if expandsImports(&c.files[i], readingNow) {
			queue = append(queue, step{keyOf(&c.files[i]), 0})
		}
	}
	if len(queue) == 0 {
		return // nothing imports anything: the common case, at every collection
	}
	have := make(map[importKey]bool, len(c.files))
	for i := range c.files {
		have[keyOf(&c.files[i])] = true
	}
	seen := map[importKey]bool{}
	iw := importWalk{c: c, fsys: fsys, scope: scope, root: root}
	for len(queue) > 0 {
		st := queue[0]
		queue = queue[1:]
		if seen[st.k] || st.depth >= MaxImportDepth {
			continue
		}
		seen[st.k] = true
		f := c.find(st.k)
		if f == nil || f.ReadError != "" {
			continue
		}
		text, binary, _ := decodeContent(f.Content)
		if binary {
			continue
		}
		for _, ref := range scanImports(normalizeText(text)) {
			k, why := importTarget(f, ref.path)
			if why != "" {
				continue
			}
			if !have[k] && k.scope == scope && k.root == root {
				have[k] = iw.readOne(k.path)
			}
			if have[k] {
				queue = append(queue, step{k, st.depth + 1})
			}
		}
	}
	if iw.read > MaxImportedFiles {
		c.files = append(c.files, File{Provider: ProviderImport, Scope: scope, Root: root, Path: ".",
			ReadError: fmt.Sprintf("%s: CLAUDE.md files import more than %d files; the rest were not read", DiagWalkLimit, MaxImportedFiles)})
	}
}

// find returns the file of the collection with key k, or nil.
func (c *collector) find(k importKey) *File {
	for i := len(c.files) - 1; i >= 0; i-- {
		if f := &c.files[i]; f.Scope == k.scope && f.Root == k.root && f.Path == k.path {
			return f
		}
	}
	return nil
}

// readOne reads one imported file when it is there, reporting whether it was added. In a
// watched root the folders on the way to it are watched for its name first, so that the file
// appearing, changing or going away is a change; a link on the way gives up the watch (it
// would not see the link's target change).
func (iw *importWalk) readOne(p string) bool {
	c := iw.c
	if iw.scope == ScopeWorkspace {
		dirs := parents(p)
		for i, d := range dirs {
			next := path.Base(p)
			if i+1 < len(dirs) {
				next = path.Base(dirs[i+1])
			}
			c.armName(d, next)
		}
		for _, step := range append(dirs[1:], p) {
			if info, err := fs.Lstat(iw.fsys, step); err == nil && info.Mode()&fs.ModeSymlink != 0 {
				c.linked()
			}
		}
	}
	info, err := fs.Stat(iw.fsys, p)
	if err != nil || info.IsDir() {
		return false
	}
	if iw.read++; iw.read > MaxImportedFiles {
		return false
	}
	c.read(iw.fsys, File{Provider: ProviderImport, Scope: iw.scope, Root: iw.root, Path: p})
	return true
}
