//go:build unix

package rules

import (
	"io/fs"
	"syscall"
)

// sysFolderID is a folder's device and inode.
func sysFolderID(info fs.FileInfo) (folderID, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return folderID{}, false
	}
	return folderID{dev: uint64(st.Dev), ino: uint64(st.Ino)}, true
}
