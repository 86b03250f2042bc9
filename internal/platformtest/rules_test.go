package platformtest

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// platformRows reads docs/rules.md's "Checked against the platform" table:
// for each row, its rules and the case names its "workerd:" part gives
// (backquoted, lower case; what a parenthesis explains is left out).
func platformRows(t *testing.T, doc string) map[string][]string {
	t.Helper()
	_, section, ok := strings.Cut(doc, "\n## Checked against the platform\n")
	require.True(t, ok, "docs/rules.md has no section \"Checked against the platform\"")
	section, _, _ = strings.Cut(section, "\n## ")
	paren := regexp.MustCompile(`\([^()]*\)`)
	name := regexp.MustCompile("`([a-z0-9]+(?:-[a-z0-9]+)*)`")
	rows := map[string][]string{}
	for line := range strings.SplitSeq(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.Contains(cells[2], "workerd:") {
			continue
		}
		cell := cells[2]
		for paren.MatchString(cell) {
			cell = paren.ReplaceAllString(cell, "")
		}
		_, workerd, _ := strings.Cut(cell, "workerd:")
		workerd, _, _ = strings.Cut(workerd, ";") // up to the next kind of check
		for _, m := range name.FindAllStringSubmatch(workerd, -1) {
			rows[strings.TrimSpace(cells[1])] = append(rows[strings.TrimSpace(cells[1])], m[1])
		}
	}
	return rows
}

// The table of rules checked against the platform names only cases that
// run, and every case that runs is named: a row cannot claim a check no
// case performs (issue 34).
func TestRulesNameTheCasesThatRun(t *testing.T) {
	doc, err := os.ReadFile("../../docs/rules.md")
	require.NoError(t, err)
	rows := platformRows(t, string(doc))
	require.NotEmpty(t, rows, "no row names a workerd case")
	var have []string
	for _, c := range cases {
		have = append(have, c.name)
	}
	for _, c := range agentsCases {
		have = append(have, c.name)
	}
	named := map[string]bool{}
	for rules, names := range rows {
		for _, n := range names {
			named[n] = true
			assert.Contains(t, have, n, "docs/rules.md, row %s: workerd case %q does not exist in internal/platformtest's cases", rules, n)
		}
	}
	for _, c := range have {
		assert.True(t, named[c], "case %q is named by no row of docs/rules.md's \"Checked against the platform\"", c)
	}
}

// The parser finds names in the workerd part only, leaves out what
// parentheses explain, and keeps a row's rules as its key: so a bad row
// is caught, not skipped.
func TestPlatformRowsReadsTheWorkerdPart(t *testing.T) {
	doc := "x\n## Checked against the platform\n\n| rules | how |\n| --- | --- |\n" +
		"| `O4` | workerd: `storage-list` (not `storage-nope`; nor `one()`), `no-such-case`; source: `other-thing` |\n" +
		"| `A1` | source: `retries-ts` |\n## Next\n| `Z` | workerd: `after-section` |\n"
	rows := platformRows(t, doc)
	assert.Equal(t, map[string][]string{"`O4`": {"storage-list", "no-such-case"}}, rows)
	assert.False(t, slices.Contains(rows["`O4`"], "storage-nope"))
}
