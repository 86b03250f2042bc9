package render

import (
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
