package rules

import (
	"os"
	"strconv"
)

// openedPath is the real path of the open file fh (full as it was opened): the kernel's name for
// the file opened, so that a link swapped after the open changes nothing. Without /proc it is
// full with its links resolved.
func openedPath(fh *os.File, full string) (string, error) {
	var p string
	var err error
	sc, scErr := fh.SyscallConn()
	if scErr == nil {
		scErr = sc.Control(func(fd uintptr) { p, err = os.Readlink("/proc/self/fd/" + strconv.FormatUint(uint64(fd), 10)) })
	}
	if scErr != nil || err != nil || len(p) == 0 || p[0] != '/' {
		return resolve(full)
	}
	return p, nil
}
