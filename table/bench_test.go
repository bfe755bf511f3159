package table

import "testing"

// benchJSON and benchCSV are ~200-byte records of the six-column test table.
const (
	benchJSON = `{"id":1234567890,"amount":12345.678,"name":"a customer name of some length","ok":true,"ts":"2024-03-01T12:30:45.123456Z","note":"a note that is a bit longer than the name, padding it out to size","extra":{"k":[1,2,3]}}`
	benchCSV  = "1234567890,12345.678,a customer name of some length,true,2024-03-01 12:30:45.123456,a note that is a bit longer than the name padding it out to the size of about two hundred bytes in total ok\n"
)

func benchParse(b *testing.B, f Format, rec string) {
	b.Run("copy", func(b *testing.B) { benchParseWith(b, f, rec, (*Parser).Parse) })
	b.Run("borrowed", func(b *testing.B) { benchParseWith(b, f, rec, (*Parser).ParseBorrowed) })
}

func benchParseWith(b *testing.B, f Format, rec string, parse func(*Parser, []byte, []Value) ([]Value, error)) {
	s := testSchema(b)
	p, err := NewParser(s, f)
	if err != nil {
		b.Fatal(err)
	}
	raw := []byte(rec)
	dst := make([]Value, s.NumColumns())
	if _, err := parse(p, raw, dst); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := parse(p, raw, dst); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseJSON(b *testing.B) { benchParse(b, Format{Kind: "json"}, benchJSON) }

func BenchmarkParseJSONPaths(b *testing.B) {
	benchParse(b, Format{Kind: "json", JSONPaths: []string{"$.id", "$.amount", "$.name", "$.ok", "$.ts", "$.extra.k[1]"}}, benchJSON)
}

func BenchmarkParseCSV(b *testing.B) { benchParse(b, Format{Kind: "csv"}, benchCSV) }

func BenchmarkAppendValue(b *testing.B) {
	s := testSchema(b)
	p, _ := NewParser(s, Format{Kind: "json"})
	row, err := p.Parse([]byte(benchJSON), nil)
	if err != nil {
		b.Fatal(err)
	}
	pos := Pos{JobID: 1, Partition: 3, Offset: 123456789}
	buf := make([]byte, 0, 512)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendValue(buf[:0], s, pos, row)
	}
	b.SetBytes(int64(len(buf)))
}

func BenchmarkDecodeValue(b *testing.B) {
	s := testSchema(b)
	p, _ := NewParser(s, Format{Kind: "json"})
	row, _ := p.Parse([]byte(benchJSON), nil)
	enc := AppendValue(nil, s, Pos{JobID: 1, Partition: 3, Offset: 123456789}, row)
	dst := make([]Value, s.NumColumns())
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := DecodeValue(s, enc, dst); err != nil {
			b.Fatal(err)
		}
	}
}
