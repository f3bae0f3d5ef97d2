package rules

import (
	"slices"
	"strings"

	"github.com/tasklog/tasklog/events"
)

// Provider is the source a rule file belongs to: the tool whose convention it follows. It is
// events.RuleSource, by which agentlog names the rules each agent loads by itself.
type Provider = events.RuleSource

// The providers, as recorded in [File.Provider] and [Rule.Provider].
const (
	ProviderTasklog  = events.RuleSourceTasklog
	ProviderCline    = events.RuleSourceCline
	ProviderCursor   = events.RuleSourceCursor
	ProviderWindsurf = events.RuleSourceWindsurf
	ProviderClaude   = events.RuleSourceClaude
	ProviderCopilot  = events.RuleSourceCopilot
	ProviderAgents   = events.RuleSourceAgents
	// ProviderImport is the provider of a file read only because a rule imports it: it is
	// recorded in the rules snapshot and expanded into the importing rule, never a rule itself.
	ProviderImport = events.RuleSourceImport
)

// sourceInfo is everything about one source: where its files are, what it calls them, which
// frontmatter keys it reads and what they mean, and how it ranks against the others.
type sourceInfo struct {
	source Provider
	// title is the tool's name, in messages.
	title string
	// rank orders sources for shadowing among rules of the same name: higher wins.
	rank int
	// workspace and home are the places the tool keeps rules in a workspace root and in the
	// home folder, in the order they are read.
	workspace, home []source
	// keys are the tool-specific frontmatter keys it reads (the common ones, description, the
	// conditionals and the stream trigger keys, are read for every source); owns, the keys that
	// are its own, which a file of another source is told it does not read.
	keys, owns []string
	// nameSuffix is the suffix dropped from a rule's path to name it ("" drops the extension).
	nameSuffix string
	// category settles a rule's category and conditions from its keys, as the tool reads them;
	// nil: always on.
	category func(*builder) Category
}

// source is one folder or file where a provider keeps rules.
type source struct {
	provider Provider // filled in from the table
	dir      string   // a folder to read recursively, or
	file     string   // a single file
	accept   func(rel string) bool
	flat     bool // only the folder's own files, no subfolders
}

// sources is the table of rule sources, in the order their places are read.
var sources = []sourceInfo{
	{
		source: ProviderTasklog, title: "tasklog", rank: 7,
		workspace: []source{{dir: ".tasklog/rules", accept: hasExt(".md", ".mdc")}},
		home:      []source{{dir: ".tasklog/rules", accept: hasExt(".md", ".mdc")}},
		keys:      []string{"paths", "globs", "applyTo", "alwaysApply", "trigger"},
		category:  (*builder).tasklogCategory,
	},
	{
		source: ProviderCline, title: "Cline", rank: 3,
		workspace: []source{{dir: ".clinerules", accept: clineAccept}, {file: ".clinerules"}},
		home:      []source{{dir: "Documents/Cline/Rules", accept: anyFile}},
		keys:      []string{"paths"},
		owns:      []string{"paths"},
		// Cline reads only paths, and only as a list: a string is the wrong type and the
		// rule stays universal, as in Cline.
		category: func(b *builder) Category { return b.scopedOr(b.pathCondition("paths", false, false), CategoryAlways) },
	},
	{
		source: ProviderCursor, title: "Cursor", rank: 6,
		workspace: []source{{dir: ".cursor/rules", accept: hasExt(".mdc", ".md")}, {file: ".cursorrules"}},
		home:      []source{{dir: ".cursor/rules", accept: hasExt(".mdc", ".md")}},
		keys:      []string{"globs", "alwaysApply"},
		owns:      []string{"globs", "alwaysApply"},
		category: func(b *builder) Category {
			if b.class.dir != "" {
				return b.nestedCursorCategory()
			}
			return b.cursorCategory(false)
		},
	},
	{
		source: ProviderWindsurf, title: "Windsurf", rank: 5,
		workspace: []source{{dir: ".windsurf/rules", accept: hasExt(".md"), flat: true}, {file: ".windsurfrules"}},
		home:      []source{{file: ".codeium/windsurf/memories/global_rules.md"}},
		keys:      []string{"trigger", "globs", "alwaysApply"},
		owns:      []string{"globs", "trigger"},
		category:  (*builder).windsurfCategory,
	},
	{
		source: ProviderClaude, title: "Claude Code", rank: 4,
		workspace: []source{{dir: ".claude/rules", accept: hasExt(".md")}, {file: ".claude/CLAUDE.md"}, {file: "CLAUDE.local.md"}},
		home:      []source{{dir: ".claude/rules", accept: hasExt(".md")}, {file: ".claude/CLAUDE.md"}},
		keys:      []string{"paths"},
		owns:      []string{"paths"},
		category:  func(b *builder) Category { return b.scopedOr(b.pathCondition("paths", true, false), CategoryAlways) },
	},
	{
		source: ProviderCopilot, title: "GitHub Copilot", rank: 2,
		workspace:  []source{{file: ".github/copilot-instructions.md"}, {dir: ".github/instructions", accept: hasExt(".instructions.md")}},
		keys:       []string{"applyTo"},
		owns:       []string{"applyTo"},
		nameSuffix: ".instructions.md",
		category:   (*builder).copilotCategory,
	},
	{
		source: ProviderAgents, title: "AGENTS.md", rank: 1,
		home: []source{{file: ".codex/AGENTS.md"}},
	},
}

// workspaceSources and homeSources are every source's places in a workspace root and in the
// home folder, in the table's order.
var (
	workspaceSources = placesOf(func(s *sourceInfo) []source { return s.workspace })
	homeSources      = placesOf(func(s *sourceInfo) []source { return s.home })
)

// sourcePrefixes are each source's rules folders, workspace and home, each with a trailing
// slash, in the table's order.
var sourcePrefixes = func() [][]string {
	out := make([][]string, len(sources))
	for i := range sources {
		for _, p := range append(slices.Clip(sources[i].workspace), sources[i].home...) {
			if p.dir != "" && !slices.Contains(out[i], p.dir+"/") {
				out[i] = append(out[i], p.dir+"/")
			}
		}
	}
	return out
}()

// keyOwner names, for each tool-specific key, the tools that own it (highest rank first): a key
// found in another tool's file is reported as foreign, with the key that tool reads instead.
var keyOwner = owners()

// sourceOf is the table's entry for src, or nil (imports, a source this version does not know).
func sourceOf(src Provider) *sourceInfo {
	for i := range sources {
		if sources[i].source == src {
			return &sources[i]
		}
	}
	return nil
}

// titleOf is the tool name of src, in messages.
func titleOf(src Provider) string {
	if s := sourceOf(src); s != nil {
		return s.title
	}
	return ""
}

// rankOf is src's rank for shadowing; 0 for a source not in the table.
func rankOf(src Provider) int {
	if s := sourceOf(src); s != nil {
		return s.rank
	}
	return 0
}

// keysOf are the tool-specific keys src reads.
func keysOf(src Provider) []string {
	if s := sourceOf(src); s != nil {
		return s.keys
	}
	return nil
}

func placesOf(of func(*sourceInfo) []source) []source {
	var out []source
	for i := range sources {
		for _, p := range of(&sources[i]) {
			p.provider = sources[i].source
			out = append(out, p)
		}
	}
	return out
}

// folderPrefixes are the rules folders of src, workspace and home, each with a trailing slash.
func folderPrefixes(src Provider) []string {
	for i := range sources {
		if sources[i].source == src {
			return sourcePrefixes[i]
		}
	}
	return nil
}

func owners() map[string]string {
	byRank := slices.Clone(sources)
	slices.SortStableFunc(byRank, func(a, b sourceInfo) int { return b.rank - a.rank })
	names := map[string][]string{}
	for _, s := range byRank {
		for _, k := range s.owns {
			names[k] = append(names[k], s.title)
		}
	}
	out := make(map[string]string, len(names))
	for k, ns := range names {
		out[k] = strings.Join(ns, " and ")
	}
	return out
}
