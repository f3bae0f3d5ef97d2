package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tasklog/tasklog/session"
)

// TestReportAuditEscapes: the audit table shows rule names, paths and reasons from the log as
// text, in the cells and in the attributes, never as markup.
func TestReportAuditEscapes(t *testing.T) {
	hostile := `<img src=x onerror=alert(1)>"'`
	data := Page{Task: "t", AgentLoads: "reported", Audit: []AuditRequest{{
		Position: session.Position{Prompt: 1, Request: 1}, Turn: 1, Seq: 4, Shown: true, Findings: 1,
		Rules: []AuditRule{{Rule: hostile, Path: ".clinerules/" + hostile + ".md", Decision: "applies",
			Reason: "matched", Detail: hostile, AgentLoaded: "no", Held: "no", Delivered: true,
			Findings: []string{"missed_by_agent"}}},
	}}}
	var b bytes.Buffer
	if err := Render(&b, data); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if strings.Contains(page, "<img") {
		t.Errorf("the audit table put a path from the log into the page as markup:\n%s", page)
	}
	for _, want := range []string{
		`<td class="path mono" title="&lt;img src=x onerror=alert(1)&gt;&#34;&#39;">.clinerules/&lt;img src=x onerror=alert(1)&gt;&#34;&#39;.md</td>`,
		`<td class="decision" data-label="tasklog" title="&lt;img src=x onerror=alert(1)&gt;&#34;&#39;">applies (matched)</td>`,
		`<td data-label="delivered">yes</td>`,
		`<td class="findings" data-label="findings">missed_by_agent</td>`,
		`<option value="0" selected>prompt 1, request 1 · 1 finding</option>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s", want)
		}
	}
}
