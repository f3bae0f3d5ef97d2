// Package layers is the table of the module's import layers: which floor each package sits on.
// A package imports only packages of its own floor or the floors below it; the test of this
// package reads the module's imports with 'go list' and fails on one that runs back up.
package layers

import "strings"

// Module is the module path every package name here is relative to.
const Module = "github.com/tasklog/tasklog"

// Floors are the layers from the bottom up, each a list of package paths relative to Module;
// a path ending in "/..." stands for every package under it. The most specific entry places a
// package: "session/..." places session/serve, "session" only session itself.
var Floors = [][]string{
	// What an event is, a JSON reader that imports nothing, and how a hook payload is
	// recognised (plain data the hook program reads too).
	{"events", "internal/jsonlite", "events/agentlog/hookspec"},
	// What the log holds and how rules are read, decided and audited; each knows nothing of
	// sessions. audit and events/agentlog (an agent's words as events) sit here too.
	{"events/agentlog", "audit", "projections", "rules", "store", "store/..."},
	// The API a runtime embeds, and the conformance suite every agent's description passes.
	{"session", "events/agentlog/agenttest"},
	// The shells over it: the server, the MCP server, the report and the web app, the replay
	// test helpers; and terminal-safe text, which they print.
	{"session/...", "internal/..."},
	// The command line, and the program that measures the performance page's figures.
	{"cmd/...", "internal/figures"},
}

// Floor is the floor of the package at path (relative to Module), and whether the table
// places it at all.
func Floor(path string) (int, bool) {
	best, floor := -1, 0
	for i, entries := range Floors {
		for _, e := range entries {
			n := match(e, path)
			if n > best {
				best, floor = n, i
			}
		}
	}
	return floor, best >= 0
}

// match is how specific entry is for path: the length of what it names, or -1 when it does
// not name path.
func match(entry, path string) int {
	if prefix, ok := strings.CutSuffix(entry, "/..."); ok {
		if strings.HasPrefix(path, prefix+"/") {
			return len(prefix)
		}
		return -1
	}
	if entry == path {
		return len(entry) + 1 // an exact entry beats a folder of the same name
	}
	return -1
}
