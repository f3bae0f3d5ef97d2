package rules

import "io/fs"

// cachedWalk is what a walk of one provider's rules folder found, remembered by a [Reader] so
// that a rules folder none of whose folders changed is not walked again: only its files are
// checked. Only a walk that met no link, no folder it could not read and no limit is
// remembered, so that it depends on nothing but the listings of the folders it read.
type cachedWalk struct {
	listed   []listedDir // the folders it listed, the rules folder first
	found    []string    // the rule files it found, in order
	spent    int         // the directory entries it looked at (see collector.spend)
	maxFiles int         // the cap on the files of one folder it ran with
	// files is, when its files were checked together (see statMany), what the last collection
	// kept of each of found: its read and the stat that vouched for it (none for a file not
	// read), so that the next one compares in order instead of looking each path up.
	files []cachedFile
}

// listedDir is a folder a walk listed, and its stat when it was listed.
type listedDir struct {
	path string
	si   statInfo
}

// walkKey names the walk of source s of a root.
func walkKey(scope, root string, s source) fileKey {
	return fileKey{scope, root, string(s.provider) + "\x00" + s.dir}
}

// walked returns the files the last walk of source s found, when every folder it listed is
// unchanged: each one's size, mode, times and inode are those it had when that walk listed it,
// and vouch for the listing the reader keeps of it (si is the rules folder's own). An entry
// added, removed or renamed in any of those folders changes that folder's times, and a folder
// replaced is another inode, so the walk would find what it found before. The entries it
// looked at count as looked at again.
func (c *collector) walked(fsys fs.FS, scope, root string, s source, si statInfo) (cachedWalk, bool) {
	if c.cache == nil || c.watch != nil {
		return cachedWalk{}, false
	}
	key := walkKey(scope, root, s)
	c.cache.mu.Lock()
	w, ok := c.cache.walks[key]
	c.cache.mu.Unlock()
	if !ok || w.maxFiles != c.maxFiles || c.entries+w.spent > MaxWalkEntries {
		return cachedWalk{}, false
	}
	for i, d := range w.listed {
		if i > 0 {
			var err error
			if si, err = c.stat(fsys, d.path); err != nil {
				return cachedWalk{}, false
			}
		}
		if !si.same(d.si) {
			return cachedWalk{}, false
		}
		if _, ok := c.cache.dir(fileKey{scope, root, d.path}, si); !ok {
			return cachedWalk{}, false
		}
	}
	c.entries += w.spent
	return w, true
}

// rememberWalk keeps what sw found, when it can be trusted later (see cachedWalk), and forgets
// the walk before it otherwise. spent is the entries it looked at.
func (c *collector) rememberWalk(sw *sourceWalk, spent int) {
	if c.cache == nil || c.watch != nil {
		return
	}
	key := walkKey(sw.scope, sw.root, sw.s)
	keep := !sw.linked && !sw.failed && len(sw.notes) == 0 && sw.limits == (walkLimits{}) && len(sw.listed) > 0
	c.cache.mu.Lock()
	defer c.cache.mu.Unlock()
	if !keep {
		delete(c.cache.walks, key)
		return
	}
	if c.cache.walks == nil {
		c.cache.walks = map[fileKey]cachedWalk{}
	}
	c.cache.walks[key] = cachedWalk{listed: sw.listed, found: sw.found, spent: spent, maxFiles: c.maxFiles}
}

// keepFiles keeps files, what readAhead kept of the files found, with the walk of source s
// that found them (the same slice), for the next collection.
func (c *collector) keepFiles(scope, root string, s source, found []string, files []cachedFile) {
	if c.cache == nil || len(found) == 0 {
		return
	}
	key := walkKey(scope, root, s)
	c.cache.mu.Lock()
	defer c.cache.mu.Unlock()
	w, ok := c.cache.walks[key]
	if !ok || len(w.found) != len(found) || &w.found[0] != &found[0] {
		return
	}
	w.files = files
	c.cache.walks[key] = w
}
