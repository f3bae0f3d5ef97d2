package main

import (
	"fmt"
	"io"
	"strings"

	"golang.org/x/term"
)

// progress draws a bar on a terminal and nothing at all when the output is piped or a file.
type progress struct {
	w     io.Writer
	label string
	total int
	last  int
	on    bool
}

func newProgress(w io.Writer, label string, total int) *progress {
	f, ok := w.(interface{ Fd() uintptr }) // a file, or a verb's standard error around one
	on := ok && term.IsTerminal(int(f.Fd())) && total > 1
	return &progress{w: w, label: label, total: total, on: on, last: -1}
}

func (p *progress) set(n int) {
	if !p.on || p.total == 0 {
		return
	}
	pct := n * 100 / p.total
	if pct == p.last {
		return
	}
	p.last = pct
	const width = 30
	fill := pct * width / 100
	fmt.Fprintf(p.w, "\r%s [%s%s] %3d%% %d/%d", p.label, strings.Repeat("█", fill), strings.Repeat("·", width-fill), pct, n, p.total)
}

func (p *progress) done() {
	if p.on {
		fmt.Fprint(p.w, "\r\033[K")
	}
}
