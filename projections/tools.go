package projections

import (
	"encoding/json"
	"slices"
	"strings"
	"unicode"
)

// Target is one path a tool call names.
type Target struct {
	// Path is the path as the tool spelled it (absolute or relative to the call's working
	// directory); a directory the tool lists or searches ends in "/".
	Path string
	// Shell is set for a path-like string found in a shell command line: the command may only
	// mention it, so it is weaker evidence than a tool's file parameter.
	Shell bool
}

// ToolTargets returns the paths a tool call targets, in the order the parameters name them and
// without duplicates. Known tools of Cline, Claude Code, Codex and pi are read through a table;
// any other tool contributes its top-level string parameters named path, file, *_path or *Path
// and its string arrays named paths or *_paths. Parameters that are not a JSON object give no
// targets.
func ToolTargets(tool string, params json.RawMessage) []Target {
	if !json.Valid(params) {
		return nil
	}
	var s targetReader
	return s.targets(tool, params, false)
}

// targetReader reads the targets of tool calls with memory it reuses from call to call.
type targetReader struct {
	params toolParams
	c      collector
	// tool and handler are the last tool read and its handler: a log calls the same tool often.
	tool    string
	handler toolHandler
}

// targets is ToolTargets of params that are valid JSON, such as the params of a decoded
// events.ToolCall; the result is valid until the next call.
func (r *targetReader) targets(tool string, params []byte, noShell bool) []Target {
	p, ok := splitObject(r.params[:0], params)
	defer func() { clear(p); r.params = p[:0] }() // keep the room, not the bytes
	if !ok {
		return nil
	}
	if r.handler == nil || tool != r.tool {
		h, ok := toolTable[tool]
		if !ok {
			h = genericTargets
		}
		r.tool, r.handler = tool, h
	}
	clear(r.c.out)
	r.c = collector{out: r.c.out[:0], noShell: noShell}
	r.handler(p, &r.c)
	return r.c.out
}

// collector gathers targets without duplicates.
type collector struct {
	out []Target
	// shell is set by a shell tool, with the command line it read (patches and here-documents
	// cut) and its workdir: what ShellGuesses reads again.
	shell            bool
	command, workdir string
	// noShell leaves out the Shell targets, for a call whose shell paths were checked when it
	// was recorded (events.ToolCall.Guesses): only what a shell tool names outright is read.
	noShell bool
}

func (c *collector) add(path string, shell bool) {
	path = strings.TrimSpace(path)
	if path == "" {
		return
	}
	t := Target{Path: path, Shell: shell}
	if !slices.Contains(c.out, t) {
		c.out = append(c.out, t)
	}
}

func (c *collector) file(path string) { c.add(path, false) }

func (c *collector) dir(path string) {
	if path = strings.TrimSpace(path); path != "" {
		c.add(asDir(path), false)
	}
}

func asDir(p string) string {
	if strings.HasSuffix(p, "/") || strings.HasSuffix(p, `\`) {
		return p
	}
	return p + "/"
}

// fileOrDir is for tools whose path may be either (Grep): a last segment with an extension is
// taken for a file. The log cannot ask the file system.
func (c *collector) fileOrDir(path string) {
	path = strings.TrimSpace(path)
	last := path[strings.LastIndexAny(path, `/\`)+1:]
	if strings.LastIndexByte(last, '.') > 0 {
		c.file(path)
	} else {
		c.dir(path)
	}
}

type toolHandler func(p toolParams, c *collector)

var toolTable = map[string]toolHandler{
	// Cline
	"read_file":                  clineFile,
	"write_to_file":              clineFile,
	"replace_in_file":            clineFile,
	"new_rule":                   clineFile,
	"list_files":                 clineDir,
	"search_files":               clineDir,
	"list_code_definition_names": clineDir,
	"apply_patch":                applyPatchTool,
	"read_files":                 clineReadFiles,
	"execute_command":            shellTool,
	// Claude Code, and Copilot CLI's hooks, which name its tools as Claude Code's with their own
	// "path"
	"Read":         func(p toolParams, c *collector) { c.file(p.strOr("file_path", "path")) },
	"Write":        func(p toolParams, c *collector) { c.file(p.strOr("file_path", "path")) },
	"Edit":         func(p toolParams, c *collector) { c.file(p.strOr("file_path", "path")) },
	"MultiEdit":    func(p toolParams, c *collector) { c.file(p.str("file_path")) },
	"NotebookEdit": func(p toolParams, c *collector) { c.file(p.str("notebook_path")) },
	"Glob":         globTool,
	"Grep":         func(p toolParams, c *collector) { c.fileOrDir(p.str("path")) },
	"LS":           func(p toolParams, c *collector) { c.dir(p.str("path")) },
	"Bash":         shellTool,
	// Codex
	"shell":         shellTool,
	"shell_command": shellTool,
	"exec_command":  shellTool,
	// pi, whose paths may carry the "@" of the mention they came from, and opencode, whose
	// read, write and edit name their file with filePath
	"read":  piOrOpencodeFile,
	"write": piOrOpencodeFile,
	"edit":  piOrQwenEdit,
	"ls":    func(p toolParams, c *collector) { c.dir(strings.TrimPrefix(p.str("path"), "@")) },
	"find":  func(p toolParams, c *collector) { c.dir(strings.TrimPrefix(p.str("path"), "@")) },
	"grep":  func(p toolParams, c *collector) { c.fileOrDir(strings.TrimPrefix(p.str("path"), "@")) },
	"bash":  shellTool,
	// Cline SDK
	"run_commands": shellTool,
	// Gemini CLI and Qwen Code share these names: Gemini names the folder dir_path, Qwen path
	// (their read_file is Cline's name, with file_path: see clineFile; write_file and Gemini's
	// replace give file_path, which the fallback reads)
	"run_shell_command": shellTool,
	"list_directory":    func(p toolParams, c *collector) { c.dir(p.str("dir_path")); c.dir(p.str("path")) },
	"glob": func(p toolParams, c *collector) {
		globUnder(p.str("dir_path")+p.str("path"), p.str("pattern"), c)
	},
	"grep_search": func(p toolParams, c *collector) {
		for _, k := range []string{"dir_path", "path"} {
			if d := p.str(k); d != "" {
				c.fileOrDir(d)
			}
		}
	},
	// Cursor, whose other tools (Read, Write, Grep, Delete) take Claude Code's names
	"Shell": shellTool,
	// Qwen Code's read_file and edit share Cline's and pi's names (each reads both spellings).
}

// piOrQwenEdit: pi's edit names its file with path (perhaps with a mention's "@"), Qwen Code's
// with file_path, opencode's with filePath.
func piOrQwenEdit(p toolParams, c *collector) {
	c.file(strings.TrimPrefix(p.str("path"), "@"))
	c.file(p.str("file_path"))
	c.file(p.str("filePath"))
}

// piOrOpencodeFile: pi's read and write name their file with path (perhaps with a mention's
// "@"), opencode's with filePath.
func piOrOpencodeFile(p toolParams, c *collector) {
	c.file(strings.TrimPrefix(p.str("path"), "@"))
	c.file(p.str("filePath"))
}

// clineFile: Cline's native tools give "path" (relative to the cwd) and, in newer builds,
// "absolutePath"; VS Code's read_file of the same name gives "filePath", Gemini CLI's and Qwen
// Code's "file_path".
func clineFile(p toolParams, c *collector) {
	c.file(p.str("path"))
	c.file(p.str("absolutePath"))
	c.file(p.str("filePath"))
	c.file(p.str("file_path"))
}

func clineDir(p toolParams, c *collector) {
	c.dir(p.str("path"))
	c.dir(p.str("absolutePath"))
}

// clineReadFiles is the SDK's batch read: files[{path}], with path-array aliases.
func clineReadFiles(p toolParams, c *collector) {
	if p.isArray("files") {
		eachElement(p.raw("files"), func(e []byte) {
			if f, ok := parseParams(e); ok {
				c.file(f.str("path"))
			}
		})
	}
	genericTargets(p, c)
}

// globTool: the pattern's leading literal directories are what Glob lists, under path.
func globTool(p toolParams, c *collector) { globUnder(p.str("path"), p.str("pattern"), c) }

// globUnder adds what a glob pattern searches under base.
func globUnder(base, pattern string, c *collector) {
	prefix, literal := globPrefix(pattern)
	switch {
	case literal && prefix != "":
		c.file(joinUnder(base, prefix))
	case prefix != "":
		c.dir(joinUnder(base, prefix))
	case base != "":
		c.dir(base)
	}
}

// globPrefix returns the segments of pattern before the first one with a glob metacharacter
// ("src/app/" of "src/app/**/*.ts"), and whether the whole pattern is literal.
func globPrefix(pattern string) (string, bool) {
	pattern = strings.TrimSpace(pattern)
	if pattern == "" {
		return "", false
	}
	if !strings.ContainsAny(pattern, "*?[{") {
		return pattern, true
	}
	i := strings.IndexAny(pattern, "*?[{")
	j := strings.LastIndexByte(pattern[:i], '/')
	return pattern[:j+1], false
}

// joinUnder puts a relative p under base; an absolute p or an empty base leaves p alone.
func joinUnder(base, p string) string {
	if base == "" || base == "." || isAbsSpelling(p) {
		return p
	}
	return strings.TrimRight(base, `/\`) + "/" + p
}

func isAbsSpelling(p string) bool {
	return strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) || strings.HasPrefix(p, "~") ||
		isDrive(p) || hasScheme(p)
}

// applyPatchTool reads the patch text of Cline's and Codex's apply_patch, whichever parameter
// carries it.
func applyPatchTool(p toolParams, c *collector) {
	for _, key := range []string{"input", "patch"} {
		patchTargets(p.str(key), c)
	}
	if cmd := p.strs("command"); len(cmd) > 0 {
		patchTargets(strings.Join(cmd, "\n"), c)
	}
}

// patchTargets adds the files named by the headers of an apply_patch body.
func patchTargets(patch string, c *collector) {
	if !strings.Contains(patch, "*** ") {
		return
	}
	for line := range strings.Lines(patch) {
		line = strings.TrimSpace(line)
		for _, h := range patchHeaders {
			if rest, ok := strings.CutPrefix(line, h); ok {
				c.file(rest)
			}
		}
	}
}

var patchHeaders = []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "}

// shellTool harvests a shell call: an apply_patch it runs names its files outright; any other
// path-like string in the command line is Shell evidence. Codex's workdir (Cursor's
// working_directory), when given, is what the command's relative paths are relative to.
func shellTool(p toolParams, c *collector) {
	var parts []string
	for _, key := range []string{"command", "cmd", "commands"} {
		parts = append(parts, p.strs(key)...)
	}
	workdir := p.str("workdir")
	if workdir == "" {
		workdir = p.str("working_directory")
	}
	if workdir == "" {
		workdir = p.str("dir_path") // Gemini CLI's run_shell_command
	}
	cmd := strings.Join(parts, "\n")
	if strings.Contains(cmd, "*** ") {
		var patch collector
		patchTargets(cmd, &patch)
		for _, t := range patch.out {
			c.file(joinUnder(workdir, t.Path))
		}
		cmd = cutPatch(cmd)
	}
	cmd = cutHeredocs(cmd)
	c.shell, c.command, c.workdir = true, cmd, workdir
	if c.noShell {
		return
	}
	for _, s := range extract(cmd, shellMode) {
		c.add(joinUnder(workdir, s), true)
	}
}

// cutPatch removes "*** Begin Patch" … "*** End Patch": its headers are read already and its body
// is file content, not paths the command names.
func cutPatch(cmd string) string {
	for {
		i := strings.Index(cmd, "*** Begin Patch")
		if i < 0 {
			return cmd
		}
		j := strings.Index(cmd[i:], "*** End Patch")
		if j < 0 {
			return cmd[:i]
		}
		cmd = cmd[:i] + " " + cmd[i+j+len("*** End Patch"):]
	}
}

// cutHeredocs removes the bodies of here-documents (cat > f <<'EOF' … EOF): file content again.
func cutHeredocs(cmd string) string {
	if !strings.Contains(cmd, "<<") {
		return cmd
	}
	var b strings.Builder
	var delim string
	for line := range strings.Lines(cmd) {
		if delim != "" {
			if strings.TrimSpace(line) == delim {
				delim = ""
			}
			continue
		}
		b.WriteString(line)
		delim = heredocDelim(line)
	}
	return b.String()
}

// heredocDelim returns the delimiter word of the last here-document a line opens, or "".
func heredocDelim(line string) string {
	i := strings.LastIndex(line, "<<")
	if i < 0 || i > 0 && line[i-1] == '<' {
		return "" // none, or a here-string (<<<)
	}
	rest := strings.TrimLeft(line[i+2:], "-~ \t")
	rest = strings.TrimLeft(rest, `'"`)
	end := strings.IndexFunc(rest, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_')
	})
	if end < 0 {
		end = len(rest)
	}
	return rest[:end]
}

// genericTargets is the fallback for tools the table does not know.
func genericTargets(p toolParams, c *collector) {
	keys := make([]string, 0, len(p))
	for _, m := range p {
		keys = append(keys, m.name())
	}
	slices.Sort(keys) // parameter order is the writer's; the result should not depend on it
	keys = slices.Compact(keys)
	for _, k := range keys {
		switch {
		case isPathKey(k):
			c.file(p.str(k))
		case k == "paths" || strings.HasSuffix(k, "_paths") || camelSuffix(k, "Paths"):
			if p.isArray(k) {
				for _, s := range p.strs(k) {
					c.file(s)
				}
			}
		}
	}
}

func isPathKey(k string) bool {
	return k == "path" || k == "file" || strings.HasSuffix(k, "_path") || camelSuffix(k, "Path")
}

// camelSuffix matches filePath, absolutePath: a lower-case word followed by suffix.
func camelSuffix(k, suffix string) bool {
	rest, ok := strings.CutSuffix(k, suffix)
	return ok && rest != "" && unicode.IsLower(rune(rest[len(rest)-1]))
}

// ShellGuesses returns the paths a shell tool call's command line may name, for a session to
// check against the workspace when it records the call, and whether the call is a shell command
// at all. It reads what ToolTargets reads as Shell targets, with two corrections: a name with
// spaces in double quotes is one path, and the arguments of git commands that take refs
// (before "--": checkout, except a name with a file extension, switch, branch, merge, rebase,
// push, pull, fetch, tag) are branch names, not paths.
func ShellGuesses(tool string, params json.RawMessage) ([]string, bool) {
	p, ok := parseParams(params)
	if !ok {
		return nil, false
	}
	h, ok := toolTable[tool]
	if !ok {
		return nil, false
	}
	var c collector
	h(p, &c)
	if !c.shell {
		return nil, false
	}
	refs := gitRefs(c.command)
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		s = joinUnder(c.workdir, s)
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	cmd := c.command
	for {
		i := strings.IndexByte(cmd, '"')
		j := -1
		if i >= 0 {
			j = strings.IndexByte(cmd[i+1:], '"')
		}
		if j < 0 {
			break
		}
		inner := cmd[i+1 : i+1+j]
		if strings.Contains(inner, " ") {
			if s, ok := spacedName(inner, false); ok {
				add(s)
				cmd = cmd[:i] + " " + cmd[i+j+2:]
				continue
			}
		}
		cmd = cmd[:i] + " " + inner + " " + cmd[i+j+2:]
	}
	for _, s := range extract(cmd, shellMode) {
		if !refs[s] && !isAbbreviation(s) {
			add(s)
		}
	}
	return out, true
}

// gitRefCommands are the git subcommands whose plain arguments are refs, not paths.
var gitRefCommands = map[string]bool{"checkout": true, "switch": true, "branch": true, "merge": true,
	"rebase": true, "push": true, "pull": true, "fetch": true, "tag": true}

// gitRefs collects the arguments that git ref commands in a command line take as refs.
func gitRefs(cmd string) map[string]bool {
	refs := map[string]bool{}
	if !strings.Contains(cmd, "git") {
		return refs
	}
	split := func(r rune) bool { return r == ';' || r == '&' || r == '|' || r == '\n' || r == '(' || r == ')' }
	for simple := range strings.FieldsFuncSeq(cmd, split) {
		words := strings.Fields(simple)
		i := slices.Index(words, "git")
		if i < 0 {
			continue
		}
		j := i + 1
		for j < len(words) && strings.HasPrefix(words[j], "-") { // git -C dir, --no-pager
			if words[j] == "-C" || words[j] == "-c" {
				j++
			}
			j++
		}
		if j >= len(words) || !gitRefCommands[words[j]] {
			continue
		}
		newBranch := false // the word after -b, -B or --orphan names a branch, whatever it looks like
		for _, w := range words[j+1:] {
			if w == "--" {
				break
			}
			w = strings.Trim(w, `'"`)
			if strings.HasPrefix(w, "-") {
				newBranch = w == "-b" || w == "-B" || w == "-c" || w == "-C" || w == "--orphan"
				continue
			}
			if !newBranch && words[j] == "checkout" && isFileName(w[strings.LastIndexByte(w, '/')+1:], false) {
				continue // "git checkout src/a.ts" restores a file
			}
			newBranch = false
			refs[w] = true
		}
	}
	return refs
}
