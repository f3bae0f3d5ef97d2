package rules

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
)

// RuleSet is the normalized, shadowed set of rules loaded from a list of files. It is
// immutable and safe for concurrent use.
type RuleSet struct {
	rules       []*Rule // sorted by ID
	byName      map[string]*Rule
	names       []string // resolvable names, sorted
	diagnostics []Diagnostic
	index       *patternIndex
	// matches remembers which patterns each candidate path matched (see collectHits), and
	// details the last description of each rule's matches.
	matches matchMemo
	details detailMemo
	// allDiagnostics is the set's and every rule's diagnostics, sorted; decisions share it.
	allDiagnostics []Diagnostic
	// sameText lists the rules whose bodies are the same text, each group in precedence order
	// (see dedupe).
	sameText [][]int
	// manual are the manual rules of a workspace root (see SameMentionEvidence).
	manual []*Rule
	// diagnosticsV1 is, in a set read as before rules/3, allDiagnostics as EngineV1 had them:
	// without DiagDuplicateKey (the same slice when there is none, and in today's set).
	diagnosticsV1 []Diagnostic
	// older make the set as each earlier engine version reads its files (see build), the first
	// time As asks for it; nil in a set not made by Load.
	older [readingNow]func() *RuleSet
	// current is, in a set read as an earlier version read its files, the set it was built for.
	current *RuleSet
}

// reading is how an engine version reads rule files: each later one reads some files
// otherwise (see EngineVersion).
type reading int

const (
	readingV2  reading = iota // EngineV1 and EngineV2
	readingV3                 // EngineV3
	readingNow                // EngineVersion
)

// readingOf is how the engine version named reads rule files; one this package does not know
// reads them as EngineVersion does.
func readingOf(engine string) reading {
	switch engine {
	case EngineV1, EngineV2:
		return readingV2
	case EngineV3:
		return readingV3
	}
	return readingNow
}

// Loader parses rule files and caches the parse of each content (by SHA-256) and the
// compilation of each pattern, so that re-loading the same files costs little. Its zero
// value is not ready: use [NewLoader]. A Loader is safe for concurrent use.
type Loader struct {
	mu       sync.Mutex
	parses   map[[32]byte]*parsedContent
	patterns map[string]*Pattern
	max      int
}

// parsedContent is the provider-independent, immutable part of a file's parse.
type parsedContent struct {
	text        string
	binary      bool
	invalidUTF8 bool
	truncated   bool
	fm          Frontmatter
	hash        string
	// cline is fm as Cline reads it (see clineRejects), made the first time a Cline file of
	// this content is built.
	clineOnce sync.Once
	cline     Frontmatter
}

// clineReading is the content's frontmatter as Cline reads it, read once.
func (pc *parsedContent) clineReading() Frontmatter {
	pc.clineOnce.Do(func() { pc.cline = clineRejects(pc.fm, normalizeText(pc.text)) })
	return pc.cline
}

// NewLoader returns a loader whose caches hold at most maxEntries parses and patterns each
// (a full cache is emptied and refilled, which keeps memory bounded without bookkeeping).
func NewLoader(maxEntries int) *Loader {
	if maxEntries <= 0 {
		maxEntries = 4096
	}
	return &Loader{parses: map[[32]byte]*parsedContent{}, patterns: map[string]*Pattern{}, max: maxEntries}
}

var defaultLoader = NewLoader(0)

// Load parses, normalizes, validates and shadows files with a shared cache. It is pure: the
// same files always give the same rule set.
func Load(files []File) *RuleSet { return defaultLoader.Load(files) }

// walkNote splits what a collection reported about a place it did not read (a File whose
// ReadError starts with one of these codes) into a diagnostic's code and message.
func walkNote(readError string) (code, msg string, ok bool) {
	for _, code := range []string{DiagWalkLimit, DiagNotRegular, DiagLinkLoop, DiagMemorySkipped, DiagOutsideRoot} {
		if rest, ok := strings.CutPrefix(readError, code+":"); ok {
			return code, strings.TrimSpace(rest), true
		}
	}
	return "", "", false
}

// Load parses, normalizes, validates and shadows files into a rule set.
func (l *Loader) Load(files []File) *RuleSet {
	rs := l.load(files, readingNow)
	files = slices.Clone(files) // the caller's to change once Load returns
	for rd := range rs.older {
		rs.older[rd] = sync.OnceValue(func() *RuleSet {
			o := l.load(files, reading(rd))
			o.current = rs
			return o
		})
	}
	return rs
}

// load is Load reading the files as the engine versions of reading rd do (see build).
func (l *Loader) load(files []File, rd reading) *RuleSet {
	before3 := rd < readingV3
	rs := &RuleSet{byName: map[string]*Rule{}}
	ids := map[string]int{}
	var byKey map[importKey]*File // for @path imports; built only when a file may have one
	for i := range files {
		if expandsImports(&files[i], rd) {
			byKey = make(map[importKey]*File, len(files))
			for j := range files {
				byKey[keyOf(&files[j])] = &files[j]
			}
			break
		}
	}
	parsed := l.parseAll(files)
	for i := range files {
		f := &files[i]
		if code, msg, ok := walkNote(f.ReadError); ok {
			rs.diagnostics = append(rs.diagnostics, Diagnostic{File: f.label(), Severity: SeverityWarning,
				Code: code, Message: msg})
			continue
		}
		if f.Provider == ProviderImport {
			continue // expanded into the rules that import it
		}
		var pc *parsedContent
		if parsed != nil {
			pc = parsed[i]
		}
		r := l.build(f, byKey, pc, rd)
		if n := ids[r.ID]; n > 0 {
			r.ID = fmt.Sprintf("%s#%d", r.ID, n+1)
			r.Diagnostics = append(r.Diagnostics, Diagnostic{RuleID: r.ID, File: f.label(), Severity: SeverityWarning,
				Code: DiagDuplicateID, Message: "another file has the same provider and path; this one got the id " + r.ID})
			for i := range r.Diagnostics {
				r.Diagnostics[i].RuleID = r.ID
			}
			if r.Trigger != nil {
				r.Trigger.RuleID = r.ID
			}
		}
		ids[strings.SplitN(r.ID, "#", 2)[0]]++
		rs.rules = append(rs.rules, r)
	}
	slices.SortFunc(rs.rules, func(a, b *Rule) int { return cmp.Compare(a.ID, b.ID) })
	rs.shadow(before3)
	rs.sameText = groupSameText(rs.rules)
	for _, r := range rs.rules {
		if r.Category == CategoryManual && r.Root != "" {
			rs.manual = append(rs.manual, r)
		}
	}
	rs.index = buildIndex(rs.rules)
	slices.SortFunc(rs.diagnostics, compareDiagnostics)
	rs.allDiagnostics = append(rs.allDiagnostics, rs.diagnostics...)
	for _, r := range rs.rules {
		rs.allDiagnostics = append(rs.allDiagnostics, r.Diagnostics...)
	}
	slices.SortStableFunc(rs.allDiagnostics, compareDiagnostics)
	rs.diagnosticsV1 = rs.allDiagnostics
	if before3 && slices.ContainsFunc(rs.allDiagnostics, isDuplicateKey) { // EngineV1 decides only from that set (see As)
		rs.diagnosticsV1 = slices.DeleteFunc(slices.Clone(rs.allDiagnostics), isDuplicateKey)
	}
	return rs
}

func isDuplicateKey(d Diagnostic) bool { return d.Code == DiagDuplicateKey }

// shadow keeps, for each name, the usable rule of highest precedence (ties: the smaller ID).
// Unusable rules are validated out first, so an empty winner does not erase its runner-up.
//
// A memory file (AGENTS.md, CLAUDE.md) shadows nothing under rules/3 (see build); before it,
// a subfolder's was scoped by its place, so the same file in two workspace roots did not
// shadow the other. rule://NAME then resolves the first by ID, and every rule gets the
// address that reaches it (see Rule.Address); with before3, the name, as those engines gave.
func (rs *RuleSet) shadow(before3 bool) {
	winners := map[string]*Rule{}
	for _, r := range rs.rules { // sorted by ID, so the first of equal precedence wins
		if r.Unusable != "" {
			continue
		}
		if w, ok := winners[r.shadowKey]; !ok || r.precedence > w.precedence {
			winners[r.shadowKey] = r
		}
	}
	for _, r := range rs.rules {
		if r.Unusable == "" && winners[r.shadowKey] != r {
			r.ShadowedBy = winners[r.shadowKey].ID
		}
	}
	// A name goes to the first rule by ID that holds it, a memory file (which shadows nothing,
	// see build) only when no other rule does: an on-request rule is read at its name.
	for _, memory := range []bool{false, true} {
		for _, r := range rs.rules {
			if r.Unusable != "" || r.ShadowedBy != "" || r.isMemory() != memory {
				continue
			}
			if _, ok := rs.byName[r.Name]; !ok {
				rs.byName[r.Name] = r
				rs.names = append(rs.names, r.Name)
			}
		}
	}
	slices.Sort(rs.names)
	for _, r := range rs.rules {
		switch {
		case before3:
			r.address = RuleURIScheme + r.Name
		case rs.byName[r.Name] == r:
			r.address = RuleURI(r.Name)
		default:
			r.address = RuleURI(r.ID)
		}
	}
}

// parallelParses is the number of files from which Load parses them on every processor at
// once before building the rules in order: parsing the frontmatter is most of the time of a
// first load of thousands of rule files.
const parallelParses = 256

// parseAll parses the contents of the files that Load builds rules of, spread over the
// processors, in the files' order; nil when there are too few files or one processor (Load
// then parses each as it builds its rule). A parse is pure, so the order they are made in does
// not matter.
func (l *Loader) parseAll(files []File) []*parsedContent {
	procs := runtime.GOMAXPROCS(0)
	if len(files) < parallelParses || procs < 2 {
		return nil
	}
	out := make([]*parsedContent, len(files))
	part := func(from, to int) {
		for i := from; i < to; i++ {
			if f := &files[i]; f.ReadError == "" && f.Provider != ProviderImport {
				out[i] = l.parse(f.Content)
			}
		}
	}
	size := (len(files) + procs - 1) / procs
	var wg sync.WaitGroup
	for from := size; from < len(files); from += size {
		wg.Add(1)
		go func(from, to int) {
			defer wg.Done()
			part(from, to)
		}(from, min(from+size, len(files)))
	}
	part(0, min(size, len(files)))
	wg.Wait()
	return out
}

func (l *Loader) parse(content []byte) *parsedContent {
	key := sha256.Sum256(content)
	l.mu.Lock()
	pc, ok := l.parses[key]
	l.mu.Unlock()
	if ok {
		return pc
	}
	pc = &parsedContent{hash: hex.EncodeToString(key[:])}
	text, binary, invalid := decodeContent(content)
	pc.binary, pc.invalidUTF8 = binary, invalid
	if len(text) > MaxFileSize {
		text = truncateUTF8(text, MaxFileSize)
		pc.truncated = true
	}
	pc.text = text
	if !binary {
		pc.fm = ParseFrontmatter(text)
	}
	l.mu.Lock()
	if len(l.parses) >= l.max {
		clear(l.parses)
	}
	l.parses[key] = pc
	l.mu.Unlock()
	return pc
}

func (l *Loader) pattern(raw string) *Pattern {
	l.mu.Lock()
	p, ok := l.patterns[raw]
	l.mu.Unlock()
	if ok {
		return p
	}
	p = CompilePattern(raw)
	l.mu.Lock()
	if len(l.patterns) >= l.max {
		clear(l.patterns)
	}
	l.patterns[raw] = p
	l.mu.Unlock()
	return p
}

func truncateUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// build turns one file into a rule, as the engine versions of reading rd read it. Before rules/3:
// see classify, and a memory file (CLAUDE.md, AGENTS.md) shadowed by or shadowing a rule of the
// same name, where every agent that reads memory files reads each of them (Claude Code the
// root's CLAUDE.md, .claude/CLAUDE.md and ~/.claude/CLAUDE.md alike). Before rules/4: a Cline
// file whose frontmatter strict YAML rejects read line by line (see clineRejects).
func (l *Loader) build(f *File, files map[importKey]*File, pc *parsedContent, rd reading) *Rule {
	before3 := rd < readingV3
	class := classify(f, rd)
	r := &Rule{ID: f.id(), Name: class.name, Provider: f.Provider, Scope: f.Scope, Root: f.Root, Path: f.Path,
		AlwaysEnabled: f.Scope == ScopeRemote && f.AlwaysEnabled, precedence: precedence(f)}
	switch {
	case class.kind == kindMemory && !before3:
		r.shadowKey = memoryKey + r.ID // no other file's name hides it, nor does it hide one
	case class.dir != "":
		r.shadowKey = r.Name + "\x00" + f.Root
	default:
		r.shadowKey = r.Name
	}
	r.DisplayPath = f.Path
	if f.Scope == ScopeGlobal {
		r.DisplayPath = "~/" + f.Path
	}
	b := &builder{r: r, f: f, class: class, pats: l.pattern, read: map[string]bool{}}
	if f.Provider == ProviderCursor && class.kind == kindFolder {
		b.anchor = class.dir // a nested .cursor/rules folder's patterns are anchored at its folder
	}
	r.Category = CategoryAlways
	if f.ReadError != "" {
		r.Unusable = "unreadable"
		b.diag(0, SeverityError, DiagReadError, "the file could not be read: "+f.ReadError)
		return r
	}
	if pc == nil {
		pc = l.parse(f.Content)
	}
	r.ContentHash = pc.hash
	if pc.binary {
		r.Unusable = "binary"
		b.diag(0, SeverityError, DiagBinary, "the file holds NUL bytes: it is binary, not a rule")
		return r
	}
	if pc.invalidUTF8 {
		b.diag(0, SeverityWarning, DiagInvalidUTF8, "the file is not valid UTF-8; invalid bytes were replaced by U+FFFD")
	}
	if f.Size > int64(len(f.Content)) || pc.truncated {
		size := max(f.Size, int64(len(f.Content)))
		b.diag(0, SeverityWarning, DiagTooLarge, fmt.Sprintf("the file is %d bytes; only the first %d bytes are kept", size, MaxFileSize))
	}
	fm := pc.fm
	if rd > readingV3 && f.Provider == ProviderCline {
		fm = pc.clineReading()
	}
	b.fm = &fm
	if class.kind == kindLegacy {
		b.legacy(pc.text)
	} else {
		for _, p := range fm.Problems {
			b.diag(p.Line, p.Severity, p.Code, p.Message)
		}
		r.Body = strings.TrimSpace(fm.Body)
		expandImports(l, r, f, fm.Body, fm.BodyLine, files, rd)
		if !fm.Failed {
			b.categorize()
		}
	}
	sortConditions(r.Conditions)
	for i := range r.Conditions {
		if c := &r.Conditions[i]; c.Key == CondPaths {
			c.noMatch = "no candidate path matches " + strings.Join(c.Values, ", ")
		}
	}
	if r.Body == "" {
		r.Unusable = "empty"
		b.diag(0, SeverityWarning, DiagEmptyBody, "the rule has no body: there is nothing to put in the prompt")
	}
	slices.SortStableFunc(r.Diagnostics, func(a, b Diagnostic) int { return cmp.Compare(a.Line, b.Line) })
	return r
}

// As returns the set as the engine version named read its files: the set itself, or for an
// earlier version the set as it read its files (EngineV1 and EngineV2: a legacy .clinerules
// file sent as written, a CLAUDE.md or AGENTS.md in .claude/rules read as a memory file,
// memory files shadowed by name; EngineV3 too: a Cline file whose frontmatter strict YAML
// rejects read line by line), built the first time it is asked for; asked of such a set, any
// version gives what the set it was built for gives. A decision of such a version is
// delivered, checked and explained against the rules of the set As returns for it: the sets
// hold different rules for such a file (name, body, category, conditions, diagnostics), and
// its results point to the rules of its own.
func (rs *RuleSet) As(engine string) *RuleSet {
	if rs.current != nil {
		return rs.current.As(engine)
	}
	rd := readingOf(engine)
	if rd == readingNow || rs.older[rd] == nil {
		return rs
	}
	return rs.older[rd]()
}

// Rules returns every rule, sorted by ID, shadowed and unusable ones included.
func (rs *RuleSet) Rules() []*Rule { return rs.rules }

// Diagnostics returns the diagnostics that belong to no single rule (walk limits).
func (rs *RuleSet) Diagnostics() []Diagnostic { return rs.diagnostics }

// Names returns the names rule:// resolves, sorted.
func (rs *RuleSet) Names() []string { return rs.names }

// ErrRuleNotFound is returned by [RuleSet.Resolve] for a name no usable rule has.
var ErrRuleNotFound = errors.New("rule not found")

// ErrNotRuleURI is returned by [RuleSet.Resolve] for a URI without the rule:// scheme.
var ErrNotRuleURI = errors.New("not a rule:// URI")

// RuleURIScheme prefixes a rule's name to address it.
const RuleURIScheme = "rule://"

// Resolve returns the winning rule named by "rule://<name>". Names match exactly and case
// sensitively; the error for an unknown name lists the names available.
func (rs *RuleSet) Resolve(uri string) (*Rule, error) {
	name, ok := strings.CutPrefix(uri, RuleURIScheme)
	if !ok {
		return nil, fmt.Errorf("resolve %q: %w", uri, ErrNotRuleURI)
	}
	if r, ok := rs.byName[name]; ok {
		return r, nil
	}
	avail := "none"
	if len(rs.names) > 0 {
		avail = strings.Join(rs.names, ", ")
	}
	return nil, fmt.Errorf("resolve %q: %w; available: %s", uri, ErrRuleNotFound, avail)
}

// Triggers returns the stream triggers of the winning stream-triggered rules, sorted by rule
// ID. Toggles are the caller's to apply.
func (rs *RuleSet) Triggers() []Trigger {
	var out []Trigger
	for _, r := range rs.rules {
		if r.Category == CategoryStream && r.Trigger != nil && r.ShadowedBy == "" && r.Unusable == "" {
			out = append(out, *r.Trigger)
		}
	}
	return out
}
