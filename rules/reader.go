package rules

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"
)

// racyWindow is how far a file's modification time must lie before the moment it was read for
// its size and time to vouch for its contents later: a write within the same clock tick as the
// read could otherwise leave both unchanged. Two seconds covers the coarsest file systems.
const racyWindow = 2 * time.Second

// A Reader collects rule files as [Collect] does and remembers what it read, so that the next
// collection reads again only what changed. A file is read again unless its size, mode and
// modification time (on Linux also its inode and change time) are those it had when it was
// read and that modification time lay at least two seconds before the read; a folder is listed
// again on the same terms.
//
// This relies on what operating systems do: writing a file sets its modification time, and
// adding, removing or renaming an entry sets its folder's; any change sets the change time,
// which cannot be set back. A file system of another kind must do the same or report zero
// times; one that reports no modification times (testing/fstest.MapFS without them, embed.FS)
// is read in full every time. Except on Linux, a tool that rewrites a file keeping its size and
// setting its modification time back to the old value defeats this; Collect without a Reader
// reads everything.
//
// A Reader is safe for concurrent use. It is meant for one workspace (one set of file systems):
// entries are keyed by scope, root and path.
type Reader struct {
	// Now is the clock reads are stamped with; nil means time.Now.
	Now func() time.Time

	mu    sync.Mutex
	files map[fileKey]cachedFile
	dirs  map[fileKey]cachedDir
	walks map[fileKey]cachedWalk // by walkKey
	roots map[string]*rootWatch  // by root name
	reads int                    // files read from a file system rather than served from memory
	last  int                    // files the last collection found, to size the next
	// lastFiles is what the last collection returned, handed out again while collections find
	// the same files; scratch is an array of a collection that found them, which the next one
	// builds in (see Collect).
	lastFiles, scratch []File
	// collector is the memory of a collector whose collection ended, emptied, for the next.
	collector *collector
	closes    int // how many times Close ran
}

// rootWatch is what the last collection of a watched root found, and its watches. A root
// given up on (see watchRoot) keeps an entry without watches.
type rootWatch struct {
	w     *watcher
	dir   os.FileInfo // the root folder when it was watched: a folder put in its place is a change
	files []File
	// maxFiles is the cap on a rules folder's files the collection ran with: another cap
	// collects the root again.
	maxFiles int
}

// sameFolder reports whether the folder at path is still the one info described, as
// os.SameFile(os.Stat(path), info) does: where folderIs can tell, without allocating the
// FileInfo, since a watched root is checked at every collection.
func sameFolder(path string, info os.FileInfo) bool {
	if same, done := folderIs(path, info); done {
		return same
	}
	now, err := os.Stat(path)
	return err == nil && os.SameFile(now, info)
}

// unchanged returns the files the last collection of root found, when its watches report no
// change that matters since and its folder is still the one watched. A change uses the entry
// up: whoever sees it, every later collection reads the root again until one remembers it.
func (r *Reader) unchanged(root Root, maxFiles int) ([]File, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	rw := r.roots[root.Name]
	if rw == nil || rw.w == nil {
		return nil, false
	}
	if !sameFolder(root.Dir, rw.dir) || rw.maxFiles != maxFiles || rw.w.changed() {
		rw.w.close()
		delete(r.roots, root.Name)
		return nil, false
	}
	return rw.files, true
}

// unchangedWorkspace returns what the last collection of a workspace of one watched root, and
// nothing else, found when its watches report no change: the reader's own array, capacity
// clipped, not a copy (see Collect).
func (r *Reader) unchangedWorkspace(ws Workspace) ([]File, bool) {
	if r == nil || len(ws.Roots) != 1 || ws.Home != nil || len(ws.Remote) != 0 || ws.Roots[0].FS == nil {
		return nil, false
	}
	files, ok := r.unchanged(ws.Roots[0], ws.maxFiles())
	if !ok || len(files) == 0 || !slices.IsSortedFunc(files, compareFiles) {
		return nil, false // collect takes it from here, the watches' verdict included
	}
	return slices.Clip(files), true
}

// watchRoot starts the watches of a new collection of root: nil when it cannot be watched or
// was given up on, since a root whose search stopped at its limit, or one of whose folders
// could not be watched, would pay for watching every folder again at every collection. gen is
// the reader's Close count, for rememberRoot.
func (r *Reader) watchRoot(root Root) (w *watcher, dir os.FileInfo, gen int) {
	if root.Dir == "" {
		return nil, nil, 0
	}
	r.mu.Lock()
	rw, gen := r.roots[root.Name], r.closes
	r.mu.Unlock()
	if rw != nil && rw.w == nil {
		return nil, nil, 0
	}
	dir, err := os.Stat(root.Dir)
	if err != nil {
		return nil, nil, 0
	}
	if w, err = openWatcher(root.Dir); err != nil {
		return nil, nil, 0
	}
	return w, dir, gen
}

// openWatcher makes a root's watcher; tests make it fail as a process out of inotify
// instances sees it.
var openWatcher = newWatcher

// rememberRoot keeps what a watched collection of root found, replacing the last one; a root
// not wholly watched is given up on. A collection that outlived a Close keeps nothing.
func (r *Reader) rememberRoot(root Root, w *watcher, dir os.FileInfo, gen int, whole bool, maxFiles int, files []File) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if gen != r.closes {
		w.close()
		return
	}
	if r.roots == nil {
		r.roots = map[string]*rootWatch{}
	}
	if old := r.roots[root.Name]; old != nil && old.w != nil {
		old.w.close()
	}
	if !whole {
		w.close()
		w, files = nil, nil
	}
	r.roots[root.Name] = &rootWatch{w: w, dir: dir, files: files, maxFiles: maxFiles}
}

// Close stops the reader's watches. The reader stays usable; it watches again on the next
// collection.
func (r *Reader) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rw := range r.roots {
		if rw.w != nil {
			rw.w.close()
		}
	}
	r.roots = nil
	r.closes++
}

// stamp is what a file was when it was read, and when.
type stamp struct {
	statInfo
	readAt time.Time
}

// vouches reports whether info shows the same file the stamp was taken of.
func (s stamp) vouches(info statInfo) bool {
	mt := info.modTime
	return !mt.IsZero() && info.same(s.statInfo) && mt.Before(s.readAt.Add(-racyWindow))
}

type cachedFile struct {
	stamp
	file File
}

type cachedDir struct {
	stamp
	entries []fs.DirEntry
}

// Collect is [Collect] with the reader's memory. The files it returns may share their array
// with the reader's memory (when nothing changed in a watched root): read them, do not modify
// them.
//
// A collection that finds the files the last one returned, the same in every field, returns the
// last one's array again, and its own is the next collection's to build in: a workspace whose
// rule files did not change allocates no array for them.
func (r *Reader) Collect(ws Workspace) ([]File, error) {
	if files, ok := r.unchangedWorkspace(ws); ok {
		r.mu.Lock()
		r.last = len(files)
		r.mu.Unlock()
		return files, nil
	}
	files, err := collect(ws, r)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.last = len(files)
	if err != nil || len(files) == 0 {
		return files, err
	}
	if slices.EqualFunc(files, r.lastFiles, identicalFile) {
		clear(files[:cap(files)]) // it keeps no file's content alive
		r.scratch = files[:0]
		return r.lastFiles, nil
	}
	r.lastFiles = slices.Clip(files)
	return r.lastFiles, nil
}

// takeCollector returns a collector to collect with, of at most maxFiles files a rules folder:
// the memory of one whose collection ended, or new, with r's memory and an empty array to build
// in, the scratch array when there is one as large as the last collection found, else a new one
// that size. A nil Reader makes a new collector without memory.
func (r *Reader) takeCollector(maxFiles int) *collector {
	if r == nil {
		return &collector{maxFiles: maxFiles}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	c, files := r.collector, r.scratch
	r.collector, r.scratch = nil, nil
	if c == nil {
		c = new(collector)
	}
	if cap(files) < r.last {
		files = make([]File, 0, r.last)
	}
	*c = collector{cache: r, maxFiles: maxFiles, files: files}
	return c
}

// putCollector keeps c, emptied, for the next collection; c is not used after.
func (r *Reader) putCollector(c *collector) {
	if r == nil {
		return
	}
	*c = collector{} // it keeps nothing of the collection alive
	r.mu.Lock()
	defer r.mu.Unlock()
	r.collector = c
}

// identicalFile reports whether two files are equal in every field (a test checks it knows
// every field of File).
func identicalFile(a, b File) bool {
	return a.Provider == b.Provider && a.Scope == b.Scope && a.Root == b.Root && a.Path == b.Path &&
		a.AlwaysEnabled == b.AlwaysEnabled && a.Size == b.Size && a.ReadError == b.ReadError &&
		a.Digest == b.Digest && (a.Content == nil) == (b.Content == nil) && bytes.Equal(a.Content, b.Content)
}

// FilesRead is how many files the reader has read from a file system rather than from memory.
func (r *Reader) FilesRead() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads
}

func (r *Reader) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// fileKey names a file or folder of the workspace.
type fileKey struct{ scope, root, path string }

func cacheKey(f File) fileKey { return fileKey{f.Scope, f.Root, f.Path} }

// file returns the remembered read of f when info vouches for it.
func (r *Reader) file(f File, info statInfo) (File, bool) {
	c, ok := r.remembered(f, info)
	return c.file, ok
}

// remembered is file with the stamp of the read.
func (r *Reader) remembered(f File, info statInfo) (cachedFile, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.files[cacheKey(f)]
	if !ok || !c.vouches(info) || c.file.Provider != f.Provider {
		return cachedFile{}, false
	}
	return c, true
}

func (r *Reader) remember(f File, info statInfo, readAt time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads++
	if r.files == nil {
		r.files = map[fileKey]cachedFile{}
	}
	r.files[cacheKey(f)] = cachedFile{stamp{info, readAt}, f}
}

func (r *Reader) dir(key fileKey, info statInfo) ([]fs.DirEntry, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c, ok := r.dirs[key]
	if !ok || !c.vouches(info) {
		return nil, false
	}
	return c.entries, true
}

func (r *Reader) rememberDir(key fileKey, info statInfo, readAt time.Time, entries []fs.DirEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.dirs == nil {
		r.dirs = map[fileKey]cachedDir{}
	}
	r.dirs[key] = cachedDir{stamp{info, readAt}, entries}
}

// Digest is the hex SHA-256 of content: the key its blob is stored under.
func Digest(content []byte) string {
	sum := sha256.Sum256(content)
	return hex.EncodeToString(sum[:])
}
