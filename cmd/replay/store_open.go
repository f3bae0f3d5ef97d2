package main

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

// The store a command uses is a bbolt file (--db, $TASKLOG_DB, the default) or a stream on a
// NATS JetStream server (--store nats://HOST:PORT[/STREAM], $TASKLOG_STORE), which the hooks of
// many machines can share. Which one, when several are given:
//
//   - --db and --store together on the command line are a usage error;
//   - a flag beats the environment: --db PATH uses the file even when $TASKLOG_STORE is set;
//   - without either flag, $TASKLOG_STORE beats $TASKLOG_DB.
//
// --store also takes a file path, which is the same as --db PATH (so $TASKLOG_STORE can name
// either kind).
const storeEnv = "TASKLOG_STORE"

// storeLoc is where a task log is kept: a bbolt file (path) or a NATS stream (url).
type storeLoc struct {
	path string // the bbolt file; "" for a NATS store
	url  string // nats://HOST:PORT[/STREAM]; "" for a file
}

// fileLoc is the bbolt file at path.
func fileLoc(path string) storeLoc { return storeLoc{path: path} }

// errUnknownStore is parseStoreLoc's error for a URL of a kind tasklog cannot keep a log in.
var errUnknownStore = errors.New("unknown kind of store")

// parseStoreLoc reads a --store value: a nats:// URL or a file path.
func parseStoreLoc(s string) (storeLoc, error) {
	switch {
	case s == "":
		return storeLoc{}, errors.New("empty store")
	case natsstore.IsURL(s):
		return storeLoc{url: s}, nil
	case strings.Contains(s, "://"):
		return storeLoc{}, fmt.Errorf("%w %q: want nats://HOST:PORT[/STREAM] or a file path", errUnknownStore, s)
	}
	return fileLoc(s), nil
}

// selectStore picks the store from --db (db, given on the command line when dbSet; else its
// default), --store (val, when storeSet) and, when useEnv, $TASKLOG_STORE: see storeEnv.
func selectStore(db string, dbSet bool, val string, storeSet bool, useEnv bool) (storeLoc, error) {
	env := ""
	if useEnv {
		env = os.Getenv(storeEnv)
	}
	switch {
	case dbSet && storeSet:
		return storeLoc{}, errors.New("--db and --store name two stores: give one")
	case storeSet:
		l, err := parseStoreLoc(val)
		if err != nil {
			return l, fmt.Errorf("--store: %w", err)
		}
		return l, nil
	case !dbSet && env != "":
		l, err := parseStoreLoc(env)
		if err != nil {
			return l, fmt.Errorf("$%s: %w", storeEnv, err)
		}
		return l, nil
	}
	return fileLoc(db), nil
}

// isNATS reports whether the log is kept on a NATS server.
func (l storeLoc) isNATS() bool { return l.url != "" }

// String names the store for messages and for the command lines that pass it on.
func (l storeLoc) String() string {
	if l.isNATS() {
		return l.url
	}
	return l.path
}

// isNATSURL reports whether s names a NATS store.
func isNATSURL(s string) bool { return natsstore.IsURL(s) }

// storeFlagFor is the flag that names the store at path (a Store's Path): --store for a NATS
// URL, else --db.
func storeFlagFor(path string) string {
	if natsstore.IsURL(path) {
		return "--store"
	}
	return "--db"
}

// sideFile is the path that stands for the store where files live beside it: the hook log and
// the spool in its folder, the server's socket, lock and log. For a file it is the file itself.
// A NATS store has no folder of its own on this machine, so it gets one in the user's data
// folder, named after a hash of the URL: $XDG_DATA_HOME/tasklog/nats-HASH/tasklog (default
// ~/.local/share/tasklog/…), whose socket is tasklog.sock and whose spool tasklog-spool/.
func (l storeLoc) sideFile() string {
	if !l.isNATS() {
		return l.path
	}
	return filepath.Join(natsSideDir(l.url), "tasklog")
}

// natsSideDir is the folder of a NATS store's local files; the URL is hashed as written, less a
// trailing slash, with the default stream named: nats://h:4222 and nats://h:4222/TASKLOG share one.
func natsSideDir(url string) string { return natsSideDirIn(userDataDir(), url) }

// natsSideDirIn is natsSideDir with dataDir as the user's data folder.
func natsSideDirIn(dataDir, url string) string {
	norm := strings.TrimSuffix(url, "/")
	if u, err := natsstore.ParseURL(url); err == nil {
		norm = u.Server + "/" + u.Stream
	}
	sum := sha256.Sum256([]byte(norm))
	return filepath.Join(dataDir, "tasklog", "nats-"+hex.EncodeToString(sum[:6]))
}

// userDataDir is $XDG_DATA_HOME, else ~/.local/share, else the temporary folder.
func userDataDir() string {
	if dir := os.Getenv("XDG_DATA_HOME"); dir != "" {
		return dir
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".local", "share")
	}
	return os.TempDir()
}

// openOptions say how a store is opened.
type openOptions struct {
	// timeout bounds the wait for a file another process holds, and every call to a NATS
	// server (zero: natsstore's default).
	timeout  time.Duration
	readOnly bool
}

// openStore opens the store at l. A NATS store is the same for reading and writing: the first
// command that finds its stream missing creates it (with ?replicas=N replicas, else one).
func openStore(l storeLoc, o openOptions) (store.Store, error) {
	if l.isNATS() {
		s, err := natsstore.Open(l.url, &natsstore.Options{Timeout: o.timeout})
		if err != nil {
			return nil, err // it names the server and the stream
		}
		return s, nil
	}
	return store.Open(l.path, &store.Options{Timeout: o.timeout, ReadOnly: o.readOnly})
}

// errNoLog is openExisting's error for a database file that does not exist.
var errNoLog = errors.New("no task log")

// openExisting opens the store for reading. A file must exist already: it is never created by
// a command that only reads.
func openExisting(l storeLoc, timeout time.Duration) (store.Store, error) {
	if !l.isNATS() {
		if _, err := os.Stat(l.path); errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w at %s", errNoLog, l.path)
		}
	}
	return openStore(l, openOptions{timeout: timeout, readOnly: true})
}

// openHookStore opens the store for a hook, waiting for a file another process holds for at
// most wait; a NATS server gets the same time for each call.
func openHookStore(l storeLoc, wait time.Duration) (store.Store, error) {
	// The database's folder, or a NATS store's local folder (its hook log and spool).
	if err := os.MkdirAll(filepath.Dir(l.sideFile()), 0o755); err != nil {
		return nil, fmt.Errorf("create the database folder: %w", err)
	}
	return openStore(l, openOptions{timeout: wait})
}
