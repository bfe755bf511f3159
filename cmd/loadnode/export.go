package main

import (
	"bufio"
	"encoding/csv"
	"fmt"
	"io"
	"math/big"
	"strings"

	"github.com/parquet-go/parquet-go"

	"github.com/loadnode/loadnode/api"
)

// rowWriter writes exported rows in one format; Close ends the output
// (a Parquet footer, buffered text).
type rowWriter interface {
	Write(r *api.Row) error
	Close() error
}

func newRowWriter(format string, w io.Writer, schema *api.TableSpec) (rowWriter, error) {
	switch format {
	case "csv":
		return newCSVWriter(w, schema)
	case "jsonl":
		return &jsonlWriter{w: bufio.NewWriter(w), schema: schema}, nil
	case "parquet":
		return newParquetWriter(w, schema)
	}
	return nil, fmt.Errorf("export: unknown format %q", format)
}

// csvWriter writes a header of column names, then one record a row; NULL
// is \N (as Doris and MySQL export it), every other value as
// `table scan --format table` renders it, unquoted.
type csvWriter struct{ w *csv.Writer }

func newCSVWriter(w io.Writer, schema *api.TableSpec) (*csvWriter, error) {
	cw := &csvWriter{w: csv.NewWriter(w)}
	var header []string
	for _, c := range schema.GetColumns() {
		header = append(header, c.GetName())
	}
	return cw, cw.w.Write(header)
}

func (c *csvWriter) Write(r *api.Row) error {
	rec := make([]string, len(r.GetValues()))
	for i, v := range r.GetValues() {
		rec[i] = csvValue(v)
	}
	return c.w.Write(rec)
}

func csvValue(v *api.Value) string {
	switch k := v.GetKind().(type) {
	case nil, *api.Value_Null:
		return `\N`
	case *api.Value_String_:
		return k.String_
	case *api.Value_Json:
		return k.Json
	}
	return formatValue(v)
}

func (c *csvWriter) Close() error {
	c.w.Flush()
	return c.w.Error()
}

// jsonlWriter writes one JSON object a row, as `table scan` does.
type jsonlWriter struct {
	w      *bufio.Writer
	schema *api.TableSpec
}

func (j *jsonlWriter) Write(r *api.Row) error {
	return printRowsJSONL(j.w, j.schema, []*api.Row{r})
}

func (j *jsonlWriter) Close() error { return j.w.Flush() }

// parquetWriter writes a Parquet file, one optional column per table
// column (NULL is a missing value). Types: BIGINT INT64; INT, SMALLINT,
// TINYINT INT32 with their integer annotations; DOUBLE, FLOAT; BOOLEAN;
// STRING, CHAR, VARCHAR as UTF-8 strings; JSON annotated JSON; DECIMAL(p,s)
// a DECIMAL(p,s) of INT64 (p <= 18) or 16-byte FIXED_LEN_BYTE_ARRAY;
// LARGEINT (up to 39 digits, beyond Parquet's decimals) its exact decimal
// text; DATE a DATE; TIMESTAMP a microsecond timestamp adjusted to UTC;
// DATETIME a microsecond timestamp not adjusted to UTC (wall clock).
type parquetWriter struct {
	// parquet.Writer, not GenericWriter: the schema is the table's, built
	// at run time, and GenericWriter needs a Go type.
	//lint:ignore SA1019 see above
	w     *parquet.Writer
	cols  []*api.Column
	index []int // leaf column index of each table column
	buf   []parquet.Row
}

func newParquetWriter(w io.Writer, spec *api.TableSpec) (*parquetWriter, error) {
	g := parquet.Group{}
	for _, c := range spec.GetColumns() {
		n, err := parquetNode(c)
		if err != nil {
			return nil, err
		}
		g[c.GetName()] = parquet.Optional(n)
	}
	schema := parquet.NewSchema(spec.GetName(), g)
	pw := &parquetWriter{w: parquet.NewWriter(w, schema), cols: spec.GetColumns()}
	for _, c := range spec.GetColumns() {
		leaf, ok := schema.Lookup(c.GetName())
		if !ok {
			return nil, fmt.Errorf("export: parquet: no column %q in the schema", c.GetName())
		}
		pw.index = append(pw.index, leaf.ColumnIndex)
	}
	return pw, nil
}

func parquetNode(c *api.Column) (parquet.Node, error) {
	switch c.GetType() {
	case api.ColumnType_INT64:
		return parquet.Int(64), nil
	case api.ColumnType_INT32:
		return parquet.Int(32), nil
	case api.ColumnType_INT16:
		return parquet.Int(16), nil
	case api.ColumnType_INT8:
		return parquet.Int(8), nil
	case api.ColumnType_FLOAT64:
		return parquet.Leaf(parquet.DoubleType), nil
	case api.ColumnType_FLOAT32:
		return parquet.Leaf(parquet.FloatType), nil
	case api.ColumnType_BOOL:
		return parquet.Leaf(parquet.BooleanType), nil
	case api.ColumnType_STRING, api.ColumnType_CHAR, api.ColumnType_VARCHAR, api.ColumnType_INT128:
		return parquet.String(), nil
	case api.ColumnType_JSON:
		return parquet.JSON(), nil
	case api.ColumnType_DECIMAL:
		if c.GetPrecision() <= 18 {
			return parquet.Decimal(int(c.GetScale()), int(c.GetPrecision()), parquet.Int64Type), nil
		}
		return parquet.Decimal(int(c.GetScale()), int(c.GetPrecision()), parquet.FixedLenByteArrayType(16)), nil
	case api.ColumnType_DATE:
		return parquet.Date(), nil
	case api.ColumnType_TIMESTAMP:
		return parquet.TimestampAdjusted(parquet.Microsecond, true), nil
	case api.ColumnType_DATETIME:
		return parquet.TimestampAdjusted(parquet.Microsecond, false), nil
	}
	return nil, fmt.Errorf("export: parquet: column %q: type %s has no Parquet mapping", c.GetName(), c.GetType())
}

func (p *parquetWriter) Write(r *api.Row) error {
	row := make(parquet.Row, len(p.cols))
	for i, c := range p.cols {
		var v *api.Value
		if i < len(r.GetValues()) {
			v = r.GetValues()[i]
		}
		pv, err := parquetValue(c, v)
		if err != nil {
			return err
		}
		def := 1
		if pv.IsNull() {
			def = 0
		}
		row[i] = pv.Level(0, def, p.index[i])
	}
	// Values in leaf column order, as the writer wants them.
	sortRow(row)
	p.buf = append(p.buf, row)
	if len(p.buf) >= 1024 {
		return p.flush()
	}
	return nil
}

func sortRow(row parquet.Row) {
	for i := 1; i < len(row); i++ {
		for j := i; j > 0 && row[j].Column() < row[j-1].Column(); j-- {
			row[j], row[j-1] = row[j-1], row[j]
		}
	}
}

func (p *parquetWriter) flush() error {
	if len(p.buf) == 0 {
		return nil
	}
	_, err := p.w.WriteRows(p.buf)
	p.buf = p.buf[:0]
	return err
}

func (p *parquetWriter) Close() error {
	if err := p.flush(); err != nil {
		return err
	}
	return p.w.Close()
}

func parquetValue(c *api.Column, v *api.Value) (parquet.Value, error) {
	switch k := v.GetKind().(type) {
	case nil, *api.Value_Null:
		return parquet.NullValue(), nil
	case *api.Value_Int64:
		if c.GetType() == api.ColumnType_INT64 {
			return parquet.Int64Value(k.Int64), nil
		}
		return parquet.Int32Value(int32(k.Int64)), nil
	case *api.Value_Float64:
		if c.GetType() == api.ColumnType_FLOAT32 {
			return parquet.FloatValue(float32(k.Float64)), nil
		}
		return parquet.DoubleValue(k.Float64), nil
	case *api.Value_Bool:
		return parquet.BooleanValue(k.Bool), nil
	case *api.Value_String_:
		return parquet.ByteArrayValue([]byte(k.String_)), nil
	case *api.Value_Json:
		return parquet.ByteArrayValue([]byte(k.Json)), nil
	case *api.Value_Date:
		return parquet.Int32Value(k.Date), nil
	case *api.Value_TimestampMicros:
		return parquet.Int64Value(k.TimestampMicros), nil
	case *api.Value_DatetimeMicros:
		return parquet.Int64Value(k.DatetimeMicros), nil
	case *api.Value_Decimal:
		if c.GetType() == api.ColumnType_INT128 {
			return parquet.ByteArrayValue([]byte(k.Decimal)), nil
		}
		u, ok := new(big.Int).SetString(strings.Replace(k.Decimal, ".", "", 1), 10)
		if !ok {
			return parquet.Value{}, fmt.Errorf("export: column %q: decimal %q", c.GetName(), k.Decimal)
		}
		if c.GetPrecision() <= 18 {
			return parquet.Int64Value(u.Int64()), nil
		}
		return parquet.FixedLenByteArrayValue(int128Bytes(u)), nil
	}
	return parquet.Value{}, fmt.Errorf("export: column %q: unexpected value %v", c.GetName(), v)
}

// int128Bytes is u as 16 big-endian two's-complement bytes.
func int128Bytes(u *big.Int) []byte {
	b := make([]byte, 16)
	x := new(big.Int).Set(u)
	if x.Sign() < 0 {
		x.Add(x, new(big.Int).Lsh(big.NewInt(1), 128))
	}
	x.FillBytes(b)
	return b
}
