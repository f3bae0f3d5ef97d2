package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
	"github.com/tasklog/tasklog/store/location"
)

// flags is a command's flag set with the flags every command shares.
type flags struct {
	*flag.FlagSet
	db      string
	json    bool
	timeout time.Duration
	stderr  io.Writer
	// store is --store; loc is the store the flags and the environment select (see location.Env),
	// set by parseOrExit. noStoreEnv: $TASKLOG_STORE is not used (the demo's own store).
	store      string
	loc        location.Location
	noStoreEnv bool
	// timeoutSet: --timeout was given, so it bounds a NATS server's calls too.
	timeoutSet bool
	// selects: parseOrExit sets loc (newFlags' verbs; install and uninstall bake --db and
	// --store into commands as given).
	selects bool
	// dbSet: --db was given on the command line; args is the verb's positional arguments as
	// its usage line shows them.
	dbSet bool
	args  string
	// noLog: the verb reads a workspace, not the log (readsNoLog).
	noLog bool
}

func newFlags(name, args string, stderr io.Writer) *flags {
	f := &flags{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), stderr: stderr, args: args}
	f.SetOutput(stderr)
	f.StringVar(&f.db, "db", defaultHookDB(), "task log database, the one the hooks record to: $TASKLOG_DB, else tasklog/tasklog.db in the user's data folder ($XDG_DATA_HOME, default ~/.local/share)")
	f.StringVar(&f.store, "store", "", "the task log on a NATS JetStream server, nats://HOST:PORT[/STREAM], instead of --db (--timeout then bounds each server call, default 5s); $"+location.Env+" sets the default")
	f.DurationVar(&f.timeout, "timeout", time.Second, "how long to wait for a database another process holds")
	f.selects = true
	f.Usage = func() {
		fmt.Fprintf(f.Output(), "usage: replay %s [flags] %s\n\nflags:\n", name, args)
		f.printDefaults()
	}
	return f
}

// readsNoLog is for a verb that reads a workspace, not the log: --db, --store and --timeout are
// still accepted, as every verb's, and neither used nor shown in its usage.
func (f *flags) readsNoLog() *flags {
	f.selects, f.noLog = false, true
	return f
}

// printDefaults is PrintDefaults, without the log's flags for a verb that reads no log.
func (f *flags) printDefaults() {
	if !f.noLog {
		f.PrintDefaults()
		return
	}
	shown := flag.NewFlagSet(f.Name(), flag.ContinueOnError)
	shown.SetOutput(f.Output())
	f.VisitAll(func(fl *flag.Flag) {
		if fl.Name != "db" && fl.Name != "store" && fl.Name != "timeout" {
			shown.Var(fl.Value, fl.Name, fl.Usage)
			shown.Lookup(fl.Name).DefValue = fl.DefValue
		}
	})
	shown.PrintDefaults()
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
		if err := f.parseOnce(args); err != nil {
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
	if max >= 0 && len(pos) > max {
		fmt.Fprintf(safeWriter{f.Output()}, "replay %s: unexpected argument %q\n", f.Name(), pos[max])
		f.Usage()
		return nil, exitUsage
	}
	if len(pos) < min {
		fmt.Fprintf(f.Output(), "replay %s: missing %s\n", f.Name(), strings.Fields(f.args + " ARGUMENT")[0])
		f.Usage()
		return nil, exitUsage
	}
	if f.selects {
		if err := f.chooseStore(); err != nil {
			fmt.Fprintf(f.Output(), "replay %s: %v\n", f.Name(), err)
			return nil, exitUsage
		}
	}
	return pos, -1
}

// chooseStore sets f.loc from --db, --store and the environment (see location.Env for which wins),
// and f.db to its name for messages.
func (f *flags) chooseStore() error {
	dbSet, storeSet := false, false
	f.Visit(func(fl *flag.Flag) {
		switch fl.Name {
		case "db":
			dbSet = true
			f.dbSet = true
		case "store":
			storeSet = true
		case "timeout":
			f.timeoutSet = true
		}
	})
	var err error
	f.loc, err = location.Select(f.db, dbSet, f.store, storeSet, !f.noStoreEnv)
	if err != nil {
		return err
	}
	f.db = f.loc.String()
	return nil
}

// natsTimeout is the timeout of a NATS store's calls: --timeout when given, else natsstore's.
func (f *flags) natsTimeout() time.Duration {
	if f.timeoutSet {
		return f.timeout
	}
	return 0
}

// openOptions are how the flags open the store: --timeout bounds the wait for a file another
// process holds and, when given, every call to a server (else natsstore's default).
func (f *flags) openOptions() location.Options {
	return location.Options{Wait: f.timeout, CallTimeout: f.natsTimeout()}
}

// readOptions open the store for reading: a file is never created.
func (f *flags) readOptions() location.Options {
	o := f.openOptions()
	o.ReadOnly, o.MustExist = true, true
	return o
}

// open opens the database for a verb that writes. It creates the file only when it is not there
// yet, and then close removes it again unless something was written: a failed command leaves no
// empty database behind. Verbs open it once they have something to write.
func (f *flags) open() (*writeDB, error) {
	created := !f.loc.Exists()
	o := f.openOptions()
	// The default database (or $TASKLOG_DB) lives in a folder of its own, which the hooks
	// create too.
	o.MakeDir = created && !f.dbSet
	db, err := f.loc.Open(o)
	if err != nil {
		if created {
			os.Remove(f.db)
		}
		return nil, lockedHint(err, f.timeout)
	}
	return &writeDB{Store: db, created: created}, nil
}

// writeDB is a database a writing verb opened, and whether the verb created its file.
type writeDB struct {
	store.Store
	created bool
}

// Close closes the database and, if this command created the file and no task was written to
// it, removes the file.
func (w *writeDB) Close() error {
	empty := false
	if w.created {
		tasks, err := w.Store.Tasks()
		empty = err == nil && len(tasks) == 0
	}
	err := w.Store.Close()
	if empty {
		if rerr := os.Remove(w.Store.Path()); rerr != nil && err == nil {
			err = rerr
		}
	}
	return err
}

// openReadOnly opens an existing database for reading; it never creates one.
func (f *flags) openReadOnly() (store.Store, error) {
	db, err := f.loc.Open(f.readOptions())
	if errors.Is(err, location.ErrNoLog) {
		return nil, fmt.Errorf("%w (create one with 'replay import' or 'replay record', or let an agent's hooks create it: "+
			"'replay install AGENT'; --db, --store, $TASKLOG_DB or $%s names another)", err, location.Env)
	}
	return db, lockedHint(err, f.timeout)
}

// lockedHint adds to the error of a database another process holds the flag that waits longer.
func lockedHint(err error, waited time.Duration) error {
	if !errors.Is(err, store.ErrLocked) {
		return err
	}
	longer := 10 * waited
	if longer < 10*time.Second {
		longer = 10 * time.Second
	}
	return fmt.Errorf("%w: --timeout %v", err, longer)
}

// openTask opens the database read-only and resolves a task argument (an id or a unique
// prefix of one).
func (f *flags) openTask(arg string) (store.Store, uuid.UUID, error) {
	if arg == "" {
		return nil, uuid.Nil, errors.New("name a task: an id or a unique prefix of one ('replay tasks' lists them)")
	}
	return f.openTaskOrLatest([]string{arg}, "", io.Discard)
}

// openTaskOrLatest opens the database read-only and resolves the task a verb was given, or the
// latest that ran in this folder when none was (taskOrLatest).
func (f *flags) openTaskOrLatest(pos []string, verb string, stderr io.Writer) (store.Store, uuid.UUID, error) {
	db, err := f.openReadOnly()
	if err != nil {
		return nil, uuid.Nil, err
	}
	task, err := taskOrLatest(db, pos, verb, stderr)
	if err != nil {
		db.Close()
		return nil, uuid.Nil, err
	}
	return db, task, nil
}

// fail prints an error and returns the usage/I/O exit status.
func fail(w io.Writer, err error) int {
	fmt.Fprintf(safeWriter{w}, "%s: %v\n", errorPrefix(w), err)
	return exitUsage
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// resolveTask accepts a full task id or a unique prefix of one, of a task the database holds.
func resolveTask(db store.Store, arg string) (uuid.UUID, error) {
	return session.ResolveTask(db, arg, tasksCommand(db.Path()))
}

// tasksCommand is the command line that lists the tasks of the store at path.
func tasksCommand(path string) string {
	return "replay tasks " + location.FlagFor(path) + " " + path
}

// plural is "1 turn", "2 turns".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// writeOutput writes through a buffer to the named file, or to stdout for "" or "-", and
// reports the first error of writing, flushing or closing. A regular file is written whole or
// not at all: into a temporary file beside it, renamed over it once complete (keeping the mode
// of a file it replaces; 0644 for a new one), removed on an error or on SIGINT or SIGTERM. So a
// failed or interrupted export neither leaves half a file nor clobbers the last good one.
func writeOutput(name string, stdout io.Writer, write func(io.Writer) error) error {
	if name == "" || name == "-" {
		bw := bufio.NewWriter(stdout)
		if err := write(bw); err != nil {
			return err
		}
		return bw.Flush()
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(name); err == nil {
		if !fi.Mode().IsRegular() { // a device or a pipe: written as it is
			return writeFile(name, write)
		}
		mode = fi.Mode().Perm()
	}
	f, err := temps.create(filepath.Dir(name), "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer temps.forget(tmp)
	bw := bufio.NewWriter(f)
	err = write(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Chmod(mode)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}

// writeFile writes to a file that is not a regular one (/dev/stdout, a named pipe).
func writeFile(name string, write func(io.Writer) error) error {
	file, err := os.OpenFile(name, os.O_WRONLY, 0)
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
