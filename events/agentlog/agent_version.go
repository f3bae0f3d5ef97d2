package agentlog

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"
)

// transcriptTail is how much of the end of a transcript transcriptVersion reads: the last lines
// are enough, and a long session's transcript is not read whole by a hook.
const transcriptTail = 256 << 10

// transcriptVersion is the agent version written on the last line of a Claude Code transcript
// (JSON lines, each with a "version" field) that carries one; empty when the path is empty,
// the file cannot be read or no line names a version. Only the hook calls it: it reads the
// file when the hook runs, and the version it finds is recorded as an event.
func transcriptVersion(path string) string {
	if path == "" {
		return ""
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > transcriptTail {
		if _, err := f.Seek(fi.Size()-transcriptTail, io.SeekStart); err != nil {
			return ""
		}
	}
	b, err := io.ReadAll(io.LimitReader(f, transcriptTail))
	if err != nil {
		return ""
	}
	lines := bytes.Split(b, []byte("\n"))
	for i := len(lines) - 1; i >= 0; i-- {
		var line struct {
			Version string `json:"version"`
		}
		if json.Unmarshal(lines[i], &line) == nil && validVersion(line.Version) {
			return line.Version
		}
	}
	return ""
}

// validVersion tells whether v is a dotted version of numbers ("2.1.332").
func validVersion(v string) bool {
	if v == "" || len(v) > 32 {
		return false
	}
	for _, p := range strings.Split(v, ".") {
		if _, err := strconv.Atoi(p); err != nil {
			return false
		}
	}
	return true
}

// compareVersions orders two dotted versions of numbers by their numbers, left to right: -1,
// 0 or 1. A missing part counts as 0, a part that is no number as 0.
func compareVersions(a, b string) int {
	as, bs := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(as) || i < len(bs); i++ {
		var x, y int
		if i < len(as) {
			x, _ = strconv.Atoi(as[i])
		}
		if i < len(bs) {
			y, _ = strconv.Atoi(bs[i])
		}
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
	}
	return 0
}
