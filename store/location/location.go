// Package location says where a task log is kept — a bbolt file, or a stream on a NATS
// JetStream server that the hooks of many machines share — and opens it. A command chooses the
// location once, from its flags and the environment (Select), and then opens it, names it and
// finds the files it keeps beside it without asking which kind it is.
//
// Which one, when several are given:
//
//   - --db and --store together on the command line are a usage error;
//   - a flag beats the environment: --db PATH uses the file even when $TASKLOG_STORE is set;
//   - without either flag, $TASKLOG_STORE beats $TASKLOG_DB (which the caller passes as --db's
//     default).
//
// --store also takes a file path, which is the same as --db PATH (so $TASKLOG_STORE can name
// either kind).
package location

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tasklog/tasklog/store"
	"github.com/tasklog/tasklog/store/natsstore"
)

// Env is the environment variable that names the store when no flag does.
const Env = "TASKLOG_STORE"

// Sentinel errors callers test with errors.Is.
var (
	// ErrUnknown is Parse's error for a URL of a kind tasklog cannot keep a log in.
	ErrUnknown = errors.New("unknown kind of store")
	// ErrNoLog is Open's error, with Options.MustExist, for a file that does not exist.
	ErrNoLog = errors.New("no task log")
)

// Location is where a task log is kept. The zero Location is no location.
type Location struct {
	path string // the bbolt file; "" for a server
	url  string // nats://HOST:PORT[/STREAM]; "" for a file
}

// File is the bbolt file at path.
func File(path string) Location { return Location{path: path} }

// Parse reads a --store value: a nats:// URL or a file path.
func Parse(s string) (Location, error) {
	switch {
	case s == "":
		return Location{}, errors.New("empty store")
	case natsstore.IsURL(s):
		return Location{url: s}, nil
	case strings.Contains(s, "://"):
		return Location{}, fmt.Errorf("%w %q: want nats://HOST:PORT[/STREAM] or a file path", ErrUnknown, s)
	}
	return File(s), nil
}

// Select picks the location from --db (db, given on the command line when dbSet; else its
// default), --store (val, when storeSet) and, when useEnv, $TASKLOG_STORE: see the package doc.
func Select(db string, dbSet bool, val string, storeSet bool, useEnv bool) (Location, error) {
	env := ""
	if useEnv {
		env = os.Getenv(Env)
	}
	switch {
	case dbSet && storeSet:
		return Location{}, errors.New("--db and --store name two stores: give one")
	case storeSet:
		l, err := Parse(val)
		if err != nil {
			return l, fmt.Errorf("--store: %w", err)
		}
		return l, nil
	case !dbSet && env != "":
		l, err := Parse(env)
		if err != nil {
			return l, fmt.Errorf("$%s: %w", Env, err)
		}
		return l, nil
	}
	return File(db), nil
}

// String names the location for messages and for the command lines that pass it on.
func (l Location) String() string {
	if l.url != "" {
		return l.url
	}
	return l.path
}

// Flag is the flag that names the location on a command line: --store for a server, else --db.
func (l Location) Flag() string { return FlagFor(l.String()) }

// FlagFor is the flag that names the store at path (a Store's Path): --store for a NATS URL,
// else --db.
func FlagFor(path string) string {
	if natsstore.IsURL(path) {
		return "--store"
	}
	return "--db"
}

// IsURL reports whether s names a store on a server rather than a file.
func IsURL(s string) bool { return natsstore.IsURL(s) }

// Abs is the location with a relative file path made absolute; a server's is as it is.
func (l Location) Abs() Location {
	if l.url != "" {
		return l
	}
	if abs, err := filepath.Abs(l.path); err == nil {
		return File(abs)
	}
	return l
}

// Shared reports whether the log is shared by many processes at once, on a server: it has no
// lock that one process holds and lets go of, a server keeps it open for as long as it runs,
// and a failure to reach it means the server is out of reach, not that the log is busy.
func (l Location) Shared() bool { return l.url != "" }

// WithDefaultStream is the location with stream named when it is a server's and names none.
func (l Location) WithDefaultStream(stream string) Location {
	if u, err := natsstore.ParseURL(l.url); l.url == "" || err != nil || u.NamesStream {
		return l
	}
	base, query, hasQuery := strings.Cut(l.url, "?")
	l.url = strings.TrimSuffix(base, "/") + "/" + stream
	if hasQuery {
		l.url += "?" + query
	}
	return l
}

// SideFile is the path that stands for the log where files live beside it: the hook log and
// the spool in its folder, the server's socket, lock and log. For a file it is the file itself.
// A server's log has no folder of its own on this machine, so it gets one in the user's data
// folder, named after a hash of the URL: $XDG_DATA_HOME/tasklog/nats-HASH/tasklog (default
// ~/.local/share/tasklog/…), whose socket is tasklog.sock and whose spool tasklog-spool/.
func (l Location) SideFile() string {
	if l.url == "" {
		return l.path
	}
	return filepath.Join(SideDir(UserDataDir(), l.url), "tasklog")
}

// SideDir is the folder, under dataDir, of the local files of the server's store at url; the
// URL is hashed as written, less a trailing slash, with the default stream named:
// nats://h:4222 and nats://h:4222/TASKLOG share one.
func SideDir(dataDir, url string) string {
	norm := strings.TrimSuffix(url, "/")
	if u, err := natsstore.ParseURL(url); err == nil {
		norm = u.Server + "/" + u.Stream
	}
	sum := sha256.Sum256([]byte(norm))
	return filepath.Join(dataDir, "tasklog", "nats-"+hex.EncodeToString(sum[:6]))
}

// UserDataDir is $XDG_DATA_HOME, else ~/.local/share, else the temporary folder.
func UserDataDir() string {
	if dir := os.Getenv("XDG_DATA_HOME"); dir != "" {
		return dir
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share")
	}
	return os.TempDir()
}

// Options say how a location is opened.
type Options struct {
	// Wait bounds the wait for a file another process holds (zero: bbolt's default, none).
	Wait time.Duration
	// CallTimeout bounds every call to a server (zero: the server's default, 5s for NATS).
	CallTimeout time.Duration
	// ReadOnly opens a file for reading only; a server's log is the same either way.
	ReadOnly bool
	// MustExist refuses to create a file that is not there yet: Open returns ErrNoLog. A
	// server's stream is created by the first open that finds it missing, whatever this says.
	MustExist bool
	// MakeDir creates the folder of the file, or of a server's side files (SideFile), first.
	MakeDir bool
}

// Exists reports whether the log is there to be opened without being created: false only for
// a file known not to exist. A server's log counts as there (the first open creates its stream).
func (l Location) Exists() bool {
	if l.url != "" {
		return true
	}
	_, err := os.Stat(l.path)
	return !errors.Is(err, fs.ErrNotExist)
}

// Open opens the log at l. A server's is the same for reading and writing: the first open
// that finds its stream missing creates it (with ?replicas=N replicas, else one).
func (l Location) Open(o Options) (store.Store, error) {
	if o.MakeDir {
		if err := os.MkdirAll(filepath.Dir(l.SideFile()), 0o755); err != nil {
			return nil, fmt.Errorf("create the database folder: %w", err)
		}
	}
	if l.url != "" {
		s, err := natsstore.Open(l.url, &natsstore.Options{Timeout: o.CallTimeout})
		if err != nil {
			return nil, err // it names the server and the stream
		}
		return s, nil
	}
	if o.MustExist {
		if _, err := os.Stat(l.path); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w at %s", ErrNoLog, l.path)
		}
	}
	return store.Open(l.path, &store.Options{Timeout: o.Wait, ReadOnly: o.ReadOnly})
}
