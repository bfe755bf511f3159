package table

import (
	"encoding/binary"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/loadnode/loadnode/api"
)

// maxJSONDepth bounds the nesting of a record, so that a hostile record
// cannot exhaust the stack.
const maxJSONDepth = 1000

// strStop marks the bytes that end the fast scan of a JSON string: the
// closing quote, a backslash and control characters.
var strStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// SWAR constants: a byte-wise "has a zero byte" test is
// (v-lsb) &^ v & msb; with v-lsb*n it tests "has a byte below n" (n <= 128).
const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// parseJSON parses p.raw, one JSON object, walking it once: values at the
// compiled paths are parsed into their columns, everything else is validated
// and skipped. A missing key loads the column's DEFAULT (NULL without one);
// a JSON null is NULL. A syntax error wins over a column error found before
// it.
func (p *Parser) parseJSON() error {
	// The walk marks the fields it meets (present); the others take their
	// defaults after it, so that a field is written once (fillDefaults).
	defer p.fillDefaults()
	raw := p.raw
	clear(p.present)
	i := skipWS(raw, 0)
	if i == len(raw) {
		return &ParseError{Reason: "json: empty record"}
	}
	if raw[i] == '[' && !p.strip {
		return &ParseError{Reason: "json: record is an array, not an object (JSON data is array-object, `strip_outer_array` must be TRUE)"}
	}
	if raw[i] != '{' {
		return &ParseError{Reason: "json: record is " + jsonKind(raw[i]) + ", not an object"}
	}
	p.found = false
	end, err := p.value(i, p.root, 0)
	if err != nil {
		return err
	}
	if end = skipWS(raw, end); end != len(raw) {
		return p.syntax(end, "data after the object")
	}
	if p.colErr != nil {
		return p.colErr
	}
	if !p.found && p.fields {
		// Doris: a record none of whose keys (or jsonpaths) names a
		// field is an error row, not a row of defaults.
		return &ParseError{Reason: "json: no key of the record matches a column or jsonpath (There is no column matching jsonpaths in the json file)"}
	}
	return nil
}

// fillDefaults gives each field the walk did not meet its default (the
// load time, its DEFAULT, or NULL), as a missing key loads.
func (p *Parser) fillDefaults() {
	for i, met := range p.present {
		if !met {
			p.dst[i] = p.defaultOf(&p.meta[i])
		}
	}
}

func jsonKind(c byte) string {
	switch c {
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	if c == '-' || (c >= '0' && c <= '9') {
		return "a number"
	}
	return "not JSON"
}

func (p *Parser) syntax(at int, what string) *ParseError {
	return &ParseError{Reason: "json: invalid JSON at byte " + strconv.Itoa(at) + ": " + what}
}

func skipWS(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// value walks the value starting at raw[i] (not whitespace) and returns the
// offset after it. n is the path node of this value, nil when no column
// wants it or anything inside it.
func (p *Parser) value(i int, n *jnode, depth int) (int, error) {
	raw := p.raw
	if n != nil && len(n.cols) > 0 {
		p.found = true
		for _, col := range n.cols {
			p.present[col] = true
		}
	}
	if i >= len(raw) {
		return 0, p.syntax(i, "unexpected end of record")
	}
	switch c := raw[i]; c {
	case '"':
		end, esc, err := p.scanString(i)
		if err != nil {
			return 0, err
		}
		if n != nil {
			ascii := p.scanASCII
			for _, col := range n.cols {
				p.setJSONString(col, i+1, end-1, esc, ascii)
			}
		}
		return end, nil
	case '{', '[':
		if depth >= maxJSONDepth {
			return 0, p.syntax(i, "nesting deeper than "+strconv.Itoa(maxJSONDepth))
		}
		walk := n
		if walk != nil && !walk.hasChildren() {
			walk = nil
		}
		var end int
		var err error
		if c == '{' {
			end, err = p.object(i, walk, depth+1)
		} else {
			end, err = p.array(i, walk, depth+1)
		}
		if err != nil {
			return 0, err
		}
		if n != nil {
			what := "JSON object"
			if c == '[' {
				what = "JSON array"
			}
			for _, col := range n.cols {
				p.setJSONText(col, i, end, what)
			}
		}
		return end, nil
	case 't':
		return p.literal(i, n, "true", true)
	case 'f':
		return p.literal(i, n, "false", false)
	case 'n':
		end, err := p.expect(i, "null")
		if err != nil {
			return 0, err
		}
		if n != nil {
			for _, col := range n.cols {
				p.dst[col] = Value{Null: true}
			}
		}
		return end, nil
	default:
		end, isInt := scanNumber(raw, i)
		if end == i {
			return 0, p.syntax(i, "unexpected "+strconv.QuoteRune(rune(c)))
		}
		if n != nil {
			for _, col := range n.cols {
				p.setJSONNumber(col, i, end, isInt)
			}
		}
		return end, nil
	}
}

func (p *Parser) expect(i int, lit string) (int, error) {
	if len(p.raw)-i < len(lit) || string(p.raw[i:i+len(lit)]) != lit {
		return 0, p.syntax(i, "invalid literal, want "+lit)
	}
	return i + len(lit), nil
}

func (p *Parser) literal(i int, n *jnode, lit string, b bool) (int, error) {
	end, err := p.expect(i, lit)
	if err != nil {
		return 0, err
	}
	if n == nil {
		return end, nil
	}
	for _, col := range n.cols {
		switch t := p.types[col]; {
		case t == api.ColumnType_BOOL:
			p.dst[col] = Value{Bool: b}
		case isText(t):
			p.setText(col, p.raw[i:end], i)
		default:
			p.convFail(col, "JSON "+lit+" is not "+article(t))
		}
	}
	return end, nil
}

// object walks the object at raw[i] == '{'. n, when not nil, has children.
// A key given twice loads its first value, as Doris (the later ones are
// only checked to be JSON).
func (p *Parser) object(i int, n *jnode, depth int) (int, error) {
	raw := p.raw
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return i + 1, nil
	}
	hint := 0
	var seen uint64           // the keys of n met in this object, by index < 64
	var seenMore map[int]bool // and the others
	for {
		if i >= len(raw) || raw[i] != '"' {
			return 0, p.syntax(i, "want a string key")
		}
		var kid *jnode
		kend, idx := 0, -1
		if n != nil && hint < len(n.names) && n.plain[hint] {
			// The schema's fast path: records usually spell the keys in
			// column order and without escapes. The key expected next,
			// then its closing quote, is the key scanString and lookup
			// would find.
			name := n.names[hint]
			if e := i + 1 + len(name); e < len(raw) && raw[e] == '"' && string(raw[i+1:e]) == name {
				kend, kid, idx = e+1, n.kids[hint], hint
			}
		}
		if idx < 0 {
			var esc bool
			var err error
			if kend, esc, err = p.scanString(i); err != nil {
				return 0, err
			}
			if n != nil {
				key := raw[i+1 : kend-1]
				if esc {
					p.buf = unescape(p.buf[:0], key)
					key = p.buf
				}
				kid, idx = n.lookup(key, hint)
			}
		}
		if n != nil {
			if idx >= 0 {
				hint = idx + 1
				dup := false
				if idx < 64 {
					dup = seen&(1<<idx) != 0
					seen |= 1 << idx
				} else {
					if seenMore == nil {
						seenMore = make(map[int]bool)
					}
					dup = seenMore[idx]
					seenMore[idx] = true
				}
				if dup {
					kid = nil
				}
			}
		}
		i = skipWS(raw, kend)
		if i >= len(raw) || raw[i] != ':' {
			return 0, p.syntax(i, "want ':' after an object key")
		}
		var err error
		if i, err = p.value(skipWS(raw, i+1), kid, depth); err != nil {
			return 0, err
		}
		i = skipWS(raw, i)
		if i < len(raw) {
			switch raw[i] {
			case ',':
				i = skipWS(raw, i+1)
				continue
			case '}':
				return i + 1, nil
			}
		}
		return 0, p.syntax(i, "want ',' or '}' in an object")
	}
}

// array walks the array at raw[i] == '['. n, when not nil, has children.
func (p *Parser) array(i int, n *jnode, depth int) (int, error) {
	raw := p.raw
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == ']' {
		return i + 1, nil
	}
	for k := 0; ; k++ {
		var kid *jnode
		if n != nil {
			kid = n.elems[k]
		}
		var err error
		if i, err = p.value(i, kid, depth); err != nil {
			return 0, err
		}
		i = skipWS(raw, i)
		if i < len(raw) {
			switch raw[i] {
			case ',':
				i = skipWS(raw, i+1)
				continue
			case ']':
				return i + 1, nil
			}
		}
		return 0, p.syntax(i, "want ',' or ']' in an array")
	}
}

// scanString validates the string at raw[i] == '"' and returns the offset
// after its closing quote and whether it holds escapes. It sets p.scanASCII
// to whether every byte between the quotes is ASCII (then the text is
// valid UTF-8 without another pass over it).
func (p *Parser) scanString(i int) (end int, esc bool, err error) {
	raw := p.raw
	j := i + 1
	var hi uint64 // the bytes scanned, or'ed: a high bit is a non-ASCII byte
	for {
		// Eight bytes at a time while none is a quote, a backslash or a
		// control character, then byte by byte.
		for j+8 <= len(raw) {
			x := binary.LittleEndian.Uint64(raw[j:])
			q := x ^ (lsb * '"')
			bs := x ^ (lsb * '\\')
			if ((q-lsb)&^q|(bs-lsb)&^bs|(x-lsb*0x20)&^x)&msb != 0 {
				break
			}
			hi |= x
			j += 8
		}
		for j < len(raw) && !strStop[raw[j]] {
			hi |= uint64(raw[j])
			j++
		}
		if j >= len(raw) {
			return 0, false, p.syntax(i, "unterminated string")
		}
		switch c := raw[j]; {
		case c == '"':
			p.scanASCII = hi&msb == 0
			return j + 1, esc, nil
		case c == '\\':
			esc = true
			if j+1 >= len(raw) {
				return 0, false, p.syntax(j, "unterminated string")
			}
			switch raw[j+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j += 2
			case 'u':
				if j+6 > len(raw) || hex4(raw[j+2:j+6]) < 0 {
					return 0, false, p.syntax(j, `bad \u escape`)
				}
				j += 6
			default:
				return 0, false, p.syntax(j, "bad escape")
			}
		default:
			return 0, false, p.syntax(j, "control character in a string")
		}
	}
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// unescape appends the decoded content of a validated JSON string (without
// its quotes) to dst. A lone surrogate becomes U+FFFD, as in encoding/json.
func unescape(dst, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c != '\\' {
			dst = append(dst, c)
			i++
			continue
		}
		switch s[i+1] {
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r := hex4(s[i+2:])
			i += 6
			if utf16.IsSurrogate(r) {
				if r < 0xdc00 && i+6 <= len(s) && s[i] == '\\' && s[i+1] == 'u' {
					if r2 := hex4(s[i+2:]); r2 >= 0xdc00 && r2 <= 0xdfff {
						dst = utf8.AppendRune(dst, utf16.DecodeRune(r, r2))
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default: // " \ /
			dst = append(dst, s[i+1])
		}
		i += 2
	}
	return dst
}

// scanNumber scans a JSON number at b[i] and returns the offset after it
// (i when there is none) and whether it is an integer (no fraction, no
// exponent).
func scanNumber(b []byte, i int) (int, bool) {
	start := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		for i++; i < len(b) && b[i]-'0' <= 9; i++ {
		}
	default:
		return start, false
	}
	isInt := true
	if i < len(b) && b[i] == '.' {
		isInt = false
		i++
		d := i
		for ; i < len(b) && b[i]-'0' <= 9; i++ {
		}
		if i == d {
			return start, false
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		isInt = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for ; i < len(b) && b[i]-'0' <= 9; i++ {
		}
		if i == d {
			return start, false
		}
	}
	return i, isInt
}

// setJSONString parses the content raw[i:j] of a JSON string into col. An
// empty string is NULL in every column but STRING, CHAR and VARCHAR. A JSON
// column takes the string's content as JSON text.
func (p *Parser) setJSONString(col, i, j int, esc, ascii bool) {
	if t := p.types[col]; i == j && t != api.ColumnType_STRING && t != api.ColumnType_CHAR && t != api.ColumnType_VARCHAR {
		p.dst[col] = Value{Null: true}
		return
	}
	if !esc {
		p.textASCII = ascii
		p.setText(col, p.raw[i:j], i)
		p.textASCII = false
		return
	}
	p.buf = unescape(p.buf[:0], p.raw[i:j])
	p.setText(col, p.buf, -1)
}

// setJSONNumber parses the JSON number raw[i:j] into col. A number is not a
// DATE or DATETIME (as Doris: NULL or an error row, by strict_mode); a
// TIMESTAMP takes it as epoch milliseconds.
func (p *Parser) setJSONNumber(col, i, j int, integral bool) {
	b := p.raw[i:j]
	if p.numStr {
		p.setText(col, b, i) // num_as_string: the number's text is a string
		return
	}
	v := &p.dst[col]
	v.reset()
	t := p.types[col]
	switch {
	case t == api.ColumnType_TIMESTAMP && !p.meta[col].jobZone:
		if !integral {
			break
		}
		n, e := parseInt(b)
		if e == numOK {
			n, e = epochMillisToMicros(n)
		}
		if e != numOK {
			p.convFail(col, convReason(t, p.meta[col], b, numRange))
			return
		}
		v.Int = n
		return
	case isInt(t) && !integral && p.strict:
	case t == api.ColumnType_DATE, t == api.ColumnType_DATETIME, t == api.ColumnType_TIMESTAMP:
	case t == api.ColumnType_BOOL:
		if len(b) == 1 && (b[0] == '0' || b[0] == '1') {
			v.Bool = b[0] == '1'
			return
		}
	case t == api.ColumnType_DECIMAL && !p.binary:
		// As Doris's JSON reader: a number with a fraction is a double
		// first (jsonDecimalText). An avro or protobuf decimal, written
		// exactly by its decoder, stays exact.
		p.buf = jsonDecimalText(p.buf[:0], b, integral)
		p.setText(col, p.buf, -1)
		return
	default:
		// integers, LARGEINT, DECIMAL, floats, text and JSON: the number's
		// text, exactly as written.
		p.setText(col, b, i)
		return
	}
	p.convFail(col, convReason(t, p.meta[col], b, numSyntax))
}

// setJSONText sets col from the raw text of a JSON object or array: text
// columns take the text (JSON compacted), others fail.
func (p *Parser) setJSONText(col, i, j int, what string) {
	if isText(p.types[col]) {
		p.setText(col, p.raw[i:j], i)
		return
	}
	p.convFail(col, what+" is not "+article(p.types[col]))
}
