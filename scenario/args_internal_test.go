package scenario

import (
	"reflect"
	"testing"

	"github.com/dosim/dosim/internal/clone"
	"github.com/stretchr/testify/assert"
)

// Every integer size is checked for range, fraction and sign.
func TestH2_NumberFitsEveryIntegerSize(t *testing.T) {
	type named int16
	for _, c := range []struct {
		v    any
		t    any
		want string
	}{
		{127, int8(0), ""},
		{128, int8(0), "128 is out of range: want an integer from -128 to 127"},
		{-129, int8(0), "-129 is out of range: want an integer from -128 to 127"},
		{40000, named(0), "40000 is out of range: want an integer from -32768 to 32767"},
		{int64(1) << 31, int32(0), "2147483648 is out of range: want an integer from -2147483648 to 2147483647"},
		{uint64(1) << 63, int64(0), "9223372036854775808 is out of range: want an integer from -9223372036854775808 to 9223372036854775807"},
		{uint64(1)<<63 - 1, int64(0), ""},
		{-1, uint(0), "-1 is negative: want an integer from 0 to 18446744073709551615"},
		{256, uint8(0), "256 is out of range: want an integer from 0 to 255"},
		{65535, uint16(0), ""},
		{uint64(1) << 32, uint32(0), "4294967296 is out of range: want an integer from 0 to 4294967295"},
		{uint64(18446744073709551615), uint64(0), ""},
		{2.5, 0, "2.5 is not a whole number: want an integer from -9223372036854775808 to 9223372036854775807"},
		{-2.0, uint8(0), "-2 is negative: want an integer from 0 to 255"},
		{255.0, uint8(0), ""},
		{256.0, uint8(0), "256 is out of range: want an integer from 0 to 255"},
		{9.3e18, int64(0), "9.3e+18 is out of range: want an integer from -9223372036854775808 to 9223372036854775807"},
		{-9.223372036854775808e18, int64(0), ""},
		{1.9e19, uint64(0), "1.9e+19 is out of range: want an integer from 0 to 18446744073709551615"},
		{1e39, float32(0), "1e+39 is out of range: want a number from -3.4028234663852886e+38 to 3.4028234663852886e+38"},
		{1e39, float64(0), ""},
		{7, 1.5, ""},
		{"x", 0, ""}, // not a number: clone.Convert's business
	} {
		assert.Equal(t, c.want, numberFits(c.v, reflect.TypeOf(c.t)), "%v as %T", c.v, c.t)
		if c.want != "" {
			assert.EqualError(t, checkArg(c.v, reflect.TypeOf(c.t)), c.want)
		}
	}
}

func TestWantTypeInUserTerms(t *testing.T) {
	for _, c := range []struct {
		t    any
		want string
	}{
		{"", "a string"},
		{true, "true or false"},
		{[]string{}, "a list of strings"},
		{map[string]int{}, "a mapping of strings to integers"},
		{(*int8)(nil), "an integer from -128 to 127 or null"},
		{2.5, "a number"},
	} {
		assert.Equal(t, c.want, clone.Want(reflect.TypeOf(c.t)))
	}
}
