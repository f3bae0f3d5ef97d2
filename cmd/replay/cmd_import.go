package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/tasklog/tasklog/events"
	"github.com/tasklog/tasklog/session"
)

// cmdImport reads JSON Lines logs, or with --from an agent's sessions (cmd_import_agent.go).
func cmdImport(args []string, stdout, stderr io.Writer) int {
	f := newFlags("import", "FILE.jsonl|FOLDER|-... | --from cline|claude-code|pi|codex PATH... [--workspace DIR | --root ORIGINAL=DIR]", stderr).withJSON()
	from := f.String("from", "", "import sessions of this agent instead of JSON Lines logs: cline, claude-code, pi or codex")
	keep := f.Bool("keep-content", false, "with --from: keep large payloads (file contents, tool outputs) instead of their length and SHA-256")
	verifyKey := f.String("verify-key", "", "refuse a file unless every task in it is an export signed with the key of this public key file (ssh-keygen -t ed25519 writes KEY.pub)")
	var wf workspaceFlags
	wf.register(f)
	args, code := f.parseOrExit(args, 1, -1)
	if code >= 0 {
		return code
	}
	if *from != "" {
		if *verifyKey != "" {
			fmt.Fprintln(stderr, "replay import: --verify-key checks signed exports; an agent's sessions carry no signature")
			return exitUsage
		}
		return importAgent(f, *from, *keep, &wf, args, stdout, stderr)
	}
	if *keep || wf.Workspace != "" || len(wf.Roots) > 0 || wf.Home != "" || wf.Remote != "" {
		fmt.Fprintln(stderr, "replay import: --keep-content, --workspace, --root, --home and --remote-rules go with --from;"+
			" a JSON Lines log already holds its decisions")
		return exitUsage
	}
	opts := session.ImportOptions{Now: time.Now}
	if *verifyKey != "" {
		key, err := readVerifyKey(*verifyKey)
		if err != nil {
			return fail(stderr, err)
		}
		opts.VerifyKey = key
	}
	return importLogs(f, opts, args, stdout, stderr)
}

// importLogs imports JSON Lines logs: files, the .jsonl files of folders, standard input.
func importLogs(f *flags, opts session.ImportOptions, args []string, stdout, stderr io.Writer) int {
	files, err := importNames(args, stderr)
	if err != nil {
		return fail(stderr, err)
	}
	spool := newImportSpool()
	defer spool.close()
	spool.sweep()
	opts.CopyTo = spool.create
	// Every file is opened, and an empty one said so, before the database is: a name that does
	// not exist leaves no database behind.
	inputs, err := openInputs(files)
	defer func() {
		for _, in := range inputs {
			if in != os.Stdin {
				in.Close()
			}
		}
	}()
	if err != nil {
		return fail(stderr, err)
	}
	var db *writeDB
	defer func() {
		if db != nil {
			db.Close()
		}
	}()
	var rows []importedRow
	for i, name := range files {
		if name == "-" {
			name = "standard input"
		}
		r, empty, err := blank(inputs[i])
		if err != nil {
			return fail(stderr, fmt.Errorf("read %s: %w", name, err))
		}
		if empty {
			fmt.Fprintf(safeWriter{stderr}, "replay import: %s holds no events: nothing imported from it\n", name)
			continue
		}
		if db == nil {
			if db, err = f.open(); err != nil {
				return fail(stderr, err)
			}
		}
		got, err := session.Import(context.Background(), db.Store, r, name, opts)
		if err != nil {
			return fail(stderr, err)
		}
		for _, t := range got {
			row := importedRow{File: name, Task: t.Task.String(), Events: t.Events, Appended: t.Appended}
			if t.Verified {
				row.SignedBy = events.KeyFingerprint(opts.VerifyKey)
			}
			rows = append(rows, row)
			if !f.json {
				printImported(stdout, row)
			}
		}
	}
	if f.json {
		if rows == nil {
			rows = []importedRow{}
		}
		if err := printJSON(stdout, rows); err != nil {
			return fail(stderr, err)
		}
	}
	return exitOK
}

// importedRow is what import says of one task it read.
type importedRow struct {
	File     string `json:"file"`
	Task     string `json:"task"`
	Events   int    `json:"events"`
	Appended int    `json:"appended"`
	SignedBy string `json:"signed_by,omitempty"`
}

func printImported(w io.Writer, r importedRow) {
	signed := ""
	if r.SignedBy != "" {
		signed = ", signed by " + r.SignedBy
	}
	fmt.Fprintf(safeWriter{w}, "%s\t%s\t%s, %d new%s\n", r.File, r.Task, plural(r.Events, "event"), r.Appended, signed)
}

// openInputs opens every file to import ("-" is standard input), and stops at the first that
// cannot be; the caller closes what it returns.
func openInputs(files []string) ([]*os.File, error) {
	inputs := make([]*os.File, 0, len(files))
	for _, name := range files {
		if name == "-" {
			inputs = append(inputs, os.Stdin)
			continue
		}
		in, err := os.Open(name)
		if err != nil {
			return inputs, err
		}
		inputs = append(inputs, in)
	}
	return inputs, nil
}

// blank reports whether in holds nothing but white space, and returns a reader of all of in. A
// file that can seek is put back where it was and returned itself, so that the import reads it
// twice without a copy; otherwise the white space read is put back in front of the rest (line
// numbers in errors stay right).
func blank(in *os.File) (io.Reader, bool, error) {
	start, seekErr := in.Seek(0, io.SeekCurrent)
	r := bufio.NewReader(in)
	var lead []byte
	for {
		b, err := r.ReadByte()
		if err == io.EOF {
			return nil, true, nil
		}
		if err != nil {
			return nil, false, err
		}
		if b != ' ' && b != '\t' && b != '\n' && b != '\r' {
			if seekErr == nil {
				if _, err := in.Seek(start, io.SeekStart); err != nil {
					return nil, false, err
				}
				return in, false, nil
			}
			r.UnreadByte()
			return io.MultiReader(bytes.NewReader(lead), r), false, nil
		}
		lead = append(lead, b)
	}
}

// importNames expands the arguments of replay import: a folder stands for the .jsonl files in
// it (not in its subfolders), in name order, and "-" for standard input. What a folder gave
// is said on stderr.
func importNames(args []string, stderr io.Writer) ([]string, error) {
	var names []string
	for _, a := range args {
		if a == "-" {
			names = append(names, a)
			continue
		}
		fi, err := os.Stat(a)
		if err != nil || !fi.IsDir() {
			names = append(names, a) // opening it says what is wrong
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, err
		}
		var found []string
		others := 0
		for _, e := range entries { // ReadDir sorts by name
			p := filepath.Join(a, e.Name())
			if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
				continue
			}
			if filepath.Ext(e.Name()) != ".jsonl" {
				others++
				continue
			}
			found = append(found, p)
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("folder %s holds no .jsonl file (its subfolders are not read): nothing to import; "+
				"for an agent's sessions, pass --from AGENT", a)
		}
		msg := fmt.Sprintf("replay import: %s: %s, in name order", a, plural(len(found), ".jsonl file"))
		if others > 0 {
			msg += fmt.Sprintf("; %s not named .jsonl left alone", plural(others, "other file"))
		}
		fmt.Fprintln(safeWriter{stderr}, msg)
		names = append(names, found...)
	}
	return names, nil
}
