package rules

import (
	"io/fs"
	"runtime"
	"sync"
	"time"
)

// statInfo is what a [Reader] compares to know a file or folder unchanged: its size, its type
// and permissions, and its modification time; where the system gives them (Linux), also its
// inode and its change time, which no one can set back: a file replaced by another (a rename
// over it) has another inode, and one rewritten with its size kept and its modification time
// restored has a new change time.
type statInfo struct {
	size    int64
	mode    fs.FileMode
	modTime time.Time
	ino     uint64
	ctime   int64 // nanoseconds since 1970
}

func statInfoOf(info fs.FileInfo) statInfo {
	si := statInfo{size: info.Size(), mode: info.Mode(), modTime: info.ModTime()}
	si.ino, si.ctime = sysStat(info)
	return si
}

// same reports whether two stats are alike in all a Reader compares.
func (si statInfo) same(o statInfo) bool {
	return si.size == o.size && si.mode == o.mode && si.modTime.Equal(o.modTime) && si.ino == o.ino && si.ctime == o.ctime
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
	if fd, ok := c.folderFD(fsys, name); ok {
		if si, done, err := statAt(fd, name); done {
			return si, err
		}
	}
	info, err := fs.Stat(fsys, name)
	if err != nil {
		return statInfo{}, err
	}
	return statInfoOf(info), nil
}

// lstat is fs.Lstat(fsys, name) as stat is fs.Stat.
func (c *collector) lstat(fsys fs.FS, name string) (statInfo, error) {
	if fd, ok := c.folderFD(fsys, name); ok {
		if si, done, err := lstatAt(fd, name); done {
			return si, err
		}
	}
	info, err := fs.Lstat(fsys, name)
	if err != nil {
		return statInfo{}, err
	}
	return statInfoOf(info), nil
}

// folderFD is the open folder of fsys, an os.DirFS, that name is looked up in; false when
// name must be looked up through fsys.
func (c *collector) folderFD(fsys fs.FS, name string) (int, bool) {
	dir, ok := osDir(fsys)
	if !ok || !fs.ValidPath(name) {
		return 0, false
	}
	if c.dirFD.dir != dir || !c.dirFD.open {
		c.closeDir()
		c.dirFD.dir = dir
		c.dirFD.fd, c.dirFD.open = openDirFD(dir)
	}
	return c.dirFD.fd, c.dirFD.open
}

// closeDir closes the folder stat opened, if any.
func (c *collector) closeDir() {
	if c.dirFD.open {
		closeDirFD(c.dirFD.fd)
	}
	c.dirFD = dirFD{}
}

// parallelStats is the number of files of one rules folder from which a collection with a
// Reader checks their sizes and times on every processor at once: each check is a system call
// of about a microsecond, and a folder of thousands of rule files checked one by one is most
// of its decisions' time.
const parallelStats = 256

// checked is a file's stat, made ahead of reading it.
type checked struct {
	si  statInfo
	err error
}

// statMany stats the files names of fsys, an os.DirFS, spread over the processors, in the
// order given; nil when they are to be checked one by one as they are read (no Reader, too few
// files, one processor, or another kind of file system).
func (c *collector) statMany(fsys fs.FS, names []string) []checked {
	procs := runtime.GOMAXPROCS(0)
	if c.cache == nil || len(names) < parallelStats || procs < 2 {
		return nil
	}
	fd, ok := c.folderFD(fsys, names[0])
	if !ok {
		return nil
	}
	out := make([]checked, len(names))
	part := func(from, to int) {
		for i := from; i < to; i++ {
			name := names[i]
			if fs.ValidPath(name) {
				if si, done, err := statAt(fd, name); done {
					out[i] = checked{si, err}
					continue
				}
			}
			info, err := fs.Stat(fsys, name)
			if err == nil {
				out[i].si = statInfoOf(info)
			}
			out[i].err = err
		}
	}
	size := (len(names) + procs - 1) / procs
	var wg sync.WaitGroup
	for from := size; from < len(names); from += size {
		wg.Add(1)
		go func(from, to int) {
			defer wg.Done()
			part(from, to)
		}(from, min(from+size, len(names)))
	}
	part(0, min(size, len(names)))
	wg.Wait()
	return out
}

// readAhead takes, for the files of names (of one rules folder, with their stats made by
// statMany), the reads the reader's memory vouches for, and reads the others, spread over the
// processors when there are many (a first collection of thousands of rule files). Files are
// read ahead only while their sizes fit in what is left of MaxCollectionBytes, so that memory
// stays bounded as when reading one by one; the rest are left to the caller (an empty Path).
// out[i] gets the file of names[i]. prev, when not nil, is what the last collection of the same
// walk (the same names) kept of each file, looked at instead of the reader's memory by path;
// readAhead returns what to keep for the next one.
func (c *collector) readAhead(fsys fs.FS, like File, names []string, checked []checked, out []File, prev []cachedFile) []cachedFile {
	var todo []int
	room := MaxCollectionBytes - c.bytes
	// next is what to keep; while every file is as prev has it, it stays nil and prev is kept
	// as it is, which is the most frequent case.
	var next []cachedFile
	if prev == nil {
		next = make([]cachedFile, len(names))
	}
	changed := func(i int) {
		if next == nil {
			next = make([]cachedFile, len(names))
			copy(next, prev[:i])
		}
	}
	for i, name := range names {
		ck := checked[i]
		if ck.err != nil || !ck.si.mode.IsRegular() {
			if prev != nil && prev[i].file.Path != "" {
				changed(i)
			}
			continue
		}
		if prev != nil {
			if p := prev[i]; p.file.Path == name && p.file.Provider == like.Provider && p.vouches(ck.si) {
				out[i] = p.file
				if next != nil {
					next[i] = p
				}
				continue
			}
			changed(i)
		}
		f := like
		f.Path = name
		if hit, ok := c.cache.remembered(f, ck.si); ok {
			out[i], next[i] = hit.file, hit
			continue
		}
		if ck.si.size > room {
			continue
		}
		room -= ck.si.size
		todo = append(todo, i)
	}
	if next == nil {
		return prev
	}
	if len(todo) == 0 {
		return next
	}
	if dir, ok := osDir(fsys); ok {
		c.bound.realDir(dir) // found once, then only read by the readers below
	}
	part := func(todo []int) {
		b := c.bound // each reader its own copy
		for _, i := range todo {
			f := like
			f.Path = names[i]
			readAt := c.cache.now()
			f = readFile(fsys, f, &b)
			if f.ReadError == "" {
				c.cache.remember(f, checked[i].si, readAt)
				next[i] = cachedFile{stamp{checked[i].si, readAt}, f}
			}
			out[i] = f
		}
	}
	procs := runtime.GOMAXPROCS(0)
	if len(todo) < parallelStats || procs < 2 {
		part(todo)
		return next
	}
	size := (len(todo) + procs - 1) / procs
	var wg sync.WaitGroup
	for from := size; from < len(todo); from += size {
		wg.Add(1)
		go func(todo []int) {
			defer wg.Done()
			part(todo)
		}(todo[from:min(from+size, len(todo))])
	}
	part(todo[:min(size, len(todo))])
	wg.Wait()
	return next
}
