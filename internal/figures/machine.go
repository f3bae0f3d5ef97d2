package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
)

// Machine is what the figures were measured on.
type Machine struct {
	CPU    string // model name
	Cores  int
	Memory string // "7.8 GB"
	Go     string // the toolchain that built the benchmarks
	OS     string // "Ubuntu 24.04.1 LTS, Linux 6.8.0, linux/amd64"
	Commit string // "7212d05", with " (uncommitted changes)" when the tree is dirty
}

// ReadMachine describes this machine and the checkout at root. What cannot be read is written
// "unknown".
func ReadMachine(root string) Machine {
	m := Machine{CPU: "unknown CPU", Cores: runtime.NumCPU(), Memory: "unknown", Go: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH, Commit: "unknown"}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		if cpu := CPUModel(string(b)); cpu != "" {
			m.CPU = cpu
		}
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if kb, ok := MemTotalKB(string(b)); ok {
			m.Memory = FormatRange(Metric{Kind: Bytes}, []float64{float64(kb) * 1024})
		}
	}
	if out, err := goCmd(root, "env", "GOVERSION"); err == nil && out != "" {
		m.Go = out
	}
	var osParts []string
	if b, err := os.ReadFile("/etc/os-release"); err == nil {
		if name := osRelease(string(b)); name != "" {
			osParts = append(osParts, name)
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		osParts = append(osParts, "Linux "+strings.TrimSpace(string(b)))
	}
	m.OS = strings.Join(append(osParts, m.OS), ", ")
	if out, err := gitCmd(root, "rev-parse", "--short", "HEAD"); err == nil {
		m.Commit = out
		if st, err := gitCmd(root, "status", "--porcelain", "--untracked-files=no"); err == nil && st != "" {
			m.Commit += " (with uncommitted changes)"
		}
	}
	return m
}

// CPUModel is the first "model name" of /proc/cpuinfo's text.
func CPUModel(cpuinfo string) string {
	sc := bufio.NewScanner(strings.NewReader(cpuinfo))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.Join(strings.Fields(v), " ")
		}
	}
	return ""
}

// MemTotalKB is MemTotal of /proc/meminfo's text, in kB.
func MemTotalKB(meminfo string) (int64, bool) {
	sc := bufio.NewScanner(strings.NewReader(meminfo))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "MemTotal:" {
			n, err := strconv.ParseInt(f[1], 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// osRelease is PRETTY_NAME of /etc/os-release's text.
func osRelease(text string) string {
	for line := range strings.Lines(text) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

// Load is the load averages over 1, 5 and 15 minutes.
type Load [3]float64

// ReadLoad reads /proc/loadavg.
func ReadLoad() (Load, error) {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return Load{}, fmt.Errorf("reading the load average: %w", err)
	}
	return ParseLoad(string(b))
}

// ParseLoad reads the first three fields of /proc/loadavg's text.
func ParseLoad(text string) (Load, error) {
	f := strings.Fields(text)
	if len(f) < 3 {
		return Load{}, fmt.Errorf("load average %q: want three numbers", strings.TrimSpace(text))
	}
	var l Load
	for i := range l {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil {
			return Load{}, fmt.Errorf("load average %q: %w", strings.TrimSpace(text), err)
		}
		l[i] = v
	}
	return l, nil
}

// String is the load as uptime writes it.
func (l Load) String() string { return fmt.Sprintf("%.2f, %.2f, %.2f", l[0], l[1], l[2]) }

func goCmd(dir string, args ...string) (string, error)  { return output(dir, "go", args...) }
func gitCmd(dir string, args ...string) (string, error) { return output(dir, "git", args...) }

// output runs name with args in dir and returns its trimmed standard output.
func output(dir, name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	return strings.TrimSpace(string(out)), err
}
