package client

import (
	"context"
	"time"

	"github.com/loadnode/loadnode/api"
)

// ScanOption configures ScanTable.
type ScanOption func(*scanConfig)

type scanConfig struct {
	page  int
	after []byte
}

// WithPageSize sets the rows asked for per request (default 1000, at most
// api.MaxScanPage; the node may answer fewer, to bound a page's bytes).
func WithPageSize(n int) ScanOption { return func(c *scanConfig) { c.page = n } }

// WithCursor starts the scan at a cursor an earlier scan's Cursor gave.
func WithCursor(cursor []byte) ScanOption {
	return func(c *scanConfig) { c.after = append([]byte(nil), cursor...) }
}

// RowIterator reads a table page by page (one TableScanRequest a page,
// each with the client's timeout), never the whole table in one reply:
//
//	it := c.ScanTable(ctx, "orders")
//	for it.Next() {
//		r := it.Row()
//		id, ok := r.Int64("id") // ok is false for NULL
//	}
//	if err := it.Err(); err != nil { ... }
type RowIterator struct {
	c     *Client
	ctx   context.Context
	table string
	cfg   scanConfig

	schema *api.TableSpec
	index  map[string]int
	rows   []*api.Row
	i      int
	page   []byte // the cursor the current page was read from
	next   []byte // the cursor of the next page; nil when done
	done   bool
	err    error
	row    ScanRow
}

// ScanTable returns an iterator over a table's rows in storage order.
func (c *Client) ScanTable(ctx context.Context, table string, opts ...ScanOption) *RowIterator {
	cfg := scanConfig{page: scanPage}
	for _, o := range opts {
		o(&cfg)
	}
	it := &RowIterator{c: c, ctx: ctx, table: table, cfg: cfg, next: cfg.after}
	if cfg.page <= 0 || cfg.page > api.MaxScanPage {
		it.err = errorf("scan %s: page size %d must be 1..%d", table, cfg.page, api.MaxScanPage)
	}
	return it
}

// Next advances to the next row, reading the next page when the current
// one is used up; false at the end or on an error (see Err).
func (it *RowIterator) Next() bool {
	if it.err != nil {
		return false
	}
	for it.i >= len(it.rows) {
		if it.done || !it.fetch() {
			return false
		}
	}
	it.row = ScanRow{row: it.rows[it.i], index: it.index}
	it.i++
	return true
}

func (it *RowIterator) fetch() bool {
	schema, rows, next, err := it.c.ScanPage(it.ctx, it.table, it.next, it.cfg.page)
	if err != nil {
		it.err = err
		return false
	}
	if it.schema == nil {
		it.schema = schema
		it.index = make(map[string]int, len(it.schema.GetColumns()))
		for i, c := range it.schema.GetColumns() {
			it.index[c.GetName()] = i
		}
	}
	it.page = it.next
	it.rows, it.i = rows, 0
	if len(next) == 0 || len(it.rows) == 0 || string(next) == string(it.next) {
		it.done = true
	}
	it.next = next
	return len(it.rows) > 0
}

// Row is the current row; valid until the next call of Next.
func (it *RowIterator) Row() *ScanRow { return &it.row }

// Schema is the table's schema, known once Next returned true once.
func (it *RowIterator) Schema() *api.TableSpec { return it.schema }

// Cursor resumes a scan (WithCursor) at the start of the current row's
// page: the rows of that page before the current one are read again.
func (it *RowIterator) Cursor() []byte { return append([]byte(nil), it.page...) }

// Err is the error that ended the scan, or nil.
func (it *RowIterator) Err() error { return it.err }

// ScanRow is one row of a scan, read by column name. Every accessor
// returns ok false when the value is NULL, the column does not exist, or
// the value is of another kind, so NULL is never mistaken for zero.
type ScanRow struct {
	row   *api.Row
	index map[string]int
}

// Raw is the row as the node sent it (values in column order, its job,
// partition and offset).
func (r *ScanRow) Raw() *api.Row { return r.row }

// Value is the named column's value, nil when there is no such column.
func (r *ScanRow) Value(col string) *api.Value {
	i, ok := r.index[col]
	if !ok || i >= len(r.row.GetValues()) {
		return nil
	}
	return r.row.GetValues()[i]
}

// Has reports whether the row has the named column.
func (r *ScanRow) Has(col string) bool { return r.Value(col) != nil }

// IsNull reports whether the named column holds NULL (false when there is
// no such column).
func (r *ScanRow) IsNull(col string) bool {
	v := r.Value(col)
	if v == nil {
		return false
	}
	_, null := v.GetKind().(*api.Value_Null)
	return null || v.GetKind() == nil
}

// Int64 reads an integer column (BIGINT, INT, SMALLINT, TINYINT).
func (r *ScanRow) Int64(col string) (int64, bool) {
	k, ok := r.Value(col).GetKind().(*api.Value_Int64)
	if !ok {
		return 0, false
	}
	return k.Int64, true
}

// Float64 reads a DOUBLE or FLOAT column.
func (r *ScanRow) Float64(col string) (float64, bool) {
	k, ok := r.Value(col).GetKind().(*api.Value_Float64)
	if !ok {
		return 0, false
	}
	return k.Float64, true
}

// String reads a text column (STRING, CHAR, VARCHAR), or the text of a
// JSON, DECIMAL or LARGEINT column.
func (r *ScanRow) String(col string) (string, bool) {
	switch k := r.Value(col).GetKind().(type) {
	case *api.Value_String_:
		return k.String_, true
	case *api.Value_Json:
		return k.Json, true
	case *api.Value_Decimal:
		return k.Decimal, true
	}
	return "", false
}

// Bool reads a BOOLEAN column.
func (r *ScanRow) Bool(col string) (bool, bool) {
	k, ok := r.Value(col).GetKind().(*api.Value_Bool)
	if !ok {
		return false, false
	}
	return k.Bool, true
}

// Decimal reads a DECIMAL or LARGEINT column as exact decimal text
// ("-12.50").
func (r *ScanRow) Decimal(col string) (string, bool) {
	k, ok := r.Value(col).GetKind().(*api.Value_Decimal)
	if !ok {
		return "", false
	}
	return k.Decimal, true
}

// Time reads a TIMESTAMP (an instant, UTC), a DATETIME (wall clock, given
// in UTC) or a DATE (midnight UTC) column.
func (r *ScanRow) Time(col string) (time.Time, bool) {
	switch k := r.Value(col).GetKind().(type) {
	case *api.Value_TimestampMicros:
		return time.UnixMicro(k.TimestampMicros).UTC(), true
	case *api.Value_DatetimeMicros:
		return time.UnixMicro(k.DatetimeMicros).UTC(), true
	case *api.Value_Date:
		return time.Unix(int64(k.Date)*86400, 0).UTC(), true
	}
	return time.Time{}, false
}
