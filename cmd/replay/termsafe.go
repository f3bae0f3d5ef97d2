package main

import (
	"io"

	"github.com/tasklog/tasklog/internal/termsafe"
)

// safeWriter escapes control characters in everything written through it (termsafe.Escape).
// A verb that prints recorded text for a person writes through one; JSON output needs none, as
// the encoder escapes them already.
type safeWriter struct{ w io.Writer }

func (s safeWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(s.w, termsafe.Escape(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}
