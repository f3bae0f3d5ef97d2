package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"sort"
	"strings"
)

// parseOnce is f.Parse with the flag package's messages replaced by the verb's own (parseVerb).
func (f *flags) parseOnce(args []string) error { return parseVerb(f.FlagSet, args) }

// parseVerb is fs.Parse with the flag package's messages replaced by the verb's own (fs is named
// after the verb): a flag the verb does not have is named with the verb, and with the verb's
// flag it most likely meant, before the usage.
func parseVerb(fs *flag.FlagSet, args []string) error {
	usage, out := fs.Usage, fs.Output()
	var msg bytes.Buffer
	fs.Usage = func() {}
	fs.SetOutput(&msg)
	err := fs.Parse(args)
	fs.Usage = usage
	fs.SetOutput(out)
	switch {
	case errors.Is(err, flag.ErrHelp):
		fs.Usage()
	case err != nil:
		fmt.Fprintf(safeWriter{out}, "replay %s: %v%s\n", fs.Name(), err, didYouMean(fs, err))
		fs.Usage()
	}
	return err
}

// undefinedFlag is the start of the flag package's error for a flag the set does not have.
const undefinedFlag = "flag provided but not defined: -"

// didYouMean is " (did you mean --NAME?)" when err is about a flag the set does not have and
// one of the set's flags is a likely spelling of it, else "".
func didYouMean(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), undefinedFlag)
	if !ok {
		return ""
	}
	var names []string
	fs.VisitAll(func(fl *flag.Flag) { names = append(names, fl.Name) })
	if s := closestFlag(name, names); s != "" {
		return " (did you mean --" + s + "?)"
	}
	return ""
}

// closestFlag is the name among names that typed is most likely a misspelling of: the nearest
// by edit distance (a swap of two neighbours counts as one edit) within a third of its length,
// at least one (none for a one-letter flag); else the only name typed is the start of (three letters at least); else "".
// Ties go to the first name in sorted order.
func closestFlag(typed string, names []string) string {
	names = append([]string(nil), names...)
	sort.Strings(names)
	best, bestDist := "", -1
	for _, n := range names {
		d := editDistance(typed, n)
		limit := max(1, len(n)/3)
		if len(n) == 1 {
			limit = 0 // any other letter is one edit away
		}
		if d <= limit && (bestDist < 0 || d < bestDist) {
			best, bestDist = n, d
		}
	}
	if best != "" {
		return best
	}
	if len(typed) < 3 {
		return ""
	}
	var prefixed []string
	for _, n := range names {
		if strings.HasPrefix(n, typed) {
			prefixed = append(prefixed, n)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	return ""
}

// editDistance is the optimal string alignment distance between a and b: insertions,
// deletions, substitutions and swaps of two adjacent bytes each count one.
func editDistance(a, b string) int {
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}
