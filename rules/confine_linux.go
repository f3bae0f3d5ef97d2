package rules

import (
	"os"
	"strconv"
	"syscall"
)

// openedPath is the real path of the open file fh (full as it was opened): the kernel's name for
// the file opened, so that a link swapped after the open changes nothing. Without /proc it is
// full with its links resolved. fh is a regular file or a folder, which O_NONBLOCK does not
// concern, so taking its descriptor (which makes it blocking) changes nothing.
func openedPath(fh *os.File, full string) (string, error) {
	var proc [32]byte
	var buf [4096]byte
	p := strconv.AppendUint(append(proc[:0], "/proc/self/fd/"...), uint64(fh.Fd()), 10)
	n, err := syscall.Readlink(string(p), buf[:])
	if err != nil || n <= 0 || n >= len(buf) || buf[0] != '/' {
		return resolve(full)
	}
	return string(buf[:n]), nil
}
