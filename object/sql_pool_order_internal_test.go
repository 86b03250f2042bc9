//go:build !dosim_nosql

package object

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// idleWith is an idle connection of schema keeping n statements, as the
// pool sees one (no SQLite behind it: take and keep only count them).
func idleWith(schema sqlSchema, n int) pooledConn {
	m := map[preparedKey]*preparedStmt{}
	for i := range n {
		m[preparedKey{text: fmt.Sprint("SELECT ", i)}] = nil
	}
	return pooledConn{oc: openConn{prepared: &sqlPrepared{m: m}}, schema: schema}
}

// Q3, issue 35: of a schema's kept connections, the pool hands out the
// one keeping the most prepared statements, and pushes out the one
// keeping the fewest: a connection that only loaded a snapshot's SQL
// text (dosim's statements, none of the object's) neither goes first nor
// displaces one that keeps the object's, which would have them all
// prepared again.
func TestQ3_ThePoolHandsOutTheConnectionKeepingTheMostStatements(t *testing.T) {
	schema := emptySchema.then("CREATE TABLE t (a)")
	other := emptySchema.then("CREATE TABLE u (a)")
	var p sqlConnPool
	for _, c := range []pooledConn{idleWith(schema, 2), idleWith(schema, 5), idleWith(other, 9), idleWith(schema, 1)} {
		_, kept := p.keep(c)
		require.True(t, kept)
	}
	for _, want := range []int{5, 2, 1} {
		oc, ok := p.take(schema)
		require.True(t, ok)
		assert.Len(t, oc.prepared.m, want, "the one keeping the most of those left")
	}
	_, ok := p.take(schema)
	assert.False(t, ok, "none of the schema is left")
	oc, ok := p.take(other)
	require.True(t, ok)
	assert.Len(t, oc.prepared.m, 9)
}

func TestQ3_AFullSchemaPushesOutTheConnectionKeepingTheFewest(t *testing.T) {
	schema := emptySchema.then("CREATE TABLE t (a)")
	var p sqlConnPool
	for i := range maxPooledSchema {
		n := 4
		if i == 3 {
			n = 1 // the poorest, neither the oldest nor the newest
		}
		_, kept := p.keep(idleWith(schema, n))
		require.True(t, kept)
	}
	gone, kept := p.keep(idleWith(schema, 4))
	require.True(t, kept)
	require.NotNil(t, gone)
	assert.Len(t, gone.prepared.m, 1, "the one pushed out keeps the fewest")

	gone, kept = p.keep(idleWith(schema, 2))
	assert.False(t, kept, "a connection keeping fewer than every one kept is not kept")
	assert.Nil(t, gone)
	assert.Len(t, p.idle, maxPooledSchema)
}
