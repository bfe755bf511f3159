package bench

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// CreateCPU is where the machine's CPU went while the cluster scenario
// created its jobs, in cores (CPU seconds over the window's seconds): it
// shows whether the cores, shared by the members, etcd, the broker,
// PostgreSQL, this process and whatever else runs, bound the creates.
type CreateCPU struct {
	Cores int `json:"cores"`
	// Busy is the whole machine's (every process's, /proc/stat).
	Busy    float64 `json:"busy"`
	Members float64 `json:"members"`
	Etcd    float64 `json:"etcd"`
	Bench   float64 `json:"bench"`
}

// cpuWindow samples the CPU time of the machine and of the given
// processes; end gives the cores each used since.
type cpuWindow struct {
	t0      time.Time
	busy0   time.Duration
	members []int
	etcd    int
	mem0    time.Duration
	etcd0   time.Duration
	bench0  time.Duration
}

func startCPUWindow(members []int, etcd int) *cpuWindow {
	w := &cpuWindow{t0: time.Now(), members: members, etcd: etcd}
	w.busy0, w.mem0, w.etcd0, w.bench0 = machineBusy(), pidsCPU(members), pidsCPU([]int{etcd}), selfCPU()
	return w
}

func (w *cpuWindow) end() *CreateCPU {
	el := time.Since(w.t0).Seconds()
	if el <= 0 {
		return nil
	}
	cores := func(d time.Duration) float64 { return max(d.Seconds(), 0) / el }
	return &CreateCPU{Cores: runtime.NumCPU(), Busy: cores(machineBusy() - w.busy0),
		Members: cores(pidsCPU(w.members) - w.mem0), Etcd: cores(pidsCPU([]int{w.etcd}) - w.etcd0),
		Bench: cores(selfCPU() - w.bench0)}
}

// pidsCPU sums the processes' CPU times (a process gone counts 0).
func pidsCPU(pids []int) time.Duration {
	var t time.Duration
	for _, pid := range pids {
		if pid > 0 {
			if d, err := procCPU(pid); err == nil {
				t += d
			}
		}
	}
	return t
}

// machineBusy is the CPU time every core spent not idle (user, nice,
// system, irq, softirq, steal: /proc/stat's first line), 0 where there
// is no /proc.
func machineBusy() time.Duration {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0
	}
	var t int64
	for i, v := range f[1:] {
		if i == 3 || i == 4 || i >= 8 { // idle, iowait; guest times are in user already
			continue
		}
		n, _ := strconv.ParseInt(v, 10, 64)
		t += n
	}
	return time.Duration(t) * clockTick
}
