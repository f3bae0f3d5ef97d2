package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/tasklog/tasklog/projections"
	"github.com/tasklog/tasklog/session"
)

// workspaceFlags are the flags that say where rule files are read from.
type workspaceFlags struct {
	session.Folders
}

func (w *workspaceFlags) register(f *flags) {
	f.StringVar(&w.Workspace, "workspace", "", "folder holding the first workspace root's files")
	f.Var((*multiFlag)(&w.Roots), "root", "ROOT=DIR: read the files of the recorded root ROOT from DIR (repeatable)")
	f.StringVar(&w.Home, "home", "", "home folder for global rules (~/Documents/Cline/Rules, …)")
	f.StringVar(&w.Remote, "remote-rules", "", "JSON file with remote rules: [{\"name\", \"contents\", \"alwaysEnabled\"}]")
}

func readConfig(name string) (projections.Config, error) {
	b, err := os.ReadFile(name)
	if err != nil {
		return projections.Config{}, err
	}
	cfg, err := projections.DecodeConfig(b)
	if err != nil {
		return cfg, fmt.Errorf("--config %s: %w", name, err)
	}
	return cfg, nil
}

// absDir is the absolute, slash-separated form of a folder, used as a root's recorded path
// when a script names none.
func absDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.ToSlash(abs), nil
}
