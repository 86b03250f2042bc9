package prefetch

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/assert"
)

// A hint changes nothing and does not fault, nil included.
func TestLineIsOnlyAHint(t *testing.T) {
	b := []byte{1, 2, 3}
	Line(unsafe.Pointer(&b[0]))
	Line(nil)
	assert.Equal(t, []byte{1, 2, 3}, b)
}
