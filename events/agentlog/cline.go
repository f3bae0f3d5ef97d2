package agentlog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tasklog/tasklog/events"
)

// The files of a classic Cline task folder. Exported copies often carry a prefix
// ("<prefix>ui_messages.json"); the companions then share it.
const (
	clineUI    = "ui_messages.json"
	clineOldUI = "claude_messages.json" // before v2.0
	clineAPI   = "api_conversation_history.json"
	clineMeta  = "task_metadata.json"
)

// clineSet names the files of one Cline task; empty when absent.
type clineSet struct{ ui, api, meta string }

func isClineFile(name string) bool {
	for _, suf := range []string{clineUI, clineOldUI, clineAPI, clineMeta} {
		if strings.HasSuffix(name, suf) {
			return true
		}
	}
	return false
}

// clineFiles finds the task files for a task folder or for one of its files.
func clineFiles(path string) (clineSet, error) {
	st, err := os.Stat(path)
	if err != nil {
		return clineSet{}, err
	}
	prefix := ""
	if st.IsDir() {
		prefix = path + string(filepath.Separator)
	} else {
		for _, suf := range []string{clineUI, clineOldUI, clineAPI, clineMeta} {
			if strings.HasSuffix(path, suf) {
				prefix = strings.TrimSuffix(path, suf)
				break
			}
		}
		if prefix == "" && !strings.HasSuffix(path, clineUI) {
			return clineSet{}, fmt.Errorf("%s: %w: not a Cline task file (want a folder or *%s)", path, ErrFormat, clineUI)
		}
	}
	var set clineSet
	for _, c := range []struct {
		dst  *string
		name string
	}{{&set.ui, clineUI}, {&set.ui, clineOldUI}, {&set.api, clineAPI}, {&set.meta, clineMeta}} {
		if *c.dst == "" && exists(prefix+c.name) {
			*c.dst = prefix + c.name
		}
	}
	if set.ui == "" && set.api == "" {
		return set, fmt.Errorf("%s: %w: no %s or %s in the task", path, ErrFormat, clineUI, clineAPI)
	}
	return set, nil
}

// importClinePath imports the Cline task at path (a folder or one of its files).
func importClinePath(path string, opts Options, emit func(Item) error) (Report, error) {
	set, err := clineFiles(path)
	if err != nil {
		return Report{Agent: Cline}, err
	}
	open := func(p string) func() (io.ReadCloser, error) {
		if p == "" {
			return nil
		}
		return func() (io.ReadCloser, error) { return os.Open(p) }
	}
	src := clineSources{ui: set.ui, api: set.api, meta: set.meta,
		openUI: open(set.ui), openAPI: open(set.api), openMeta: open(set.meta)}
	if set.ui == "" {
		return importClineAPI(src, opts, emit)
	}
	return importCline(src, opts, emit)
}

// clineSources opens the files of one task; the api history and metadata are optional.
type clineSources struct {
	ui, api, meta             string
	openUI, openAPI, openMeta func() (io.ReadCloser, error)
}

// importCline reads ui_messages.json, the record stream, with what the companions add: the
// call ids and real parameters from the api history, the OS and version from the metadata.
func importCline(src clineSources, opts Options, emit func(Item) error) (Report, error) {
	c := newClineImporter(src, src.ui, opts, emit)
	s := c.s
	if src.openAPI != nil {
		s.t.files = append(s.t.files, src.api)
		if err := c.readAPI(src.openAPI, opts); err != nil {
			s.t.warn("%s: %v; tool call ids unknown", src.api, err)
			c.api = nil
		}
	}
	rec, cwd, err := c.firstCwd(src.openUI)
	if err != nil {
		return s.t.report(), fmt.Errorf("%s: %w", src.ui, err)
	}
	if cwd != "" {
		s.rec = rec
		s.setCwd(cwd)
	}
	if err := c.read(src.openUI); err != nil {
		return s.t.report(), fmt.Errorf("%s: %w", src.ui, err)
	}
	if s.t.records == 0 {
		return s.t.report(), fmt.Errorf("%s: %w: no messages", src.ui, ErrFormat)
	}
	if c.notExecuted > 0 {
		s.t.skipped["api:tool_use_not_executed"] += c.notExecuted
	}
	return s.close()
}

// newClineImporter starts the import of one task read from path (its record stream), with the
// OS and version from the metadata when the task has it.
func newClineImporter(src clineSources, path string, opts Options, emit func(Item) error) *clineImporter {
	s := newSink(Cline, path, opts, emit)
	s.start.Runtime.Name = string(Cline)
	c := &clineImporter{s: s, mentioned: map[string]bool{}}
	if src.openMeta != nil {
		s.t.files = append(s.t.files, src.meta)
		if err := c.readMeta(src.openMeta); err != nil {
			s.t.warn("%s: %v; OS and version unknown", src.meta, err)
		}
	}
	return c
}

// clineImporter holds what the ui stream needs across rows.
type clineImporter struct {
	s           *sink
	api         map[int]clineAPICall // assistant message index → its executed tool call
	notExecuted int
	osName      string
	lastTool    string // text of the last tool row, to drop its ask/say twin
	lastTurn    int
	mentioned   map[string]bool // mentions since the last request, to skip their expansion
}

// clineAPICall is the first tool_use of an assistant message, the one Cline executes.
type clineAPICall struct {
	id, name string
	input    any
}

func (c *clineImporter) readMeta(open func() (io.ReadCloser, error)) error {
	f, err := open()
	if err != nil {
		return err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<20))
	if err != nil {
		return err
	}
	v, err := decodeAny(b)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrFormat, err)
	}
	envs := arr(get(v, "environment_history"))
	if len(envs) == 0 {
		return nil
	}
	switch os := gets(envs[0], "os_name"); os {
	case "win32", "windows", "Windows_NT":
		c.s.start.OS = "windows"
	case "darwin", "macos", "macOS":
		c.s.start.OS = "darwin"
	default:
		c.s.start.OS = os
	}
	c.s.start.Runtime.Version = gets(envs[0], "cline_version")
	return nil
}

func (c *clineImporter) readAPI(open func() (io.ReadCloser, error), opts Options) error {
	f, err := open()
	if err != nil {
		return err
	}
	defer f.Close()
	ar, err := newArrayReader(f)
	if err != nil {
		return err
	}
	c.api = map[int]clineAPICall{}
	for i := 0; ; i++ {
		v, err := ar.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if gets(v, "role") != "assistant" {
			continue
		}
		first := true
		for _, b := range arr(get(v, "content")) {
			if gets(b, "type") != "tool_use" {
				continue
			}
			if !first {
				c.notExecuted++ // Cline runs one tool per message
				continue
			}
			first = false
			input := get(b, "input")
			if !opts.KeepContent {
				input = shrink(input, opts.maxInline())
			}
			c.api[i] = clineAPICall{id: gets(b, "id"), name: gets(b, "name"), input: input}
		}
	}
}

// firstCwd finds the task's initial working directory: the first request's environment
// details, or a resumption notice. It stops reading at the first one.
func (c *clineImporter) firstCwd(open func() (io.ReadCloser, error)) (int, string, error) {
	f, err := open()
	if err != nil {
		return 0, "", err
	}
	defer f.Close()
	ar, err := newArrayReader(f)
	if err != nil {
		return 0, "", err
	}
	for i := 0; ; i++ {
		v, err := ar.next()
		if errors.Is(err, io.EOF) {
			return 0, "", nil
		}
		if err != nil {
			return 0, "", err
		}
		if gets(v, "say") != "api_req_started" {
			continue
		}
		req, _ := decodeAny([]byte(gets(v, "text")))
		if cwd := requestCwd(gets(req, "request")); cwd != "" {
			return i, cwd, nil
		}
	}
}

// read streams the ui messages with one row of lookahead, to drop partial rows a later row
// with the same ts and kind replaced.
func (c *clineImporter) read(open func() (io.ReadCloser, error)) error {
	f, err := open()
	if err != nil {
		return err
	}
	defer f.Close()
	ar, err := newArrayReader(f)
	if err != nil {
		return err
	}
	next := func() (any, error) {
		v, err := ar.next()
		if errors.Is(err, io.EOF) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return v, nil
	}
	cur, err := next()
	for i := 0; cur != nil && err == nil; i++ {
		var nxt any
		if nxt, err = next(); err != nil {
			break
		}
		if err := c.row(i, cur, nxt); err != nil {
			return err
		}
		cur = nxt
	}
	return err
}

func clineKind(m any) string {
	t := gets(m, "type")
	return t + ":" + gets(m, t)
}

func (c *clineImporter) row(i int, m, next any) error {
	s := c.s
	kind := clineKind(m)
	s.begin(i, kind, parseTime(get(m, "ts")))
	defer s.finish()
	if obj(m) == nil {
		s.kind = "malformed"
		s.warn("not a JSON object, skipped")
		return nil
	}
	if next != nil && clineKind(next) == kind && fmt.Sprint(get(next, "ts")) == fmt.Sprint(get(m, "ts")) {
		if getb(m, "partial") {
			s.kind = "superseded:" + kind // a streaming row the next one finished
			return nil
		}
		if gets(next, "text") == gets(m, "text") {
			s.kind = "duplicate:" + kind
			return nil
		}
	}
	if mi := get(m, "modelInfo"); mi != nil {
		if err := s.settingsChanged(gets(mi, "mode"), gets(mi, "providerId"), gets(mi, "modelId")); err != nil {
			return err
		}
	}
	text := gets(m, "text")
	switch kind {
	case "say:text", "say:task":
		if i == 0 {
			return c.human(m, text)
		}
	case "say:user_feedback":
		return c.human(m, text)
	case "say:tool", "ask:tool", "say:command", "ask:command", "say:use_mcp_server", "ask:use_mcp_server":
		if text == c.lastTool && s.t.turns == c.lastTurn {
			s.kind = "duplicate:" + kind // the say twin of an approved ask, or the reverse
			return nil
		}
		c.lastTool, c.lastTurn = text, s.t.turns
		return c.tool(m, kind, text)
	case "say:api_req_started":
		return c.request(text)
	}
	return nil
}

// human emits a message the user typed: its text, its @/path mentions and attached files.
func (c *clineImporter) human(m any, text string) error {
	s := c.s
	if err := s.userMessage(strings.TrimSpace(text)); err != nil {
		return err
	}
	for _, raw := range clineMentions(text) {
		ev := events.Mention{Path: raw}
		if p, ok := s.resolve(strings.TrimPrefix(raw, "/")); ok { // "@/a" is cwd-relative
			ev.Resolved = p
			c.mentioned[p] = true
			s.t.path(p)
		}
		if err := s.event(&ev); err != nil {
			return err
		}
	}
	for _, f := range arr(get(m, "files")) {
		if p := str(f); p != "" {
			if r, ok := s.resolve(p); ok {
				c.mentioned[r] = true
			}
			if err := s.mention(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// clineWriteOps are the ClineSayTool values that change the file in path.
var clineWriteOps = map[string]string{
	"editedExistingFile": events.OpEdit,
	"newFileCreated":     events.OpCreate,
	"fileDeleted":        events.OpDelete,
}

// clineToolNames maps ClineSayTool values to the tool the model called.
var clineToolNames = map[string]string{
	"readFile":                "read_file",
	"listFilesTopLevel":       "list_files",
	"listFilesRecursive":      "list_files",
	"listCodeDefinitionNames": "list_code_definition_names",
	"searchFiles":             "search_files",
	"newFileCreated":          "write_to_file",
	"fileDeleted":             "delete_file",
	"webFetch":                "web_fetch",
	"webSearch":               "web_search",
	"summarizeTask":           "summarize_task",
	"useSkill":                "use_skill",
}

func (c *clineImporter) tool(m any, kind, text string) error {
	s := c.s
	var name string
	var params any
	var writes []events.FileWrite
	switch {
	case strings.HasSuffix(kind, ":command"):
		name, params = "execute_command", map[string]any{"command": text}
	default:
		v, err := decodeAny([]byte(text))
		if err != nil || obj(v) == nil {
			s.kind += ":unreadable"
			s.warn("tool text is not a JSON object")
			return nil
		}
		params = v
		if strings.HasSuffix(kind, ":use_mcp_server") {
			name = gets(v, "type")
			if name == "" {
				name = "use_mcp_tool"
			}
			break
		}
		ui := gets(v, "tool")
		name = clineToolNames[ui]
		if ui == "editedExistingFile" {
			name = "write_to_file"
			if strings.Contains(gets(v, "content")+gets(v, "diff"), "------- SEARCH") {
				name = "replace_in_file"
			}
		}
		if name == "" {
			name = ui
		}
		if op, ok := clineWriteOps[ui]; ok && gets(v, "path") != "" {
			writes = append(writes, s.write(gets(v, "path"), op, ""))
		}
	}
	id := ""
	if a, ok := c.apiCall(m, name); ok {
		id, params = a.id, a.input
		if name != a.name {
			name = a.name
		}
		for _, k := range []string{"absolutePath", "path"} {
			if p := gets(a.input, k); p != "" && len(writes) == 1 {
				writes[0] = s.write(p, writes[0].Op, "")
				break
			}
		}
	}
	if name == "" {
		name = strings.TrimPrefix(strings.TrimPrefix(kind, "say:"), "ask:")
	}
	s.toolCall(name, id, params, "", writes).assumeOK = true
	return nil
}

// apiCall is the api history's record of the call a ui row shows: the first tool_use of the
// assistant message after conversationHistoryIndex, when its name agrees.
func (c *clineImporter) apiCall(m any, name string) (clineAPICall, bool) {
	n, err := strconv.Atoi(fmt.Sprint(get(m, "conversationHistoryIndex")))
	if err != nil || c.api == nil {
		return clineAPICall{}, false
	}
	a, ok := c.api[n+1]
	if !ok {
		return a, false
	}
	writes := map[string]bool{"write_to_file": true, "replace_in_file": true, "apply_patch": true}
	if a.name == name || (writes[a.name] && writes[name]) {
		return a, true
	}
	return a, false
}
