package rules

import (
	"io/fs"
	"path/filepath"
)

// folderID names a real folder, whatever links lead to it: its device and inode, or else its
// path with links resolved (or, on a file system that gives neither, its path as walked).
type folderID struct {
	dev, ino uint64
	path     string
}

// idOf identifies the folder p of fsys whose (link-following) info the caller holds.
func idOf(fsys fs.FS, p string, info fs.FileInfo) folderID {
	if info != nil {
		if id, ok := sysFolderID(info); ok {
			return id
		}
	}
	if dir, ok := osDir(fsys); ok {
		if real, err := filepath.EvalSymlinks(filepath.Join(dir, filepath.FromSlash(p))); err == nil {
			return folderID{path: real}
		}
	}
	return folderID{path: p}
}

// folderWalk remembers the real folders one walk has entered: a folder reached again through a
// link is not read twice, which ends link loops and the exponential walks several of them cause.
type folderWalk struct {
	seen  map[folderID]string // the path it was first read as
	stack []folderID          // the folders being read, outermost first
}

// enter records folder id, read as p; it returns the path it was read as before, and whether it
// is an ancestor of p (a loop), when it was.
func (w *folderWalk) enter(id folderID, p string) (first string, loop, again bool) {
	if first, ok := w.seen[id]; ok {
		for _, s := range w.stack {
			if s == id {
				return first, true, true
			}
		}
		return first, false, true
	}
	if w.seen == nil {
		w.seen = map[folderID]string{}
	}
	w.seen[id] = p
	w.stack = append(w.stack, id)
	return "", false, false
}

func (w *folderWalk) leave() { w.stack = w.stack[:len(w.stack)-1] }
