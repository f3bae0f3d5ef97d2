package rules

import (
	"io/fs"
	"time"
)

// statInfo is what a [Reader] compares to know a file or folder unchanged: its size, its type
// and permissions, and its modification time.
type statInfo struct {
	size    int64
	mode    fs.FileMode
	modTime time.Time
}

func statInfoOf(info fs.FileInfo) statInfo {
	return statInfo{size: info.Size(), mode: info.Mode(), modTime: info.ModTime()}
}

// dirFD is a folder of an os.DirFS opened for one collection, that the collection's files are
// looked up in by name (see statAt): a rules folder checked file by file costs one short lookup
// per file instead of a walk of the folder's whole path, and allocates nothing.
type dirFD struct {
	dir  string
	fd   int
	open bool
}

// stat is fs.Stat(fsys, name) as the collection's memory of files compares it.
func (c *collector) stat(fsys fs.FS, name string) (statInfo, error) {
	if dir, ok := osDir(fsys); ok && fs.ValidPath(name) {
		if c.dirFD.dir != dir || !c.dirFD.open {
			c.closeDir()
			c.dirFD.dir = dir
			c.dirFD.fd, c.dirFD.open = openDirFD(dir)
		}
		if c.dirFD.open {
			if si, done, err := statAt(c.dirFD.fd, name); done {
				return si, err
			}
		}
	}
	info, err := fs.Stat(fsys, name)
	if err != nil {
		return statInfo{}, err
	}
	return statInfoOf(info), nil
}

// closeDir closes the folder stat opened, if any.
func (c *collector) closeDir() {
	if c.dirFD.open {
		closeDirFD(c.dirFD.fd)
	}
	c.dirFD = dirFD{}
}
