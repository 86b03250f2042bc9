package object

import (
	"fmt"
	"strings"
)

// sqlStmt is one statement of an Exec, as the lexer leaves it: its text
// (with the reads of the clock rewritten to the virtual clock), its first
// keyword and how many ? marks it has.
type sqlStmt struct {
	text    string
	keyword string // upper case: SELECT, INSERT, ...
	marks   int    // plain ? marks
	// nowArgs are the indexes (among this statement's marks) of the ?
	// marks given directly to a date function: a bound "now" there reads
	// the virtual clock too.
	nowArgs []int
}

// dateFuncs are SQLite's date and time functions: with no argument, or
// with the argument 'now', they read the clock (rule Q3).
var dateFuncs = map[string]bool{
	"date": true, "time": true, "datetime": true, "julianday": true,
	"unixepoch": true, "strftime": true, "timediff": true,
}

// clockKeywords are the keywords that read the clock, and the function
// call that reads the virtual one instead.
var clockKeywords = map[string]string{
	"CURRENT_TIMESTAMP": "datetime",
	"CURRENT_DATE":      "date",
	"CURRENT_TIME":      "time",
}

// splitSQL cuts query into its statements, and rewrites every read of the
// wall clock into a call of dosim_now(), the virtual clock (rule Q3): the keywords CURRENT_TIMESTAMP, CURRENT_DATE, CURRENT_TIME;
// the literal 'now' given directly to a date function; a date function
// called with no argument; strftime with only its format.
//
// It knows SQLite's quoting ('...', "...", `...`, [...]), comments and
// the BEGIN ... END body of CREATE TRIGGER, so a ; inside them does not
// end a statement.
func splitSQL(query string) ([]sqlStmt, error) {
	var (
		out     []sqlStmt
		b       strings.Builder
		cur     sqlStmt
		words   int  // keywords and identifiers seen in the statement
		trigger bool // the statement is CREATE [TEMP] TRIGGER
		body    int  // BEGIN ... END nesting inside a trigger (CASE too)
		// calls is the stack of open parentheses: for each, whether it is
		// a date function's argument list, and how many arguments it has
		// seen so far.
		calls   []call
		lastID  string // the identifier just before, if the last token was one
		content bool   // the statement has more than comments and space
	)
	// The clock is read when the statement runs, by dosim_now() (the
	// virtual clock, see openSQL): a DEFAULT in a schema or a trigger body
	// reads it at each insert.
	lit := "dosim_now()"
	flush := func() {
		if content {
			cur.text = strings.TrimSpace(b.String())
			out = append(out, cur)
		}
		b.Reset()
		cur, words, trigger, body, calls, lastID, content = sqlStmt{}, 0, false, 0, nil, "", false
	}
	n := len(query)
	for i := 0; i < n; {
		c := query[i]
		switch {
		case c == ';' && body == 0:
			flush()
			i++
			continue
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			b.WriteByte(c)
			i++
			continue
		case c == '-' && i+1 < n && query[i+1] == '-':
			j := strings.IndexByte(query[i:], '\n')
			if j < 0 {
				j = n - i
			}
			b.WriteString(query[i : i+j])
			i += j
			continue
		case c == '/' && i+1 < n && query[i+1] == '*':
			j := strings.Index(query[i+2:], "*/")
			if j < 0 {
				return nil, fmt.Errorf("unterminated /* comment at byte %d", i)
			}
			b.WriteString(query[i : i+2+j+2])
			i += 2 + j + 2
			continue
		}
		content = true
		switch {
		case c == '\'' || c == '"' || c == '`' || c == '[':
			end := c
			if c == '[' {
				end = ']'
			}
			j := i + 1
			for ; j < n; j++ {
				if query[j] == end {
					if end != ']' && j+1 < n && query[j+1] == end {
						j++ // doubled quote
						continue
					}
					break
				}
			}
			if j >= n {
				return nil, fmt.Errorf("unterminated %c quote at byte %d", c, i)
			}
			tok := query[i : j+1]
			if c == '\'' && strings.EqualFold(tok, "'now'") && len(calls) > 0 && calls[len(calls)-1].date {
				tok = lit
			}
			if c == '\'' && len(calls) > 0 {
				calls[len(calls)-1].args++
			}
			b.WriteString(tok)
			lastID = ""
			if c != '\'' {
				lastID = "quoted"
			}
			i = j + 1
		case c == '?':
			j := i + 1
			for j < n && query[j] >= '0' && query[j] <= '9' {
				j++
			}
			if j == i+1 {
				if len(calls) > 0 && calls[len(calls)-1].date {
					cur.nowArgs = append(cur.nowArgs, cur.marks)
				}
				cur.marks++
			}
			if len(calls) > 0 {
				calls[len(calls)-1].args++
			}
			b.WriteString(query[i:j])
			lastID = ""
			i = j
		case isIdentStart(c):
			j := i + 1
			for j < n && isIdentPart(query[j]) {
				j++
			}
			word := query[i:j]
			up := strings.ToUpper(word)
			words++
			if words == 1 {
				cur.keyword = up
			}
			if words <= 3 && up == "TRIGGER" && cur.keyword == "CREATE" {
				trigger = true
			}
			if trigger && (up == "BEGIN" || (body > 0 && up == "CASE")) {
				body++
			}
			if trigger && up == "END" && body > 0 {
				body--
			}
			if fn, ok := clockKeywords[up]; ok {
				b.WriteString("(" + fn + "(" + lit + "))")
			} else {
				b.WriteString(word)
			}
			if len(calls) > 0 {
				calls[len(calls)-1].args++
			}
			lastID = strings.ToLower(word)
			i = j
			continue
		case c == '(':
			calls = append(calls, call{date: dateFuncs[lastID], fn: lastID})
			b.WriteByte(c)
			lastID = ""
			i++
		case c == ')':
			if len(calls) > 0 {
				top := calls[len(calls)-1]
				calls = calls[:len(calls)-1]
				switch {
				case top.date && top.args == 0 && top.commas == 0 && top.fn != "strftime" && top.fn != "timediff":
					b.WriteString(lit)
				case top.fn == "strftime" && top.commas == 0 && top.args > 0:
					b.WriteString(", " + lit)
				}
				if len(calls) > 0 {
					calls[len(calls)-1].args++
				}
			}
			b.WriteByte(c)
			lastID = ""
			i++
		case c == ',':
			if len(calls) > 0 {
				calls[len(calls)-1].commas++
			}
			b.WriteByte(c)
			lastID = ""
			i++
		default:
			if len(calls) > 0 {
				calls[len(calls)-1].args++
			}
			b.WriteByte(c)
			lastID = ""
			i++
		}
	}
	if body > 0 {
		return nil, fmt.Errorf("CREATE TRIGGER: BEGIN without END")
	}
	flush()
	return out, nil
}

// call is an open parenthesis while splitSQL reads a statement.
type call struct {
	fn     string // the identifier before it, lower case
	date   bool   // fn is a date function
	args   int    // tokens seen inside
	commas int    // top-level commas seen inside
}

func isIdentStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= 0x80 || c == '$' || c == '@' || c == ':' || c >= '0' && c <= '9'
}

func isIdentPart(c byte) bool {
	return c == '_' || c == '$' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80 || c == '.'
}
