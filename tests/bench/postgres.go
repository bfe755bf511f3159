package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/config"
	"github.com/loadnode/loadnode/internal/pgtest"
	"github.com/loadnode/loadnode/table"
)

// benchDatabase is the node config name of the PostgreSQL database.
const benchDatabase = "bench"

// pgServer is the PostgreSQL server of the scenario and how to read its
// CPU time.
type pgServer struct {
	srv *pgtest.Server
	dsn string
	pid int // the postmaster
}

// startPostgres runs a private cluster (internal/pgtest) for the run.
func startPostgres() (*pgServer, error) {
	bin, err := pgtest.FindBin()
	if err != nil {
		return nil, err
	}
	srv, err := pgtest.Launch(bin)
	if err != nil {
		return nil, err
	}
	pid, err := srv.PostmasterPID()
	if err != nil {
		srv.Close()
		return nil, err
	}
	return &pgServer{srv: srv, dsn: srv.DSN("postgres"), pid: pid}, nil
}

// cpu is the server's CPU time: the postmaster's own and that of its
// reaped children (the backends that ended), plus its live children's. A
// child reaped between reading the postmaster and reading the child would
// be in neither: the read is repeated until the children are the same
// before and after it.
func (s *pgServer) cpu() time.Duration {
	for i := 0; ; i++ {
		kids := s.children()
		total := procTimes(s.pid, true)
		for _, pid := range kids {
			total += procTimes(pid, false)
		}
		if i == 100 || slices.Equal(kids, s.children()) {
			return total
		}
	}
}

// children are the postmaster's live (or not yet reaped) child processes.
func (s *pgServer) children() []int {
	var kids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err == nil && pid != s.pid && ppid(pid) == s.pid {
			kids = append(kids, pid)
		}
	}
	return kids
}

// settle waits, up to 10 s, until the server has no client backend (a
// child whose title names its client, 127.0.0.1(port)): the backends of a
// node that just closed have ended and been reaped, so that their CPU
// time is in the next cpu().
func (s *pgServer) settle() {
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		busy := false
		for _, pid := range s.children() {
			title, _ := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
			busy = busy || bytes.Contains(title, []byte("127.0.0.1("))
		}
		if !busy {
			return
		}
		time.Sleep(10 * time.Millisecond) // polling /proc: nothing to wait on
	}
}

// procTimes is utime + stime of pid (with children: + cutime + cstime).
func procTimes(pid int, children bool) time.Duration {
	f := statFields(pid)
	if len(f) < 15 {
		return 0
	}
	// f[0] is field 3; utime is field 14 (f[11]) ... cstime field 17 (f[14]).
	n := 2
	if children {
		n = 4
	}
	var t int64
	for i := 11; i < 11+n; i++ {
		v, _ := strconv.ParseInt(f[i], 10, 64)
		t += v
	}
	return time.Duration(t) * clockTick
}

func ppid(pid int) int {
	f := statFields(pid)
	if len(f) < 2 {
		return 0
	}
	p, _ := strconv.Atoi(f[1])
	return p
}

func statFields(pid int) []string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return nil
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(string(b[i+1:]))
}

// freshDatabase creates an empty database and returns its DSN, after a
// CHECKPOINT: the run before it leaves no dirty pages for this one to
// write.
func (s *pgServer) freshDatabase(ctx context.Context, name string) (string, error) {
	c, err := pgx.Connect(ctx, s.dsn)
	if err != nil {
		return "", fmt.Errorf("bench: postgres: %w", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, "CHECKPOINT"); err != nil {
		return "", fmt.Errorf("bench: postgres: %w", err)
	}
	if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("bench: postgres: %w", err)
	}
	if _, err := c.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		return "", fmt.Errorf("bench: postgres: %w", err)
	}
	return strings.Replace(s.dsn, "/postgres?", "/"+name+"?", 1), nil
}

// pgCeilingRun is the PostgreSQL ceiling: the same rows, decoded outside
// the measured time, written in transactions of batchRows with a binary
// COPY into a table of the sink's layout and one progress UPDATE each, by
// one connection; no source, no loadnode. The rows have the end-to-end
// job's key pattern: record i is offset i/parts of partition i%parts, the
// partitions are split between tasks as p%tasks, and each transaction
// holds the next batchRows rows of one task's partitions in key order (as
// the sink sorts a batch), the tasks taking turns.
func pgCeilingRun(ctx context.Context, s *pgServer, rows *encodedRows, batchRows, parts, tasks, run int) (sample, int64, error) {
	dsn, err := s.freshDatabase(ctx, fmt.Sprintf("ceiling_%d", run))
	if err != nil {
		return sample{}, 0, err
	}
	schema, err := table.NewSchema(&api.TableSpec{Name: "store_ceiling", Columns: benchColumns()})
	if err != nil {
		return sample{}, 0, err
	}
	cols := []string{"_loadnode_key", "_loadnode_job", "_loadnode_partition", "_loadnode_offset"}
	ddl := `CREATE TABLE t (_loadnode_key bytea PRIMARY KEY, _loadnode_job bigint NOT NULL, _loadnode_partition integer NOT NULL, _loadnode_offset bigint NOT NULL`
	for _, c := range schema.Columns() {
		cols = append(cols, c.GetName())
		typ := map[api.ColumnType]string{api.ColumnType_INT64: "bigint", api.ColumnType_FLOAT64: "double precision",
			api.ColumnType_STRING: "text", api.ColumnType_BOOL: "boolean", api.ColumnType_TIMESTAMP: "timestamptz"}[c.GetType()]
		ddl += ", " + pgx.Identifier{c.GetName()}.Sanitize() + " " + typ
	}
	ddl += `); CREATE TABLE progress (job bigint, partition integer, position bigint, PRIMARY KEY (job, partition));
		INSERT INTO progress SELECT 1, p, 0 FROM generate_series(0, ` + strconv.Itoa(parts-1) + `) p`
	parts, tasks = max(parts, 1), max(min(tasks, parts), 1)
	// Each task's rows in its partitions' key order, then cut in batches.
	byTask := make([][][]any, tasks)
	var vals []table.Value
	for i, kv := range rows.rows {
		if vals, _, err = table.DecodeValue(schema, kv.Value, vals); err != nil {
			return sample{}, 0, err
		}
		pos := table.Pos{JobID: 1, Partition: int32(i % parts), Offset: int64(i / parts)}
		key := table.AppendKey(nil, schema.Model(), pos, vals)
		r := []any{key, int64(pos.JobID), pos.Partition, pos.Offset}
		for j, c := range schema.Columns() {
			v := vals[j]
			switch {
			case v.Null:
				r = append(r, nil)
			case c.GetType() == api.ColumnType_INT64:
				r = append(r, v.Int)
			case c.GetType() == api.ColumnType_FLOAT64:
				r = append(r, v.Float)
			case c.GetType() == api.ColumnType_STRING:
				r = append(r, v.Str)
			case c.GetType() == api.ColumnType_BOOL:
				r = append(r, v.Bool)
			default:
				r = append(r, time.UnixMicro(v.Int).UTC())
			}
		}
		g := int(pos.Partition) % tasks
		byTask[g] = append(byTask[g], r)
	}
	type batch struct {
		rows     [][]any
		parts    []int32
		from, to []int64
	}
	var batches []batch
	for done := false; !done; {
		done = true
		for g := range byTask {
			n := min(batchRows, len(byTask[g]))
			if n == 0 {
				continue
			}
			done = false
			b := batch{rows: byTask[g][:n]}
			byTask[g] = byTask[g][n:]
			sort.SliceStable(b.rows, func(i, j int) bool { return bytes.Compare(b.rows[i][0].([]byte), b.rows[j][0].([]byte)) < 0 })
			first := map[int32]int64{}
			last := map[int32]int64{}
			for _, r := range b.rows {
				p, off := r[2].(int32), r[3].(int64)
				if _, ok := first[p]; !ok {
					first[p] = off
					b.parts = append(b.parts, p)
				}
				last[p] = off + 1
			}
			for _, p := range b.parts {
				b.from, b.to = append(b.from, first[p]), append(b.to, last[p])
			}
			batches = append(batches, b)
		}
	}
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return sample{}, 0, fmt.Errorf("bench: postgres: %w", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, ddl); err != nil {
		return sample{}, 0, fmt.Errorf("bench: postgres ceiling: %w", err)
	}
	n := len(rows.rows)
	pg0 := s.cpu()
	m := startMeter(0)
	for _, b := range batches {
		err := pgx.BeginFunc(ctx, c, func(tx pgx.Tx) error {
			if _, err := tx.CopyFrom(ctx, pgx.Identifier{"t"}, cols, pgx.CopyFromRows(b.rows)); err != nil {
				return err
			}
			tag, err := tx.Exec(ctx, `UPDATE progress p SET position = u.t FROM unnest($1::integer[], $2::bigint[], $3::bigint[]) AS u(p, f, t)
				WHERE p.job = 1 AND p.partition = u.p AND p.position = u.f`, b.parts, b.from, b.to)
			if err == nil && tag.RowsAffected() != int64(len(b.parts)) {
				err = fmt.Errorf("progress moved %d partitions of %d", tag.RowsAffected(), len(b.parts))
			}
			return err
		})
		if err != nil {
			return sample{}, 0, fmt.Errorf("bench: postgres ceiling: %w", err)
		}
	}
	smp := m.stop(int64(n), rows.bytes)
	smp.batches = int64(len(batches))
	return smp, int64(s.cpu() - pg0), nil
}

// runPostgres runs the postgres scenario on a private PostgreSQL cluster:
// its ceiling on the store ceiling's rows and loadnode end to end from the
// json topic of 8 partitions (or the first partition count asked), on the
// same server, alternating: a ceiling run, then an end-to-end run, o.Runs
// times after one warm-up pair (medians). Alternating keeps the two
// rows' runs under about the same load on a shared host, where a ceiling
// measured before and a job measured after drift apart.
func runPostgres(ctx context.Context, o Options, brokers []string, logf func(string, ...any)) ([]*Throughput, error) {
	parts := o.Partitions[0]
	for _, p := range o.Partitions {
		if p == 8 {
			parts = 8
		}
	}
	format := o.Formats[0]
	tasks := o.Tasks
	if tasks == 0 {
		tasks = config.DefaultDesiredConcurrentNumber
	}
	ceil := &Throughput{Scenario: scenarioPGCeiling, Format: "encoded", Partitions: parts, Records: int64(o.Records)}
	e2e := &Throughput{Scenario: scenarioPGE2E, Format: format, Partitions: parts, Records: int64(o.Records)}
	out := []*Throughput{ceil, e2e}
	s, err := startPostgres()
	if err != nil {
		ceil.Skipped, e2e.Skipped = err.Error(), err.Error()
		logf("postgres: skipped: %v", err)
		return out, nil
	}
	defer s.srv.Close()
	rows, err := encodeRows(o.Records, o.RecordBytes)
	if err != nil {
		ceil.Error, e2e.Error = err.Error(), err.Error()
		return out, err
	}
	topic := topicName(format, parts, o.Records, o.RecordBytes)
	ends, err := prepareTopic(ctx, brokers, topic, format, parts, o.Records, o.RecordBytes)
	if err != nil {
		e2e.Error = err.Error()
		return out, err
	}
	e2e.Topic, e2e.Records = topic, sum(ends)

	var ceilSS, e2eSS []sample
	var ceilCPU, e2eCPU []time.Duration
	for run := 0; run <= o.Runs; run++ {
		smp, pgCPU, err := pgCeilingRun(ctx, s, rows, o.BatchRows, parts, tasks, run)
		if err != nil {
			ceil.Error = err.Error()
			return out, err
		}
		ceilCPU = append(ceilCPU, time.Duration(pgCPU))
		dsn, err := s.freshDatabase(ctx, fmt.Sprintf("e2e_%d", run))
		if err != nil {
			e2e.Error = err.Error()
			return out, err
		}
		s.settle()
		pg0 := s.cpu()
		esmp, err := e2eRunDB(ctx, o, brokers, topic, format, ends, run, dsn)
		if err != nil {
			e2e.Error = err.Error()
			return out, err
		}
		s.settle() // the node's backends, closed with it
		e2eCPU = append(e2eCPU, s.cpu()-pg0)
		c, e := rate(smp), rate(esmp)
		cc, ec := pgCPUPerMillion(ceilCPU[run], int64(len(rows.rows))), pgCPUPerMillion(e2eCPU[run], e2e.Records)
		if run == 0 {
			logf("postgres warm-up: ceiling %.0f, loadnode %.0f records/s; PostgreSQL CPU s/M rows %.2f, %.2f", c, e, cc, ec)
			continue
		}
		ceilSS, e2eSS = append(ceilSS, smp), append(e2eSS, esmp)
		e2e.PGRunRatios = append(e2e.PGRunRatios, e/max(c, 1))
		logf("postgres run %d: ceiling %.0f, loadnode %s p%d %.0f records/s (%.2f x); PostgreSQL CPU s/M rows %.2f, %.2f",
			run, c, format, parts, e, e/max(c, 1), cc, ec)
	}
	summarize(ceil, ceilSS)
	ceil.ServerCPUSecPerMillion = serverCPU(ceilCPU, int64(len(rows.rows)))
	summarize(e2e, e2eSS)
	e2e.ServerCPUSecPerMillion = serverCPU(e2eCPU, e2e.Records)
	if ceil.RecordsPerSec > 0 {
		r := e2e.RecordsPerSec / ceil.RecordsPerSec
		e2e.PGToCeilingRatio = &r
	}
	logf("postgres ceiling %10.0f records/s", ceil.RecordsPerSec)
	logf("loadnode -> postgres %s p%-2d %10.0f records/s (%.2f x the postgres ceiling)", format, parts, e2e.RecordsPerSec, e2e.RecordsPerSec/max(ceil.RecordsPerSec, 1))
	return out, nil
}

// rate is a sample's records per second.
func rate(s sample) float64 {
	if s.elapsed <= 0 {
		return 0
	}
	return float64(s.records) / s.elapsed.Seconds()
}

// pgCPUPerMillion is d per million of records.
func pgCPUPerMillion(d time.Duration, records int64) float64 {
	return d.Seconds() / (float64(max(records, 1)) / 1e6)
}

// serverCPU is the median server CPU seconds per million records; the
// first value (the warm-up run of repeat) is dropped when there are more.
func serverCPU(ds []time.Duration, records int64) float64 {
	if len(ds) > 1 {
		ds = ds[1:]
	}
	v := make([]float64, len(ds))
	for i, d := range ds {
		v[i] = d.Seconds() / (float64(records) / 1e6)
	}
	return median(v)
}
