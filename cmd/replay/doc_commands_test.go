package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/cmd/replay/internal/testenv"
)

// docRunElsewhere names, for each command of the README and docs/ that is not a replay verb, the
// test (a Go test function of this repository, or .ci/run) that runs it.
var docRunElsewhere = map[string]string{
	"go install github.com/tasklog/tasklog/cmd/replay/...@latest": "TestInstallBinaries", // the same packages, from the checkout
	"go install ./cmd/replay/...":                                 "TestInstallBinaries",
	"go test -race -count=1 -run 'TestHook|TestServe|TestMCPProcess|TestOtelServe|TestImportCopyRemovedOnSignal' -skip 'TestServePi' ./cmd/replay/...": ".ci/run",
	"go test -race -count=1 ./session/serve/... ./session/mcp/... ./session/web/...":                                                                   ".ci/run",
	"go test -race -timeout 30m ./...":                                             ".ci/run",
	"bash .ci/install-agents":                                                      ".ci/run",
	"go test ./cmd/replay/e2e -run TestAgentsEndToEnd -v":                          "TestAgentsEndToEnd",
	"go test ./cmd/replay/e2e -run Resume -v":                                      "TestCodexResume",
	"TASKLOG_AGENTS_HARNESS=1 go test ./cmd/replay/e2e -run TestAgentHarness -v":   "TestAgentHarness",
	"go test ./cmd/replay/e2e -run 'TestAgentsEndToEnd/qwen|TestQwenHTTPHooks' -v": "TestQwenHTTPHooks",
	"go test ./session/serve -run '^$' -bench 'BenchmarkHookOverHTTP' -benchmem":   "BenchmarkHookOverHTTP",
	"go install github.com/nats-io/nats-server/v2@v2.15.2":                         ".ci/run",
	"mkdir -p ~/tasklog-nats && cat > ~/tasklog-nats/nats-server.conf <<CONF":      "TestNATSServerBinary", // the same configuration
	"nats-server -js -c ~/tasklog-nats/nats-server.conf":                           "TestNATSServerBinary",
	"export TASKLOG_STORE=nats://127.0.0.1:4222":                                   "TestNATSScripts", // the scripts' environment
	"go test ./cmd/replay -run TestOtelJaeger -v":                                  "TestOtelJaeger",

	// Gemini CLI and Copilot CLI in the end-to-end tests, which install each agent they drive so.
	"go test ./cmd/replay/e2e -run 'TestAgentsEndToEnd/gemini' -v":                        "TestAgentsEndToEnd",
	"TASKLOG_AGENTS_HARNESS=1 go test ./cmd/replay/e2e -run 'TestAgentHarness/gemini' -v": "TestAgentHarness",
	"go test ./cmd/replay/e2e -run 'TestAgentsEndToEnd/copilot-cli' -v":                   "TestAgentsEndToEnd",
	"replay install copilot-cli --project DIR --db PATH":                                  "TestAgentsEndToEnd",

	// The three nodes of a cluster on one machine, and the store URL naming them.
	"nats-server -js -c node1.conf": "TestNATSReplicas",
	"nats-server -js -c node2.conf": "TestNATSReplicas",
	"nats-server -js -c node3.conf": "TestNATSReplicas",
	"export TASKLOG_STORE='nats://127.0.0.1:4222,127.0.0.1:4223,127.0.0.1:4224/TASKLOG?replicas=3'": "TestNATSReplicas",

	// What an event costs a NATS stream, part by part, and what packing would save.
	"go test ./store/natsstore -run TestMessageCost -v":                                                               "TestMessageCost",
	"go test ./store/natsstore -run '^$' -bench 'BenchmarkDiskUsageRealistic|BenchmarkPackingEstimate' -benchtime 3x": "BenchmarkPackingEstimate",
	"go test ./store/natsstore -run '^$' -bench BenchmarkDiskSealedBlocks -benchtime 1x":                              "BenchmarkDiskSealedBlocks",

	// Jaeger for the trace test, which .ci/run builds in the background and runs when it can.
	"bash .ci/install-jaeger":                                                         ".ci/run",
	"go test -race -count=1 -run TestOtelJaeger ./cmd/replay":                         ".ci/run",
	"go test ./cmd/replay -run '^$' -bench 'BenchmarkServeHookOtel$' -benchtime 200x": "BenchmarkServeHookOtel",

	// The web app's pages, timed.
	"go test -run '^$' -bench BenchmarkPages -benchtime 3x ./session/web":                          "BenchmarkPages",
	"go test ./session/web -run '^$' -bench 'BenchmarkPages' -benchtime 3x":                        "BenchmarkPages",
	"go test ./cmd/replay -run TestServeWebBigPage -webbig 10000 -v":                               "TestServeWebBigPage",
	"go test ./cmd/replay -run TestServeWebBigPage -webbig 10000 -webtasks 50 -v":                  "TestServeWebBigPage",
	"go test -run '^$' -bench 'BenchmarkEncode$|BenchmarkFirstUse' -benchmem ./store/payloadcodec": "BenchmarkFirstUse",
	"go test ./cmd/replay -run TestServeWebScreenshots -screenshots ../../docs/img":                "TestServeWebScreenshots",
	"replay serve --db tasks.db --http 127.0.0.1:0 --http-public":                                  "TestServeWebPublic",

	// The workspace of the server protocol's transcript, which the test makes as these do.
	"mkdir -p /tmp/tx/shop/.clinerules": "TestDocTranscript",
	`printf -- '---\npaths: ["src/api/**"]\n---\nAPI handlers return JSON errors with a code.\n' > /tmp/tx/shop/.clinerules/api.md`: "TestDocTranscript",

	// Verify and import of a task recorded as hooks record one.
	"go test -run '^$' -bench 'BenchmarkVerifyRealistic' -benchtime 3x ./session":              "BenchmarkVerifyRealistic",
	"go test -run '^$' -bench 'BenchmarkImportRealistic' -benchtime 2x ./session":              "BenchmarkImportRealistic",
	"go test -run '^$' -bench 'BenchmarkVerifyCollector' -benchtime 3x ./session":              "BenchmarkVerifyCollector",
	"go test -run '^$' -bench 'BenchmarkHookSampleRules' -benchtime 2000x -benchmem ./session": "BenchmarkHookSampleRules",
	"go test -run '^$' -bench BenchmarkRealisticDecisionBytes -benchtime 1x ./session":         "BenchmarkRealisticDecisionBytes",
	"go test -run '^$' -bench BenchmarkDiffRealistic -benchtime 3x ./session":                  "BenchmarkDiffRealistic",
	"go test -run '^$' -bench BenchmarkDecisionDecode -benchmem ./events":                      "BenchmarkDecisionDecode",

	// bbolt's own commit, the floor under a decision's tail, at two settings of the collector.
	"GOGC=100 go test -run '^$' -bench BenchmarkBoltCommitTail -benchtime 20000x ./store":                                      "BenchmarkBoltCommitTail",
	"GOGC=400 go test -run '^$' -bench BenchmarkBoltCommitTail -benchtime 20000x ./store":                                      "BenchmarkBoltCommitTail",
	"go test -run '^$' -bench 'BenchmarkAppendBatch' -benchtime 2x ./store":                                                    "BenchmarkAppendBatch",
	"go test -run '^$' -bench 'BenchmarkEncodeDictionary' -benchtime 20000x ./store/payloadcodec":                              "BenchmarkEncodeDictionary",
	"go test -run '^$' -bench 'BenchmarkDecodeDictionary|BenchmarkEncodeDictionary/4KB' -benchtime 3000x ./store/payloadcodec": "BenchmarkDecodeDictionary",
	"go test -run '^$' -bench 'BenchmarkLoadCold|BenchmarkLoadCached' -benchmem ./rules":                                       "BenchmarkLoadCold",
	// A hook's tail at the collector's default and at the setting replay serve runs at.
	"GOGC=100 go test -run '^$' -bench BenchmarkHookOverHTTP -benchtime 2000x ./session/serve": "BenchmarkHookOverHTTP",
	"GOGC=400 go test -run '^$' -bench BenchmarkHookOverHTTP -benchtime 2000x ./session/serve": "BenchmarkHookOverHTTP",
}

// docPage is a page of the manual: the README or a page of docs/.
type docPage struct{ path, rel, text string }

// manualPages reads the README and every page of docs/.
func manualPages(t *testing.T, root string) []docPage {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	paths = append(paths, filepath.Join(root, "README.md"))
	pages := make([]docPage, len(paths))
	for i, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, path)
		pages[i] = docPage{path, rel, string(b)}
	}
	return pages
}

// TestDocCommands holds the README and docs/ to what the tests run: every replay command in a
// shell block (or after "$ " in a transcript) is run by a script of testdata/script or
// testdata/script_nats, either as it stands or under a "# doc: COMMAND" line naming it, and every
// other command is one a script runs with exec, or one docRunElsewhere maps to an existing test.
func TestDocCommands(t *testing.T) {
	root := testenv.RepoRoot(t)
	run := scriptCommands(t)
	sources := goTestSources(t, root)
	n := 0
	for _, page := range manualPages(t, root) {
		rel := page.rel
		for _, cmd := range docCommands(page.text) {
			n++
			if by, ok := docRunElsewhere[cmd]; ok {
				if by != ".ci/run" && !definedIn(sources, cmd, by) {
					t.Errorf("%s: %q: docRunElsewhere names %s, which no test file of the packages it names defines", rel, cmd, by)
				}
				continue
			}
			for _, part := range strings.Split(cmd, " && ") {
				part = strings.TrimSpace(part)
				if args, ok := replayArgs(part); ok {
					if !run[strings.Join(args, " ")] {
						t.Errorf("%s: %q is run by no script of testdata/script*: add it, or a \"# doc: %s\" line before the command that runs it", rel, part, part)
					}
					continue
				}
				if run[strings.Join(strings.Fields(part), " ")] {
					continue // a script runs it as it stands
				}
				by, ok := docRunElsewhere[part]
				if !ok {
					t.Errorf("%s: %q is no replay command and docRunElsewhere does not name the test that runs it", rel, part)
					continue
				}
				if by != ".ci/run" && !definedIn(sources, part, by) {
					t.Errorf("%s: %q: docRunElsewhere names %s, which no test file of the packages it names defines", rel, part, by)
				}
				break // the rest of a line run elsewhere is that test's
			}
		}
	}
	if n < 20 {
		t.Errorf("found %d commands in the README and docs/; the parser lost them", n)
	}
}

// docCommands returns the commands of a Markdown page: the lines of its sh blocks (continuations
// joined, comments, heredoc bodies and "# " output lines dropped, a pipeline's last command) and
// the "$ " lines of its other blocks.
func docCommands(md string) []string {
	var out []string
	lines := strings.Split(md, "\n")
	for i := 0; i < len(lines); i++ {
		fence, ok := strings.CutPrefix(lines[i], "```")
		if !ok {
			continue
		}
		sh := fence == "sh"
		heredoc := ""
		var cont string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			line := lines[i]
			if heredoc != "" {
				if strings.TrimSpace(line) == heredoc {
					heredoc = ""
				}
				continue
			}
			if !sh {
				if c, ok := strings.CutPrefix(line, "$ "); ok {
					out = append(out, strings.TrimSpace(c))
				}
				continue
			}
			line = cont + stripComment(line)
			cont = ""
			if strings.HasSuffix(line, "\\") || strings.HasSuffix(line, "|") || strings.Count(line, "'")%2 == 1 {
				cont = strings.TrimSuffix(line, "\\") + " "
				continue
			}
			line = strings.Join(strings.Fields(line), " ")
			if line == "" {
				continue
			}
			if _, tag, ok := strings.Cut(line, "<<"); ok {
				heredoc = strings.Trim(tag, "'\" ")
			}
			if j := strings.LastIndex(line, "| "); j >= 0 && !strings.Contains(line, "<<") {
				line = strings.TrimSpace(line[j+2:])
			}
			out = append(out, line)
		}
	}
	return out
}

// stripComment removes a shell comment: a # at the start or after a space, outside quotes.
func stripComment(line string) string {
	quote := rune(0)
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || line[i-1] == ' '):
			return strings.TrimRight(line[:i], " ")
		}
	}
	return line
}

// replayArgs returns the arguments of a replay command ("replay …" or "go run ./cmd/replay …").
func replayArgs(cmd string) ([]string, bool) {
	f := strings.Fields(cmd)
	switch {
	case len(f) >= 1 && f[0] == "replay":
		return f, true
	case len(f) >= 3 && f[0] == "go" && f[1] == "run" && f[2] == "./cmd/replay":
		return append([]string{"replay"}, f[3:]...), true
	}
	return nil, false
}

var (
	scriptCommand = regexp.MustCompile(`^(?:\[[^\]]*\]\s*)*(?:!\s*)?(?:exec\s+)?(replay\b.*)$`)
	scriptExec    = regexp.MustCompile(`^(?:\[[^\]]*\]\s*)*(?:!\s*)?exec\s+(.*)$`)
)

// scriptCommands returns the replay commands the CLI scripts run, as space-joined arguments, and
// the commands their "# doc: " lines name.
func scriptCommands(t *testing.T) map[string]bool {
	run := map[string]bool{}
	for _, dir := range []string{"script", "script_nats"} {
		files, _ := filepath.Glob(filepath.Join("testdata", dir, "*.txtar"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			body, _, _ := strings.Cut(string(b), "\n-- ")
			stdin := "" // the file a "stdin FILE" line gives the next command
			for _, line := range strings.Split(body, "\n") {
				line = strings.TrimSpace(line)
				if f, ok := strings.CutPrefix(line, "stdin "); ok {
					stdin = strings.TrimSpace(f)
					continue
				}
				if doc, ok := strings.CutPrefix(line, "# doc: "); ok {
					if args, ok := replayArgs(doc); ok {
						run[strings.Join(args, " ")] = true
					}
					continue
				}
				if m := scriptCommand.FindStringSubmatch(line); m != nil {
					run[strings.Join(strings.Fields(m[1]), " ")] = true
					if stdin != "" { // as a shell writes it: the command < FILE
						run[strings.Join(strings.Fields(m[1]), " ")+" < "+stdin] = true
						stdin = ""
					}
				} else if m := scriptExec.FindStringSubmatch(line); m != nil {
					run[strings.Join(strings.Fields(m[1]), " ")] = true
					// sh -c 'A | replay …': the shell line, and the command a pipe feeds.
					if inner, ok := strings.CutPrefix(m[1], "sh -c '"); ok && strings.HasSuffix(inner, "'") {
						inner = strings.TrimSuffix(inner, "'")
						if i := strings.LastIndex(inner, "| "); i >= 0 {
							inner = inner[i+2:]
						}
						run[strings.Join(strings.Fields(inner), " ")] = true
					}
				}
			}
		}
	}
	return run
}

// goTestSources returns the text of every _test.go file of the repository, to find test names in.
func goTestSources(t *testing.T, root string) map[string]string {
	sources := map[string]string{} // by folder, relative to root, in slash form
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if strings.HasSuffix(path, "_test.go") {
			src, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			dir, err := filepath.Rel(root, filepath.Dir(path))
			if err != nil {
				return err
			}
			sources[filepath.ToSlash(dir)] += string(src)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return sources
}

// definedIn reports whether a test file defines the function fn in a package the command cmd
// names ("./cmd/replay", "./store/..."), or in any package when it names none.
func definedIn(sources map[string]string, cmd, fn string) bool {
	var pkgs []string
	for _, f := range strings.Fields(cmd) {
		if strings.HasPrefix(f, "./") {
			pkgs = append(pkgs, strings.TrimPrefix(f, "./"))
		}
	}
	for dir, src := range sources {
		if !strings.Contains(src, "func "+fn+"(") {
			continue
		}
		if len(pkgs) == 0 {
			return true
		}
		for _, p := range pkgs {
			if tree, all := strings.CutSuffix(p, "..."); all && (tree == "" || strings.HasPrefix(dir+"/", tree)) || dir == p {
				return true
			}
		}
	}
	return false
}

// taskToken is an argument that names a task: a unique prefix of an id, or a whole one.
var taskToken = regexp.MustCompile(`^[0-9a-f]{4,8}$|^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

// TestDocStandInsNameNoOtherTask holds a script's "# doc: COMMAND" line to the command after it
// that stands in for it: a stand-in may add a database, a store or a folder of the test's, but not
// a task the documented command leaves out, for then the form a reader types (the latest task)
// is not the one that runs.
func TestDocStandInsNameNoOtherTask(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "script*", "*.txtar"))
	checked := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		body, _, _ := strings.Cut(string(b), "\n-- ")
		var docs []string // the documented commands waiting for the command that runs them
		for _, line := range strings.Split(body, "\n") {
			line = strings.TrimSpace(line)
			if doc, ok := strings.CutPrefix(line, "# doc: "); ok {
				if _, ok := replayArgs(doc); ok {
					docs = append(docs, doc)
				}
				continue
			}
			m := scriptCommand.FindStringSubmatch(line)
			if m == nil || len(docs) == 0 {
				continue
			}
			for _, doc := range docs {
				checked++
				named := map[string]bool{}
				for _, a := range strings.Fields(doc) {
					named[a] = true
				}
				for _, a := range strings.Fields(m[1]) {
					if taskToken.MatchString(a) && !named[a] {
						t.Errorf("%s: %q stands in for %q but names task %s, which the documented command leaves out", f, m[1], doc, a)
					}
				}
			}
			docs = nil
		}
	}
	if checked < 20 {
		t.Errorf("checked %d documented commands against their stand-ins; the parser lost them", checked)
	}
}
