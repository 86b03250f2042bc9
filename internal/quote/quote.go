// Package quote echoes user input in messages, bounded: a 500 KB method
// name in a scenario file made a 500 KB error message. Q quotes a string
// as strconv.Quote does, and Cut writes it as it is; past Max bytes each
// keeps the first Max, cut at a character's boundary, and says how long
// the input was: "MMMM..."... (500000 bytes). Every message of dosim that
// quotes what a user wrote (a file's names and values, a flag's value, a
// summary's fields) goes through them.
package quote

import (
	"strconv"
	"unicode/utf8"
)

// Max is the most bytes of an input a message echoes; MaxPath of a file's
// path (a system's longest path, 4096 bytes on Linux).
const (
	Max     = 64
	MaxPath = 4096
)

// Q is s quoted (strconv.Quote), cut to Max bytes with its length said
// when it is longer.
func Q(s string) string { return qTo(s, Max) }

// Path is a file's path quoted as Q quotes, cut to MaxPath bytes: a path
// read from a file (a summary's scenario file) may be anything.
func Path(s string) string { return qTo(s, MaxPath) }

func qTo(s string, n int) string {
	head, cut := prefix(s, n)
	if !cut {
		return strconv.Quote(s)
	}
	return strconv.Quote(head) + tail(s)
}

// Cut is s as it is, cut to Max bytes with its length said when it is
// longer (for text a message does not quote, such as a number's digits).
func Cut(s string) string { return CutTo(s, Max) }

// CutTo is s as it is, cut to n bytes with its length said when it is
// longer: the bound of a whole line of text that dosim does not word
// itself (a flag parser's or a decoder's message, which quote the input
// unbounded).
func CutTo(s string, n int) string {
	head, cut := prefix(s, n)
	if !cut {
		return s
	}
	return head + tail(s)
}

// prefix is the first max bytes of s, ending at a character's boundary,
// and whether s is longer.
func prefix(s string, max int) (string, bool) {
	if len(s) <= max {
		return s, false
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n], true
}

// tail says how long a cut input was.
func tail(s string) string { return "... (" + strconv.Itoa(len(s)) + " bytes)" }
