// Package samples locates, for tests, the real rule files and agent sessions kept outside the
// repository: $TASKLOG_SAMPLES, else the folder shared/samples beside the checkout. A clone on its
// own has neither; tests that need them skip with one line saying so.
package samples

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Find returns the samples folder and whether it exists. A set $TASKLOG_SAMPLES is used as it is;
// otherwise the folder is ../shared/samples beside the module root found above the working
// directory.
func Find() (string, bool) {
	dir := os.Getenv("TASKLOG_SAMPLES")
	if dir == "" {
		dir = beside()
	}
	if dir == "" {
		return "", false
	}
	fi, err := os.Stat(dir)
	return dir, err == nil && fi.IsDir()
}

// Dir returns the samples folder joined with elem, or skips t with one line when that is not
// there.
func Dir(t testing.TB, elem ...string) string {
	t.Helper()
	dir, ok := Find()
	p := filepath.Join(append([]string{dir}, elem...)...)
	if ok {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip(Missing(p))
	return ""
}

// Missing is the one line a test skipped for want of the samples says.
func Missing(path string) string {
	if path == "" {
		path = "../shared/samples"
	}
	return fmt.Sprintf("real samples not found at %s: set TASKLOG_SAMPLES to run this test", path)
}

// beside is <module root>/../shared/samples, or "" when no go.mod is above the working directory.
func beside() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(filepath.Dir(dir), "shared", "samples")
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
