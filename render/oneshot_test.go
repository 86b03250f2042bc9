package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// S11: every timeline marks a call that carried a value by reference,
// at the call, with what and where; a plain call has no mark.
func TestS11_TimelinesMarkOneShotCalls(t *testing.T) {
	r := report()
	const mark = "argument 1: value[in] is a reader (*strings.Reader)"
	r.Calls[0].OneShot = mark
	var buf bytes.Buffer
	require.NoError(t, Text(&buf, r, TextOptions{}))
	assert.Equal(t, 1, strings.Count(buf.String(), "one-shot: "+mark), buf.String())
	buf.Reset()
	require.NoError(t, JSON(&buf, r))
	assert.Equal(t, 1, strings.Count(buf.String(), `"oneShot": "`+mark+`"`), buf.String())
	buf.Reset()
	require.NoError(t, HTML(&buf, r))
	assert.Equal(t, 1, strings.Count(buf.String(), "one-shot: "+mark))
	buf.Reset()
	require.NoError(t, Mermaid(&buf, r))
	assert.Equal(t, 1, strings.Count(buf.String(), "one-shot"))
}
