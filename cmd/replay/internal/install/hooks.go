package install

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// hookCommand is the shell command line every installed hook runs: this replay binary's
// `hook <agent>` verb, or `replay-hook <agent>` when the small hook program is installed beside
// it, with the database baked in when --db was given (--store for a NATS URL).
type hookCommand struct {
	agent string
	line  string
	// exe and db are what the line runs: the replay binary and the database or store, for the
	// agents that get them otherwise than in a command line (pi's extension settings).
	exe, db string
	// extension is the source of the extension a HookExtension agent loads (pi's).
	extension string
	// url and token, when set, make the hook an HTTP post to 'replay serve --http' with the
	// token as a bearer, instead of the command line (HookConfig.HTTP agents: Qwen Code).
	url, token string
}

// HTTPHookPath is the path of an agent's HTTP hook on 'replay serve --http': the prefix, then
// the agent's name.
const HTTPHookPath = "/hook/"

// oursHTTP reports whether a configured hook is a tasklog HTTP hook for this agent: a post to a
// loopback address at /hook/<agent>, whatever the port and token.
func (c hookCommand) oursHTTP(h any) bool {
	o, ok := h.(*object)
	if !ok {
		return false
	}
	typ, _ := o.get("type")
	raw, _ := o.get("url")
	s, isString := raw.(string)
	if typ != "http" || !isString {
		return false
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme != "http" || u.Path != HTTPHookPath+c.agent {
		return false
	}
	ip := net.ParseIP(u.Hostname())
	return ip != nil && ip.IsLoopback()
}

// hookClientName is the small hook program's name: 'go install ./cmd/replay/...' puts it
// beside replay.
const hookClientName = "replay-hook"

// hookClientBeside is the replay-hook program beside the replay binary exe, or "" when there is
// none that can be run.
func hookClientBeside(exe string) string {
	p := filepath.Join(filepath.Dir(exe), hookClientName)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0 {
		return p
	}
	return ""
}

func newHookCommand(exe, agent, db, extension string) hookCommand {
	line := ShellQuote(exe) + " hook " + agent
	if client := hookClientBeside(exe); client != "" && (db == "" || storeFlag(db) == "--db") {
		line = ShellQuote(client) + " " + agent
	}
	if db != "" {
		line += " " + storeFlag(db) + " " + ShellQuote(db)
	}
	return hookCommand{agent: agent, line: line, exe: exe, db: db, extension: extension}
}

// ours reports whether a configured command line is a tasklog hook for this agent: a program
// whose name contains "replay" running `hook <agent>`, or replay-hook running `<agent>`,
// wherever it is installed and whatever database it names. Install replaces such an entry (so
// installing again moves the hooks to replay-hook, or back); uninstall removes it; nothing else
// is touched.
func (c hookCommand) ours(line string) bool {
	w, ok := shellWords(line)
	if !ok || len(w) < 2 || !strings.Contains(filepath.Base(w[0]), "replay") {
		return false
	}
	if filepath.Base(w[0]) == hookClientName && w[1] == c.agent {
		return true
	}
	return len(w) >= 3 && w[1] == "hook" && w[2] == c.agent
}

// hookEvent is one event an agent runs hooks for.
type hookEvent struct {
	name    string
	matcher bool // the event filters on a matcher: write "*" (all)
	timeout int  // seconds; 0 writes none
}

// jsonEdit is a change to one JSON configuration document: install adds or updates its entries,
// uninstall removes them, and each returns one line per thing it changed. Hooks are one kind; an
// MCP server entry (`mcpServers` in .mcp.json or .cursor/mcp.json) is another of the same shape.
type jsonEdit interface {
	install(root *object) ([]string, error)
	uninstall(root *object) ([]string, error)
	// bare reports whether a document holds nothing but the frame install put around its
	// entries, so that uninstall may delete the file.
	bare(root *object) bool
}

// hooksObject returns the document's "hooks" object, creating it when asked.
func hooksObject(root *object, create bool) (*object, error) {
	v, ok := root.get("hooks")
	if !ok {
		if !create {
			return nil, nil
		}
		h := &object{}
		root.set("hooks", h)
		return h, nil
	}
	h, ok := v.(*object)
	if !ok {
		return nil, fmt.Errorf(`"hooks" is %s, not an object`, jsonKind(v))
	}
	return h, nil
}

// eventEntries returns the array of an event's entries (nil when absent).
func eventEntries(hooks *object, event string) ([]any, error) {
	v, ok := hooks.get(event)
	if !ok {
		return nil, nil
	}
	a, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf(`"hooks.%s" is %s, not an array`, event, jsonKind(v))
	}
	return a, nil
}

// commandOf returns an entry's "command" when it is a string.
func commandOf(v any) (string, bool) {
	o, ok := v.(*object)
	if !ok {
		return "", false
	}
	c, ok := o.get("command")
	s, isString := c.(string)
	return s, ok && isString
}

// hookEdit keeps one tasklog entry per event in an agent's hooks document, in the agent's shape.
type hookEdit struct {
	events []hookEvent
	cmd    hookCommand
	shape  hookShape
	// version is the "version" a document gets when it has none (Cursor's file requires one);
	// 0 writes none.
	version int
}

// hookShape is how an event's list holds hooks.
type hookShape interface {
	// entry is the list entry install keeps for an event.
	entry(ev hookEvent, cmd hookCommand) *object
	// split takes tasklog's hooks out of a list entry: it returns what is left of the user's
	// (nil for nothing) and how many of tasklog's it held.
	split(e any, cmd hookCommand) (rest any, ours int)
}

// claudeShape is Claude Code's, which Codex and VS Code read too: matcher groups, each with its
// own list of hooks. Install keeps a group of its own.
type claudeShape struct{}

func (claudeShape) entry(ev hookEvent, cmd hookCommand) *object {
	h := newObject("type", "command", "command", cmd.line)
	if cmd.url != "" {
		h = newObject("type", "http", "url", cmd.url, "headers", newObject("Authorization", "Bearer "+cmd.token))
	}
	if ev.timeout > 0 {
		h.set("timeout", ev.timeout)
	}
	grp := &object{}
	if ev.matcher {
		grp.set("matcher", "*")
	}
	grp.set("hooks", []any{h})
	return grp
}

func (claudeShape) split(e any, cmd hookCommand) (any, int) {
	grp, ok := e.(*object)
	if !ok {
		return e, 0
	}
	v, _ := grp.get("hooks")
	hs, ok := v.([]any)
	if !ok {
		return e, 0
	}
	user, ours := []any{}, 0
	for _, h := range hs {
		if c, isCmd := commandOf(h); isCmd && cmd.ours(c) || cmd.oursHTTP(h) {
			ours++
		} else {
			user = append(user, h)
		}
	}
	switch {
	case ours == 0:
		return e, 0
	case len(user) == 0:
		return nil, ours
	}
	grp.set("hooks", user) // tasklog's hook inside a group of the user's: the group stays
	return grp, ours
}

// flatShape is Cursor's and VS Code's own hook files: the event's list holds the hooks
// themselves, each built by the function.
type flatShape func(ev hookEvent, cmd hookCommand) *object

func (f flatShape) entry(ev hookEvent, cmd hookCommand) *object { return f(ev, cmd) }

func (flatShape) split(e any, cmd hookCommand) (any, int) {
	if c, ok := commandOf(e); ok && cmd.ours(c) {
		return nil, 1
	}
	return e, 0
}

func (h hookEdit) install(root *object) ([]string, error) {
	if _, ok := root.get("version"); !ok && h.version != 0 {
		root.members = append([]member{{"version", h.version}}, root.members...)
	}
	hooks, err := hooksObject(root, true)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, ev := range h.events {
		entries, err := eventEntries(hooks, ev.name)
		if err != nil {
			return nil, err
		}
		want := h.shape.entry(ev, h.cmd)
		kept, found, changed := []any{}, false, false
		for _, e := range entries {
			rest, ours := h.shape.split(e, h.cmd)
			switch {
			case ours == 0:
				kept = append(kept, e)
			case rest != nil: // taken out of the user's group; install's own is added below
				kept, changed = append(kept, rest), true
			case found: // a second one of install's
				changed = true
			default:
				kept, found, changed = append(kept, want), true, changed || !equalJSON(e, want)
			}
		}
		switch {
		case !found && !changed:
			lines = append(lines, ev.name+": added")
		case !found || changed:
			lines = append(lines, ev.name+": updated")
		}
		if !found {
			kept = append(kept, want)
		}
		hooks.set(ev.name, kept)
	}
	return lines, nil
}

func (h hookEdit) uninstall(root *object) ([]string, error) {
	hooks, err := hooksObject(root, false)
	if hooks == nil || err != nil {
		return nil, err
	}
	var lines []string
	for _, ev := range h.events {
		entries, err := eventEntries(hooks, ev.name)
		if err != nil {
			return nil, err
		}
		kept, removed := []any{}, false
		for _, e := range entries {
			rest, ours := h.shape.split(e, h.cmd)
			removed = removed || ours > 0
			if rest != nil {
				kept = append(kept, rest)
			}
		}
		if !removed {
			continue
		}
		lines = append(lines, ev.name+": removed")
		if len(kept) == 0 {
			hooks.del(ev.name)
		} else {
			hooks.set(ev.name, kept)
		}
	}
	if len(lines) > 0 && hooks.len() == 0 {
		root.del("hooks")
	}
	return lines, nil
}

func (h hookEdit) bare(root *object) bool {
	if root.len() == 0 {
		return true
	}
	v, _ := root.get("version")
	return h.version != 0 && root.len() == 1 && equalJSON(v, h.version)
}

// ShellQuote quotes s for a POSIX shell when it holds anything but safe characters.
func ShellQuote(s string) string {
	safe := func(r rune) bool {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			strings.ContainsRune("_@%+=:,./-", r)
	}
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !safe(r) }) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellWords splits a command line as a POSIX shell would (quotes and backslashes; no
// expansions). It reports false for an unterminated quote.
func shellWords(s string) ([]string, bool) {
	var words []string
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
			continue
		case c == '\'':
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, false
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("$`\"\\\n", s[i+1]) >= 0 {
					i++
				}
				w.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, false
			}
		case c == '\\' && i+1 < len(s):
			i++
			w.WriteByte(s[i])
		default:
			w.WriteByte(c)
		}
		inWord = true
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, true
}
