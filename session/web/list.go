package web

import (
	"context"
	_ "embed"
	"html/template"
	"io"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/internal/termsafe"
	"github.com/tasklog/tasklog/store"
)

//go:embed list.html.tmpl
var listTemplate string

var listPage = template.Must(template.New("list").Parse(listTemplate))

// Task is one line of the list of tasks. Its text comes from the log, escaped (termsafe).
type Task struct {
	ID string
	// Project is the last element of the first workspace root (else of the working directory);
	// Root the whole path.
	Project, Root string
	// Agent is the runtime task_started recorded, with its version.
	Agent string
	// Title is the first prompt, on one line and cut to 80 characters.
	Title string
	// Prompts counts the user messages, Requests the decisions, Delivered the rules hooks
	// delivered (a rule delivered twice counts twice), Events the log's events.
	Prompts, Requests, Delivered int
	Events                       uint64
	// Last is the time of the last event that has one; Updated it as the page shows it.
	Last    time.Time
	Updated string
}

// titleRunes is how much of the first prompt a task's title keeps.
const titleRunes = 80

// Tasks reads every task of the store, newest first (the last event's time, then the id).
func Tasks(ctx context.Context, db store.Store) ([]Task, error) { return (*Cache)(nil).tasks(ctx, db) }

func readTask(ctx context.Context, db store.Store, info store.TaskInfo) (Task, error) {
	t := Task{ID: info.Task.String(), Events: info.Events}
	for ev, err := range db.Events(ctx, info.Task, 1) {
		if err != nil {
			return t, err
		}
		if !ev.Time.IsZero() {
			t.Last = ev.Time
		}
		switch ev.Type {
		case events.TypeDecision:
			t.Requests++
		case events.TypeTaskStarted, events.TypeUserMessage, events.TypeDelivery:
			p, err := ev.Payload()
			if err != nil {
				return t, err
			}
			switch p := p.(type) {
			case *events.TaskStarted:
				t.Agent = strings.TrimSpace(p.Runtime.Name + " " + p.Runtime.Version)
				t.Root = p.Cwd
				if len(p.Roots) > 0 {
					t.Root = p.Roots[0]
				}
				if t.Root != "" {
					t.Project = filepath.Base(t.Root)
				}
			case *events.UserMessage:
				t.Prompts++
				if t.Title == "" {
					t.Title = cut(strings.Join(strings.Fields(p.Text), " "), titleRunes)
				}
			case *events.Delivery:
				t.Delivered += len(p.Rules)
			}
		}
	}
	t.Project, t.Root, t.Agent, t.Title = termsafe.Escape(t.Project), termsafe.Escape(t.Root), termsafe.Escape(t.Agent), termsafe.Escape(t.Title)
	if !t.Last.IsZero() {
		t.Updated = t.Last.UTC().Format("2006-01-02 15:04:05")
	}
	return t, nil
}

// RenderList writes the list of tasks as an HTML page.
func RenderList(w io.Writer, tasks []Task) error { return listPage.Execute(w, tasks) }

// cut shortens s to max runes, the last one an ellipsis when it was longer.
func cut(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	return string([]rune(s)[:max-1]) + "…"
}
