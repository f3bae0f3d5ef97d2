package session

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/rules"
)

// TestResolveTask: a full id or a unique prefix names a task; no match and an ambiguous prefix
// say so, naming the log and, when given, the command that lists the tasks.
func TestResolveTask(t *testing.T) {
	db := openDB(t)
	var ids []uuid.UUID
	for range 2 {
		s := newSession(t, db, fstest.MapFS{}, Options{})
		ids = append(ids, s.Task())
	}
	tests := []struct {
		name, arg, listing string
		want               uuid.UUID
		wantErr            string
	}{
		{name: "full id", arg: ids[0].String(), want: ids[0]},
		{name: "upper case", arg: strings.ToUpper(ids[1].String()), want: ids[1]},
		{name: "no such task", arg: "zzzz", listing: "replay tasks --db x", wantErr: `no task "zzzz" in ` + db.Path() + ` ('replay tasks --db x' lists them)`},
		{name: "no listing", arg: "zzzz", wantErr: `no task "zzzz" in ` + db.Path()},
		{name: "empty", arg: "", wantErr: `no task ""`},
	}
	if p := commonPrefix(ids[0].String(), ids[1].String()); p != "" {
		tests = append(tests, struct {
			name, arg, listing string
			want               uuid.UUID
			wantErr            string
		}{name: "ambiguous", arg: p, wantErr: "is ambiguous in " + db.Path() + ": 2 tasks match"})
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ResolveTask(db, tt.arg, tt.listing)
			if tt.wantErr != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) && !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %s, %v; want %s", got, err, tt.want)
			}
		})
	}
}

func commonPrefix(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return a[:i]
}

// TestFoldersDirs: the folders map onto the roots a task recorded, and a folder for a root the
// task does not have, or that is not a folder, is an error naming the flag.
func TestFoldersDirs(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		f        Folders
		recorded []string
		want     map[string]string
		wantErr  string
	}{
		{"workspace is the first root", Folders{Workspace: dir}, []string{"/a", "/b"}, map[string]string{"/a": dir}, ""},
		{"roots by name", Folders{Roots: []string{"/b=" + dir}}, []string{"/a", "/b"}, map[string]string{"/b": dir}, ""},
		{"workspace without roots", Folders{Workspace: dir}, nil, nil, "--workspace: the task records no workspace root"},
		{"not ROOT=DIR", Folders{Roots: []string{"/a"}}, []string{"/a"}, nil, `--root "/a": want ROOT=DIR`},
		{"unknown root", Folders{Roots: []string{"/c=" + dir}}, []string{"/a"}, nil, `the task records no root "/c" (it has /a)`},
		{"not a folder", Folders{Roots: []string{"/a=" + file}}, []string{"/a"}, nil, "is not a folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.f.Dirs(tt.recorded)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || len(got) != len(tt.want) {
				t.Fatalf("got %v, %v; want %v", got, err, tt.want)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s: %q, want %q", k, got[k], v)
				}
			}
		})
	}
}

// TestRulesForAndWhatIf: the paths asked about are mapped to the roots (one outside is left out
// with its reason), a scoped rule applies to a path its pattern matches, and a file in no rule
// folder is a NotRuleFileError listing the rule files.
func TestRulesForAndWhatIf(t *testing.T) {
	fsys := fstest.MapFS{".clinerules/api.md": {Data: []byte("---\npaths: [\"api/**\"]\n---\nAPI rule.\n")}}
	ws := rules.Workspace{Roots: []rules.Root{{Name: "/ws", FS: fsys}}}
	files, err := rules.Collect(ws)
	if err != nil {
		t.Fatal(err)
	}
	rs := rules.Load(files)
	d, asked := RulesFor(rs, TaskSettings{}, []string{"/ws/api/a.go", "/elsewhere/b.go"}, []string{"/ws"}, nil)
	if len(asked) != 2 || asked[0].Path != "api/a.go" || asked[0].Root != "/ws" || asked[1].Dropped == "" {
		t.Errorf("asked = %+v; want api/a.go in /ws, and /elsewhere/b.go dropped", asked)
	}
	var applied []string
	for _, r := range d.Results {
		if r.Included {
			applied = append(applied, r.Rule.Name)
		}
	}
	if !slices.Equal(applied, []string{"api"}) {
		t.Errorf("applied %v, want [api]", applied)
	}

	db := openDB(t)
	s := newSession(t, db, fsys, Options{})
	_, err = WhatIf(context.Background(), db, s.Task(), ws, files,
		RuleFile{Scope: rules.ScopeWorkspace, Root: "/ws", Path: "notes/x.md"}, []byte("x"))
	var nr *NotRuleFileError
	if !errors.As(err, &nr) || !errors.Is(err, ErrNotRuleFile) || !slices.Equal(nr.RuleFiles, []string{"/ws/.clinerules/api.md"}) {
		t.Fatalf("whatif of a file in no rule folder: %v (%+v); want a NotRuleFileError listing /ws/.clinerules/api.md", err, nr)
	}
}
