package main

import (
	"bytes"
	"io"
	"os"
	"strings"
	"testing"
)

// Piped or redirected output gets no bar at all: not even a carriage return.
func TestProgressIsSilentWhenPiped(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	for _, out := range []io.Writer{w, &buf} {
		p := newProgress(out, "verify", 50)
		for i := 1; i <= 50; i++ {
			p.set(i)
		}
		p.done()
	}
	w.Close()
	piped, _ := io.ReadAll(r)
	if len(piped) != 0 || buf.Len() != 0 {
		t.Errorf("progress wrote %q to a pipe and %q to a buffer", piped, buf.String())
	}
}

// On a terminal the bar redraws in place, once per percent, and clears its line when done.
func TestProgressDrawsInPlace(t *testing.T) {
	var buf bytes.Buffer
	p := &progress{w: &buf, label: "verify", total: 4, on: true, last: -1}
	for i := 1; i <= 4; i++ {
		p.set(i)
		p.set(i) // the same percentage twice draws once
	}
	p.done()
	out := buf.String()
	if n := strings.Count(out, "\r"); n != 5 {
		t.Errorf("%d redraws and clears, want 4 and 1:\n%q", n, out)
	}
	if !strings.Contains(out, "100% 4/4") || !strings.HasSuffix(out, "\r\033[K") {
		t.Errorf("bar output %q lacks the full bar or the final clear", out)
	}
}

// A verb's standard error is still the file it wraps to the terminal check, and no file when it
// wraps none.
func TestVerbWriterFd(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := (verbWriter{f, "audit"}).Fd(); got != f.Fd() {
		t.Errorf("Fd of a verb's file = %d, want %d", got, f.Fd())
	}
	if got := (verbWriter{&bytes.Buffer{}, "audit"}).Fd(); got != ^uintptr(0) {
		t.Errorf("Fd of a verb's buffer = %d, want ^uintptr(0)", got)
	}
	if got := errorPrefix(verbWriter{io.Discard, "audit"}); got != "replay audit" {
		t.Errorf("errorPrefix = %q", got)
	}
	if got := errorPrefix(io.Discard); got != "replay" {
		t.Errorf("errorPrefix of another writer = %q", got)
	}
}
