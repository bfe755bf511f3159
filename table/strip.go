package table

import (
	"strconv"
)

// strip_outer_array (Doris): one JSON record holds many rows. A record
// is split into its elements (Split), then each element is parsed as a
// record. Doris's rules, which Split follows:
//
//   - the record is an array, or an object whose json_root is an array;
//     anything else is one error row ("JSON data is not an array-object,
//     `strip_outer_array` must be FALSE");
//   - the record must be valid JSON and every element an object, or the
//     whole record is one error row and none of its elements loads;
//   - with jsonpaths and json_root, each element's row is read from the
//     object json_root names in it: an element without one, or where it
//     is not an object, is an error row of its own;
//   - an empty array is no row; without jsonpaths Doris counts it as one
//     error row ("Empty json line").

// Element is one row's text within a record: the record itself, or with
// strip_outer_array one element of its array.
type Element struct {
	// Raw is what the row is parsed from; a sub-slice of the record.
	Raw []byte
	// Err, when not nil, makes the element an error row: its row is not
	// parsed.
	Err *ParseError
}

// Strips reports whether records hold many rows (strip_outer_array):
// callers then Split each record.
func (p *Parser) Strips() bool { return p.strip }

// Split returns the elements of a record, each one row, appended to
// dst[:0]: a csv record's lines (splitLines), a json record itself unless
// strip_outer_array. An error is the
// record's as a whole (one error row); it is a *ParseError. Element i of
// a record keeps index i whatever the others are, so that a row's
// position (record, element) is stable across replays.
func (p *Parser) Split(raw []byte, dst []Element) ([]Element, error) {
	dst = dst[:0]
	if !p.strip {
		if !p.json {
			return p.splitLines(raw, dst), nil
		}
		return append(dst, Element{Raw: raw}), nil
	}
	p.raw = raw
	defer func() { p.raw = nil }()
	i := skipWS(raw, 0)
	if i == len(raw) {
		return dst, &ParseError{Reason: "json: empty record"}
	}
	if c := raw[i]; c != '[' && c != '{' {
		return dst, &ParseError{Reason: "json: record is " + jsonKind(c) + ", not an array (strip_outer_array is true)"}
	}
	var end, arr int
	var err error
	if raw[i] == '{' {
		if p.split == nil {
			if _, err := p.value(i, nil, 0); err != nil {
				return dst, err
			}
			return dst, &ParseError{Reason: "json: record is an object, not an array (JSON data is not an array-object, `strip_outer_array` must be FALSE)"}
		}
		end, arr, _, err = p.locate(i, p.split, 0)
		if err != nil {
			return dst, err
		}
		if arr < 0 {
			return dst, &ParseError{Reason: "json: json_root " + p.rootText + " not found in the record"}
		}
		if raw[arr] != '[' {
			return dst, &ParseError{Reason: "json: json_root " + p.rootText + " is " + jsonKind(raw[arr]) + ", not an array (JSON data is not an array-object, `strip_outer_array` must be FALSE)"}
		}
	} else {
		if end, err = p.value(i, nil, 0); err != nil {
			return dst, err
		}
		arr = i
	}
	if e := skipWS(raw, end); e != len(raw) {
		return dst, p.syntax(e, "data after the JSON value")
	}
	// The record is valid JSON: walk the array's elements.
	j := skipWS(raw, arr+1)
	if raw[j] == ']' {
		if !p.stripPaths {
			return dst, &ParseError{Reason: "json: the array is empty (Empty json line)"}
		}
		return dst, nil
	}
	for k := 0; ; k++ {
		if raw[j] != '{' {
			return dst[:0], &ParseError{Reason: "json: element " + strconv.Itoa(k) + " of the array is " + jsonKind(raw[j]) + ", not an object"}
		}
		e, err := p.value(j, nil, 1)
		if err != nil {
			return dst[:0], err // validated above: not reached
		}
		el := Element{Raw: raw[j:e]}
		if p.stripPaths && p.split != nil {
			_, s, se, err := p.locate(j, p.split, 1)
			switch {
			case err != nil:
				return dst[:0], err
			case s < 0:
				el.Err = &ParseError{Reason: "json: json_root " + p.rootText + " not found in element " + strconv.Itoa(k)}
			case raw[s] != '{':
				el.Err = &ParseError{Reason: "json: json_root " + p.rootText + " of element " + strconv.Itoa(k) + " is " + jsonKind(raw[s]) + ", not an object (Not object item)"}
			default:
				el.Raw = raw[s:se]
			}
		}
		dst = append(dst, el)
		j = skipWS(raw, e)
		if raw[j] != ',' {
			return dst, nil // ']': validated above
		}
		j = skipWS(raw, j+1)
	}
}

// locate walks the value at raw[i], validating all of it, and returns the
// offset after it and the span [start, end) of the value at path n (a
// chain of compilePath steps) within it; start is -1 when there is none.
// A key given twice names its first value.
func (p *Parser) locate(i int, n *jnode, depth int) (end, start, stop int, err error) {
	raw := p.raw
	if !n.hasChildren() {
		end, err = p.value(i, nil, depth)
		return end, i, end, err
	}
	if i >= len(raw) {
		return 0, -1, -1, p.syntax(i, "unexpected end of record")
	}
	c := raw[i]
	if c != '{' && c != '[' || depth >= maxJSONDepth {
		end, err = p.value(i, nil, depth)
		return end, -1, -1, err
	}
	closing, what := byte('}'), "an object"
	if c == '[' {
		closing, what = ']', "an array"
	}
	start, stop = -1, -1
	i = skipWS(raw, i+1)
	if i < len(raw) && raw[i] == closing {
		return i + 1, -1, -1, nil
	}
	for k := 0; ; k++ {
		var kid *jnode
		if c == '{' {
			if i >= len(raw) || raw[i] != '"' {
				return 0, -1, -1, p.syntax(i, "want a string key")
			}
			kend, esc, err := p.scanString(i)
			if err != nil {
				return 0, -1, -1, err
			}
			key := raw[i+1 : kend-1]
			if esc {
				key = unescape(nil, key)
			}
			if x, ok := n.index[string(key)]; ok && start < 0 {
				kid = n.kids[x]
			}
			i = skipWS(raw, kend)
			if i >= len(raw) || raw[i] != ':' {
				return 0, -1, -1, p.syntax(i, "want ':' after an object key")
			}
			i = skipWS(raw, i+1)
		} else if start < 0 {
			kid = n.elems[k]
		}
		if kid != nil {
			var s, e int
			if i, s, e, err = p.locate(i, kid, depth+1); err != nil {
				return 0, -1, -1, err
			}
			if s >= 0 {
				start, stop = s, e
			}
		} else if i, err = p.value(i, nil, depth+1); err != nil {
			return 0, -1, -1, err
		}
		i = skipWS(raw, i)
		if i < len(raw) {
			switch raw[i] {
			case ',':
				i = skipWS(raw, i+1)
				continue
			case closing:
				return i + 1, start, stop, nil
			}
		}
		return 0, -1, -1, p.syntax(i, "want ',' or '"+string(closing)+"' in "+what)
	}
}
