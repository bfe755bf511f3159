package table

import (
	"bytes"
	"strconv"

	"github.com/loadnode/loadnode/api"
)

// parseCSV splits p.raw into fields and parses each into its column.
// A job with an enclose character given reads as Doris does (enclose.go);
// what follows is loadnode's default, '"' enclosing as in RFC 4180.
//
// A record is one line (Split makes a record's lines its rows): a
// trailing "\n" or "\r\n" is dropped. A field that
// starts with a quote runs to the closing quote ("" is a literal quote) and
// must be followed by the separator or the end; elsewhere quotes are
// literal. An unquoted empty field is NULL except in STRING columns (the
// empty string); an unquoted \N is NULL in every column.
func (p *Parser) parseCSV() error {
	rec := p.raw
	if n := len(rec); n > 0 && rec[n-1] == '\n' {
		rec = rec[:n-1]
		if n > 1 && rec[n-2] == '\r' {
			rec = rec[:n-2]
		}
	}
	if p.dorisEnclose {
		return p.parseEnclosed(rec)
	}
	ncols := len(p.types)
	col, pos := 0, 0
	for {
		if col == ncols {
			return &ParseError{Reason: "csv: " + plural(col+p.countFields(rec, pos), "field") + ", " + p.want(ncols)}
		}
		last := false
		if pos < len(rec) && p.enclose != 0 && rec[pos] == p.enclose {
			end, err := p.quotedField(col, rec, pos)
			if err != nil {
				return err
			}
			pos = end
			if pos == len(rec) {
				last = true
			} else {
				pos += len(p.sep)
			}
		} else {
			var j int
			if len(p.sep) == 1 {
				j = bytes.IndexByte(rec[pos:], p.sepByte)
			} else {
				j = bytes.Index(rec[pos:], p.sep)
			}
			end := pos + j
			if j < 0 {
				end, last = len(rec), true
			}
			p.plainField(col, rec[pos:end], pos)
			pos = end + len(p.sep)
		}
		col++
		if last {
			break
		}
	}
	if col != ncols {
		return &ParseError{Reason: "csv: " + plural(col, "field") + ", " + p.want(ncols)}
	}
	if p.colErr != nil {
		return p.colErr
	}
	return nil
}

// plainField parses an unquoted field.
func (p *Parser) plainField(col int, b []byte, off int) {
	if n := len(b); p.trimQuotes && n >= 2 && b[0] == '"' && b[n-1] == '"' {
		b = b[1 : n-1]
		if off >= 0 {
			off++
		}
	}
	switch {
	case len(b) == 0:
		if t := p.types[col]; !p.emptyNull && (t == api.ColumnType_STRING || t == api.ColumnType_CHAR || t == api.ColumnType_VARCHAR) {
			p.dst[col] = Value{}
		} else {
			p.dst[col] = Value{Null: true}
		}
	case len(b) == 2 && b[0] == '\\' && b[1] == 'N':
		p.dst[col] = Value{Null: true}
	case p.escape != 0 && bytes.IndexByte(b, p.escape) >= 0:
		buf := p.buf[:0]
		for k := 0; k < len(b); k++ {
			if b[k] == p.escape {
				k++ // the next byte is literal; a trailing escape is dropped
				if k == len(b) {
					break
				}
			}
			buf = append(buf, b[k])
		}
		p.buf = buf
		p.setText(col, buf, -1)
	default:
		p.setText(col, b, off)
	}
}

// quotedField parses the enclosed field starting at rec[pos] == p.enclose
// and returns the offset just after its closing character, which is the end
// of rec or the start of a separator. Inside, a doubled enclose character
// is one, and the escape character makes the next one literal.
func (p *Parser) quotedField(col int, rec []byte, pos int) (int, error) {
	q := p.enclose
	start := pos + 1
	i := start
	escaped := false
	for {
		j := bytes.IndexByte(rec[i:], q)
		if p.escape != 0 {
			if e := bytes.IndexByte(rec[i:], p.escape); e >= 0 && (j < 0 || e < j) {
				escaped = true
				i += e + 2
				if i > len(rec) {
					i = len(rec)
				}
				continue
			}
		}
		if j < 0 {
			return 0, &ParseError{Column: p.names[col], Reason: "csv: column " + p.names[col] + ": unterminated quoted field starting at byte " + strconv.Itoa(pos)}
		}
		i += j
		if i+1 < len(rec) && rec[i+1] == q {
			escaped = true
			i += 2
			continue
		}
		break
	}
	end := i + 1 // after the closing character
	if end != len(rec) && !bytes.HasPrefix(rec[end:], p.sep) {
		return 0, &ParseError{Column: p.names[col], Reason: "csv: column " + p.names[col] + ": unexpected text after closing quote " + strconv.QuoteRune(rune(q)) + " at byte " + strconv.Itoa(end)}
	}
	b := rec[start:i]
	if len(b) == 0 {
		p.plainField(col, b, start)
		return end, nil
	}
	if !escaped {
		p.setText(col, b, start)
		return end, nil
	}
	buf := p.buf[:0]
	for k := 0; k < len(b); k++ {
		switch {
		case p.escape != 0 && b[k] == p.escape:
			k++
			if k == len(b) {
				continue
			}
		case b[k] == q:
			k++ // the second of a doubled enclose character
		}
		buf = append(buf, b[k])
	}
	p.buf = buf
	p.setText(col, buf, -1)
	return end, nil
}

// countFields counts the fields of rec from pos on, for an error message.
func (p *Parser) countFields(rec []byte, pos int) int {
	if pos > len(rec) {
		return 0
	}
	return bytes.Count(rec[pos:], p.sep) + 1
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

// want says how many fields a record should have.
func (p *Parser) want(n int) string {
	if p.m != nil {
		return "the column mapping has " + plural(n, "field")
	}
	return "table has " + plural(n, "column")
}

// splitLines appends the lines of a csv record to dst, each one row, as
// Doris reads a routine load's message: a line ends at "\n" (a "\r"
// before it is dropped) outside an enclosed field; empty lines are no
// rows; the first p.skipLines lines (empty ones too) are skipped.
func (p *Parser) splitLines(raw []byte, dst []Element) []Element {
	skip := p.skipLines
	for start := 0; ; {
		end := p.lineEnd(raw, start)
		line := raw[start:end]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		switch {
		case skip > 0:
			skip--
		case len(line) > 0:
			dst = append(dst, Element{Raw: line})
		}
		if end >= len(raw) {
			return dst
		}
		start = end + 1
	}
}

// lineEnd is the index of the "\n" that ends the line starting at
// raw[i], or len(raw). With an enclose character, a line break inside an
// enclosed field (one that starts with it) does not end the line.
//
// Most lines hold no enclose character: then the first "\n" ends the line,
// found with two vectorised searches instead of a walk of every byte
// (scanLineEnd, the walk, is the general path; a differential test and a
// fuzz target keep the two equal).
func (p *Parser) lineEnd(raw []byte, i int) int {
	end := len(raw)
	if j := bytes.IndexByte(raw[i:], '\n'); j >= 0 {
		end = i + j
	}
	// Only an enclose character at a field's start opens an enclosed
	// field: with none before the line break, nothing is enclosed.
	if p.enclose == 0 || bytes.IndexByte(raw[i:end], p.enclose) < 0 {
		return end
	}
	return p.scanLineEnd(raw, i)
}

// scanLineEnd is lineEnd by walking the line byte by byte.
func (p *Parser) scanLineEnd(raw []byte, i int) int {
	if p.dorisEnclose {
		return p.encloseLineEnd(raw, i)
	}
	if p.enclose == 0 {
		if j := bytes.IndexByte(raw[i:], '\n'); j >= 0 {
			return i + j
		}
		return len(raw)
	}
	fieldStart := true
	for i < len(raw) {
		switch c := raw[i]; {
		case c == '\n':
			return i
		case fieldStart && c == p.enclose:
			for i++; i < len(raw); i++ {
				if p.escape != 0 && raw[i] == p.escape {
					i++
					continue
				}
				if raw[i] == p.enclose {
					if i+1 < len(raw) && raw[i+1] == p.enclose {
						i++
						continue
					}
					break
				}
			}
			i++ // past the closing character
			fieldStart = false
		case p.sepAt(raw, i):
			i += len(p.sep)
			fieldStart = true
		default:
			i++
			fieldStart = false
		}
	}
	return len(raw)
}

// sepAt reports whether the column separator starts at raw[i].
func (p *Parser) sepAt(raw []byte, i int) bool {
	if len(p.sep) == 1 {
		return raw[i] == p.sepByte
	}
	return bytes.HasPrefix(raw[i:], p.sep)
}
