package actors

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/loadnode/loadnode/api"
	"github.com/loadnode/loadnode/sink"
	"github.com/loadnode/loadnode/sources"
	"github.com/loadnode/loadnode/table"
)

// taskConfig is everything a task actor is born with. It is immutable.
type taskConfig struct {
	jobID uint64
	// keySpace is the job field of its DUPLICATE row keys
	// (table.KeySpace: the job id and its rebase count).
	keySpace   uint64
	generation uint64
	index      int
	job        *actor.PID
	scheduler  *actor.PID
	source     Source
	schema     *table.Schema
	format     table.Format
	limits     sources.Limits
	start      map[int32]sources.Start
	// keepReader: the source has no watermarks to wake a dormant task
	// (Kinesis), so the task keeps its reader open between empty reads.
	keepReader bool
	settings   Settings
	logger     *slog.Logger
	// checker, when not nil, is the sink's check of a parsed row: a row
	// it refuses becomes an error row.
	checker sink.RowChecker
	// encoder, when not nil, is the sink's encoding of rows of table,
	// done as a batch is parsed (off the job's serial commit path).
	encoder sink.Encoder
	table   string
	// deadLetters: the job has an error_topic; error rows keep the
	// record's key and whole value for it (commitBatch.letters).
	deadLetters bool
	// tables, for a multi-table job (JobSpec.tables), are the schemas of
	// its tables, the first being schema's: each record is
	// "table|record" and goes to the table it names.
	tables []*table.Schema
}

// route is one table of a multi-table task, with the parser (owned by the
// read goroutine while it runs) of its records.
type route struct {
	schema *table.Schema
	parser *table.Parser
	vals   []table.Value
}

// routes holds a multi-table task's routes by table name, and the names
// for error messages.
type routes struct {
	by    map[string]*route
	names string
}

// commitBatch asks the job actor to commit one batch. The job answers with
// *commitResult.
type commitBatch struct {
	generation uint64
	task       int
	ranges     []sink.Range
	rows       []sink.KV
	// encoded, when not nil, is rows encoded by the sink (sink.Encoder).
	encoded   sink.Encoding
	errorRows []*api.ErrorRow
	// letters are errorRows with their records' keys and values, when the
	// job has an error_topic.
	letters []DeadLetter
	// more are rows for a multi-table job's other tables, by table.
	more       map[string][]sink.KV
	loaded     int64
	unselected int64 // rows a filter (WHERE) left out
	bytes      int64
	records    int64
	// behind is the source's MillisBehindLatest per partition, where known.
	behind map[int32]int64
	// bufs are the arena and row headers the rows (and more) live in; the
	// task takes them back for its next batch once this one is durable.
	bufs *batchBufs
}

// batchBufs are a batch's row arena (every row's key and value) and its
// row headers. A batch of max_batch_rows rows takes a few MiB of each:
// allocated afresh per batch, they were zeroed, or first touched (a page
// fault each 4 KiB), on every batch. A task keeps one set, of the batch
// it last had committed, for its next read.
//
// INVARIANT: a task reuses a batch's bufs only after the job answered the
// batch's commit with success: the sink's Commit has returned, and nothing
// of the job or the sink refers to the rows any more.
type batchBufs struct {
	arena []byte
	rows  []sink.KV
}

// maxSpareArena bounds the arena a task keeps for its next batch; a batch
// bigger than that (max_batch_size allows hundreds of MiB) leaves its
// arena to the GC.
const maxSpareArena = 32 << 20

// take returns b's arena and row headers with room for at least arena
// bytes and rows rows, empty (and the headers zeroed: appendKV relies on
// it); a nil b, or one too small, gives fresh ones.
func (b *batchBufs) take(arena, rows int) ([]byte, []sink.KV) {
	var a []byte
	var r []sink.KV
	if b != nil && cap(b.arena) >= arena {
		a = b.arena[:0]
	} else {
		a = make([]byte, 0, arena)
	}
	if b != nil && cap(b.rows) >= rows {
		r = b.rows[:cap(b.rows)]
		clear(r)
		r = r[:0]
	} else {
		r = make([]sink.KV, 0, rows)
	}
	return a, r
}

// commitResult answers a commitBatch. err is nil when the batch is durable.
type commitResult struct {
	err error
}

// taskFailed tells the job actor that a task cannot go on.
type taskFailed struct {
	generation uint64
	task       int
	err        error
}

// batchCollected is sent by a task's read goroutine to its task actor.
type batchCollected struct {
	commit *commitBatch
	next   map[int32]int64
	err    error
}

// requestSlot asks the task actor (itself) to ask for a slot again.
type requestSlot struct{}

// ErrStaleCommit is wrapped by the answer to a commit from a task that is
// no longer current or whose start positions differ from the job's
// progress. It is sink.ErrStaleCommit: a refusal by the job and one by the
// sink are the same to errors.Is.
var ErrStaleCommit = sink.ErrStaleCommit

// task reads one partition group: per slot grant it reads one batch and
// parses it, gives the slot back and asks its job to commit the batch.
//
// Reads are pipelined with commits: while a batch's commit is in flight
// the task asks for a slot again and reads the next batch from the
// batch's Next positions (the read-ahead). It sends that batch only when
// the previous commit was acknowledged, so that it has at most one commit
// outstanding and every commit starts at the job's durable progress. If a
// commit is refused, the task stops: the read-ahead is cancelled and
// discarded with the reader, and the job's next generation reads again
// from durable progress.
type task struct {
	cfg     taskConfig
	life    *lifetime
	reader  sources.Reader
	parser  *table.Parser
	routes  *routes                 // multi-table jobs only
	pos     map[int32]sources.Start // after the last batch read (committed or not)
	done    <-chan struct{}         // closed when the read goroutine has returned
	holding bool
	idle    time.Duration
	// reading: a read goroutine is running (it was started under a slot).
	reading bool
	// committing: a commit request is outstanding.
	committing bool
	// ready is a read batch waiting for the outstanding commit.
	ready *commitBatch
	// sent is the batch of the outstanding commit; spare the bufs of the
	// last batch committed, for the next read (nil while a read has
	// them, and after an empty read: an idle task keeps none).
	sent  *commitBatch
	spare *batchBufs
	// napping: a requestSlot timer is pending (the last read was empty).
	napping bool
	// pendingErr is a read error to report once the records read before it
	// are committed; no read starts after it.
	pendingErr error
	asks       uint64 // slot requests sent, to match their time-outs
	empties    int    // empty reads in a row
	// fed: the current reader has returned something. A reader that has
	// not may still be waiting for its first fetch (slower than a short
	// max_batch_interval on a busy broker): closing it then would throw
	// its fetch away and start over, again and again.
	fed    bool
	failed bool // reported a failure; waits for its job to stop it
}

func newTaskProps(cfg taskConfig) *actor.Props {
	return actor.PropsFromProducer(func() actor.Actor {
		return &task{cfg: cfg, pos: maps.Clone(cfg.start)}
	}, actor.WithDispatcher(mailboxes))
}

func (t *task) Receive(ctx actor.Context) {
	crashOn(ctx.Message())
	if _, ok := ctx.Message().(*actor.Started); ok {
		t.life = newLifetime(ctx)
	}
	if ctx = opened(t.life, ctx); ctx == nil {
		return
	}
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		p, err := newParser(t.cfg, t.cfg.schema)
		if err != nil {
			t.fail(ctx, fmt.Errorf("task %d: parser: %w", t.cfg.index, err))
			return
		}
		t.parser = p
		if len(t.cfg.tables) > 0 {
			rs := &routes{by: map[string]*route{}}
			names := make([]string, len(t.cfg.tables))
			for i, s := range t.cfg.tables {
				rp, err := newParser(t.cfg, s)
				if err != nil {
					t.fail(ctx, fmt.Errorf("task %d: parser of table %s: %w", t.cfg.index, s.Name(), err))
					return
				}
				rs.by[s.Name()] = &route{schema: s, parser: rp}
				names[i] = s.Name()
			}
			rs.names = strings.Join(names, ", ")
			t.routes = rs
		}
		t.next(ctx)
	case *requestSlot:
		t.napping = false
		t.next(ctx)
	case *marksChecked:
		t.onMarks(ctx, msg)
	case *slotTimeout:
		if msg.ask == t.asks && t.wantsRead() && !t.holding {
			t.ask(ctx)
		}
	case *SlotGrant:
		if !t.wantsRead() {
			if !t.holding {
				// Not ours to use: give it back at once.
				ctx.Request(t.cfg.scheduler, &SlotRelease{})
			}
			return
		}
		if t.reader == nil {
			// Readers are opened for work and closed when idle, so that an
			// idle job holds no connection.
			r, err := t.cfg.source.NewReader(t.pos)
			if err != nil {
				t.fail(ctx, fmt.Errorf("task %d: open reader: %w", t.cfg.index, err))
				return
			}
			t.reader, t.fed = r, false
		}
		t.holding = true
		t.reading = true
		t.read(ctx)
	case *batchCollected:
		t.onBatch(ctx, msg)
	case *commitResult:
		t.committing = false
		if msg.err != nil {
			// The job refused the batch (stale, paused) or could not make
			// it durable: this task's positions can no longer be trusted.
			t.cfg.logger.Debug("task commit refused", "task", t.cfg.index, "err", msg.err)
			ctx.Stop(ctx.Self())
			return
		}
		t.idle, t.empties = 0, 0
		// The batch is durable: its buffers serve the next read.
		if t.sent != nil {
			t.spare, t.sent = t.sent.bufs, nil
		}
		if c := t.ready; c != nil {
			t.ready = nil
			t.send(ctx, c)
			return
		}
		if t.reading {
			return // the read-ahead goes on
		}
		if err := t.pendingErr; err != nil {
			t.pendingErr = nil
			t.fail(ctx, err)
			return
		}
		if !t.napping && !t.holding {
			t.ask(ctx)
		}
	case *actor.Stopping:
		t.shutdown()
	case *actor.Restarting:
		t.shutdown()
	}
}

// dormantAfter is the number of empty reads in a row after which a task
// closes its reader.
const dormantAfter = 2

// dormantUnfed is the number of empty reads in a row after which a task
// closes a reader that has returned nothing yet (opened because the
// watermarks showed records, which may be control records only).
const dormantUnfed = 10

// marksChecked carries a dormant task's look at the high watermarks.
type marksChecked struct {
	lag bool
}

// next asks for a slot when the task has a reader (it is reading), and
// otherwise first checks the cached high watermarks in a goroutine.
func (t *task) next(ctx actor.Context) {
	if !t.wantsRead() {
		return
	}
	if t.reader != nil {
		t.ask(ctx)
		return
	}
	src := t.cfg.source
	pos := make(map[int32]int64, len(t.pos))
	for p, o := range t.pos {
		pos[p] = o.Offset
	}
	// A failed look-up (or a panic in it) means "read and see".
	run(t.life, "task watermark look-up", func(ctx context.Context) *marksChecked {
		ctx, cancel := context.WithTimeout(ctx, watermarkTimeout)
		defer cancel()
		marks, err := src.Watermarks(ctx)
		if err != nil {
			return &marksChecked{lag: true}
		}
		for p, o := range pos {
			if hw, ok := marks[p]; !ok || hw > o {
				return &marksChecked{lag: true}
			}
		}
		return &marksChecked{lag: false}
	}, func(error) *marksChecked { return &marksChecked{lag: true} })
}

func (t *task) onMarks(ctx actor.Context, msg *marksChecked) {
	if !t.wantsRead() {
		return
	}
	if msg.lag {
		t.ask(ctx)
		return
	}
	// Nothing to read: look again later, backing off up to dormantPoll.
	t.idle = min(max(t.idle*2, 50*time.Millisecond), dormantPoll)
	t.life.after(t.idle, &requestSlot{})
}

// dormantPoll bounds how long a dormant task waits between looks at the
// high watermarks (which are themselves cached for a few seconds).
const dormantPoll = 2 * time.Second

func (t *task) ask(ctx actor.Context) {
	ctx.Request(t.cfg.scheduler, &SlotRequest{JobID: t.cfg.jobID})
	// A restarted scheduler forgets who waits: ask again if no grant comes.
	t.asks++
	t.life.after(slotRetry, &slotTimeout{ask: t.asks})
}

// slotRetry is how long a task waits for a grant before asking again.
const slotRetry = 5 * time.Second

// slotTimeout fires slotRetry after the ask-th slot request.
type slotTimeout struct{ ask uint64 }

func (t *task) release(ctx actor.Context) {
	if t.holding {
		t.holding = false
		ctx.Request(t.cfg.scheduler, &SlotRelease{})
	}
}

// fail reports err to the job and stops reading. The task does not stop
// itself: the job decides (pause, or a new generation) and stops it; a
// Terminated arriving before taskFailed would hide the failure's kind.
func (t *task) fail(ctx actor.Context, err error) {
	t.release(ctx)
	t.failed = true
	if t.reader != nil {
		t.reader.Close()
		t.reader = nil
	}
	ctx.Send(t.cfg.job, &taskFailed{generation: t.cfg.generation, task: t.cfg.index, err: err})
}

// newParser is a task's parser of records into rows of s. No value it
// makes (an expression's, a decoded record) is larger than the node's
// max_record_size: a record that would need one is an error row.
func newParser(cfg taskConfig, s *table.Schema) (*table.Parser, error) {
	f := cfg.format
	f.MaxValueBytes = cfg.settings.MaxRecordBytes
	return table.NewParser(s, f)
}

// read starts the goroutine that reads and parses one batch. The goroutine
// owns the reader and parser until it sends batchCollected; it touches no
// actor state.
func (t *task) read(ctx actor.Context) {
	reader, parser, cfg, rs, spare := t.reader, t.parser, t.cfg, t.routes, t.spare
	t.spare = nil
	start := make(map[int32]int64, len(t.pos))
	for p, o := range t.pos {
		start[p] = o.Offset
	}
	t.done = run(t.life, fmt.Sprintf("task %d read", cfg.index), func(ctx context.Context) *batchCollected {
		out := collect(ctx, cfg, reader, parser, rs, start, spare)
		return &out
	}, func(err error) *batchCollected { return &batchCollected{err: err} })
}

// collect reads one batch and turns it into a commit request, its rows in
// spare's buffers when they are big enough (spare may be nil).
func collect(ctx context.Context, cfg taskConfig, reader sources.Reader, home *table.Parser, rs *routes, start map[int32]int64, spare *batchBufs) batchCollected {
	b, readErr := reader.Read(ctx, cfg.limits)
	if b == nil {
		if readErr == nil {
			readErr = errors.New("source returned no batch")
		}
		return batchCollected{err: readErr}
	}
	// A read may return records together with an error (e.g. records before
	// a retention gap, then OFFSET_OUT_OF_RANGE): the records are committed
	// first, then the error is reported.
	c := &commitBatch{generation: cfg.generation, task: cfg.index, bytes: b.Bytes, records: int64(len(b.Records))}
	var err error
	if c.ranges, err = rangesOf(cfg.index, b, start); err != nil {
		return batchCollected{err: err}
	}
	c.behind = b.BehindMs
	vals := make([]table.Value, len(cfg.schema.Columns()))
	arena, rows := spare.take(int(b.Bytes)+len(b.Records)*(table.KeyLen+16), len(b.Records))
	c.rows = rows
	now := time.Now()
	nowMs := now.UnixMilli()
	// One load time per batch, as Doris takes one per load (DEFAULT
	// CURRENT_TIMESTAMP). A batch parsed again after a crash takes a new
	// one: only one parse of a batch commits, with its progress.
	home.SetLoadTime(now)
	if rs != nil {
		for _, rt := range rs.by {
			rt.parser.SetLoadTime(now)
		}
	}
	var enc sink.Encoding
	if cfg.encoder != nil {
		enc = cfg.encoder.EncodeBatch(cfg.table, len(b.Records), int(b.Bytes))
	}
	var meta table.RecordMeta
	var elems []table.Element
	for i := range b.Records {
		r := &b.Records[i]
		parser, schema, value := home, cfg.schema, r.Value
		var rt *route
		pos := table.Pos{JobID: cfg.jobID, Partition: r.Partition, Offset: r.Offset}
		keyPos := pos
		keyPos.JobID = cfg.keySpace
		var perr error
		if r.Err != nil {
			perr = r.Err // the source could not decode it
		} else if len(r.Value) > cfg.settings.MaxRecordBytes {
			perr = fmt.Errorf("record of %d bytes exceeds the %d-byte limit", len(r.Value), cfg.settings.MaxRecordBytes)
		} else if rs != nil {
			if rt, value, perr = rs.route(value); rt != nil {
				parser, schema = rt.parser, rt.schema
			}
		}
		if perr == nil {
			if parser.UsesMeta() {
				meta = recordMeta(r, b.Topic, meta)
				parser.SetMeta(&meta)
			}
			// One row per element: the record itself, a csv record's
			// lines, or with strip_outer_array each element of its array.
			if elems, perr = parser.Split(value, elems); perr != nil && rt != nil {
				perr = fmt.Errorf("table %s: %w", schema.Name(), perr)
			}
		}
		if perr != nil {
			var unavailable *table.UnavailableError
			if errors.As(perr, &unavailable) {
				return batchCollected{err: perr}
			}
			c.addErrorRow(cfg, r, r.Value, perr, nowMs)
			continue
		}
		for k := range elems {
			el := &elems[k]
			vals, perr = parseElement(parser, schema, rt, cfg.checker, el, vals)
			if perr == table.ErrFiltered {
				c.unselected++
				continue
			}
			if perr != nil {
				// (Inside the branch: errors.As's target escapes, and a row
				// without an error is not worth an allocation.)
				var unavailable *table.UnavailableError
				if errors.As(perr, &unavailable) {
					// The schema registry did not answer: nothing of this
					// batch is committed (no error row per record); the job
					// retries from its durable progress with back-off.
					return batchCollected{err: perr}
				}
				raw := r.Value
				switch {
				case parser.Strips():
					raw = el.Raw
					perr = fmt.Errorf("element %d: %w", k, perr)
				case len(elems) > 1:
					raw = el.Raw // a csv record's line
				}
				c.addErrorRow(cfg, r, raw, perr, nowMs)
				continue
			}
			var kv sink.KV
			arena, kv = appendRow(arena, schema, keyPos, pos, vals, k)
			kv.Delete = parser.Deleted()
			key := kv.Key
			if named := parser.Named(); named != nil {
				kv.Named = slices.Clone(named) // UPDATE_FLEXIBLE_COLUMNS: the columns this row names
			}
			if schema != cfg.schema && schema.Name() != cfg.schema.Name() {
				if c.more == nil {
					c.more = map[string][]sink.KV{}
				}
				c.more[schema.Name()] = append(c.more[schema.Name()], kv)
			} else {
				c.rows = appendKV(c.rows, kv)
				if enc != nil && enc.Add(key, pos, vals) != nil {
					enc = nil // the commit encodes the rows itself (and says why)
				}
			}
			c.loaded++
		}
	}
	if enc != nil {
		enc.Seal()
		c.encoded = enc
	}
	if cap(arena) <= maxSpareArena {
		c.bufs = &batchBufs{arena: arena, rows: c.rows}
	}
	if rc, ok := reader.(sources.Recycler); ok {
		rc.Recycle(b) // every record is parsed: the rows hold none of the slots
	}
	return batchCollected{commit: c, next: b.Next, err: readErr}
}

// rangesOf is the ranges batch b moves, from start (the positions the
// task was given): every partition of b.Next must be one given, none may
// move backwards, and a checkpoint comes with its position.
func rangesOf(task int, b *sources.Batch, start map[int32]int64) ([]sink.Range, error) {
	var ranges []sink.Range
	for p, next := range b.Next {
		from, ok := start[p]
		if !ok {
			return nil, fmt.Errorf("task %d: source returned partition %d it was not given", task, p)
		}
		if next < from {
			return nil, fmt.Errorf("task %d: source moved partition %d backwards from %d to %d", task, p, from, next)
		}
		ck := b.Checkpoints[p]
		if next > from || ck != nil {
			ranges = append(ranges, sink.Range{Partition: p, From: from, To: next, Checkpoint: ck})
		}
	}
	for p := range b.Checkpoints {
		if _, ok := b.Next[p]; !ok {
			return nil, fmt.Errorf("task %d: source returned a checkpoint for partition %d without its position", task, p)
		}
	}
	return ranges, nil
}

// route finds the table of a multi-table record (Doris's "table|record"):
// its route and the record without the table's name, or why it has none.
func (rs *routes) route(value []byte) (*route, []byte, error) {
	name, rest, ok := bytes.Cut(value, []byte{'|'})
	switch rt := rs.by[string(name)]; {
	case !ok:
		return nil, value, fmt.Errorf("multi-table record names no table: want table|record (tables: %s)", rs.names)
	case rt == nil:
		return nil, value, fmt.Errorf("table %q does not exist or is not loaded by this job: it loads tables %s (a multi-table job loads the DUPLICATE tables it was created with)", api.Clip(string(name), 128), rs.names)
	default:
		return rt, rest, nil
	}
}

// parseElement parses element el with parser into vals (a route's own
// values for a multi-table record) and checks the row. The row is encoded
// before the next one is parsed: its STRING cells may borrow the record's
// bytes.
func parseElement(parser *table.Parser, schema *table.Schema, rt *route, checker sink.RowChecker, el *table.Element, vals []table.Value) ([]table.Value, error) {
	if el.Err != nil {
		return vals, el.Err
	}
	var err error
	if rt != nil {
		rt.vals, err = parser.ParseBorrowed(el.Raw, rt.vals)
		vals = rt.vals
	} else {
		vals, err = parser.ParseBorrowed(el.Raw, vals)
	}
	if err != nil && rt != nil {
		err = fmt.Errorf("table %s: %w", schema.Name(), err)
	}
	if err == nil && checker != nil {
		err = checker.CheckRow(schema, vals)
	}
	return vals, err
}

// appendRow appends element k's row key and value to arena and returns
// them as a KV: keys and values share one arena per batch (two small
// allocations per row were most of the batch-building allocations).
func appendRow(arena []byte, schema *table.Schema, keyPos, pos table.Pos, vals []table.Value, k int) ([]byte, sink.KV) {
	start := len(arena)
	arena = table.AppendRowKey(arena, schema, keyPos, vals)
	arena = table.AppendElement(arena, schema, k)
	key := arena[start:len(arena):len(arena)]
	start = len(arena)
	arena = table.AppendValue(arena, schema, pos, vals)
	return arena, sink.KV{Key: key, Value: arena[start:len(arena):len(arena)]}
}

// appendKV appends kv to rows field by field into the next slot, which is
// zero (rows only grow): appending the whole struct takes a bulk write
// barrier per row while the GC marks.
func appendKV(rows []sink.KV, kv sink.KV) []sink.KV {
	if len(rows) == cap(rows) {
		rows = slices.Grow(rows, 1)
	}
	rows = rows[:len(rows)+1]
	out := &rows[len(rows)-1]
	out.Key, out.Value, out.Delete = kv.Key, kv.Value, kv.Delete
	if kv.Named != nil {
		out.Named = kv.Named
	}
	return rows
}

// addErrorRow adds an error row for record r (raw: the record, or the
// element of it at fault) to c: the error row keeps at most
// ErrorRowRawBytes of raw, a dead letter all of it.
func (c *commitBatch) addErrorRow(cfg taskConfig, r *sources.Record, raw []byte, perr error, nowMs int64) {
	kept := raw
	if len(kept) > cfg.settings.ErrorRowRawBytes {
		kept = kept[:cfg.settings.ErrorRowRawBytes]
	}
	er := &api.ErrorRow{
		Partition: r.Partition, Offset: r.Offset,
		Raw:    append([]byte(nil), kept...),
		Reason: api.Clip(perr.Error(), api.MaxReasonBytes), TimeUnixMs: nowMs,
	}
	c.errorRows = append(c.errorRows, er)
	if cfg.deadLetters {
		c.letters = append(c.letters, DeadLetter{Row: er, Key: bytes.Clone(r.Key), Value: bytes.Clone(raw)})
	}
}

func (t *task) onBatch(ctx actor.Context, msg *batchCollected) {
	t.done = nil
	t.reading = false
	t.release(ctx)
	if msg.err != nil && (msg.commit == nil || len(msg.commit.ranges) == 0) {
		if t.committing {
			// Report it once the batch before it is committed.
			t.pendingErr = msg.err
			return
		}
		t.fail(ctx, msg.err)
		return
	}
	t.pendingErr = msg.err
	if len(msg.commit.ranges) == 0 {
		// Nothing new. After a few empty reads the task goes dormant: it
		// closes its reader and asks for a slot again only when the
		// (shared, cached) high watermarks show records to read. A task
		// that has caught up keeps no buffers.
		t.spare = nil
		t.empties++
		if t.empties >= dormantAfter && (t.fed || t.empties >= dormantUnfed) && t.reader != nil && !t.cfg.keepReader {
			t.reader.Close()
			t.reader = nil
		}
		t.idle = min(max(t.idle*2, 50*time.Millisecond), time.Second)
		t.napping = true
		t.life.after(t.idle, &requestSlot{})
		return
	}
	t.fed = true
	for _, r := range msg.commit.ranges {
		s := t.pos[r.Partition]
		s.Offset = r.To
		if r.Checkpoint != nil {
			s.Checkpoint = r.Checkpoint
		}
		t.pos[r.Partition] = s
	}
	if t.committing {
		t.ready = msg.commit
		return
	}
	t.send(ctx, msg.commit)
}

// send asks the job to commit c and, unless the read failed, asks for a
// slot to read the next batch meanwhile.
func (t *task) send(ctx actor.Context, c *commitBatch) {
	t.committing, t.sent = true, c
	ctx.Request(t.cfg.job, c)
	if t.wantsRead() && !t.holding && !t.napping {
		t.ask(ctx)
	}
}

// wantsRead reports whether the task may start a read now: it is healthy,
// not reading, has no batch waiting for a commit and no read error to
// report.
func (t *task) wantsRead() bool {
	return !t.failed && !t.reading && t.ready == nil && t.pendingErr == nil
}

func (t *task) shutdown() {
	t.life.end()
	if t.done != nil {
		// The read goroutine owns the reader until it returns.
		<-t.done
		t.done = nil
	}
	if t.reader != nil {
		t.reader.Close()
		t.reader = nil
	}
}
