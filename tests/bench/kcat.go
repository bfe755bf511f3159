package bench

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// kcatInstall is how to get kcat when it is missing.
const kcatInstall = "kcat is not on PATH (Debian/Ubuntu: apt-get install -y kcat; macOS: brew install kcat)"

// kcatPath finds kcat on PATH, or says how to install it.
func kcatPath() (string, error) {
	p, err := exec.LookPath("kcat")
	if err != nil {
		return "", errors.New(kcatInstall)
	}
	return p, nil
}

// kcatRun reads every record of topic with a plain kcat (librdkafka)
// consumer from the beginning to the end of each partition, printing only
// each record's value size, and checks that it read exactly the topic's
// records. The sample's CPU time is kcat's own (its rusage), not this
// process's.
func kcatRun(ctx context.Context, kcat string, brokers []string, topic string, ends map[int32]int64) (sample, error) {
	want := sum(ends)
	cmd := exec.CommandContext(ctx, kcat, "-C", "-b", strings.Join(brokers, ","), "-t", topic,
		"-o", "beginning", "-e", "-q", "-f", `%S\n`)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return sample{}, fmt.Errorf("bench: kcat: %w", err)
	}
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		return sample{}, fmt.Errorf("bench: kcat: %w", err)
	}
	var n, size int64
	var parseErr error
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		v, err := strconv.ParseInt(string(bytes.TrimSpace(sc.Bytes())), 10, 64)
		if err != nil && parseErr == nil {
			parseErr = fmt.Errorf("bench: kcat: unexpected output line %q", sc.Text())
		}
		n++
		size += max(v, 0) // %S is -1 for a null value
	}
	waitErr := cmd.Wait()
	el := time.Since(t0)
	switch {
	case waitErr != nil:
		return sample{}, fmt.Errorf("bench: kcat: %w: %s", waitErr, strings.TrimSpace(stderr.String()))
	case parseErr != nil:
		return sample{}, parseErr
	case n != want:
		return sample{}, fmt.Errorf("bench: kcat read %d of %d records of %s", n, want, topic)
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	return sample{elapsed: el, cpu: cpu, records: n, bytes: size}, nil
}

// kcatVersion is kcat's and librdkafka's versions as `kcat -V` prints them
// ("kcat 1.7.1, librdkafka 2.0.2"), or "kcat" when it cannot tell.
func kcatVersion(ctx context.Context, kcat string) string {
	out, err := exec.CommandContext(ctx, kcat, "-V").CombinedOutput()
	if err != nil {
		return "kcat"
	}
	for line := range strings.Lines(string(out)) {
		rest, ok := strings.CutPrefix(line, "Version ")
		if !ok {
			continue
		}
		v := "kcat " + strings.Fields(rest)[0]
		if i := strings.Index(rest, "librdkafka "); i >= 0 {
			v += ", " + strings.Fields(rest[i:])[0] + " " + strings.Fields(rest[i:])[1]
		}
		return v
	}
	return "kcat"
}
