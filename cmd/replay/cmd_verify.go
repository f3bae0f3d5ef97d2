package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/google/uuid"

	"github.com/tasklog/tasklog/session"
	"github.com/tasklog/tasklog/store"
)

// taskResult is verify's verdict on one task.
type taskResult struct {
	Task string `json:"task"`
	// Verdict is "ok", "fail" or "none" (the store could not be read to the task's end).
	Verdict string          `json:"verdict"`
	OK      bool            `json:"ok"`
	Chain   string          `json:"chain_error,omitempty"`
	Replay  *session.Report `json:"replay,omitempty"`
	// Unread is the store's error when the task could not be read to its end: no verdict.
	Unread string `json:"read_error,omitempty"`
}

func cmdVerify(args []string, stdout, stderr io.Writer) int {
	f := newFlags("verify", "[TASK...|--all]", stderr).withJSON()
	all := f.Bool("all", false, "verify every task (the default when no task is named)")
	pos, code := f.parseOrExit(args, 0, -1)
	if code >= 0 {
		return code
	}
	db, err := f.openReadOnly()
	if err != nil {
		return fail(stderr, err)
	}
	defer db.Close()
	tasks, err := tasksOrAll(db, pos, *all)
	if err != nil {
		return fail(stderr, err)
	}
	if len(tasks) == 0 && !f.json {
		fmt.Fprintf(stdout, "no tasks in %s: nothing to verify\n", db.Path())
		return exitOK
	}
	// What the collector's setting is does not change what verify prints, so it goes unsaid.
	collectorDefault(os.Getenv, session.VerifyGCPercent, "verify's")
	return verifyAndReport(db, tasks, f.json, stdout, stderr)
}

// verifyAndReport verifies the tasks of db, prints each verdict (as JSON with asJSON) and
// returns verify's exit status: exitFailed when a task failed, whether or not another could not
// be read; else exitUsage, with a line on stderr, when one could not be read to its end.
func verifyAndReport(db session.ChainChecker, tasks []uuid.UUID, asJSON bool, stdout, stderr io.Writer) int {
	bar := newProgress(stderr, "verify", len(tasks))
	results, failed, unread, err := verifyTasks(context.Background(), db, tasks, bar.set)
	if err != nil {
		return fail(stderr, err)
	}
	bar.done()
	if asJSON {
		if err := printJSON(stdout, results); err != nil {
			return fail(stderr, err)
		}
	} else {
		for _, r := range results {
			printVerdict(safeWriter{stdout}, r)
		}
	}
	switch {
	case failed:
		return exitFailed
	case unread:
		fmt.Fprintln(stderr, "replay verify: the store could not be read to the end of every task: run verify again for a verdict")
		return exitUsage
	}
	return exitOK
}

// verifyTasks verifies each task, in order, and says whether one failed (a verdict) and whether
// one could not be read to its end (no verdict); progress is told how many are done. An error
// that is neither stops it.
func verifyTasks(ctx context.Context, db session.ChainChecker, tasks []uuid.UUID, progress func(int)) (results []taskResult, failed, unread bool, err error) {
	results = make([]taskResult, 0, len(tasks))
	for i, task := range tasks {
		r := taskResult{Task: task.String(), Verdict: "fail"}
		rep, err := session.Verify(ctx, db, task)
		switch {
		case errors.As(err, new(*session.ReadError)):
			// No verdict on this task; the others are verified all the same.
			r.Verdict, r.Unread = "none", err.Error()
		case errors.As(err, new(*session.ReplayError)) || errors.Is(err, store.ErrChainBroken) || errors.Is(err, store.ErrCorrupt):
			r.Chain = err.Error()
		case err != nil:
			return nil, false, false, err
		default:
			r.Replay = &rep
			if rep.OK() {
				r.Verdict = "ok"
			}
		}
		r.OK = r.Verdict == "ok"
		failed = failed || r.Verdict == "fail"
		unread = unread || r.Verdict == "none"
		results = append(results, r)
		progress(i + 1)
	}
	return results, failed, unread, nil
}

func printVerdict(w io.Writer, r taskResult) {
	switch {
	case r.Unread != "":
		fmt.Fprintf(w, "?    %s: no verdict: the store could not be read (%s); nothing was found wrong in what was read\n", r.Task, r.Unread)
	case r.Chain != "":
		fmt.Fprintf(w, "FAIL %s: %s\n", r.Task, r.Chain)
	case !r.OK:
		fmt.Fprintf(w, "FAIL %s: %s differ; first: %s\n", r.Task, r.Replay.Tally(), r.Replay.Changes[0])
		for _, c := range r.Replay.Changes {
			fmt.Fprintf(w, "  %s\n", c)
		}
	default:
		fmt.Fprintf(w, "ok   %s: %s, %s reproduced\n", r.Task, plural(int(r.Replay.Events), "event"), plural(r.Replay.Decisions, "decision"))
	}
}

func tasksOrAll(db store.Store, args []string, all bool) ([]uuid.UUID, error) {
	if len(args) > 0 && !all {
		out := make([]uuid.UUID, len(args))
		for i, a := range args {
			t, err := resolveTask(db, a)
			if err != nil {
				return nil, err
			}
			out[i] = t
		}
		return out, nil
	}
	infos, err := db.Tasks()
	if err != nil {
		return nil, err
	}
	out := make([]uuid.UUID, len(infos))
	for i, t := range infos {
		out[i] = t.Task
	}
	return out, nil
}

func cmdDiff(args []string, stdout, stderr io.Writer) int {
	f := newFlags("diff", "[TASK] --workspace DIR", stderr).withJSON()
	var wf workspaceFlags
	wf.register(f)
	cfgFile := f.String("config", "", "engine configuration (JSON object) to replay with instead of the recorded one")
	pos, code := f.parseOrExit(args, 0, 1)
	if code >= 0 {
		return code
	}
	if len(wf.Roots) == 0 && wf.Workspace == "" && *cfgFile == "" {
		fmt.Fprintln(stderr, "replay diff: give --workspace DIR (or --root) with the new rules, or --config FILE")
		return exitUsage
	}
	db, task, err := f.openTaskOrLatest(pos, "diff", stderr)
	if err != nil {
		return fail(stderr, err)
	}
	defer db.Close()
	ctx := context.Background()
	opts := session.ReplayOptions{}
	if wf.Workspace != "" || len(wf.Roots) > 0 {
		recorded, err := session.RecordedRoots(ctx, db, task)
		if err != nil {
			return fail(stderr, err)
		}
		ws, err := wf.RulesWorkspace(recorded)
		if err != nil {
			return fail(stderr, err)
		}
		opts.Workspace = &ws
	}
	if *cfgFile != "" {
		cfg, err := readConfig(*cfgFile)
		if err != nil {
			return fail(stderr, err)
		}
		opts.Config = &cfg
	}
	rep, err := session.Replay(ctx, db, task, opts)
	if err != nil {
		return fail(stderr, err)
	}
	stdout = safeWriter{stdout}
	if f.json {
		if err := printJSON(stdout, rep); err != nil {
			return fail(stderr, err)
		}
	} else if rep.OK() {
		fmt.Fprintf(stdout, "no change: all %s of %s are the same under the new rules\n", plural(rep.Decisions, "decision"), task)
	} else {
		fmt.Fprintf(stdout, "%d of %s of %s change:\n", rep.Changed, plural(rep.Decisions, "decision"), task)
		fmt.Fprintf(stdout, "%5s  %-28s  %-22s  %-22s  %s\n", "TURN", "RULE", "RECORDED", "NOW", "WHY")
		for _, c := range rep.Changes {
			fmt.Fprintf(stdout, "%5d  %-28s  %-22s  %-22s  %s\n", c.Turn, c.Rule, c.Recorded, c.Now, c.Why)
		}
	}
	if !rep.OK() {
		return exitFailed
	}
	return exitOK
}
