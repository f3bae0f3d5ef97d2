// Package extension holds the TypeScript that replay install writes for the agents that load
// code instead of running hook commands: pi's extension and opencode's plugin. Both speak replay
// serve's protocol over the database's socket through one client (client.ts), which Source puts
// into each agent's file in place of its marker line.
package extension

import (
	_ "embed"
	"strings"
)

//go:embed client.ts
var client string

//go:embed pi.ts
var pi string

//go:embed opencode.ts
var opencode string

// marker is the line of an agent's file that the client replaces.
const marker = "// tasklog: the socket client (client.ts) is put here.\n"

// Source is the file install writes for agent ("pi" or "opencode"), the client in place; ""
// for an agent that loads no extension.
func Source(agent string) string {
	var src string
	switch agent {
	case "pi":
		src = pi
	case "opencode":
		src = opencode
	default:
		return ""
	}
	return strings.Replace(src, marker, client, 1)
}
