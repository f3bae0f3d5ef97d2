package store_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/store"
)

func ExampleDB_Append() {
	dir, err := os.MkdirTemp("", "tasklog-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	db, err := store.Open(filepath.Join(dir, "tasks.db"), nil)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()

	ctx := context.Background()
	task := uuid.New()
	ids := events.NewIDSource(nil)
	ev, err := events.New(&events.UserMessage{Text: "fix the failing test in apps/web"})
	if err != nil {
		log.Fatal(err)
	}
	ev.Time = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	ev.Turn = 1
	if ev.ID, err = ids.New(ev.Time); err != nil {
		log.Fatal(err)
	}

	res, err := db.Append(ctx, task, 0, ev)
	if err != nil {
		log.Fatal(err)
	}
	// A retry after a lost acknowledgement is answered from the log.
	again, err := db.Append(ctx, task, 0, ev)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.First, again.First, again.Duplicate)

	for ev, err := range db.Events(ctx, task, 1) {
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(ev.Seq, ev.Type)
	}
	fmt.Println(db.Verify(ctx, task))
	// Output:
	// 1 1 true
	// 1 user_message
	// <nil>
}
