package doris

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokenKind classifies a token.
type tokenKind int

const (
	tokEOF    tokenKind = iota
	tokIdent            // a bare word: a keyword or an identifier
	tokQuoted           // a `backquoted` identifier: never a keyword
	tokString           // '...' or "...": text holds the unescaped value
	tokNumber           // 12, 1.5, 2e3 (no sign: '-' is a symbol)
	tokSymbol           // one punctuation character: ( ) , ; . = and the rest
)

// token is one lexeme. text is the unescaped value of strings and quoted
// identifiers, the source text of everything else.
type token struct {
	kind tokenKind
	text string
	pos  int // byte offset of the token's first character in the input
}

// is reports whether t is the bare word kw (case-insensitive). Backquoted
// identifiers never match a keyword.
func (t token) is(kw string) bool {
	return t.kind == tokIdent && strings.EqualFold(t.text, kw)
}

// isSym reports whether t is the punctuation character s.
func (t token) isSym(s string) bool { return t.kind == tokSymbol && t.text == s }

// describe renders t for an error message: `"WHERE"`, `'abc'`, `end of statement`.
func (t token) describe() string {
	switch t.kind {
	case tokEOF:
		return "end of statement"
	case tokString:
		return "string " + quote(t.text)
	case tokQuoted:
		return "`" + t.text + "`"
	case tokSymbol:
		return "\"" + t.text + "\""
	}
	return t.text
}

// maxStatementBytes bounds the input: statements are short, and the bound
// keeps a hostile client from making the parser allocate without limit.
const maxStatementBytes = 1 << 20

// lex splits src into tokens, skipping white space and comments (`-- ...`,
// `# ...` to the end of the line, `/* ... */`). The last token is tokEOF.
func lex(src string) ([]token, *Error) {
	var toks []token
	i := 0
	for {
		// white space and comments
		for i < len(src) {
			c := src[i]
			switch {
			case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
				i++
				continue
			case c == '#' || (c == '-' && i+1 < len(src) && src[i+1] == '-'):
				for i < len(src) && src[i] != '\n' {
					i++
				}
				continue
			case c == '/' && i+1 < len(src) && src[i+1] == '*':
				end := strings.Index(src[i+2:], "*/")
				if end < 0 {
					return nil, errAt(src, i, "", "unterminated comment")
				}
				i += 2 + end + 2
				continue
			}
			break
		}
		if i >= len(src) {
			return append(toks, token{kind: tokEOF, pos: len(src)}), nil
		}
		start := i
		c := src[i]
		switch {
		case isIdentStart(src, i):
			for i < len(src) && isIdentPart(src, i) {
				_, n := utf8.DecodeRuneInString(src[i:])
				i += n
			}
			toks = append(toks, token{kind: tokIdent, text: src[start:i], pos: start})
		case c >= '0' && c <= '9':
			i = scanNumber(src, i)
			toks = append(toks, token{kind: tokNumber, text: src[start:i], pos: start})
		case c == '`':
			var b strings.Builder
			i++
			for {
				if i >= len(src) {
					return nil, errAt(src, start, "", "unterminated `identifier`")
				}
				if src[i] == '`' {
					if i+1 < len(src) && src[i+1] == '`' { // `` is a literal backquote
						b.WriteByte('`')
						i += 2
						continue
					}
					i++
					break
				}
				b.WriteByte(src[i])
				i++
			}
			if b.Len() == 0 {
				return nil, errAt(src, start, "", "empty `identifier`")
			}
			toks = append(toks, token{kind: tokQuoted, text: b.String(), pos: start})
		case c == '\'' || c == '"':
			s, end, err := scanString(src, i)
			if err != nil {
				return nil, err
			}
			i = end
			toks = append(toks, token{kind: tokString, text: s, pos: start})
		default:
			_, n := utf8.DecodeRuneInString(src[i:])
			i += n
			toks = append(toks, token{kind: tokSymbol, text: src[start:i], pos: start})
		}
	}
}

func isIdentStart(src string, i int) bool {
	c := src[i]
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= utf8.RuneSelf && isLetterRune(src[i:])
}

func isIdentPart(src string, i int) bool {
	c := src[i]
	return isIdentStart(src, i) || (c >= '0' && c <= '9') || c == '$'
}

// isLetterRune accepts non-ASCII letters and digits in identifiers (Doris
// allows Unicode names); the node validates names against its own pattern.
// Other runes, such as typographic quotes pasted from a document, are
// symbols, so that they are reported as such.
func isLetterRune(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

// scanNumber returns the end of the number starting at src[i]: digits,
// an optional fraction and an optional exponent.
func scanNumber(src string, i int) int {
	digits := func() {
		for i < len(src) && src[i] >= '0' && src[i] <= '9' {
			i++
		}
	}
	digits()
	if i+1 < len(src) && src[i] == '.' && src[i+1] >= '0' && src[i+1] <= '9' {
		i++
		digits()
	}
	if i < len(src) && (src[i] == 'e' || src[i] == 'E') {
		j := i + 1
		if j < len(src) && (src[j] == '+' || src[j] == '-') {
			j++
		}
		if j < len(src) && src[j] >= '0' && src[j] <= '9' {
			i = j
			digits()
		}
	}
	return i
}

// scanString reads the string literal whose opening quote is src[i] and
// returns its value and the offset after the closing quote. A doubled quote
// stands for itself; backslash escapes are those of MySQL: \0 \b \n \r \t \Z
// \\ \' \". Any other backslash sequence keeps its backslash, so that Doris's
// `\x01` separator and regular expressions pass through unchanged.
func scanString(src string, i int) (string, int, *Error) {
	q := src[i]
	start := i
	i++
	var b strings.Builder
	for {
		if i >= len(src) {
			return "", 0, errAt(src, start, "", "unterminated string")
		}
		c := src[i]
		switch {
		case c == q:
			if i+1 < len(src) && src[i+1] == q {
				b.WriteByte(q)
				i += 2
				continue
			}
			return b.String(), i + 1, nil
		case c == '\\' && i+1 < len(src):
			e := src[i+1]
			switch e {
			case '0':
				b.WriteByte(0)
			case 'b':
				b.WriteByte('\b')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'Z':
				b.WriteByte(0x1a)
			case '\\', '\'', '"':
				b.WriteByte(e)
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
			i += 2
		default:
			b.WriteByte(c)
			i++
		}
	}
}

// quote renders s for a message, with Go escapes for control characters.
func quote(s string) string {
	const maxQuoted = 64
	if len(s) > maxQuoted {
		cut := maxQuoted
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "..."
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteString(`\x`)
			b.WriteByte("0123456789abcdef"[s[i]>>4])
			b.WriteByte("0123456789abcdef"[s[i]&0xf])
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			b.WriteString(`\x`)
			b.WriteByte("0123456789abcdef"[byte(r)>>4])
			b.WriteByte("0123456789abcdef"[byte(r)&0xf])
		default:
			b.WriteRune(r)
		}
		i += n
	}
	b.WriteByte('"')
	return b.String()
}
