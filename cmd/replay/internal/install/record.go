package install

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// installRecord is what install remembers of a file it wrote, so that uninstall gives the machine
// back as install found it: the file's bytes and mode before the first install (or that there was
// none), the folders install made for it, and a digest of what install wrote last. Records live
// in the user's data folder, one file each, named by a digest of the file's path.
type installRecord struct {
	Path     string      `json:"path"`
	Existed  bool        `json:"existed"`
	Original []byte      `json:"original,omitempty"`
	Mode     fs.FileMode `json:"mode,omitempty"`
	Created  []string    `json:"created,omitempty"` // innermost first
	Written  string      `json:"written"`           // hex SHA-256 of what install wrote last
}

// Records is the folder of the records; "" keeps none (uninstall then removes tasklog's
// entries and the folders they leave empty, as it did before records were kept).
type Records string

func (r Records) file(path string) string {
	sum := sha256.Sum256([]byte(path))
	return filepath.Join(string(r), hex.EncodeToString(sum[:12])+".json")
}

// load returns the record of path, or nil when there is none (or it cannot be read).
func (r Records) load(path string) *installRecord {
	if r == "" {
		return nil
	}
	b, err := os.ReadFile(r.file(path))
	if err != nil {
		return nil
	}
	var rec installRecord
	if json.Unmarshal(b, &rec) != nil || rec.Path != path {
		return nil
	}
	return &rec
}

func (r Records) save(rec *installRecord) error {
	if err := os.MkdirAll(string(r), 0o700); err != nil {
		return err
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return writeAtomic(r.file(rec.Path), b, 0o600)
}

func (r Records) drop(path string) { os.Remove(r.file(path)) }

func digestOf(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// missingDirs lists the folders above path that do not exist, innermost first: the ones writing
// path makes.
func missingDirs(path string) []string {
	var dirs []string
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) || d == filepath.Dir(d) {
			return dirs
		}
		dirs = append(dirs, d)
	}
}

// applyRecorded writes the planned changes as apply does, keeping a record of each file written
// on install; on uninstall, a file whose content is still what install wrote gets its original
// bytes and mode back (or is removed when install made it), and only the folders install made are
// removed when empty. A file changed since install gets the planned change. A record that cannot
// be written costs exactness, not the install: it is reported in the returned notes.
func applyRecorded(changes []fileChange, install bool, recs Records) (notes []string, err error) {
	if recs == "" {
		return nil, apply(changes)
	}
	var made []string
	for i := range changes {
		c := changes[i]
		if install {
			rec := recs.load(c.path)
			if rec == nil {
				rec = &installRecord{Path: c.path, Created: missingDirs(c.path)}
				if old, err := os.ReadFile(c.path); err == nil {
					rec.Existed, rec.Original = true, old
					if fi, err := os.Stat(c.path); err == nil {
						rec.Mode = fi.Mode().Perm()
					}
				}
			}
			if err := writeAtomic(c.path, c.data, c.mode); err != nil {
				return notes, fmt.Errorf("%s: %w", c.show, err)
			}
			rec.Written = digestOf(c.data)
			if err := recs.save(rec); err != nil {
				notes = append(notes, fmt.Sprintf("note: %s: cannot keep what it held before (%v): uninstall will remove tasklog's entries but cannot restore it byte for byte", c.show, err))
			}
			continue
		}
		rec := recs.load(c.path)
		if rec == nil {
			if err := apply([]fileChange{c}); err != nil {
				return notes, err
			}
			continue
		}
		cur, _ := os.ReadFile(c.path)
		switch {
		case digestOf(cur) != rec.Written:
			// Changed since install: take tasklog's entries out, keep the rest as it is now.
			c.prune = nil
			if err := apply([]fileChange{c}); err != nil {
				return notes, err
			}
		case rec.Existed:
			if err := writeAtomic(c.path, rec.Original, rec.Mode); err != nil {
				return notes, fmt.Errorf("%s: %w", c.show, err)
			}
			if c.remove { // what was there before install comes back, rather than nothing
				changes[i].lines = append(slices.Clone(c.lines[:len(c.lines)-1]), c.show+": restored as it was before install")
			}
		default:
			if err := os.Remove(c.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return notes, err
			}
		}
		made = append(made, rec.Created...)
		recs.drop(c.path)
	}
	// The folders install made, deepest first, once every file of this uninstall is gone.
	slices.SortFunc(made, func(a, b string) int {
		if n := strings.Count(b, string(filepath.Separator)) - strings.Count(a, string(filepath.Separator)); n != 0 {
			return n
		}
		return strings.Compare(a, b)
	})
	for _, d := range slices.Compact(made) {
		os.Remove(d) // only an empty folder goes
	}
	return notes, nil
}
