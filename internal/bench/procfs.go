package bench

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// proc is what Linux's /proc tells of a process at one moment.
type proc struct {
	PID  int
	PPID int
	// CPU is the process's user plus system time (utime + stime).
	CPU time.Duration
	// ChildCPU is the CPU time of its children that have exited and been
	// waited for (cutime + cstime).
	ChildCPU time.Duration
	// RSS is the resident set size now (VmRSS) and PeakRSS its high-water
	// mark over the process's life (VmHWM), in bytes.
	RSS, PeakRSS int64
}

// readProc reads /proc/PID/stat and /proc/PID/status.
func readProc(pid int) (proc, error) {
	dir := filepath.Join("/proc", strconv.Itoa(pid))
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return proc{}, fmt.Errorf("reading the process's CPU time: %w", err)
	}
	p, err := parseStat(stat, clockTick())
	if err != nil {
		return proc{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	status, err := os.ReadFile(filepath.Join(dir, "status"))
	if err != nil {
		return proc{}, fmt.Errorf("reading the process's memory: %w", err)
	}
	if p.RSS, p.PeakRSS, err = parseStatus(status); err != nil {
		return proc{}, fmt.Errorf("/proc/%d/status: %w", pid, err)
	}
	return p, nil
}

// parseStat reads the pid, ppid and CPU times of a /proc/PID/stat line,
// whose fields are described in proc(5). The command name (field 2) is in
// parentheses and may itself hold spaces and parentheses, so the fields
// are counted from the last ')'.
func parseStat(b []byte, tick time.Duration) (proc, error) {
	open, closing := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	if open < 0 || closing < open {
		return proc{}, errors.New("no command name in parentheses")
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:open])))
	if err != nil {
		return proc{}, fmt.Errorf("pid: %w", err)
	}
	// Fields from 3 (state) on; field k is f[k-3].
	f := strings.Fields(string(b[closing+1:]))
	if len(f) < 15 {
		return proc{}, fmt.Errorf("%d fields after the command name, want at least 15", len(f))
	}
	var n [5]int64
	for i, k := range []int{4, 14, 15, 16, 17} { // ppid, utime, stime, cutime, cstime
		if n[i], err = strconv.ParseInt(f[k-3], 10, 64); err != nil {
			return proc{}, fmt.Errorf("field %d: %w", k, err)
		}
	}
	return proc{
		PID:      pid,
		PPID:     int(n[0]),
		CPU:      time.Duration(n[1]+n[2]) * tick,
		ChildCPU: time.Duration(n[3]+n[4]) * tick,
	}, nil
}

// parseStatus reads VmRSS and VmHWM (in kB) from /proc/PID/status. A
// process without them (a zombie, a kernel thread) has 0 for both.
func parseStatus(b []byte) (rss, hwm int64, err error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		num, unit, _ := strings.Cut(strings.TrimSpace(val), " ")
		if unit != "kB" {
			return 0, 0, fmt.Errorf("%s in unit %q, want kB", key, unit)
		}
		kb, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", key, err)
		}
		if key == "VmRSS" {
			rss = kb << 10
		} else {
			hwm = kb << 10
		}
	}
	return rss, hwm, sc.Err()
}

// procTree returns the CPU time of a process and its descendants: its own
// CPU and that of its exited children, plus the CPU of the children alive
// now (found by their parent pid in /proc). For a PostgreSQL postmaster it
// is the CPU of the whole server, backends included.
func procTree(pid int) (time.Duration, error) {
	root, err := readProc(pid)
	if err != nil {
		return 0, err
	}
	total := root.CPU + root.ChildCPU
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	tick := clockTick()
	for _, d := range dirs {
		child, err := strconv.Atoi(d.Name())
		if err != nil || child == pid {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		if p, err := parseStat(b, tick); err == nil && p.PPID == pid {
			total += p.CPU + p.ChildCPU
		}
	}
	return total, nil
}

var (
	tickOnce sync.Once
	tick     time.Duration
)

// clockTick is the length of the clock tick the /proc CPU times count in:
// AT_CLKTCK of the process's auxiliary vector, 1/100 s when unreadable (the
// value on every Linux architecture Go supports).
func clockTick() time.Duration {
	tickOnce.Do(func() {
		tick = 10 * time.Millisecond
		b, err := os.ReadFile("/proc/self/auxv")
		if err != nil {
			return
		}
		if hz := auxvValue(b, 17); hz > 0 && hz <= 10000 { // AT_CLKTCK
			tick = time.Second / time.Duration(hz)
		}
	})
	return tick
}

// auxvValue returns the value of key in an auxiliary vector of native-
// endian 64-bit pairs, 0 when absent.
func auxvValue(b []byte, key uint64) uint64 {
	for ; len(b) >= 16; b = b[16:] {
		k, v := binary.NativeEndian.Uint64(b), binary.NativeEndian.Uint64(b[8:])
		if k == key {
			return v
		}
		if k == 0 { // AT_NULL
			break
		}
	}
	return 0
}
