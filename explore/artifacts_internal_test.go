package explore

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// Rule H2: an artifact's file name is one whatever the object is called:
// a 300-byte name or one holding a NUL or a separator made writing the
// artifacts fail (exit 3, hiding the violation's exit 1). Plain names
// read as before; changed ones get a hash, so two objects never share a
// file.
func TestH2_ArtifactNamesAreSafeFileNames(t *testing.T) {
	assert.Equal(t, "linearizability-BOOTH-show-42.html", linearizabilityFile("BOOTH/show-42"))
	assert.Equal(t, "linearizability-NS-a_b.html", linearizabilityFile("NS/a b"))
	seen := map[string]string{}
	for _, obj := range []string{
		"NS/" + strings.Repeat("s", 300), "NS/" + strings.Repeat("s", 301),
		"NS/a\x00b", "NS/a\x01b", "NS/..\\..\\x", "NS/\x1b]0;pwned\a", "NS/ä",
	} {
		name := linearizabilityFile(obj)
		assert.LessOrEqual(t, len(name), 140, "%q", obj)
		for _, c := range name {
			ok := c == '.' || c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
			assert.True(t, ok, "%q in %q", c, name)
		}
		assert.True(t, ArtifactFile(name), name)
		if other, dup := seen[name]; dup {
			t.Errorf("%q and %q share %s", other, obj, name)
		}
		seen[name] = obj
	}
	for _, name := range []string{"timeline.html", "timeline.txt", "trace.json", "violations.txt", "faults.yaml", "replay.txt"} {
		assert.True(t, ArtifactFile(name), name)
	}
	for _, name := range []string{"summary.json", "shard-0.json", "timeline.json", "linearizability.txt"} {
		assert.False(t, ArtifactFile(name), name)
	}
}
