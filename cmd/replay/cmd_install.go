package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/tasklog/tasklog/cmd/replay/internal/extension"
	"github.com/tasklog/tasklog/cmd/replay/internal/install"
)

func cmdInstall(args []string, stdout, stderr io.Writer) int {
	return runInstall(true, args, stdout, stderr)
}

func cmdUninstall(args []string, stdout, stderr io.Writer) int {
	return runInstall(false, args, stdout, stderr)
}

func runInstall(doInstall bool, args []string, stdout, stderr io.Writer) int {
	opts, code := parseInstallArgs(doInstall, args, stderr)
	if code >= 0 {
		return code
	}
	lines, err := install.Run(opts, doInstall)
	if err != nil {
		return fail(stderr, err)
	}
	if len(lines) == 0 {
		fmt.Fprintln(stdout, "nothing to change")
	}
	for _, l := range lines {
		fmt.Fprintln(stdout, l)
	}
	if doInstall && len(lines) > 0 {
		for _, l := range append(recordingNotes(opts), install.Notes(opts)...) {
			fmt.Fprintln(stdout, l)
		}
	}
	return exitOK
}

// recordingNotes say where the hooks install wrote will record sessions (the store baked into
// them, else the one they find in this environment, as they will) and what to run after the
// next session to see it.
func recordingNotes(opts install.Options) []string {
	if opts.MCPOnly {
		return nil
	}
	where, flag, from := opts.DB, "", ""
	if where != "" {
		flag = " " + storeFlagFor(where) + " " + install.ShellQuote(where)
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

// parseInstallArgs reads the command line and the environment; it returns the status to exit
// with when there is nothing more to do (-1 to go on).
func parseInstallArgs(doInstall bool, args []string, stderr io.Writer) (install.Options, int) {
	name, what := "install", "writes the agent's hook configuration so that every hook event runs 'replay hook AGENT'\n"+
		"(or 'replay-hook AGENT', the same hook's fast path, when replay-hook is installed beside replay),\n"+
		"and adds the tasklog MCP server ('replay mcp') to the agent's MCP settings"
	if !doInstall {
		name, what = "uninstall", "removes the hook entries and the MCP server 'replay install' wrote, and nothing else"
	}
	f := &flags{FlagSet: flag.NewFlagSet(name, flag.ContinueOnError), stderr: stderr, args: "AGENT"}
	f.SetOutput(stderr)
	var opts install.Options
	f.StringVar(&opts.Project, "project", ".", "the project folder whose configuration is changed")
	f.BoolVar(&opts.User, "user", false, "change the user's configuration (in the home folder) instead")
	f.StringVar(&opts.DB, "db", "", "the database the hooks record to and the MCP server reads, baked into the commands (default: the hook's own, $TASKLOG_DB)")
	var storeVal string
	f.StringVar(&storeVal, "store", "", "the NATS store (nats://HOST:PORT[/STREAM]) the hooks record to and the MCP server reads, baked into the commands instead of --db")
	f.BoolVar(&opts.NoMCP, "no-mcp", false, "the hooks only, not the MCP server")
	f.BoolVar(&opts.MCPOnly, "mcp-only", false, "the MCP server only, not the hooks")
	httpHooks, httpFlag := false, "" // uninstall finds HTTP hooks as the others: it takes no --http
	if doInstall {
		f.BoolVar(&httpHooks, "http", false, "the hooks are HTTP posts to the running 'replay serve --http' of the database, with no process start (agents: "+
			strings.Join(install.HTTPAgents(), ", ")+"); it must keep running")
		httpFlag = " [--http]"
	}
	f.Usage = func() {
		fmt.Fprintf(stderr, "usage: replay %s %s [--project DIR | --user] [--db PATH | --store URL] [--no-mcp | --mcp-only]%s\n\n%s.\n\nflags:\n",
			name, strings.Join(install.Agents(), "|"), httpFlag, what)
		f.PrintDefaults()
	}
	pos, code := f.parseOrExit(args, 1, 1)
	if code >= 0 {
		return opts, code
	}
	opts.Agent = pos[0]
	projectSet := false
	f.Visit(func(fl *flag.Flag) { projectSet = projectSet || fl.Name == "project" })
	if projectSet && opts.User {
		fmt.Fprintf(stderr, "replay %s: --project and --user cannot be used together\n", name)
		return opts, exitUsage
	}
	if opts.NoMCP && opts.MCPOnly {
		fmt.Fprintf(stderr, "replay %s: --no-mcp and --mcp-only cannot be used together\n", name)
		return opts, exitUsage
	}
	if !slices.Contains(install.Agents(), opts.Agent) {
		fmt.Fprintf(stderr, "replay %s: %v\n", name, install.UnknownAgent(opts.Agent))
		return opts, exitUsage
	}
	if httpHooks && !slices.Contains(install.HTTPAgents(), opts.Agent) {
		fmt.Fprintf(stderr, "replay %s: --http: %s's hooks are commands here; HTTP hooks are installed for %s\n",
			name, opts.Agent, strings.Join(install.HTTPAgents(), ", "))
		return opts, exitUsage
	}
	var err error
	if opts.Exe, err = replayExecutable(); err != nil {
		return opts, fail(stderr, err)
	}
	// The hook commands and the MCP server's command name this binary; HTTP hooks without the
	// MCP server name none.
	if name == "install" && !(httpHooks && opts.NoMCP) && builtByGoRun(opts.Exe) {
		fmt.Fprintf(stderr, "replay install: this replay is a build of 'go run' (%s), which Go deletes or trims away: the hooks would stop running. "+
			"Install the binaries first ('go install ./cmd/replay/...' in the checkout, which puts replay and replay-hook in $(go env GOPATH)/bin) and run that replay: replay install %s\n",
			opts.Exe, strings.Join(args, " "))
		return opts, exitUsage
	}
	if storeVal != "" {
		if opts.DB != "" {
			fmt.Fprintf(stderr, "replay %s: --db and --store name two stores: give one\n", name)
			return opts, exitUsage
		}
		loc, err := parseStoreLoc(storeVal)
		if err != nil {
			fmt.Fprintf(stderr, "replay %s: --store: %v\n", name, err)
			return opts, exitUsage
		}
		opts.DB = loc.String()
	}
	if opts.DB != "" && !isNATSURL(opts.DB) {
		if opts.DB, err = filepath.Abs(opts.DB); err != nil {
			return opts, fail(stderr, err)
		}
	}
	opts.Home, _ = os.UserHomeDir()
	opts.Getenv = os.Getenv
	opts.Extension = extension.Source(opts.Agent)
	opts.Records = install.Records(filepath.Join(userDataDir(), "tasklog", "install"))
	if httpHooks && !opts.MCPOnly {
		if opts.HTTPURL, opts.HTTPToken, err = httpHookEndpoint(hookSide(opts.DB), opts.Agent); err != nil {
			return opts, fail(stderr, fmt.Errorf("--http: %w", err))
		}
	}
	return opts, -1
}

// hookSide is the file beside which the hooks' database keeps its server's files: the
// database given to install (a NATS store's folder for a URL), else the hooks' default.
func hookSide(db string) string {
	if db == "" {
		return defaultHookDB()
	}
	if isNATSURL(db) {
		if loc, err := parseStoreLoc(db); err == nil {
			return loc.SideFile()
		}
	}
	return db
}

// builtByGoRun reports whether exe is a binary 'go run' built: in Go's build cache
// (GOCACHE/xx/HASH-d/NAME, where Go 1.24 and later keep it until the cache is trimmed) or in
// the temporary folder an older 'go run' removes when it exits (go-buildNNN/bNNN/exe/NAME).
func builtByGoRun(exe string) bool {
	dir := filepath.Dir(exe)
	if goRunCached.MatchString(filepath.Base(dir)) && goRunShard.MatchString(filepath.Base(filepath.Dir(dir))) {
		return true
	}
	return filepath.Base(dir) == "exe" && goRunWork.MatchString(filepath.Base(filepath.Dir(filepath.Dir(dir)))) &&
		goRunAction.MatchString(filepath.Base(filepath.Dir(dir)))
}

var (
	goRunCached = regexp.MustCompile(`^[0-9a-f]{64}-d$`)
	goRunShard  = regexp.MustCompile(`^[0-9a-f]{2}$`)
	goRunWork   = regexp.MustCompile(`^go-build[0-9]+$`)
	goRunAction = regexp.MustCompile(`^b[0-9]+$`)
)

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
