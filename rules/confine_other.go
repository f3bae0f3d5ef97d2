//go:build !linux

package rules

import "os"

// openedPath is full with its links resolved.
func openedPath(_ *os.File, full string) (string, error) { return resolve(full) }
