package rules

import (
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"time"
)

// benchFiles makes n rules with patterns of the shapes real rule files use.
func benchFiles(n int) []File {
	var files []File
	for i := 0; i < n; i++ {
		var fm string
		switch i % 6 {
		case 0:
			fm = fmt.Sprintf("paths: [\"src/mod%d/**\"]", i)
		case 1:
			fm = fmt.Sprintf("paths: [\"**/*.ext%d\", \"**/*.x%d\"]", i%50, i)
		case 2:
			fm = fmt.Sprintf("paths: [\"packages/p%d/src/**/*.ts\"]", i)
		case 3:
			fm = fmt.Sprintf("paths: [\"apps/a%d/**/*.{ts,tsx}\", \"apps/a%d/*.json\"]", i, i)
		case 4:
			fm = fmt.Sprintf("paths: [\"**/dir%d/**\"]\nmode: act", i)
		case 5:
			fm = "mode: act"
		}
		files = append(files, File{Provider: ProviderCline, Scope: ScopeWorkspace, Root: "/ws",
			Path: fmt.Sprintf(".clinerules/r%04d.md", i), Content: []byte("---\n" + fm + "\n---\nRule body " + fmt.Sprint(i))})
	}
	return files
}

func benchContext() EvaluationContext {
	ctx := EvaluationContext{Mode: "act"}
	for j := 0; j < 100; j++ {
		var p string
		switch j % 5 {
		case 0:
			p = fmt.Sprintf("src/mod%d/file%d.ts", j*7, j)
		case 1:
			p = fmt.Sprintf("packages/p%d/src/deep/x/file%d.ts", j*3, j)
		case 2:
			p = fmt.Sprintf("apps/a%d/src/components/C%d.tsx", j, j)
		case 3:
			p = fmt.Sprintf("docs/guide/page%d.md", j)
		case 4:
			p = fmt.Sprintf("apps/a%d/", j)
		}
		ctx.Paths = append(ctx.Paths, ContextPath{Path: p, Sources: []Source{{Kind: SourceTool, Seq: uint64(j)}}})
	}
	return ctx
}

// benchmarkEvaluate evaluates n rules against 100 paths: the same paths every time (a rule set
// remembers what each path matched, as in a task whose context carries over between turns),
// or paths not seen for a long time (512 contexts in turn, more than the memory of matches
// holds, so nothing is remembered).
func benchmarkEvaluate(b *testing.B, n int) { benchmarkEvaluateN(b, n, 100) }

// benchmarkEvaluateN is benchmarkEvaluate with the first paths candidate paths of the 100.
func benchmarkEvaluateN(b *testing.B, n, paths int) {
	context := func() EvaluationContext {
		ctx := benchContext()
		ctx.Paths = ctx.Paths[:paths]
		return ctx
	}
	for _, kind := range []string{"same", "new"} {
		b.Run("paths="+kind, func(b *testing.B) {
			rs := Load(benchFiles(n))
			ctxs := []EvaluationContext{context()}
			if kind == "new" {
				ctxs = make([]EvaluationContext, 512)
				for i := range ctxs {
					ctxs[i] = context()
					for j, p := range ctxs[i].Paths {
						if !strings.HasSuffix(p.Path, "/") {
							// One folder deeper: matched by the same globs, but another path.
							ctxs[i].Paths[j].Path = fmt.Sprintf("%s/v%d/%s", path.Dir(p.Path), i, path.Base(p.Path))
						}
					}
				}
			}
			b.ReportAllocs()
			var took []time.Duration
			i := 0
			for b.Loop() {
				start := time.Now()
				_ = rs.Evaluate(ctxs[i%len(ctxs)], nil)
				took = append(took, time.Since(start))
				i++
			}
			reportPercentiles(b, took)
		})
	}
}

// reportPercentiles reports the median and 99th percentile of the timed calls, in µs.
func reportPercentiles(b *testing.B, took []time.Duration) {
	if len(took) == 0 {
		return
	}
	slices.Sort(took)
	at := func(q float64) float64 {
		return float64(took[min(len(took)-1, int(q*float64(len(took))))].Nanoseconds()) / 1e3
	}
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

// BenchmarkEvaluate1000x100 decides 1,000 rules against 100 candidate paths (budget: 2 ms).
func BenchmarkEvaluate1000x100(b *testing.B) { benchmarkEvaluate(b, 1000) }

// BenchmarkEvaluate5000x100 decides 5,000 rules against 100 candidate paths (budget: 5 ms).
func BenchmarkEvaluate5000x100(b *testing.B) { benchmarkEvaluate(b, 5000) }

// BenchmarkEvaluate1000x10 decides 1,000 rules against 10 candidate paths: against
// BenchmarkEvaluate1000x100, how evaluation grows with the paths.
func BenchmarkEvaluate1000x10(b *testing.B) { benchmarkEvaluateN(b, 1000, 10) }

// BenchmarkEvaluate50x100 decides 50 rules against 100 candidate paths (budget: 100 µs).
func BenchmarkEvaluate50x100(b *testing.B) { benchmarkEvaluate(b, 50) }

// BenchmarkLoadCached re-loads 1,000 files whose parses are cached.
// BenchmarkLoadCold loads the same 1,000 Cline files with a new Loader each time, as a hook
// process without a server does: every content parsed, as Cline and as tasklog read it.
func BenchmarkLoadCold(b *testing.B) {
	files := benchFiles(1000)
	b.ReportAllocs()
	for b.Loop() {
		_ = NewLoader(0).Load(files)
	}
}

func BenchmarkLoadCached(b *testing.B) {
	files := benchFiles(1000)
	Load(files)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		_ = Load(files)
	}
}

// BenchmarkCollectWorkspace collects the rules of a workspace of 1,000 folders and 5,000 source
// files (50 rule files) through a Reader, unchanged since the last collection: checked file by
// file and folder by folder, or watched (Linux; elsewhere the same as checked).
func BenchmarkCollectWorkspace(b *testing.B) {
	files := map[string]string{}
	for i := range 50 {
		files[fmt.Sprintf(".clinerules/r%02d.md", i)] = "rule\n"
	}
	for i := range 1000 {
		for j := range 5 {
			files[fmt.Sprintf("packages/p%02d/src/m%02d/f%d.ts", i/50, i%50, j)] = "x\n"
		}
	}
	dir := oldTree(b, files)
	for _, watched := range []bool{false, true} {
		b.Run(fmt.Sprintf("watched=%v", watched), func(b *testing.B) {
			root := Root{Name: "/ws", FS: os.DirFS(dir)}
			if watched {
				root.Dir = dir
			}
			ws := Workspace{Roots: []Root{root}}
			r := &Reader{}
			defer r.Close()
			for range 2 {
				if _, err := r.Collect(ws); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportAllocs()
			for b.Loop() {
				if got, err := r.Collect(ws); err != nil || len(got) != 50 {
					b.Fatalf("%d files, %v", len(got), err)
				}
			}
		})
	}
}
