package bench

import (
	"context"
	"fmt"

	"github.com/twmb/franz-go/pkg/kgo"
)

// ceilingRun reads every record of topic (ends) with a raw franz-go consumer
// (direct partitions from the start, default fetch sizes) and discards them;
// brokerPID is the broker child's, whose CPU is measured too (0: none).
func ceilingRun(ctx context.Context, brokers []string, topic string, ends map[int32]int64, brokerPID int) (sample, error) {
	want := sum(ends)
	offsets := make(map[int32]kgo.Offset, len(ends))
	for p := range ends {
		offsets[p] = kgo.NewOffset().AtStart()
	}
	m := startMeter(brokerPID)
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: offsets}))
	if err != nil {
		return sample{}, fmt.Errorf("bench: ceiling client: %w", err)
	}
	defer cl.Close()
	var n, bytes int64
	for n < want {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			return sample{}, fmt.Errorf("bench: ceiling: %d of %d records: %w", n, want, err)
		}
		var ferr error
		fs.EachError(func(t string, p int32, err error) { ferr = fmt.Errorf("bench: ceiling: %s/%d: %w", t, p, err) })
		if ferr != nil {
			return sample{}, ferr
		}
		fs.EachRecord(func(r *kgo.Record) {
			n++
			bytes += int64(len(r.Value) + len(r.Key))
		})
	}
	return m.stop(n, bytes), nil
}
