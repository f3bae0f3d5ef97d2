package install

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// piMarker is the first line of pi's extension install writes; other agents' name the agent.
const piMarker = "// Written by 'replay install pi'; 'replay uninstall pi' removes it."

// extensionMarker is the first line of the extension install writes for agent.
func extensionMarker(agent string) string {
	return strings.ReplaceAll(piMarker, " pi'", " "+agent+"'")
}

// ErrPiStore is returned for install pi (or opencode) with a NATS store: the extension reaches
// a server of a database file by its socket.
var ErrPiStore = errors.New("the agent's extension talks to the replay serve of a database file: " +
	"for a NATS store, run 'replay serve --store URL' yourself and set TASKLOG_SOCKET for the agent")

// piExtension is the extension install writes in a folder: index.ts (or the dialect's file
// name) and tasklog.json (the replay binary that starts the server, and the database when one
// was given).
type piExtension struct {
	dir, show string
	agent     string
	file      string // the extension's file name; "" for index.ts
	exe, db   string
	source    string // the extension's TypeScript
	prune     []string
}

// files returns what install writes: the extension and its settings.
func (p piExtension) files() (index, settings []byte) {
	conf := map[string]string{"replay": p.exe}
	if p.db != "" {
		conf["db"] = p.db
	}
	b, _ := json.MarshalIndent(conf, "", "  ")
	return []byte(extensionMarker(p.agent) + "\n" + p.source), append(b, '\n')
}

func (p piExtension) plan(install bool) ([]fileChange, error) {
	index, settings := p.files()
	name := p.file
	if name == "" {
		name = "index.ts"
	}
	var changes []fileChange
	for _, f := range []struct {
		name string
		want []byte
	}{{name, index}, {"tasklog.json", settings}} {
		path, show := filepath.Join(p.dir, f.name), filepath.Join(p.show, f.name)
		_, old, mode, exists, err := readTarget(path)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", show, err)
		}
		if f.name == name && exists && !strings.HasPrefix(string(old), extensionMarker(p.agent)+"\n") {
			if install {
				return nil, fmt.Errorf("%s %w: it is not overwritten, and nothing was changed", show, ErrHookExists)
			}
			return nil, nil // the user's own extension of that name: uninstall leaves it
		}
		switch {
		case install && !exists:
			changes = append(changes, fileChange{path: path, show: show, data: f.want, mode: 0o644, lines: []string{show + ": added"}})
		case install && string(old) != string(f.want):
			changes = append(changes, fileChange{path: path, show: show, data: f.want, mode: mode, lines: []string{show + ": updated"}})
		case !install && exists:
			changes = append(changes, fileChange{path: path, show: show, remove: true,
				prune: p.prune, lines: []string{show + ": removed"}})
		}
	}
	return changes, nil
}
