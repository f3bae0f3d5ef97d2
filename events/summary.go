package events

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Summary is a one-line human description of an event's payload, for logs and timelines. It
// never fails: an undecodable payload is summarized by its error.
func Summary(e Event) string {
	p, err := e.Payload()
	if err != nil {
		return "(unreadable: " + err.Error() + ")"
	}
	switch p := p.(type) {
	case *TaskStarted:
		s := "roots " + strings.Join(p.Roots, ", ")
		if p.Runtime.Name != "" {
			s += "; runtime " + strings.TrimSpace(p.Runtime.Name+" "+p.Runtime.Version)
		}
		if p.Machine != "" {
			s += "; machine " + p.Machine
		}
		if p.User != "" {
			s += "; user " + p.User
		}
		return s
	case *UserMessage:
		return quote(p.Text, 72)
	case *Mention:
		if p.Resolved != "" && p.Resolved != p.Path {
			return p.Path + " → " + p.Resolved
		}
		return p.Path
	case *ToolCall:
		return p.Tool + " " + paramsSummary(p.Params, 60)
	case *TabSnapshot:
		return fmt.Sprintf("%d open, %d visible%s", len(p.Open), len(p.Visible), firstOf(p.Visible))
	case *FileWrite:
		return p.Op + " " + p.Path
	case *SettingsChanged:
		var parts []string
		for _, kv := range [][2]string{{"mode", p.Mode}, {"provider", p.Provider}, {"model", p.Model}, {"agent_version", p.AgentVersion}} {
			if kv[1] != "" {
				parts = append(parts, kv[0]+"="+kv[1])
			}
		}
		return strings.Join(parts, " ")
	case *RuleToggled:
		if p.Enabled {
			return "enable " + p.Rule
		}
		return "disable " + p.Rule
	case *RulesSnapshot:
		return fmt.Sprintf("%d rule files", len(p.Files))
	case *Decision:
		names := make([]string, 0, len(p.Included))
		for _, r := range p.Included {
			names = append(names, r.Name)
		}
		if p.Base != 0 {
			return fmt.Sprintf("turn %d, changes since seq %d: now included [%s], %d now excluded, %d removed; %d paths new or changed, %d gone",
				p.Turn, p.Base, strings.Join(names, " "), len(p.Excluded), len(p.Removed), len(p.Context), len(p.Gone))
		}
		return fmt.Sprintf("turn %d: %d included [%s], %d excluded, %d paths",
			p.Turn, len(p.Included), strings.Join(names, " "), len(p.Excluded), len(p.Context))
	case *RuleTriggered:
		return fmt.Sprintf("%s fired on %s: %s", p.Name, p.Source, quote(p.Match, 40))
	case *Delivery, *InstructionsLoaded, *Compaction, *AgentStopped:
		return hookSummary(p)
	}
	return string(e.Type)
}

func firstOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return ": " + s[0]
}

// paramsSummary shows a tool call's string parameters, shortest keys first, cut to max runes.
func paramsSummary(raw json.RawMessage, max int) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		if s, ok := m[k].(string); ok {
			parts = append(parts, k+"="+quote(s, 40))
		}
	}
	return cut(strings.Join(parts, " "), max)
}

func quote(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	return `"` + cut(s, max) + `"`
}

func cut(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}
