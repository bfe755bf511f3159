package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
)

// kfakeReady starts the line `loadnode kfake` prints once it listens.
const kfakeReady = "kfake: listening on "

// child is a `loadnode kfake` child process (`loadnode serve` children are
// internal/testnode's).
type child struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when the process has exited
	err  error         // Wait's result, set before done is closed
}

func (c *child) pid() int { return c.cmd.Process.Pid }

// stop sends SIGTERM and waits up to grace for the exit, then SIGKILLs.
func (c *child) stop(grace time.Duration) error {
	select {
	case <-c.done:
		return nil
	default:
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-c.done:
		return nil
	case <-t.C:
		_ = c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("bench: %s did not stop within %v; killed", c.cmd.Args[1], grace)
	}
}

// startChild starts binary with args and waits until a line of its stdout
// matches ready, returning that line. The rest of stdout is drained; stderr
// goes to log.
func startChild(ctx context.Context, binary string, args []string, ready func(string) bool, log io.Writer, wait time.Duration) (*child, string, error) {
	cmd := exec.Command(binary, args...)
	cmd.Stdin = nil
	cmd.Stderr = log
	r, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("bench: start %s: %w", args[0], err)
	}
	c := &child{cmd: cmd, done: make(chan struct{})}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		found := false
		for sc.Scan() {
			if !found && ready(sc.Text()) {
				found = true
				lines <- sc.Text()
			}
		}
		close(lines)
		_, _ = io.Copy(io.Discard, r)
		c.err = cmd.Wait()
		close(c.done)
	}()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case line, ok := <-lines:
		if ok {
			return c, line, nil
		}
		<-c.done
		return nil, "", fmt.Errorf("bench: %s exited before it was ready: %v", args[0], c.err)
	case <-t.C:
	case <-ctx.Done():
	}
	_ = c.stop(5 * time.Second)
	return nil, "", fmt.Errorf("bench: %s not ready within %v", args[0], wait)
}

// startKfake starts `loadnode kfake` and returns it with its address.
func startKfake(ctx context.Context, binary string, log io.Writer) (*child, string, error) {
	c, line, err := startChild(ctx, binary, []string{"kfake", "--port", "0"},
		func(s string) bool { return strings.HasPrefix(s, kfakeReady) }, log, 30*time.Second)
	if err != nil {
		return nil, "", err
	}
	return c, strings.TrimPrefix(line, kfakeReady), nil
}

// prepareTopic creates topic with partitions and fills it with records
// records of format, partition i%partitions for record i, unless it already
// holds exactly that many records. It returns the end offsets.
func prepareTopic(ctx context.Context, brokers []string, topic, format string, partitions, records, size int) (map[int32]int64, error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(2*time.Millisecond), kgo.ProducerBatchMaxBytes(1<<20), kgo.MaxBufferedRecords(1<<17))
	if err != nil {
		return nil, fmt.Errorf("bench: producer: %w", err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	resp, err := adm.CreateTopic(ctx, int32(partitions), 1, nil, topic)
	switch {
	case err == nil && resp.Err == nil:
	case errors.Is(err, kerr.TopicAlreadyExists) || errors.Is(resp.Err, kerr.TopicAlreadyExists):
		ends, err := endOffsets(ctx, adm, topic)
		if err != nil {
			return nil, err
		}
		if sum(ends) == int64(records) && len(ends) == partitions {
			return ends, nil
		}
		return nil, fmt.Errorf("bench: topic %s exists with %d partitions and %d records; want %d and %d (delete it)",
			topic, len(ends), sum(ends), partitions, records)
	case err != nil:
		return nil, fmt.Errorf("bench: create topic %s: %w", topic, err)
	default:
		return nil, fmt.Errorf("bench: create topic %s: %w", topic, resp.Err)
	}
	if records > 0 {
		errc := make(chan error, 1)
		buf := make([]byte, 0, size+64)
		for i := range records {
			buf = appendRecord(buf[:0], format, i, size)
			rec := &kgo.Record{Topic: topic, Partition: int32(i % partitions), Value: append([]byte(nil), buf...)}
			cl.Produce(ctx, rec, func(_ *kgo.Record, err error) {
				if err != nil {
					select {
					case errc <- err:
					default:
					}
				}
			})
		}
		if err := cl.Flush(ctx); err != nil {
			return nil, fmt.Errorf("bench: produce %s: %w", topic, err)
		}
		select {
		case err := <-errc:
			return nil, fmt.Errorf("bench: produce %s: %w", topic, err)
		default:
		}
	}
	ends, err := endOffsets(ctx, adm, topic)
	if err != nil {
		return nil, err
	}
	if sum(ends) != int64(records) {
		return nil, fmt.Errorf("bench: topic %s holds %d records after producing %d", topic, sum(ends), records)
	}
	return ends, nil
}

func endOffsets(ctx context.Context, adm *kadm.Client, topic string) (map[int32]int64, error) {
	lo, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("bench: end offsets of %s: %w", topic, err)
	}
	if err := lo.Error(); err != nil {
		return nil, fmt.Errorf("bench: end offsets of %s: %w", topic, err)
	}
	ends := map[int32]int64{}
	lo.Each(func(o kadm.ListedOffset) { ends[o.Partition] = o.Offset })
	return ends, nil
}

func sum(m map[int32]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// tempDir makes a directory under the system temp dir.
func tempDir(prefix string) (string, error) { return os.MkdirTemp("", "loadnode-bench-"+prefix+"-") }
