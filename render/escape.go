package render

import (
	"bytes"
	"io"
	"strings"
	"unicode/utf8"
)

// Escape makes text from a scenario, an argument or a stored value safe to
// print on a terminal: every control character (C0, DEL, C1), the line and
// paragraph separators and the bidirectional overrides and isolates are
// written as JSON writes them (\n, \t, \u001b), so that a description or a
// storage key cannot move the cursor, recolour the screen or reorder what
// follows. Invalid UTF-8 becomes U+FFFD. Printable text is returned as it
// is. It is the one escape of the text renderers: Value (call arguments,
// stored values, payloads) goes through it too.
func Escape(s string) string {
	clean := true
	for _, r := range s {
		if needsEscape(r) {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if !needsEscape(r) {
			b.WriteRune(r)
			continue
		}
		switch r {
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		case utf8.RuneError:
			b.WriteRune(utf8.RuneError)
		default:
			const hex = "0123456789abcdef"
			b.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				b.WriteByte(hex[(r>>shift)&0xf])
			}
		}
	}
	return b.String()
}

// needsEscape reports whether r must not reach a terminal as it is.
// utf8.RuneError stands for invalid UTF-8 as well as U+FFFD itself; both
// are written as U+FFFD.
func needsEscape(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x2028, r == 0x2029: // line and paragraph separators
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069: // bidi overrides and isolates
		return true
	case r == utf8.RuneError:
		return true
	}
	return false
}

// reorders reports whether r can reorder or hide the text around it when
// displayed: the bidirectional embeddings, overrides and isolates (U+202A
// to U+202E, U+2066 to U+2069). A name holding one can show as other text
// in a browser, an editor or a trace viewer.
func reorders(r rune) bool { return r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069 }

// inert is text for a format that keeps line breaks and tabs as they are
// (an HTML page): the other control characters, the line and paragraph
// separators and the bidirectional overrides and isolates are written as
// Escape writes them (\u202e).
func inert(s string) string {
	for _, r := range s {
		if needsEscape(r) && r != '\n' && r != '\t' && r != '\r' {
			var b strings.Builder
			for _, r := range s {
				if needsEscape(r) && r != '\n' && r != '\t' && r != '\r' {
					b.WriteString(Escape(string(r)))
				} else {
					b.WriteRune(r)
				}
			}
			return b.String()
		}
	}
	return s
}

// inertJSON writes JSON to w with each bidirectional override or isolate
// written as its \u escape: the same document (in JSON they occur only
// inside strings, where the escape means the same character), but one a
// viewer that shows the raw text cannot reorder. encoding/json escapes
// only U+2028 and U+2029 of the characters Escape names.
type inertJSON struct{ w io.Writer }

func (j inertJSON) Write(p []byte) (int, error) {
	p0 := p
	if !bytes.ContainsFunc(p, reorders) {
		return j.w.Write(p)
	}
	var b bytes.Buffer
	for len(p) > 0 {
		r, n := utf8.DecodeRune(p)
		if reorders(r) {
			b.WriteString(Escape(string(r)))
		} else {
			b.Write(p[:n])
		}
		p = p[n:]
	}
	if _, err := j.w.Write(b.Bytes()); err != nil {
		return 0, err
	}
	return len(p0), nil
}
