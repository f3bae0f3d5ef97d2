//go:build unix

package session

import (
	"syscall"
	"time"
)

// processCPU is the CPU time (user and system) the test process has used so far, every thread
// counted: on a loaded machine it measures the work where the wall clock measures the wait.
func processCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
