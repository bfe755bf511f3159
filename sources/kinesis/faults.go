package kinesis

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/middleware"
)

// Faults injects failures into the SDK calls of a Source and its Readers
// (tests and chaos runs). It is installed as a middleware at the start of
// the SDK's stack, before its retry loop, so every injected error reaches
// this package's own handling. A Faults may be shared by several Sources;
// its methods are safe for concurrent use. The zero value injects nothing.
type Faults struct {
	// ThrottleRate is the probability that a GetRecords or GetShardIterator
	// call fails with ProvisionedThroughputExceededException before it is
	// sent.
	ThrottleRate float64
	// ExpireRate is the probability that a GetRecords call fails with
	// ExpiredIteratorException before it is sent.
	ExpireRate float64
	// FailRate is the probability that a GetRecords call is answered by the
	// service and its answer then lost: the caller sees InternalFailure
	// (HTTP 500) and must not have advanced.
	FailRate float64
	// Seed seeds the random source; 0 means a random seed. With a seed, the
	// sequence of draws is fixed (the order in which concurrent calls draw
	// is not).
	Seed uint64
	// Trim, when set, simulates retention: for a shard for which it returns
	// ok, records with a sequence number <= trimmedThrough are hidden from
	// GetRecords results, as if the service had deleted them (so an
	// iterator AT_SEQUENCE_NUMBER of a trimmed record yields the first
	// untrimmed one, as TRIM_HORIZON does). It is called concurrently.
	Trim func(shardID string) (trimmedThrough string, ok bool)

	once sync.Once
	mu   sync.Mutex
	rng  *rand.Rand

	calls, throttled, expired, failed, trimmed atomic.Int64
}

// FaultStats counts what a Faults did.
type FaultStats struct {
	// Calls is the number of GetRecords and GetShardIterator calls seen.
	Calls int64
	// Throttled, Expired and Failed count injected errors.
	Throttled, Expired, Failed int64
	// Trimmed counts records hidden by Trim.
	Trimmed int64
}

// Stats returns the counters so far.
func (f *Faults) Stats() FaultStats {
	return FaultStats{
		Calls:     f.calls.Load(),
		Throttled: f.throttled.Load(),
		Expired:   f.expired.Load(),
		Failed:    f.failed.Load(),
		Trimmed:   f.trimmed.Load(),
	}
}

// ParseFaults parses a fault specification such as
//
//	throttle=0.2,expire=0.01,fail=0.01,seed=7,trim=shardId-000000000001:49590338271490256608559692538361571095921575989136588898
//
// (the LOADNODE_KINESIS_FAULTS environment variable). throttle, expire and
// fail are probabilities in [0, 1]; trim may be repeated, one shard each. An
// empty string gives nil, nil.
func ParseFaults(s string) (*Faults, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	f := &Faults{}
	trims := map[string]string{}
	for _, item := range strings.Split(s, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		k, v, ok := strings.Cut(item, "=")
		if !ok {
			return nil, fmt.Errorf("kinesis faults: %q: want key=value", item)
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "throttle", "expire", "fail":
			r, err := strconv.ParseFloat(v, 64)
			if err != nil || r < 0 || r > 1 {
				return nil, fmt.Errorf("kinesis faults: %s=%q: want a probability in [0, 1]", k, v)
			}
			switch k {
			case "throttle":
				f.ThrottleRate = r
			case "expire":
				f.ExpireRate = r
			case "fail":
				f.FailRate = r
			}
		case "seed":
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("kinesis faults: seed=%q: want an unsigned integer", v)
			}
			f.Seed = n
		case "trim":
			shard, seq, ok := strings.Cut(v, ":")
			if !ok || !isSeq(seq) {
				return nil, fmt.Errorf("kinesis faults: trim=%q: want <shard id>:<sequence number>", v)
			}
			if _, err := ShardIndex(shard); err != nil {
				return nil, fmt.Errorf("kinesis faults: trim=%q: %v", v, err)
			}
			trims[shard] = seq
		default:
			return nil, fmt.Errorf("kinesis faults: unknown key %q (want throttle, expire, fail, seed, trim)", k)
		}
	}
	if len(trims) > 0 {
		f.Trim = func(shard string) (string, bool) {
			seq, ok := trims[shard]
			return seq, ok
		}
	}
	return f, nil
}

// draw reports whether an event of probability p happens.
func (f *Faults) draw(p float64) bool {
	if p <= 0 {
		return false
	}
	f.once.Do(func() {
		seed := f.Seed
		if seed == 0 {
			seed = uint64(time.Now().UnixNano())
		}
		f.rng = rand.New(rand.NewPCG(seed, 0x6b696e65736973))
	})
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rng.Float64() < p
}

// shardKey carries the shard id of a GetRecords call to the middleware (a
// shard iterator is opaque).
type shardKey struct{}

func withShard(ctx context.Context, shardID string) context.Context {
	return context.WithValue(ctx, shardKey{}, shardID)
}

// apiOption installs the fault middleware on a client's stack.
func (f *Faults) apiOption(st *middleware.Stack) error {
	return st.Initialize.Add(middleware.InitializeMiddlewareFunc("loadnode.kinesis.faults", f.handle), middleware.Before)
}

func (f *Faults) handle(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (
	middleware.InitializeOutput, middleware.Metadata, error) {
	switch in.Parameters.(type) {
	case *kinesis.GetShardIteratorInput:
		f.calls.Add(1)
		if f.draw(f.ThrottleRate) {
			f.throttled.Add(1)
			return middleware.InitializeOutput{}, middleware.Metadata{}, &types.ProvisionedThroughputExceededException{
				Message: aws.String("injected: rate exceeded for shard (GetShardIterator)")}
		}
		return next.HandleInitialize(ctx, in)
	case *kinesis.GetRecordsInput:
		f.calls.Add(1)
		if f.draw(f.ThrottleRate) {
			f.throttled.Add(1)
			return middleware.InitializeOutput{}, middleware.Metadata{}, &types.ProvisionedThroughputExceededException{
				Message: aws.String("injected: rate exceeded for shard (GetRecords)")}
		}
		if f.draw(f.ExpireRate) {
			f.expired.Add(1)
			return middleware.InitializeOutput{}, middleware.Metadata{}, &types.ExpiredIteratorException{
				Message: aws.String("injected: iterator expired")}
		}
		out, md, err := next.HandleInitialize(ctx, in)
		if err != nil {
			return out, md, err
		}
		if f.draw(f.FailRate) {
			f.failed.Add(1)
			return middleware.InitializeOutput{}, md, &smithy.GenericAPIError{
				Code: "InternalFailure", Message: "injected: answer lost", Fault: smithy.FaultServer}
		}
		if f.Trim != nil {
			if shard, ok := ctx.Value(shardKey{}).(string); ok {
				if through, ok := f.Trim(shard); ok {
					if res, ok := out.Result.(*kinesis.GetRecordsOutput); ok {
						res.Records = f.trim(res.Records, through)
					}
				}
			}
		}
		return out, md, nil
	}
	return next.HandleInitialize(ctx, in)
}

func (f *Faults) trim(recs []types.Record, through string) []types.Record {
	kept := recs[:0]
	for _, r := range recs {
		if cmpSeq(aws.ToString(r.SequenceNumber), through) <= 0 {
			f.trimmed.Add(1)
			continue
		}
		kept = append(kept, r)
	}
	return kept
}
