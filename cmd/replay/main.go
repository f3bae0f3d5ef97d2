// Command replay imports, exports, records, verifies, explains and audits tasklog task logs.
//
//	replay demo                         record the sample sessions and explain one
//	replay record SCRIPT --workspace D  drive a session from a script of events
//	replay import FILE...               read JSON Lines logs into the database
//	replay import --from AGENT PATH     turn a Cline, Claude Code, pi or Codex session into a log
//	replay export [TASK]                write a task as JSON Lines (--format atif: a trajectory)
//	replay tasks                        list tasks
//	replay log [TASK]                   one line per event
//	replay verify [TASK...|--all]       check hash chains and recompute every decision
//	replay diff [TASK] --workspace D    what-if: which decisions change under other rules
//	replay explain [TASK] --prompt N    why each rule was or was not in the prompt
//	replay audit [TASK]                 did the agent get each rule: decisions, loads, deliveries, findings
//	replay why RULE --prompt N          one rule at one moment, in plain sentences
//	replay report [TASK] -o page.html   a self-contained HTML audit page
//	replay rules [--workspace D]        every rule discovered, and whether it applies
//	replay lint [--workspace D]         rules that never apply, are broken, shadowed, …
//	replay install AGENT                run replay hook from an agent's hooks (uninstall removes it)
//	replay hook AGENT                   record a hook event, decide, deliver rules (the agents run it)
//	replay serve                        the resident server the hooks talk to over a Unix socket
//	replay mcp                          an MCP server on stdio: rule resources and audit tools
//	replay otel export [TASK...]        send tasks to an OpenTelemetry collector as traces
//	replay help VERB                    a verb's usage and flags
//	replay --version                    the module version it was built from
//
// Every verb takes --db PATH (default $TASKLOG_DB, else tasklog/tasklog.db in the user's data
// folder, the database the hooks record to) or --store
// nats://HOST:PORT[/STREAM] (default $TASKLOG_STORE) and, where it prints data, --json. Exit status: 0 success, 1 a check failed, 2 usage or I/O error.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"
)

// Exit statuses.
const (
	exitOK     = 0
	exitFailed = 1
	exitUsage  = 2
)

// command is a verb: run parses its arguments (for -h it prints the verb's usage and flags to
// stderr and returns 0, which 'replay help VERB' relies on) and returns the exit status;
// summary is its line in the general usage.
type command struct {
	run     func(args []string, stdout, stderr io.Writer) int
	summary string
}

var commands = map[string]command{
	"demo":      {cmdDemo, "record the sample sessions, verify them and explain one"},
	"record":    {cmdRecord, "drive a session from a script of events and store its log"},
	"import":    {cmdImport, "read JSON Lines logs, or --from AGENT sessions, into the database"},
	"export":    {cmdExport, "write a task's log as JSON Lines, or as an ATIF trajectory (--format atif)"},
	"tasks":     {cmdTasks, "list the tasks in the database"},
	"log":       {cmdLog, "print a task's events, one line each"},
	"verify":    {cmdVerify, "check hash chains and recompute every recorded decision"},
	"info":      {cmdInfo, "the database's file format (which tasklog wrote it) and how many tasks and events it holds"},
	"diff":      {cmdDiff, "what-if: the decisions that change under other rules or settings"},
	"explain":   {cmdExplain, "why each rule was or was not in the prompt at a prompt or turn"},
	"why":       {cmdWhy, "one rule at one prompt or turn in plain sentences: applied or not and why, loaded, delivered"},
	"audit":     {cmdAudit, "did the agent get each rule: decisions, its loads and deliveries side by side, and findings (exit 1)"},
	"report":    {cmdReport, "write a self-contained HTML audit page"},
	"rules":     {cmdRules, "list every rule discovered in a workspace and whether it applies"},
	"lint":      {cmdLint, "what is wrong with a workspace's rules, without a session (exit 1 on findings)"},
	"hook":      {cmdHook, "record one agent hook payload from stdin, deliver the rules it misses, reply"},
	"install":   {cmdInstall, "write an agent's hook configuration and add the tasklog MCP server"},
	"uninstall": {cmdUninstall, "remove the hook entries and the MCP server 'replay install' wrote"},
	"mcp":       {cmdMCP, "serve the rules and the task's decisions to an agent over MCP (stdio)"},
	"serve":     {cmdServe, "the resident server of a database: hooks and other runtimes over a Unix socket"},
	"otel":      {cmdOtel, "otel export: send recorded tasks to an OpenTelemetry collector as traces"},
	"migrate":   {cmdMigrate, "copy a NATS stream of an earlier layout into a new stream of the current one"},
	"compact":   {cmdCompact, "copy the database file into a new file, every page packed full, and verify the copy"},
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	switch args[0] {
	case "-h", "-help", "--help":
		usage(stdout)
		return exitOK
	case "help":
		return help(args[1:], stdout, stderr)
	case "-version", "--version", "version":
		fmt.Fprintln(stdout, "replay", version())
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "replay: unknown command %q%s\n\n", args[0], didYouMeanVerb(args[0]))
		usage(stderr)
		return exitUsage
	}
	return c.run(args[1:], stdout, verbWriter{stderr, args[0]})
}

// verbWriter is the standard error a verb runs with: the errors it prints through fail start
// with "replay VERB:". It is still seen as the terminal it writes to (Fd).
type verbWriter struct {
	io.Writer
	verb string
}

// Fd is the file descriptor of the file the writer writes to, or ^uintptr(0) when it is not a
// file (which no terminal check takes for a terminal).
func (v verbWriter) Fd() uintptr {
	if f, ok := v.Writer.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

// errorPrefix is what an error printed on w starts with: "replay VERB" on a verb's standard
// error, else "replay".
func errorPrefix(w io.Writer) string {
	if v, ok := w.(verbWriter); ok {
		return "replay " + v.verb
	}
	return "replay"
}

// help prints the general usage, or a verb's: its summary, then what the verb itself prints
// for -h (every verb's run prints its usage and flags to its stderr for -h and returns 0).
func help(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stdout)
		return exitOK
	}
	c, ok := commands[args[0]]
	if !ok || len(args) > 1 {
		meant := ""
		if len(args) == 1 {
			meant = didYouMeanVerb(args[0])
		}
		fmt.Fprintf(stderr, "replay help: unknown command %q%s\n\n", strings.Join(args, " "), meant)
		usage(stderr)
		return exitUsage
	}
	fmt.Fprintf(stdout, "replay %s: %s\n\n", args[0], c.summary)
	return c.run([]string{"-h"}, stdout, stdout)
}

// didYouMeanVerb is " (did you mean VERB?)" when typed is a likely spelling of one of replay's
// verbs, or " (did you mean --version?)" for a dashed word that is one of --help and --version;
// else "".
func didYouMeanVerb(typed string) string {
	if word := strings.TrimLeft(typed, "-"); word != typed {
		if s := closestFlag(word, []string{"help", "version"}); s != "" {
			return " (did you mean --" + s + "?)"
		}
		return ""
	}
	names := []string{"help"}
	for n := range commands {
		names = append(names, n)
	}
	if s := closestFlag(typed, names); s != "" {
		return " (did you mean " + s + "?)"
	}
	return ""
}

// version is the module version the binary was built from: a tag for 'go install …@v1.2.3',
// "(devel)" for a build from a checkout.
func version() string {
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" {
		return bi.Main.Version
	}
	return "(devel)"
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: replay <command> [flags] [args]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'replay help <command>' for a command's usage and flags; 'replay --version' for the version.")
}
