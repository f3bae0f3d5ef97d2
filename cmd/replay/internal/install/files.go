package install

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// fileChange is what install or uninstall does to one file, decided before anything is written.
type fileChange struct {
	path   string      // the file written or removed (symbolic links resolved)
	show   string      // the file as printed
	data   []byte      // the new content, unless remove
	remove bool        // delete the file
	mode   fs.FileMode // the mode to write: an existing file keeps its own
	// prune lists folders, innermost first, that uninstall removes when it leaves them empty.
	prune []string
	lines []string // what changed, one line each
}

// target is one configuration file (or set of files) an agent reads its hooks from. plan
// reads it and decides the changes; nothing is written until every target has planned.
type target interface {
	plan(install bool) ([]fileChange, error)
}

// jsonTarget is a JSON configuration document changed by one edit.
type jsonTarget struct {
	path, show string
	edit       jsonEdit
	prune      []string
}

func (t jsonTarget) plan(install bool) ([]fileChange, error) {
	path, old, mode, exists, err := readTarget(t.path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", t.show, err)
	}
	if !exists && !install {
		return nil, nil
	}
	root, err := parseDocument(old)
	if err != nil {
		return nil, fmt.Errorf("%s: %w (fix or remove it; nothing was changed)", t.show, err)
	}
	var lines []string
	if install {
		lines, err = t.edit.install(root)
	} else {
		lines, err = t.edit.uninstall(root)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w; nothing was changed", t.show, err)
	}
	if len(lines) == 0 {
		return nil, nil
	}
	c := fileChange{path: path, show: t.show, mode: mode, prune: t.prune}
	if !install && t.edit.bare(root) {
		c.remove = true
		lines = append(lines, "deleted (nothing else was in it)")
	} else {
		l := defaultLayout
		if exists {
			l = layoutOf(old)
		}
		c.data = encodeDocument(root, l)
	}
	for _, l := range lines {
		c.lines = append(c.lines, t.show+": "+l)
	}
	return []fileChange{c}, nil
}

// readTarget reads a configuration file through any symbolic link to it (a settings file kept
// in a dotfiles folder stays a link). A missing file is not an error.
func readTarget(path string) (resolved string, data []byte, mode fs.FileMode, exists bool, err error) {
	resolved = path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		resolved = r
	}
	fi, err := os.Stat(resolved)
	if errors.Is(err, fs.ErrNotExist) {
		return path, nil, 0o644, false, nil
	}
	if err != nil {
		return "", nil, 0, false, err
	}
	if !fi.Mode().IsRegular() {
		return "", nil, 0, false, fmt.Errorf("not a regular file")
	}
	data, err = os.ReadFile(resolved)
	return resolved, data, fi.Mode().Perm(), true, err
}

// clineScripts is Cline's hooks: one executable file per event, named after it, in a hooks
// folder. Each is a two-line shell script that hands the payload on stdin to replay.
type clineScripts struct {
	dir, show string
	events    []string
	cmd       hookCommand
	prune     []string
}

// clineMarker is the line that tells a script install wrote.
const clineMarker = "# Written by 'replay install cline'; 'replay uninstall cline' removes it."

func clineScript(line string) []byte {
	return []byte("#!/bin/sh\n" + clineMarker + "\nexec " + line + "\n")
}

// isClineScript reports whether data is a script install wrote for this agent (any binary
// path or database), and nothing more.
func (c clineScripts) isOurs(data []byte) bool {
	lines := strings.Split(string(data), "\n")
	if len(lines) != 4 || lines[0] != "#!/bin/sh" || lines[1] != clineMarker || lines[3] != "" {
		return false
	}
	cmd, ok := strings.CutPrefix(lines[2], "exec ")
	return ok && c.cmd.ours(cmd)
}

// ErrHookExists is returned when an agent's hook file of the same name is the user's own.
var ErrHookExists = errors.New("exists and was not written by replay install")

func (c clineScripts) plan(install bool) ([]fileChange, error) {
	if fi, err := os.Stat(filepath.Dir(c.dir)); install && err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("%s is a file (Cline's single-file rules), so Cline has no hooks folder there: "+
			"make it a folder or use --user; nothing was changed", filepath.Dir(c.show))
	}
	var changes []fileChange
	var conflicts []string
	want := clineScript(c.cmd.line)
	for _, ev := range c.events {
		path, show := filepath.Join(c.dir, ev), filepath.Join(c.show, ev)
		_, old, mode, exists, err := readTarget(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", show, err)
		}
		ours := exists && c.isOurs(old)
		switch {
		case exists && !ours:
			if install {
				conflicts = append(conflicts, show)
			}
		case install && !exists:
			changes = append(changes, fileChange{path: path, show: show, data: want, mode: 0o755,
				lines: []string{show + ": added"}})
		case install && (string(old) != string(want) || mode&0o111 == 0):
			changes = append(changes, fileChange{path: path, show: show, data: want, mode: mode | 0o755,
				lines: []string{show + ": updated"}})
		case !install && ours:
			changes = append(changes, fileChange{path: path, show: show, remove: true, prune: c.prune,
				lines: []string{show + ": removed"}})
		}
	}
	if len(conflicts) > 0 {
		return nil, fmt.Errorf("%s %w: it is not overwritten, and nothing was changed. "+
			"Move it aside, or make it run 'replay hook cline' itself, and install again",
			strings.Join(conflicts, ", "), ErrHookExists)
	}
	return changes, nil
}

// apply writes the planned changes: each file through a temporary file renamed into place, so
// a reader never sees half a file.
func apply(changes []fileChange) error {
	for _, c := range changes {
		if c.remove {
			if err := os.Remove(c.path); err != nil {
				return err
			}
			for _, d := range c.prune {
				if err := os.Remove(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
					break // not empty: leave it and the folders above it
				}
			}
			continue
		}
		if err := writeAtomic(c.path, c.data, c.mode); err != nil {
			return fmt.Errorf("%s: %w", c.show, err)
		}
	}
	return nil
}

func writeAtomic(path string, data []byte, mode fs.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
