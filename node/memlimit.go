package node

import (
	"bufio"
	"bytes"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
)

// memoryLimit is the soft memory limit TuneRuntime set from the cgroup.
type memoryLimit struct {
	bytes int64
	from  string
}

var memLimit atomic.Pointer[memoryLimit]

// CgroupMemoryLimit is the soft memory limit (bytes) TuneRuntime gave the
// Go runtime from the process's cgroup memory limit and the file it read
// that from; 0 when it set none (no limit, GOMEMLIMIT given, or
// TuneRuntime not called).
func CgroupMemoryLimit() (int64, string) {
	if l := memLimit.Load(); l != nil {
		return l.bytes, l.from
	}
	return 0, ""
}

// memoryLimitShare is the part of its cgroup's memory limit a node's Go
// runtime keeps to (its soft memory limit, GOMEMLIMIT): the rest is for
// what the runtime does not count (the page cache of the store's files is
// charged to the cgroup too, but the kernel reclaims it first).
const memoryLimitShare = 0.9

// noMemoryLimit: a cgroup limit at or above this is none (cgroup v1 writes
// "no limit" as 2^63 rounded down to a page).
const noMemoryLimit = 1 << 62

// tuneMemoryLimit gives the Go runtime a soft memory limit of
// memoryLimitShare of the process's cgroup memory limit, unless
// getenv("GOMEMLIMIT") names one or there is no limit. The runtime's
// default is none: a node whose heap grew under its GC target
// (LoadGCPercent lets a small live heap grow to five times its size) up
// to the container's limit was killed by the kernel, where with the soft
// limit the runtime collects sooner as the heap nears it. It returns the
// limit set in bytes (0: none set) and where it came from.
func tuneMemoryLimit(getenv func(string) string, readFile func(string) ([]byte, error), set func(int64) int64) (int64, string) {
	if getenv("GOMEMLIMIT") != "" {
		return 0, ""
	}
	limit, from := cgroupMemoryLimit(readFile)
	if limit == 0 {
		return 0, ""
	}
	soft := int64(float64(limit) * memoryLimitShare)
	set(soft)
	return soft, from
}

// cgroupMemoryLimit is the memory limit of this process's cgroup, from
// /proc/self/cgroup and the cgroup file system mounted at /sys/fs/cgroup
// (v2: memory.max; v1: the memory controller's memory.limit_in_bytes), and
// the file it read; 0 when there is none or it cannot be read. A process
// in a container with its own cgroup namespace sees its cgroup as "/", so
// the root's file is read when the named path has none.
func cgroupMemoryLimit(readFile func(string) ([]byte, error)) (uint64, string) {
	b, err := readFile("/proc/self/cgroup")
	if err != nil {
		return 0, ""
	}
	var v1, v2 string
	haveV1, haveV2 := false, false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		id, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		ctrls, p, ok := strings.Cut(rest, ":")
		if !ok || !strings.HasPrefix(p, "/") {
			continue
		}
		switch {
		case id == "0" && ctrls == "":
			v2, haveV2 = p, true
		case hasController(ctrls, "memory"):
			v1, haveV1 = p, true
		}
	}
	var files []string
	if haveV1 {
		files = append(files, path.Join("/sys/fs/cgroup/memory", v1, "memory.limit_in_bytes"), "/sys/fs/cgroup/memory/memory.limit_in_bytes")
	}
	if haveV2 {
		files = append(files, path.Join("/sys/fs/cgroup", v2, "memory.max"), "/sys/fs/cgroup/memory.max")
	}
	for _, f := range files {
		b, err := readFile(f)
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		if v == "max" {
			return 0, f
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n == 0 || n >= noMemoryLimit {
			return 0, f
		}
		return n, f
	}
	return 0, ""
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}
