package kinesis

import (
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/sources/kinesis/kinesistest"
)

// TestFaultsExactlyOnce reads under 20% throttled calls, 1% expired
// iterators and 2% lost answers: every record exactly once, no error.
func TestFaultsExactlyOnce(t *testing.T) {
	ep := kinesistest.Start(t)
	c := kinesistest.NewClient(ep)
	kinesistest.CreateStream(t, c, "s", 4)
	want := putN(t, c, "s", 0, 200)

	faults := &Faults{ThrottleRate: 0.2, ExpireRate: 0.01, FailRate: 0.02, Seed: 42}
	src := newTestSource(t, testSpec(ep, "s"), faults)
	j := newJob(t, src)
	j.topology(true)
	lim := sources.Limits{MaxRows: 3, MaxWait: 100 * time.Millisecond}
	reads := 0
	// Keep reading (new records arrive in the meantime) until every fault
	// fired at least once and everything was read.
	j.readUntil(lim, 40*time.Second, func() bool {
		reads++
		if reads%25 == 0 && len(want) < 600 {
			want = append(want, putN(t, c, "s", len(want), len(want)+40)...)
		}
		st := faults.Stats()
		return len(j.got) == len(want) && st.Expired > 0 && st.Throttled > 0 && st.Failed > 0
	})
	checkExactlyOnce(t, j.values(), want)
	st := faults.Stats()
	t.Logf("%d reads, %d records, faults %+v", reads, len(j.got), st)
	if st.Calls == 0 || float64(st.Throttled) < 0.1*float64(st.Calls) {
		t.Fatalf("throttle injector barely fired: %+v", st)
	}
}

// TestTrimDetection: a committed position whose record was trimmed is an
// OutOfRangeError (records of other shards read in the same Read are still
// returned); a position not trimmed reads on.
func TestTrimDetection(t *testing.T) {
	ep := kinesistest.Start(t)
	c := kinesistest.NewClient(ep)
	kinesistest.CreateStream(t, c, "s", 2)
	h0, _ := kinesistest.HashRange(t, c, "s", ShardID(0))
	h1, _ := kinesistest.HashRange(t, c, "s", ShardID(1))
	var seq0 []string
	for i := 0; i < 10; i++ {
		p := kinesistest.PutRecords(t, c, "s", kinesistest.Record{Key: "k", HashKey: h0.String(), Data: value(i)})
		seq0 = append(seq0, p[0].Seq)
	}

	var mu sync.Mutex
	trimmed := map[string]string{}
	setTrim := func(shard, through string) {
		mu.Lock()
		defer mu.Unlock()
		if through == "" {
			delete(trimmed, shard)
		} else {
			trimmed[shard] = through
		}
	}
	faults := &Faults{Trim: func(shard string) (string, bool) {
		mu.Lock()
		defer mu.Unlock()
		v, ok := trimmed[shard]
		return v, ok
	}}
	src := newTestSource(t, testSpec(ep, "s"), faults)
	j := newJob(t, src)
	j.topology(true)
	j.readUntil(sources.Limits{MaxRows: 4, MaxWait: time.Second}, 10*time.Second, func() bool { return len(j.got) >= 4 })
	if len(j.got) != 4 || j.checkpoint(0).Last != seq0[3] {
		t.Fatalf("read %d, checkpoint %+v; want 4 up to %s", len(j.got), j.checkpoint(0), seq0[3])
	}
	j.closeReader()

	// Retention trims shard 0 through record 5: records 4 and 5, which the
	// job still needs, are gone. Meanwhile shard 1 has records.
	setTrim(ShardID(0), seq0[5])
	for i := 100; i < 103; i++ {
		kinesistest.PutRecords(t, c, "s", kinesistest.Record{Key: "k", HashKey: h1.String(), Data: value(i)})
	}
	b, err := j.read(sources.Limits{MaxRows: 100, MaxWait: time.Second})
	var oor *sources.OutOfRangeError
	if !errors.As(err, &oor) {
		t.Fatalf("Read after trim: err %v, want OutOfRangeError", err)
	}
	if oor.Partition != 0 || oor.Offset != 4 || oor.LogStart != -1 || oor.LogEnd != -1 {
		t.Fatalf("OutOfRangeError %+v, want partition 0 offset 4", oor)
	}
	for _, r := range b.Records {
		if r.Partition == 0 {
			t.Fatalf("record of the trimmed shard returned: %+v", r)
		}
	}
	t.Logf("batch with the error: %d records of shard 1", len(b.Records))
	// Sticky: the same reader keeps failing.
	if _, err := j.rd.Read(tctx(t), sources.Limits{MaxWait: 10 * time.Millisecond}); !errors.As(err, &oor) {
		t.Fatalf("second Read: %v, want the same OutOfRangeError", err)
	}
	j.closeReader()

	// Trimmed through exactly the committed record: the records after it
	// are all there, but the reader cannot tell, and stops too.
	setTrim(ShardID(0), seq0[3])
	if _, err := j.read(sources.Limits{MaxRows: 100, MaxWait: 500 * time.Millisecond}); !errors.As(err, &oor) {
		t.Fatalf("trimmed through the committed record: err %v, want OutOfRangeError", err)
	}
	j.closeReader()

	// Trimmed only before the committed record: reads on from record 4.
	setTrim(ShardID(0), seq0[2])
	j.readUntil(sources.Limits{MaxRows: 100, MaxWait: 200 * time.Millisecond}, 10*time.Second,
		func() bool { return j.next[0] == 10 && j.next[1] == 3 })
	var want []string
	for i := 0; i < 10; i++ {
		want = append(want, string(value(i)))
	}
	for i := 100; i < 103; i++ {
		want = append(want, string(value(i)))
	}
	checkExactlyOnce(t, j.values(), want)
	if faults.Stats().Trimmed == 0 {
		t.Fatalf("trim hid no record")
	}
}

// TestTrimUserPosition: a start position given as a sequence number reads
// after it, and is an OutOfRangeError when that record was trimmed.
func TestTrimUserPosition(t *testing.T) {
	ep := kinesistest.Start(t)
	c := kinesistest.NewClient(ep)
	kinesistest.CreateStream(t, c, "s", 1)
	var seqs []string
	for i := 0; i < 6; i++ {
		seqs = append(seqs, kinesistest.PutOne(t, c, "s", "k", value(i)).Seq)
	}
	for _, tc := range []struct {
		name    string
		trim    string
		wantErr bool
	}{{"not trimmed", "", false}, {"trimmed", seqs[3], true}} {
		t.Run(tc.name, func(t *testing.T) {
			var faults *Faults
			if tc.trim != "" {
				faults = &Faults{Trim: func(string) (string, bool) { return tc.trim, true }}
			}
			spec := testSpec(ep, "s")
			spec.Positions = map[string]string{ShardID(0): seqs[1]}
			j := newJob(t, newTestSource(t, spec, faults))
			j.topology(true)
			if cp := j.checkpoint(0); cp.Start != seqs[1] {
				t.Fatalf("start %q, want %s", cp.Start, seqs[1])
			}
			if tc.wantErr {
				_, err := j.read(sources.Limits{MaxRows: 100, MaxWait: 500 * time.Millisecond})
				var oor *sources.OutOfRangeError
				if !errors.As(err, &oor) || oor.Partition != 0 || oor.Offset != 0 {
					t.Fatalf("err %v, want OutOfRangeError at partition 0 offset 0", err)
				}
				return
			}
			j.readUntil(sources.Limits{MaxRows: 100, MaxWait: 200 * time.Millisecond}, 10*time.Second,
				func() bool { return len(j.got) >= 4 })
			checkExactlyOnce(t, j.values(), []string{string(value(2)), string(value(3)), string(value(4)), string(value(5))})
			if st := j.src.Describe(0, j.cps[0]); st.Seq != seqs[5] || st.State != "open" {
				t.Fatalf("Describe = %+v", st)
			}
		})
	}
}

func TestSourceErrors(t *testing.T) {
	ep := kinesistest.Start(t)

	t.Run("missing stream", func(t *testing.T) {
		src := newTestSource(t, testSpec(ep, "nope"), nil)
		_, err := src.Partitions(tctx(t))
		asConfigError(t, err, "kinesis.stream")
		cp := EncodeCheckpoint(Checkpoint{Shard: ShardID(0), Start: TrimHorizon})
		rd, err := src.NewReader(map[int32]sources.Start{0: {Checkpoint: cp}})
		if err != nil {
			t.Fatal(err)
		}
		defer rd.Close()
		b, err := rd.Read(tctx(t), sources.Limits{MaxRows: 10, MaxWait: time.Second})
		asConfigError(t, err, "kinesis.stream")
		if b == nil || b.Next[0] != 0 {
			t.Fatalf("batch %+v", b)
		}
	})

	t.Run("unknown chosen shard", func(t *testing.T) {
		c := kinesistest.NewClient(ep)
		kinesistest.CreateStream(t, c, "two", 2)
		spec := testSpec(ep, "two")
		spec.Shards = []string{ShardID(7)}
		_, err := newTestSource(t, spec, nil).Partitions(tctx(t))
		asConfigError(t, err, "kinesis.shards")
		spec = testSpec(ep, "two")
		spec.Positions = map[string]string{ShardID(9): Latest}
		src := newTestSource(t, spec, nil)
		_, err = src.ResolveStarts(tctx(t), map[int32]string{0: ""}, true)
		asConfigError(t, err, "kinesis.positions."+ShardID(9))
	})

	t.Run("unreachable", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		src := newTestSource(t, testSpec("http://"+addr, "s"), nil)
		_, err = src.Partitions(tctx(t))
		var ue *sources.UnreachableError
		if !errors.As(err, &ue) {
			t.Fatalf("Partitions: %v (%T), want UnreachableError", err, err)
		}
		cp := EncodeCheckpoint(Checkpoint{Shard: ShardID(0), Start: TrimHorizon})
		rd, err := src.NewReader(map[int32]sources.Start{0: {Offset: 5, Checkpoint: cp}})
		if err != nil {
			t.Fatal(err)
		}
		defer rd.Close()
		b, err := rd.Read(tctx(t), sources.Limits{MaxRows: 10, MaxWait: 500 * time.Millisecond})
		if !errors.As(err, &ue) {
			t.Fatalf("Read: %v (%T), want UnreachableError", err, err)
		}
		if b.Next[0] != 5 || len(b.Records) != 0 {
			t.Fatalf("batch %+v", b)
		}
	})
}

func TestNewSourceConfigErrors(t *testing.T) {
	seq := "49590338271490256608559692538361571095921575989136588898"
	for _, tc := range []struct {
		name  string
		edit  func(s *specT)
		field string
	}{
		{"empty stream", func(s *specT) { s.Stream = "" }, "kinesis.stream"},
		{"bad stream", func(s *specT) { s.Stream = "a b" }, "kinesis.stream"},
		{"no region", func(s *specT) { s.Endpoint = "" }, "kinesis.region"},
		{"bad endpoint", func(s *specT) { s.Endpoint = "127.0.0.1:4567" }, "kinesis.endpoint"},
		{"secret without key", func(s *specT) { s.AccessKeyId = "" }, "kinesis.access_key_id"},
		{"key without secret", func(s *specT) { s.SecretAccessKey = "" }, "kinesis.secret_access_key"},
		{"keys and profile", func(s *specT) { s.Profile = "p" }, "kinesis.profile"},
		{"token alone", func(s *specT) { s.AccessKeyId, s.SecretAccessKey, s.SessionToken = "", "", "t" }, "kinesis.session_token"},
		{"bad shard", func(s *specT) { s.Shards = []string{"shard-1"} }, "kinesis.shards"},
		{"bad position", func(s *specT) { s.Positions = map[string]string{ShardID(1): "EARLIEST"} }, "kinesis.positions." + ShardID(1)},
		{"bad timestamp", func(s *specT) { s.Positions = map[string]string{ShardID(1): "AT_TIMESTAMP:yesterday"} }, "kinesis.positions." + ShardID(1)},
		{"bad position key", func(s *specT) { s.Positions = map[string]string{"1": Latest} }, "kinesis.positions.1"},
		{"bad default", func(s *specT) { s.DefaultPosition = "latest" }, "kinesis.default_position"},
		{"seq default", func(s *specT) { s.DefaultPosition = seq }, "kinesis.default_position"},
		{"missing profile", func(s *specT) { s.AccessKeyId, s.SecretAccessKey, s.Profile = "", "", "no-such-profile-x" }, "kinesis.profile"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AWS_CONFIG_FILE", t.TempDir()+"/config")
			t.Setenv("AWS_SHARED_CREDENTIALS_FILE", t.TempDir()+"/credentials")
			spec := testSpec("http://127.0.0.1:1", "s")
			tc.edit(spec)
			_, err := NewSource(spec, Options{})
			asConfigError(t, err, tc.field)
		})
	}
	// Valid: every position form; region without endpoint; a profile-less
	// default chain (nothing is resolved before the first call).
	spec := testSpec("", "s")
	spec.Region = "eu-west-1"
	spec.DefaultPosition = "AT_TIMESTAMP:2024-05-01T10:00:00Z"
	spec.Positions = map[string]string{ShardID(1): seq, ShardID(2): TrimHorizon, ShardID(3): Latest}
	if _, err := NewSource(spec, Options{}); err != nil {
		t.Fatalf("valid spec: %v", err)
	}
	if _, err := NewSource(nil, Options{}); err == nil {
		t.Fatalf("nil spec accepted")
	}
}

type specT = api.KinesisSpec

// TestExpiredIteratorReacquire: records fetched but cut off by MaxRows are
// returned before any new fetch; an iterator that expires is re-acquired
// after the last returned record, and reading goes on exactly once.
func TestExpiredIteratorReacquire(t *testing.T) {
	ep := kinesistest.Start(t)
	c := kinesistest.NewClient(ep)
	kinesistest.CreateStream(t, c, "s", 1)
	want := putN(t, c, "s", 0, 10)
	faults := &Faults{}
	j := newJob(t, newTestSource(t, testSpec(ep, "s"), faults))
	j.topology(true)
	lim := sources.Limits{MaxRows: 5, MaxWait: 300 * time.Millisecond}
	if b, err := j.read(lim); err != nil || len(b.Records) != 5 {
		t.Fatalf("first read: %d records, %v", len(b.Records), err)
	}
	// Every GetRecords now expires (no reader goroutine runs between
	// Reads, so the rate can change here).
	faults.ExpireRate = 1
	if b, err := j.read(lim); err != nil || len(b.Records) != 5 {
		t.Fatalf("buffered read: %d records, %v", len(b.Records), err)
	}
	if b, err := j.read(lim); err != nil || len(b.Records) != 0 {
		t.Fatalf("read under expiry: %d records, %v", len(b.Records), err)
	}
	if faults.Stats().Expired == 0 {
		t.Fatalf("no expiry injected: %+v", faults.Stats())
	}
	faults.ExpireRate = 0
	want = append(want, putN(t, c, "s", 10, 13)...)
	j.readUntil(lim, 10*time.Second, func() bool { return len(j.got) >= 13 })
	if b, err := j.read(sources.Limits{MaxRows: 10, MaxWait: 100 * time.Millisecond}); err != nil || len(b.Records) != 0 {
		t.Fatalf("extra read: %d records, %v", len(b.Records), err)
	}
	checkExactlyOnce(t, j.values(), want)
}
