package table

import (
	"bytes"
)

// A csv job whose enclose character is given (Doris's enclose property)
// reads its records as Doris's CSV reader does (be/src/vec/exec/format:
// the line reader's EncloseCsvLineReaderCtx, the field splitter, and the
// string serde's escape_string_for_csv):
//
//   - A field that starts with the enclose character is enclosed: the
//     column separator and the line break are text inside it. The escape
//     character makes the next character literal; a doubled enclose
//     character is one. The enclose character followed by any other
//     character closes it.
//   - After the closing character, the field runs to the next column
//     separator: `"g"hi` is one field, written as it is.
//   - A field that never closes runs to the end of the record: the line
//     has fewer fields than the table, an error row (Doris filters it;
//     test_csv_with_enclose_and_escape's enclose_incomplete.csv).
//   - A field enclosed at both ends loses them, except that with enclose
//     '"' and trim_double_quotes false the quotes stay (the same suite's
//     enclose_not_trim_quotes.csv: "def" loads as "def").
//   - Then, as for every csv field: trim_double_quotes drops one more pair
//     of '"' (a field so trimmed is never \N's NULL), and with an escape
//     character every escape character is dropped (a doubled one is one)
//     and of a doubled enclose character the first.
//
// A field that does not start with the enclose character splits at the
// next separator; quotes and escapes inside it do not protect separators.

// encloseFieldEnd returns where the field starting at rec[pos] ends (the
// start of the separator after it, or len(rec)) and whether a separator
// follows.
func (p *Parser) encloseFieldEnd(rec []byte, pos int) (end int, sep bool) {
	i := pos
	if i < len(rec) && rec[i] == p.enclose {
		if i = p.encloseClose(rec, i+1); i == len(rec) {
			return len(rec), false
		}
	}
	var j int
	if len(p.sep) == 1 {
		j = bytes.IndexByte(rec[i:], p.sepByte)
	} else {
		j = bytes.Index(rec[i:], p.sep)
	}
	if j < 0 {
		return len(rec), false
	}
	return i + j, true
}

// encloseClose scans an enclosed field from rec[i], just after its
// opening character, and returns the index of the character after its
// closing one (that character is not part of the enclosed text), or
// len(rec) when it does not close before the end.
func (p *Parser) encloseClose(rec []byte, i int) int {
	escaped, closing := false, false // closing: the last character was an unescaped enclose
	for ; i < len(rec); i++ {
		c := rec[i]
		switch {
		case p.escape != 0 && c == p.escape:
			escaped = !escaped
		case escaped:
			escaped = false
		case closing:
			if c != p.enclose {
				return i
			}
			closing = false // a doubled enclose character
		case c == p.enclose:
			closing = true
		}
	}
	return len(rec)
}

// parseEnclosed is parseCSV for a job with an enclose character given.
// Like Doris, it counts the line's fields before it converts any.
func (p *Parser) parseEnclosed(rec []byte) error {
	ncols := len(p.types)
	n := 0
	for pos := 0; ; {
		end, more := p.encloseFieldEnd(rec, pos)
		n++
		if !more {
			break
		}
		pos = end + len(p.sep)
	}
	if n != ncols {
		return &ParseError{Reason: "csv: " + plural(n, "field") + ", " + p.want(ncols)}
	}
	for col, pos := 0, 0; col < ncols; col++ {
		end, _ := p.encloseFieldEnd(rec, pos)
		p.encloseValue(col, rec[pos:end], pos)
		pos = end + len(p.sep)
	}
	if p.colErr != nil {
		return p.colErr
	}
	return nil
}

// encloseValue parses field b (rec[off:off+len(b)]) into column col: the
// enclose characters at both ends, trim_double_quotes's, \N, empty, and
// the escapes, in Doris's order.
func (p *Parser) encloseValue(col int, b []byte, off int) {
	enc := p.enclose
	if n := len(b); p.trimEnclose && n > 1 && b[0] == enc && b[n-1] == enc {
		b, off = b[1:n-1], off+1
	}
	if len(b) == 0 && p.emptyNull {
		p.dst[col] = Value{Null: true}
		return
	}
	quoted := false
	if n := len(b); p.trimQuotes && n >= 2 && b[0] == '"' && b[n-1] == '"' {
		b, off, quoted = b[1:n-1], off+1, true
	}
	if !quoted && len(b) == 2 && b[0] == '\\' && b[1] == 'N' {
		p.dst[col] = Value{Null: true}
		return
	}
	if p.escape != 0 && (bytes.IndexByte(b, p.escape) >= 0 || bytes.Contains(b, []byte{enc, enc})) {
		b, off = p.unescapeCSV(b), -1
	}
	if len(b) == 0 {
		if t := p.types[col]; !isText(t) {
			p.dst[col] = Value{Null: true}
			return
		}
		p.dst[col] = Value{}
		return
	}
	p.setText(col, b, off)
}

// unescapeCSV is b without its escapes, in p.buf: an escape character or
// the first of two enclose characters is dropped, unless it follows one
// so dropped (Doris's escape_string_for_csv).
func (p *Parser) unescapeCSV(b []byte) []byte {
	buf := p.buf[:0]
	drop := false
	for k, c := range b {
		if c == p.escape || c == p.enclose && k+1 < len(b) && b[k+1] == p.enclose {
			drop = !drop
		} else {
			drop = false
		}
		if !drop {
			buf = append(buf, c)
		}
	}
	p.buf = buf
	return buf
}

// encloseLineEnd is lineEnd for a job with an enclose character given:
// a line break inside an enclosed field does not end the line.
func (p *Parser) encloseLineEnd(raw []byte, i int) int {
	fieldStart := true
	for i < len(raw) {
		if fieldStart && raw[i] == p.enclose {
			i = p.encloseClose(raw, i+1)
			fieldStart = false
			continue
		}
		fieldStart = false
		switch {
		case raw[i] == '\n':
			return i
		case p.sepAt(raw, i):
			i += len(p.sep)
			fieldStart = true
		default:
			i++
		}
	}
	return len(raw)
}
