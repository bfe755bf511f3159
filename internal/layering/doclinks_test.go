package layering

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// mdLink matches an inline markdown link or image: [text](target).
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// inlineCode matches a code span, whose text is not a link.
var inlineCode = regexp.MustCompile("`[^`]*`")

// docFiles are the markdown files whose links TestDocLinks checks,
// relative to the module's root.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "BENCHMARKS.md", "config/SPEC.md"}
	more, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range more {
		files = append(files, strings.TrimPrefix(f, "../../"))
	}
	return files
}

// slug is the anchor GitHub gives a heading: lower case, punctuation
// dropped (but - and _), spaces as -.
func slug(h string) string {
	h = strings.ReplaceAll(h, "`", "")
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdLines returns the lines of a markdown file outside fenced code
// blocks, by line number (from 1).
func mdLines(doc string) map[int]string {
	out := map[int]string{}
	fenced := false
	for i, l := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out[i+1] = l
		}
	}
	return out
}

// anchors returns the anchors of a markdown file's headings, numbered as
// GitHub numbers repeats (name, name-1, ...).
func anchors(doc string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	lines := mdLines(doc)
	for n := 1; n <= len(strings.Split(doc, "\n")); n++ {
		l, ok := lines[n]
		if !ok || !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		s := slug(h)
		if n := seen[s]; n > 0 {
			out[s+"-"+itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var d []byte
	for ; n > 0; n /= 10 {
		d = append([]byte{byte('0' + n%10)}, d...)
	}
	return string(d)
}

// TestDocLinks: every relative link of the docs names a file or directory
// of the tree, and its #anchor (in a markdown file) a heading there.
func TestDocLinks(t *testing.T) {
	const root = "../../"
	cache := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := cache[path]; ok {
			return a, nil
		}
		doc, err := os.ReadFile(root + path)
		if err != nil {
			return nil, err
		}
		cache[path] = anchors(string(doc))
		return cache[path], nil
	}
	checked := 0
	for _, file := range docFiles(t) {
		doc, err := os.ReadFile(root + file)
		if err != nil {
			t.Fatal(err)
		}
		for n, l := range mdLines(string(doc)) {
			l = inlineCode.ReplaceAllString(l, "")
			for _, m := range mdLink.FindAllStringSubmatch(l, -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				checked++
				path, anchor, _ := strings.Cut(target, "#")
				if path == "" {
					path = file
				} else {
					path = filepath.ToSlash(filepath.Clean(filepath.Join(filepath.Dir(file), path)))
					if _, err := os.Stat(root + path); err != nil {
						t.Errorf("%s (line %d): link %s: no file %s", file, n, target, path)
						continue
					}
				}
				if anchor == "" || !strings.HasSuffix(path, ".md") {
					continue
				}
				a, err := anchorsOf(path)
				if err != nil {
					t.Errorf("%s: link %s: %v", file, target, err)
					continue
				}
				if !a[anchor] {
					t.Errorf("%s (line %d): link %s: %s has no heading #%s", file, n, target, path, anchor)
				}
			}
		}
	}
	if checked < 30 {
		t.Errorf("only %d relative links checked: is the parser broken?", checked)
	}
}

func TestSlug(t *testing.T) {
	for h, want := range map[string]string{
		"Security: a node beyond loopback":                               "security-a-node-beyond-loopback",
		"Measured (this machine, 2 cores shared with ~7 other sessions)": "measured-this-machine-2-cores-shared-with-7-other-sessions",
		"The HTTP/JSON API (`/v1`)":                                      "the-httpjson-api-v1",
		"Reading the rows: SELECT":                                       "reading-the-rows-select",
	} {
		if got := slug(h); got != want {
			t.Errorf("slug(%q) = %q, want %q", h, got, want)
		}
	}
}
