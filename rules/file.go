package rules

import (
	"cmp"
	"io/fs"
	"path"
)

// File is one rule source as found: the unit a rules snapshot records. Everything [Load]
// needs is in it, so a recorded list of Files re-loads to the same rule set anywhere.
type File struct {
	// Provider is the tool whose folder the file is in: one of the Provider constants.
	Provider Provider `json:"provider"`
	// Scope is "workspace", "global" or "remote".
	Scope string `json:"scope"`
	// Root is the workspace root's name as recorded (for example "/ws"); empty for global and
	// remote files.
	Root string `json:"root,omitempty"`
	// Path is the POSIX path relative to the root or the home folder; for a remote rule, its name.
	Path string `json:"path"`
	// Content is the file's bytes, at most [MaxFileSize] of them.
	Content []byte `json:"content"`
	// AlwaysEnabled marks a remote rule that toggles cannot disable.
	AlwaysEnabled bool `json:"always_enabled,omitempty"`
	// Size is the file's size when it was read; a Size above len(Content) means Content was
	// truncated. Zero means "the length of Content".
	Size int64 `json:"size,omitempty"`
	// ReadError is set when the file could not be read; Content is then empty.
	ReadError string `json:"read_error,omitempty"`
	// Digest is the hex SHA-256 of Content, set by Collect for the files it read; empty means
	// not computed (see [Digest]).
	Digest string `json:"-"`
}

// label is the file as a person would look for it.
func (f *File) label() string {
	switch f.Scope {
	case ScopeGlobal:
		return "~/" + f.Path
	case ScopeRemote:
		return "remote:" + f.Path
	}
	if f.Root == "" {
		return f.Path
	}
	return path.Join(f.Root, f.Path)
}

// id is the stable identity of the rule the file becomes.
func (f *File) id() string {
	return string(f.Provider) + ":" + f.label()
}

func compareFiles(a, b File) int {
	return cmp.Or(cmp.Compare(scopeOrder(a.Scope), scopeOrder(b.Scope)), cmp.Compare(a.Root, b.Root),
		cmp.Compare(a.Path, b.Path), cmp.Compare(a.Provider, b.Provider))
}

func scopeOrder(s string) int {
	switch s {
	case ScopeWorkspace:
		return 0
	case ScopeGlobal:
		return 1
	}
	return 2
}

// Root is one workspace root: its name as recorded in the log and a file system to read it.
type Root struct {
	// Name is the root as the log records it (an absolute slash path, for example "/ws").
	Name string
	// FS reads the root; [Collect] is the only reader.
	FS fs.FS
	// Dir, when set, is the operating-system folder FS reads (os.DirFS(Dir)): a [Reader] then
	// watches the root for changes instead of checking its rule files every time.
	Dir string
}

// RemoteRule is a rule delivered by configuration rather than a file (Cline's remote global
// rules). Its JSON shape is Cline's.
type RemoteRule struct {
	// Name names the rule; it is its path and its rule:// name.
	Name string `json:"name"`
	// Contents is the rule's markdown, frontmatter allowed.
	Contents string `json:"contents"`
	// AlwaysEnabled rules ignore their toggle and outrank every rule of the same name.
	AlwaysEnabled bool `json:"alwaysEnabled"`
}

// Workspace is everything [Collect] reads rules from.
type Workspace struct {
	// Roots are the workspace roots, in the order the runtime lists them.
	Roots []Root
	// Home is the user's home folder; nil when global rules are not wanted.
	Home fs.FS
	// Remote are rules delivered by configuration.
	Remote []RemoteRule
	// MaxFilesPerFolder bounds the rule files taken from one rules folder; zero means
	// [DefaultMaxFilesPerFolder]. A folder holding more is cut, with a [DiagWalkLimit]
	// diagnostic. Whatever the cap, one collection of a root looks at [MaxWalkEntries]
	// directory entries at most, so a cap above that changes nothing.
	MaxFilesPerFolder int
}

// maxFiles is the cap on the rule files taken from one rules folder.
func (ws Workspace) maxFiles() int {
	if ws.MaxFilesPerFolder > 0 {
		return ws.MaxFilesPerFolder
	}
	return DefaultMaxFilesPerFolder
}
