package kafka

import (
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sources"
)

func TestResolveOffsets(t *testing.T) {
	e := newEnv(t, 2)
	e.produce(t, 0, make([]string, 10)...)
	e.produce(t, 1, make([]string, 5)...)
	deleteRecords(t, e, 0, 3)

	tests := []struct {
		name    string
		want    map[int32]string
		got     map[int32]int64
		oor     *sources.OutOfRangeError
		cfgErr  string // ConfigError.Field
		unknown bool   // topic
	}{
		{name: "beginning", want: map[int32]string{0: OffsetBeginning, 1: "offset_beginning"}, got: map[int32]int64{0: 3, 1: 0}},
		{name: "end", want: map[int32]string{0: OffsetEnd, 1: "offset_end"}, got: map[int32]int64{0: 10, 1: 5}},
		{name: "numbers", want: map[int32]string{0: "3", 1: "5"}, got: map[int32]int64{0: 3, 1: 5}},
		{name: "mixed", want: map[int32]string{0: "7", 1: OffsetEnd}, got: map[int32]int64{0: 7, 1: 5}},
		{name: "below start", want: map[int32]string{0: "2"}, oor: &sources.OutOfRangeError{Partition: 0, Offset: 2, LogStart: 3, LogEnd: 10}},
		{name: "beyond end", want: map[int32]string{1: "6"}, oor: &sources.OutOfRangeError{Partition: 1, Offset: 6, LogStart: 0, LogEnd: 5}},
		{name: "bad string", want: map[int32]string{1: "latest"}, cfgErr: "kafka.offsets[1]"},
		{name: "negative", want: map[int32]string{1: "-1"}, cfgErr: "kafka.offsets[1]"},
		{name: "no such partition", want: map[int32]string{7: OffsetBeginning}, cfgErr: "kafka.partitions"},
		{name: "unknown topic", want: map[int32]string{0: OffsetBeginning}, cfgErr: "kafka.topic", unknown: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			topic := e.topic
			if tt.unknown {
				topic = "nope"
			}
			got, err := e.cluster.ResolveOffsets(testCtx(t), topic, tt.want)
			var oor *sources.OutOfRangeError
			var ce *sources.ConfigError
			switch {
			case tt.oor != nil:
				if !errors.As(err, &oor) || *oor != *tt.oor {
					t.Fatalf("err %v, want %v", err, tt.oor)
				}
			case tt.cfgErr != "":
				if !errors.As(err, &ce) || ce.Field != tt.cfgErr {
					t.Fatalf("err %v, want a ConfigError on %s", err, tt.cfgErr)
				}
			default:
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != len(tt.got) {
					t.Fatalf("got %v, want %v", got, tt.got)
				}
				for p, o := range tt.got {
					if got[p] != o {
						t.Fatalf("got %v, want %v", got, tt.got)
					}
				}
			}
		})
	}

	start, end, err := e.cluster.Bounds(testCtx(t), e.topic)
	if err != nil || start[0] != 3 || start[1] != 0 || end[0] != 10 || end[1] != 5 {
		t.Fatalf("bounds %v %v, err %v", start, end, err)
	}
}

func TestResolveOffsetsOpenTransaction(t *testing.T) {
	// OFFSET_END is the last stable offset: records of a transaction open
	// at resolve time are read if it commits.
	e := newEnv(t, 1)
	e.produce(t, 0, "a", "b")
	tx := newTxProducer(t, e)
	if err := tx.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	produceTx(t, tx, 0, "c", "d")
	got, err := e.cluster.ResolveOffsets(testCtx(t), e.topic, map[int32]string{0: OffsetEnd})
	if err != nil {
		t.Fatal(err)
	}
	hwm, err := e.cluster.Watermarks(testCtx(t), e.topic)
	if err != nil {
		t.Fatal(err)
	}
	if got[0] != 2 || hwm[0] != 4 {
		t.Fatalf("OFFSET_END %d, high watermark %d; want 2 and 4", got[0], hwm[0])
	}
}

func TestPartitions(t *testing.T) {
	e := newEnv(t, 3)
	ps, err := e.cluster.Partitions(testCtx(t), e.topic)
	if err != nil || !slices.Equal(ps, []int32{0, 1, 2}) {
		t.Fatalf("partitions %v, err %v", ps, err)
	}
	if _, err := e.cluster.Watermarks(testCtx(t), e.topic); err != nil { // warm the metadata cache
		t.Fatal(err)
	}
	resp, err := e.adm.CreatePartitions(testCtx(t), 2, e.topic)
	if err == nil {
		err = resp.Error()
	}
	if err != nil {
		t.Fatal(err)
	}
	ps, err = e.cluster.Partitions(testCtx(t), e.topic)
	if err != nil || !slices.Equal(ps, []int32{0, 1, 2, 3, 4}) {
		t.Fatalf("after adding 2: partitions %v, err %v", ps, err)
	}
	// the new partitions resolve and read at once
	e.produce(t, 4, "new")
	got, err := e.cluster.ResolveOffsets(testCtx(t), e.topic, map[int32]string{3: OffsetBeginning, 4: OffsetBeginning})
	if err != nil || got[3] != 0 || got[4] != 0 {
		t.Fatalf("resolve new partitions: %v, %v", got, err)
	}
	r, err := e.cluster.NewReader(e.topic, got)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	recs := readUntil(t, r, sources.Limits{MaxWait: time.Second}, map[int32]int64{3: 0, 4: 0}, map[int32]int64{4: 1}, true, nil)
	if len(recs) != 1 || string(recs[0].Value) != "new" {
		t.Fatalf("read %v", recs)
	}

	var ce *sources.ConfigError
	if _, err := e.cluster.Partitions(testCtx(t), "nope"); !errors.As(err, &ce) || ce.Field != "kafka.topic" {
		t.Fatalf("unknown topic: %v", err)
	}
	if _, err := e.cluster.Watermarks(testCtx(t), "nope"); !errors.As(err, &ce) {
		t.Fatalf("unknown topic watermarks: %v", err)
	}
}

func TestSASL(t *testing.T) {
	for _, mech := range []string{"PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"} {
		t.Run(mech, func(t *testing.T) {
			good := map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mech,
				"sasl.username": "loader", "sasl.password": "s3cret"}
			e := newEnvWith(t, 1, good, kfake.EnableSASL(), kfake.Superuser(mech, "loader", "s3cret"))
			c := e.cluster
			e.produce(t, 0, "x")
			ps, err := c.Partitions(testCtx(t), e.topic)
			if err != nil || !slices.Equal(ps, []int32{0}) {
				t.Fatalf("partitions %v, err %v", ps, err)
			}
			r, err := c.NewReader(e.topic, map[int32]int64{0: 0})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			readUntil(t, r, sources.Limits{MaxWait: time.Second}, map[int32]int64{0: 0}, map[int32]int64{0: 1}, true, nil)

			// kfake closes the connection on bad credentials (the
			// client sees EOF, which looks transient); Kafka answers
			// SASL_AUTHENTICATION_FAILED first. Answer as Kafka does.
			e.fake.ControlKey(int16(kmsg.SASLAuthenticate), func(kreq kmsg.Request) (kmsg.Response, error, bool) {
				e.fake.KeepControl()
				resp := kreq.(*kmsg.SASLAuthenticateRequest).ResponseKind().(*kmsg.SASLAuthenticateResponse)
				resp.ErrorCode = kerr.SaslAuthenticationFailed.Code
				msg := "Authentication failed: Invalid username or password"
				resp.ErrorMessage = &msg
				return resp, nil, true
			})
			bad := map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": mech,
				"sasl.username": "loader", "sasl.password": "wrong"}
			cb := e.newCluster(t, bad)
			var ce *sources.ConfigError
			if _, err := cb.Partitions(testCtx(t), e.topic); !errors.As(err, &ce) {
				t.Fatalf("bad password: partitions err %v, want ConfigError", err)
			}
			rb, err := cb.NewReader(e.topic, map[int32]int64{0: 0})
			if err != nil {
				t.Fatal(err)
			}
			defer rb.Close()
			b, err := rb.Read(testCtx(t), sources.Limits{MaxWait: time.Second})
			if !errors.As(err, &ce) || len(b.Records) != 0 {
				t.Fatalf("bad password: read err %v, %d records; want ConfigError", err, len(b.Records))
			}
		})
	}
}

func TestNewClusterErrors(t *testing.T) {
	var ce *sources.ConfigError
	if _, err := NewCluster(&api.KafkaSpec{}, nil); !errors.As(err, &ce) || ce.Field != "kafka.brokers" {
		t.Fatalf("no brokers: %v", err)
	}
	_, err := NewCluster(&api.KafkaSpec{Brokers: []string{"127.0.0.1:1"}, Properties: map[string]string{"sasl.mechanism": "PLAIN"}}, nil)
	if !errors.As(err, &ce) || ce.Field != "kafka.properties.sasl.mechanism" {
		t.Fatalf("bad property: %v", err)
	}
}

// TestResolveOffsetsByTime: TIME:<ms> is the first offset whose record
// timestamp is at or after it, the end offset when none is.
func TestResolveOffsetsByTime(t *testing.T) {
	e := newEnv(t, 1)
	base := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	var recs []*kgo.Record
	for i := 0; i < 5; i++ { // one record per hour: offsets 0..4
		recs = append(recs, &kgo.Record{Partition: 0, Value: []byte("v"), Timestamp: base.Add(time.Duration(i) * time.Hour)})
	}
	if err := e.prod.ProduceSync(testCtx(t), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		at   time.Time
		want int64
	}{
		{base.Add(-time.Hour), 0},
		{base.Add(2 * time.Hour), 2},
		{base.Add(2*time.Hour + time.Minute), 3},
		{base.Add(10 * time.Hour), 5}, // after every record: the end
	} {
		ms := strconv.FormatInt(tt.at.UnixMilli(), 10)
		got, err := e.cluster.ResolveOffsets(testCtx(t), e.topic, map[int32]string{0: OffsetTimePrefix + ms})
		if err != nil || got[0] != tt.want {
			t.Errorf("TIME:%s (%s) = %v, %v; want %d", ms, tt.at, got, err, tt.want)
		}
	}
	if _, err := e.cluster.ResolveOffsets(testCtx(t), e.topic, map[int32]string{0: "TIME:x"}); err == nil {
		t.Error("TIME:x accepted")
	}
}
