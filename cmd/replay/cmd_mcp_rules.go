package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasklog/tasklog/rules"
)

const (
	// mcpPageSize is the most entries one page of a list holds.
	mcpPageSize = 50
	// mcpNamesShown is the most names an error lists of what exists.
	mcpNamesShown = 20
	// mcpRuleURITemplate addresses every rule by name, or by id; {+name} lets a name hold "/".
	mcpRuleURITemplate = "rule://{+name}"
)

// baseWorkspace is the workspace read when no task says which roots it recorded: --workspace
// named by its absolute path, and each --root ROOT=DIR named ROOT.
func (c *mcpConfig) baseWorkspace() (rules.Workspace, error) {
	var ws rules.Workspace
	if c.wf.workspace != "" {
		ws.Roots = append(ws.Roots, rules.Root{Name: filepath.ToSlash(c.wf.workspace), FS: os.DirFS(c.wf.workspace), Dir: c.wf.workspace})
	}
	for _, r := range c.wf.roots {
		root, dir, ok := strings.Cut(r, "=")
		if !ok || root == "" || dir == "" {
			return ws, fmt.Errorf("--root %q: want ROOT=DIR", r)
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return ws, fmt.Errorf("--root %q: %q is not a folder", r, dir)
		}
		ws.Roots = append(ws.Roots, rules.Root{Name: root, FS: os.DirFS(dir)})
	}
	var err error
	if ws.Home, err = c.wf.homeFS(); err != nil {
		return ws, err
	}
	ws.Remote, err = c.wf.remoteRules()
	return ws, err
}

// workspace is the rule engine's view of the folders: under the roots a task recorded, as
// replay diff reads them, or without a task under the names baseWorkspace gives.
func (c *mcpConfig) workspace(recorded []string) (rules.Workspace, error) {
	if len(recorded) == 0 {
		return c.baseWorkspace()
	}
	return c.wf.rulesWorkspace(recorded)
}

// ruleSet reads the rule files as they are now and loads them. The reader reads again only
// the files and folders that changed since the last call.
func (s *mcpServer) ruleSet(recorded []string) (*rules.RuleSet, rules.Workspace, error) {
	ws, err := s.cfg.workspace(recorded)
	if err != nil {
		return nil, ws, err
	}
	files, err := s.reader.Collect(ws)
	if err != nil {
		return nil, ws, fmt.Errorf("read the rule files: %w", err)
	}
	return rules.Load(files), ws, nil
}

// mcpRuleEntry is a rule with the URI that reaches it: rule://NAME for the rule its name
// resolves to, rule://ID for any other (a shadowed rule, an unusable one).
type mcpRuleEntry struct {
	uri  string
	rule *rules.Rule
}

// mcpRuleEntries lists every rule of the set with its URI, sorted by URI.
func mcpRuleEntries(rs *rules.RuleSet) []mcpRuleEntry {
	out := make([]mcpRuleEntry, 0, len(rs.Rules()))
	for _, r := range rs.Rules() {
		key := r.ID
		if w, err := rs.Resolve(rules.RuleURIScheme + r.Name); err == nil && w == r {
			key = r.Name
		}
		out = append(out, mcpRuleEntry{uri: mcpRuleURI(key), rule: r})
	}
	slices.SortFunc(out, func(a, b mcpRuleEntry) int { return strings.Compare(a.uri, b.uri) })
	return out
}

// mcpRuleURI is rule://key with what a URI may not hold percent-encoded; a plain name stays as
// the prompt spells it.
func mcpRuleURI(key string) string {
	const keep = "-._~/:@!$&'()*+,;="
	var b strings.Builder
	b.WriteString(rules.RuleURIScheme)
	for i := 0; i < len(key); i++ {
		c := key[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(keep, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// mcpRuleURIKey is the name or id a rule:// URI holds, percent-decoded.
func mcpRuleURIKey(uri string) string {
	key := strings.TrimPrefix(uri, rules.RuleURIScheme)
	if dec, err := url.PathUnescape(key); err == nil {
		return dec
	}
	return key
}

// mcpFindRule finds a rule by name (the one rule://NAME resolves to) or by id.
func mcpFindRule(rs *rules.RuleSet, key string) *rules.Rule {
	if r, err := rs.Resolve(rules.RuleURIScheme + key); err == nil {
		return r
	}
	for _, r := range rs.Rules() {
		if r.ID == key {
			return r
		}
	}
	return nil
}

// mcpRuleResource describes a rule for resources/list: its description when it has one, and its
// kind and file either way.
func mcpRuleResource(e mcpRuleEntry) *mcp.Resource {
	r := e.rule
	desc := r.Description
	kind := fmt.Sprintf("%s rule, %s", r.Category, r.DisplayPath)
	switch {
	case r.ShadowedBy != "":
		kind += ", shadowed by " + r.ShadowedBy
	case r.Unusable != "":
		kind += ", unusable: " + r.Unusable
	}
	if desc == "" {
		desc = kind
	}
	meta := mcp.Meta{"id": r.ID, "category": string(r.Category), "path": r.DisplayPath}
	if r.ShadowedBy != "" {
		meta["shadowed_by"] = r.ShadowedBy
	}
	name := r.Name
	if e.uri != mcpRuleURI(r.Name) {
		name = r.ID
	}
	return &mcp.Resource{URI: e.uri, Name: name, Title: r.DisplayPath, Description: desc, MIMEType: "text/markdown",
		Size: int64(len(r.Body)), Meta: meta}
}

func (s *mcpServer) addResources(srv *mcp.Server) {
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "rule",
		Title:       "A rule file of the workspace",
		URITemplate: mcpRuleURITemplate,
		MIMEType:    "text/markdown",
		Description: "The body of a rule, by its name (rule://NAME, as the prompt names it) or, for a shadowed rule, by its id.",
	}, s.readRule)
	// The rules are read again for every list, so the list is the folders' as they are now,
	// not as they were when the server started.
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if lr, ok := req.(*mcp.ListResourcesRequest); ok && method == "resources/list" {
				return s.listResources(lr)
			}
			return next(ctx, method, req)
		}
	})
}

func (s *mcpServer) listResources(req *mcp.ListResourcesRequest) (*mcp.ListResourcesResult, error) {
	rs, _, err := s.ruleSet(nil)
	if err != nil {
		return nil, err
	}
	after := ""
	if req.Params != nil && req.Params.Cursor != "" {
		b, err := base64.RawURLEncoding.DecodeString(req.Params.Cursor)
		if err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("invalid cursor %q", req.Params.Cursor)}
		}
		after = string(b)
	}
	entries := mcpRuleEntries(rs)
	i, _ := slices.BinarySearchFunc(entries, after, func(e mcpRuleEntry, uri string) int { return strings.Compare(e.uri, uri) })
	if i < len(entries) && entries[i].uri == after {
		i++
	}
	// The list is the folders' as they are now: a client should not keep it.
	res := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}, Cacheable: mcp.Cacheable{CacheScope: "private"}}
	for _, e := range entries[i:min(len(entries), i+mcpPageSize)] {
		res.Resources = append(res.Resources, mcpRuleResource(e))
	}
	if i+mcpPageSize < len(entries) {
		res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(entries[i+mcpPageSize-1].uri))
	}
	return res, nil
}

func (s *mcpServer) readRule(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	rs, _, err := s.ruleSet(nil)
	if err != nil {
		return nil, err
	}
	uri := req.Params.URI
	r := mcpFindRule(rs, mcpRuleURIKey(uri))
	if r == nil {
		data, _ := json.Marshal(map[string]string{"uri": uri})
		return nil, &jsonrpc.Error{Code: mcp.CodeResourceNotFound, Data: data,
			Message: fmt.Sprintf("no rule %q in the workspace; the rules are: %s", mcpRuleURIKey(uri), mcpRuleNames(rs))}
	}
	meta := mcp.Meta{"id": r.ID, "category": string(r.Category), "path": r.DisplayPath}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{
		URI: uri, MIMEType: "text/markdown", Text: r.Body, Meta: meta,
	}}}, nil
}

// mcpRuleNames lists the names rule:// resolves, at most mcpNamesShown of them.
func mcpRuleNames(rs *rules.RuleSet) string {
	return mcpBounded(rs.Names(), mcpNamesShown)
}

// mcpBounded joins at most n of names, saying how many more there are.
func mcpBounded(names []string, n int) string {
	if len(names) == 0 {
		return "none"
	}
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}
