package install

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tasklog/tasklog/events/agentlog"
)

// Codex reads its MCP servers from config.toml, a file its owner edits by hand. Install does
// not parse TOML: it appends a table of its own, [mcp_servers.tasklog], marked by the comment
// line before it, and afterwards recognises only that block. Every other byte of the file stays
// as it was, and a [mcp_servers.tasklog] table without the mark is the user's: install refuses.

// codexMCPMarker is the comment line that tells the table install wrote.
const codexMCPMarker = "# tasklog MCP server: written by 'replay install codex'; 'replay uninstall codex' removes it."

// codexMCPHeader is the header of install's table.
const codexMCPHeader = "[mcp_servers." + mcpServerName + "]"

// codexConfig is Codex's config.toml, in which install keeps its [mcp_servers.tasklog] table.
type codexConfig struct {
	path, show string
	launch     mcpLaunch
	prune      []string
}

// codexBlock is the block install writes: the marker, the header, command and args.
func codexBlock(l mcpLaunch) string {
	args := make([]string, len(l.args))
	for i, a := range l.args {
		args[i] = agentlog.TOMLString(a)
	}
	return codexMCPMarker + "\n" + codexMCPHeader + "\n" +
		"command = " + agentlog.TOMLString(l.command) + "\n" +
		"args = [" + strings.Join(args, ", ") + "]\n"
}

func (c codexConfig) plan(install bool) ([]fileChange, error) {
	path, old, mode, exists, err := readTarget(c.path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", c.show, err)
	}
	if !exists && !install {
		return nil, nil
	}
	text := string(old)
	start, end, err := findCodexBlock(text)
	if err != nil && !install {
		return nil, nil // the user's own tasklog server: uninstall leaves it
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w; nothing was changed", c.show, err)
	}
	change := fileChange{path: path, show: c.show, mode: mode, prune: c.prune}
	name := "mcp_servers." + mcpServerName
	switch {
	case install && start < 0:
		sep := ""
		if text != "" {
			if !strings.HasSuffix(text, "\n") {
				sep = "\n"
			}
			sep += "\n"
		}
		change.data = []byte(text + sep + codexBlock(c.launch))
		change.lines = []string{c.show + ": " + name + ": added"}
	case install:
		want := codexBlock(c.launch)
		if text[start:end] == want {
			return nil, nil
		}
		change.data = []byte(text[:start] + want + text[end:])
		change.lines = []string{c.show + ": " + name + ": updated"}
	case start < 0:
		return nil, nil
	default:
		before, after := text[:start], text[end:]
		if strings.HasSuffix(before, "\n\n") { // the blank line install put before its block
			before = before[:len(before)-1]
		}
		rest := before + after
		change.lines = []string{c.show + ": " + name + ": removed"}
		if strings.TrimSpace(rest) == "" {
			change.remove = true
			change.lines = append(change.lines, c.show+": deleted (nothing else was in it)")
		} else {
			change.data = []byte(rest)
		}
	}
	return []fileChange{change}, nil
}

// errCodexTable is returned when config.toml defines the tasklog server without install's mark.
var errCodexTable = errors.New("defines the MCP server " + mcpServerName + " and was not written by replay install")

// findCodexBlock returns the byte range of install's block in a config.toml (-1, -1 when it has
// none): the marker line, the header line after it, and the key lines up to the next blank
// line, comment, table header or the end. The tasklog server defined any other way is an error.
func findCodexBlock(text string) (start, end int, err error) {
	start, end = -1, -1
	table := "" // the current table, its key path normalised
	prevMarker, prevOff := false, 0
	off := 0
	for off < len(text) {
		n := strings.IndexByte(text[off:], '\n')
		next := len(text)
		if n >= 0 {
			next = off + n + 1
		}
		line := strings.TrimSpace(text[off:next])
		switch {
		case strings.HasPrefix(line, "["):
			table = tomlHeader(line)
			if table == "mcp_servers."+mcpServerName || strings.HasPrefix(table, "mcp_servers."+mcpServerName+".") {
				if !prevMarker || table != "mcp_servers."+mcpServerName || start >= 0 {
					return -1, -1, fmt.Errorf("line %q %w: it is not changed. Rename or remove it, and install again",
						line, errCodexTable)
				}
				start = prevOff
				end = blockEnd(text, next)
			}
		case tomlDefinesServer(table, line):
			return -1, -1, fmt.Errorf("line %q %w: it is not changed. Rename or remove it, and install again",
				line, errCodexTable)
		}
		prevMarker = strings.TrimRight(text[off:next], "\r\n") == codexMCPMarker
		prevOff, off = off, next
	}
	return start, end, nil
}

// blockEnd returns where the key lines that start at off end.
func blockEnd(text string, off int) int {
	for off < len(text) {
		n := strings.IndexByte(text[off:], '\n')
		next := len(text)
		if n >= 0 {
			next = off + n + 1
		}
		line := strings.TrimSpace(text[off:next])
		if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "[") {
			return off
		}
		off = next
	}
	return off
}

// tomlHeader normalises a table header line ([a . "b"] # c → a.b).
func tomlHeader(line string) string {
	if i := strings.IndexByte(line, ']'); i >= 0 {
		line = line[:i]
	}
	return tomlKeyPath(strings.TrimLeft(line, "["))
}

// tomlKeyPath drops the spaces and quotes of a dotted key (plain names only, as Codex's are).
func tomlKeyPath(s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || r == '\t' || r == '"' || r == '\'' {
			return -1
		}
		return r
	}, s)
}

// tomlDefinesServer reports whether a key line defines the tasklog server outside a table
// header: mcp_servers.tasklog… at the top level, or tasklog… in [mcp_servers].
func tomlDefinesServer(table, line string) bool {
	key, _, ok := strings.Cut(line, "=")
	if !ok || strings.HasPrefix(line, "#") {
		return false
	}
	k := tomlKeyPath(key)
	switch table {
	case "":
		return k == "mcp_servers."+mcpServerName || strings.HasPrefix(k, "mcp_servers."+mcpServerName+".")
	case "mcp_servers":
		return k == mcpServerName || strings.HasPrefix(k, mcpServerName+".")
	}
	return false
}
