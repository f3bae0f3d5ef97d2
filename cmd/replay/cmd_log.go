package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/session/atif"
	"github.com/tasklog/tasklog/session/report"
)

func cmdExport(args []string, stdout, stderr io.Writer) int {
	f := newFlags("export", "[TASK]", stderr)
	out := f.String("o", "", "write to this file instead of standard output")
	sign := f.String("sign", "", "sign the export with this Ed25519 private key file (ssh-keygen -t ed25519 -N '' writes one); import --verify-key KEY.pub checks it")
	format := f.String("format", "jsonl", "jsonl: the log itself, lossless, as import reads it; atif: the Agent Trajectory Interchange Format (ATIF-v1.7) that Harbor and NeMo Agent Toolkit read, tasklog's decisions and deliveries in each step's extra")
	pos, code := f.parseOrExit(args, 0, 1)
	if code >= 0 {
		return code
	}
	switch {
	case *format != "jsonl" && *format != "atif":
		fmt.Fprintf(stderr, "replay export: --format %q: use jsonl or atif\n", *format)
		return exitUsage
	case *format == "atif" && *sign != "":
		fmt.Fprintln(stderr, "replay export: --sign signs the jsonl export only; a trajectory cannot be imported back")
		return exitUsage
	}
	var key ed25519.PrivateKey
	if *sign != "" {
		var err error
		if key, err = readSigningKey(*sign); err != nil {
			return fail(stderr, err)
		}
	}
	db, task, err := f.openTaskOrLatest(pos, "export", stderr)
	if err != nil {
		return fail(stderr, err)
	}
	defer db.Close()
	err = writeOutput(*out, stdout, func(w io.Writer) error {
		if *format == "atif" {
			return atif.WriteTask(context.Background(), db, task, w)
		}
		if key != nil {
			return session.ExportSigned(context.Background(), db, task, w, key)
		}
		return session.Export(context.Background(), db, task, w)
	})
	if err != nil {
		return fail(stderr, err)
	}
	return exitOK
}

// cut shortens s to max runes, the last one an ellipsis when it was longer.
func cut(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}

func cmdLog(args []string, stdout, stderr io.Writer) int {
	f := newFlags("log", "[TASK]", stderr).withJSON()
	from := f.Uint64("from", 1, "first sequence number to print")
	pos, code := f.parseOrExit(args, 0, 1)
	if code >= 0 {
		return code
	}
	db, task, err := f.openTaskOrLatest(pos, "log", stderr)
	if err != nil {
		return fail(stderr, err)
	}
	defer db.Close()
	var decisions map[uint64]string
	if !f.json {
		if decisions, err = report.DecisionSummaries(context.Background(), db, task); err != nil {
			return fail(stderr, err)
		}
	}
	bw := bufio.NewWriter(stdout)
	defer bw.Flush()
	w := io.Writer(safeWriter{bw})
	if !f.json {
		fmt.Fprintf(w, "%6s %3s %4s %6s  %-16s %s\n", "PROMPT", "REQ", "TURN", "SEQ", "TYPE", "SUMMARY")
	}
	// Numbering needs the log from its start; with --from the events before are folded unprinted.
	var reqs session.Requests
	if !f.json && *from > 1 {
		for ev, err := range db.Events(context.Background(), task, 1) {
			if err != nil {
				return fail(stderr, err)
			}
			if ev.Seq >= *from {
				break
			}
			reqs.Add(ev)
		}
	}
	for ev, err := range db.Events(context.Background(), task, *from) {
		if err != nil {
			bw.Flush()
			return fail(stderr, err)
		}
		if f.json {
			line, err := events.MarshalJSONLine(ev)
			if err != nil {
				return fail(stderr, err)
			}
			bw.Write(append(line, '\n'))
			continue
		}
		at := reqs.Add(ev)
		fmt.Fprintf(w, "%6d %3d %4d %6d  %-16s %s\n", at.Prompt, at.Request, ev.Turn, ev.Seq, ev.Type, report.EventSummary(ev, decisions))
	}
	return exitOK
}
