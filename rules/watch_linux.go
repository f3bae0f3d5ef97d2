//go:build linux

package rules

import (
	"errors"
	"path/filepath"
	"runtime"
	"syscall"
	"unsafe"
)

// errNotLocal is newWatcher's error for a folder on a file system whose changes inotify may
// not report: one shared over the network (NFS, SMB), a FUSE one (sshfs), a virtual machine's
// host folder (9p, WSL's drives). Those roots are checked file by file.
var errNotLocal = errors.New("the folder is not on a local file system: inotify may miss its changes")

// localFS tells the file systems (statfs f_type) where every change is made through this
// kernel, so inotify sees it. Any other is treated as remote.
func localFS(magic int64) bool {
	switch magic {
	case 0xEF53, // ext2, ext3, ext4
		0x58465342, // xfs
		0x9123683E, // btrfs
		0x01021994, // tmpfs
		0x858458F6, // ramfs
		0x794C7630, // overlayfs
		0x2FC12FC1, // zfs
		0xF2F52010, // f2fs
		0xCA451A4E, // bcachefs
		0x52654973, // reiserfs
		0x3153464A, // jfs
		0x3434:     // nilfs
		return true
	}
	return false
}

// watcher is one root's inotify instance.
type watcher struct {
	fd      int
	dir     string // the root's folder
	kinds   map[int32][]watched
	buf     []byte
	room    int             // see setRoom
	cleanup runtime.Cleanup // closes fd if the watcher is dropped without close
}

type watched struct {
	dir  string // slash path relative to the root
	kind watchKind
	name string // watchNamed: the one name whose changes matter
}

const watchMask = syscall.IN_MODIFY | syscall.IN_ATTRIB | syscall.IN_CLOSE_WRITE | syscall.IN_CREATE |
	syscall.IN_DELETE | syscall.IN_MOVED_FROM | syscall.IN_MOVED_TO | syscall.IN_DELETE_SELF |
	syscall.IN_MOVE_SELF | syscall.IN_EXCL_UNLINK

func newWatcher(dir string) (*watcher, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return nil, err
	}
	if !localFS(int64(st.Type)) {
		return nil, errNotLocal
	}
	fd, err := syscall.InotifyInit1(syscall.IN_NONBLOCK | syscall.IN_CLOEXEC)
	if err != nil {
		return nil, err
	}
	w := &watcher{fd: fd, dir: dir, kinds: map[int32][]watched{}}
	w.cleanup = runtime.AddCleanup(w, func(fd int) { syscall.Close(fd) }, fd)
	return w, nil
}

// add watches a folder of the root (a slash path relative to it) for changes of the kind. A
// folder that does not exist or cannot be read is errNotWatched: its parent's watch sees it
// appear or change its permissions.
func (w *watcher) add(rel string, kind watchKind) error {
	return w.addWatch(watched{dir: rel, kind: kind})
}

// addNamed watches a folder of the root for changes to one name in it: an imported file, or a
// memory file in a folder the search does not enter.
func (w *watcher) addNamed(rel, name string) error {
	return w.addWatch(watched{dir: rel, kind: watchNamed, name: name})
}

func (w *watcher) addWatch(wt watched) error {
	rel := wt.dir
	wd, err := syscall.InotifyAddWatch(w.fd, filepath.Join(w.dir, filepath.FromSlash(rel)), watchMask)
	if errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, syscall.EACCES) {
		return errNotWatched
	}
	if err != nil {
		return err
	}
	// Two paths to one folder share a descriptor: keep both, each with its own kind.
	w.kinds[int32(wd)] = append(w.kinds[int32(wd)], wt)
	return nil
}

// setRoom sets how many more entries the search for AGENTS.md and CLAUDE.md may meet before it
// stops at its limit: entries created beyond that count as a change.
func (w *watcher) setRoom(n int) { w.room = n }

// changed reads every change reported so far, without waiting, and reports whether one of
// them matters. An error (or an overflowed queue) counts as a change.
func (w *watcher) changed() bool {
	if w.buf == nil {
		w.buf = make([]byte, 64<<10)
	}
	found := false
	for {
		n, err := syscall.Read(w.fd, w.buf)
		if errors.Is(err, syscall.EAGAIN) {
			return found
		}
		if err != nil || n <= 0 {
			return true
		}
		for off := 0; off+syscall.SizeofInotifyEvent <= n; {
			ev := (*syscall.InotifyEvent)(unsafe.Pointer(&w.buf[off]))
			nameEnd := off + syscall.SizeofInotifyEvent + int(ev.Len)
			if nameEnd > n {
				return true
			}
			name := w.buf[off+syscall.SizeofInotifyEvent : nameEnd]
			for len(name) > 0 && name[len(name)-1] == 0 {
				name = name[:len(name)-1]
			}
			off = nameEnd
			if ev.Mask&(syscall.IN_Q_OVERFLOW|syscall.IN_IGNORED|syscall.IN_DELETE_SELF|syscall.IN_MOVE_SELF) != 0 {
				found = true
				continue
			}
			ws, ok := w.kinds[ev.Wd]
			if !ok {
				found = true
				continue
			}
			isDir := ev.Mask&syscall.IN_ISDIR != 0
			for _, wt := range ws {
				if relevant(wt.kind, wt.dir, string(name), isDir) || (wt.kind == watchNamed && wt.name == string(name)) {
					found = true
				}
				if wt.kind&watchMemory != 0 && ev.Mask&(syscall.IN_CREATE|syscall.IN_MOVED_TO) != 0 {
					if w.room--; w.room < 0 {
						found = true // the search would now stop at its limit
					}
				}
			}
		}
	}
}

func (w *watcher) close() {
	w.cleanup.Stop()
	syscall.Close(w.fd)
}
