//go:build linux && (amd64 || arm64)

package rules

import (
	"io/fs"
	"syscall"
	"time"
	"unsafe"
)

// openDirFD opens a folder to look names up in, without reading it.
func openDirFD(dir string) (int, bool) {
	const flags = oPath | syscall.O_DIRECTORY | syscall.O_CLOEXEC
	var buf [maxStatName + 1]byte
	if !cName(&buf, dir) {
		fd, err := syscall.Open(dir, flags, 0)
		return fd, err == nil
	}
	// openat(2) from a name in memory on the stack: syscall.Open makes a copy of it.
	cwd := atFDCWD
	for {
		fd, _, e := syscall.Syscall6(syscall.SYS_OPENAT, uintptr(cwd), uintptr(unsafe.Pointer(&buf[0])), flags, 0, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		return int(fd), e == 0
	}
}

func closeDirFD(fd int) { syscall.Close(fd) }

// oPath is O_PATH, which package syscall does not name: the folder is opened only to look names
// up in, so it needs no read permission.
const oPath = 0x200000

// maxStatName is the longest name statAt looks up without falling back to fs.Stat.
const maxStatName = 512

// statAt is stat(2) of name relative to the folder fd, following links as os.Stat does. done
// is false for a name it does not take (too long, or holding a NUL byte). Its error is the
// syscall.Errno, which names no path.
func statAt(fd int, name string) (si statInfo, done bool, err error) {
	return fstatat(fd, name, 0)
}

// lstatAt is statAt without following a link at the end, as os.Lstat.
func lstatAt(fd int, name string) (si statInfo, done bool, err error) {
	return fstatat(fd, name, atSymlinkNofollow)
}

const atSymlinkNofollow = 0x100

func fstatat(fd int, name string, flags uintptr) (si statInfo, done bool, err error) {
	var st syscall.Stat_t
	if done, err = rawFstatat(fd, name, flags, &st); !done || err != nil {
		return si, done, err
	}
	return statInfo{size: st.Size, mode: fileMode(uint32(st.Mode)), modTime: time.Unix(st.Mtim.Unix()),
		ino: uint64(st.Ino), ctime: st.Ctim.Nano()}, true, nil
}

// atFDCWD is AT_FDCWD: a name looked up in it is relative to the working folder, or absolute.
const atFDCWD = -0x64

// folderIs reports whether the file at path, followed as os.Stat follows it, is the one info
// describes (its device and inode), without an allocation. done is false for a path it does
// not take (see statAt) or an info without a stat(2) record.
func folderIs(path string, info fs.FileInfo) (same, done bool) {
	was, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return false, false
	}
	var st syscall.Stat_t
	done, err := rawFstatat(atFDCWD, path, 0, &st)
	return done && err == nil && st.Dev == was.Dev && st.Ino == was.Ino, done
}

// rawFstatat is fstatat(2) of name in the folder fd into st, without an allocation. done is
// false for a name it does not take (too long, or holding a NUL byte); err is the errno.
func rawFstatat(fd int, name string, flags uintptr, st *syscall.Stat_t) (done bool, err error) {
	var buf [maxStatName + 1]byte
	if !cName(&buf, name) {
		return false, nil
	}
	for {
		_, _, e := syscall.Syscall6(sysFstatat, uintptr(fd), uintptr(unsafe.Pointer(&buf[0])), uintptr(unsafe.Pointer(st)), flags, 0, 0)
		if e == syscall.EINTR {
			continue
		}
		if e != 0 {
			// The errno alone (errors.Is(err, fs.ErrNotExist) holds for a missing name): every
			// caller only asks whether the name is there, most names looked up are not, and a
			// PathError would be an allocation for each.
			return true, e
		}
		return true, nil
	}
}

// cName writes name into buf as the system takes a name, ended by a NUL byte; false for a name
// longer than maxStatName or holding a NUL byte.
func cName(buf *[maxStatName + 1]byte, name string) bool {
	if len(name) > maxStatName {
		return false
	}
	for i := 0; i < len(name); i++ {
		if name[i] == 0 {
			return false
		}
		buf[i] = name[i]
	}
	buf[len(name)] = 0
	return true
}

// fileMode converts a stat(2) mode as package os does.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & syscall.S_IFMT {
	case syscall.S_IFBLK:
		mode |= fs.ModeDevice
	case syscall.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFDIR:
		mode |= fs.ModeDir
	case syscall.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case syscall.S_IFLNK:
		mode |= fs.ModeSymlink
	case syscall.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&syscall.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&syscall.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&syscall.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
