package rules

import (
	"fmt"
	"strings"
	"testing"
	"testing/fstest"
)

// clineFolder is a workspace whose .clinerules/ holds n rule files.
func clineFolder(n int) fstest.MapFS {
	fsys := fstest.MapFS{}
	for i := range n {
		fsys[fmt.Sprintf(".clinerules/r%05d.md", i)] = &fstest.MapFile{Data: []byte("Rule.\n")}
	}
	return fsys
}

// A rules folder is read in full up to the cap; one file more and it is cut at the cap, with a
// walk_limit diagnostic naming the cap.
func TestCollectFilesPerFolderCap(t *testing.T) {
	tests := []struct {
		name    string
		capOpt  int // Workspace.MaxFilesPerFolder
		cap     int // the cap in effect
		files   int
		wantCut bool
	}{
		{"option, at the cap", 3, 3, 3, false},
		{"option, one over", 3, 3, 4, true},
		{"default, at the cap", 0, DefaultMaxFilesPerFolder, DefaultMaxFilesPerFolder, false},
		{"default, one over", 0, DefaultMaxFilesPerFolder, DefaultMaxFilesPerFolder + 1, true},
		{"option above the default", DefaultMaxFilesPerFolder + 5, DefaultMaxFilesPerFolder + 5, DefaultMaxFilesPerFolder + 5, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := Workspace{Roots: []Root{{Name: "/ws", FS: clineFolder(tt.files)}}, MaxFilesPerFolder: tt.capOpt}
			files, err := Collect(ws)
			if err != nil {
				t.Fatal(err)
			}
			rs := Load(files)
			if got, want := len(rs.Rules()), min(tt.files, tt.cap); got != want {
				t.Errorf("%d rules, want %d", got, want)
			}
			var cut []Diagnostic
			for _, d := range rs.Diagnostics() {
				if d.Code == DiagWalkLimit {
					cut = append(cut, d)
				}
			}
			if !tt.wantCut {
				if len(cut) != 0 {
					t.Errorf("a folder within the cap is reported cut: %v", cut)
				}
				return
			}
			want := fmt.Sprintf("more than %d rule files", tt.cap)
			if len(cut) != 1 || !strings.Contains(cut[0].Message, want) || cut[0].File != "/ws/.clinerules" {
				t.Errorf("diagnostics %v, want one walk_limit on .clinerules saying %q", cut, want)
			}
		})
	}
}

// The default cap lies within the walk's entry bound, so a folder at the cap is read in full.
func TestDefaultFilesPerFolderWithinWalkLimit(t *testing.T) {
	if DefaultMaxFilesPerFolder < 10000 || DefaultMaxFilesPerFolder >= MaxWalkEntries {
		t.Fatalf("DefaultMaxFilesPerFolder %d: want at least 10,000 and below MaxWalkEntries %d", DefaultMaxFilesPerFolder, MaxWalkEntries)
	}
}

// A root's rule files are kept up to MaxCollectionBytes; the files past it (in sorted order)
// keep no content and say why, for Collect and for a Reader alike, and the rest goes on.
func TestCollectBytesBudget(t *testing.T) {
	big := []byte(strings.Repeat("x", MaxFileSize))
	fits := MaxCollectionBytes / MaxFileSize
	fsys := fstest.MapFS{"AGENTS.md": &fstest.MapFile{Data: []byte("Be kind.\n")}}
	for i := range fits + 2 {
		fsys[fmt.Sprintf(".clinerules/r%04d.md", i)] = &fstest.MapFile{Data: big}
	}
	ws := Workspace{Roots: []Root{{Name: "/ws", FS: fsys}}}
	for name, collect := range map[string]func() ([]File, error){
		"Collect": func() ([]File, error) { return Collect(ws) },
		"Reader":  func() ([]File, error) { var r Reader; defer r.Close(); return r.Collect(ws) },
	} {
		t.Run(name, func(t *testing.T) {
			files, err := collect()
			if err != nil {
				t.Fatal(err)
			}
			var kept, cut int
			var total int64
			for _, f := range files {
				total += int64(len(f.Content))
				switch {
				case strings.HasPrefix(f.ReadError, DiagWalkLimit) && strings.Contains(f.ReadError, "MiB"):
					cut++
					if len(f.Content) != 0 {
						t.Errorf("%s was cut but keeps %d bytes", f.Path, len(f.Content))
					}
				case f.ReadError == "":
					kept++
				}
			}
			if total > MaxCollectionBytes {
				t.Errorf("the collection keeps %d bytes, more than %d", total, MaxCollectionBytes)
			}
			if cut == 0 {
				t.Errorf("no file was cut; %d kept", kept)
			}
			if kept < fits-1 {
				t.Errorf("only %d files kept, want about %d", kept, fits)
			}
		})
	}
}
