package query

import (
	"fmt"
	"strings"
)

// token is a lexical token of a SELECT. Expressions are not parsed here:
// the parser cuts the statement at its clauses' keywords and hands each
// expression's text (src[pos:end]) to the expression engine.
type token struct {
	kind byte   // 'i' identifier or keyword, 'q' `quoted` identifier, 's' string, 'n' number, 'o' operator
	text string // identifier text (unquoted for 'q'), the operator, or the literal as written
	pos  int    // offset in the statement
	end  int    // offset just past the token
}

// is reports whether t is the keyword (or bare identifier) k, any case.
func (t token) is(k string) bool { return t.kind == 'i' && strings.EqualFold(t.text, k) }

// op reports whether t is the operator o.
func (t token) op(o string) bool { return t.kind == 'o' && t.text == o }

// lex splits src into tokens, skipping whitespace and comments (-- ...,
// # ..., /* ... */). Strings are single- or double-quoted with
// backslash escapes or doubled quotes, as MySQL reads them.
func lex(src string) ([]token, error) {
	var toks []token
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '#' || c == '-' && strings.HasPrefix(src[i:], "-- "), c == '-' && strings.HasPrefix(src[i:], "--\n"), c == '-' && src[i:] == "--":
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '/' && strings.HasPrefix(src[i:], "/*"):
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				return nil, fmt.Errorf("unterminated comment at %d", i)
			}
			i += j + 4
		case c == '\'' || c == '"':
			j := i + 1
			for ; j < len(src); j++ {
				if src[j] == '\\' {
					j++
					continue
				}
				if src[j] == c {
					if j+1 < len(src) && src[j+1] == c {
						j++
						continue
					}
					break
				}
			}
			if j >= len(src) {
				return nil, fmt.Errorf("unterminated string at %d", i)
			}
			toks = append(toks, token{kind: 's', text: src[i : j+1], pos: i, end: j + 1})
			i = j + 1
		case c == '`':
			j := strings.IndexByte(src[i+1:], '`')
			if j < 0 {
				return nil, fmt.Errorf("unterminated `name` at %d", i)
			}
			toks = append(toks, token{kind: 'q', text: src[i+1 : i+1+j], pos: i, end: i + j + 2})
			i += j + 2
		case c >= '0' && c <= '9' || c == '.' && i+1 < len(src) && src[i+1] >= '0' && src[i+1] <= '9':
			j := i
			for j < len(src) && (src[j] >= '0' && src[j] <= '9' || src[j] == '.') {
				j++
			}
			if j < len(src) && (src[j] == 'e' || src[j] == 'E') {
				k := j + 1
				if k < len(src) && (src[k] == '+' || src[k] == '-') {
					k++
				}
				if k < len(src) && src[k] >= '0' && src[k] <= '9' {
					for j = k; j < len(src) && src[j] >= '0' && src[j] <= '9'; j++ {
					}
				}
			}
			toks = append(toks, token{kind: 'n', text: src[i:j], pos: i, end: j})
			i = j
		case c == '_' || c == '@' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80:
			j := i + 1
			for j < len(src) && (src[j] == '_' || src[j] == '$' || src[j] == '@' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9' || src[j] >= 0x80) {
				j++
			}
			toks = append(toks, token{kind: 'i', text: src[i:j], pos: i, end: j})
			i = j
		default:
			n := 1
			for _, o := range []string{"<=>", "<=", ">=", "<>", "!=", "&&", "||", "::"} {
				if strings.HasPrefix(src[i:], o) {
					n = len(o)
					break
				}
			}
			toks = append(toks, token{kind: 'o', text: src[i : i+n], pos: i, end: i + n})
			i += n
		}
	}
	return toks, nil
}
