package main

import (
	"io"

	"github.com/tasklog/tasklog/internal/termsafe"
)

// escapeControls is termsafe.Escape: every control character but newline and tab, each
// bidirectional control and each byte of invalid UTF-8 written as an escape.
func escapeControls(s string) string { return termsafe.Escape(s) }

// safeWriter escapes control characters in everything written through it (see escapeControls).
// A verb that prints recorded text for a person writes through one; JSON output needs none, as
// the encoder escapes them already.
type safeWriter struct{ w io.Writer }

func (s safeWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(s.w, escapeControls(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
