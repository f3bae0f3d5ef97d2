package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasklog/tasklog/rules"
)

const (
	// pageSize is the most entries one page of a list holds.
	pageSize = 50
	// namesShown is the most names an error lists of what exists.
	namesShown = 20
	// ruleURITemplate addresses every rule by name, or by id; {+name} lets a name hold "/".
	ruleURITemplate = "rule://{+name}"
)

// ruleSet reads the rule files as they are now and loads them. The reader reads again only
// the files and folders that changed since the last call.
func (s *server) ruleSet(recorded []string) (*rules.RuleSet, rules.Workspace, error) {
	ws, err := s.cfg.Folders.RulesWorkspaceOf(recorded)
	if err != nil {
		return nil, ws, err
	}
	files, err := s.reader.Collect(ws)
	if err != nil {
		return nil, ws, fmt.Errorf("read the rule files: %w", err)
	}
	return rules.Load(files), ws, nil
}

// ruleEntry is a rule with the URI that reaches it: rule://NAME for the rule its name
// resolves to, rule://ID for any other (a shadowed rule, an unusable one).
type ruleEntry struct {
	uri  string
	rule *rules.Rule
}

// ruleEntries lists every rule of the set with its URI, sorted by URI.
func ruleEntries(rs *rules.RuleSet) []ruleEntry {
	out := make([]ruleEntry, 0, len(rs.Rules()))
	for _, r := range rs.Rules() {
		out = append(out, ruleEntry{uri: r.Address(), rule: r})
	}
	slices.SortFunc(out, func(a, b ruleEntry) int { return strings.Compare(a.uri, b.uri) })
	return out
}

// ruleURIKey is the name or id a rule:// URI holds, percent-decoded.
func ruleURIKey(uri string) string {
	key := strings.TrimPrefix(uri, rules.RuleURIScheme)
	if dec, err := url.PathUnescape(key); err == nil {
		return dec
	}
	return key
}

// findRule finds a rule by name (the one rule://NAME resolves to) or by id.
func findRule(rs *rules.RuleSet, key string) *rules.Rule {
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

// ruleResource describes a rule for resources/list: its description when it has one, and its
// kind and file either way.
func ruleResource(e ruleEntry) *sdk.Resource {
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
	meta := sdk.Meta{"id": r.ID, "category": string(r.Category), "path": r.DisplayPath}
	if r.ShadowedBy != "" {
		meta["shadowed_by"] = r.ShadowedBy
	}
	name := r.Name
	if e.uri != rules.RuleURI(r.Name) {
		name = r.ID
	}
	return &sdk.Resource{URI: e.uri, Name: name, Title: r.DisplayPath, Description: desc, MIMEType: "text/markdown",
		Size: int64(len(r.Body)), Meta: meta}
}

func (s *server) addResources(srv *sdk.Server) {
	srv.AddResourceTemplate(&sdk.ResourceTemplate{
		Name:        "rule",
		Title:       "A rule file of the workspace",
		URITemplate: ruleURITemplate,
		MIMEType:    "text/markdown",
		Description: "The body of a rule, by its name (rule://NAME, as the prompt names it) or by its id (rule://ID: a shadowed rule, or a memory file whose name another rule holds).",
	}, s.readRule)
	// The rules are read again for every list, so the list is the folders' as they are now,
	// not as they were when the server started.
	srv.AddReceivingMiddleware(func(next sdk.MethodHandler) sdk.MethodHandler {
		return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
			if lr, ok := req.(*sdk.ListResourcesRequest); ok && method == "resources/list" {
				return s.listResources(lr)
			}
			return next(ctx, method, req)
		}
	})
}

func (s *server) listResources(req *sdk.ListResourcesRequest) (*sdk.ListResourcesResult, error) {
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
	entries := ruleEntries(rs)
	i, _ := slices.BinarySearchFunc(entries, after, func(e ruleEntry, uri string) int { return strings.Compare(e.uri, uri) })
	if i < len(entries) && entries[i].uri == after {
		i++
	}
	// The list is the folders' as they are now: a client should not keep it.
	res := &sdk.ListResourcesResult{Resources: []*sdk.Resource{}, Cacheable: sdk.Cacheable{CacheScope: "private"}}
	for _, e := range entries[i:min(len(entries), i+pageSize)] {
		res.Resources = append(res.Resources, ruleResource(e))
	}
	if i+pageSize < len(entries) {
		res.NextCursor = base64.RawURLEncoding.EncodeToString([]byte(entries[i+pageSize-1].uri))
	}
	return res, nil
}

func (s *server) readRule(_ context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	rs, _, err := s.ruleSet(nil)
	if err != nil {
		return nil, err
	}
	uri := req.Params.URI
	r := findRule(rs, ruleURIKey(uri))
	if r == nil {
		data, _ := json.Marshal(map[string]string{"uri": uri})
		return nil, &jsonrpc.Error{Code: sdk.CodeResourceNotFound, Data: data,
			Message: fmt.Sprintf("no rule %q in the workspace; the rules are: %s", ruleURIKey(uri), ruleNames(rs))}
	}
	meta := sdk.Meta{"id": r.ID, "category": string(r.Category), "path": r.DisplayPath}
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{
		URI: uri, MIMEType: "text/markdown", Text: r.Body, Meta: meta,
	}}}, nil
}

// ruleNames lists the names rule:// resolves, at most namesShown of them.
func ruleNames(rs *rules.RuleSet) string {
	return bounded(rs.Names(), namesShown)
}

// bounded joins at most n of names, saying how many more there are.
func bounded(names []string, n int) string {
	if len(names) == 0 {
		return "none"
	}
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:n], ", "), len(names)-n)
}
