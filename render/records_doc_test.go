package render_test

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/dosim/dosim/render"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// docs/records.md, the schema of the one JSON shape of records, names
// every JSON field of every type in it: a field added to render.JSONCall
// and not documented fails here.
func TestRecordsSchemaDocNamesEveryField(t *testing.T) {
	b, err := os.ReadFile("../docs/records.md")
	require.NoError(t, err)
	doc := string(b)
	for _, v := range []any{render.JSONReport{}, render.JSONCall{}, render.JSONAttempt{}, render.JSONEffect{},
		render.JSONEvent{}, render.JSONObject{}, render.Failure{}} {
		typ := reflect.TypeOf(v)
		for f := range typ.Fields() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "" || name == "-" {
				continue
			}
			assert.Contains(t, doc, "`"+name+"`", "docs/records.md documents %s.%s as %q", typ.Name(), f.Name, name)
		}
	}
}
