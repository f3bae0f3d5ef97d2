package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/tasklog/tasklog/cmd/replay/internal/hookconf"
	"github.com/tasklog/tasklog/events/agentlog"
	"github.com/tasklog/tasklog/store"
)

// The spool holds the payloads of hooks that could not get the database within their budget
// (another process held it, its disk refused the write): one file each, in a folder beside the
// database, or, when that cannot be written, in the user's private runtime folder
// (hookconf.RuntimeDir), recorded by the next hook that gets the database. Only the events are
// recorded then: the moment to deliver has passed.
const (
	spoolDirName = "tasklog-spool"
	// spoolDrainMax bounds the spooled payloads one hook records, to keep it within its budget.
	spoolDrainMax = 64
)

type spooled struct {
	Agent   agentlog.Agent  `json:"agent"`
	Time    time.Time       `json:"time"`
	Payload json.RawMessage `json:"payload"`
}

func spoolDir(dbPath string) string { return filepath.Join(filepath.Dir(dbPath), spoolDirName) }

// privateSpoolDir is the database's spool in the user's private runtime folder, for when the
// database's disk refuses the write.
func privateSpoolDir(dbPath string) (string, error) {
	dir, err := hookconf.RuntimeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, spoolDirName+"-"+hookconf.DBKey(dbPath)), nil
}

// spool writes the payload to the spool beside the database, else to the private one, each
// atomically (a temporary file renamed), so a draining hook never reads half of one.
func spool(dbPath string, agent agentlog.Agent, payload []byte, at time.Time) error {
	if !json.Valid(payload) {
		return errors.New("the payload is not JSON")
	}
	data, err := json.Marshal(spooled{Agent: agent, Time: at.UTC(), Payload: payload})
	if err != nil {
		return err
	}
	name := fmt.Sprintf("%020d-%d.json", at.UnixNano(), os.Getpid())
	err = spoolTo(spoolDir(dbPath), name, data)
	if err == nil {
		return nil
	}
	private, perr := privateSpoolDir(dbPath)
	if perr == nil {
		perr = spoolTo(private, name, data)
	}
	if perr != nil {
		return fmt.Errorf("beside the database: %w; in the private runtime folder: %w", err, perr)
	}
	return nil
}

// spoolTo writes one spooled payload into dir.
func spoolTo(dir, name string, data []byte) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}

// errSpoolUnparsable marks a spooled file that can never be recorded: it is not a spooled
// payload, or its payload is not one of the agent's hooks.
var errSpoolUnparsable = errors.New("not a recordable spooled payload")

// spoolDirs are the folders a database's spool may be in: the one beside it, and the user's
// private one when there is one.
func spoolDirs(dbPath string) []string {
	dirs := []string{spoolDir(dbPath)}
	if private, err := privateSpoolDir(dbPath); err == nil {
		dirs = append(dirs, private)
	}
	return dirs
}

// isSpoolName reports whether a spool folder's entry is a spooled payload.
func isSpoolName(name string) bool {
	return strings.HasSuffix(name, ".json") && !strings.HasPrefix(name, ".")
}

// spoolPending reports whether the spool of the database holds a payload to record: a look at
// the names in its folders, cheap enough for every hook.
func spoolPending(dbPath string) bool { return pendingIn(spoolDirs(dbPath)) }

// pendingIn reports whether one of the spool folders dirs holds a payload.
func pendingIn(dirs []string) bool {
	for _, dir := range dirs {
		f, err := os.Open(dir)
		if err != nil {
			continue
		}
		for {
			names, err := f.Readdirnames(32)
			found := slices.ContainsFunc(names, isSpoolName)
			if found || err != nil {
				f.Close()
				if found {
					return true
				}
				break
			}
		}
	}
	return false
}

// spoolWatch tells a server that keeps its store open whether the spool has news: a payload
// spooled since it last looked. It looks at the names only when a spool folder changed (one
// stat each), so a payload that cannot be recorded yet is tried again when something else is
// spooled or at the server's periodic check, not at every request.
type spoolWatch struct {
	dbPath string
	mu     sync.Mutex
	seen   []time.Time
	// dirs are the spool folders, found once both are (the private one needs the runtime
	// folder, which may not exist yet).
	dirs []string
}

// news reports whether a spool folder changed since the last call and holds a payload.
func (w *spoolWatch) news() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.dirs) < 2 {
		w.dirs = spoolDirs(w.dbPath)
	}
	now := make([]time.Time, len(w.dirs))
	for i, dir := range w.dirs {
		if fi, err := os.Stat(dir); err == nil {
			now[i] = fi.ModTime()
		}
	}
	if slices.Equal(now, w.seen) {
		return false
	}
	w.seen = now
	return pendingIn(w.dirs)
}

// drainSpool records the spooled payloads, oldest first, and removes each once recorded. The
// caller holds the database, so no other hook drains at the same time. Only a file that cannot
// be parsed is moved aside (".bad"); on any other error (the deadline, a conflict, the
// database) the drain stops and leaves the file for the next hook.
func drainSpool(ctx context.Context, db store.Store, dbPath string) error {
	var files []spoolFile
	for _, dir := range spoolDirs(dbPath) {
		entries, err := os.ReadDir(dir)
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return err
		}
		for _, e := range entries {
			if n := e.Name(); isSpoolName(n) {
				files = append(files, spoolFile{n, dir})
			}
		}
	}
	// Oldest first, whichever folder holds it: the names start with the time.
	slices.SortFunc(files, func(a, b spoolFile) int {
		return cmp.Or(cmp.Compare(a.name, b.name), cmp.Compare(a.dir, b.dir))
	})
	var errs []error
	for i, f := range files {
		if i >= spoolDrainMax || ctx.Err() != nil {
			break
		}
		n, p := f.name, filepath.Join(f.dir, f.name)
		if err := drainOne(ctx, db, p); errors.Is(err, errSpoolUnparsable) {
			errs = append(errs, fmt.Errorf("%s (moved aside): %w", n, err))
			os.Rename(p, p+".bad")
			continue
		} else if err != nil && spooledLongAgo(p) {
			// One that keeps failing would hold up every payload behind it for good.
			errs = append(errs, fmt.Errorf("%s (failing since over %v, moved aside): %w", n, spoolGiveUp, err))
			os.Rename(p, p+".failed")
			continue
		} else if err != nil {
			errs = append(errs, fmt.Errorf("%s (left for the next hook): %w", n, err))
			break
		}
		os.Remove(p)
	}
	return errors.Join(errs...)
}

// spoolFile is a spooled payload's file name and folder.
type spoolFile struct{ name, dir string }

// spoolGiveUp is how long a spooled payload that parses but cannot be recorded is tried again
// before it is moved aside (as NAME.failed, beside the spool, with the error in the hook log).
const spoolGiveUp = time.Hour

func spooledLongAgo(p string) bool {
	info, err := os.Stat(p)
	return err == nil && time.Since(info.ModTime()) > spoolGiveUp
}

func drainOne(ctx context.Context, db store.Store, p string) error {
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	var sp spooled
	if err := json.Unmarshal(data, &sp); err != nil {
		return fmt.Errorf("%w: %w", errSpoolUnparsable, err)
	}
	h, err := agentlog.ParseHook(sp.Agent, sp.Payload)
	if err != nil {
		return fmt.Errorf("%w: %w", errSpoolUnparsable, err)
	}
	at := sp.Time
	_, err = recordAndDeliver(ctx, db, h, func() time.Time { return at }, false)
	return err
}
