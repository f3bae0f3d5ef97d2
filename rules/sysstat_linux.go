package rules

import (
	"io/fs"
	"syscall"
)

// sysStat is a file's inode and change time (nanoseconds since 1970), from its stat(2).
func sysStat(info fs.FileInfo) (ino uint64, ctime int64) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0
	}
	return uint64(st.Ino), st.Ctim.Nano()
}
