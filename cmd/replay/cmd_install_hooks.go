package main

import (
	"fmt"
	"path/filepath"
	"strings"
)

// hookCommand is the shell command line every installed hook runs: this replay binary's
// `hook <agent>` verb, with the database baked in when --db was given.
type hookCommand struct {
	agent string
	line  string
}

func newHookCommand(exe, agent, db string) hookCommand {
	line := shellQuote(exe) + " hook " + agent
	if db != "" {
		line += " --db " + shellQuote(db)
	}
	return hookCommand{agent: agent, line: line}
}

// ours reports whether a configured command line is a tasklog hook for this agent: a program
// whose name contains "replay" running `hook <agent>`, wherever it is installed and whatever
// database it names. Install replaces such an entry; uninstall removes it; nothing else is
// touched.
func (c hookCommand) ours(line string) bool {
	w, ok := shellWords(line)
	return ok && len(w) >= 3 && strings.Contains(filepath.Base(w[0]), "replay") &&
		w[1] == "hook" && w[2] == c.agent
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

// groupedHooks is Claude Code's shape, which Codex and VS Code read too: per event, matcher
// groups, each with its own list of hooks. Install keeps one group of its own per event.
type groupedHooks struct {
	events []hookEvent
	cmd    hookCommand
}

func (g groupedHooks) group(ev hookEvent) *object {
	h := newObject("type", "command", "command", g.cmd.line)
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

// ourHooks splits a group's hooks into the user's and the number of ours.
func (g groupedHooks) ourHooks(grp *object) (user []any, ours int, ok bool) {
	v, _ := grp.get("hooks")
	hs, ok := v.([]any)
	if !ok {
		return nil, 0, false
	}
	user = []any{}
	for _, h := range hs {
		if c, isCmd := commandOf(h); isCmd && g.cmd.ours(c) {
			ours++
		} else {
			user = append(user, h)
		}
	}
	return user, ours, true
}

func (g groupedHooks) install(root *object) ([]string, error) {
	hooks, err := hooksObject(root, true)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, ev := range g.events {
		entries, err := eventEntries(hooks, ev.name)
		if err != nil {
			return nil, err
		}
		want := g.group(ev)
		kept, found, changed := []any{}, false, false
		for _, e := range entries {
			grp, isObj := e.(*object)
			user, ours, ok := g.ourHooks(grp)
			if !isObj || !ok || ours == 0 {
				kept = append(kept, e)
				continue
			}
			if len(user) > 0 { // ours sits among the user's hooks: take it out, add our own group
				grp.set("hooks", user)
				kept, changed = append(kept, grp), true
				continue
			}
			if found || !equalJSON(grp, want) {
				changed = true
			}
			if !found {
				kept, found = append(kept, want), true
			}
		}
		if !found {
			kept = append(kept, want)
		}
		switch {
		case !found && !changed:
			lines = append(lines, ev.name+": added")
		case !found || changed:
			lines = append(lines, ev.name+": updated")
		}
		hooks.set(ev.name, kept)
	}
	return lines, nil
}

func (g groupedHooks) uninstall(root *object) ([]string, error) {
	hooks, err := hooksObject(root, false)
	if hooks == nil || err != nil {
		return nil, err
	}
	var lines []string
	for _, ev := range g.events {
		entries, err := eventEntries(hooks, ev.name)
		if err != nil {
			return nil, err
		}
		kept, removed := []any{}, false
		for _, e := range entries {
			grp, isObj := e.(*object)
			user, ours, ok := g.ourHooks(grp)
			if !isObj || !ok || ours == 0 {
				kept = append(kept, e)
				continue
			}
			removed = true
			if len(user) > 0 {
				grp.set("hooks", user)
				kept = append(kept, grp)
			}
		}
		if removed {
			lines = append(lines, ev.name+": removed")
			setOrDrop(hooks, ev.name, kept)
		}
	}
	if len(lines) > 0 && hooks.len() == 0 {
		root.del("hooks")
	}
	return lines, nil
}

func (g groupedHooks) bare(root *object) bool { return root.len() == 0 }

// setOrDrop stores an event's entries, or removes the event when none are left.
func setOrDrop(hooks *object, event string, entries []any) {
	if len(entries) == 0 {
		hooks.del(event)
		return
	}
	hooks.set(event, entries)
}

// flatHooks is the shape of Cursor's hooks.json and VS Code's own hook files: per event, a list
// of hook entries without matcher groups.
type flatHooks struct {
	events []hookEvent
	cmd    hookCommand
	// entry builds the entry for an event.
	entry func(ev hookEvent, cmd hookCommand) *object
	// version is the "version" a new document starts with (Cursor's file requires one); 0
	// writes none.
	version int
}

func (f flatHooks) install(root *object) ([]string, error) {
	if _, ok := root.get("version"); !ok && f.version != 0 {
		root.members = append([]member{{"version", f.version}}, root.members...)
	}
	hooks, err := hooksObject(root, true)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, ev := range f.events {
		entries, err := eventEntries(hooks, ev.name)
		if err != nil {
			return nil, err
		}
		want := f.entry(ev, f.cmd)
		kept, found, changed := []any{}, false, false
		for _, e := range entries {
			if c, ok := commandOf(e); !ok || !f.cmd.ours(c) {
				kept = append(kept, e)
				continue
			}
			if found || !equalJSON(e, want) {
				changed = true
			}
			if !found {
				kept, found = append(kept, want), true
			}
		}
		switch {
		case !found:
			kept = append(kept, want)
			lines = append(lines, ev.name+": added")
		case changed:
			lines = append(lines, ev.name+": updated")
		}
		hooks.set(ev.name, kept)
	}
	return lines, nil
}

func (f flatHooks) uninstall(root *object) ([]string, error) {
	hooks, err := hooksObject(root, false)
	if hooks == nil || err != nil {
		return nil, err
	}
	var lines []string
	for _, ev := range f.events {
		entries, err := eventEntries(hooks, ev.name)
		if err != nil {
			return nil, err
		}
		kept := []any{}
		for _, e := range entries {
			if c, ok := commandOf(e); !ok || !f.cmd.ours(c) {
				kept = append(kept, e)
			}
		}
		if len(kept) < len(entries) {
			lines = append(lines, ev.name+": removed")
			setOrDrop(hooks, ev.name, kept)
		}
	}
	if len(lines) > 0 && hooks.len() == 0 {
		root.del("hooks")
	}
	return lines, nil
}

func (f flatHooks) bare(root *object) bool {
	if root.len() == 0 {
		return true
	}
	v, _ := root.get("version")
	return f.version != 0 && root.len() == 1 && equalJSON(v, f.version)
}

// shellQuote quotes s for a POSIX shell when it holds anything but safe characters.
func shellQuote(s string) string {
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
