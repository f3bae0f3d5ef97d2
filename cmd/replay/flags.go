package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/store"
)

// flags is a command's flag set with the flags every command shares.
type flags struct {
	*flag.FlagSet
	db      string
	json    bool
	timeout time.Duration
	stderr  io.Writer
}

func newFlags(name, args string, stderr io.Writer) *flags {
	f := &flags{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), stderr: stderr}
	f.SetOutput(stderr)
	def := os.Getenv("TASKLOG_DB")
	if def == "" {
		def = "tasklog.db"
	}
	f.StringVar(&f.db, "db", def, "task log database; $TASKLOG_DB sets the default")
	f.DurationVar(&f.timeout, "timeout", time.Second, "how long to wait for a database another process holds")
	f.Usage = func() {
		fmt.Fprintf(stderr, "usage: replay %s [flags] %s\n\nflags:\n", name, args)
		f.PrintDefaults()
	}
	return f
}

func (f *flags) withJSON() *flags {
	f.BoolVar(&f.json, "json", false, "print JSON")
	return f
}

// parse parses flags wherever they stand among the positional arguments, so that
// "replay export TASK --json" works as users type it.
func (f *flags) parse(args []string) ([]string, error) {
	var pos []string
	for {
		if err := f.Parse(args); err != nil {
			return nil, err
		}
		rest := f.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// parseOrExit parses and reports the status to exit with when parsing failed (-1 to go on).
func (f *flags) parseOrExit(args []string, min, max int) ([]string, int) {
	pos, err := f.parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return nil, exitOK
	}
	if err != nil {
		return nil, exitUsage
	}
	if len(pos) < min || (max >= 0 && len(pos) > max) {
		f.Usage()
		return nil, exitUsage
	}
	return pos, -1
}

func (f *flags) open() (*store.DB, error) {
	return store.Open(f.db, &store.Options{Timeout: f.timeout})
}

func (f *flags) openReadOnly() (*store.DB, error) {
	if _, err := os.Stat(f.db); err != nil {
		return nil, fmt.Errorf("open task log %q: %w (create one with 'replay import' or 'replay record')", f.db, err)
	}
	return store.Open(f.db, &store.Options{Timeout: f.timeout, ReadOnly: true})
}

// openTask opens the database read-only and resolves a task argument (an id or a unique
// prefix of one).
func (f *flags) openTask(arg string) (*store.DB, uuid.UUID, error) {
	db, err := f.openReadOnly()
	if err != nil {
		return nil, uuid.Nil, err
	}
	task, err := resolveTask(db, arg)
	if err != nil {
		db.Close()
		return nil, uuid.Nil, err
	}
	return db, task, nil
}

// fail prints an error and returns the usage/I/O exit status.
func fail(w io.Writer, err error) int {
	fmt.Fprintf(w, "replay: %v\n", err)
	return exitUsage
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// resolveTask accepts a full task id or a unique prefix of one.
func resolveTask(db *store.DB, arg string) (uuid.UUID, error) {
	if id, err := uuid.Parse(arg); err == nil {
		return id, nil
	}
	tasks, err := db.Tasks()
	if err != nil {
		return uuid.Nil, err
	}
	var found []uuid.UUID
	for _, t := range tasks {
		if strings.HasPrefix(t.Task.String(), strings.ToLower(arg)) {
			found = append(found, t.Task)
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return uuid.Nil, fmt.Errorf("no task %q in %s ('replay tasks' lists them)", arg, db.Path())
	}
	return uuid.Nil, fmt.Errorf("task prefix %q is ambiguous: %d tasks match", arg, len(found))
}

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// writeOutput writes through a buffer to the named file, or to stdout for "" or "-", and
// reports the first error of writing, flushing or closing.
func writeOutput(name string, stdout io.Writer, write func(io.Writer) error) error {
	if name == "" || name == "-" {
		bw := bufio.NewWriter(stdout)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	file, err := os.Create(name)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(file)
	if err := write(bw); err != nil {
		file.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		file.Close()
		return err
	}
	return file.Close()
}
