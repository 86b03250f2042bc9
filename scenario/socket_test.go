package scenario_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dosim/dosim/scenario"
)

// chatHead opens socket ada; the bad inputs continue its calls.
const chatHead = `namespaces:
  CHAT: chat
stubs:
  room: {namespace: CHAT, object: lobby}
calls:
  - stub: room
    fetch: {path: "/join?name=ada", websocket: ada}
`

// W1-W5, H2: a bad socket step is refused with FILE:LINE: field: what is
// wrong and what is allowed.
func TestW_BadSocketStepsAreRefused(t *testing.T) {
	cases := []struct{ name, yaml, want string }{
		{"an unknown socket", chatHead + "  - {socket: bob, send: hi}\n",
			`bad.yaml:8: calls[1].socket: unknown socket "bob": a fetch before this step opens it (fetch: {path: ..., websocket: bob}); opened so far: ada`},
		{"two things at once", chatHead + "  - {socket: ada, send: hi, receive: hi}\n",
			"bad.yaml:8: calls[1]: a socket step does one thing: send, receive, close or disconnect; this one gives send, receive"},
		{"nothing to do", chatHead + "  - {socket: ada}\n",
			"bad.yaml:8: calls[1]: a socket step does one thing: send, receive, close or disconnect; this one gives none"},
		{"within without receive", chatHead + "  - {socket: ada, send: hi, within: 1s}\n",
			"bad.yaml:8: calls[1].within: only a receive waits: drop within, or receive"},
		{"a close code the protocol keeps", chatHead + "  - {socket: ada, close: {code: 1006}}\n",
			"bad.yaml:8: calls[1].close.code: 1006 is kept by the WebSocket protocol: want 1000 to 4999 but 1004, 1005, 1006 and 1015 (the platform's words: Invalid WebSocket close code: 1006.)"},
		{"a close code out of range", chatHead + "  - {socket: ada, close: {code: 999}}\n",
			"bad.yaml:8: calls[1].close.code: 999 is out of range: want an integer from 1000 to 4999"},
		{"a long reason", chatHead + "  - {socket: ada, close: {reason: " + strings.Repeat("r", 124) + "}}\n",
			"bad.yaml:8: calls[1].close.reason: is 124 bytes: want at most 123 (the platform's words: WebSocket close reason must not be longer than 123 bytes when UTF-8 encoded.)"},
		{"an unknown receive field", chatHead + "  - {socket: ada, receive: {close: 1000}}\n",
			"bad.yaml:8: calls[1].receive.close: unknown field (did you mean \"closed\"?); allowed are closed\nbad.yaml:8: calls[1].receive.closed: missing: this field is required"},
		{"disconnect false", chatHead + "  - {socket: ada, disconnect: false}\n",
			"bad.yaml:8: calls[1].disconnect: is false: write disconnect: true to drop the connection, or leave the step out"},
		{"a websocket by POST", "namespaces:\n  CHAT: chat\nstubs:\n  room: {namespace: CHAT}\ncalls:\n  - {stub: room, fetch: {method: POST, path: /join, websocket: ada}}\n",
			"bad.yaml:6: calls[0].fetch.websocket: a WebSocket opens with a GET, and this fetch is a POST (the platform's words: WebSocket must be initiated with a GET request.)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc, err := scenario.Parse("bad.yaml", []byte(c.yaml), builtIns)
			require.Error(t, err)
			assert.Nil(t, sc)
			assert.Equal(t, c.want, err.Error())
		})
	}
}

// W2: a receive step that gets another message, or nothing in time, is an
// unmet expectation naming the step, the socket, what it wanted and what
// came.
func TestW2_AReceiveThatGetsSomethingElseFails(t *testing.T) {
	sc, err := scenario.Parse("r.yaml", []byte(chatHead+`  - {socket: ada, send: hi}
  - {socket: ada, receive: "ada: hello"}
  - {socket: ada, receive: "ada: more", within: 2s}
`), builtIns)
	require.NoError(t, err)
	res, err := sc.Run()
	require.NoError(t, err)
	require.Len(t, res.Failures, 2)
	assert.Equal(t, `r.yaml:9: calls[2].receive (socket ada): expected "ada: hello" within 10s, got "ada: hi"`, res.Failures[0].String())
	assert.Equal(t, `r.yaml:10: calls[3].receive (socket ada): expected "ada: more" within 2s, got nothing within 2s`, res.Failures[1].String())
}
