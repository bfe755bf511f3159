package bench

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// sample is one measured run of a throughput scenario.
type sample struct {
	elapsed time.Duration
	cpu     time.Duration // CPU time of the measured process
	mallocs uint64        // heap allocations in this process
	faults  int64         // minor + major page faults of this process
	records int64
	bytes   int64
	// brokerCPU is the broker child's CPU time over the window (0 without
	// one: --brokers); busy is the whole machine's (every core's non-idle
	// time, steal included: /proc/stat).
	brokerCPU time.Duration
	busy      time.Duration
	batches   int64 // committed batches (end to end only)
	// commitSecs is the time the job spent in synced commits (end to end
	// only, from the node's /metrics).
	commitSecs float64
}

// meter measures wall time, this process's CPU time and its allocations,
// and the broker child's CPU time and the machine's busy time.
type meter struct {
	t0        time.Time
	cpu0      time.Duration
	mallocs   uint64
	faults    int64
	brokerPID int
	broker0   time.Duration
	busy0     time.Duration
}

// startMeter starts measuring; brokerPID is the broker child's (0: none).
func startMeter(brokerPID int) meter {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	m := meter{t0: time.Now(), cpu0: selfCPU(), mallocs: ms.Mallocs, faults: selfFaults(), brokerPID: brokerPID, busy0: machineBusy()}
	if brokerPID > 0 {
		m.broker0, _ = procCPU(brokerPID)
	}
	return m
}

func (m meter) stop(records, bytes int64) sample {
	el := time.Since(m.t0)
	cpu := selfCPU() - m.cpu0
	faults := selfFaults() - m.faults
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	s := sample{elapsed: el, cpu: cpu, mallocs: ms.Mallocs - m.mallocs, faults: faults, records: records, bytes: bytes}
	if m.brokerPID > 0 {
		if b, err := procCPU(m.brokerPID); err == nil {
			s.brokerCPU = b - m.broker0
		}
	}
	if m.busy0 > 0 {
		s.busy = machineBusy() - m.busy0
	}
	return s
}

// selfCPU is this process's user + system CPU time (getrusage).
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// selfFaults is this process's minor + major page faults (getrusage
// ru_minflt + ru_majflt): memory touched for the first time, or again after
// it went back to the kernel.
func selfFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Minflt + ru.Majflt
}

// clockTick is USER_HZ, the unit of /proc/PID/stat CPU times (100 on Linux).
const clockTick = 10 * time.Millisecond

// procCPU is process pid's user + system CPU time from /proc/PID/stat.
func procCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may hold spaces; fields after ")" are fixed.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("bench: /proc/%d/stat: malformed", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("bench: /proc/%d/stat: short", pid)
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("bench: /proc/%d/stat: bad cpu fields", pid)
	}
	return time.Duration(ut+st) * clockTick, nil
}

// procRSS is process pid's resident set size in bytes (VmRSS).
func procRSS(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			fs := strings.Fields(rest)
			if len(fs) < 1 {
				break
			}
			kb, err := strconv.ParseInt(fs[0], 10, 64)
			if err != nil {
				return 0, err
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("bench: /proc/%d/status: no VmRSS", pid)
}

// procFDs is the number of open file descriptors of process pid.
func procFDs(pid int) int {
	es, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return -1
	}
	return len(es)
}

// median of xs (xs is reordered).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}

// percentile of sorted durations (nearest rank).
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	k := int(p/100*float64(len(sorted))+0.5) - 1
	k = max(0, min(k, len(sorted)-1))
	return sorted[k]
}

// summarize turns measured samples into the reported medians.
func summarize(r *Throughput, ss []sample) {
	var rate, mbs, cpu, allocs, faults, secs, batch, commit, broker, busy []float64
	for _, s := range ss {
		sec := s.elapsed.Seconds()
		secs = append(secs, sec)
		rate = append(rate, float64(s.records)/sec)
		mbs = append(mbs, float64(s.bytes)/sec/1e6)
		cpu = append(cpu, s.cpu.Seconds()/(float64(s.records)/1e6))
		allocs = append(allocs, float64(s.mallocs)/float64(s.records))
		faults = append(faults, float64(s.faults)/float64(s.records))
		if s.brokerCPU > 0 {
			broker = append(broker, s.brokerCPU.Seconds()/(float64(s.records)/1e6))
		}
		if s.busy > 0 {
			busy = append(busy, s.busy.Seconds()/sec)
		}
		if s.batches > 0 {
			batch = append(batch, float64(s.records)/float64(s.batches))
		}
		if s.commitSecs > 0 {
			commit = append(commit, float64(s.records)/s.commitSecs)
		}
	}
	r.Runs = len(ss)
	r.Seconds = median(secs)
	r.RecordsPerSec = median(rate)
	r.MBPerSec = median(mbs)
	r.CPUSecPerMillion = median(cpu)
	r.AllocsPerRecord = median(allocs)
	r.FaultsPerRecord = median(faults)
	r.AvgBatchRows = median(batch)
	r.CommitRowsPerSec = median(commit)
	r.BrokerCPUSecPerMillion = median(broker)
	r.CoresBusy = median(busy)
}
