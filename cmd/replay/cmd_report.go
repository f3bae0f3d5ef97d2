package main

import (
	"context"
	"fmt"
	"io"

	"github.com/tasklog/tasklog/session/report"
)

func cmdReport(args []string, stdout, stderr io.Writer) int {
	f := newFlags("report", "[TASK] -o report.html", stderr)
	out := f.String("o", "report.html", "the HTML file to write ('-' for standard output)")
	pos, code := f.parseOrExit(args, 0, 1)
	if code >= 0 {
		return code
	}
	db, task, err := f.openTaskOrLatest(pos, "report", stderr)
	if err != nil {
		return fail(stderr, err)
	}
	defer db.Close()
	data, err := report.Build(context.Background(), db, task)
	if err != nil {
		return fail(stderr, err)
	}
	if err := writeOutput(*out, stdout, func(w io.Writer) error { return report.Render(w, data) }); err != nil {
		return fail(stderr, err)
	}
	if *out != "-" {
		fmt.Fprintf(stdout, "wrote %s: %s, %s, %s, %s\n", *out, plural(data.UserPrompts(), "prompt"), plural(len(data.Turns), "request"),
			plural(len(data.Rows), "rule"), plural(data.Events, "event"))
	}
	return exitOK
}
