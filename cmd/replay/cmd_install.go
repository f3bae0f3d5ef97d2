package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// installOptions says what install or uninstall does: for which agent, where, and with which
// replay binary and database.
type installOptions struct {
	agent      string
	project    string // the project folder as given ("." by default)
	user       bool
	exe        string         // the replay binary the hooks run, absolute
	db         string         // the database baked into the command, absolute, or a NATS store's URL; "" for none
	home       string         // the user's home folder
	codexHome  string         // $CODEX_HOME, or ""
	qwenHome   string         // $QWEN_HOME, or ""
	clineMCP   string         // Cline CLI's MCP settings file from its environment, or "" for ~/.cline's
	piAgentDir string         // $PI_CODING_AGENT_DIR, or ""
	records    installRecords // where install remembers what it changed, for uninstall
	noMCP      bool           // --no-mcp: the hooks only
	mcpOnly    bool           // --mcp-only: the MCP server only
	http       bool           // --http: the agent posts its hooks to the running 'replay serve --http'
}

func cmdInstall(args []string, stdout, stderr io.Writer) int {
	return runInstall(true, args, stdout, stderr)
}

func cmdUninstall(args []string, stdout, stderr io.Writer) int {
	return runInstall(false, args, stdout, stderr)
}

func runInstall(install bool, args []string, stdout, stderr io.Writer) int {
	opts, code := parseInstallArgs(install, args, stderr)
	if code >= 0 {
		return code
	}
	lines, err := installHooks(opts, install)
	if err != nil {
		return fail(stderr, err)
	}
	if len(lines) == 0 {
		fmt.Fprintln(stdout, "nothing to change")
	}
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	if install && len(lines) > 0 {
		for _, l := range append(recordingNotes(opts), installNotes(opts)...) {
			fmt.Fprintln(stdout, l)
		}
	}
	return exitOK
}

// recordingNotes say where the hooks install wrote will record sessions (the store baked into
// them, else the one they find in this environment, as they will) and what to run after the
// next session to see it.
func recordingNotes(opts installOptions) []string {
	if opts.mcpOnly {
		return nil
	}
	where, flag, from := opts.db, "", ""
	if where != "" {
		flag = " " + storeFlagFor(where) + " " + shellQuote(where)
	} else {
		loc, err := selectStore(defaultHookDB(), false, "", false, true)
		if err != nil {
			return nil // the hook logs this at its first run
		}
		where = loc.String()
		switch {
		case os.Getenv(storeEnv) != "":
			from = " (from $" + storeEnv + ", which the agent must see too)"
		case os.Getenv("TASKLOG_DB") != "":
			from = " (from $TASKLOG_DB, which the agent must see too)"
		}
	}
	return []string{
		"sessions will be recorded in " + where + from,
		"after the agent's next session, in the project folder: 'replay tasks" + flag + "' lists it, 'replay audit" + flag +
			"' says which rules the agent got and why not, 'replay report" + flag + " -o report.html' writes its audit page",
	}
}

// installNotes are what install leaves to the user, printed after the files it changed.
func installNotes(opts installOptions) []string {
	var notes []string
	if opts.agent == "codex" && !opts.user && !opts.mcpOnly {
		dir, _ := filepath.Abs(opts.project)
		config := "~/.codex/config.toml"
		if opts.codexHome != "" {
			config = filepath.Join(opts.codexHome, "config.toml")
		}
		notes = append(notes, fmt.Sprintf("note: Codex runs a project's hooks only once you trust the project: "+
			"trust_level = \"trusted\" under [projects.%s] in %s (replay does not write that)", tomlString(dir), config))
	}
	if opts.http && !opts.mcpOnly {
		notes = append(notes, "note: the agent posts its hooks to 'replay serve --http': keep it running. While it is not, "+
			"the agent goes on and nothing is recorded; 'replay install "+opts.agent+"' without --http goes back to the command hook")
	}
	if opts.agent == "pi" && !opts.noMCP {
		notes = append(notes, "note: pi has no MCP client: the extension records, decides and delivers by itself")
	}
	if opts.agent == "cline" && !opts.user && !opts.noMCP {
		notes = append(notes, "note: Cline reads MCP servers per user only: 'replay install cline --user' adds the tasklog server")
	}
	return notes
}

// parseInstallArgs reads the command line and the environment; it returns the status to exit
// with when there is nothing more to do (-1 to go on).
func parseInstallArgs(install bool, args []string, stderr io.Writer) (installOptions, int) {
	name, what := "install", "writes the agent's hook configuration so that every hook event runs 'replay hook AGENT',\n"+
		"and adds the tasklog MCP server ('replay mcp') to the agent's MCP settings"
	if !install {
		name, what = "uninstall", "removes the hook entries and the MCP server 'replay install' wrote, and nothing else"
	}
	f := &flags{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), stderr: stderr, args: "AGENT"}
	f.SetOutput(stderr)
	var opts installOptions
	f.StringVar(&opts.project, "project", ".", "the project folder whose configuration is changed")
	f.BoolVar(&opts.user, "user", false, "change the user's configuration (in the home folder) instead")
	f.StringVar(&opts.db, "db", "", "the database the hooks record to and the MCP server reads, baked into the commands (default: the hook's own, $TASKLOG_DB)")
	var storeVal string
	f.StringVar(&storeVal, "store", "", "the NATS store (nats://HOST:PORT[/STREAM]) the hooks record to and the MCP server reads, baked into the commands instead of --db")
	f.BoolVar(&opts.noMCP, "no-mcp", false, "the hooks only, not the MCP server")
	f.BoolVar(&opts.mcpOnly, "mcp-only", false, "the MCP server only, not the hooks")
	if install {
		f.BoolVar(&opts.http, "http", false, "qwen: the hooks are HTTP posts to the running 'replay serve --http' of the database, with no process start; it must keep running")
	}
	f.Usage = func() {
		fmt.Fprintf(stderr, "usage: replay %s %s [--project DIR | --user] [--db PATH | --store URL] [--no-mcp | --mcp-only] [--http]\n\n%s.\n\nflags:\n",
			name, strings.Join(installAgents, "|"), what)
		f.PrintDefaults()
	}
	pos, code := f.parseOrExit(args, 1, 1)
	if code >= 0 {
		return opts, code
	}
	opts.agent = pos[0]
	projectSet := false
	f.Visit(func(fl *flag.Flag) { projectSet = projectSet || fl.Name == "project" })
	if projectSet && opts.user {
		fmt.Fprintf(stderr, "replay %s: --project and --user cannot be used together\n", name)
		return opts, exitUsage
	}
	if opts.noMCP && opts.mcpOnly {
		fmt.Fprintf(stderr, "replay %s: --no-mcp and --mcp-only cannot be used together\n", name)
		return opts, exitUsage
	}
	if !slices.Contains(installAgents, opts.agent) {
		fmt.Fprintf(stderr, "replay %s: unknown agent %q (want one of %s)\n", name, opts.agent, strings.Join(installAgents, ", "))
		return opts, exitUsage
	}
	if opts.http && !slices.Contains(httpHookAgents, opts.agent) {
		fmt.Fprintf(stderr, "replay %s: --http: %s's hooks are commands here; HTTP hooks are installed for %s\n",
			name, opts.agent, strings.Join(httpHookAgents, ", "))
		return opts, exitUsage
	}
	var err error
	if opts.exe, err = replayExecutable(); err != nil {
		return opts, fail(stderr, err)
	}
	if storeVal != "" {
		if opts.db != "" {
			fmt.Fprintf(stderr, "replay %s: --db and --store name two stores: give one\n", name)
			return opts, exitUsage
		}
		loc, err := parseStoreLoc(storeVal)
		if err != nil {
			fmt.Fprintf(stderr, "replay %s: --store: %v\n", name, err)
			return opts, exitUsage
		}
		opts.db = loc.String()
	}
	if opts.db != "" && !isNATSURL(opts.db) {
		if opts.db, err = filepath.Abs(opts.db); err != nil {
			return opts, fail(stderr, err)
		}
	}
	opts.home, _ = os.UserHomeDir()
	opts.codexHome = os.Getenv("CODEX_HOME")
	opts.qwenHome = os.Getenv("QWEN_HOME")
	opts.clineMCP = clineMCPSettings(os.Getenv)
	opts.piAgentDir = os.Getenv("PI_CODING_AGENT_DIR")
	opts.records = installRecords(filepath.Join(userDataDir(), "tasklog", "install"))
	return opts, -1
}

// clineMCPSettings is the file Cline's CLI reads its MCP servers from when its environment
// moves it: $CLINE_MCP_SETTINGS_PATH, else under $CLINE_DATA_DIR, else under $CLINE_DIR; "" for
// the default, ~/.cline/data/settings/cline_mcp_settings.json.
func clineMCPSettings(getenv func(string) string) string {
	const file = "cline_mcp_settings.json"
	var p string
	switch {
	case strings.TrimSpace(getenv("CLINE_MCP_SETTINGS_PATH")) != "":
		p = strings.TrimSpace(getenv("CLINE_MCP_SETTINGS_PATH"))
	case strings.TrimSpace(getenv("CLINE_DATA_DIR")) != "":
		p = filepath.Join(strings.TrimSpace(getenv("CLINE_DATA_DIR")), "settings", file)
	case strings.TrimSpace(getenv("CLINE_DIR")) != "":
		p = filepath.Join(strings.TrimSpace(getenv("CLINE_DIR")), "data", "settings", file)
	default:
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return p
}

// replayExecutable is this binary's path with symbolic links resolved, so that a hook keeps
// working from any folder the agent runs it in.
func replayExecutable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the replay binary: %w", err)
	}
	if r, err := filepath.EvalSymlinks(exe); err == nil {
		exe = r
	}
	return filepath.Abs(exe)
}

// installHooks plans every file the agent's hooks and MCP server live in, then writes them; an
// error in any plan changes nothing. It returns one line per file, event or server changed.
func installHooks(opts installOptions, install bool) ([]string, error) {
	s, err := opts.scope()
	if err != nil {
		return nil, err
	}
	var targets []target
	if !opts.mcpOnly {
		cmd := newHookCommand(opts.exe, opts.agent, opts.db)
		if install && opts.http {
			if cmd.url, cmd.token, err = httpHookEndpoint(hookSide(opts.db), opts.agent); err != nil {
				return nil, fmt.Errorf("--http: %w", err)
			}
		}
		ts, err := hookTargets(opts.agent, s, cmd)
		if err != nil {
			return nil, err
		}
		targets = append(targets, ts...)
	}
	if opts.mcpOnly && opts.agent == "cline" && !opts.user {
		return nil, errClineProjectMCP
	}
	if opts.mcpOnly && opts.agent == "pi" {
		return nil, errors.New("pi has no MCP client: install its extension without --mcp-only")
	}
	if !opts.noMCP {
		ts, err := mcpTargets(opts.agent, s, opts.exe, opts.db)
		if err != nil {
			return nil, err
		}
		targets = append(targets, ts...)
	}
	var changes []fileChange
	for _, t := range mergeTargets(targets) {
		c, err := t.plan(install)
		if err != nil {
			return nil, err
		}
		changes = append(changes, c...)
	}
	notes, err := applyRecorded(changes, install, opts.records)
	if err != nil {
		return nil, err
	}
	var lines []string
	for _, c := range changes {
		lines = append(lines, c.lines...)
	}
	return append(lines, notes...), nil
}

func (opts installOptions) scope() (scope, error) {
	if opts.user {
		if opts.home == "" {
			return scope{}, errors.New("--user: the home folder is unknown ($HOME is not set)")
		}
		s := scope{user: true, root: opts.home, clineMCP: opts.clineMCP}
		if opts.piAgentDir != "" {
			abs, err := filepath.Abs(opts.piAgentDir)
			if err != nil {
				return scope{}, err
			}
			s.piAgentDir = abs
		}
		if opts.codexHome != "" {
			abs, err := filepath.Abs(opts.codexHome)
			if err != nil {
				return scope{}, err
			}
			s.codexHome = abs
		}
		if opts.qwenHome != "" {
			abs, err := filepath.Abs(opts.qwenHome)
			if err != nil {
				return scope{}, err
			}
			s.qwenHome = abs
		}
		return s, nil
	}
	root, err := filepath.Abs(opts.project)
	if err != nil {
		return scope{}, err
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return scope{}, fmt.Errorf("--project %s: not a folder", opts.project)
	}
	return scope{root: root, shown: opts.project}, nil
}

// mergeTargets joins the JSON targets that change one file (Qwen Code keeps its hooks and its
// MCP servers in settings.json) into one target making every change, so that each file is
// planned, written and recorded once.
func mergeTargets(ts []target) []target {
	var out []target
	at := map[string]int{}
	for _, t := range ts {
		jt, ok := t.(jsonTarget)
		if !ok {
			out = append(out, t)
			continue
		}
		i, seen := at[jt.path]
		if !seen {
			at[jt.path] = len(out)
			out = append(out, jt)
			continue
		}
		prev := out[i].(jsonTarget)
		prev.edit = jsonEdits{prev.edit, jt.edit}
		out[i] = prev
	}
	return out
}

// jsonEdits are several changes to one document, made in order.
type jsonEdits []jsonEdit

func (es jsonEdits) install(root *object) ([]string, error) {
	var lines []string
	for _, e := range es {
		l, err := e.install(root)
		if err != nil {
			return nil, err
		}
		lines = append(lines, l...)
	}
	return lines, nil
}

func (es jsonEdits) uninstall(root *object) ([]string, error) {
	var lines []string
	for _, e := range es {
		l, err := e.uninstall(root)
		if err != nil {
			return nil, err
		}
		lines = append(lines, l...)
	}
	return lines, nil
}

func (es jsonEdits) bare(root *object) bool {
	for _, e := range es {
		if !e.bare(root) {
			return false
		}
	}
	return true
}

// httpHookAgents are the agents whose hooks install can make HTTP posts to 'replay serve --http'.
var httpHookAgents = []string{"qwen"}

// hookSide is the file beside which the hooks' database keeps its server's files: the
// database given to install (a NATS store's folder for a URL), else the hooks' default.
func hookSide(db string) string {
	if db == "" {
		return defaultHookDB()
	}
	if isNATSURL(db) {
		if loc, err := parseStoreLoc(db); err == nil {
			return loc.sideFile()
		}
	}
	return db
}
