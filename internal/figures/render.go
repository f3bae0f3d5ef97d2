package main

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// The markers around the generated table on a page.
const (
	BeginMarker = "<!-- figures:begin -->"
	EndMarker   = "<!-- figures:end -->"
)

// ErrMarkers is a page without exactly one pair of markers, in order.
var ErrMarkers = errors.New("the page needs one " + BeginMarker + " line and one " + EndMarker + " line after it, around the table to replace")

// Report is a measurement as it is printed.
type Report struct {
	Machine Machine
	Date    time.Time
	Before  Load
	After   Load
	Count   int
	Quick   bool
	Took    time.Duration
	Lines   []Line
}

// Line is one row of the table as it is printed.
type Line struct {
	What, Figure, Benchmark string
}

// Lines makes the table's lines from the rows and what was measured: each figure is the
// range of its parts over the runs; a row whose benchmark was skipped, failed or did not
// report its unit says so in place of the figure.
func Lines(rows []Row, m *Measured, c Config) []Line {
	var out []Line
	for _, r := range rows {
		out = append(out, Line{What: r.What, Figure: figure(r, m), Benchmark: benchCell(r, c)})
	}
	return out
}

// figure is a row's parts over the runs, joined with " / ".
func figure(r Row, m *Measured) string {
	if why, ok := m.Missing[r.Bench.key()]; ok {
		return "not measured: " + why
	}
	o := m.Out[r.Bench.key()]
	if o == nil {
		return "not measured: the benchmarks did not run"
	}
	var parts []string
	for _, p := range r.Parts {
		vs, err := o.Values(p.Name, p.Metric.Unit)
		if err != nil {
			return "not measured: " + err.Error()
		}
		s := FormatRange(p.Metric, vs)
		if p.Label != "" {
			s = p.Label + " " + s
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, " / ")
}

// benchCell names the package and the top benchmarks of a row's parts, and the benchtime.
func benchCell(r Row, c Config) string {
	var names []string
	for _, p := range r.Parts {
		top, _, _ := strings.Cut(p.Name, "/")
		if n := "`" + top + "`"; !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return fmt.Sprintf("`%s` %s, `-benchtime %s`", r.Bench.Pkg, strings.Join(names, ", "), c.benchtime(r.Bench))
}

// Markdown is the report: the machine, the load and the table.
func (r Report) Markdown() string {
	var b strings.Builder
	m := r.Machine
	fmt.Fprintf(&b, "Measured with `go run ./internal/figures` on %s, commit %s, in %s:\n\n",
		r.Date.UTC().Format("2006-01-02 15:04 MST"), m.Commit, r.Took.Round(time.Second))
	fmt.Fprintf(&b, "- machine: %s, %d cores, %s of memory; %s; %s\n", m.CPU, m.Cores, m.Memory, m.OS, m.Go)
	fmt.Fprintf(&b, "- load average (1, 5, 15 minutes): %s before; %s after", r.Before, r.After)
	if r.Before[0] > 1 {
		b.WriteString(" (above 1 at the start: other work shared the machine, and the figures are slower than a quiet machine's)")
	}
	fmt.Fprintf(&b, "\n- each figure: the smallest–largest over %d %s of its benchmark (`-count %d`), run with the `-benchtime` its row names\n",
		r.Count, plural(r.Count, "run", "runs"), r.Count)
	if r.Quick {
		b.WriteString("\n**-quick: short benchtimes to try the program out; these are not figures to publish.**\n")
	}
	b.WriteString("\n| what | figure | benchmark |\n|---|---|---|\n")
	for _, l := range r.Lines {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(l.What), cell(l.Figure), cell(l.Benchmark))
	}
	return b.String()
}

// cell is s safe in a Markdown table cell: one line, pipes escaped.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", `\|`)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// ReplaceTable puts block between the page's markers, on lines of their own with a blank line
// before the end marker, and leaves the rest of the page as it is; without one pair of markers in order it returns ErrMarkers.
func ReplaceTable(page []byte, block string) ([]byte, error) {
	// A marker is a line of its own: one quoted in the page's prose does not count.
	begins, ends := markerLines(page, BeginMarker), markerLines(page, EndMarker)
	switch {
	case len(begins) == 0:
		return nil, fmt.Errorf("no %s: %w", BeginMarker, ErrMarkers)
	case len(ends) == 0:
		return nil, fmt.Errorf("no %s: %w", EndMarker, ErrMarkers)
	case len(begins) > 1 || len(ends) > 1:
		return nil, fmt.Errorf("more than one pair of markers: %w", ErrMarkers)
	case ends[0] < begins[0]:
		return nil, fmt.Errorf("%s comes before %s: %w", EndMarker, BeginMarker, ErrMarkers)
	}
	begin, end := begins[0], ends[0]
	var out bytes.Buffer
	out.Write(page[:begin+len(BeginMarker)])
	out.WriteString("\n")
	out.WriteString(strings.TrimRight(block, "\n"))
	out.WriteString("\n\n") // a table ends at a blank line

	out.Write(page[end:])
	return out.Bytes(), nil
}

// markerLines are the offsets of the lines of page that are marker and nothing else.
func markerLines(page []byte, marker string) []int {
	var at []int
	for off := 0; off < len(page); {
		line := page[off:]
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line = line[:i]
		}
		if string(bytes.TrimRight(line, "\r")) == marker {
			at = append(at, off)
		}
		off += len(line) + 1
	}
	return at
}
