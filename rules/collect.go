package rules

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
)

// Limits of discovery. They bound the work a hostile or huge tree can cause.
const (
	// MaxFileSize is the number of bytes kept of one rule file; a larger file is truncated and
	// the rule gets a [DiagTooLarge] diagnostic.
	MaxFileSize = 256 << 10
	// DefaultMaxFilesPerFolder bounds the files taken from one rules folder unless
	// [Workspace.MaxFilesPerFolder] says otherwise. It lies within MaxWalkEntries, which
	// bounds every walk whatever the cap.
	DefaultMaxFilesPerFolder = 10000
	// MaxWalkEntries bounds the directory entries one collection looks at in one root (and in
	// the home folder): every rules folder and the search for AGENTS.md and CLAUDE.md share it.
	// At the bound the walk stops; the files found so far are read and a [DiagWalkLimit]
	// diagnostic says what was not.
	MaxWalkEntries = 20000
	// MaxCollectionBytes bounds the rule-file bytes one collection keeps of one root (and of
	// the home folder), so that a folder of many large files cannot hold gigabytes in memory.
	// A file read past it keeps no content and gets a [DiagWalkLimit] diagnostic.
	MaxCollectionBytes = 64 << 20
	// MaxDepth bounds the folder depth of every walk. Links are followed inside rules folders
	// only, and never into a folder the same walk has read (see [DiagLinkLoop]).
	MaxDepth = 12
)

// ErrNoFS is returned by [Collect] for a workspace root without a file system.
var ErrNoFS = errors.New("rules: workspace root has no file system")

// skippedDirs are never searched for AGENTS.md/CLAUDE.md: they hold dependencies or build
// output, not the project's own instructions, and can be enormous.
var skippedDirs = map[string]bool{
	"node_modules": true, "vendor": true, "dist": true, "build": true, "target": true,
	"out": true, "__pycache__": true, "venv": true, "bower_components": true,
}

// internalDirs are the folders whose names start with a dot that belong to a version control
// system, an editor or agent, or a build tool's cache: the search for AGENTS.md and CLAUDE.md
// does not enter them (a tool's own folder is read by its provider's sources). Every other
// dot-folder (.taskmaster, .agents, .docs) is searched like any folder.
var internalDirs = map[string]string{
	".git": "version control", ".hg": "version control", ".svn": "version control", ".jj": "version control", ".bzr": "version control",
	".cursor": "a tool's own folder", ".windsurf": "a tool's own folder", ".claude": "a tool's own folder",
	".clinerules": "a tool's own folder", ".tasklog": "a tool's own folder", ".github": "a tool's own folder",
	".vscode": "a tool's own folder", ".idea": "a tool's own folder", ".codex": "a tool's own folder",
	".codeium": "a tool's own folder", ".devcontainer": "a tool's own folder",
	".cache": "a cache", ".next": "build output", ".nuxt": "build output", ".svelte-kit": "build output",
	".turbo": "a cache", ".parcel-cache": "a cache", ".angular": "a cache", ".gradle": "a cache",
	".terraform": "dependencies", ".venv": "dependencies", ".tox": "dependencies", ".yarn": "dependencies",
	".pnpm-store": "dependencies", ".npm": "a cache", ".mypy_cache": "a cache", ".pytest_cache": "a cache",
	".ruff_cache": "a cache", ".dart_tool": "build output", ".expo": "build output", ".vercel": "build output",
}

// skipsFolder reports whether the search for AGENTS.md and CLAUDE.md does not enter a folder
// of that name: skipReason then says why.
func skipsFolder(name string) bool {
	_, internal := internalDirs[name]
	return internal || skippedDirs[name]
}

// skipReason says why the search for AGENTS.md and CLAUDE.md does not enter a folder of that
// name ("" when it does).
func skipReason(name string) string {
	if skippedDirs[name] {
		return "it holds dependencies or build output"
	}
	if why, ok := internalDirs[name]; ok {
		return "it is " + why + " (" + name + "), not the project's own instructions"
	}
	return ""
}

// Collect reads every rule file of the workspace: the only function of this package that
// does I/O. The result is sorted (workspace, then global, then remote; by root and path) and
// does not depend on directory order. A file that is too large comes back truncated and one
// that cannot be read comes back empty with ReadError set, so that [Load] reports it; a walk
// that hits a limit, a named pipe, socket or device where a rule file was looked for (never
// opened so that it could block), and a link into a folder the walk has read come back as a
// File with ReadError too, which Load turns into a diagnostic only. Collect fails only for a
// root without a file system.
func Collect(ws Workspace) ([]File, error) {
	return collect(ws, nil)
}

// collect is Collect, with cache's memory when it is set; the array it returns is a new one or
// cache's scratch (see Reader.Collect), never one cache keeps.
func collect(ws Workspace, cache *Reader) ([]File, error) {
	c := cache.takeCollector(ws.maxFiles())
	defer cache.putCollector(c)
	defer c.closeDir()
	for _, r := range ws.Roots {
		if r.FS == nil {
			return nil, fmt.Errorf("collect root %q: %w", r.Name, ErrNoFS)
		}
		if cache == nil {
			c.workspace(r)
			continue
		}
		if files, ok := cache.unchanged(r, c.maxFiles); ok {
			c.files = append(c.files, files...)
			continue
		}
		w, dir, gen := cache.watchRoot(r)
		c.watch, c.whole, c.armed, c.named, c.root = w, true, nil, nil, r
		if w != nil {
			c.armed = map[string]watchKind{}
		}
		start := len(c.files)
		c.workspace(r)
		if c.watch != nil {
			cache.rememberRoot(r, c.watch, dir, gen, c.whole, c.maxFiles, slices.Clone(c.files[start:]))
		}
		c.watch = nil
	}
	if ws.Home != nil {
		c.home(ws.Home)
	}
	for _, rr := range ws.Remote {
		c.files = append(c.files, File{Provider: ProviderCline, Scope: ScopeRemote, Path: rr.Name,
			Content: []byte(rr.Contents), AlwaysEnabled: rr.AlwaysEnabled})
	}
	if !slices.IsSortedFunc(c.files, compareFiles) { // files remembered from a watched root are
		slices.SortStableFunc(c.files, compareFiles)
	}
	if len(c.files) == 0 {
		return nil, nil // as without a Reader
	}
	return c.files, nil
}

type collector struct {
	files []File
	cache *Reader // nil: read everything
	// watch, while a root is collected with watches, gets every folder the collection looks
	// at, before it looks (see watch.go); whole turns false when one cannot be watched.
	watch *watcher
	whole bool
	armed map[string]watchKind
	named map[string]bool // folder "\x00" name, watched by armName
	root  Root
	// entries counts the directory entries the collection of the current root (or home) has
	// looked at, against MaxWalkEntries.
	entries int
	// maxFiles is the cap on the files taken from one rules folder.
	maxFiles int
	// bytes counts the content kept of the current root (or home), against MaxCollectionBytes.
	bytes int64
	// dirFD is the folder of an os.DirFS the collection's files are looked up in (see stat).
	dirFD dirFD
	// bound is the real path of the folder of an os.DirFS being read, that every file and
	// folder read must lie in (see confine.go).
	bound bound
}

// arm watches a folder of the root being collected for changes of the kind. Only the root
// folder itself must exist.
func (c *collector) arm(dir string, kind watchKind) {
	if c.watch == nil || c.armed[dir]&kind == kind {
		return
	}
	c.armed[dir] |= kind
	if err := c.watch.add(dir, kind); err != nil && (dir == "." || !errors.Is(err, errNotWatched)) {
		c.whole = false
	}
}

// linked notes a symbolic link met while the root is watched. A watch sees changes in its own
// folder only, not in the folder a link points into, so a root with links on the way to its
// rules is not watched.
func (c *collector) linked() {
	if c.watch != nil {
		c.whole = false
	}
}

// probe watches the folders on the way to a provider's path p, before p is looked at, and
// gives up watching when a step of the way is a symbolic link.
func (c *collector) probe(fsys fs.FS, p string) {
	if c.watch == nil {
		return
	}
	for _, dir := range parents(p) {
		c.arm(dir, watchProbe)
	}
	for _, step := range append(parents(p)[1:], p) {
		if info, err := fs.Lstat(fsys, step); err == nil && info.Mode()&fs.ModeSymlink != 0 {
			c.linked()
		}
	}
}

func hasExt(exts ...string) func(string) bool {
	return func(rel string) bool {
		for _, e := range exts {
			if strings.HasSuffix(rel, e) {
				return true
			}
		}
		return false
	}
}

// clineAccept reads every file of .clinerules/ except the folders Cline uses for other things.
func clineAccept(rel string) bool {
	first, _, _ := strings.Cut(rel, "/")
	return !strings.Contains(rel, "/") || (first != "workflows" && first != "hooks" && first != "skills")
}

func anyFile(string) bool { return true }

func (c *collector) workspace(r Root) {
	c.entries, c.bytes = 0, 0
	start := len(c.files)
	for _, s := range workspaceSources {
		c.source(r.FS, ScopeWorkspace, r.Name, s)
	}
	c.memoryFiles(r)
	c.imports(r.FS, ScopeWorkspace, r.Name, start)
}

func (c *collector) home(fsys fs.FS) {
	c.entries, c.bytes = 0, 0
	for _, s := range homeSources {
		c.source(fsys, ScopeGlobal, "", s)
	}
	c.imports(fsys, ScopeGlobal, "", 0) // "~/" imports of every CLAUDE.md, the workspace's too
}

func (c *collector) source(fsys fs.FS, scope, root string, s source) {
	if scope == ScopeWorkspace {
		p := s.dir
		if p == "" {
			p = s.file
		}
		c.probe(fsys, p)
		if s.dir != "" {
			c.arm(s.dir, watchRules) // before its Stat, whose time the listing's memory trusts
		}
	}
	if s.file != "" {
		info, err := c.stat(fsys, s.file)
		if err != nil || info.mode.IsDir() {
			return // absent, or the folder form of the same name (.clinerules/)
		}
		c.read(fsys, File{Provider: s.provider, Scope: scope, Root: root, Path: s.file})
		return
	}
	// Most sources are absent: the look-up that says so allocates nothing.
	si, err := c.stat(fsys, s.dir)
	if err != nil || !si.mode.IsDir() {
		return
	}
	sw := sourceWalk{c: c, fsys: fsys, scope: scope, root: root, s: s}
	var prev []cachedFile // what the last collection of the same walk kept of its files
	if w, ok := c.walked(fsys, scope, root, s, si); ok {
		sw.found, prev = w.found, w.files
	} else {
		info, err := fs.Stat(fsys, s.dir)
		if err != nil || !info.IsDir() {
			return
		}
		start := c.entries
		sw.walk(s.dir, 1, info)
		c.rememberWalk(&sw, c.entries-start)
	}
	like := File{Provider: s.provider, Scope: scope, Root: root}
	if checked := c.statMany(fsys, sw.found); checked != nil {
		// The files go into c.files in place: read ahead, or left empty to be read here.
		at := len(c.files)
		c.files = slices.Grow(c.files, len(sw.found))[:at+len(sw.found)]
		ahead := c.files[at:]
		clear(ahead)
		kept := c.readAhead(fsys, like, sw.found, checked, ahead, prev)
		c.keepFiles(scope, root, s, sw.found, kept)
		for i, p := range sw.found {
			if ahead[i].Path == "" {
				f := like
				f.Path = p
				ahead[i] = c.readChecked(fsys, f, checked[i].si, checked[i].err)
			}
			ahead[i] = c.budget(ahead[i])
		}
	} else {
		for _, p := range sw.found {
			f := like
			f.Path = p
			c.read(fsys, f)
		}
	}
	c.files = append(c.files, sw.notes...)
	if sw.limits != (walkLimits{}) {
		c.files = append(c.files, File{Provider: s.provider, Scope: scope, Root: root, Path: s.dir,
			ReadError: fmt.Sprintf("%s: the folder has %s; the rest was not read", DiagWalkLimit, sw.limits.describe(c.maxFiles))})
	}
}

// sourceWalk lists one provider's rules folder.
type sourceWalk struct {
	c           *collector
	fsys        fs.FS
	scope, root string
	s           source
	folders     folderWalk
	found       []string
	notes       []File // links not followed
	limits      walkLimits
	// listed are the folders the walk listed, in order; linked or failed is set when it met a
	// link or a folder it could not read, and then it is not remembered (see rememberWalk).
	listed         []listedDir
	linked, failed bool
}

// walkLimits records which bound a walk stopped at.
type walkLimits struct{ files, depth, entries bool }

// describe names the bounds the walk stopped at; maxFiles is the cap on its files.
func (l walkLimits) describe(maxFiles int) string {
	var parts []string
	if l.files {
		parts = append(parts, fmt.Sprintf("more than %d rule files", maxFiles))
	}
	if l.depth {
		parts = append(parts, fmt.Sprintf("folders deeper than %d", MaxDepth))
	}
	if l.entries {
		parts = append(parts, fmt.Sprintf("more entries than the %d one collection of a root looks at", MaxWalkEntries))
	}
	return strings.Join(parts, " and ")
}

// walk reads folder dir (info is its link-following Stat) unless a link led back into a folder
// this walk has read.
func (sw *sourceWalk) walk(dir string, depth int, info fs.FileInfo) {
	c, s := sw.c, sw.s
	if first, loop, again := sw.folders.enter(idOf(sw.fsys, dir, info), dir); again {
		msg := fmt.Sprintf("%s: links to %s, a folder this walk has already read; not read again", DiagLinkLoop, first)
		if loop {
			msg = fmt.Sprintf("%s: links back to %s, which holds it: a loop, not followed", DiagLinkLoop, first)
		}
		sw.notes = append(sw.notes, File{Provider: s.provider, Scope: sw.scope, Root: sw.root, Path: dir, ReadError: msg})
		return
	}
	defer sw.folders.leave()
	if sw.scope == ScopeWorkspace {
		c.arm(dir, watchRules)
	}
	entries, err := c.readDir(sw.fsys, sw.scope, sw.root, dir, info)
	if out := asOutside(err); out != nil {
		sw.notes = append(sw.notes, outsideNote(File{Provider: s.provider, Scope: sw.scope, Root: sw.root, Path: dir}, out))
		return
	}
	if err != nil {
		sw.failed = true
		c.files = append(c.files, File{Provider: s.provider, Scope: sw.scope, Root: sw.root, Path: dir,
			ReadError: "read folder: " + err.Error()})
		return
	}
	if info == nil {
		sw.failed = true // the folder's stat is not known, so neither what would vouch for it
	} else {
		sw.listed = append(sw.listed, listedDir{dir, statInfoOf(info)})
	}
	// Real subfolders first, links after: a folder reached both ways is read under its own name.
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink == 0 && !sw.entry(dir, depth, e) {
			return
		}
	}
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 && !sw.entry(dir, depth, e) {
			return
		}
	}
}

// entry takes one entry of folder dir; false when the walk must stop.
func (sw *sourceWalk) entry(dir string, depth int, e fs.DirEntry) bool {
	c, s := sw.c, sw.s
	if !c.spend() {
		sw.limits.entries = true
		return false
	}
	name := e.Name()
	if strings.HasPrefix(name, ".") {
		return true // .DS_Store, editor swap files, hidden folders
	}
	full := path.Join(dir, name)
	isDir := e.IsDir()
	var sub fs.FileInfo
	if isDir || e.Type()&fs.ModeSymlink != 0 {
		if e.Type()&fs.ModeSymlink != 0 {
			sw.linked = true
			c.linked()
		}
		if fi, err := fs.Stat(sw.fsys, full); err == nil {
			isDir, sub = fi.IsDir(), fi
		}
	}
	if isDir {
		switch {
		case s.flat:
		case depth >= MaxDepth:
			sw.limits.depth = true
		default:
			sw.walk(full, depth+1, sub)
		}
		return !sw.limits.entries
	}
	if !s.accept(strings.TrimPrefix(full, s.dir+"/")) {
		return true
	}
	if len(sw.found) >= c.maxFiles {
		sw.limits.files = true
		return false
	}
	sw.found = append(sw.found, full)
	return true
}

// spend counts one directory entry looked at against the root's MaxWalkEntries; false when none
// is left.
func (c *collector) spend() bool {
	c.entries++
	return c.entries <= MaxWalkEntries
}

// memoryFiles finds AGENTS.md and CLAUDE.md at the root and in its subfolders, skipping
// hidden folders and dependency or build folders.
func (c *collector) memoryFiles(r Root) {
	limited := false
	var walk func(dir string, depth int)
	walk = func(dir string, depth int) {
		c.arm(dir, watchMemory)
		entries, err := c.readDir(r.FS, ScopeWorkspace, r.Name, dir, nil)
		if err != nil {
			return // unreadable subfolders hold no rules we could report by name
		}
		for _, e := range entries {
			if !c.spend() {
				limited = true
				return
			}
			name := e.Name()
			full := name // path.Join(dir, name) of an entry's name, without a copy at the root
			if dir != "." {
				full = dir + "/" + name
			}
			if e.IsDir() { // symlinked folders are not followed here: they are often loops
				if name == ".cursor" && dir != "." {
					c.nestedCursor(r, full) // the root's is one of the workspace sources
				}
				if skipsFolder(name) {
					c.skippedMemory(r, full)
					continue
				}
				if depth >= MaxDepth {
					limited = true
					continue
				}
				walk(full, depth+1)
				continue
			}
			if (name == "AGENTS.md" || name == "CLAUDE.md") && e.Type()&fs.ModeSymlink != 0 {
				c.linked()
			}
			switch name {
			case "AGENTS.md":
				c.read(r.FS, File{Provider: ProviderAgents, Scope: ScopeWorkspace, Root: r.Name, Path: full})
			case "CLAUDE.md":
				c.read(r.FS, File{Provider: ProviderClaude, Scope: ScopeWorkspace, Root: r.Name, Path: full})
			}
		}
	}
	walk(".", 1)
	if c.watch != nil {
		c.watch.setRoom(MaxWalkEntries - c.entries)
	}
	if limited {
		c.whole = false // what lies beyond the limit is neither searched nor watched
		c.files = append(c.files, File{Provider: ProviderAgents, Scope: ScopeWorkspace, Root: r.Name, Path: ".",
			ReadError: fmt.Sprintf("%s: the workspace has more than the %d entries one collection of a root looks at, or folders deeper than %d; AGENTS.md and CLAUDE.md files beyond were not searched",
				DiagWalkLimit, MaxWalkEntries, MaxDepth)})
	}
}

// read reads one file, or takes it from the reader's memory when its size and time vouch
// for it, and keeps it unless the root's files already hold MaxCollectionBytes.
func (c *collector) read(fsys fs.FS, f File) {
	c.files = append(c.files, c.budget(c.readOne(fsys, f)))
}

func (c *collector) readOne(fsys fs.FS, f File) File {
	if c.cache == nil {
		return readFile(fsys, f, &c.bound) // which checks the file's type itself
	}
	info, statErr := c.stat(fsys, f.Path)
	return c.readChecked(fsys, f, info, statErr)
}

// readChecked is readOne with the file's stat made.
func (c *collector) readChecked(fsys fs.FS, f File, info statInfo, statErr error) File {
	if statErr == nil && !info.mode.IsRegular() {
		return notRegular(f, info.mode)
	}
	if statErr == nil {
		if hit, ok := c.cache.file(f, info); ok {
			return hit
		}
	}
	readAt := c.cache.now()
	f = readFile(fsys, f, &c.bound)
	if statErr == nil && f.ReadError == "" {
		c.cache.remember(f, info, readAt)
	}
	return f
}

// budget counts f's content against MaxCollectionBytes; past it, f keeps no content and says
// why. Files are read in a sorted order, so the same tree always cuts at the same file.
func (c *collector) budget(f File) File {
	if f.ReadError != "" || c.bytes+int64(len(f.Content)) <= MaxCollectionBytes {
		c.bytes += int64(len(f.Content))
		return f
	}
	f.Content, f.Digest = nil, ""
	f.ReadError = fmt.Sprintf("%s: the rule files of this root already hold the %d MiB one collection keeps; not read",
		DiagWalkLimit, MaxCollectionBytes>>20)
	return f
}

// readDir lists a folder, or takes the listing from the reader's memory when the folder's time
// vouches for it (adding or removing an entry changes it). info is the folder's, when the
// caller has just read it.
func (c *collector) readDir(fsys fs.FS, scope, root, dir string, info fs.FileInfo) ([]fs.DirEntry, error) {
	if c.cache == nil {
		return listDir(fsys, dir, &c.bound)
	}
	key := fileKey{scope, root, dir}
	var si statInfo
	if info != nil {
		si = statInfoOf(info)
	} else {
		var err error
		if si, err = c.stat(fsys, dir); err != nil {
			return listDir(fsys, dir, &c.bound)
		}
	}
	if entries, ok := c.cache.dir(key, si); ok {
		return entries, nil
	}
	readAt := c.cache.now()
	entries, err := listDir(fsys, dir, &c.bound)
	if err == nil {
		c.cache.rememberDir(key, si, readAt, entries)
	}
	return entries, err
}

// readFile reads at most MaxFileSize bytes of one regular file and sets its Digest. A file that
// is not regular, or whose real path leaves its folder, is not read (see [DiagNotRegular],
// [DiagOutsideRoot]).
func readFile(fsys fs.FS, f File, b *bound) File {
	fh, info, err := openRegular(fsys, f.Path, b)
	if errors.Is(err, errNotRegular) {
		return notRegular(f, info.Mode())
	}
	if out := asOutside(err); out != nil {
		return outsideNote(f, out)
	}
	if err != nil {
		f.ReadError = err.Error()
		return f
	}
	defer fh.Close()
	f.Size = info.Size()
	data, err := io.ReadAll(io.LimitReader(fh, MaxFileSize))
	if err != nil {
		f.ReadError = err.Error()
		data = nil
	}
	f.Content = data
	f.Digest = Digest(data)
	// A file that grew between Stat and the read is at least as large as what was read.
	f.Size = max(f.Size, int64(len(data)))
	return f
}
