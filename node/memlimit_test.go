package node

import (
	"errors"
	"io/fs"
	"testing"
)

// fakeFiles reads from a map: a missing name is fs.ErrNotExist.
func fakeFiles(m map[string]string) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		v, ok := m[name]
		if !ok {
			return nil, fs.ErrNotExist
		}
		return []byte(v), nil
	}
}

// TestCgroupMemoryLimit reads the cgroup memory limit of cgroup v1 and v2
// layouts, in a cgroup namespace (the process's cgroup is "/") or not, and
// reads none where the limit is "max", v1's no-limit value, unreadable or
// absent.
func TestCgroupMemoryLimit(t *testing.T) {
	const v1Cgroup = "12:pids:/\n4:memory:/process_api/abc\n1:cpu,cpuacct:/\n0::/\n"
	for _, c := range []struct {
		name  string
		files map[string]string
		want  uint64
		from  string
	}{
		{"v2 in a namespace", map[string]string{
			"/proc/self/cgroup":         "0::/\n",
			"/sys/fs/cgroup/memory.max": "1073741824\n",
		}, 1 << 30, "/sys/fs/cgroup/memory.max"},
		{"v2 named path", map[string]string{
			"/proc/self/cgroup": "0::/system.slice/loadnode.service\n",
			"/sys/fs/cgroup/system.slice/loadnode.service/memory.max": "536870912\n",
			"/sys/fs/cgroup/memory.max":                               "max\n",
		}, 512 << 20, "/sys/fs/cgroup/system.slice/loadnode.service/memory.max"},
		{"v2 max", map[string]string{
			"/proc/self/cgroup":         "0::/\n",
			"/sys/fs/cgroup/memory.max": "max\n",
		}, 0, "/sys/fs/cgroup/memory.max"},
		{"v1 named path", map[string]string{
			"/proc/self/cgroup": v1Cgroup,
			"/sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes": "2147483648\n",
		}, 2 << 30, "/sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes"},
		{"v1 root, no limit", map[string]string{
			"/proc/self/cgroup":                           v1Cgroup,
			"/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n",
		}, 0, "/sys/fs/cgroup/memory/memory.limit_in_bytes"},
		{"v1 garbage", map[string]string{
			"/proc/self/cgroup": v1Cgroup,
			"/sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes": "lots\n",
		}, 0, "/sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes"},
		{"no cgroup file system", map[string]string{"/proc/self/cgroup": "0::/\n"}, 0, ""},
		{"no /proc", map[string]string{}, 0, ""},
		{"malformed lines", map[string]string{
			"/proc/self/cgroup":         "junk\n3:memory\n0::relative\n",
			"/sys/fs/cgroup/memory.max": "1073741824\n",
		}, 0, ""},
	} {
		got, from := cgroupMemoryLimit(fakeFiles(c.files))
		if got != c.want || from != c.from {
			t.Errorf("%s: limit %d from %q, want %d from %q", c.name, got, from, c.want, c.from)
		}
	}
}

// TestTuneMemoryLimit: 90% of the cgroup's limit becomes the runtime's soft
// limit, unless GOMEMLIMIT is given or there is no limit.
func TestTuneMemoryLimit(t *testing.T) {
	files := fakeFiles(map[string]string{
		"/proc/self/cgroup":         "0::/\n",
		"/sys/fs/cgroup/memory.max": "1000000000\n",
	})
	var set []int64
	record := func(n int64) int64 { set = append(set, n); return 0 }
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }

	if got, from := tuneMemoryLimit(getenv, files, record); got != 900000000 || from != "/sys/fs/cgroup/memory.max" || len(set) != 1 || set[0] != 900000000 {
		t.Fatalf("with a 1 GB cgroup: limit %d from %q, set %v; want 900000000 set once", got, from, set)
	}
	env["GOMEMLIMIT"] = "2GiB"
	set = nil
	if got, _ := tuneMemoryLimit(getenv, files, record); got != 0 || len(set) != 0 {
		t.Fatalf("with GOMEMLIMIT: limit %d, set %v; want none set", got, set)
	}
	delete(env, "GOMEMLIMIT")
	none := func(string) ([]byte, error) { return nil, errors.New("no such file") }
	if got, _ := tuneMemoryLimit(getenv, none, record); got != 0 || len(set) != 0 {
		t.Fatalf("without a cgroup: limit %d, set %v; want none set", got, set)
	}
}
